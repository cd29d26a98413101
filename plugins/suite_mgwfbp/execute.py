"""Execute fidelity: data-parallel SGD of a numpy MLP on P simulated workers, with the gradients
all-reduced in the groups each variant chooses.

Every worker computes the gradient of its shard of the global mini-batch; for each group (in
the order groups become ready in backward, last layer first) each worker concatenates its
layers' flattened gradients into one buffer, the buffers are summed by
:func:`suite.collectives.ring_allreduce` (real chunked ring reduce-scatter + all-gather, every
message recorded in a :class:`suite.collectives.Ledger`), divided by P and split back into
layers. Merging changes how many messages are sent and how large they are, never what is
computed: the parameters after N steps equal those of per-layer all-reduce (the oracle, WFBP)
and of single-process SGD on the whole global batch (dense oracle).

Why not bit-identical: the ring reduces chunk c starting at worker c and going round the ring,
so an element's summation order depends on which chunk it falls into; concatenating layers
moves elements between chunks, so the sums of P float64 numbers may differ in the last bit.
Parameters therefore agree to a few ulps (checked with ``rtol=1e-12``), not bit for bit.

References
----------
.. [Shi19] S. Shi, X. Chu, B. Li, "MG-WFBP", IEEE INFOCOM 2019 -- merged-gradient all-reduce.
.. [Patarasuk09] P. Patarasuk, X. Yuan, JPDC 69(2), 2009 -- ring all-reduce, 2(P-1) steps of
   P messages each.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from suite.api import Ledger, ring_allreduce

__all__ = [
    "MLP",
    "load_dataset",
    "mlp_layer_table",
    "local_gradients",
    "allreduce_groups",
    "train",
    "train_dense",
    "evaluate",
]


# --------------------------------------------------------------------------- data and model


def load_dataset(workload=None) -> tuple[np.ndarray, np.ndarray, str]:
    """(X standardised, y as 0..k-1, name). A Dataset workload, else scikit-learn's digits.

    The digits are :func:`sklearn.datasets.load_digits` (1797 images of 8x8 pixels, 10 classes),
    loaded by the zoo's own loader (:func:`suite.workloads.datasets.load_sklearn`, what the
    ``digits`` workload loads): no lookup by name.
    """
    from suite.api import Dataset

    if isinstance(workload, Dataset):
        X, y = workload.load()
        name = workload.name
    else:
        from suite.api import load_sklearn

        X, y = load_sklearn("digits")
        name = "digits"
    X = np.asarray(X, dtype=np.float64)
    _, y = np.unique(np.asarray(y), return_inverse=True)
    mu, sd = X.mean(axis=0), X.std(axis=0)
    sd[sd == 0] = 1.0
    return (X - mu) / sd, y.astype(np.int64), name


@dataclass
class MLP:
    """A ReLU MLP with softmax cross-entropy; layer l holds ``W[l]`` (in, out) and ``b[l]`` (out,).

    Its gradient units are whole layers (W and b flattened and concatenated, W first).
    """

    sizes: tuple[int, ...]  # (d, h, ..., h, k)
    W: list[np.ndarray] = field(default_factory=list)
    b: list[np.ndarray] = field(default_factory=list)

    @classmethod
    def init(cls, sizes: Sequence[int], rng: np.random.Generator) -> "MLP":
        W = [rng.normal(0.0, np.sqrt(2.0 / i), size=(i, o)) for i, o in zip(sizes[:-1], sizes[1:])]
        b = [np.zeros(o) for o in sizes[1:]]
        return cls(tuple(sizes), W, b)

    @property
    def L(self) -> int:
        return len(self.W)

    def layer_sizes(self) -> list[int]:
        """Elements of each layer's gradient (W and b)."""
        return [w.size + bb.size for w, bb in zip(self.W, self.b)]

    def copy(self) -> "MLP":
        return MLP(self.sizes, [w.copy() for w in self.W], [bb.copy() for bb in self.b])

    def flat(self) -> np.ndarray:
        return np.concatenate([np.concatenate([w.ravel(), bb]) for w, bb in zip(self.W, self.b)])

    def logits(self, X: np.ndarray) -> np.ndarray:
        h = X
        for l in range(self.L):
            z = h @ self.W[l] + self.b[l]
            h = np.maximum(z, 0.0) if l < self.L - 1 else z
        return h

    def loss_acc(self, X: np.ndarray, y: np.ndarray) -> tuple[float, float]:
        z = self.logits(X)
        z = z - z.max(axis=1, keepdims=True)
        logp = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
        return float(-logp[np.arange(len(y)), y].mean()), float((z.argmax(axis=1) == y).mean())

    def step(self, grads: Sequence[np.ndarray], lr: float) -> None:
        """SGD update from per-layer flat gradients."""
        for l, g in enumerate(grads):
            nw = self.W[l].size
            self.W[l] -= lr * g[:nw].reshape(self.W[l].shape)
            self.b[l] -= lr * g[nw:]


