"""SuperNeurons' memory policies as a step-level simulation over a layer table.

The network is executed as 2N steps: forward of layers 0..N-1 in table order, then backward of
N-1..0. Tensors are the forward outputs ``F_i`` (``activation_bytes x batch``), the gradients
``G_i`` w.r.t. those outputs, the model input, and the parameters with their gradients (always
resident). Each step reads and writes tensors; a policy decides when a tensor becomes resident
and when it leaves:

==============================  ===========================================================
policy                          rule (Wang et al., PPoPP'18, section)
==============================  ===========================================================
``baseline``                    every tensor kept until the end of backward: peak
                                ``sum l^f + sum l^b`` (§3.2, the Caffe/Torch behaviour)
``liveness``                    each tensor freed after its last use (§3.2)
``liveness+offload``            + Unified Tensor Pool: CONV outputs offloaded to host memory
                                after their last forward use, prefetched at the backward of the
                                CONV layer before their first backward use (§3.3.1); with the
                                Tensor Cache (default) tensors are offloaded only under memory
                                pressure, least recently used first (§3.3.2, Alg. 2)
``liveness+offload+recompute``  + cost-aware recomputation: outputs of cheap layers (all but
                                CONV, FC and tensors crossing a segment) are dropped after
                                forward and recomputed per segment, speed-centric if
                                ``sum_seg l^f + l^b_seg <= l_peak`` else memory-centric (§3.4)
``recompute-only``              checkpoint every CONV output on the device (no offload), drop
                                the rest, recompute every segment speed-centric (the common
                                checkpointing baseline, MXNet's mirror strategy per §3.4)
==============================  ===========================================================

What a backward step reads: its output-gradient ``G_i``; its inputs' ``F`` for layers whose
gradient needs the input (conv, fc, deconv, norm, lrn, pool); its own ``F_i`` for layers whose
gradient is a function of the output (act, pool, lrn, softmax, dropout's mask). It writes the
input gradients ``G_j``. Simplifications (stated in docs/techniques/superneurons.md): in-place
operations are not modelled; workspaces are the layer table's hints; a tensor leaves device
memory the step its offload starts (pinned host copies are asynchronous).

Times: per-layer compute by roofline (:func:`suite.perf.layer_times`), transfers over the
device's host link (:func:`suite.perf.transfer_time`), one copy engine per direction; a read of
a tensor whose prefetch has not completed stalls compute (the stall time).
"""

from __future__ import annotations

import bisect
import functools
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from suite.api import (LayerTable, ParameterError, Result, Scenario, Skip, collector_paused, layer_times,
                       transfer_time)
from suite_superneurons.constants import FIXED_UNITS

__all__ = ["POLICIES", "MemoryTrace", "simulate", "layer_memory", "max_trainable", "max_batch", "NEEDS_INPUT",
           "NEEDS_OUTPUT", "evaluate"]

POLICIES = ("baseline", "liveness", "liveness+offload", "liveness+offload+recompute", "recompute-only")
NEEDS_INPUT = frozenset({"conv", "fc", "deconv", "norm", "lrn", "pool", "attention", "embedding"})
NEEDS_OUTPUT = frozenset({"act", "pool", "lrn", "softmax", "dropout"})
INPLACE_KINDS = frozenset({"act", "dropout"})
CHECKPOINT_KINDS = frozenset({"conv", "deconv", "fc"})
OFFLOAD_KINDS = frozenset({"conv", "deconv"})
INPUT = "input"


@dataclass
class MemoryTrace:
    """Outcome of one policy on one network (bytes, FLOPs, seconds)."""

    policy: str
    batch: int
    peak: float  # bytes of activations/gradients at the worst step (params excluded)
    params_bytes: float  # weights + weight gradients, always resident
    peak_step: int
    per_step: list[float]
    bytes_offloaded: float = 0.0
    bytes_prefetched: float = 0.0
    recompute_flops: float = 0.0
    recompute_time: float = 0.0
    compute_time: float = 0.0
    stall_time: float = 0.0
    l_peak: float = 0.0  # max_i l_i, the largest single layer's need (paper's lower bound)
    segments: dict[str, int] = field(default_factory=dict)  # speed / memory -centric counts
    violations: list[str] = field(default_factory=list)  # reads of non-resident tensors

    @property
    def total_peak(self) -> float:
        return self.peak + self.params_bytes

    @property
    def iteration_time(self) -> float:
        return self.compute_time + self.recompute_time + self.stall_time


@dataclass
class _Graph:
    names: list[str]
    kinds: list[str]
    out: list[str]  # tensor holding layer i's output (an in-place layer aliases its input's)
    size: dict[str, float]  # tensor -> bytes ("input", F tensors by name, G tensors "G:name")
    fwd_reads: dict[str, list[int]]  # F tensor -> forward steps reading it
    bwd_reads: dict[str, list[int]]  # F tensor -> backward steps reading it
    g_read: dict[str, int]  # G tensor -> last step reading it
    reads: list[list[str]]  # step -> tensors read
    writes: list[list[str]]  # step -> tensors created
    fwd_flops: list[float]
    n: int


