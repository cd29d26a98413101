"""Processor grids, rank placements and inter-node volumes (shared by the model and the execute fidelity).

A contraction ``C[m, n] = sum_k A[m, k] B[k, n]`` (after grouping the einsum indices into the
free indices of A (``m``), of B (``n``) and the contracted ones (``k``)) runs on a processor grid
``lens = (P_M, P_N)`` (2-D, SUMMA) or ``(P_M, P_N, P_K)`` (3-D). Grid dimension ``d`` has a *role*:

* the M dimension splits A's and C's rows; B lacks ``m``, so **B panels are broadcast along it**;
* the N dimension splits B's and C's columns; **A panels are broadcast along it**;
* the K dimension splits the contracted extent; C lacks ``k``, so **C is reduced along it**.

A grid position ``x`` has the linear index ``sum_d x_d lda_d`` with ``lda_d = prod_{j<d} lens_j``
(dimension 0 fastest, the ``lda`` of CTF's ``node_aware_dist``).

Placements (which node holds grid position ``x``), with ``ppn`` ranks per node and
``N = P / ppn`` nodes:

* **default** (node-unaware): rank = linear index, ``node = rank // ppn``;
* **node-aware** for an inter-node grid ``g`` (``prod g = N``, ``g_d | lens_d``) and the intra-node
  grid ``h = lens / g`` (``prod h = ppn``): physical rank ``r`` (node ``r // ppn``, intra-node rank
  ``r % ppn``) takes the grid position
  ``new_rank(r) = sum_d (node_coord_d h_d + intra_coord_d) lda_d`` (node coordinates of
  ``r // ppn`` in ``g``, intra coordinates of ``r % ppn`` in ``h``, both dimension 0 fastest).
  A communicator along ``d`` then touches exactly ``g_d`` nodes.

Inter-node volume (the bytes that cross a node boundary when every broadcast and reduction sends
one message per remote node, then fans out inside the node)::

    V_inter = |B| (G_M - 1) + |A| (G_N - 1) + |C| (G_K - 1)

with ``G_d`` the mean number of distinct nodes a communicator along ``d`` touches (``g_d`` for a
node-aware grid); the total volume ``V = |B| (P_M - 1) + |A| (P_N - 1) + |C| (P_K - 1)`` does not
depend on the placement, so ``V_intra = V - V_inter``.

References
----------
.. [Irmler23] A. Irmler, R. Kanakagiri, S. T. Ohlmann, E. Solomonik, A. Grüneis, "Optimizing
   Distributed Tensor Contractions using Node-Aware Processor Grids", arXiv 2307.08829, 2023
   (abstract read; the method below is as read in the authors' code).
.. [CTF] Cyclops Tensor Framework, ``src/mapping/node_aware_dist.cxx`` / ``.h``
   (``get_inter_node_grids``: every g with prod g = nodes and g[i] | rGrid[i], found by spreading
   the prime factors of the node count over the dimensions; the rank renumbering
   ``new_rank = sum_i (node_coord_i h[i] + intra_coord_i) lda[i]``; the estimated inter-node
   volume ``sum (s_A comm_nodes_A + s_B comm_nodes_B + s_C comm_nodes_C)``, kept only when below
   the default mapping's), and ``src/contraction/ctr_2d_general`` (SUMMA levels: broadcast of A and
   B panels, reduction of C). Read as code (secondary source), not in the paper.
.. [vdGeijn97] R. A. van de Geijn, J. Watts, "SUMMA: Scalable Universal Matrix Multiplication
   Algorithm", Concurrency: Practice and Experience 9(4), 1997.
"""

from __future__ import annotations

import functools
import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = [
    "ROLES",
    "prime_factors",
    "divisors",
    "inter_node_grids",
    "brute_force_inter_node_grids",
    "all_grids",
    "near_square_2d",
    "panel_steps",
    "lda",
    "position_of_rank",
    "rank_of_position",
    "node_of_position",
    "comm_stats",
    "CommStats",
    "volume_inter",
    "volume_total",
    "node_aware_volume",
    "best_inter_node_grid",
    "parse_grid",
]

#: Roles of the grid dimensions, in order: dimension 0 is M, 1 is N, 2 (3-D grids) is K.
ROLES = ("M", "N", "K")


