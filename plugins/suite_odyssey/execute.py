"""Execute fidelity: a small MLP trained in numpy with data and pipeline parallelism across
simulated workers; one worker is killed mid-iteration and the variant's policy recovers.

Each of the ``dp x pp`` workers holds the parameters of its stage's layers (real arrays). A
micro-batch follows a *route* of (worker, layers) segments: activations go forward and their
gradients backward between workers as copies recorded in a :class:`suite.collectives.Ledger`;
each worker sums its layers' gradients over the micro-batches it processed; at the end of the
iteration the replicas of each layer sum their gradients with a ring all-reduce
(:func:`suite.collectives.ring_allreduce`) and take one SGD step with the *global* batch.

Recovery, per policy (the worker dies after ``kill_after`` of its pipeline's micro-batches):

* ``checkpoint-restart``: every worker rolls back to the last checkpoint (taken every
  ``checkpoint_every`` iterations), a replacement takes the dead worker's place, the lost
  iterations are recomputed.
* ``redundant`` (Bamboo): the predecessor stage ``(s - 1) mod p`` of the same pipeline holds a
  replica of the dead stage's layers (kept in step with every update) and runs them from now on.
* ``reroute`` (ReCycle): the dead pipeline's micro-batches use the data-parallel peers of the
  dead stage, round-robin, for that stage.
* ``replan`` (Oobleck): a new (dp', pp') plan over the survivors, the layers re-partitioned
  (:func:`suite.perf.pipeline.partition_layers`) and their parameters copied from surviving
  replicas; the iteration restarts on the new plan.
* ``odyssey``: reroute or replan, whichever :func:`suite_odyssey.model.choose_policy` predicts
  cheaper with the unified model of this MLP.

Partial gradients of the failed pipeline (or, for a re-plan, of every worker) are discarded
before the redo, so no micro-batch is lost or counted twice; a ledger of contributions checks
that every (iteration, layer, micro-batch) enters exactly one step exactly once.

The oracle is plain full-batch gradient descent of the same MLP in numpy (no workers).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from suite.api import (Ledger, ParameterError, Result, Skip, partition_layers, ring_allreduce, send,
                       split_microbatches)

from .model import ClusterModel, LLMJob, PerfModel, choose_policy, expected_window

__all__ = ["WIDTHS", "init_params", "make_data", "dense_train", "train", "evaluate", "max_abs_diff", "loss"]

#: layer widths of the MLP: 5 linear layers, tanh between them
WIDTHS = (8, 24, 24, 24, 24, 3)
LR = 0.05


def make_data(seed: int, n: int):
    """Regression data from a random teacher MLP plus noise (float64). Shapes (n, 8), (n, 3)."""
    rng = np.random.default_rng(seed + 1000)
    X = rng.standard_normal((n, WIDTHS[0]))
    W1 = rng.standard_normal((WIDTHS[0], 16)) / np.sqrt(WIDTHS[0])
    W2 = rng.standard_normal((16, WIDTHS[-1])) / 4.0
    Y = np.tanh(X @ W1) @ W2 + 0.05 * rng.standard_normal((n, WIDTHS[-1]))
    return X, Y


def init_params(seed: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """Glorot-scaled weights and zero biases of every layer, in forward order."""
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal((a, b)) * np.sqrt(1.0 / a), np.zeros(b)) for a, b in zip(WIDTHS[:-1], WIDTHS[1:])]


def _fwd_layer(W, b, x, last):
    z = x @ W + b
    return z if last else np.tanh(z)


def dense_train(params, X, Y, batches):
    """The oracle: full-batch gradient descent, ``W -= lr * grad(0.5 sum ||f(x) - y||^2) / B``.

    ``batches`` is a list of index arrays, one per iteration. Returns the trained parameters.
    """
    P = [(W.copy(), b.copy()) for W, b in params]
    L = len(P)
    for idx in batches:
        x, y = X[idx], Y[idx]
        acts = [x]
        for l, (W, b) in enumerate(P):
            acts.append(_fwd_layer(W, b, acts[-1], l == L - 1))
        g = acts[-1] - y
        grads = [None] * L
        for l in range(L - 1, -1, -1):
            if l < L - 1:
                g = g * (1 - acts[l + 1] ** 2)
            grads[l] = (acts[l].T @ g, g.sum(axis=0))
            g = g @ P[l][0].T
        B = len(idx)
        P = [(W - LR * gW / B, b - LR * gb / B) for (W, b), (gW, gb) in zip(P, grads)]
    return P


class _Worker:
    def __init__(self, wid: int):
        self.id = wid
        self.alive = True
        self.layers: dict[int, list[np.ndarray]] = {}
        self.acc: dict[int, list[np.ndarray]] = {}
        self.contrib: list[tuple[int, int]] = []  # (layer, micro-batch) accumulated this iteration

    def reset(self):
        self.acc = {l: [np.zeros_like(W), np.zeros_like(b)] for l, (W, b) in self.layers.items()}
        self.contrib = []


class _Job:
    """The simulated workers, the plan, the routes and the contribution ledger."""

    def __init__(self, params, dp: int, pp: int, ledger: Ledger):
        self.L = len(params)
        self.ledger = ledger
        self.workers: dict[int, _Worker] = {}
        self.counts: dict[tuple[int, int, int], int] = {}
        self.replica: dict[int, dict[int, list[np.ndarray]]] = {}  # redundant: worker -> replica layers
        self.rerouted: dict[tuple[int, int], list[int]] = {}  # dead (pipeline, stage) -> peer pipelines
        self.it = 0
        self.set_plan(dp, pp, {l: params[l] for l in range(self.L)}, list(range(dp * pp)))

    def set_plan(self, dp, pp, source: dict, worker_ids: list[int]):
        """Assign workers (ids in order) to a dp x pp grid, partition the layers, and give each
        worker its layers' parameters (copied from ``source``: layer -> (W, b, from_worker))."""
        cost = [WIDTHS[l] * WIDTHS[l + 1] for l in range(self.L)]
        self.dp, self.pp = dp, pp
        self.bounds = partition_layers(cost, pp)
        self.grid = {}
        for k, wid in enumerate(worker_ids[: dp * pp]):
            j, s = divmod(k, pp)
            w = self.workers.get(wid) or _Worker(wid)
            self.workers[wid] = w
            old = w.layers
            w.layers = {}
            for l in range(self.bounds[s], self.bounds[s + 1]):
                if l in old:
                    w.layers[l] = old[l]
                else:
                    src = source[l]
                    frm = src[2] if len(src) > 2 else wid
                    w.layers[l] = [send(self.ledger, frm, wid, src[0], "state"), send(self.ledger, frm, wid, src[1], "state")]
            self.grid[(j, s)] = wid
        for wid in worker_ids[dp * pp:]:
            if wid in self.workers:
                self.workers[wid].layers = {}
        self.routes = {j: [(self.grid[(j, s)], list(range(self.bounds[s], self.bounds[s + 1]))) for s in range(pp)]
                       for j in range(dp)}
        self.replica = {}
        self.rerouted = {}

    def stage_of(self, wid: int) -> tuple[int, int]:
        return next(pos for pos, w in self.grid.items() if w == wid)

    def route_for(self, j: int, k: int) -> list:
        """Route of pipeline j's k-th micro-batch: a rerouted stage goes to its data-parallel
        peers round-robin (ReCycle-style)."""
        route = []
        for s, (wid, ls) in enumerate(self.routes[j]):
            peers = self.rerouted.get((j, s))
            route.append((self.grid[(peers[k % len(peers)], s)], ls) if peers else (wid, ls))
        return route

    def make_replicas(self):
        """Bamboo: worker (j, s) keeps a replica of stage (s + 1) mod p of its pipeline."""
        self.replica = {}
        if self.pp == 1:
            return
        for (j, s), wid in self.grid.items():
            owner = self.workers[self.grid[(j, (s + 1) % self.pp)]]
            self.replica[wid] = {l: [send(self.ledger, owner.id, wid, W, "replica"), send(self.ledger, owner.id, wid, b, "replica")]
                                 for l, (W, b) in owner.layers.items()}

    def layer_source(self) -> dict:
        """layer -> (W, b, worker) from any alive worker that holds it."""
        out = {}
        for w in self.workers.values():
            if w.alive:
                for l, (W, b) in w.layers.items():
                    out.setdefault(l, (W, b, w.id))
        return out

    def reset_all(self, wids=None):
        for w in self.workers.values():
            if w.alive and (wids is None or w.id in wids):
                for l, mb in w.contrib:
                    self.counts[(self.it, l, mb)] -= 1
                w.reset()

    def run_microbatch(self, route, mb, x, y, die: tuple[int, int] | None = None) -> bool:
        """Forward then backward of one micro-batch along ``route``. Returns False (nothing
        accumulated anywhere) if a worker on the route is dead."""
        if any(not self.workers[w].alive for w, _ in route):
            return False
        acts = {}
        a = x
        prev = None
        for w, layers in route:
            if prev is not None and prev != w:
                a = send(self.ledger, prev, w, a, "activation")
            wk = self.workers[w]
            for l in layers:
                W, b = wk.layers[l]
                acts[l] = a
                a = _fwd_layer(W, b, a, l == self.L - 1)
                acts[(l, "out")] = a
            prev = w
        g = a - y
        nxt = None
        for w, layers in reversed(route):
            if nxt is not None and nxt != w:
                g = send(self.ledger, nxt, w, g, "gradient")
            wk = self.workers[w]
            for l in reversed(layers):
                W, b = wk.layers[l]
                if l < self.L - 1:
                    g = g * (1 - acts[(l, "out")] ** 2)
                wk.acc[l][0] += acts[l].T @ g
                wk.acc[l][1] += g.sum(axis=0)
                wk.contrib.append((l, mb))
                self.counts[(self.it, l, mb)] = self.counts.get((self.it, l, mb), 0) + 1
                g = g @ W.T
            nxt = w
        return True

    def step(self, B: int):
        """All-reduce each layer's gradient over the workers holding it, then SGD."""
        holders: dict[int, list[_Worker]] = {}
        for w in sorted(self.workers.values(), key=lambda w: w.id):
            if w.alive:
                for l in w.acc:
                    holders.setdefault(l, []).append(w)
        for l, ws in holders.items():
            for k in (0, 1):
                arrs = [w.acc[l][k] for w in ws]
                red = ring_allreduce(arrs, self.ledger, f"allreduce-layer{l}") if len(arrs) > 1 else [arrs[0].copy()]
                for w, r in zip(ws, red):
                    w.layers[l][k] = w.layers[l][k] - LR * r / B
                # replicas (redundant computation) take the same step with the reduced gradient
                for wid, rep in self.replica.items():
                    if l in rep and self.workers[wid].alive:
                        rep[l][k] = rep[l][k] - LR * red[0] / B
        for w in self.workers.values():
            if w.alive:
                w.reset()

    def params(self) -> tuple[list, float]:
        """The parameters of every layer, and the largest difference between replicas."""
        out, div = {}, 0.0
        for w in self.workers.values():
            if not w.alive:
                continue
            for l, (W, b) in w.layers.items():
                if l in out:
                    div = max(div, float(np.max(np.abs(out[l][0] - W))), float(np.max(np.abs(out[l][1] - b))))
                else:
                    out[l] = (W, b)
        return [out[l] for l in range(self.L)], div


