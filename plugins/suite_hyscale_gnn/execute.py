"""HyScale-GNN's execute fidelity: real mini-batch GNN training on a generated graph, with a real
two-stage prefetch pipeline and a hybrid two-trainer split re-balanced from measured times.

* **multi-gpu / cpu-only** (series): for each mini-batch, sample (uniform, fan-out per layer;
  the neighbour draw is a compiled loop that releases the GIL, block building is numpy/scipy),
  gather the input features into a staging array, train one Adam step; the three stages one
  after the other.
* **prefetch**: a sampler thread and a gatherer thread run ahead of the trainer through bounded
  queues (depth 2: the sampler works on batch i+2 and the gatherer on i+1 while i trains).
* **hyscale**: prefetch, and the trainer stage splits each batch between two numpy trainers
  (there is no accelerator on this machine: both are numpy on this CPU, run in two threads); the
  shares follow ``b_i = B (1/t_i) / sum_j (1/t_j)`` with ``t_i`` each trainer's measured time per
  seed on the previous batch [Lin23, abstract: "dynamic resource management"; the rule is our
  reading]. The weighted gradient ``sum_i (b_i / B) g_i`` is the whole batch's gradient.

Oracles (metrics, and a :class:`~suite.api.OracleMismatch` above tolerance): the sparse
aggregation of the first batch's blocks against the dense product (``oracle_error``); the
weighted gradient of the two sub-batches against the whole batch's (``grad_split_error``); a
mini-batch forward with fan-out >= the maximum degree against the dense full-graph forward
(``fullgraph_error``). ``accuracy`` (test nodes, full-graph forward) is reported beside the
majority-class rate.

References
----------
[Lin23] see :mod:`suite_hyscale_gnn.model`; [Hamilton17], [Kipf17] see :mod:`suite_hyscale_gnn.gnn`.
"""

from __future__ import annotations

import queue
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from suite_hyscale_gnn import gnn
from suite_hyscale_gnn.model import parse_fanout

__all__ = ["MAX_NODES", "ORACLE_TOL", "Adam", "train", "evaluate"]

#: Largest generated graph the execute fidelity trains on (the dense oracles are O(n^2)).
MAX_NODES = 8192
#: Relative error above which an oracle check fails (float64 arithmetic throughout).
ORACLE_TOL = 1e-9
#: BLAS/OpenMP threads while timing (declared, so repeats are comparable).
TIMING_THREADS = 1
_LR = 0.01


def _pinned(n: int):
    """Every BLAS/OpenMP pool at *n* threads while timing (:func:`suite.perf.blas_threads`)."""
    from suite.api import blas_threads

    return blas_threads(n)


class Adam:
    """Adam [Kingma15] with the usual defaults (beta1 0.9, beta2 0.999, eps 1e-8)."""

    def __init__(self, params: dict, lr: float = _LR):
        self.lr, self.t = lr, 0
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}

    def step(self, params: dict, grads: dict) -> None:
        self.t += 1
        for k, g in grads.items():
            self.m[k] = 0.9 * self.m[k] + 0.1 * g
            self.v[k] = 0.999 * self.v[k] + 0.001 * g * g
            mh = self.m[k] / (1 - 0.9**self.t)
            vh = self.v[k] / (1 - 0.999**self.t)
            params[k] -= self.lr * mh / (np.sqrt(vh) + 1e-8)


def _rel(a, b) -> float:
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300)) if a.size else 0.0


class _Graph:
    def __init__(self, adj, x, y, seed: int):
        self.adj, self.x, self.y = adj, x, y
        self.indptr, self.indices = adj.indptr, adj.indices
        rng = np.random.default_rng(seed + 7)
        perm = rng.permutation(adj.shape[0])
        half = adj.shape[0] // 2
        self.train, self.test = np.sort(perm[:half]), np.sort(perm[half:])


def _batches(g: _Graph, b: int, rng) -> list[np.ndarray]:
    order = rng.permutation(g.train)
    return [order[i:i + b] for i in range(0, order.size, b)]


def _grads_of(params, blocks, x_src, y, model):
    loss, grads, _ = gnn.loss_and_grads(params, blocks, x_src, y, model)
    return loss, grads


