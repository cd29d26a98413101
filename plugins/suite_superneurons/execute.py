"""SuperNeurons' policies executed for real: a network trained in numpy (float64) on the scenario's
dataset workload (scikit-learn's digits by default; a layer table is Skipped), forward and backward, under each memory policy, with the peak of array memory measured by
tracemalloc.

The network has the structure the paper's policies are written for, with FC layers in the role of
CONV layers: ``(fc -> batchnorm -> relu[in place]) x k -> fc -> softmax``. The FC outputs are the
checkpoints; batch norm and ReLU are the cheap layers (§3.4).

* ``baseline``: every activation and gradient kept until the end of the iteration;
* ``liveness``: each array released right after its last use (§3.2);
* ``liveness+offload``: FC outputs copied into a host pool preallocated before measurement (the
  paper's pinned host memory, §3.3.1) and released, then copied back before their backward use;
* ``liveness+offload+recompute``: as above, and the batch-norm/ReLU outputs are dropped after
  forward and recomputed from the (prefetched) FC output in backward (§3.4, speed-centric);
* ``recompute-only``: checkpoints stay in memory, batch-norm/ReLU outputs recomputed.

All policies perform the same floating-point operations on the same values in the same order, so
the gradients are bit-identical to the baseline's (``grad_max_abs_diff == 0``, checked). The host
pool is allocated before tracemalloc starts, so offloaded bytes do not count as device memory.
"""

from __future__ import annotations

import tracemalloc

import numpy as np

from suite.api import CNNBuilder, LayerTable, Result, Scenario, require_dataset

__all__ = ["mlp_table", "init_params", "train_step", "load_batch", "evaluate"]

EPS = 1e-5


def load_batch(n: int, seed: int, dataset=None):
    """*n* samples of *dataset* (a :class:`suite.workloads.Dataset` with a local loader; None:
    scikit-learn's digits, 8x8 images) scaled by the largest absolute value (the digits: / 16,
    into [0, 1]) and their labels as 0..k-1.

    Returns ``(X float64 (n, d), y int64 (n,))``. Raises :class:`suite.ParameterError` when *n*
    is above the dataset's samples.
    """
    from suite.api import ParameterError, load_sklearn

    X, y = dataset.load() if dataset is not None else load_sklearn("digits")
    X = np.asarray(X, dtype=np.float64)
    _, y = np.unique(np.asarray(y), return_inverse=True)
    name = dataset.name if dataset is not None else "digits"
    if n > len(X):
        raise ParameterError(f"superneurons: parameter 'batch': expected at most the {len(X)} samples of {name!r}, "
                             f"got {n}")
    X = X / (np.abs(X).max() or 1.0)
    rng = np.random.default_rng(seed)
    idx = rng.choice(len(X), size=n, replace=False)
    return X[idx], y[idx]


def mlp_table(widths: list[int]) -> LayerTable:
    """The executed network as a layer table (float64), for the model's prediction."""
    b = CNNBuilder("superneurons-mlp", (widths[0],), dtype_bytes=8)
    x = b.input
    for i, w in enumerate(widths[1:-1]):
        x = b.relu(b.bn(b.fc(x, w, name=f"fc{i + 1}"), name=f"bn{i + 1}"), name=f"relu{i + 1}")
    b.fc(x, widths[-1], name=f"fc{len(widths) - 1}")
    return b.build(source="suite_superneurons execute network")


def init_params(widths: list[int], seed: int):
    rng = np.random.default_rng(seed + 1)
    fcs = [(rng.standard_normal((a, c)) * np.sqrt(2.0 / a), np.zeros(c)) for a, c in zip(widths[:-1], widths[1:])]
    bns = [(np.ones(w), np.zeros(w)) for w in widths[1:-1]]
    return fcs, bns