def _mlp_model(dp: int, pp: int, mb_samples: int, microbatches: int, mtbf_h: float, mttr_h: float) -> PerfModel:
    """The unified model of this MLP on nominal workers (1 GFLOP/s, 1 GB/s, 1 us, no memory
    limit): used only so that ``odyssey`` chooses by the same rule as in simulation."""
    L = len(WIDTHS) - 1
    fwd = tuple(2.0 * WIDTHS[l] * WIDTHS[l + 1] for l in range(L))
    out = tuple(8.0 * WIDTHS[l + 1] for l in range(L))
    job = LLMJob("mlp", fwd, tuple(2 * f for f in fwd),
                 tuple(WIDTHS[l] * WIDTHS[l + 1] + WIDTHS[l + 1] for l in range(L)), out, out,
                 microbatches * mb_samples, mb_samples)
    cl = ClusterModel(dp * pp, 1e9, 1.0, 1e12, 1e9, 1e-6, mtbf_h * 3600, mttr_h * 3600, 600.0, 1e9)
    return PerfModel(job, cl)


def _odyssey_choice(job: "_Job", stage: int, mb_samples: int, microbatches: int, reconfigure_time: float,
                    failover_time: float, mtbf_h: float, mttr_h: float) -> str:
    pm = _mlp_model(job.dp, job.pp, mb_samples, microbatches, mtbf_h, mttr_h)
    base = pm.plan(job.dp, job.pp)
    holes = np.zeros(job.pp, dtype=int)
    holes[stage] = 1
    survivors = job.dp * job.pp - 1
    rp = pm.best_plan(survivors)
    opts = {"reroute": (failover_time, pm.reroute_time(base, holes)),
            "replan": (reconfigure_time, rp.iteration_time if rp else math.inf)}
    window = expected_window(survivors, 1, mtbf_h * 3600, mttr_h * 3600)
    return choose_policy(opts, window, base.iteration_time).name


