"""Simulate fidelity: batches through the four executors of Theseus as a discrete-event simulation
(simpy).

Each batch passes five resources in order -- storage read and PCIe copy (the pre-load executor),
compute, network (shuffle), spill -- each a simpy resource of capacity 1, separated by bounded
queues of ``queue_depth`` batches (a full queue blocks the stage before it, as a bounded cache
does). ``serial`` admits the next batch only when the previous one has left the last stage.
Per-batch stage times are the model's terms (:func:`suite_theseus.model.terms`) divided by the
number of batches (uniform batches) or, with ``jitter > 0``, multiplied by a seeded uniform factor
in ``[1 - jitter, 1 + jitter]``.

With uniform batches the makespan equals the tandem-line closed form
``sum(t_i) + (n - 1) max(t_i)`` (the model's ``theseus``) and always lies between the model's
``max`` and ``sum``; the tests check both.
"""

from __future__ import annotations

import numpy as np

__all__ = ["makespan", "evaluate"]

STAGES = ("storage", "pcie", "compute", "network", "spill")


def makespan(stage_times: np.ndarray, queue_depth: int = 2, serial: bool = False) -> float:
    """Makespan (s) of ``n`` batches through ``k`` stages.

    Parameters
    ----------
    stage_times : ndarray, shape (n, k)
        Seconds each batch spends in each stage (>= 0).
    queue_depth : int
        Batches a queue between two stages holds (>= 1).
    serial : bool
        One batch in the system at a time.
    """
    import simpy

    st = np.asarray(stage_times, dtype=float)
    n, k = st.shape
    env = simpy.Environment()
    queues = [simpy.Store(env, capacity=queue_depth) for _ in range(k - 1)]
    gate = simpy.Resource(env, capacity=1) if serial else None

    def source():
        for i in range(n):
            if gate is not None:
                req = gate.request()
                yield req
                yield env.process(stage_chain(i, req))
            else:
                yield env.timeout(st[i, 0])
                if k > 1:
                    yield queues[0].put(i)

    def stage_chain(i, req):  # serial: the batch goes through every stage alone
        for j in range(k):
            yield env.timeout(st[i, j])
        gate.release(req)

    finished = {"t": 0.0, "n": 0}

    def stage(j):
        last = j == k - 1
        get, put = queues[j - 1].get, (None if last else queues[j].put)
        col = st[:, j]
        while True:
            i = yield get()
            yield env.timeout(col[i])
            if last:  # the batch leaves the system
                finished["n"] += 1
                finished["t"] = env.now
            else:
                yield put(i)

    env.process(source())
    if gate is None:
        for j in range(1, k):
            env.process(stage(j))
    env.run()
    if gate is not None or k == 1:
        return float(env.now)
    return float(finished["t"])


def evaluate(scenario):
    """Simulate fidelity (see the module doc). ``params``: those of the model plus
    ``sim_batches`` (n, default: the model's batch count capped at 1,000), ``queue_depth`` and
    ``jitter``.

    Returns
    -------
    suite.Result
        ``query_time`` (s, simulated makespan), ``closed_form`` (s, the model's time for the same
        batches), ``bound_max`` / ``bound_sum`` (s), ``feasible``.
    """
    from suite import Result, Skip

    from suite_theseus import model, tpch

    p = scenario.params
    q = tpch.check_query(p["query"])
    sf = model.scale_factor(scenario)
    if scenario.variant == "cpu-engine":
        raise Skip("theseus simulate: the cpu-engine baseline has no executor pipeline (model fidelity only)")
    t = model.terms(q, sf, scenario.profile, scenario.variant, p)
    res = Result()
    if not t["feasible"]:
        res.add("feasible", 0.0, "1", "higher")
        return res
    n = int(p.get("sim_batches") or min(t["batches"], 1000))
    per = np.array([t[s] for s in STAGES], dtype=float) / n
    times = np.tile(per, (n, 1))
    jitter = float(p.get("jitter") or 0.0)
    if jitter > 0:
        rng = np.random.default_rng(scenario.seed)
        times = times * rng.uniform(1 - jitter, 1 + jitter, size=times.shape)
    ms = makespan(times, int(p.get("queue_depth") or 2), serial=scenario.variant == "serial")
    total = float(per.sum() * n)
    closed = total if scenario.variant == "serial" else float(per.sum() + (n - 1) * per.max())
    res.add("query_time", ms, "s", "lower")
    res.add("closed_form", closed, "s", "lower")
    res.add("bound_max", float(per.max() * n), "s", "none")
    res.add("bound_sum", total, "s", "none")
    res.add("feasible", 1.0, "1", "higher")
    res.add("pipeline_batches", float(n), "1", "none")
    return res