def _graph(table: LayerTable, batch: int, inplace: bool = True) -> _Graph:
    layers = table.layers
    n = len(layers)
    names = [l.name for l in layers]
    size, out, inputs = _tensors(table, batch, inplace)
    reads: list[list[str]] = [[] for _ in range(2 * n)]
    writes: list[list[str]] = [[] for _ in range(2 * n)]
    fwd_reads: dict[str, list[int]] = {}
    for i, l in enumerate(layers):
        reads[i] += inputs[i]
        if out[i] == l.name:
            writes[i].append(l.name)
        for x in inputs[i]:
            fwd_reads.setdefault(x, []).append(i)
    bwd_reads, g_read = _backward_accesses(layers, out, inputs, reads, writes)
    for i in range(n):  # G of a tensor is last read by the backward of its producer
        if out[i] == names[i]:
            g_read["G:" + out[i]] = 2 * n - 1 - i
    return _Graph(names, [l.kind for l in layers], out, size, fwd_reads, bwd_reads, g_read,
                  reads, writes, [l.fwd_flops * batch for l in layers], n)


#: the last few graphs built, with their layer needs, by (table, batch, inplace): one network is
#: simulated under several policies (a ResNet-7502 iteration trace per policy, the max-depth
#: searches' probes of the same depths), and its graph does not depend on the policy. An entry
#: holds its table, so the table's id is not reused while the entry lives.
_GRAPHS: dict[tuple[int, int, bool], tuple[LayerTable, _Graph, list[float]]] = {}
_GRAPHS_KEPT = 8


def _shared_graph(table: LayerTable, batch: int, inplace: bool) -> tuple[_Graph, list[float]]:
    """``(_graph(table, batch, inplace), layer_memory(...))``, built once per entry of
    :data:`_GRAPHS`; callers must not change either (:func:`_private_reads` before a change)."""
    key = (id(table), int(batch), bool(inplace))
    hit = _GRAPHS.get(key)
    if hit is None or hit[0] is not table:
        g = _graph(table, batch, inplace)
        hit = (table, g, layer_memory(table, batch, inplace, graph=g))
        while len(_GRAPHS) >= _GRAPHS_KEPT:
            del _GRAPHS[next(iter(_GRAPHS))]
        _GRAPHS[key] = hit
    return hit[1], hit[2]


def _private_reads(g: _Graph) -> _Graph:
    """*g* with its own copies of the two fields :func:`_keep_checkpoints_alive` appends to (the
    rest is shared, read only)."""
    return replace(g, reads=[list(r) for r in g.reads], bwd_reads={k: list(v) for k, v in g.bwd_reads.items()})


def _tensors(table: LayerTable, batch: int, inplace: bool) -> tuple[dict[str, float], list[str], list[list[str]]]:
    """Tensor sizes (bytes; ``G:x`` for x's gradient), each layer's output tensor (an alias of its
    input for an in-place layer) and each layer's input tensors.

    In-place layers (as in Caffe and SuperNeurons): an activation or dropout that is the only
    consumer of its input writes into the input's buffer; its output is an alias."""
    layers = table.layers
    names = [l.name for l in layers]
    index = {nm: i for i, nm in enumerate(names)}
    size: dict[str, float] = {INPUT: float(batch * table.dtype_bytes * _prod(table.input_shape))}
    consumers: dict[str, int] = {}
    raw: list[list[str]] = []
    for i, l in enumerate(layers):
        ins = list(l.attrs.get("inputs") or ([names[i - 1]] if i else [INPUT]))
        for x in ins:
            if x != INPUT and x not in index:
                raise ParameterError(f"workload {table.name!r}: layer {l.name!r} reads unknown tensor {x!r}")
            consumers[x] = consumers.get(x, 0) + 1
        raw.append(ins)
    out: list[str] = []
    alias: dict[str, str] = {}
    for i, l in enumerate(layers):
        src = raw[i][0]
        if (inplace and l.kind in INPLACE_KINDS and len(raw[i]) == 1 and src != INPUT
                and consumers.get(src, 0) == 1):
            alias[l.name] = alias.get(src, src)
        else:
            size[l.name] = float(l.activation_bytes * batch)
            size["G:" + l.name] = float(l.activation_bytes * batch)
        out.append(alias.get(l.name, l.name))
    return size, out, [[alias.get(x, x) for x in ins] for ins in raw]


