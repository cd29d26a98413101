"""Communication of the training model (:mod:`suite.perf.training`): every collective priced by
:func:`suite.perf.network.collective_time`, memoised, on the groups Megatron-LM's rank order
gives (tp innermost, then cp, dp, pp).

Split out of :mod:`suite.perf.training` (which re-exports :class:`CommPricer` and
:func:`tp_collectives`).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from suite.perf.network import Group, collective_time
from suite.perf.training_inputs import ACT_BYTES, Array, Hardware, TransformerShape

__all__ = ["CommPricer", "tp_collectives", "tp_collectives_per_layer", "tp_group", "cp_group", "dp_group", "pp_group"]


class CommPricer:
    """:func:`collective_time` of many (op, bytes, group) at once, each distinct one priced once.

    One pricer may serve many :func:`suite.perf.training.evaluate` calls on the same profile (a
    search); ``calls`` counts the distinct collectives priced.
    """

    def __init__(self, profile: Any) -> None:
        self.profile = profile
        self._memo: dict[tuple[str, float, Group], float] = {}
        self._rows: dict[tuple[str, float, int, int, int], float] = {}
        self.calls = 0

    def one(self, op: str, nbytes: float, group: Group) -> float:
        """Time (s) of one collective *op* of *nbytes* bytes over *group* (0 for one rank or no bytes)."""
        if group.size <= 1 or nbytes <= 0:
            return 0.0
        key = (op, float(nbytes), group)
        t = self._memo.get(key)
        if t is None:
            self.calls += 1
            t = float(collective_time(op, float(nbytes), group, self.profile).time)
            self._memo[key] = t
        return t

    def many(self, op: str, nbytes: npt.ArrayLike, groups: npt.ArrayLike) -> Array:
        """Times (s) for arrays *nbytes* and *groups* (an array of the ``Group`` fields
        ``(ranks_per_node, nodes, concurrent)``, shape ``(..., 3)``), broadcast together."""
        nb = np.asarray(nbytes, dtype=float)
        g = np.asarray(groups, dtype=np.int64)
        shape = np.broadcast_shapes(nb.shape, g.shape[:-1])
        nb = np.broadcast_to(nb, shape).reshape(-1)
        g = np.broadcast_to(g, shape + (3,)).reshape(-1, 3)
        if nb.size == 1:
            return np.full(shape, self.one(op, float(nb[0]), _group(g[0])))
        # one integer key per point (distinct bytes x the three small group fields), sorted once in 1-D
        _ub, ib = np.unique(nb, return_inverse=True)
        key = ib.astype(np.int64)
        for col in range(3):
            key = key * (int(g[:, col].max()) + 1) + g[:, col]
        uk, first, inv = np.unique(key, return_index=True, return_inverse=True)
        vals = np.empty(len(uk))
        rows = self._rows  # the same memo keyed by plain numbers: no Group built to look one up
        for i, (b, (per, nodes, conc)) in enumerate(zip(nb[first].tolist(), g[first].tolist())):
            k = (op, b, per, nodes, conc)
            t = rows.get(k)
            if t is None:
                t = rows[k] = self.one(op, b, _group((per, nodes, conc)))
            vals[i] = t
        return vals[np.asarray(inv).reshape(-1)].reshape(shape)


def _group(row: Any) -> Group:
    """The Group of a ``(ranks per node, nodes, concurrent)`` row (an array row or a tuple)."""
    return Group(ranks_per_node=int(row[0]), nodes=int(row[1]), concurrent=int(row[2]))


def tp_group(tp: Array, gpn: int) -> Array:
    """The TP group's ``(ranks per node, nodes, concurrent)``: packed on a node, across nodes beyond it."""
    per = np.minimum(tp, gpn)
    return np.stack([per, -(-tp // per), np.ones_like(tp)], axis=-1)


def cp_group(tp: Array, cp: Array, gpn: int) -> Array:
    """The CP group: its ranks ``tp`` apart, ``gpn // tp`` of them per node (at least 1)."""
    per = np.minimum(np.clip(gpn // tp, 1, None), cp)
    nodes = -(-cp // per)
    conc = np.where(nodes > 1, np.minimum(tp, gpn), 1)
    return np.stack([per, nodes, conc], axis=-1)


def dp_group(tp: Array, cp: Array, dp: Array, gpn: int) -> Array:
    """The strided DP group (ranks ``tp cp`` apart), sharing each node's NICs with the other groups."""
    inner = tp * cp
    per = np.minimum(np.clip(gpn // inner, 1, None), dp)
    nodes = -(-dp // per)
    conc = np.where(nodes > 1, np.clip(gpn // per, 1, None), 1)
    return np.stack([per, nodes, conc], axis=-1)


def pp_group(tp: Array, cp: Array, dp: Array, gpn: int) -> Array:
    """Two neighbouring stages ``tp cp dp`` ranks apart: one node or two."""
    inner = tp * cp * dp
    cross = inner >= gpn
    return np.stack([np.where(cross, gpn, inner), np.where(cross, 2, 1), np.ones_like(inner)], axis=-1)


def tp_collectives_per_layer(recompute: npt.ArrayLike) -> Array:
    """Megatron's tensor-parallel collectives per layer and micro-batch: two forward and two
    backward (the f / g operators, Shoeybi et al. 2019 §3), two more when the whole forward is
    recomputed (recompute code 2); each an all-reduce, or an all-gather and a reduce-scatter with
    sequence parallelism (Korthikanti et al. 2022 §4.2.2)."""
    return np.asarray(2 * (2 + (np.asarray(recompute) == 2)))


def tp_collectives(m: TransformerShape, hw: Hardware, tp: int, mbs: int, cp: int = 1,
                   pricer: CommPricer | None = None) -> dict[str, float]:
    """One tensor-parallel collective of a layer (s): ``allreduce``, ``allgather`` and
    ``reduce-scatter`` of the micro-batch's activation ``2 b s h / cp`` bytes over the TP group
    (packed on a node; across ``tp / gpn`` nodes beyond it), by :func:`collective_time`."""
    pricer = pricer or CommPricer(hw.profile)
    act = ACT_BYTES * mbs * m.seq / cp * m.hidden
    grp = tp_group(np.asarray(tp), hw.gpn)
    return {op: float(pricer.many(op, act, grp)) for op in ("allreduce", "allgather", "reduce-scatter")}