def prime_factors(n: int) -> list[int]:
    """Prime factors of *n* with multiplicity, ascending (``12 -> [2, 2, 3]``; ``1 -> []``)."""
    if n < 1:
        raise ValueError(f"prime_factors: expected n >= 1, got {n}")
    out, p = [], 2
    while p * p <= n:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    if n > 1:
        out.append(n)
    return out


def divisors(n: int) -> list[int]:
    """All positive divisors of *n*, ascending."""
    if n < 1:
        raise ValueError(f"divisors: expected n >= 1, got {n}")
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


@functools.lru_cache(maxsize=4096)
def inter_node_grids(lens: tuple[int, ...], nodes: int) -> tuple[tuple[int, ...], ...]:
    """Every inter-node grid ``g`` for the processor grid *lens* and *nodes* nodes.

    ``prod g == nodes`` and ``g[i] | lens[i]``, found as [CTF] ``get_inter_node_grids`` does: a
    tree search that places the prime factors of *nodes*, one at a time, on a dimension whose
    length it still divides, with duplicates removed.

    Parameters
    ----------
    lens : tuple of int
        Processor grid (each >= 1).
    nodes : int
        Number of nodes N (>= 1).

    Returns
    -------
    tuple of tuple of int
        Sorted ascending; empty when *nodes* does not divide ``prod lens``.
    """
    lens = tuple(int(x) for x in lens)
    if nodes < 1 or any(x < 1 for x in lens):
        raise ValueError(f"inter_node_grids: expected lens >= 1 and nodes >= 1, got {lens}, {nodes}")
    factors = prime_factors(nodes)
    level = {tuple(1 for _ in lens)}
    for p in factors:
        nxt = set()
        for g in level:
            for i, length in enumerate(lens):
                if length % (g[i] * p) == 0:
                    nxt.add(g[:i] + (g[i] * p,) + g[i + 1:])
        level = nxt
        if not level:
            break
    return tuple(sorted(level))


def brute_force_inter_node_grids(lens: Sequence[int], nodes: int) -> list[tuple[int, ...]]:
    """The same set as :func:`inter_node_grids` by brute force over all divisor tuples (test oracle)."""
    return sorted(g for g in itertools.product(*(divisors(int(x)) for x in lens)) if math.prod(g) == nodes)


