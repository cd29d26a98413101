"""DHelix's simulate fidelity: an event-level run of the (folded) pipeline, both strands.

Tasks are a micro-batch's forward or backward through a GPU's layers (megatron, intra-overlap:
one stage of ``L / pp`` layers, 1F1B) or through one chunk of ``L / 2pp`` layers (dhelix: the
folded W pipeline, two chunks per GPU, :func:`suite_dhelix.model.fold`); under ``dhelix`` an
idle GPU co-executes a ready forward with a ready backward as one task of the DP's pair time
(the per-operator two-stream timing, compute stream and communication stream, compute slowed by
``sigma`` beside a collective, :func:`suite_dhelix.model.pair_dp`). Inputs arrive one pipeline
send after the producing task ends when the producer is another GPU. Details and the in-flight
limits in :func:`simulate_pipeline`. The data-parallel all-reduce's exposed part (as in the model) follows.

A list-scheduling event simulation written without simpy (not installed in this environment).
On balanced stages with ``m >= 2 pp`` micro-batches (no sends) it agrees with the closed form of
:mod:`suite_dhelix.model` within 2 % (exactly for ``pp = 1`` and for the unpaired 1F1B).
"""

from __future__ import annotations

import heapq

from suite_dhelix import model

__all__ = ["simulate_pipeline", "evaluate"]


def simulate_pipeline(pp: int, m: int, f: float, b: float, q: float, p2p: float, paired: bool):
    """Run the pipeline event by event; return ``(makespan, busy per GPU, events, peak in flight)``.

    ``f``, ``b`` are one GPU's forward / backward time per micro-batch through its ``L / pp``
    layers (s), ``q`` a co-executed pair's, ``p2p`` one pipeline send between two GPUs (s).

    Unpaired (megatron, intra-overlap): ``pp`` stages, GPU ``g`` keeps at most ``pp - g``
    micro-batches in flight (1F1B, Narayanan et al. SC'21 §2.2), a ready backward first.
    Paired (dhelix): the folded W pipeline, ``2 pp`` virtual stages of ``L / 2pp`` layers
    (chunk times ``f/2``, ``b/2``, ``q/2``), virtual stage ``v`` on GPU ``v`` going down and
    ``2pp - 1 - v`` coming back (:func:`suite_dhelix.model.fold`), at most ``2 pp`` chunks in
    flight per GPU (the activation memory of megatron's first stage); an idle GPU with a ready
    backward and a ready forward runs them as one co-executed task (the backward frees its
    layers as the forward fills its own), else a ready backward, else a ready forward; lowest
    micro-batch first. ``events`` lists ``(gpu, start, end, task)``; ``peak`` the most tasks'
    activations (stages, or chunks when folded) each GPU held at once.
    """
    return _PipelineSim(pp, m, f, b, q, p2p, paired).run()