def _backward_accesses(layers, out: list[str], inputs: list[list[str]], reads: list[list[str]],
                       writes: list[list[str]]) -> tuple[dict[str, list[int]], dict[str, int]]:
    """Backward steps (step ``2n - 1 - i`` for layer i): each reads its output's gradient and,
    by kind, its inputs or its output, and writes its inputs' gradients (the loss gradient
    appears at the first backward step). Fills ``reads``/``writes``; returns the backward reads
    per tensor and the step that last reads each gradient."""
    n = len(layers)
    bwd_reads: dict[str, list[int]] = {}
    g_read: dict[str, int] = {}
    g_written: set[str] = set()
    for i in range(n - 1, -1, -1):
        t = 2 * n - 1 - i
        l = layers[i]
        g = "G:" + out[i]
        if g not in g_written:
            writes[t].append(g)
            g_written.add(g)
        reads[t].append(g)
        g_read[g] = t
        if l.kind in NEEDS_INPUT:
            for x in inputs[i]:
                reads[t].append(x)
                bwd_reads.setdefault(x, []).append(t)
        if l.kind in NEEDS_OUTPUT:
            reads[t].append(out[i])
            bwd_reads.setdefault(out[i], []).append(t)
        for x in inputs[i]:
            if x == INPUT:
                continue
            gx = "G:" + x
            if gx not in g_written:
                writes[t].append(gx)
                g_written.add(gx)
            g_read.setdefault(gx, 2 * n)  # read later by x's own backward (set below)
    return bwd_reads, g_read


def _prod(shape) -> int:
    out = 1
    for s in shape:
        out *= int(s)
    return out


def layer_memory(table: LayerTable, batch: int, inplace: bool = True, graph: "_Graph | None" = None) -> list[float]:
    """``l_i``: bytes layer i needs at its backward step (every tensor it reads or writes), the
    per-layer need whose maximum ``l_peak`` is the paper's lower bound on the peak (§3.4).
    Convolution workspaces are excluded: SuperNeurons sizes them dynamically from the memory left
    below the peak (§3.5)."""
    g = graph if graph is not None else _graph(table, batch, inplace)
    out = []
    for i in range(g.n):
        t = 2 * g.n - 1 - i
        ts = set(g.reads[t]) | set(g.writes[t])
        out.append(sum(g.size[x] for x in ts))
    return out


def _segments(g: _Graph) -> tuple[list[list[int]], set[str]]:
    """Recomputation segments: maximal runs of consecutive non-checkpoint layers (table order).
    A segment's output tensors are dropped after forward and recomputed in backward, except a
    tensor read by a layer outside its own segment (a skip connection), which is kept as a
    checkpoint like the model input and the CONV/FC outputs."""
    segs: list[list[int]] = []
    cur: list[int] = []
    for i, k in enumerate(g.kinds):
        if k in CHECKPOINT_KINDS:
            if cur:
                segs.append(cur)
                cur = []
        else:
            cur.append(i)
    if cur:
        segs.append(cur)
    seg_of = {i: s for s, layers in enumerate(segs) for i in layers}
    dropped: set[str] = set()
    for s, layers in enumerate(segs):
        for i in layers:
            nm = g.names[i]
            if g.out[i] != nm:  # an in-place layer owns no tensor
                continue
            readers = g.fwd_reads.get(nm, [])
            # droppable when every forward reader is in this segment or is a checkpoint layer
            # (the CONV/FC that consumes the segment's result recomputes-on-demand in backward)
            if g.bwd_reads.get(nm) and all(seg_of.get(r) == s or g.kinds[r] in CHECKPOINT_KINDS for r in readers):
                dropped.add(nm)
    return segs, dropped


@collector_paused()
def _offloadable(g: _Graph, offload_kinds: frozenset[str]) -> set[str]:
    """The tensors the Unified Tensor Pool may offload (§3.3.1): outputs of layers of *offload_kinds*
    written into their own buffer (not in place) and read again by the backward pass."""
    return {g.names[i] for i, k in enumerate(g.kinds)
            if k in offload_kinds and g.out[i] == g.names[i] and g.bwd_reads.get(g.names[i])}


def _trace(policy: str, batch: int, table: LayerTable, pool: "_TensorPool", plan: "_RecomputePlan",
           l_peak: float) -> MemoryTrace:
    """The :class:`MemoryTrace` of a run *pool*: the peak of its per-step live bytes and the step
    it falls on, parameters and gradients (``2 x params x dtype bytes``), bytes offloaded and
    prefetched, and the recomputation's FLOPs and segment counts from *plan*."""
    per_step = pool.per_step
    peak = max(per_step) if per_step else 0.0
    return MemoryTrace(policy=policy, batch=batch, peak=peak, params_bytes=2.0 * table.params * table.dtype_bytes,
                       peak_step=per_step.index(peak) if per_step else 0, per_step=per_step,
                       bytes_offloaded=pool.off_b, bytes_prefetched=pool.pre_b,
                       recompute_flops=plan.flops, l_peak=l_peak, segments=plan.counts,
                       violations=pool.violations)