def train(policy: str | None, *, dp: int, pp: int, iterations: int, microbatches: int, mb_samples: int,
          seed: int, kill: tuple[int, int, int, int] | None = None, checkpoint_every: int = 2,
          reconfigure_time: float = 60.0, failover_time: float = 10.0, mtbf_h: float = 96.0,
          mttr_h: float = 4.0) -> dict:
    """Train the MLP with ``dp x pp`` workers for ``iterations`` steps of ``microbatches`` x
    ``mb_samples`` samples.

    ``kill = (iteration, pipeline, stage, after)`` kills that worker when its pipeline has done
    ``after`` of its micro-batches in that iteration, and ``policy`` recovers (None: no failure).

    Returns
    -------
    dict
        ``params`` (list of (W, b) per layer), ``divergence`` (largest difference between
        replicas of a layer), ``violations`` ((iteration, layer, micro-batch) entries not counted
        exactly once), ``ledger``, ``chosen`` (the policy used), ``plan`` ((dp, pp) at the end),
        ``batches``, ``X``, ``Y``, ``params0``.

    Raises
    ------
    ParameterError
        ``pp`` outside 1..layers, a kill position outside the grid, or a policy that cannot
        recover this failure (reroute with ``dp = 1``).
    """
    _check_train(dp, pp, iterations, microbatches, kill)
    B = microbatches * mb_samples
    X, Y = make_data(seed, B * iterations)
    params0 = init_params(seed)
    ledger = Ledger()
    job = _Job(params0, dp, pp, ledger)
    for w in job.workers.values():
        w.reset()
    if policy == "redundant":
        job.make_replicas()
    run = _Run(policy, kill, dp, microbatches, mb_samples, checkpoint_every, reconfigure_time,
               failover_time, mtbf_h, mttr_h)
    it = 0
    while it < iterations:
        job.it = it
        if policy == "checkpoint-restart" and it % checkpoint_every == 0:
            run.ckpt = (it, {l: (W.copy(), b.copy()) for l, (W, b, _w) in job.layer_source().items()})
        restart = _iteration(job, run, it, X, Y)
        if restart is not None:
            it = restart
            continue
        job.step(B)
        it += 1
    params, div = job.params()
    bad = sum(1 for v in job.counts.values() if v != 1)
    expected = iterations * (len(WIDTHS) - 1) * microbatches
    return {"params": params, "divergence": div, "ledger": ledger, "violations": bad + abs(len(job.counts) - expected),
            "chosen": run.chosen, "batches": [np.arange(i * B, (i + 1) * B) for i in range(iterations)], "X": X, "Y": Y,
            "params0": params0, "plan": (job.dp, job.pp)}


