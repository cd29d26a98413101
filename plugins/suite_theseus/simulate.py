"""Simulate fidelity: batches through the four executors of Theseus as a discrete-event simulation
(simpy).

Each batch passes five resources in order -- storage read and PCIe copy (the pre-load executor),
compute, network (shuffle), spill -- each a server of capacity 1, separated by bounded FIFO queues
of ``queue_depth`` batches; a finished batch whose downstream queue is full stays in its server and
blocks it (blocking after service, as a bounded cache does). ``serial`` admits the next batch only
when the previous one has left the last stage. Per-batch stage times are the model's terms
(:func:`suite_theseus.model.terms`) divided by the number of batches (uniform batches) or, with
``jitter > 0``, multiplied by a seeded uniform factor in ``[1 - jitter, 1 + jitter]``.

Event budget: exactly one simpy timeout per stage per batch (``n x k`` events). The queue
hand-offs (a batch entering a queue, a blocked server released, an idle server starting) happen in
the completion callbacks at the completion instant, not as Store put/get events: the earlier
process-and-Store version spent about 14 events per batch and ran 12-17 cases/s at 1,000 batches
on the loaded 2-core machine, below the target of 20. The timing semantics are unchanged (the tests
check the tandem-line closed form on uniform batches and the blocking recursion on jittered ones).

With uniform batches the makespan equals the tandem-line closed form
``sum(t_i) + (n - 1) max(t_i)`` (the model's ``theseus``) and always lies between the model's
``max`` and ``sum``; the tests check both.
"""

from __future__ import annotations

import numpy as np

__all__ = ["makespan", "evaluate"]

STAGES = ("storage", "pcie", "compute", "network", "spill")

_IDLE, _BUSY, _BLOCKED = 0, 1, 2


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

    Returns
    -------
    float
        Simulated time (s) at which the last batch leaves the last stage; 0 for ``n = 0``.
    """
    import simpy

    st = np.asarray(stage_times, dtype=float)
    n, k = st.shape
    env = simpy.Environment()
    if n == 0:
        return 0.0
    rows = st.tolist()  # Python floats: no numpy scalar per event
    if serial or k == 1:
        return _serial_makespan(env, rows)
    return _TandemLine(env, rows, int(queue_depth)).run()


def _serial_makespan(env, rows: list[list[float]]) -> float:
    """One batch in the system at a time: every batch goes through every stage alone."""
    def one_at_a_time():
        for row in rows:
            for t in row:
                yield env.timeout(t)

    env.process(one_at_a_time())
    env.run()
    return float(env.now)


class _TandemLine:
    """k single servers in a row with bounded FIFO queues of ``depth`` batches between them.

    A server that finishes a batch whose downstream queue is full stays blocked holding it until
    a slot frees (blocking after service). One simpy timeout per stage per batch; the hand-offs
    happen in the completion callbacks.
    """

    def __init__(self, env, rows: list[list[float]], depth: int):
        self.env, self.rows, self.depth = env, rows, depth
        self.n, self.k = len(rows), len(rows[0])
        self.level = [0] * (self.k - 1)     # batches waiting in the queue after stage j
        self.state = [_IDLE] * self.k
        self.started = [0] * self.k         # batches stage j has started (FIFO: the next is started[j])
        self.last = 0.0
        self.done = [self._make_done(j) for j in range(self.k)]

    def run(self) -> float:
        self.try_start(0)
        self.env.run()
        return float(self.last)

    def try_start(self, j: int) -> None:
        """Start stage j on its next batch if it is idle and a batch is waiting for it."""
        if self.state[j] != _IDLE:
            return
        if j == 0:
            if self.started[0] >= self.n:
                return
        elif self.level[j - 1] == 0:
            return
        else:
            self.level[j - 1] -= 1
        i = self.started[j]
        self.started[j] = i + 1
        self.state[j] = _BUSY
        self.env.timeout(self.rows[i][j]).callbacks.append(self.done[j])
        if j > 0 and self.state[j - 1] == _BLOCKED:  # the slot just freed releases the stage before
            self.level[j - 1] += 1
            self.state[j - 1] = _IDLE
            self.try_start(j - 1)

    def _make_done(self, j: int):
        if j == self.k - 1:
            def fin(_ev):
                self.last = self.env.now
                self.state[j] = _IDLE
                self.try_start(j)
        else:
            def fin(_ev):
                if self.level[j] < self.depth:
                    self.level[j] += 1
                    self.state[j] = _IDLE
                    self.try_start(j + 1)
                    self.try_start(j)
                else:
                    self.state[j] = _BLOCKED
        return fin


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
    from suite.api import Result, Skip

    from suite_theseus import model, tpch

    p = scenario.params
    q = tpch.check_query(p["query"])
    sf = model.scale_factor(scenario)
    if scenario.variant == "cpu-engine":
        raise Skip("theseus simulate: the cpu-engine baseline has no executor pipeline (model fidelity only)")
    t = model.terms(q, sf, scenario.profile, scenario.variant, p, scenario.input("parity_with"))
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