def simulate(table: LayerTable, batch: int, policy: str, *, capacity: float | None = None,
             tensor_cache: bool = True, device=None, efficiency: float = 0.5, inplace: bool = True,
             offload_kinds: frozenset[str] = OFFLOAD_KINDS, recompute_rule: str = "cost-aware",
             keep_forward: bool = False) -> MemoryTrace:
    """Simulate one training iteration of *table* under *policy*.

    Parameters
    ----------
    table : LayerTable
        With ``attrs["inputs"]`` naming each layer's producers (the zoo records them).
    batch : int
        Samples per iteration.
    policy : str
        One of :data:`POLICIES`.
    capacity : float, optional
        Device memory for activations (bytes): the Tensor Cache evicts only above it. None: no
        pressure (eager offload of every CONV output when ``tensor_cache`` is False).
    tensor_cache : bool
        Offload only under pressure (§3.3.2) instead of every CONV output.
    device : suite.hardware.Device, optional
        For compute, transfer and stall times (host link, peak FLOP/s, memory bandwidth).
    efficiency : float
        Achieved fraction of fp32 peak for compute times.
    inplace : bool
        Activations and dropout write into their input's buffer (Caffe, SuperNeurons).
    offload_kinds : frozenset of str
        Layer kinds whose outputs the Unified Tensor Pool offloads (CONV in the paper, §3.3.1).
    recompute_rule : {"cost-aware", "speed-centric", "memory-centric"}
        How segments are recomputed under ``liveness+offload+recompute`` (§3.4); the other two
        rules exist to compare against.
    keep_forward : bool
        The paper's liveness rule (§3.2: a forward output lives until its own backward step, the
        peak ``sum l^f + l^b_N``) instead of freeing each tensor at its last use: a forward output
        no backward step reads (a CONV output read only by a ReLU that does not run in place) is
        kept to its layer's backward step. Only for comparison (docs page); no claim uses it.

    Returns
    -------
    MemoryTrace

    Raises
    ------
    ParameterError
        Unknown policy, or a layer reading an unknown tensor.
    """
    if policy not in POLICIES:
        raise ParameterError(f"superneurons: policy must be one of {list(POLICIES)}, got {policy!r}")
    g, lmem = _shared_graph(table, batch, inplace)
    l_peak = max(lmem) if lmem else 0.0
    offload = policy in ("liveness+offload", "liveness+offload+recompute")
    recompute = policy in ("liveness+offload+recompute", "recompute-only")
    plan = _RecomputePlan()
    if recompute:
        plan = _recompute_plan(g, policy, recompute_rule, l_peak)
        g = _private_reads(g)
        _keep_checkpoints_alive(g, plan)
    offloadable = _offloadable(g, offload_kinds) if offload and policy != "recompute-only" else set()
    sched = _schedule(g, plan.dropped, offloadable, offload_kinds, eager=offload and not tensor_cache,
                      keep_forward=keep_forward)
    pool = _TensorPool(g, offloadable)
    evict = capacity if offload and tensor_cache else None
    pool.run(g, plan, sched, evict_above=evict, keep_all=policy == "baseline")
    trace = _trace(policy, batch, table, pool, plan, l_peak)
    if device is not None:
        _price_times(trace, table, batch, device, efficiency, plan.layers, pool.transfers)
    return trace


@dataclass
class _RecomputePlan:
    """Which tensors recomputation drops, and where they come back (§3.4)."""

    dropped: set[str] = field(default_factory=set)
    materialize: dict[int, list[str]] = field(default_factory=dict)  # step -> recomputed and kept (speed-centric)
    transient: dict[int, list[str]] = field(default_factory=dict)  # step -> recomputed for that step only
    flops: float = 0.0
    layers: list[int] = field(default_factory=list)  # layers run again (for the recompute time)
    counts: dict[str, int] = field(default_factory=lambda: {"speed-centric": 0, "memory-centric": 0})
    segs: list[list[int]] = field(default_factory=list)


def _recompute_plan(g: _Graph, policy: str, rule: str, l_peak: float) -> _RecomputePlan:
    """Choose, per segment, speed-centric (recompute once, keep) or memory-centric (recompute per
    use) recomputation (§3.4); the cost-aware rule takes speed-centric when the segment's
    forward tensors and its gradient fit in the largest layer's need ``l_peak``."""
    plan = _RecomputePlan()
    plan.segs, plan.dropped = _segments(g)
    for seg in plan.segs:
        seg_dropped = [i for i in seg if g.names[i] in plan.dropped]
        if not seg_dropped:
            continue
        if policy == "recompute-only" or rule == "speed-centric":
            speed = True
        elif rule == "memory-centric":
            speed = False
        else:
            seg_lf = sum(g.size.get(g.names[i], 0.0) for i in seg)
            speed = seg_lf + g.size.get("G:" + g.names[seg[-1]], 0.0) <= l_peak
        if speed:
            plan.counts["speed-centric"] += 1
            t0 = min(min(g.bwd_reads[g.names[i]]) for i in seg_dropped)
            plan.materialize.setdefault(t0, []).extend(g.names[i] for i in seg_dropped)
            _rerun(g, plan, seg, max(seg_dropped))
        else:
            plan.counts["memory-centric"] += 1
            for i in seg_dropped:
                for t in g.bwd_reads[g.names[i]]:
                    plan.transient.setdefault(t, []).append(g.names[i])
                    _rerun(g, plan, seg, i)  # the chain from the segment's checkpoint up to layer i
    return plan