def mlp_layer_table(sizes: Sequence[int], dtype_bytes: int = 8):
    """The MLP as a :class:`suite.workloads.LayerTable` (fc layers, per-sample FLOPs = 2 x MACs,
    first layer without data gradient), so the cost model can choose its groups."""
    from suite.api import Layer, LayerTable

    layers = []
    for l, (i, o) in enumerate(zip(sizes[:-1], sizes[1:])):
        layers.append(Layer(name=f"fc{l + 1}", kind="fc", input_shape=(i,), output_shape=(o,),
                            params=i * o + o, fwd_flops=2.0 * i * o,
                            bwd_data_flops=0.0 if l == 0 else 2.0 * i * o, bwd_weight_flops=2.0 * i * o,
                            activation_bytes=float(o * dtype_bytes), grad_shape=(o, i)))
    return LayerTable(name="mlp-" + "-".join(map(str, sizes)), kind="mlp", source="suite_mgwfbp execute",
                      layers=tuple(layers), input_shape=(sizes[0],), dtype_bytes=dtype_bytes)


def local_gradients(model: MLP, X: np.ndarray, y: np.ndarray) -> list[np.ndarray]:
    """Per-layer flat gradients (W then b) of the mean cross-entropy over (X, y), by backprop."""
    hs = [X]
    h = X
    for l in range(model.L):
        z = h @ model.W[l] + model.b[l]
        h = np.maximum(z, 0.0) if l < model.L - 1 else z
        hs.append(h)
    z = hs[-1] - hs[-1].max(axis=1, keepdims=True)
    p = np.exp(z)
    p /= p.sum(axis=1, keepdims=True)
    p[np.arange(len(y)), y] -= 1.0
    delta = p / len(y)
    grads: list[np.ndarray] = [np.empty(0)] * model.L
    for l in range(model.L - 1, -1, -1):
        gW = hs[l].T @ delta
        gb = delta.sum(axis=0)
        grads[l] = np.concatenate([gW.ravel(), gb])
        if l > 0:
            delta = (delta @ model.W[l].T) * (hs[l] > 0)
    return grads


def allreduce_groups(worker_grads: Sequence[Sequence[np.ndarray]], groups: Sequence[Sequence[int]],
                     ledger: Ledger | None = None, tag: str = "g") -> list[np.ndarray]:
    """Average per-layer gradients over workers, one ring all-reduce per group.

    Parameters
    ----------
    worker_grads : P sequences of L flat arrays
        ``worker_grads[r][l]`` is worker r's gradient of layer l.
    groups : sequence of sequences of int
        Contiguous layer groups, in communication order.
    ledger : Ledger, optional
        Records every message; each group's messages carry the tag ``f"{tag}{i}"`` (i = position
        in ``groups``).

    Returns
    -------
    list of L arrays
        The averaged gradient of each layer (identical on every worker; worker 0's copy).
    """
    P = len(worker_grads)
    L = len(worker_grads[0])
    out: list[np.ndarray | None] = [None] * L
    for gi, g in enumerate(groups):
        g = sorted(g)
        bufs = [np.concatenate([worker_grads[r][l] for l in g]) for r in range(P)]
        summed = ring_allreduce(bufs, ledger, tag=f"{tag}{gi}")
        for r in range(1, P):  # every worker ends with the same sum
            if not np.array_equal(summed[r], summed[0]):
                raise AssertionError(f"ring all-reduce left workers 0 and {r} with different sums")
        avg = summed[0] / P
        off = 0
        for l in g:
            n = worker_grads[0][l].size
            out[l] = avg[off:off + n]
            off += n
    if any(o is None for o in out):
        raise ValueError("groups must cover every layer")
    return out  # type: ignore[return-value]


