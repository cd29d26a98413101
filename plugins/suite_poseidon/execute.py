"""Poseidon's execute fidelity: PS and SFB gradient aggregation on real arrays.

P simulated workers each hold a batch of K samples and compute, for every layer, the weight
gradient ``G_p = delta_p^T X_p`` (delta_p: K x M output errors, X_p: K x N inputs, so
``G_p = sum_k outer(delta_pk, x_pk)``; for the conv layer the rows are (sample, position) pairs of
the im2col patch matrix). Aggregation then runs for real through :mod:`suite.collectives`:

* **PS**: :func:`suite.collectives.ps_push_pull` (gradient sharded over S colocated servers);
* **SFB**: every worker sends its factors (delta_p, X_p) to each of the P-1 others with
  :func:`suite.collectives.send`, and every worker rebuilds the sum of all gradients from the
  factors it holds: ``sum_q delta_q^T X_q``.

Oracle: the dense sum of all workers' gradients, computed independently in float64 from the
stacked batches (``np.vstack(deltas).T @ np.vstack(Xs)``); every worker's aggregate must be
``np.allclose`` to it. Bytes: every message is in a :class:`suite.collectives.Ledger`, and the
bytes each node sends plus receives are checked against the float counts of the cost rule
(:func:`suite_poseidon.model.ps_floats_per_node`, :func:`~suite_poseidon.model.sfb_floats_per_node`).

References
----------
[Zhang17] §3.2 (SFB, HybComm); [Xie16] (sufficient factor broadcasting); see
:mod:`suite_poseidon.model`.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from suite.api import Layer, Ledger, ps_push_pull, send

from suite_poseidon.model import VARIANTS, ps_floats_per_node, scheme_for, sfb_eligible, sfb_floats_per_node

__all__ = ["EXEC_LAYERS", "MAX_WORKERS", "MAX_BATCH", "worker_gradients", "dense_oracle", "aggregate_ps",
           "aggregate_sfb", "node_bytes", "expected_ps_bytes", "expected_sfb_bytes", "evaluate"]

#: Worker count and per-worker batch beyond which the execute fidelity declines (Skip): its
#: SFB rebuild is O(P^2 K M N) on this machine's CPU.
MAX_WORKERS = 64
MAX_BATCH = 256
#: BLAS/OpenMP threads while timing (declared, so repeats are comparable).
TIMING_THREADS = 1

#: The small layer set the execute fidelity aggregates (per sample; fp32):
#: a 3x3 conv (3 -> 32 channels on 8x8 maps: 64 factor pairs per sample, so never SFB),
#: a wide fc layer (1024 -> 512, SFB-favoured at the default P=16, K=32) and a narrow
#: classifier (512 -> 10, PS-favoured).
EXEC_LAYERS: tuple[Layer, ...] = (
    Layer("conv1", "conv", (3, 8, 8), (32, 8, 8), params=32 * 27, grad_shape=None,
          attrs={"kernel": 3, "positions": 64, "patch": 27}),
    Layer("fc6", "fc", (1024,), (512,), params=512 * 1024, grad_shape=(512, 1024)),
    Layer("fc8", "fc", (512,), (10,), params=10 * 512, grad_shape=(10, 512)),
)


def _pinned_threads(n: int = 1):
    """Every BLAS/OpenMP pool at *n* threads while timing (:func:`suite.perf.blas_threads`)."""
    from suite.api import blas_threads

    return blas_threads(n)


def _factor_shape(layer: Layer) -> tuple[int, int, int]:
    """(rows per sample, M, N) of the layer's gradient as ``delta^T X``."""
    if layer.grad_shape is not None:
        m, n = layer.grad_shape
        return 1, m, n
    return int(layer.attrs["positions"]), layer.params // int(layer.attrs["patch"]), int(layer.attrs["patch"])


def worker_gradients(layer: Layer, workers: int, batch: int, rng: np.random.Generator, dtype=np.float32):
    """Random real batches and each worker's gradient for one layer.

    Returns
    -------
    deltas, xs : list of ndarray, shapes (K r, M) and (K r, N)
        Output errors and inputs per worker (r = rows per sample: 1 for fc, H W for conv).
    grads : list of ndarray, shape (M, N)
        ``delta_p^T X_p`` per worker (dtype).
    """
    r, m, n = _factor_shape(layer)
    deltas = [rng.standard_normal((batch * r, m)).astype(dtype) for _ in range(workers)]
    xs = [rng.standard_normal((batch * r, n)).astype(dtype) for _ in range(workers)]
    grads = [d.T @ x for d, x in zip(deltas, xs)]
    return deltas, xs, grads