def _bn_relu(z: np.ndarray, gamma: np.ndarray, beta: np.ndarray) -> np.ndarray:
    mu = z.mean(axis=0)
    var = z.var(axis=0)
    u = (z - mu) / np.sqrt(var + EPS) * gamma + beta
    np.maximum(u, 0.0, out=u)  # ReLU in place (Caffe-style), as the model assumes
    return u


def train_step(params, X, y, policy: str, measure: bool = True):
    """One forward + backward under *policy*.

    Returns
    -------
    grads : list of arrays (fc W, fc b per layer, then bn gamma, beta per layer)
    loss : float
    peak : int
        tracemalloc peak (bytes) of arrays allocated during the step.
    traffic : (bytes offloaded, bytes prefetched)
    """
    fcs, bns = params
    L = len(fcs)
    n = X.shape[0]
    offload = policy in ("liveness+offload", "liveness+offload+recompute")
    recompute = policy in ("liveness+offload+recompute", "recompute-only")
    keep = policy == "baseline"
    host = _HostPool(n, fcs) if offload else None
    if measure:
        tracemalloc.start()
        tracemalloc.reset_peak()
    kept: list = []
    z, h = _forward(fcs, bns, X, host, recompute)
    g, loss = _softmax_loss_grad(z.pop(L - 1), y, kept if keep else None)
    gW: list = [None] * L
    gB: list = [None] * (L - 1)
    for i in range(L - 1, -1, -1):
        W, _b = fcs[i]
        if i >= 1:
            if host is not None:  # prefetch the checkpoint before its backward use
                z[i - 1] = host.fetch(i - 1, n)
            if recompute:  # recompute the dropped bn+relu output from its checkpoint
                h[i] = _bn_relu(z[i - 1], *bns[i - 1])
        gW[i] = (h[i].T @ g, g.sum(axis=0))
        if i == 0:
            break
        gh = g @ W.T
        if keep:
            kept.append(g)
        del g
        gh *= h[i] > 0  # ReLU backward from its output
        g, gB[i - 1], xhat, dxhat = _bn_backward(gh, z[i - 1], bns[i - 1][0], n)
        if keep:
            kept += [gh, xhat, dxhat]
        else:
            del z[i - 1]
            h.pop(i)
        del gh, xhat, dxhat
    peak = 0
    if measure:
        _cur, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
    del kept
    grads = [a for pair in gW for a in pair] + [a for pair in gB for a in pair]
    return grads, loss, peak, (host.off_b if host else 0, host.pre_b if host else 0)


class _HostPool:
    """The pinned host pool of §3.3.1, allocated before measurement: FC outputs are copied in
    after forward and back before their backward use."""

    def __init__(self, n: int, fcs) -> None:
        self.pool = np.empty(sum(n * W.shape[1] for W, _ in fcs[:-1]), dtype=np.float64)
        self.slots: dict[int, slice] = {}
        self.pos = 0
        self.off_b = self.pre_b = 0

    def put(self, i: int, zi: np.ndarray) -> None:
        m = zi.size
        self.pool[self.pos:self.pos + m] = zi.reshape(-1)
        self.slots[i] = slice(self.pos, self.pos + m)
        self.pos += m
        self.off_b += zi.nbytes

    def fetch(self, i: int, n: int) -> np.ndarray:
        zi = self.pool[self.slots[i]].reshape(n, -1).copy()
        self.pre_b += zi.nbytes
        return zi


def _forward(fcs, bns, X: np.ndarray, host: "_HostPool | None", recompute: bool):
    """Forward pass: the fc outputs (checkpoints; offloaded to ``host`` if given) and the fc
    layers' inputs (bn+relu outputs; dropped after use when recomputing)."""
    L = len(fcs)
    z: dict[int, np.ndarray] = {}
    h: dict[int, np.ndarray] = {0: X}
    for i, (W, b) in enumerate(fcs):
        zi = h[i] @ W + b
        if i < L - 1:
            h[i + 1] = _bn_relu(zi, *bns[i])
            if recompute and i >= 1:
                del h[i]  # dropped after its forward use; recomputed in backward
            if host is not None:
                host.put(i, zi)
            else:
                z[i] = zi
        else:
            z[i] = zi
        del zi
    if recompute and L - 1 >= 1:
        del h[L - 1]
    return z, h