def _rerun(g: _Graph, plan: _RecomputePlan, seg: list[int], upto: int) -> None:
    for j in seg:
        if j <= upto:
            plan.flops += g.fwd_flops[j]
            plan.layers.append(j)


def _keep_checkpoints_alive(g: _Graph, plan: _RecomputePlan) -> None:
    """A recomputation reads its segment's inputs (the checkpoint): they stay alive (or are
    prefetched) until then, so they join the reads of the recomputing step."""
    index = {nm: i for i, nm in enumerate(g.names)}
    seg_inputs: dict[int, set[str]] = {}
    for seg in plan.segs:
        own = {g.names[i] for i in seg} | {g.out[i] for i in seg}
        ext = {x for i in seg for x in g.reads[i] if x not in own}
        for i in seg:
            seg_inputs[i] = ext
    for t, xs in list(plan.materialize.items()) + list(plan.transient.items()):
        for x in xs:
            for e in seg_inputs.get(index[x], ()):
                if e not in g.reads[t]:
                    g.reads[t].append(e)
                    g.bwd_reads.setdefault(e, []).append(t)


@dataclass
class _Schedule:
    """Lifetimes computed once: when each tensor is freed, leaves after forward, is prefetched."""

    last_use: dict[str, int]
    free_at: dict[int, list[str]]
    leave_at: dict[int, list[str]]  # after forward: dropped (recompute) or offloaded (eager)
    prefetch_at: dict[int, list[str]]


def _schedule(g: _Graph, dropped: set[str], offloadable: set[str], offload_kinds: frozenset[str],
              eager: bool, keep_forward: bool = False) -> _Schedule:
    steps, n = 2 * g.n, g.n
    index = {nm: i for i, nm in enumerate(g.names)}

    fwd_reads, bwd_reads, g_read = g.fwd_reads, g.bwd_reads, g.g_read

    def last_use(x: str) -> int:  # the last step reading x (its producer's when none does)
        if x.startswith("G:"):
            return g_read.get(x, steps - 1)
        fr, br = fwd_reads.get(x), bwd_reads.get(x)
        if fr and br:
            return max(max(fr), max(br))
        return max(fr or br) if fr or br else index.get(x, 0)

    def free_step(x: str) -> int:  # keep_forward: a layer's output lives to its own backward step (§3.2)
        t = min(last_use(x), steps - 1)
        return max(t, steps - 1 - index[x]) if keep_forward and x in index else t

    free_at: dict[int, list[str]] = {}
    for x in g.size:
        free_at.setdefault(free_step(x), []).append(x)
    leave_at: dict[int, list[str]] = {}
    for x in dropped:
        leave_at.setdefault(max(g.fwd_reads.get(x, [index[x]])), []).append(x)
    prefetch_at: dict[int, list[str]] = {}
    if eager:
        conv_bsteps = sorted(2 * n - 1 - i for i, k in enumerate(g.kinds) if k in offload_kinds)
        for x in offloadable - dropped:
            leave_at.setdefault(max(g.fwd_reads.get(x, [index[x]])), []).append(x)
            first = min(g.bwd_reads[x])
            k = bisect.bisect_left(conv_bsteps, first)
            prefetch_at.setdefault(conv_bsteps[k - 1] if k else first, []).append(x)
    return _Schedule({x: last_use(x) for x in offloadable}, free_at, leave_at, prefetch_at)