def dense_oracle(deltas: Sequence[np.ndarray], xs: Sequence[np.ndarray]) -> np.ndarray:
    """The aggregate gradient computed independently: ``vstack(deltas)^T @ vstack(xs)`` in float64."""
    return np.vstack(deltas).astype(np.float64).T @ np.vstack(xs).astype(np.float64)


def aggregate_ps(grads: Sequence[np.ndarray], servers: int, ledger: Ledger, tag: str) -> list[np.ndarray]:
    """PS aggregation on real arrays (:func:`suite.collectives.ps_push_pull`, colocated servers)."""
    return ps_push_pull(list(grads), servers, ledger, colocated=True, tag=tag)


def aggregate_sfb(deltas: Sequence[np.ndarray], xs: Sequence[np.ndarray], ledger: Ledger, tag: str
                  ) -> list[np.ndarray]:
    """SFB on real arrays: each worker sends its K factor pairs to every other worker, then every
    worker rebuilds ``sum_q delta_q^T X_q`` from the factors it holds (its own and the received).

    Returns one aggregate (M x N) per worker.
    """
    p = len(deltas)
    held: list[dict[int, tuple[np.ndarray, np.ndarray]]] = [{q: (deltas[q], xs[q])} for q in range(p)]
    for q in range(p):
        for r in range(p):
            if r != q:
                u = send(ledger, q, r, deltas[q], tag + ":u")
                v = send(ledger, q, r, xs[q], tag + ":v")
                held[r][q] = (u, v)
    out = []
    for r in range(p):
        us = np.vstack([held[r][q][0] for q in range(p)])
        vs = np.vstack([held[r][q][1] for q in range(p)])
        out.append(us.T @ vs)  # sum over all P K factor pairs of outer(u, v)
    return out


def node_bytes(ledger: Ledger, prefix: str, workers: int) -> list[int]:
    """Bytes each node (rank 0..P-1) sent plus received, over the messages whose tag starts with
    *prefix*."""
    per = defaultdict(int)
    for msg in ledger.messages:
        if msg.tag.startswith(prefix):
            per[msg.src] += msg.nbytes
            per[msg.dst] += msg.nbytes
    return [per.get(r, 0) for r in range(workers)]


def expected_ps_bytes(m: int, n: int, workers: int, servers: int, dtype_bytes: int = 4) -> float:
    """Total bytes sent plus received over all nodes under colocated PS, from the cost rule:
    S server+worker nodes at ``2MN(P1+P2-2)/P2`` floats and P1-S worker-only nodes at ``2MN``."""
    if workers == 1:
        return 0.0
    return (servers * ps_floats_per_node(m, n, workers, servers) + (workers - servers) * 2.0 * m * n) * dtype_bytes


def expected_sfb_bytes(m: int, n: int, workers: int, rows: int, dtype_bytes: int = 4) -> float:
    """Bytes one node sends plus receives under SFB: ``2 K (P1-1)(M+N)`` floats (K = factor rows)."""
    return sfb_floats_per_node(m, n, workers, rows) * dtype_bytes


def _check_close(name: str, scheme: str, outs: Sequence[np.ndarray], oracle: np.ndarray) -> float:
    """The worst absolute difference of the aggregates *outs* from *oracle*, relative to the
    oracle's largest magnitude (``scale``).

    Raises
    ------
    suite.api.OracleMismatch
        An aggregate is not ``np.allclose(out, oracle, rtol=1e-4, atol=1e-4 * scale)``.
    """
    scale = float(np.max(np.abs(oracle))) or 1.0
    worst = max(float(np.max(np.abs(o.astype(np.float64) - oracle))) for o in outs) / scale
    if not all(np.allclose(o, oracle, rtol=1e-4, atol=1e-4 * scale) for o in outs):
        from suite.api import OracleMismatch

        raise OracleMismatch(f"poseidon execute: layer {name!r} {scheme} aggregate differs from the dense sum "
                             f"(max relative error {worst:.3g})")
    return worst