def _check_train(dp: int, pp: int, iterations: int, microbatches: int, kill) -> None:
    L = len(WIDTHS) - 1
    if not 1 <= pp <= L:
        raise ParameterError(f"odyssey: parameter 'exec_pp': expected 1..{L} (MLP layers), got {pp}")
    if microbatches < dp:
        raise ParameterError(f"odyssey: parameter 'exec_microbatches': expected >= exec_dp={dp}, got {microbatches}")
    if kill is None:
        return
    it_k, j_k, s_k, after = kill
    if not (0 <= j_k < dp and 0 <= s_k < pp and 0 <= it_k < iterations):
        raise ParameterError(f"odyssey: kill position (iteration {it_k}, pipeline {j_k}, stage {s_k}) is outside "
                             f"{iterations} iterations x {dp} x {pp} workers")
    if not 0 <= after < split_microbatches(microbatches, dp)[j_k]:
        raise ParameterError(f"odyssey: parameter 'kill_after': expected 0..{split_microbatches(microbatches, dp)[j_k] - 1}, got {after}")


@dataclass
class _Run:
    """What one training run carries across iterations: the failure to inject and the recovery's settings."""

    policy: str | None
    kill: tuple[int, int, int, int] | None
    dp0: int
    microbatches: int
    mb_samples: int
    checkpoint_every: int
    reconfigure_time: float
    failover_time: float
    mtbf_h: float
    mttr_h: float
    killed: bool = False
    chosen: str | None = None
    ckpt: tuple | None = None

    def kills_now(self, it: int, j: int, k: int) -> bool:
        kill = self.kill
        return kill is not None and not self.killed and it == kill[0] and j == kill[1] and k == kill[3]