class _TensorPool:
    """The resident set, step by step, with the Tensor Cache's LRU eviction (§3.3.2)."""

    def __init__(self, g: _Graph, offloadable: set[str]) -> None:
        self.size = g.size
        self.resident: dict[str, float] = {INPUT: g.size[INPUT]}
        # the offloadable tensors among the resident ones, in insertion order: what the Tensor
        # Cache scans for eviction candidates, instead of every resident tensor at every step
        self.resident_off: dict[str, None] = {INPUT: None} if INPUT in offloadable else {}
        self.offloadable = offloadable
        self.total = g.size[INPUT]
        self.evicted: set[str] = set()
        self.last_touch: dict[str, int] = {}
        self.per_step: list[float] = []
        self.off_b = self.pre_b = 0.0
        self.violations: list[str] = []
        self.transfers: list[tuple[int, int, float]] = []  # (issue step, read step, bytes), for stalls

    def add(self, x: str) -> None:
        if x not in self.resident:
            self.resident[x] = self.size[x]
            self.total += self.size[x]
            if x in self.offloadable:
                self.resident_off[x] = None

    def drop(self, x: str) -> None:
        if x in self.resident:
            self.total -= self.resident.pop(x)
            self.resident_off.pop(x, None)

    def bring_back(self, x: str, issued: int, read: int) -> None:
        self.add(x)
        self.pre_b += self.size[x]
        self.evicted.discard(x)
        self.transfers.append((issued, read, self.size[x]))

    def run(self, g: _Graph, plan: _RecomputePlan, sched: _Schedule, *, evict_above: float | None,
            keep_all: bool) -> None:
        """Every step: the arrivals (:meth:`_arrive`), the Tensor Cache's evictions above
        *evict_above*, the step's resident total, then (unless *keep_all*) the departures
        (:meth:`_depart`). A step with no prefetch, recompute, eviction or leaving tensor takes
        the same adds and drops inline, in the same order (the float total is the same)."""
        writes, reads, size = g.writes, g.reads, self.size
        resident, resident_off, offloadable = self.resident, self.resident_off, self.offloadable
        evicted, last_touch, per_step = self.evicted, self.last_touch, self.per_step
        special = set(sched.prefetch_at) | set(plan.materialize) | set(plan.transient) | set(sched.leave_at)
        free_at = sched.free_at
        for t in range(2 * g.n):
            if t in special:
                self._arrive(g, plan, sched, t)
            else:
                for x in writes[t]:
                    if x not in resident:
                        resident[x] = size[x]
                        self.total += size[x]
                        if x in offloadable:
                            resident_off[x] = None
                for x in reads[t]:
                    if x not in resident:
                        if x in evicted:  # cache miss: brought back for this read
                            self.bring_back(x, t, t)
                        if x not in resident:
                            self.violations.append(f"step {t}: {x} read but not resident")
                    last_touch[x] = t
            if evict_above is not None and self.total > evict_above:
                self._evict(g, sched, t, evict_above)
            per_step.append(self.total)
            if keep_all:
                continue
            if t in special:
                self._depart(g, plan, sched, t)
            else:
                for x in free_at.get(t, ()):
                    if x in resident:
                        self.total -= resident.pop(x)
                        resident_off.pop(x, None)
                    evicted.discard(x)

    def _arrive(self, g: _Graph, plan: _RecomputePlan, sched: _Schedule, t: int) -> None:
        for x in g.writes[t]:
            self.add(x)
        for x in sched.prefetch_at.get(t, ()):
            if x in self.evicted:
                self.bring_back(x, t, min(g.bwd_reads[x]))
        for x in plan.materialize.get(t, ()):
            self.add(x)
        for x in plan.transient.get(t, ()):
            self.add(x)
        for x in g.reads[t]:
            if x not in self.resident and x in self.evicted:  # cache miss: brought back for this read
                self.bring_back(x, t, t)
            if x not in self.resident:
                self.violations.append(f"step {t}: {x} read but not resident")
            self.last_touch[x] = t

    def _evict(self, g: _Graph, sched: _Schedule, t: int, capacity: float) -> None:
        locked = set(g.reads[t]) | set(g.writes[t])
        cands = sorted((x for x in self.resident_off if x not in locked and sched.last_use[x] > t),
                       key=lambda x: self.last_touch.get(x, -1))
        for x in cands:
            if self.total <= capacity:
                break
            self.drop(x)
            self.evicted.add(x)
            self.off_b += self.size[x]

    def _depart(self, g: _Graph, plan: _RecomputePlan, sched: _Schedule, t: int) -> None:
        for x in plan.transient.get(t, ()):
            self.drop(x)
        for x in sched.free_at.get(t, ()):
            self.drop(x)
            self.evicted.discard(x)
        for x in sched.leave_at.get(t, ()):
            if x in self.resident and t < g.n:
                self.drop(x)
                if x not in plan.dropped:  # eager offload to host (§3.3.1)
                    self.evicted.add(x)
                    self.off_b += self.size[x]


def _price_times(trace: MemoryTrace, table: LayerTable, batch: int, device, efficiency: float,
                 recompute_layers: list[int], transfers: list[tuple[int, int, float]]) -> None:
    """Compute, recompute and stall times. One H2D copy engine: a prefetch issued at the start of
    step s must land before the read at step r; the compute of steps s..r-1 hides it."""
    fwd, bwd = layer_times(list(table.layers), batch, device, "fp32", efficiency, table.dtype_bytes)
    step_time = fwd + bwd[::-1]
    trace.compute_time = sum(step_time)
    trace.recompute_time = sum(fwd[i] for i in recompute_layers)
    bw = device.host_link.bandwidth if device.host_link is not None else None
    if not (bw and transfers):
        return
    start = [0.0]
    for st in step_time:
        start.append(start[-1] + st)
    engine = stall = 0.0
    for s_, r, b in sorted(transfers):
        begin = max(start[s_] + stall, engine)
        done = begin + transfer_time(b, bw)
        engine = done
        ready = start[r] + stall
        if done > ready:
            stall += done - ready
    trace.stall_time = stall