def _sizes(prm) -> tuple[int, int, int]:
    """Workers P (``nodes``), samples per worker K (``batch_per_node``) and servers S
    (``servers``, default P) of an execute case.

    Raises
    ------
    suite.Skip
        More than :data:`MAX_WORKERS` workers or :data:`MAX_BATCH` samples, servers > nodes.
    """
    from suite.api import Skip

    from suite_poseidon.model import nodes_of

    p = nodes_of(prm, None)  # no profile is read: unset is the paper's 16
    k = int(prm["batch_per_node"])
    s = p if prm.get("servers") is None else int(prm["servers"])
    if p > MAX_WORKERS:
        raise Skip(f"poseidon execute: nodes={p} > {MAX_WORKERS} simulated workers (CPU cost grows as P^2)")
    if k > MAX_BATCH:
        raise Skip(f"poseidon execute: batch_per_node={k} > {MAX_BATCH}")
    if s > p:
        raise Skip(f"poseidon: servers={s} > nodes={p} (servers are colocated with workers)")
    return p, k, s


def evaluate(scenario, repeats: int = 3):
    """Execute fidelity: aggregate every layer of :data:`EXEC_LAYERS` across ``nodes`` simulated
    workers by PS and (fc layers) by SFB, check both against the dense oracle, check the ledger
    bytes against the cost rule, and time the variant's chosen schemes.

    Parameters
    ----------
    scenario : suite.Scenario
        ``params``: ``nodes`` (P), ``batch_per_node`` (K), ``servers`` (S, default P); ``variant``
        picks the scheme per layer (``ps``/``wfbp``: PS; ``sfb``: SFB for fc; ``poseidon``:
        :func:`~suite_poseidon.model.best_scheme`); ``seed`` the random batches.
    repeats : int
        Timed repetitions of the chosen aggregation (raw samples are returned), after
        the checked pass (the warm-up), with every BLAS/OpenMP pool at :data:`TIMING_THREADS`.

    Returns
    -------
    suite.Result
        ``aggregate_time`` (s, median, with samples), ``bytes_moved`` (B, sent by all nodes for
        the chosen schemes), ``bytes_ps``/``bytes_sfb`` (B, the same for all-PS / SFB-for-fc),
        ``bytes_sent``/``bytes_received`` (B, all nodes, chosen schemes, from the ledger),
        ``max_rel_error`` (vs the oracle), ``sfb_layers``; artifact ``layers``.

    Raises
    ------
    suite.Skip
        More than :data:`MAX_WORKERS` workers or :data:`MAX_BATCH` samples, servers > nodes.
    suite.api.OracleMismatch
        An aggregate differs from the oracle, or the ledger disagrees with the cost rule (a bug).
    """
    from suite.api import Result

    p, k, s = _sizes(scenario.params)
    policy, _overlap = VARIANTS[scenario.variant]
    rng = np.random.default_rng(scenario.seed)
    tally = _Tally()
    data, chosen = {}, {}
    for layer in EXEC_LAYERS:
        data[layer.name] = worker_gradients(layer, p, k, rng)
        chosen[layer.name] = scheme_for(policy, layer, p, s, k)
        tally.layers.append(_checked_layer(layer, data[layer.name], p, s, k, chosen[layer.name], tally))
    samples = _time_chosen(data, chosen, s, repeats)

    res = Result()
    res.add("aggregate_time", float(np.median(samples)), "s", "lower", samples=samples)
    res.add("bytes_moved", sum(r["bytes_moved"] for r in tally.layers), "B", "lower")
    res.add("bytes_sent", tally.sent, "B", "lower")
    res.add("bytes_received", tally.received, "B", "lower")
    res.add("bytes_ps", tally.by_scheme["ps"], "B", "lower")
    res.add("bytes_sfb", tally.by_scheme["sfb"], "B", "lower")
    res.add("max_rel_error", tally.worst, "1", "lower")
    res.add("sfb_layers", sum(1 for v in chosen.values() if v == "sfb"), "1", "none")
    res.add("nodes_used", p, "1", "none")  # the resolved count: nodes=None is the paper's 16
    res.artifacts["layers"] = tally.layers
    res.artifacts["setup"] = {"nodes": p, "servers": s, "batch_per_node": k, "dtype": "fp32", "repeats": repeats,
                              "threads": TIMING_THREADS}
    return res