class _PipelineSim:
    """The event loop of :func:`simulate_pipeline`: ready times of every (micro-batch, virtual
    stage) forward and backward, per GPU its free time, running flag, micro-batches in flight."""

    def __init__(self, pp: int, m: int, f: float, b: float, q: float, p2p: float, paired: bool):
        self.pp, self.m, self.p2p, self.paired = pp, m, p2p, paired
        self.nv = 2 * pp if paired else pp
        self.cf, self.cb, self.cq = (f / 2, b / 2, q / 2) if paired else (f, b, q)
        self.limits = [2 * pp] * pp if paired else [pp - g for g in range(pp)]
        self.on = [[v for v in range(self.nv) if self.gpu(v) == g] for g in range(pp)]
        self.f_ready: dict = {(k, 0): 0.0 for k in range(m)}
        self.b_ready: dict = {}
        self.free, self.busy = [0.0] * pp, [0.0] * pp
        self.running = [False] * pp
        self.inflight, self.peak = [0] * pp, [0] * pp
        self.events: list = []
        self.pending: list = []
        self.heap = [(0.0, g, g) for g in range(pp)]
        self.seq = pp
        self.done = 0

    def gpu(self, v: int) -> int:
        """The GPU of virtual stage *v* (folded: down then back, :func:`suite_dhelix.model.fold`)."""
        return v if (not self.paired or v < self.pp) else 2 * self.pp - 1 - v

    def finish(self, task, end: float) -> None:
        """A task ended at *end*: the next chunks become ready (a p2p later across GPUs)."""
        for kind, k, v in task:
            if kind == "F":
                if v < self.nv - 1:
                    self.f_ready[(k, v + 1)] = end + (self.p2p if self.gpu(v + 1) != self.gpu(v) else 0.0)
                else:
                    self.b_ready[(k, v)] = end
            elif v > 0:
                self.b_ready[(k, v - 1)] = end + (self.p2p if self.gpu(v - 1) != self.gpu(v) else 0.0)

    def pick(self, g: int, t: float):
        """GPU *g*'s next task at *t*: a ready backward and forward as one pair (folded), else a
        backward, else a forward, lowest micro-batch first; ``(task, duration)`` or None."""
        vs = self.on[g]
        bs = sorted((k, -v) for v in vs for k in range(self.m) if self.b_ready.get((k, v), t + 1) <= t)
        # the limit gates a micro-batch entering the GPU's down-path chunk; the return chunk always
        # proceeds (else a full GPU 0 could never finish the micro-batches it holds)
        room = self.inflight[g] < self.limits[g]
        cap = self.inflight[g] <= self.limits[g] if self.paired else room
        fs = sorted((k, -v) for v in vs for k in range(self.m) if self.f_ready.get((k, v), t + 1) <= t
                    and (v >= self.pp or (cap if bs and self.paired else room)))
        if self.paired and bs and fs:
            return (("F", fs[0][0], -fs[0][1]), ("B", bs[0][0], -bs[0][1])), self.cq
        if bs:
            return (("B", bs[0][0], -bs[0][1]),), self.cb
        if fs:
            return (("F", fs[0][0], -fs[0][1]),), self.cf
        return None

    def wake_later(self, g: int, t: float) -> None:
        """Nothing ready on *g* at *t*: look again at its next ready time or the next task end."""
        later = [a for (k, v), a in list(self.b_ready.items()) + list(self.f_ready.items()) if a > t and self.gpu(v) == g]
        later += [e for e, _, _ in self.pending]
        if later:
            self.seq += 1
            heapq.heappush(self.heap, (min(later), self.seq, g))

    def start(self, g: int, t: float, task, dur: float) -> None:
        """Run *task* on *g* from *t*: book its chunks, its event, and wake every GPU at its end."""
        for kind, k, v in task:
            if kind == "F":
                del self.f_ready[(k, v)]
                self.inflight[g] += 1
                self.peak[g] = max(self.peak[g], self.inflight[g])
            else:
                del self.b_ready[(k, v)]
                self.inflight[g] -= 1
                self.done += 1
        end = t + dur
        self.free[g], self.running[g] = end, True
        self.busy[g] += dur
        self.events.append((g, t, end, "+".join(f"{kind}{k}@{v}" for kind, k, v in task)))
        self.pending.append((end, g, task))
        for gg in range(self.pp):
            self.seq += 1
            heapq.heappush(self.heap, (end, self.seq, gg))

    def run(self):
        """``(makespan, busy per GPU, events, peak in flight)``."""
        while self.done < self.m * self.nv:
            t, _, g = heapq.heappop(self.heap)
            self.pending.sort()
            while self.pending and self.pending[0][0] <= t:
                end, gg, task = self.pending.pop(0)
                self.finish(task, end)
                self.running[gg] = False
            if self.running[g] or self.free[g] > t:
                continue
            chosen = self.pick(g, t)
            if chosen is None:
                self.wake_later(g, t)
                continue
            self.start(g, t, *chosen)
        return max(e[2] for e in self.events), self.busy, self.events, self.peak


def evaluate(scenario):
    """Simulate fidelity: the model's operators and pair times, the pipeline run event by event."""
    it = model.iteration(scenario)
    plan = it["plan"]
    base = "dhelix" if scenario.variant == "dhelix-separate" else scenario.variant
    f, b, q = it["f"], it["b"], it["q"]
    span, busy, events, peak = simulate_pipeline(plan.pp, plan.microbatches, f, b, q, it["p2p"], base == "dhelix")
    it = dict(it)
    it["iteration_time"] = span + it["dp_exposed"]
    it["mfu"] = it["flops"] / (it["iteration_time"] * plan.world * model._peak(scenario.profile.require_device()))
    r = model.to_result(it, scenario)
    r.add("bubble_fraction", 1.0 - min(busy) / span if span > 0 else 0.0, "1", "lower")
    r.add("peak_inflight", max(peak) / (2 if base == "dhelix" else 1), "micro-batches", "none")
    r.artifacts["events"] = [list(e) for e in events[:400]]
    return r