def _batches(n: int, workers: int, batch: int, steps: int, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    need = workers * batch
    if need > n:
        raise ValueError(f"workers x batch = {need} exceeds the {n} samples of the dataset")
    return [rng.choice(n, size=need, replace=False) for _ in range(steps)]


def train(X: np.ndarray, y: np.ndarray, *, workers: int, groups: Sequence[Sequence[int]], steps: int,
          batch: int, lr: float, hidden: int, depth: int, seed: int, ledger: Ledger | None = None
          ) -> tuple[MLP, list[float]]:
    """Data-parallel SGD on *workers* simulated workers; gradients all-reduced per group.

    Returns the trained model and the wall time of each step (s).
    """
    k = int(y.max()) + 1
    sizes = (X.shape[1],) + (hidden,) * depth + (k,)
    model = MLP.init(sizes, np.random.default_rng(seed))
    times = []
    with _pinned_threads(TIMING_THREADS):
        for idx in _batches(len(y), workers, batch, steps, seed + 1):
            t0 = time.perf_counter()
            shards = [idx[r * batch:(r + 1) * batch] for r in range(workers)]
            wg = [local_gradients(model, X[s], y[s]) for s in shards]
            model.step(allreduce_groups(wg, groups, ledger), lr)
            times.append(time.perf_counter() - t0)
    return model, times


#: BLAS/OpenMP threads while timing steps (declared, so step times are comparable between runs).
TIMING_THREADS = 1


def _pinned_threads(n: int = 1):
    """Every BLAS/OpenMP pool at *n* threads while timing (:func:`suite.perf.blas_threads`)."""
    from suite.api import blas_threads

    return blas_threads(n)


def train_dense(X: np.ndarray, y: np.ndarray, *, workers: int, steps: int, batch: int, lr: float,
                hidden: int, depth: int, seed: int) -> MLP:
    """Dense oracle: one process, the mean gradient over the whole global batch (the same samples).

    With equal shards, the mean of the workers' mean gradients equals this gradient.
    """
    k = int(y.max()) + 1
    sizes = (X.shape[1],) + (hidden,) * depth + (k,)
    model = MLP.init(sizes, np.random.default_rng(seed))
    for idx in _batches(len(y), workers, batch, steps, seed + 1):
        model.step(local_gradients(model, X[idx], y[idx]), lr)
    return model


# --------------------------------------------------------------------------- evaluate


def evaluate(scenario):
    """Execute fidelity: train the MLP with the variant's groups and check it against the oracles.

    Metrics: ``final_loss`` and ``accuracy`` on the whole dataset; ``max_diff_vs_layerwise`` (max
    |parameter difference| against per-layer all-reduce, the WFBP oracle) and ``max_diff_vs_dense``
    (against single-process SGD on the global batch); the ledger's ``messages_per_step`` and
    ``bytes_per_step``; ``ledger_matches_ring`` = 1 when every group's messages per step equal
    ``2 (P-1) P`` (``2 (P-1) n`` for a buffer of n < P elements, whose empty chunks send nothing) and
    its bytes ``2 (P-1) m`` (ring all-reduce of m bytes [Patarasuk09]);
    ``step_time`` (wall time of a step; raw samples attached); for the conformance kit,
    ``oracle_error`` (the larger of the two differences) and the ledger's ``bytes_sent`` and
    ``bytes_received`` over all workers and steps.
    """
    from suite.api import LayerTable, Result, Skip

    from suite_mgwfbp import model as M

    if isinstance(scenario.workload, LayerTable):
        raise Skip("execute trains an MLP on a dataset workload (e.g. digits); "
                   f"{scenario.workload.name!r} is a layer table (use the model fidelity)")
    p = scenario.params
    workers = M.resolve_workers(scenario) if p.get("workers") is not None else 4
    if workers < 1:
        raise Skip("need at least one worker")
    X, y, dname = load_dataset(scenario.workload)
    sizes = (X.shape[1],) + (p["hidden"],) * p["depth"] + (int(y.max()) + 1,)
    table = mlp_layer_table(sizes, dtype_bytes=8)
    nbytes = [float(l.params * 8) for l in table.layers]
    groups, comm_src = _variant_groups(scenario, table, nbytes, workers)
    common = dict(workers=workers, steps=p["steps"], batch=p["batch"], lr=p["lr"], hidden=p["hidden"],
                  depth=p["depth"], seed=scenario.seed)
    try:
        ledger = Ledger()
        model, times = train(X, y, groups=groups, ledger=ledger, **common)
        oracle, _ = train(X, y, groups=M.groups_wfbp(len(nbytes)), **common)
        dense = train_dense(X, y, **common)
    except ValueError as exc:
        raise Skip(str(exc)) from None
    ok, group_rows = _ledger_against_ring(groups, nbytes, ledger, workers, p["steps"], table)
    loss, acc = model.loss_acc(X, y)
    steps = p["steps"]
    res = Result()
    res.add("final_loss", loss, "1", "lower")
    res.add("accuracy", acc, "1", "higher")
    res.add("max_diff_vs_layerwise", float(np.max(np.abs(model.flat() - oracle.flat()))), "1", "lower")
    res.add("max_diff_vs_dense", float(np.max(np.abs(model.flat() - dense.flat()))), "1", "lower")
    res.add("oracle_error", max(res["max_diff_vs_layerwise"], res["max_diff_vs_dense"]), "1", "lower")
    res.add("bytes_sent", float(sum(ledger.sent_by().values())), "B", "none")
    res.add("bytes_received", float(sum(ledger.received_by().values())), "B", "none")
    res.add("messages_per_step", ledger.count / steps, "1", "lower")
    res.add("bytes_per_step", ledger.total_bytes / steps, "B", "lower")
    res.add("groups", len(groups), "1", "none")
    res.add("ledger_matches_ring", 1.0 if ok else 0.0, "1", "higher")
    res.add("step_time", float(np.median(times)), "s", "lower", samples=times)
    res.artifacts.update({"dataset": dname, "mlp_sizes": list(sizes), "workers": workers,
                          "group_layers": [list(g) for g in groups], "ledger_groups": group_rows,
                          "comm_model": comm_src})
    return res


def _variant_groups(scenario, table, nbytes: Sequence[float], workers: int) -> tuple[list[list[int]], str]:
    """The variant's groups of the MLP's layers and where mg-wfbp's all-reduce cost came from.

    mg-wfbp prices the MLP's layer table on the scenario's profile (model fidelity's costs);
    the other variants' groups need no cost (bucket: sizes only).

    Raises
    ------
    suite.Skip
        mg-wfbp without a profile.
    """
    from suite.api import Skip

    from suite_mgwfbp import model as M

    p = scenario.params
    if scenario.variant == "mg-wfbp":
        if scenario.profile is None:
            raise Skip("mg-wfbp chooses its groups from a hardware profile's costs; give --profile")
        costs = M.layer_costs(table, p["batch"], scenario.profile.require_device(), p["efficiency"], p["dtype"])
        comm = M.comm_cost(p, scenario.profile, workers)
        return M.groups_mgwfbp(costs.bwd, costs.nbytes, comm)[0], comm.source
    L = len(nbytes)
    sizes_only = M.LayerCosts(tuple(l.name for l in table.layers), 0.0, (0.0,) * L, tuple(nbytes))
    return M.choose_groups(scenario.variant, sizes_only, M.CommCost(0.0, 0.0), p["bucket_mb"]), "not used"


def _ledger_against_ring(groups, nbytes: Sequence[float], ledger: Ledger, workers: int, steps: int,
                         table) -> tuple[bool, list[dict]]:
    """Whether every group's recorded messages and bytes are a ring all-reduce's, and one row per group.

    A ring all-reduce of m bytes over P workers sends ``2 (P-1) P`` messages and ``2 (P-1) m``
    bytes per step [Patarasuk09]; a chunk of an m-element buffer is empty (and sends nothing) only
    when m < P, so such a buffer sends ``2 (P-1) m`` messages.
    """
    per_tag = ledger.by_tag()
    ok = True
    rows = []
    for gi, g in enumerate(groups):
        m = sum(nbytes[l] for l in g)
        msgs, byts = per_tag.get(f"g{gi}", (0, 0))
        exp_msgs = 2 * (workers - 1) * min(workers, int(m // 8)) if workers > 1 else 0
        exp_bytes = 2 * (workers - 1) * m
        ok = ok and msgs == exp_msgs * steps and byts == exp_bytes * steps
        rows.append({"layers": [table.layers[l].name for l in g], "bytes": m,
                     "messages_per_step": msgs / steps, "bytes_per_step": byts / steps})
    return ok, rows