@functools.lru_cache(maxsize=64)
def resnet_table(n3: int) -> LayerTable:
    """The Table 4 family's ResNet with bottleneck units ``(6, 32, n3, 6)``
    (``suite.workloads.architectures.resnet`` with explicit units: at n3 = 6 and 22 its depth,
    152 and 200, is also a He et al. depth whose stage layout is another network), built once per
    process for the max-depth searches. Not frozen: it never leaves this module, and freezing a
    15,000-layer table cost several times its build."""
    from suite.api import resnet

    from suite_superneurons.constants import N1, N2, N4  # FIXED_UNITS = N1 + N2 + N4: one definition

    return resnet(0, units=(N1, N2, int(n3), N4))


def max_trainable(build, capacity: float, policy: str, lo: int, hi: int, **kw) -> int | None:
    """Largest integer x in [lo, hi] whose network ``build(x)`` fits *capacity* under *policy*
    (total peak incl. parameters). None if even lo does not fit.

    ``build(x) -> (LayerTable, batch)``. Feasibility is monotone in x (peaks grow with depth and
    with batch; tests/plugins/test_superneurons.py checks it on the claims' tables), so the answer
    is the x that fits while x + 1 does not (or hi): the same answer a bisection of [lo, hi] or a
    linear scan from lo gives (both tested). The search simulates few networks, all near the
    answer: it probes lo and lo + 1, then jumps to where the secant through the last two fitting
    peaks crosses *capacity* (a ResNet's peak grows nearly linearly in its depth, a network's in
    its batch), at most to 8x the last fitting x (the secant through two small networks can
    overshoot a curved peak by far), until a network does not fit; then it closes the bracket by
    interpolating the peaks (regula falsi), with a midpoint step whenever an interpolation step
    leaves more than half the bracket. The bisection it replaced simulated the largest network
    (hi) first and then about log2(hi - lo) networks of mid size (issue 19: SuperNeurons'
    max-depth searches were 8.7 s of a 14 s ``suite reproduce``); the SuperNeurons max-depth
    search simulates 6 networks (11 with steps doubling under the secant).

    The depth family is built from its units (:func:`resnet_table`), so every n3 is the network
    (6, 32, n3, 6), including n3 = 6 and 22, whose depths 152 and 200 are also He et al. depths.
    """
    memo: dict[int, tuple[bool, float]] = {}

    def probe(x: int) -> tuple[bool, float]:
        hit = memo.get(x)
        if hit is None:
            table, batch = build(x)
            tr = simulate(table, batch, policy, capacity=max(0.0, capacity - 2.0 * table.params * table.dtype_bytes),
                          **kw)
            hit = memo[x] = (tr.total_peak <= capacity and not tr.violations, tr.total_peak)
        return hit

    if not probe(lo)[0]:
        return None
    a, b = lo, None  # a fits; b (once known) does not
    prev = None  # the fitting point before a
    step = 1
    while b is None:
        x = a + step
        if prev is not None:  # jump to where the secant through the last two fitting peaks crosses
            (xp, pp), pa = prev, probe(a)[1]
            if pa > pp:
                guess = int(a + (capacity - pa) * (a - xp) / (pa - pp))
                x = max(a + 1, min(guess + 1, 8 * a))
        x = min(x, hi)
        ok, _p = probe(x)
        if ok:
            if x >= hi:
                return hi
            prev, a = (a, probe(a)[1]), x
            step *= 2
        else:
            b = x
    return _close_bracket(probe, a, b, capacity)


def _close_bracket(probe: Callable[[int], tuple[bool, float]], a: int, b: int, capacity: float) -> int:
    """The largest fitting x of :func:`max_trainable`'s bracket, *a* fitting and *b* not: regula
    falsi on the peaks (bytes) ``probe(x) -> (fits, total peak)`` returns, with a midpoint step
    whenever an interpolation step left more than half the bracket."""
    interpolate = True
    while b - a > 1:
        pa, pb = probe(a)[1], probe(b)[1]
        width = b - a
        if interpolate and pb > pa:
            x = int(a + (capacity - pa) * (b - a) / (pb - pa))
            x = max(a + 1, min(b - 1, x))
        else:
            x = (a + b) // 2
        if probe(x)[0]:
            a = x
        else:
            b = x
        interpolate = (b - a) <= width // 2 or not interpolate
    return a


#: float64 represents every integer below this exactly: byte counts below it add and scale exactly
_EXACT = 2.0**53


