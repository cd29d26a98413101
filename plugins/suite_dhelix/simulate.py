"""DHelix's simulate fidelity: an event-level run of the folded pipeline, both strands.

Every GPU of a pipeline runs a fixed task order (Megatron's 1F1B, Narayanan et al. SC'21 §2.2):
``w_s = pp - s - 1`` warm-up forwards on stage ``s``, then alternating forward / backward, then
the remaining backwards. Tasks are a micro-batch's forward ``F(k)`` or backward ``B(k)`` through
the stage's ``L / pp`` layers (its two folded chunks, :func:`suite_dhelix.model.fold`); under
``dhelix`` each steady-state ``B(k)`` is co-executed with the next forward ``F(k + w_s + 1)``
as one task of the DP's pair time (the per-operator two-stream timing: compute stream and
communication stream, compute slowed by ``sigma`` beside a collective,
:func:`suite_dhelix.model.pair_dp`). A task starts when its GPU is free and its inputs have
arrived: ``F(k)`` on stage ``s`` needs ``F(k)`` of stage ``s - 1`` plus one pipeline send,
``B(k)`` needs ``B(k)`` of stage ``s + 1`` plus one send (the last stage's, its own ``F(k)``).
The data-parallel all-reduce follows the last task (exposed, as in the model).

This is a list-scheduling simulation (fixed per-GPU orders, earliest start), written without
simpy (not installed in this environment); on balanced stages it agrees with the closed form of
:mod:`suite_dhelix.model` (tests pin the agreement within 2 %).
"""

from __future__ import annotations

from suite_dhelix import model

__all__ = ["stage_orders", "simulate_pipeline", "evaluate"]


def stage_orders(pp: int, m: int, paired: bool):
    """Per-stage task orders: lists of tasks, each a tuple of ``("F", k)`` / ``("B", k)`` items
    (two items: one co-executed pair)."""
    out = []
    for s in range(pp):
        w = min(pp - s - 1, m)
        order = [(("F", k),) for k in range(w)]
        steady = []
        for i in range(m - w):
            steady.append(("F", w + i))
            steady.append(("B", i))
        cool = [("B", k) for k in range(m - w, m)]
        if not paired:
            order += [(x,) for x in steady] + [(x,) for x in cool]
        else:
            seq = steady + cool  # F(w), B(0), F(w+1), B(1), ...: pair each B(i) with the F that follows it
            tasks, idx = [], 0
            while idx < len(seq):
                if seq[idx][0] == "B" and idx + 1 < len(seq) and seq[idx + 1][0] == "F":
                    tasks.append((seq[idx + 1], seq[idx]))
                    idx += 2
                else:
                    tasks.append((seq[idx],))
                    idx += 1
            order += tasks
        out.append(order)
    return out


def simulate_pipeline(pp: int, m: int, f: float, b: float, q: float, p2p: float, paired: bool):
    """Run the pipeline; return ``(makespan, busy per stage, events)``.

    ``f``, ``b`` are one stage's forward / backward compute-and-TP time per micro-batch (s),
    ``q`` a co-executed pair's, ``p2p`` one pipeline send (s). ``events`` lists
    ``(stage, start, end, task)``.
    """
    orders = stage_orders(pp, m, paired)
    done: dict = {}
    free = [0.0] * pp
    pos = [0] * pp
    events = []
    busy = [0.0] * pp
    remaining = sum(len(o) for o in orders)
    while remaining:
        progressed = False
        for s in range(pp):
            if pos[s] >= len(orders[s]):
                continue
            task = orders[s][pos[s]]
            ready = free[s]
            ok = True
            for kind, k in task:
                if kind == "F":
                    dep = done.get(("F", k, s - 1)) if s > 0 else 0.0
                    lag = p2p if s > 0 else 0.0
                else:
                    dep = done.get(("B", k, s + 1)) if s < pp - 1 else done.get(("F", k, s))
                    lag = p2p if s < pp - 1 else 0.0
                if dep is None:
                    ok = False
                    break
                ready = max(ready, dep + lag)
            if not ok:
                continue
            dur = q if len(task) == 2 else (f if task[0][0] == "F" else b)
            end = ready + dur
            for kind, k in task:
                done[(kind, k, s)] = end
            events.append((s, ready, end, "+".join(f"{kind}{k}" for kind, k in task)))
            busy[s] += dur
            free[s] = end
            pos[s] += 1
            remaining -= 1
            progressed = True
        if not progressed:  # pragma: no cover - the orders are deadlock-free by construction
            raise RuntimeError("dhelix simulate: pipeline deadlock")
    return max(free), busy, events


def evaluate(scenario):
    """Simulate fidelity: the model's operators and pair times, the pipeline run event by event."""
    it = model.iteration(scenario)
    plan = it["plan"]
    base = "dhelix" if scenario.variant == "dhelix-separate" else scenario.variant
    L_s = it["layers_per_gpu"]
    f, b, q = L_s * it["t_fwd"], L_s * it["t_bwd"], L_s * it["t_pair"]
    span, busy, events = simulate_pipeline(plan.pp, plan.microbatches, f, b, q, it["p2p"], base == "dhelix")
    it = dict(it)
    it["iteration_time"] = span + it["dp_time"]
    it["mfu"] = it["flops"] / (it["iteration_time"] * plan.world * model._peak(scenario.profile.require_device()))
    r = model.to_result(it, scenario)
    r.add("bubble_fraction", 1.0 - min(busy) / span if span > 0 else 0.0, "1", "lower")
    r.artifacts["events"] = [list(e) for e in events[:400]]
    return r