@functools.lru_cache(maxsize=1024)
def all_grids(ranks: int, dims: tuple[int, ...] = (2, 3)) -> tuple[tuple[int, ...], ...]:
    """Every 2-D ``(P_M, P_N)`` and 3-D ``(P_M, P_N, P_K)`` grid of *ranks* ranks (3-D ones with
    ``P_K >= 2``, so that no grid is listed twice), ascending."""
    out = []
    ds = divisors(ranks)
    if 2 in dims:
        out += [(a, ranks // a) for a in ds]
    if 3 in dims:
        for a in ds:
            for b in divisors(ranks // a):
                c = ranks // (a * b)
                if c >= 2:
                    out.append((a, b, c))
    return tuple(sorted(out))


def near_square_2d(ranks: int) -> tuple[int, int]:
    """The ScaLAPACK-like near-square 2-D grid ``(P_M, P_N)``: ``P_M`` the largest divisor of
    *ranks* that is <= sqrt(ranks), ``P_N = ranks / P_M``."""
    pm = max(d for d in divisors(ranks) if d * d <= ranks)
    return (pm, ranks // pm)


def panel_steps(lens: Sequence[int]) -> int:
    """SUMMA steps ``S = lcm(P_M, P_N)``: each of the P_K contracted chunks is cut into S panels so
    that the A panels (owned along N) and the B panels (owned along M) line up [vdGeijn97 §3]."""
    return math.lcm(int(lens[0]), int(lens[1]))


def lda(lens: Sequence[int]) -> tuple[int, ...]:
    """Strides of the linear grid index, dimension 0 fastest: ``lda_d = prod_{j<d} lens_j``."""
    out, s = [], 1
    for x in lens:
        out.append(s)
        s *= int(x)
    return tuple(out)


def _unravel(idx: np.ndarray, shape: Sequence[int]) -> list[np.ndarray]:
    out = []
    for length in shape:
        out.append(idx % length)
        idx = idx // length
    return out


def _ravel(coords: Sequence[np.ndarray], shape: Sequence[int]) -> np.ndarray:
    idx = np.zeros_like(coords[0])
    for c, s in zip(coords, lda(shape)):
        idx = idx + c * s
    return idx


def position_of_rank(ranks: np.ndarray | int, lens: Sequence[int], g: Sequence[int] | None, ppn: int):
    """Grid position (linear index) that physical rank(s) *ranks* take.

    ``g=None`` is the default placement (the identity). Otherwise the node-aware renumbering of
    [CTF]: ``new_rank = sum_d (node_coord_d h_d + intra_coord_d) lda_d`` with ``h = lens / g``.
    """
    r = np.asarray(ranks)
    if g is None:
        return r
    h = [int(a) // int(b) for a, b in zip(lens, g)]
    node_c = _unravel(r // ppn, g)
    intra_c = _unravel(r % ppn, h)
    x = [nc * hh + ic for nc, hh, ic in zip(node_c, h, intra_c)]
    return _ravel(x, lens)


def rank_of_position(pos: np.ndarray | int, lens: Sequence[int], g: Sequence[int] | None, ppn: int):
    """Inverse of :func:`position_of_rank`: the physical rank holding grid position(s) *pos*."""
    p = np.asarray(pos)
    if g is None:
        return p
    h = [int(a) // int(b) for a, b in zip(lens, g)]
    x = _unravel(p, lens)
    node = _ravel([xx // hh for xx, hh in zip(x, h)], g)
    intra = _ravel([xx % hh for xx, hh in zip(x, h)], h)
    return node * ppn + intra


def node_of_position(lens: Sequence[int], g: Sequence[int] | None, ppn: int) -> np.ndarray:
    """Node of every grid position, as an array of shape ``lens[::-1]`` (C order, so that axis
    ``-1 - d`` is grid dimension d)."""
    total = math.prod(int(x) for x in lens)
    pos = np.arange(total, dtype=np.int64)
    return (rank_of_position(pos, lens, g, ppn) // ppn).reshape(tuple(int(x) for x in lens[::-1]))


@dataclass(frozen=True)
class CommStats:
    """How the communicators along one grid dimension sit on the nodes.

    Attributes
    ----------
    length : int
        Ranks per communicator (``lens[d]``).
    nodes_mean : float
        Mean number of distinct nodes a communicator touches (``G_d``).
    nodes_max : int
        The most nodes one communicator touches.
    members_per_node : float
        Mean members of one communicator on one of its nodes (``length / nodes_mean``).
    comms_per_node : float
        Mean number of these communicators with members on one node (``ppn G_d / length``): the
        concurrent inter-node streams through that node's NICs in one step.
    """

    length: int
    nodes_mean: float
    nodes_max: int
    members_per_node: float
    comms_per_node: float


@functools.lru_cache(maxsize=4096)
def comm_stats(lens: tuple[int, ...], g: tuple[int, ...] | None, ppn: int) -> tuple[CommStats, ...]:
    """:class:`CommStats` of every grid dimension for a placement (exact, by enumeration).

    Parameters
    ----------
    lens : tuple of int
        Processor grid.
    g : tuple of int or None
        Inter-node grid of a node-aware placement, or None for the default one.
    ppn : int
        Ranks per node (must divide ``prod lens``).

    Returns
    -------
    tuple of CommStats, one per grid dimension.
    """
    total = math.prod(lens)
    if ppn < 1 or total % ppn:
        raise ValueError(f"comm_stats: ranks per node {ppn} must divide the {total} ranks")
    nodes = node_of_position(lens, g, ppn)
    out = []
    nd = len(lens)
    for d in range(nd):
        axis = nd - 1 - d
        rows = np.moveaxis(nodes, axis, -1).reshape(-1, lens[d])
        srt = np.sort(rows, axis=1)
        distinct = 1 + np.count_nonzero(np.diff(srt, axis=1), axis=1)
        mean = float(distinct.mean())
        out.append(CommStats(lens[d], mean, int(distinct.max()), lens[d] / mean, ppn * mean / lens[d]))
    return tuple(out)


def _weights(sizes: Sequence[float], nd: int) -> tuple[float, ...]:
    """Bytes moved along each grid dimension per unit of 'remote nodes': M -> |B|, N -> |A|, K -> |C|."""
    a, b, c = sizes
    return (b, a, c)[:nd]


def volume_inter(sizes: Sequence[float], lens: Sequence[int], g: tuple[int, ...] | None, ppn: int) -> float:
    """Inter-node bytes of the whole contraction (all ranks) for a placement:
    ``|B| (G_M - 1) + |A| (G_N - 1) + |C| (G_K - 1)`` (module docstring).

    Parameters
    ----------
    sizes : (float, float, float)
        ``|A|, |B|, |C|`` in bytes.
    lens, g, ppn
        As for :func:`comm_stats`.
    """
    st = comm_stats(tuple(int(x) for x in lens), None if g is None else tuple(int(x) for x in g), int(ppn))
    w = _weights(sizes, len(lens))
    return float(sum(wd * (s.nodes_mean - 1.0) for wd, s in zip(w, st)))


def volume_total(sizes: Sequence[float], lens: Sequence[int]) -> float:
    """Bytes moved by all broadcasts and reductions (inter + intra): ``|B| (P_M - 1) + |A| (P_N - 1)
    + |C| (P_K - 1)``; independent of the placement."""
    w = _weights(sizes, len(lens))
    return float(sum(wd * (int(n) - 1) for wd, n in zip(w, lens)))


def node_aware_volume(sizes: Sequence[float], g: Sequence[int]) -> float:
    """Inter-node bytes of the node-aware placement with inter-node grid *g*, in closed form:
    ``sum_d w_d (g_d - 1)`` (a communicator along d touches exactly g_d nodes) [CTF]."""
    w = _weights(sizes, len(g))
    return float(sum(wd * (int(n) - 1) for wd, n in zip(w, g)))


def best_inter_node_grid(sizes: Sequence[float], lens: tuple[int, ...], ppn: int
                         ) -> tuple[tuple[int, ...] | None, float, float, list[tuple[tuple[int, ...], float]]]:
    """The node-aware choice [CTF]: the inter-node grid with the smallest inter-node volume, kept
    only when it is strictly below the default placement's volume.

    Returns
    -------
    (g, v_chosen, v_default, table)
        ``g`` is None when no inter-node grid beats the default (then ``v_chosen == v_default``);
        ``table`` lists every candidate ``(g, V_inter(g))`` in enumeration order. Ties between
        candidates go to the first in ascending order.
    """
    total = math.prod(lens)
    nodes = total // ppn
    v_def = volume_inter(sizes, lens, None, ppn)
    table = [(g, node_aware_volume(sizes, g)) for g in inter_node_grids(tuple(lens), nodes)]
    if not table:
        return None, v_def, v_def, table
    g_best, v_best = min(table, key=lambda t: t[1])
    if v_best < v_def:
        return g_best, v_best, v_def, table
    return None, v_def, v_def, table


def parse_grid(text: str, ranks: int, technique: str = "node-aware-grids") -> tuple[int, ...] | None:
    """``"auto"`` -> None; ``"16x16"`` / ``"32x32x16"`` -> the tuple, checked against *ranks*.

    Raises
    ------
    suite.errors.ParameterError
        Not 2 or 3 positive integers joined by ``x``, or their product is not *ranks*.
    """
    from suite.api import ParameterError

    t = str(text).strip().lower()
    if t == "auto":
        return None
    try:
        lens = tuple(int(p) for p in t.split("x"))
    except ValueError:
        lens = ()
    if len(lens) not in (2, 3) or any(x < 1 for x in lens):
        raise ParameterError(f"{technique}: parameter 'grid': expected 'auto' or 2-3 positive integers joined "
                             f"by 'x' (e.g. '16x16', '32x32x16'), got {text!r}")
    if math.prod(lens) != ranks:
        raise ParameterError(f"{technique}: parameter 'grid': expected a grid of ranks ({ranks}) ranks, got "
                             f"{text!r} ({math.prod(lens)} ranks)")
    return lens