def max_batch(table: LayerTable, capacity: float, policy: str, lo: int, hi: int, **kw) -> int | None:
    """Largest batch b in [lo, hi] with which *table* fits *capacity* under *policy* (total peak
    incl. parameters, no read of a non-resident tensor); None if even lo does not fit. The same
    answer as ``max_trainable(lambda b: (table, b), capacity, policy, lo, hi, **kw)``, from one
    simulation instead of one per probe.

    Why one simulation is enough: without the Tensor Cache (``tensor_cache=False``) the schedule
    (which tensor is resident at which step) does not depend on the batch: every tensor is
    ``batch x`` its per-sample bytes, and the only size comparison, the cost-aware recompute rule
    ``sum_seg l^f + l^b_seg <= l_peak`` (§3.4), has the batch on both sides. When every per-sample
    size is an integer and ``hi x`` (all bytes of the network) stays below 2^53, float64 adds and
    scales these byte counts exactly, so ``per_step(b) == b * per_step(1)`` bit for bit, and the
    total peak at batch b is ``b * peak(1) + params_bytes``, the same float the simulation at b
    gives. That model, vectorised over every candidate b in [lo, hi], is nondecreasing (the
    peak is monotone in the batch), and ``numpy.searchsorted`` bisects it for the last b that
    fits. Otherwise (Tensor Cache, fractional sizes, huge batches) it falls back to
    :func:`max_trainable`, which simulates each probe.
    """
    import numpy as np

    per_sample = [float(table.dtype_bytes * _prod(table.input_shape))]
    per_sample += [float(l.activation_bytes) for l in table.layers]
    params_bytes = 2.0 * table.params * table.dtype_bytes
    exact = (not kw.get("tensor_cache", True) and all(x.is_integer() and x >= 0 for x in per_sample)
             and params_bytes.is_integer() and hi * 2.0 * sum(per_sample) + params_bytes < _EXACT)
    if not exact or lo < 1 or hi < lo:
        return max_trainable(lambda b: (table, b), capacity, policy, lo, hi, **kw)
    one = simulate(table, 1, policy, capacity=max(0.0, capacity - params_bytes), **kw)
    if one.violations:  # the schedule is the same at every batch: nothing fits
        return None
    total = np.arange(lo, hi + 1, dtype=np.float64) * one.peak + one.params_bytes  # total peak per batch
    k = int(np.searchsorted(total, capacity, side="right"))  # how many candidates fit
    return lo + k - 1 if k else None


# --------------------------------------------------------------------------- model fidelity


def _depth(n3: int) -> int:
    return 3 * (FIXED_UNITS + n3) + 2


def _resnet_n3(n3: int, batch: int):
    return resnet_table(n3), batch  # the family's network, unfrozen and cached for the search


@collector_paused()  # the max-depth searches build ResNet tables too
def evaluate(s: Scenario) -> Result:
    """Model fidelity: memory trace (``mode = iteration``), deepest trainable ResNet
    (``max-depth``) or largest batch (``max-batch``) on the profile's device memory."""
    dev = s.profile.require_device()
    cap = dev.memory
    mode = s.params["mode"]
    cache = s.params["tensor_cache"]
    eff = s.params["efficiency"]
    res = Result()
    if mode == "max-depth":
        batch = s.params["batch"]
        # feasibility does not depend on the tensor cache (it changes traffic, not the smallest
        # reachable peak), so searches use eager offload, which is much faster to simulate
        n3 = max_trainable(lambda x: _resnet_n3(x, batch), cap, s.variant, 1, s.params["max_units"],
                           tensor_cache=False)
        depth = _depth(n3) if n3 else 0
        res.add("max_depth", depth, "layers", "higher")
        res.add("max_units", (FIXED_UNITS + n3) if n3 else 0, "units", "higher")
        res.artifacts["rule"] = "depth = 3(6 + 32 + n3 + 6) + 2 (SuperNeurons Table 4 caption)"
        return res
    table = s.workload
    if not isinstance(table, LayerTable):
        raise Skip(f"superneurons needs a layer table, got workload {s.workload_name!r}")
    if mode == "max-batch":
        mb = max_batch(table, cap, s.variant, 1, s.params["max_batch"], tensor_cache=False)
        res.add("max_batch", mb or 0, "samples", "higher")
        return res
    batch = s.params["batch"]
    params_bytes = 2.0 * table.params * table.dtype_bytes
    tr = simulate(table, batch, s.variant, capacity=max(0.0, cap - params_bytes), tensor_cache=cache,
                  device=dev, efficiency=eff)
    fits = tr.total_peak <= cap
    res.add("peak_memory", tr.total_peak, "B", "lower")
    res.add("activation_peak", tr.peak, "B", "lower")  # one unit per dimension (bytes in B); MiB at display
    res.add("l_peak", tr.l_peak, "B", "none")
    res.add("fits", 1.0 if fits else 0.0, "1", "higher")
    res.add("bytes_offloaded", tr.bytes_offloaded, "B", "lower")
    res.add("bytes_prefetched", tr.bytes_prefetched, "B", "lower")
    res.add("recompute_flops", tr.recompute_flops, "FLOP", "lower")
    res.add("stall_time", tr.stall_time, "s", "lower")
    res.add("iteration_time", tr.iteration_time, "s", "lower")
    res.add("throughput", batch / tr.iteration_time if tr.iteration_time > 0 else 0.0, "samples/s", "higher")
    res.artifacts["segments"] = tr.segments
    res.artifacts["peak_step"] = tr.peak_step
    res.artifacts["violations"] = tr.violations[:10]
    return res