@dataclass
class _Tally:
    """Totals over the layers of one execute case."""

    layers: list[dict] = field(default_factory=list)
    sent: int = 0
    received: int = 0
    by_scheme: dict[str, int] = field(default_factory=lambda: {"ps": 0, "sfb": 0})
    worst: float = 0.0


def _checked_layer(layer: Layer, data, p: int, s: int, k: int, scheme: str, tally: _Tally) -> dict:
    """Aggregate one layer by PS and (fc layers) by SFB, check both against the dense oracle and
    the ledger against the cost rule; add its bytes to ``tally``; its row of the ``layers`` artifact.

    Raises
    ------
    suite.api.OracleMismatch
        An aggregate differs from the oracle, or the ledger disagrees with the cost rule (a bug).
    """
    from suite.api import OracleMismatch

    rows, m, n = _factor_shape(layer)
    deltas, xs, grads = data
    oracle = dense_oracle(deltas, xs)
    ledger = Ledger()
    outs = aggregate_ps(grads, s, ledger, f"{layer.name}:ps")
    tally.worst = max(tally.worst, _check_close(layer.name, "ps", outs, oracle))
    ps_nodes = node_bytes(ledger, f"{layer.name}:ps", p)
    ps_expect = expected_ps_bytes(m, n, p, s)
    if sum(ps_nodes) != ps_expect:
        raise OracleMismatch(f"poseidon execute: layer {layer.name!r} PS ledger {sum(ps_nodes)} B != cost rule {ps_expect:.0f} B")
    row = {"layer": layer.name, "kind": layer.kind, "M": m, "N": n, "factor_rows": k * rows,
           "ps_bytes_all_nodes": sum(ps_nodes), "ps_bytes_formula": ps_expect,
           "ps_bytes_per_server_node": max(ps_nodes[:s]) if p > 1 else 0}
    if sfb_eligible(layer):
        outs = aggregate_sfb(deltas, xs, ledger, f"{layer.name}:sfb")
        tally.worst = max(tally.worst, _check_close(layer.name, "sfb", outs, oracle))
        sfb_nodes = node_bytes(ledger, f"{layer.name}:sfb", p)
        sfb_expect = expected_sfb_bytes(m, n, p, k)
        if any(b != sfb_expect for b in sfb_nodes):
            raise OracleMismatch(f"poseidon execute: layer {layer.name!r} SFB ledger {sfb_nodes} B per node != cost rule {sfb_expect:.0f} B")
        row.update(sfb_bytes_per_node=sfb_nodes[0], sfb_bytes_formula=sfb_expect,
                   sfb_bytes_all_nodes=sum(sfb_nodes))
    row["scheme"] = scheme
    # bytes on the wire (each message counted once), all nodes together
    tally.by_scheme["ps"] += sum(ps_nodes) // 2
    tally.by_scheme["sfb"] += row.get("sfb_bytes_all_nodes", sum(ps_nodes)) // 2
    row["bytes_moved"] = (sum(ps_nodes) if scheme == "ps" else row["sfb_bytes_all_nodes"]) // 2
    mine = Ledger([msg for msg in ledger.messages if msg.tag.startswith(f"{layer.name}:{scheme}")])
    tally.sent += sum(mine.sent_by().values())
    tally.received += sum(mine.received_by().values())
    return row


def _time_chosen(data: dict, chosen: dict, servers: int, repeats: int) -> list[float]:
    """Wall times of the chosen aggregations, timed after the checked pass (the warm-up), with
    every BLAS/OpenMP pool at TIMING_THREADS."""
    samples = []
    with _pinned_threads(TIMING_THREADS):
        for _ in range(max(1, repeats)):
            t0 = time.perf_counter()
            for layer in EXEC_LAYERS:
                deltas, xs, grads = data[layer.name]
                if chosen[layer.name] == "ps":
                    aggregate_ps(grads, servers, Ledger(), "t")
                else:
                    aggregate_sfb(deltas, xs, Ledger(), "t")
            samples.append(time.perf_counter() - t0)
    return samples
