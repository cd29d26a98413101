"""PFedDST's reference implementation on real arrays: clients, a peer graph, peer scoring,
extractor averaging and two-phase local training, with every transfer in a traffic ledger.

The algorithm (Fan et al., arXiv 2502.07750, Sec. III as summarised; the exact definitions were
not read, see docs/techniques/pfeddst.md for the reading chosen for each term):

* each client ``i`` holds a one-hidden-layer ReLU MLP (:class:`suite.collectives.dataparallel.FlatModel`):
  the **extractor** ``e_i = [W1, b1]`` is shared with peers, the **header** ``h_i = [W2, b2]`` stays local;
* every round, client ``i`` scores each neighbour ``j`` of the peer graph (networkx
  ``random_regular_graph``, seeded) by ``S_ij = s_p (alpha s_l - s_d + c)``:

  - ``s_l`` (loss disparity): ``cross`` reading, the loss of ``i``'s model on ``j``'s training data
    (``i`` sends its model to ``j``, ``j`` returns one scalar); ``gap`` reading, ``|L_j - L_i|``
    of the two clients' own training losses (one scalar each way);
  - ``s_d`` (header distance): ``1 - cos(h_i, h_j)`` (``j`` sends its header; headers travel for
    scoring, never for averaging);
  - ``s_p`` (peer recency): ``1 / (1 + n_ij)`` with ``n_ij`` the times ``i`` picked ``j`` in the
    last ``R`` rounds;

* it keeps the top ``k`` neighbours by S (ties broken by the lower index), receives their
  extractors and sets ``e_i`` to the equal-weight mean of its own and theirs (a convex combination);
* phase 1 trains the extractor with the header frozen, phase 2 the header with the extractor frozen
  (full-batch gradient steps on the client's local training part).

Baselines: ``local-only`` (joint training, no traffic), ``fedavg`` (a server averages whole models
weighted by samples [McMahan17]), ``random-peers`` (``k`` neighbours drawn uniformly, then the same
averaging and two-phase training).

Every decision of a round is taken on the round-start snapshot of all models (synchronous rounds),
so the result does not depend on the order clients are visited.

References
----------
.. [Fan25] M. Fan, K. Li, T. Zhang, Q. Tian, B. Geng, "PFedDST: Personalized Federated Learning with
   Decentralized Selection Training", arXiv 2502.07750v2, 2025 (abstract; Sec. III via summaries).
.. [McMahan17] B. McMahan et al., "Communication-Efficient Learning of Deep Networks from
   Decentralized Data", AISTATS 2017 (FedAvg, Algorithm 1: weights n_k / n; pathological split Sec. 3).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from suite.api import FlatModel, Ledger, ParameterError, Result, collector_paused, require_dataset

__all__ = ["Clients", "load_clients", "peer_graph", "score_matrix", "score_loop", "select_top_k",
           "average_extractors", "average_extractors_many", "batched_losses", "run", "RunResult", "evaluate", "SCALAR_BYTES", "rounds_to_target"]

SCALAR_BYTES = 8  # one float64 loss value


# --------------------------------------------------------------------------- data


@dataclass(frozen=True)
class Clients:
    """Per-client local train / test parts of one dataset (standardised with the train parts' statistics).

    ``train[i] = (X (n_i, d), y (n_i,))`` and ``test[i]`` likewise; ``classes`` labels in total.
    """

    train: tuple
    test: tuple
    classes: int
    d: int

    @property
    def n(self) -> int:
        return len(self.train)


def load_clients(X, y, clients: int, split: str = "pathological", shards: int = 2, alpha: float = 0.5,
                 seed: int = 0, test_fraction: float = 0.25) -> Clients:
    """Split (X, y) over *clients*, then each client's part into local train / test.

    Parameters
    ----------
    X : array_like, shape (n, d)
    y : array_like of int, shape (n,)
    clients : int
        Number of clients (>= 1).
    split : {"pathological", "dirichlet", "iid"}
        ``pathological``: sort by label, ``clients * shards`` shards, ``shards`` per client
        [McMahan17 Sec. 3] (:func:`suite.workloads.datasets.pathological`); ``dirichlet``:
        per-class ``Dir(alpha)`` proportions; ``iid``.
    seed : int
        Seeds the partition and each client's train / test cut.
    test_fraction : float
        Fraction of each client's samples held out as its local test part, in (0, 1).

    Raises
    ------
    ParameterError
        A client would get fewer than 2 samples, or a fraction outside (0, 1).
    """
    from suite.api import partition

    if not 0 < test_fraction < 1:
        raise ParameterError(f"pfeddst: parameter 'test_fraction': expected in (0, 1), got {test_fraction}")
    X = np.asarray(X, float)
    _, y = np.unique(np.asarray(y), return_inverse=True)
    y = y.astype(np.int64)
    if clients * 2 > len(y):
        raise ParameterError(f"pfeddst: parameter 'clients': expected <= {len(y) // 2} (2 samples each), got {clients}")
    parts = partition(y, clients, scheme=split, alpha=alpha, seed=seed, shards_per_worker=shards,
                      min_size=min(8, len(y) // clients))
    rng = np.random.default_rng([seed, 7])
    tr_idx, te_idx = [], []
    for p in parts:
        p = rng.permutation(np.asarray(p, np.int64))
        n_te = min(len(p) - 1, max(1, int(round(test_fraction * len(p)))))
        te_idx.append(p[:n_te])
        tr_idx.append(p[n_te:])
    all_tr = np.concatenate(tr_idx)
    mu, sd = X[all_tr].mean(axis=0), X[all_tr].std(axis=0)
    sd[sd == 0] = 1.0
    Xs = (X - mu) / sd
    return Clients(tuple((Xs[t], y[t]) for t in tr_idx), tuple((Xs[t], y[t]) for t in te_idx),
                   int(y.max() + 1), int(X.shape[1]))


def peer_graph(clients: int, degree: int, seed: int) -> list[list[int]]:
    """Sorted neighbour lists of a seeded random ``degree``-regular graph (networkx).

    ``degree`` is clipped to ``clients - 1``; a regular graph needs ``clients * degree`` even, so an
    odd product lowers the degree by one. Raises ParameterError for ``degree < 0``.
    """
    return [list(n) for n in _peer_graph(int(clients), int(degree), int(seed))]


@functools.lru_cache(maxsize=256)
def _peer_graph(clients: int, degree: int, seed: int) -> tuple:
    """Sorted neighbour lists of a seeded random ``degree``-regular graph (networkx).

    ``degree`` is clipped to ``clients - 1``; a regular graph needs ``clients * degree`` even, so an
    odd product lowers the degree by one. Raises ParameterError for ``degree < 0``.
    """
    import networkx as nx

    if degree < 0:
        raise ParameterError(f"pfeddst: parameter 'degree': expected >= 0, got {degree}")
    deg = min(degree, clients - 1)
    if (deg * clients) % 2:
        deg -= 1
    if deg <= 0:
        return tuple(() for _ in range(clients))
    g = nx.random_regular_graph(deg, clients, seed=int(seed))
    return tuple(tuple(sorted(int(j) for j in g.neighbors(i))) for i in range(clients))


def _xfer(ledger: Ledger, src: int, dst: int, array: np.ndarray, tag: str) -> np.ndarray:
    """One message src -> dst recorded on both tallies at once
    (:meth:`suite.collectives.Ledger.transfer`: the records :func:`suite.collectives.send` then
    :func:`suite.collectives.recv` would write, one shared record); returns the received copy."""
    return ledger.transfer(src, dst, array, tag)


# --------------------------------------------------------------------------- scoring


def score_matrix(s_l: np.ndarray, s_d: np.ndarray, s_p: np.ndarray, alpha: float, c: float) -> np.ndarray:
    """Vectorised peer score ``S = s_p * (alpha * s_l - s_d + c)`` (elementwise), [Fan25] Sec. III.

    All arrays have one shape (clients, clients); entries of non-neighbours are ignored by the caller.
    """
    return s_p * (alpha * s_l - s_d + c)


def score_loop(i: int, neighbours, s_l, s_d, s_p, alpha: float, c: float) -> dict[int, float]:
    """The same score, one neighbour at a time (the oracle of :func:`score_matrix`)."""
    out = {}
    for j in neighbours:
        out[j] = float(s_p[i][j]) * (alpha * float(s_l[i][j]) - float(s_d[i][j]) + c)
    return out


def select_top_k(scores: np.ndarray, neighbours, k: int) -> list[int]:
    """The *k* neighbours with the highest score (ties: lower index first), sorted by index."""
    nb = list(neighbours)
    if k <= 0 or not nb:
        return []
    order = sorted(nb, key=lambda j: (-float(scores[j]), j))
    return sorted(order[:k])


def average_extractors(own: np.ndarray, received: list[np.ndarray]) -> np.ndarray:
    """Equal-weight mean of the own and the received extractors (a convex combination)."""
    if not received:
        return own.copy()
    return np.mean(np.stack([own, *received]), axis=0)


def average_extractors_many(thetas, received: list[list[np.ndarray]], split: int) -> list[tuple[list[int], np.ndarray]]:
    """:func:`average_extractors` of every client at once: client ``i``'s own extractor
    ``thetas[i][:split]`` and its ``received`` ones, for the clients grouped by how many they received.

    Returns ``(members, E)`` per group, ``E`` of shape (len(members), split), row ``r`` the mean for
    client ``members[r]``; the same sums in the same order as :func:`average_extractors` (the mean
    over the stacked inputs' leading axis), so the same bits (tested).
    """
    by: dict[int, list[int]] = {}
    for i, got in enumerate(received):
        by.setdefault(len(got), []).append(i)
    out = []
    for m, members in by.items():
        own = np.stack([thetas[i][:split] for i in members])
        if m == 0:
            out.append((members, own))
            continue
        stack = np.stack([x for i in members for x in (thetas[i][:split], *received[i])])
        out.append((members, np.mean(stack.reshape(len(members), m + 1, split), axis=1)))
    return out


def cosine_distance(a: np.ndarray, b: np.ndarray) -> float:
    """``1 - cos(a, b)`` in [0, 2]; 1 when either vector is zero."""
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0 or nb == 0:
        return 1.0
    return 1.0 - float(a @ b) / (na * nb)


# --------------------------------------------------------------------------- training


@dataclass
class RunResult:
    """What :func:`run` returns: the accuracy curve, the final models and the ledger."""

    accuracy: list[float]
    loss: list[float]
    thetas: list[np.ndarray]
    ledger: Ledger
    selections: list[list[list[int]]] = field(default_factory=list)  # round -> client -> picked peers
    aggregate_error: float = 0.0
    score_error: float = 0.0
    scoring_seconds: float = 0.0  # CPU time of the scoring (terms, messages, top-k); the oracle check excluded
    training_seconds: float = 0.0  # CPU time of local training only (phase 1 + phase 2 steps)


#: BLAS threads while a run is timed (:func:`suite.perf.blas_threads`): the scoring and training clocks
#: are this thread's CPU time (:func:`suite.perf.measurement_clock`), which would miss a BLAS worker's share
TIMING_THREADS = 1


def _split(model: FlatModel) -> int:
    """Index where the header starts in the flat parameter vector (extractor = [W1, b1])."""
    return model.d * model.hidden + model.hidden


def _train(model: FlatModel, theta, X, y, lr: float, steps: int, lo: int, hi: int) -> np.ndarray:
    """*steps* full-batch gradient steps on theta[lo:hi] only (the rest frozen).

    One client of :func:`_train_many` (the fast path of the one-hidden-layer model's three
    blocks); any other block, or logistic regression, takes :func:`_train_reference`.
    """
    return _train_many(model, [theta], _batch([(X, y)], model.k), lr, steps, lo, hi)[0]


def _train_reference(model: FlatModel, theta, X, y, lr: float, steps: int, lo: int, hi: int) -> np.ndarray:
    """*steps* steps on theta[lo:hi] with the full gradient of :meth:`FlatModel.loss_grad` (the oracle
    of :func:`_train_many`: the same sums in another order, equal to ~1e-15 relative)."""
    theta = theta.copy()
    for _ in range(steps):
        _, g = model.loss_grad(theta, X, y)
        theta[lo:hi] -= lr * g[lo:hi]
    return theta


@dataclass(frozen=True)
class _Group:
    """Clients with the same number of samples, stacked: ``X (g, n, d)``, ``y (g, n)`` and their
    indices ``members`` in client order."""

    members: tuple
    X: np.ndarray
    y: np.ndarray


def _groups(data) -> list[_Group]:
    """The clients' ``(X, y)`` parts grouped by sample count (each group one stack of arrays)."""
    by: dict[int, list[int]] = {}
    for i, (_, y) in enumerate(data):
        by.setdefault(len(y), []).append(i)
    return [_Group(tuple(m), np.stack([data[i][0] for i in m]), np.stack([data[i][1] for i in m]))
            for m in by.values()]


@dataclass(frozen=True, eq=False)  # compared and hashed by identity (a cache key of _peer_parts)
class _Batch:
    """Every client's ``(X, y)`` part in one stack, zero-padded to the largest part (``m`` rows).

    ``X1 (g, m, d + 1)``: the samples with a column of ones appended (the bias as one more input,
    so ``X1 @ [W1; b1] = X W1 + b1``); padded rows are zero, ones column included; ``y (g, m)``
    the labels (0 on padded rows); ``n (g, 1, 1)`` samples per client; ``rows (g, m, 1)`` 1.0 on a
    real row, 0.0 on a padded one; ``at`` the flat positions of ``[i, y[i, j], j]`` in a
    C-contiguous ``(g, k, m)`` array (class scores of client ``i``'s sample ``j`` in the
    class-major layout); ``parts`` the unpadded ``(X, y)`` parts; ``classes`` k.
    """

    X1: np.ndarray
    y: np.ndarray
    n: np.ndarray
    rows: np.ndarray
    at: np.ndarray
    parts: tuple
    classes: int

    def clients(self, lo: int, hi: int) -> _Batch:
        """Clients ``lo..hi-1`` as a batch of their own (views; ``at`` shifted to it)."""
        m = self.X1.shape[1]
        return _Batch(self.X1[lo:hi], self.y[lo:hi], self.n[lo:hi], self.rows[lo:hi],
                      self.at[lo * m:hi * m] - lo * self.classes * m, self.parts[lo:hi], self.classes)


def _batch(data, k: int) -> _Batch:
    """:class:`_Batch` of the clients' ``(X, y)`` parts (``k`` classes)."""
    g, m = len(data), max(len(y) for _, y in data)
    d = int(np.shape(data[0][0])[1])
    X1, y1, rows = np.zeros((g, m, d + 1)), np.zeros((g, m), np.int64), np.zeros((g, m, 1))
    for i, (X, y) in enumerate(data):
        X1[i, :len(y), :d] = X
        X1[i, :len(y), d] = 1.0
        y1[i, :len(y)] = y
        rows[i, :len(y)] = 1.0
    at = (np.arange(g)[:, None] * (k * m) + y1 * m + np.arange(m)[None, :]).reshape(-1).astype(np.intp)
    n = np.array([len(y) for _, y in data], float).reshape(g, 1, 1)
    return _Batch(X1, y1, n, rows, at, tuple(data), k)


#: clients per stacked pass of :func:`_train_batch`: a pass's arrays (~35 kB of inputs per client) then
#: stay near a core's cache (chosen by timing passes of 10 and 20 under load; the measured effect of
#: the stacking is in docs/performance.md, "plugins' evaluation, 0.3.3")
TRAIN_CHUNK = 10


def _train_many(model: FlatModel, thetas, batch: _Batch, lr: float, steps: int, lo: int,
                hi: int) -> list[np.ndarray]:
    """:func:`_train` of every client (``thetas[i]`` on ``batch``'s part ``i``).

    The one-hidden-layer model's three blocks (the whole model, the extractor ``[W1, b1]``, the
    header ``[W2, b2]``) take :func:`_train_batch`, one stacked pass per TRAIN_CHUNK clients; any other
    block takes :func:`_train_reference` client by client.
    """
    split = _split(model)
    if model.hidden > 0 and (lo, hi) in ((0, model.size), (0, split), (split, model.size)):
        out: list[np.ndarray] = []
        for at in range(0, len(thetas), TRAIN_CHUNK):
            out += _train_batch(model, thetas[at:at + TRAIN_CHUNK], batch.clients(at, at + TRAIN_CHUNK), lr,
                                steps, lo == 0, hi == model.size)
        return out
    return [_train_reference(model, th, X, y, lr, steps, lo, hi) for th, (X, y) in zip(thetas, batch.parts)]


def _train_batch(model: FlatModel, thetas, b: _Batch, lr: float, steps: int, extractor: bool,
                 header: bool) -> list[np.ndarray]:
    """*steps* full-batch steps of the one-hidden-layer MLP for every client at once, on the
    extractor and/or the header, the other block frozen.

    The gradient of :meth:`FlatModel.loss_grad` (mean cross-entropy; the L2 term on the weights)
    for the stacked clients: the biases ride in the GEMMs as a column of ones (``[X 1] [W1; b1]``,
    and their gradients ``[X 1]^T dh``), the class scores are kept class-major ``(g, k, m)`` so the
    softmax's max and sum run over whole rows; a padded row's inputs and hidden units (its ones
    included) are exact zeros, so it adds exact zeros to every gradient sum. The same sums as
    :func:`_train_reference` in another order: equal to ~1e-15 relative (tested).
    Skipped: the loss value, the frozen block's gradient and, while the extractor is frozen,
    recomputing the hidden layer from unchanged weights.
    """
    d, h, r = model.d, model.hidden, model.l2
    flat = np.stack(thetas)
    g, m, split = len(flat), b.X1.shape[1], _split(model)
    W1 = np.ascontiguousarray(flat[:, :split]).reshape(g, d + 1, h)  # [W1; b1]: the extractor's layout
    W2 = np.ascontiguousarray(flat[:, split:]).reshape(g, h + 1, model.k)  # [W2; b2]
    h1 = np.empty((g, m, h + 1))
    h1[..., h:] = b.rows  # the ones column of the hidden layer (zero on padded rows)
    X1T = b.X1.transpose(0, 2, 1)
    # every step's arrays written in place: fresh temporaries of this size cost page faults
    a, dh, on = np.empty((g, m, h)), np.empty((g, m, h)), np.empty((g, m, h), bool)
    zT, gW1, gW2 = np.empty((g, model.k, m)), np.empty_like(W1), np.empty_like(W2)
    fresh = True
    for _ in range(steps):
        if fresh or extractor:
            np.matmul(b.X1, W1, out=a)
            np.maximum(a, 0.0, out=h1[..., :h])
            fresh = False
        np.matmul(W2.transpose(0, 2, 1), h1.transpose(0, 2, 1), out=zT)
        delta = _softmax_error(zT, b).transpose(0, 2, 1)
        if extractor:
            np.matmul(delta, W2[:, :h, :].transpose(0, 2, 1), out=dh)
            dh *= np.greater(a, 0.0, out=on)
            np.matmul(X1T, dh, out=gW1)
            if r:
                gW1[:, :d] += r * W1[:, :d]
        if header:
            np.matmul(h1.transpose(0, 2, 1), delta, out=gW2)
            if r:
                gW2[:, :h] += r * W2[:, :h]
            gW2 *= lr
            W2 -= gW2
        if extractor:
            gW1 *= lr
            W1 -= gW1
    return list(np.concatenate([W1.reshape(g, -1), W2.reshape(g, -1)], axis=1))


def _softmax_error(zT: np.ndarray, b: _Batch) -> np.ndarray:
    """d(mean cross-entropy)/d(scores) of class-major scores ``zT (g, k, m)``, in place:
    ``(softmax - one_hot(y)) / n`` (a padded row gets a finite value that only ever meets the
    row's exact zeros: its inputs and its hidden units, ones column included)."""
    zT -= zT.max(axis=1, keepdims=True)
    np.exp(zT, out=zT)
    zT /= zT.sum(axis=1, keepdims=True)
    zT.reshape(-1)[b.at] -= 1.0
    zT /= b.n
    return zT


def _stacked(model: FlatModel, thetas) -> list[np.ndarray]:
    """``[W1 (g, d, h), b1 (g, 1, h), W2 (g, h, k), b2 (g, 1, k)]``: the clients' parameters stacked
    (each block a C-contiguous copy, the layout of :meth:`FlatModel.unpack`'s blocks stacked)."""
    flat = np.stack(thetas)
    g, d, h, k = len(flat), model.d, model.hidden, model.k
    cut = np.cumsum([0, d * h, h, h * k, k])
    shapes = ((g, d, h), (g, 1, h), (g, h, k), (g, 1, k))
    return [np.ascontiguousarray(flat[:, cut[j]:cut[j + 1]]).reshape(shapes[j]) for j in range(4)]


def _row_max(z: np.ndarray) -> np.ndarray:
    """``z.max(axis=-1, keepdims=True)`` of a C-contiguous array of short rows (the k class scores),
    as a chain of :func:`numpy.maximum` over its k columns: a maximum is exact, so the same values,
    and numpy's reduction along a 10-element last axis costs about 2.5x the chain (one inner loop
    per row)."""
    k = z.shape[-1]
    if k < 2:
        return z.copy()
    m = np.maximum(z[..., 0], z[..., 1])
    for j in range(2, k):
        np.maximum(m, z[..., j], out=m)
    return m[..., None]


def personalized_accuracy(model: FlatModel, thetas, data) -> tuple[float, float]:
    """(mean over clients of the accuracy of client i's model on its own part, mean loss).

    *data* is the clients' ``(X, y)`` parts or their :func:`_groups`: equal, bit for bit, to
    :meth:`FlatModel.loss_acc` client by client (one stacked forward pass per group); or their
    :class:`_Batch` (one-hidden-layer models): :func:`_batch_accuracy`, the same accuracy and the
    loss to ~1e-15 relative.
    """
    if isinstance(data, _Batch) and model.hidden > 0:
        return _batch_accuracy(model, thetas, data)
    if isinstance(data, _Batch):
        data = data.parts
    groups = data if data and isinstance(data[0], _Group) else _groups(data)
    accs, losses = [0.0] * len(thetas), [0.0] * len(thetas)
    for grp in groups:
        if model.hidden == 0:
            for j, i in enumerate(grp.members):
                losses[i], accs[i] = model.loss_acc(thetas[i], grp.X[j], grp.y[j])
            continue
        W1, b1, W2, b2 = _stacked(model, [thetas[i] for i in grp.members])
        g, n = grp.y.shape
        z = np.maximum(grp.X @ W1 + b1, 0.0) @ W2 + b2
        z = z - _row_max(z)
        logp = z - np.log(np.exp(z).sum(axis=2, keepdims=True))
        ce = -logp[np.arange(g)[:, None], np.arange(n)[None, :], grp.y]
        ce_mean, hit_mean = ce.mean(axis=1).tolist(), (z.argmax(axis=2) == grp.y).mean(axis=1).tolist()
        for j, i in enumerate(grp.members):  # row by row the same sums as each client's own mean
            losses[i] = ce_mean[j] + model._reg(thetas[i])
            accs[i] = hit_mean[j]
    return float(np.mean(accs)), float(np.mean(losses))



def _batch_accuracy(model: FlatModel, thetas, b: _Batch) -> tuple[float, float]:
    """:func:`personalized_accuracy` on a :class:`_Batch`, TRAIN_CHUNK clients per stacked forward
    pass (biases inside the GEMMs, class-major scores; a padded row counted neither as a hit nor
    in a loss): the hits are counted as :meth:`FlatModel.loss_acc` counts them (the first of
    tied class scores), the losses are the same sums in another order."""
    d, h, k, split = model.d, model.hidden, model.k, _split(model)
    accs, losses = [], []
    for lo in range(0, len(thetas), TRAIN_CHUNK):
        c, part = len(thetas[lo:lo + TRAIN_CHUNK]), b.clients(lo, lo + TRAIN_CHUNK)
        flat = np.stack(thetas[lo:lo + TRAIN_CHUNK])
        W1 = np.ascontiguousarray(flat[:, :split]).reshape(c, d + 1, h)
        W2 = np.ascontiguousarray(flat[:, split:]).reshape(c, h + 1, k)
        h1 = np.empty(part.X1.shape[:2] + (h + 1,))
        h1[..., h:] = part.rows
        np.maximum(part.X1 @ W1, 0.0, out=h1[..., :h])
        zT = W2.transpose(0, 2, 1) @ h1.transpose(0, 2, 1)  # (c, k, m)
        rows, n = part.rows[..., 0], part.n[:, 0, 0]
        hits = (zT.argmax(axis=1) == part.y) * rows
        zT -= zT.max(axis=1, keepdims=True)
        label = zT.reshape(-1)[part.at].reshape(rows.shape)
        ce = -(label - np.log(np.exp(zT).sum(axis=1))) * rows
        accs += (hits.sum(axis=1) / n).tolist()
        losses += [v + model._reg(t) for v, t in zip((ce.sum(axis=1) / n).tolist(), thetas[lo:lo + TRAIN_CHUNK])]
    return float(np.mean(accs)), float(np.mean(losses))

@collector_paused()  # ~10^5 small lists and messages a run, none in a cycle
def run(cl: Clients, variant: str, *, rounds: int = 30, hidden: int = 32, degree: int = 4, k: int = 2,
        alpha: float = 1.0, c: float = 2.0, window: int = 5, lr: float = 0.05, phase1_steps: int = 2,
        phase2_steps: int = 2, loss_reading: str = "cross", seed: int = 0,
        thetas0: list[np.ndarray] | None = None) -> RunResult:
    """Run one variant for *rounds* synchronous rounds; personalized accuracy after each round.

    Parameters
    ----------
    cl : Clients
    variant : {"local-only", "fedavg", "random-peers", "pfeddst"}
    k : int
        Peers averaged per round (<= degree).
    alpha, c, window : float, float, int
        Score weights and the recency window R (rounds).
    phase1_steps, phase2_steps : int
        Full-batch steps of phase 1 (extractor) and phase 2 (header); ``local-only`` and ``fedavg``
        train the whole model jointly for the sum of the two.
    thetas0 : list of ndarray, optional
        Each client's starting parameters (default: one seeded He-normal init shared by all).

    Returns
    -------
    RunResult

    Raises
    ------
    ParameterError
        Unknown variant or reading, or ``k`` above the peer graph's degree.
    """
    from suite.api import blas_threads, measurement_clock

    if variant not in ("local-only", "fedavg", "random-peers", "pfeddst"):
        raise ParameterError(f"pfeddst: variant: expected local-only, fedavg, random-peers or pfeddst, got {variant!r}")
    if loss_reading not in ("cross", "gap"):
        raise ParameterError(f"pfeddst: parameter 'loss_reading': expected 'cross' or 'gap', got {loss_reading!r}")
    nbrs = peer_graph(cl.n, degree, seed)
    deg = len(nbrs[0]) if cl.n else 0
    if variant in ("random-peers", "pfeddst") and k > deg:
        raise ParameterError(f"pfeddst: parameter 'k': expected <= {deg} (degree of the peer graph), got {k}")
    # one BLAS thread, timed on this thread's CPU clock: waiting for a core on a shared machine is
    # not counted, and no gemm runs on a BLAS worker thread the clock does not see
    fed = _Federation(cl, FlatModel(cl.d, cl.classes, hidden=hidden), nbrs, seed, thetas0,
                      measurement_clock(TIMING_THREADS), lr)
    step = {"local-only": lambda: fed.local_round(phase1_steps + phase2_steps),
            "fedavg": lambda: fed.fedavg_round(phase1_steps + phase2_steps)}.get(
        variant, lambda: fed.peer_round(variant, k, (alpha, c, window, loss_reading), phase1_steps, phase2_steps))
    acc_curve, loss_curve = [], []
    with blas_threads(TIMING_THREADS):
        for _t in range(rounds):
            fed.history.append(step())
            a, l = personalized_accuracy(fed.model, fed.thetas, fed.test)
            acc_curve.append(a)
            loss_curve.append(l)
    return RunResult(acc_curve, loss_curve, fed.thetas, fed.ledger, fed.history, fed.agg_err, fed.score_err,
                     fed.t_score, fed.t_train)


class _Federation:
    """The state of one run: every client's parameters, the ledger, the selection history, the
    oracle errors and the timed seconds (scoring, training) on the measurement clock."""

    def __init__(self, cl: Clients, model: FlatModel, nbrs, seed: int, thetas0, clock, lr: float) -> None:
        self.cl, self.model, self.nbrs, self.clock, self.lr = cl, model, nbrs, clock, lr
        self.n, self.split, self.size = cl.n, _split(model), model.size
        theta0 = model.init(np.random.default_rng([seed, 1]))
        self.thetas = ([theta0.copy() for _ in range(cl.n)] if thetas0 is None
                       else [np.array(t, float) for t in thetas0])
        self.global_theta = theta0.copy()
        self.sel_rng = np.random.default_rng([seed, 2])
        self.ledger = Ledger()
        self.history: list[list[list[int]]] = []
        self.agg_err = self.score_err = self.t_score = self.t_train = 0.0
        self.weights = np.array([len(cl.train[i][1]) for i in range(cl.n)], float)
        self.train, self.test = _batch(cl.train, cl.classes), _batch(cl.test, cl.classes)  # stacked once

    def _train(self, thetas, steps: int, lo: int, hi: int):
        t0 = self.clock()
        out = _train_many(self.model, thetas, self.train, self.lr, steps, lo, hi)
        self.t_train += self.clock() - t0
        return out

    def local_round(self, steps: int) -> list[list[int]]:
        self.thetas = self._train([th.copy() for th in self.thetas], steps, 0, self.size)
        return [[] for _ in range(self.n)]

    def fedavg_round(self, steps: int) -> list[list[int]]:
        """FedAvg through a server (rank n): broadcast, local training, weighted average of the
        uploads (checked against a dense sum)."""
        n, server, w = self.n, self.n, self.weights
        got = [_xfer(self.ledger, server, i, self.global_theta, "fedavg-down") for i in range(n)]
        local = self._train(got, steps, 0, self.size)
        up = [_xfer(self.ledger, i, server, local[i], "fedavg-up") for i in range(n)]
        new = np.tensordot(w / w.sum(), np.stack(up), axes=1)
        dense = sum(wi * u for wi, u in zip(w, up)) / w.sum()
        self.agg_err = max(self.agg_err, float(np.max(np.abs(new - dense))))
        self.global_theta = new
        self.thetas = [new.copy() for _ in range(n)]
        return [[] for _ in range(n)]

    def peer_round(self, variant: str, k: int, score_args, phase1: int, phase2: int) -> list[list[int]]:
        """Decentralised round: choose peers (PFedDST's scores or at random), average extractors
        with them, then train phase 1 (extractor) and phase 2 (header)."""
        snap = [th.copy() for th in self.thetas]
        picks = self._pick(variant, k, snap, score_args)
        split = self.split
        mixed = self._mix(snap, picks)
        t0 = self.clock()  # local training of every client: phase 1 then phase 2
        thetas = _train_many(self.model, mixed, self.train, self.lr, phase1, 0, split)
        self.thetas = _train_many(self.model, thetas, self.train, self.lr, phase2, split, self.size)
        self.t_train += self.clock() - t0
        return picks

    def _mix(self, snap, picks: list[list[int]]) -> list[np.ndarray]:
        """Every client's parameters with its extractor averaged with those it received from its
        picks; the aggregate error against a dense sum of the snapshot's extractors (the oracle)."""
        split = self.split
        received = [[_xfer(self.ledger, j, i, snap[j][:split], "extractor") for j in picks[i]] for i in range(self.n)]
        mixed = [th.copy() for th in snap]
        for members, e in average_extractors_many(snap, received, split):
            for i, row in zip(members, e):
                mixed[i][:split] = row
            m = len(picks[members[0]])
            if m:
                acc = 0  # (own + (picked_1 + picked_2 + ...)) / (m + 1), the picks summed in order
                picked = np.stack([snap[j][:split] for i in members for j in picks[i]]).reshape(len(members), m, split)
                for r in range(m):
                    acc = acc + picked[:, r]
                dense = (np.stack([snap[i][:split] for i in members]) + acc) / (m + 1)
                self.agg_err = max(self.agg_err, float(np.max(np.abs(e - dense))))
        return mixed

    def _pick(self, variant: str, k: int, snap, score_args) -> list[list[int]]:
        n, nbrs = self.n, self.nbrs
        picks: list[list[int]] = [[] for _ in range(n)]
        if variant == "pfeddst" and k > 0:
            alpha, c, window, reading = score_args
            t0 = self.clock()
            S = _scores(self.model, self.train, snap, nbrs, self.history, alpha, c, window, reading, self.ledger,
                        self.split)
            picks = [select_top_k(S["S"][i], nbrs[i], k) for i in range(n)]
            self.t_score += self.clock() - t0
            for i in range(n):  # the oracle (loop-based S), outside the timed scoring
                loop = score_loop(i, nbrs[i], S["s_l"], S["s_d"], S["s_p"], alpha, c)
                for j, v in loop.items():
                    self.score_err = max(self.score_err, abs(v - float(S["S"][i, j])))
        elif variant == "random-peers" and k > 0:
            for i in range(n):
                picks[i] = sorted(int(j) for j in self.sel_rng.choice(nbrs[i], size=k, replace=False))
        return picks


def _scores(model, train, snap, nbrs, history, alpha, c, window, reading, ledger, split):
    """The score terms for every (client, neighbour) pair from the round-start snapshot, with the
    scoring messages in the ledger: header j -> i always; ``cross``: model i -> j and a scalar
    j -> i; ``gap``: j's scalar loss j -> i. *train* is the clients' training parts as a
    :class:`_Batch`."""
    n = len(snap)
    s_l = np.zeros((n, n))
    s_d = np.zeros((n, n))
    s_p = np.ones((n, n))
    own = [model.loss_acc(snap[i], *train.parts[i])[0] for i in range(n)] if reading == "gap" else None
    recent = history[-window:] if window > 0 else []
    if reading == "cross":
        # candidate j receives the models of the clients that score it, evaluates each on its data
        # and returns one scalar loss to each (the losses computed sender by sender from the
        # snapshot, of which every received model is a copy: :func:`_cross_losses`)
        senders: dict[int, list[int]] = {j: [] for j in range(n)}
        for i in range(n):
            for j in nbrs[i]:
                _xfer(ledger, i, j, snap[i], "score-model")
                senders[j].append(i)
        losses = _cross_losses(model, snap, nbrs, train)
        for j, got in senders.items():
            for i in got:
                s_l[i, j] = _xfer(ledger, j, i, losses[i, j:j + 1], "score-loss")[0]  # its 8 B, copied
    # headers j -> i (for s_d only); the cosine distances of all pairs at once, from the received copies
    pairs, recvd = [], []
    for i in range(n):
        for j in nbrs[i]:
            pairs.append((i, j))
            recvd.append(_xfer(ledger, j, i, snap[j][split:], "score-header"))
            if reading == "gap":
                lj = _xfer(ledger, j, i, np.array([own[j]]), "score-loss")
                s_l[i, j] = abs(float(lj[0]) - own[i])
    if pairs:
        ii = np.array([p[0] for p in pairs])
        jj = np.array([p[1] for p in pairs])
        mine = np.stack([snap[i][split:] for i in range(n)])[ii]
        theirs = np.stack(recvd)
        na, nb = np.linalg.norm(mine, axis=1), np.linalg.norm(theirs, axis=1)
        ok = (na > 0) & (nb > 0)
        cos = np.einsum("pk,pk->p", mine, theirs) / np.where(ok, na * nb, 1.0)
        s_d[ii, jj] = np.where(ok, 1.0 - cos, 1.0)
    s_p = 1.0 / (1.0 + _pick_counts(recent, n))
    return {"s_l": s_l, "s_d": s_d, "s_p": s_p, "S": score_matrix(s_l, s_d, s_p, alpha, c)}


def _pick_counts(recent, n: int) -> np.ndarray:
    """``P (n, n)`` float: ``P[i, j]`` the number of *recent* rounds (each a list of every client's
    picked peers) in which client ``i`` picked ``j``. A peer listed twice in one round's row counts
    once, as a fancy-indexed ``P[i, row] += 1.0`` counts it; counted as integers by one bincount,
    exact as floats (so the same values as adding 1.0 round by round, which cost ~1 ms a round: docs/performance.md,
    "Reproduce, 0.3.7")."""
    flat = np.array([i * n + j for r in recent for i, row in enumerate(r) for j in set(row)], dtype=np.intp)
    return np.bincount(flat, minlength=n * n).reshape(n, n).astype(float)


#: senders per stacked pass of :func:`_cross_losses` (the pass's arrays stay near a core's cache)
CROSS_CHUNK = 20


def _cross_losses(model: FlatModel, snap, nbrs, b: _Batch) -> np.ndarray:
    """``L[i, j]``: the mean cross-entropy (plus the L2 term) of client ``i``'s parameters
    ``snap[i]`` on the training part (in *b*) of each neighbour ``j`` in ``nbrs[i]``; 0 elsewhere.

    With as many neighbours for every client (a regular peer graph), each client's model meets its
    neighbours' parts side by side (:func:`_peer_parts`, built once per batch and graph): one GEMM
    per model and layer, biases inside the GEMMs, class-major scores, a padded row's loss dropped
    before each part's mean; the same sums as :meth:`FlatModel.loss_acc` in another order, equal
    to ~1e-15 relative (tested). Otherwise :func:`batched_losses` candidate by candidate.
    """
    n = len(snap)
    L = np.zeros((n, n))
    peers = _peer_parts(b, nbrs) if model.hidden else None
    if peers is None:
        for j in range(n):
            got = [i for i in range(n) if j in nbrs[i]]
            if got:
                L[got, j] = batched_losses(model, np.stack([snap[i] for i in got]), *b.parts[j])
        return L
    X1, rows, at, count, work = peers
    d, h, k, split, deg = model.d, model.hidden, model.k, _split(model), count.shape[1]
    M = X1.shape[1]
    for lo in range(0, n, CROSS_CHUNK):
        hi = min(n, lo + CROSS_CHUNK)
        c = hi - lo
        A, h1, zT, W1, W2 = (w[:c] for w in work(h, k))  # reused: fresh arrays this size cost page faults
        np.stack([snap[i][:split] for i in range(lo, hi)], out=W1.reshape(c, -1))
        np.stack([snap[i][split:] for i in range(lo, hi)], out=W2.reshape(c, -1))
        h1[..., h] = rows[lo:hi]
        np.maximum(np.matmul(X1[lo:hi], W1, out=A), 0.0, out=h1[..., :h])
        np.matmul(W2.transpose(0, 2, 1), h1.transpose(0, 2, 1), out=zT)  # (senders, k, M)
        zT -= zT.max(axis=1, keepdims=True)
        label = zT.reshape(-1)[at[lo * M:hi * M] - lo * k * M].reshape(c, M)
        ce = -(label - np.log(np.exp(zT, out=zT).sum(axis=1))) * rows[lo:hi]
        part = ce.reshape(c, deg, M // deg).sum(axis=2) / count[lo:hi]
        for i, row in zip(range(lo, hi), part):
            L[i, nbrs[i]] = row + model._reg(snap[i])
    return L


@functools.lru_cache(maxsize=2)
def _peer_parts_cached(b: _Batch, nbrs: tuple) -> tuple | None:
    deg = len(nbrs[0]) if nbrs else 0
    if deg == 0 or any(len(x) != deg for x in nbrs):
        return None
    idx = np.array(nbrs, dtype=np.intp)  # (n, deg)
    n, (g, m) = len(nbrs), b.y.shape
    M = deg * m
    y = b.y[idx].reshape(n, M)
    at = (np.arange(n)[:, None] * (b.classes * M) + y * M + np.arange(M)[None, :]).reshape(-1)
    c = min(n, CROSS_CHUNK)

    @functools.lru_cache(maxsize=2)
    def work(h: int, k: int) -> tuple[np.ndarray, ...]:
        d1 = b.X1.shape[2]
        return (np.empty((c, M, h)), np.empty((c, M, h + 1)), np.empty((c, k, M)), np.empty((c, d1, h)),
                np.empty((c, h + 1, k)))

    return (b.X1[idx].reshape(n, M, -1), b.rows[idx].reshape(n, M), at.astype(np.intp), b.n[idx, 0, 0], work)


def _peer_parts(b: _Batch, nbrs) -> tuple | None:
    """Client ``i``'s neighbours' training parts side by side: ``X1 (n, deg m, d + 1)`` (row block
    ``r`` the padded part of ``nbrs[i][r]``), ``rows (n, deg m)`` (1.0 on a real row), ``at`` (the
    labels' flat positions in a C-contiguous ``(n, k, deg m)`` array), ``count (n, deg)`` (each
    part's samples) and ``work(h, k)``, the work arrays of a pass of :func:`_cross_losses` for
    ``h`` hidden units and ``k`` classes (kept from round to round); None unless every client has
    the same number (> 0) of neighbours."""
    return _peer_parts_cached(b, tuple(tuple(x) for x in nbrs))

def batched_losses(model: FlatModel, thetas: np.ndarray, X: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Mean cross-entropy (plus the model's L2 term) of each of *m* parameter vectors on (X, y).

    ``thetas`` has shape (m, model.size) (one-hidden-layer layout); returns shape (m,). Equal to
    ``[model.loss_acc(t, X, y)[0] for t in thetas]`` (tested), in one batched forward pass.
    """
    d, h, q = model.d, model.hidden, model.k
    m = thetas.shape[0]
    o1, o2, o3 = d * h, d * h + h, d * h + h + h * q
    W1 = thetas[:, :o1].reshape(m, d, h)
    A = np.maximum(np.matmul(X, W1) + thetas[:, o1:o2][:, None, :], 0.0)
    Z = np.matmul(A, thetas[:, o2:o3].reshape(m, h, q)) + thetas[:, o3:][:, None, :]
    Z = Z - _row_max(Z)
    logp = Z - np.log(np.exp(Z).sum(axis=2, keepdims=True))
    out = -logp[:, np.arange(len(y)), y].mean(axis=1)
    if model.l2:
        out = out + np.array([model._reg(t) for t in thetas])
    return out


def rounds_to_target(curve, target: float) -> int:
    """First round (1-based) whose accuracy reaches *target*; ``len(curve) + 1`` when none does
    (censored: the run did not reach it)."""
    for r, a in enumerate(curve, start=1):
        if a >= target:
            return r
    return len(curve) + 1


# --------------------------------------------------------------------------- evaluate


#: what execute runs, as its Skip line names it (the workload is the clients' data, never a network)
RUNS = "pfeddst execute trains per-client MLPs on a classification dataset workload (e.g. digits)"


def _dataset(scenario):
    """``(X (n, d), y (n,), name)`` of the scenario's dataset workload (None: the digits).

    Raises
    ------
    suite.Skip
        Any other workload (:func:`suite.api.require_dataset`): a layer table, or a dataset
        without a local loader or classes.
    """
    wl = require_dataset(scenario.workload, RUNS, priced=False)  # the model fidelity prices a dataset's shape only
    if wl is not None:
        X, y = wl.load()
        return np.asarray(X, float), np.asarray(y), wl.name
    from suite.api import load_sklearn

    X, y = load_sklearn("digits")
    return np.asarray(X, float), y, "digits"


def evaluate(scenario) -> Result:
    """Execute fidelity: run the variant on real arrays and report accuracy, rounds to target,
    bytes and the oracle errors (aggregate vs a dense mean of the snapshot, vectorised vs loop score).

    Raises
    ------
    suite.Skip
        A workload that is not a classification dataset with a local loader (a layer table such
        as ``resnet-50``: its numbers would be the digits clients' under the network's name).
    """
    p = scenario.params
    X, y, name = _dataset(scenario)
    cl = load_clients(X, y, int(p["clients"]), split=p["split"], shards=int(p["shards"]),
                      alpha=float(p["dirichlet_alpha"]), seed=scenario.seed, test_fraction=float(p["test_fraction"]))
    rr = run(cl, scenario.variant, rounds=int(p["rounds"]), hidden=int(p["hidden"]), degree=int(p["degree"]),
             k=int(p["k"]), alpha=float(p["alpha"]), c=float(p["c"]), window=int(p["window"]), lr=float(p["lr"]),
             phase1_steps=int(p["phase1_steps"]), phase2_steps=int(p["phase2_steps"]),
             loss_reading=p["loss_reading"], seed=scenario.seed)
    led = rr.ledger
    sent = sum(led.sent_by().values())
    res = Result()
    res.add("final_accuracy", rr.accuracy[-1], "1", "higher")
    res.add("best_accuracy", max(rr.accuracy), "1", "higher")
    res.add("rounds_to_target", rounds_to_target(rr.accuracy, float(p["target_accuracy"])), "1", "lower")
    res.add("final_loss", rr.loss[-1], "1", "lower")
    res.add("bytes_sent", sent, "B", "lower")
    res.add("bytes_received", sum(led.tallied_by_receivers().values()), "B", "lower")
    res.add("bytes_per_client_round", sent / max(1, cl.n) / max(1, int(p["rounds"])), "B", "lower")
    res.add("messages", led.count, "1", "lower")
    res.add("aggregate_error", rr.aggregate_error, "1", "lower")
    res.add("score_error", rr.score_error, "1", "lower")
    res.add("oracle_error", max(rr.aggregate_error, rr.score_error), "1", "lower")
    res.add("scoring_over_training", rr.scoring_seconds / rr.training_seconds if rr.training_seconds else 0.0,
            "1", "lower")
    res.artifacts["accuracy_curve"] = [round(a, 6) for a in rr.accuracy]
    res.artifacts["dataset"] = name
    res.artifacts["bytes_by_tag"] = {k: list(v) for k, v in led.by_tag().items()}
    return res