def _iteration(job: "_Job", run: _Run, it: int, X, Y) -> int | None:
    """One iteration's micro-batches over every pipeline; the iteration to restart from, or None."""
    B = run.microbatches * run.mb_samples
    per = split_microbatches(run.microbatches, job.dp)
    starts = np.concatenate([[0], np.cumsum(per)]).astype(int)
    for j in range(job.dp):
        k = 0
        while k < per[j]:
            if run.kills_now(it, j, k):
                restart = _fail_and_recover(job, run, it, j)
                if restart is not None:
                    return restart
                k = 0  # redo every micro-batch of this pipeline in this iteration
                continue
            mb = int(starts[j] + k)
            lo = it * B + mb * run.mb_samples
            ok = job.run_microbatch(job.route_for(j, k), mb, X[lo:lo + run.mb_samples], Y[lo:lo + run.mb_samples])
            if not ok:  # pragma: no cover - routes avoid dead workers
                raise RuntimeError("a route reached a dead worker")
            k += 1
    return None


def _fail_and_recover(job: "_Job", run: _Run, it: int, j: int) -> int | None:
    """Kill the worker, apply the recovery policy; the iteration to restart from (rollback,
    replan) or None (reroute / redundant: the pipeline redoes this iteration)."""
    run.killed = True
    s_dead = run.kill[2]
    dead = job.workers[job.grid[(j, s_dead)]]
    for l, m in dead.contrib:
        job.counts[(it, l, m)] -= 1  # its partial gradients die with it
    dead.alive, dead.layers, dead.acc, dead.contrib = False, {}, {}, []
    pol = run.policy
    if pol == "odyssey":
        pol = _odyssey_choice(job, s_dead, run.mb_samples, run.microbatches, run.reconfigure_time,
                              run.failover_time, run.mtbf_h, run.mttr_h)
    run.chosen = pol
    if pol == "checkpoint-restart":
        return _roll_back(job, run.ckpt)
    if pol == "replan":
        _replan(job, run)
        return it
    _redo_pipeline(job, j, s_dead, pol)
    return None


def _roll_back(job: "_Job", ckpt) -> int:
    """A replacement takes the dead worker's place; everyone rolls back to the checkpoint."""
    it0, state = ckpt
    for (jj, ss), wid in job.grid.items():
        w = job.workers[wid]
        w.alive = True
        w.layers = {l: [state[l][0].copy(), state[l][1].copy()] for l in range(job.bounds[ss], job.bounds[ss + 1])}
        w.reset()
    job.counts = {key: v for key, v in job.counts.items() if key[0] < it0}
    return it0


def _replan(job: "_Job", run: _Run) -> None:
    """Re-partition the survivors with the unified model's plan search (as in simulation)."""
    ids = sorted(w.id for w in job.workers.values() if w.alive)
    best = _mlp_model(job.dp, job.pp, run.mb_samples, run.microbatches, run.mtbf_h, run.mttr_h).best_plan(len(ids))
    job.reset_all()
    src = job.layer_source()
    if len(src) < len(WIDTHS) - 1:
        raise ParameterError("odyssey: replan needs a surviving replica of every layer "
                             f"(exec_dp >= 2), got exec_dp={run.dp0}")
    job.set_plan(best.dp, best.pp, src, ids)
    for w in job.workers.values():
        if w.alive:
            w.reset()