class _Hybrid:
    """Two trainers over shares of each batch, re-balanced by the 1/t rule from measured times."""

    def __init__(self, model: str):
        self.model = model
        self.share = 0.5  # trainer 0's share
        self.pool = ThreadPoolExecutor(2, thread_name_prefix="hyscale-trainer")
        self.shares: list[float] = []
        self.times: list[tuple[float, float]] = []

    def _one(self, params, blocks, rows, x_src, pos_of, y):
        t0 = time.perf_counter()
        sub = gnn.restrict(blocks, rows, self.model)
        xs = x_src[pos_of(sub[0].src)]  # the sub-batch's rows of the gathered staging array
        loss, g = _grads_of(params, sub, xs, y[rows], self.model)
        return loss, g, time.perf_counter() - t0

    def step(self, params, blocks, x_src, y):
        """Split the batch by the current share, train both parts at once, combine, re-balance."""
        n = y.size
        k = min(max(int(round(self.share * n)), 1), n - 1) if n > 1 else n
        parts = [r for r in (np.arange(0, k), np.arange(k, n)) if r.size]
        src = blocks[0].src
        sorter = np.argsort(src, kind="stable")

        def pos_of(ids):
            return sorter[np.searchsorted(src, ids, sorter=sorter)]

        futs = [self.pool.submit(self._one, params, blocks, r, x_src, pos_of, y) for r in parts]
        outs = [f.result() for f in futs]
        w = [r.size / n for r in parts]
        grads = {key: sum(o[1][key] * wi for o, wi in zip(outs, w)) for key in outs[0][1]}
        loss = sum(o[0] * wi for o, wi in zip(outs, w))
        if len(outs) == 2:
            t0, t1 = outs[0][2] / parts[0].size, outs[1][2] / parts[1].size
            self.times.append((t0, t1))
            self.share = (1 / t0) / (1 / t0 + 1 / t1)
        self.shares.append(self.share)
        return loss, grads, x_src

    def close(self):
        self.pool.shutdown(wait=True)


def train(g: _Graph, variant: str, model: str, fanout, batch: int, hidden: int, epochs: int, seed: int) -> dict:
    """Train for *epochs* and time every stage; returns params, per-stage times and epoch times."""
    hybrid = _Hybrid(model) if variant in ("hyscale", "hyscale-serial") else None
    st = _Stages(g, model, fanout, hidden, seed, hybrid)
    # compile (or load from numba's cache) the sampler for this graph's index dtypes before any
    # timing, with a throw-away generator: the stages' stream is untouched
    gnn.sample_neighbors(g.indptr, g.indices, g.train[:1], int(fanout[0]), np.random.default_rng(0))
    epoch_times = []
    try:
        for _ in range(epochs):
            bl = _batches(g, batch, st.rng)
            t0 = time.perf_counter()
            if variant in ("prefetch", "hyscale"):
                _pipelined_epoch(st, bl)
            else:
                for seeds in bl:
                    st.train(st.gather(st.sample(seeds)))
            epoch_times.append(time.perf_counter() - t0)
    finally:
        if hybrid is not None:
            hybrid.close()
    return {"params": st.params, "stage": st.wall, "stage_cpu": st.cpu, "epoch_times": epoch_times,
            "losses": st.losses, "shares": hybrid.shares if hybrid else [],
            "trainer_times": hybrid.times if hybrid else []}


class _Stages:
    """The three stages of a mini-batch (sample, gather, train), each timed in wall and in the
    stage thread's own CPU time (s)."""

    def __init__(self, g: _Graph, model: str, fanout, hidden: int, seed: int, hybrid) -> None:
        self.g, self.model, self.fanout, self.hybrid = g, model, fanout, hybrid
        self.rng = np.random.default_rng(seed)
        self.params = gnn.init_params(model, g.x.shape[1], hidden, int(g.y.max()) + 1, np.random.default_rng(seed + 1))
        self.opt = Adam(self.params)
        self.wall: dict[str, list[float]] = {"sample": [], "gather": [], "train": []}
        self.cpu: dict[str, list[float]] = {"sample": [], "gather": [], "train": []}
        self.losses: list[float] = []

    def _timed(self, name: str, t0: float, c0: float) -> None:
        self.wall[name].append(time.perf_counter() - t0)
        self.cpu[name].append(time.thread_time() - c0)

    def sample(self, seeds):
        t0, c0 = time.perf_counter(), time.thread_time()
        blocks = gnn.sample_blocks(self.g.indptr, self.g.indices, seeds, self.fanout, self.rng, self.model)
        self._timed("sample", t0, c0)
        return seeds, blocks

    def gather(self, item):
        seeds, blocks = item
        t0, c0 = time.perf_counter(), time.thread_time()
        x_src = np.take(self.g.x, blocks[0].src, axis=0).astype(np.float64)  # staging buffer
        y = self.g.y[seeds]
        self._timed("gather", t0, c0)
        return blocks, x_src, y

    def train(self, item) -> None:
        blocks, x_src, y = item
        t0, c0 = time.perf_counter(), time.thread_time()
        if self.hybrid is not None:
            loss, grads, _ = self.hybrid.step(self.params, blocks, x_src, y)
        else:
            loss, grads = _grads_of(self.params, blocks, x_src, y, self.model)
        self.opt.step(self.params, grads)
        self._timed("train", t0, c0)
        self.losses.append(loss)


