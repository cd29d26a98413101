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
    import heapq

    nv = 2 * pp if paired else pp
    if paired:
        def gpu(v):
            return v if v < pp else 2 * pp - 1 - v
        cf, cb, cq = f / 2, b / 2, q / 2
        limits = [2 * pp] * pp
    else:
        def gpu(v):
            return v
        cf, cb, cq = f, b, q
        limits = [pp - g for g in range(pp)]
    on = [[v for v in range(nv) if gpu(v) == g] for g in range(pp)]
    f_ready: dict = {(k, 0): 0.0 for k in range(m)}
    b_ready: dict = {}
    free = [0.0] * pp
    running = [False] * pp
    inflight = [0] * pp
    busy = [0.0] * pp
    peak = [0] * pp
    events: list = []
    pending: list = []
    heap = [(0.0, g, g) for g in range(pp)]
    seq = pp
    done = 0

    def finish(task, end):
        for kind, k, v in task:
            if kind == "F":
                if v < nv - 1:
                    f_ready[(k, v + 1)] = end + (p2p if gpu(v + 1) != gpu(v) else 0.0)
                else:
                    b_ready[(k, v)] = end
            elif v > 0:
                b_ready[(k, v - 1)] = end + (p2p if gpu(v - 1) != gpu(v) else 0.0)

    while done < m * nv:
        t, _, g = heapq.heappop(heap)
        pending.sort()
        while pending and pending[0][0] <= t:
            end, gg, task = pending.pop(0)
            finish(task, end)
            running[gg] = False
        if running[g] or free[g] > t:
            continue
        vs = on[g]
        bs = sorted((k, -v) for v in vs for k in range(m) if b_ready.get((k, v), t + 1) <= t)
        # the limit gates a micro-batch entering the GPU's down-path chunk; the return chunk always
        # proceeds (else a full GPU 0 could never finish the micro-batches it holds)
        cap = inflight[g] <= limits[g] if paired else inflight[g] < limits[g]
        fs = sorted((k, -v) for v in vs for k in range(m) if f_ready.get((k, v), t + 1) <= t
                    and (v >= pp or (cap if bs and paired else inflight[g] < limits[g])))
        task = None
        if paired and bs and fs:
            task, dur = (("F", fs[0][0], -fs[0][1]), ("B", bs[0][0], -bs[0][1])), cq
        elif bs:
            task, dur = (("B", bs[0][0], -bs[0][1]),), cb
        elif fs:
            task, dur = (("F", fs[0][0], -fs[0][1]),), cf
        if task is None:
            later = [a for (k, v), a in list(b_ready.items()) + list(f_ready.items()) if a > t and gpu(v) == g]
            later += [e for e, _, _ in pending]
            if later:
                seq += 1
                heapq.heappush(heap, (min(later), seq, g))
            continue
        for kind, k, v in task:
            if kind == "F":
                del f_ready[(k, v)]
                inflight[g] += 1
                peak[g] = max(peak[g], inflight[g])
            else:
                del b_ready[(k, v)]
                inflight[g] -= 1
                done += 1
        end = t + dur
        free[g], running[g] = end, True
        busy[g] += dur
        events.append((g, t, end, "+".join(f"{kind}{k}@{v}" for kind, k, v in task)))
        pending.append((end, g, task))
        for gg in range(pp):
            seq += 1
            heapq.heappush(heap, (end, seq, gg))
    return max(e[2] for e in events), busy, events, peak


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