def _redo_pipeline(job: "_Job", j: int, s_dead: int, pol: str | None) -> None:
    """Reroute (to a data-parallel peer's stage) or redundant (the previous stage's replica takes
    over): discard the failed pipeline's partial gradients first."""
    job.reset_all({wid for wid, _ in job.routes[j]})
    if pol == "reroute" or job.pp == 1:
        peers = [jj for jj in range(job.dp) if jj != j and job.workers[job.grid[(jj, s_dead)]].alive]
        if not peers:
            raise ParameterError("odyssey: reroute needs exec_dp >= 2 (the dead stage has no data-parallel peer)")
        job.rerouted[(j, s_dead)] = peers
        return
    by = (s_dead - 1) % job.pp
    wby = job.grid[(j, by)]
    rep = job.replica.get(wby, {})
    for l in range(job.bounds[s_dead], job.bounds[s_dead + 1]):
        job.workers[wby].layers[l] = rep.pop(l)
        job.workers[wby].acc[l] = [np.zeros_like(job.workers[wby].layers[l][0]),
                                   np.zeros_like(job.workers[wby].layers[l][1])]
    job.routes[j] = [(wby if s == s_dead else wid, ls) for s, (wid, ls) in enumerate(job.routes[j])]


def max_abs_diff(a, b) -> float:
    """Largest element-wise difference between two parameter lists."""
    return max(max(float(np.max(np.abs(Wa - Wb))), float(np.max(np.abs(ba - bb)))) for (Wa, ba), (Wb, bb) in zip(a, b))


def loss(params, X, Y) -> float:
    a = X
    for l, (W, b) in enumerate(params):
        a = _fwd_layer(W, b, a, l == len(params) - 1)
    return float(0.5 * np.mean(np.sum((a - Y) ** 2, axis=1)))


#: what execute runs, as its Skip line names it
RUNS = "odyssey execute trains its own 5-layer MLP on its own regression data and runs no workload"


def evaluate(scenario) -> Result:
    """Execute fidelity: failure-free run, then the variant's recovery from one kill; compares
    final parameters with the failure-free run and the failure-free run with dense numpy.

    Metrics: ``recovery_error`` (max |param - failure-free param|), ``oracle_error``
    (failure-free DP x PP vs dense full-batch GD), ``microbatch_violations``,
    ``replica_divergence``, ``final_loss``, ``bytes_sent``/``bytes_received``, ``wall_time``.

    Raises
    ------
    Skip
        A scenario that names a workload: the run is this module's own MLP (:data:`WIDTHS`) on
        :func:`make_data`, never the workload, whose name would label figures it did not produce.
    """
    if scenario.workload is not None:
        raise Skip(f"{RUNS}; {scenario.workload.name!r} is not run (leave --workload out)")
    p = scenario.params
    dp, pp = int(p["exec_dp"]), int(p["exec_pp"])
    kw = dict(dp=dp, pp=pp, iterations=int(p["exec_iterations"]), microbatches=int(p["exec_microbatches"]),
              mb_samples=int(p["exec_micro_batch"]), seed=int(scenario.seed))
    kill = (int(p["kill_iteration"]), int(p["kill_pipeline"]), int(p["kill_stage"]), int(p["kill_after"]))
    times = []
    with _pinned_threads(1):  # every BLAS/OpenMP pool at 1 thread while timing
        for _ in range(3):
            t0 = time.perf_counter()
            res = train(scenario.variant, kill=kill, checkpoint_every=int(p["checkpoint_every"]),
                        reconfigure_time=float(p["reconfigure_time"]), failover_time=float(p["failover_time"]), **kw)
            times.append(time.perf_counter() - t0)
    ref = train(None, **kw)
    oracle = dense_train(ref["params0"], ref["X"], ref["Y"], ref["batches"])
    led = res["ledger"]
    r = Result()
    r.add("recovery_error", max_abs_diff(res["params"], ref["params"]), "1", "lower")
    r.add("oracle_error", max_abs_diff(ref["params"], oracle), "1", "lower")
    r.add("microbatch_violations", res["violations"], "1", "lower")
    r.add("replica_divergence", res["divergence"], "1", "lower")
    r.add("final_loss", loss(res["params"], ref["X"], ref["Y"]), "1", "lower")
    r.add("bytes_sent", sum(led.sent_by().values()), "B", "none")
    r.add("bytes_received", sum(led.received_by().values()), "B", "none")
    r.add("wall_time", float(np.median(times)), "s", "lower", samples=times)
    r.artifacts["policy_chosen"] = res["chosen"]
    r.artifacts["plan_after"] = {"dp": res["plan"][0], "pp": res["plan"][1]}
    r.artifacts["traffic"] = {k: list(v) for k, v in led.by_tag().items()}
    return r


def _pinned_threads(n: int = 1):
    """Every BLAS/OpenMP pool at *n* threads while timing (:func:`suite.perf.blas_threads`)."""
    from suite.api import blas_threads

    return blas_threads(n)