def _pipelined_epoch(st: _Stages, bl) -> None:
    """One epoch with the sampler 2 batches ahead and the gatherer 1 ahead, each on its own
    thread; the trainer runs here. A stage's exception is re-raised in the trainer."""
    q1: queue.Queue = queue.Queue(maxsize=1)
    q2: queue.Queue = queue.Queue(maxsize=1)
    err: list[BaseException] = []

    def sampler():
        try:
            for seeds in bl:
                q1.put(st.sample(seeds))
        except BaseException as exc:  # noqa: BLE001 - re-raised in the trainer
            err.append(exc)
        finally:
            q1.put(None)

    def gatherer():
        try:
            while (item := q1.get()) is not None:
                q2.put(st.gather(item))
        except BaseException as exc:  # noqa: BLE001
            err.append(exc)
        finally:
            q2.put(None)

    ths = [threading.Thread(target=sampler, daemon=True), threading.Thread(target=gatherer, daemon=True)]
    for th in ths:
        th.start()
    while (item := q2.get()) is not None:
        st.train(item)
    for th in ths:
        th.join()
    if err:
        raise err[0]


def _oracles(g: _Graph, params, model: str, fanout, batch: int, seed: int) -> dict:
    from suite.api import OracleMismatch

    rng = np.random.default_rng(seed + 3)
    seeds = g.train[:batch]
    blocks = gnn.sample_blocks(g.indptr, g.indices, seeds, fanout, rng, model)
    x_src = g.x[blocks[0].src].astype(np.float64)
    # sparse aggregation vs the dense product of the same block
    agg_err = max(_rel(b.agg @ h, b.agg.toarray() @ h)
                  for b, h in zip(blocks, [x_src, gnn.forward(params, blocks[:1], x_src, model)[1][0][1]]))
    agg_err = max(agg_err, _rel(blocks[0].agg @ x_src, blocks[0].agg.toarray() @ x_src))
    # weighted gradient of two sub-batches vs the whole batch's
    y = g.y[seeds]
    _, whole, _ = gnn.loss_and_grads(params, blocks, x_src, y, model)
    k = max(1, seeds.size // 3)
    tot = {key: 0.0 for key in whole}
    for rows in (np.arange(k), np.arange(k, seeds.size)):
        if not rows.size:
            continue
        sub = gnn.restrict(blocks, rows, model)
        _, gr, _ = gnn.loss_and_grads(params, sub, g.x[sub[0].src].astype(np.float64), y[rows], model)
        for key in tot:
            tot[key] = tot[key] + gr[key] * (rows.size / seeds.size)
    grad_err = max(_rel(tot[key], whole[key]) for key in whole)
    # fan-out >= max degree: the mini-batch forward equals the dense full-graph forward
    dmax = int(np.diff(g.indptr).max())
    full_blocks = gnn.sample_blocks(g.indptr, g.indices, seeds, [dmax, dmax], rng, model)
    mb = gnn.forward(params, full_blocks, g.x[full_blocks[0].src].astype(np.float64), model)[0]
    full = gnn.full_graph_forward(params, g.adj, g.x, model)
    fg_err = _rel(mb, full[seeds])
    for name, err in (("sparse aggregation", agg_err), ("split gradient", grad_err), ("full-graph forward", fg_err)):
        if not err <= ORACLE_TOL:
            raise OracleMismatch(f"hyscale-gnn execute: {name} differs from its oracle (relative error {err:.3g} "
                                 f"> {ORACLE_TOL:g})")
    pred = full.argmax(axis=1)
    return {"oracle_error": agg_err, "grad_split_error": grad_err, "fullgraph_error": fg_err,
            "accuracy": float(np.mean(pred[g.test] == g.y[g.test])),
            "majority_accuracy": float(np.bincount(g.y[g.test]).max() / g.test.size)}


def _graph_data(scenario) -> tuple:
    """The scenario's graph, loaded: ``(adjacency CSR, features, labels)``.

    Raises
    ------
    suite.Skip
        A model-only variant (``distdgl``, ``ideal``), a workload that is not a loadable graph,
        more than :data:`MAX_NODES` nodes, or a load that is not that triple.
    """
    from suite.api import Skip

    wl = scenario.workload
    if scenario.variant in ("distdgl", "ideal"):
        raise Skip(f"hyscale-gnn execute: variant {scenario.variant!r} is model-only (multi-node / a bound)")
    if wl is None or getattr(wl, "kind", None) != "graph" or getattr(wl, "loader", None) is None:
        raise Skip("hyscale-gnn execute: needs a generated graph workload (sbm-graph, rmat-graph)")
    if (wl.n or 0) > MAX_NODES:
        raise Skip(f"hyscale-gnn execute: {wl.n} nodes > {MAX_NODES}")
    data = wl.load()
    if not (isinstance(data, tuple) and len(data) == 3):
        raise Skip(f"hyscale-gnn execute: workload {wl.name!r} does not load as (adjacency, features, labels)")
    return data


def evaluate(scenario):
    """Execute fidelity: train the 2-layer GNN on the scenario's generated graph with the
    variant's pipeline, check the oracles, time the stages.

    Parameters
    ----------
    scenario : suite.Scenario
        ``workload`` ``sbm-graph`` or ``rmat-graph`` (any graph Dataset whose loader gives
        ``(adj CSR, features, labels)``); ``params`` exec_batch, fanout, hidden, gnn, epochs; ``seed``.

    Returns
    -------
    suite.Result
        ``accuracy``, ``majority_accuracy``, ``oracle_error``, ``grad_split_error``,
        ``fullgraph_error``, ``final_loss``, ``t_sample``/``t_gather``/``t_train`` (s per batch,
        medians), ``epoch_time`` (s, median, samples), ``serial_epoch_time`` and
        ``pipeline_ratio`` (pipelined variants: the same epochs run in series), ``cpu_share``
        (hyscale: trainer 0's last share); artifact ``shares``.

    Raises
    ------
    suite.Skip
        Not a loadable graph, more than :data:`MAX_NODES` nodes, or a multi-node / bound variant
        (``distdgl``, ``ideal``: model fidelity only).
    suite.api.OracleMismatch
        An oracle check fails.
    """
    from suite.api import Result

    data = _graph_data(scenario)
    p = scenario.params
    fanout = parse_fanout(p["fanout"])
    model, hidden, b, epochs = p["gnn"], int(p["hidden"]), int(p["exec_batch"]), int(p["epochs"])
    g = _Graph(*data, seed=scenario.seed)
    with _pinned(TIMING_THREADS):
        run = train(g, scenario.variant, model, fanout, b, hidden, epochs, scenario.seed)
        serial = None
        if scenario.variant in ("prefetch", "hyscale"):
            serial = train(g, "multi-gpu" if scenario.variant == "prefetch" else "hyscale-serial", model, fanout, b,
                           hidden, epochs, scenario.seed)
        orc = _oracles(g, run["params"], model, fanout, b, scenario.seed)
    res = Result()
    for k, v in orc.items():
        res.add(k, v, "1", "higher" if "accuracy" in k and k != "majority_accuracy" else
                ("lower" if "error" in k else "none"))
    res.add("final_loss", run["losses"][-1], "1", "lower")
    for k in ("sample", "gather", "train"):
        res.add(f"t_{k}", float(np.median(run["stage"][k])), "s", "lower")
    ep = run["epoch_times"]
    res.add("epoch_time", float(np.median(ep)), "s", "lower", samples=ep)
    if serial is not None:
        st = float(np.median(serial["epoch_times"]))
        res.add("serial_epoch_time", st, "s", "lower", samples=serial["epoch_times"])
        res.add("pipeline_ratio", float(np.median(ep)) / st, "1", "lower")
    res.add("batches_per_epoch", len(run["stage"]["train"]) / epochs, "1", "none")
    if run["shares"]:
        res.add("cpu_share", run["shares"][-1], "1", "none")
        res.artifacts["shares"] = [float(s) for s in run["shares"]]
    return res