def _softmax_loss_grad(logits: np.ndarray, y: np.ndarray, kept: list | None):
    """Cross-entropy of softmax(logits) and its gradient (mean over the batch); the baseline
    keeps the intermediates alive in ``kept``."""
    n = logits.shape[0]
    shift = logits - logits.max(axis=1, keepdims=True)
    e = np.exp(shift)
    p = e / e.sum(axis=1, keepdims=True)
    loss = float(-np.mean(np.log(p[np.arange(n), y])))
    g = p
    g[np.arange(n), y] -= 1.0
    g /= n
    if kept is not None:
        kept += [logits, shift, e]
    return g, loss


def _bn_backward(gh: np.ndarray, zc: np.ndarray, gamma: np.ndarray, n: int):
    """Batch-norm backward from its input (the checkpoint): the input gradient, (dgamma, dbeta),
    and the intermediates x-hat and d x-hat."""
    mu = zc.mean(axis=0)
    var = zc.var(axis=0)
    inv = 1.0 / np.sqrt(var + EPS)
    xhat = (zc - mu) * inv
    dgamma = (gh * xhat).sum(axis=0)
    dbeta = gh.sum(axis=0)
    dxhat = gh * gamma
    g = inv / n * (n * dxhat - dxhat.sum(axis=0) - xhat * (dxhat * xhat).sum(axis=0))
    return g, (dgamma, dbeta), xhat, dxhat


#: what execute runs, as its Skip line names it (the workload is the data, never the network)
RUNS = ("superneurons execute measures one training step of an fc+bn+relu MLP on a classification dataset "
        "workload (e.g. digits)")


def evaluate(scenario: Scenario) -> Result:
    """One training step under the variant's policy: measured peak (tracemalloc), gradients against
    the baseline's (bit-identical expected), and the model's predicted peak for the same network.

    The MLP's widths are ``[d] + [mlp_hidden] * mlp_layers + [classes]`` of the scenario's dataset
    workload (the digits: 64 and 10), artifact ``widths``.

    Raises
    ------
    suite.Skip
        A workload that is not a classification dataset with a local loader (a layer table: its
        peak is the model fidelity's; the MLP's would be stored under the network's name).
    suite.ParameterError
        ``batch`` above the dataset's samples.
    """
    from suite_superneurons.model import simulate

    batch = scenario.params["batch"]
    X, y = load_batch(batch, scenario.seed, require_dataset(scenario.workload, RUNS))
    classes = int(scenario.workload.classes) if scenario.workload is not None else 10
    widths = [X.shape[1]] + [scenario.params["mlp_hidden"]] * scenario.params["mlp_layers"] + [classes]
    params = init_params(widths, scenario.seed)
    ref, _loss, _peak, _ = train_step(params, X, y, "baseline", measure=False)
    grads, loss, peak, (off_b, pre_b) = train_step(params, X, y, scenario.variant)
    diff = max(float(np.max(np.abs(a - b))) for a, b in zip(grads, ref))
    pred = simulate(mlp_table(widths), batch, scenario.variant, tensor_cache=False,
                    offload_kinds=frozenset({"fc"}))
    res = Result()
    res.add("measured_peak", peak, "B", "lower")
    res.add("predicted_peak", pred.peak, "B", "lower")
    res.add("peak_error", (pred.peak - peak) / peak if peak else 0.0, "1", "none")
    res.add("grad_max_abs_diff", diff, "1", "lower")
    res.add("loss", loss, "1", "lower")
    res.add("bytes_offloaded", off_b, "B", "none")
    res.add("bytes_prefetched", pre_b, "B", "none")
    res.artifacts["widths"] = widths
    return res
