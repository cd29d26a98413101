"""DFLOP's cost model: module FLOPs per sample, 3D-parallel plans, the step time of a global batch.

Formulas and sources
--------------------
* Vision encoder, per 384-px tile (authors' code ``data_aware_optimizer.py``, secondary; the
  standard transformer count of Narayanan et al., SC 2021, §5.1 without the causal mask):
  ``F_v = 3 L (8 h^2 S + 4 S^2 h + 4 S h I) + 3 * 2 S (3 P^2) h`` with S = 729 tokens, P = 14 the
  patch (the second term is the patch embedding); x3 = forward + backward.
* Projector (LLaVA's two-layer MLP, h_v -> h_l -> h_l) on the LLM image tokens n:
  ``F_p = 3 * 2 n (h_v h_l + h_l^2)``.
* LLM on a sequence of s tokens (Megatron count with GQA and a gated MLP, plus the vocabulary, as
  the authors count it): ``F_l = 3 L (4 s h^2 + 4 s h h_kv + 4 s^2 h + 6 s h F) + 3 * 2 s h V``,
  ``h_kv = h * kv_heads / heads``.
* All three x 4/3 (full activation recomputation re-runs the forward), as in the authors' code.
* Stage time of a micro-batch (a bin of samples) on ``t`` tensor-parallel GPUs:
  ``flops / (t * eff * peak_bf16)`` (roofline's compute roof, [Williams09]; one efficiency per
  device, :data:`DEFAULT_EFFICIENCY`) plus Megatron's tensor-parallel all-reduces, 6 per layer
  (2 forward, 2 recompute, 2 backward; Narayanan et al. SC 2021 §3.3) of ``tokens * h * 2`` bytes,
  priced by :func:`suite.perf.collective.collective_time` on the intra-node group. The forward is
  1/4 of the stage time, backward + recompute 3/4.
* One pipeline's iteration: the exact 1F1B recurrence with per-micro-batch stage times
  (:func:`suite.perf.pipeline.pipeline_1f1b_schedule`), p2p of the activations between stages
  (and the encoder-to-LLM hand-off) by ``collective_time("p2p")`` at the real placement; the step
  is the slowest data-parallel pipeline plus the gradient all-reduce of the largest stage
  (bf16 gradients, not overlapped), ``collective_time("allreduce")`` over the DP group.
* Memory per GPU (authors' code: peak = 1.2 x (model state + activations)): model state
  16 B/param / t (mixed-precision Adam: fp16 weight + gradient, fp32 master, momentum, variance;
  Rajbhandari et al., ZeRO, SC 2020 §3.1); activations: one checkpoint of ``tokens * h * 2`` B per
  layer per micro-batch in flight (``min(P - s, m)`` on stage s under 1F1B) plus one layer's
  working set ``tokens h (10 + 24 / t) + 5 a sum s_i^2 / t`` B (Korthikanti et al., "Reducing
  Activation Recomputation in Large Transformer Models", MLSys 2023, §4.1, eq. (2): Megatron's TP
  without sequence parallelism, by :func:`suite.perf.training.activation_terms`; the authors' code
  has ``34 / t`` per token, the sequence-parallel figure), or on the vocabulary's stage the output
  layer's ``4 tokens (h + V) / t`` (§4.2.3, :func:`suite.perf.training.output_layer_bytes`).
* Every transformer count (layer and head FLOPs, activation terms, 16 B/param states, the 6 TP
  all-reduces per layer) is the shared model's (:mod:`suite.perf.training`); DFLOP keeps its
  linear-in-features stage time (the scheduler's ILP needs it) and its own idea, the data-aware
  plan and bin schedule.

References
----------
.. [Williams09] S. Williams, A. Waterman, D. Patterson, "Roofline", CACM 52(4), 2009.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field

import numpy as np

from suite.api import Group, Skip, collective_time, partition_layers, pipeline_1f1b_schedule, resolve_scale, training

from suite_dflop import schedule as sched
from suite_dflop.constants import CLAIM_NODES
from suite_dflop.workloads import QWEN, SIGLIP, MixWorkload, ModuleSpec, Samples, generate

__all__ = ["DEFAULT_EFFICIENCY", "RECOMPUTE", "MEM_HEADROOM", "STATE_BYTES", "BF16", "TP_DEGREES",
           "vision_flops", "projector_flops", "llm_flops", "Features", "features", "Stage", "Plan",
           "Hardware", "hardware", "megatron_plan", "uniform_plans", "split_plans", "best_plan", "best_split_plan",
           "encoder_share", "step_time",
           "StepTime", "plan_memory", "nodes_of", "evaluate", "cost_vectors"]

#: Achieved fraction of the bf16 tensor-core peak: Megatron-LM reaches 138-163 TFLOP/s per A100
#: (44-52% of 312) on GPT models of 175B-1T (Narayanan et al., SC 2021, Table 1); we take 0.5,
#: one value for every device that has no ``gemm_bf16`` efficiency curve in its profile. Those rates
#: are end to end (bubble and communication included, which this model adds again), so 0.5 is low for
#: a GEMM roofline; a roofline calibrated on the 1T row through its own bubble gives ~0.66 (docs).
DEFAULT_EFFICIENCY = 0.5
RECOMPUTE = 4.0 / 3.0  #: authors' code: every FLOP count x 4/3 for full recomputation
MEM_HEADROOM = 1.2  #: authors' code: peak memory = 1.2 x (model state + activations)
STATE_BYTES = float(training.state_bytes_per_param(0, 1, 2))  #: mixed-precision Adam, 16 B/param (ZeRO §3.1)
ACT_BYTES = training.ACT_BYTES  #: bf16 activations
BF16 = 2
TP_DEGREES = (1, 2, 4, 8)
#: Megatron TP under full recomputation: 2 fwd + 2 recompute + 2 bwd all-reduces per layer (the shared count)
TP_ALLREDUCES_PER_LAYER = int(training.tp_collectives_per_layer(2))


def vision_flops(tiles, spec: ModuleSpec = SIGLIP):
    """Training FLOPs (fwd + bwd + recompute) of the encoder on *tiles* images (array or int): the
    shared model's layer count (:func:`suite.perf.training.layer_flops`) on ``S`` tokens per image
    plus the patch embedding ``2 S (3 P^2) h``, x3 (forward, backward) x :data:`RECOMPUTE`."""
    S = spec.tokens_per_image
    per = 3 * (spec.layers * float(training.layer_flops(spec.shape, S)) + 2 * S * (3 * spec.patch ** 2) * spec.hidden)
    return RECOMPUTE * per * np.asarray(tiles, dtype=float)


def projector_flops(image_tokens, v: ModuleSpec = SIGLIP, l: ModuleSpec = QWEN):
    """Training FLOPs of the two-layer MLP projector on *image_tokens* LLM tokens."""
    return RECOMPUTE * 3 * 2 * np.asarray(image_tokens, dtype=float) * (v.hidden * l.hidden + l.hidden ** 2)


def _llm_layer_flops(seq, spec: ModuleSpec):
    return RECOMPUTE * 3 * training.layer_flops(spec.shape, np.asarray(seq, dtype=float))


def _vocab_flops(seq, spec: ModuleSpec):
    return RECOMPUTE * 3 * training.head_flops(spec.shape, np.asarray(seq, dtype=float))


def llm_flops(seq, spec: ModuleSpec = QWEN):
    """Training FLOPs of the LLM on sequences of *seq* tokens (layers + vocabulary)."""
    return spec.layers * _llm_layer_flops(seq, spec) + _vocab_flops(seq, spec)


# feature columns of a sample (summed over a bin): FLOPs and the TP-communication token counts
_F_VIS, _F_PROJ, _F_LLM, _F_VOCAB, _F_VTOK, _F_LTOK, _F_SQ = range(7)


@dataclass(frozen=True)
class Features:
    """Per-sample additive quantities, shape (n, 7): vision FLOPs per layer (with the patch
    embedding spread over the layers), projector FLOPs, LLM FLOPs per layer, vocabulary FLOPs,
    encoder tokens, LLM tokens, sum of squared LLM lengths (attention memory)."""

    x: np.ndarray

    def __len__(self) -> int:
        return int(self.x.shape[0])


def features(s: Samples, v: ModuleSpec = SIGLIP, l: ModuleSpec = QWEN) -> Features:
    """The :class:`Features` of samples *s*."""
    seq = s.seq.astype(float)
    x = np.stack([vision_flops(s.tiles, v) / v.layers, projector_flops(s.image_tokens, v, l),
                  _llm_layer_flops(seq, l), _vocab_flops(seq, l),
                  s.tiles.astype(float) * v.tokens_per_image, seq, seq * seq], axis=1)
    return Features(x)


@dataclass(frozen=True)
class Stage:
    """One pipeline stage: ``tp`` GPUs holding ``vis`` encoder layers and ``llm`` LLM layers, the
    projector (``proj``) and / or the vocabulary head (``vocab``)."""

    tp: int
    vis: int = 0
    llm: int = 0
    proj: bool = False
    vocab: bool = False

    @property
    def component(self) -> int:
        """0 for an encoder-only stage, 1 otherwise (the scheduler's two components)."""
        return 0 if self.llm == 0 and not self.vocab else 1


@dataclass(frozen=True)
class Plan:
    """A 3D-parallel plan: ``dp`` pipelines of ``stages``, ``m`` micro-batches each.

    A split plan may give the encoder its own data-parallel degree ``vdp`` (0: the same as
    ``dp``, one encoder replica per LLM pipeline). Then the encoder module is ``vdp`` replicas
    of its stages and the LLM ``dp`` pipelines of its stages; the scheduler fills ``dp x m``
    bins (the authors' ``dp_llm x #micro-batches``), and the encoder replicas serve the LLM
    pipelines as a pool: each LLM pipeline gets ``vdp / dp`` of an encoder replica's
    throughput (see :func:`encoder_share`).
    """

    kind: str  # "uniform" or "split"
    dp: int
    stages: tuple[Stage, ...]
    m: int
    vdp: int = 0

    @property
    def enc_dp(self) -> int:
        """Data-parallel degree of the encoder stages (``vdp``, else ``dp``)."""
        return self.vdp or self.dp

    @property
    def gpus(self) -> int:
        if self.kind != "split":
            return self.dp * sum(st.tp for st in self.stages)
        return (self.enc_dp * sum(st.tp for st in self.stages if st.component == 0)
                + self.dp * sum(st.tp for st in self.stages if st.component == 1))

    @property
    def bins(self) -> int:
        return self.dp * self.m

    def describe(self) -> dict:
        vis = [st for st in self.stages if st.component == 0]
        llm = [st for st in self.stages if st.component == 1]
        if self.kind == "uniform":
            return {"kind": "uniform", "tp": self.stages[0].tp, "pp": len(self.stages), "dp": self.dp,
                    "m": self.m, "gpus": self.gpus}
        return {"kind": "split", "vision": {"tp": vis[0].tp, "pp": len(vis), "dp": self.enc_dp},
                "llm": {"tp": llm[0].tp, "pp": len(llm), "dp": self.dp}, "m": self.m, "gpus": self.gpus}


def encoder_share(plan: Plan) -> float:
    """``rho = dp / vdp``: LLM pipelines per encoder replica (1 for a uniform or shared-dp plan).

    The encoder replicas are pooled (any replica can encode any sample; the hand-off sends the
    features to the LLM pipeline of the sample's bin): an encoder stage's time per micro-batch,
    as one LLM pipeline sees it, is ``rho`` times its time on one replica -- the replica is
    time-shared by ``rho`` pipelines when ``rho > 1``, and a micro-batch's images are split over
    ``1 / rho`` replicas when ``rho < 1`` (then the per-layer all-reduce latency is paid on each
    in parallel, not scaled down). A rate (fluid) model of the pool, exact in throughput; the
    pipeline fill is that of one chain.
    """
    return plan.dp / plan.enc_dp if plan.kind == "split" else 1.0


@dataclass
class Hardware:
    """What the model reads from a profile, with the collective prices it needs (cached)."""

    profile: object
    peak: float
    eff: float
    memory: float
    per_node: int
    gpus: int
    _cache: dict = field(default_factory=dict)

    def _priced(self, key, fn):
        """Two-level memo of collective prices: this object's dict, then the profile's module-level
        memo (:meth:`shared`), so cases on the same profile share prices and a profile override
        never reuses stale ones."""
        if key not in self._cache:
            memo = self.shared()
            gkey = (self.per_node,) + key
            if gkey not in memo:
                memo[gkey] = fn()
            self._cache[key] = memo[gkey]
        return self._cache[key]

    def shared(self) -> dict:
        """The module-level memo of this profile, keyed by the profile itself (immutable, hashed and
        compared on every field the collectives read), found by identity first: hashing a profile
        walks every field, so it is done once per profile object, not per price."""
        memo = self._cache.get("shared")
        if memo is None:
            hit = _BY_ID.get(id(self.profile))
            if hit is None or hit[0] is not self.profile:
                if len(_PRICES) > 64:
                    _PRICES.clear()
                    _BY_ID.clear()
                # an equal profile (a scenario's frozen copy) shares the memo: one hash per object
                hit = _BY_ID[id(self.profile)] = (self.profile, _PRICES.setdefault(self.profile, {}))
            memo = self._cache["shared"] = hit[1]
        return memo

    def allreduce_fit(self, tp: int) -> tuple[float, float]:
        """``(a, b)`` with ``collective_time("allreduce", n, tp GPUs on one node) ~= a + b n`` from
        two prices (1 MiB and 64 MiB); exact for the ring on a switch, the intra-node case."""
        def fit():
            if tp == 1:
                return (0.0, 0.0)
            g = Group(ranks_per_node=tp, nodes=1)
            n1, n2 = 2.0 ** 20, 2.0 ** 26
            t1 = collective_time("allreduce", n1, g, self.profile).time
            t2 = collective_time("allreduce", n2, g, self.profile).time
            b = (t2 - t1) / (n2 - n1)
            return (max(t1 - b * n1, 0.0), b)
        return self._priced(("tp", tp), fit)

    def p2p(self, nbytes: float, cross_node: bool) -> float:
        def price():
            g = Group(ranks_per_node=1, nodes=2) if cross_node else Group(ranks_per_node=2, nodes=1)
            return collective_time("p2p", nbytes, g, self.profile).time
        return self._priced(("p2p", round(nbytes), cross_node), price)

    def dp_allreduce(self, nbytes: float, dp: int, stride: int) -> float:
        """Gradient all-reduce over *dp* replicas placed *stride* GPUs apart."""
        if dp <= 1:
            return 0.0

        def price():
            rpn = max(1, min(dp, self.per_node // max(stride, 1)))
            nodes = -(-dp // rpn)
            conc = max(1, min(stride, self.per_node) // 1) if nodes > 1 else 1
            conc = max(1, min(conc, self.per_node // rpn))
            ranks = dp if dp != rpn * nodes else None
            g = Group(ranks_per_node=rpn, nodes=nodes, ranks=ranks, concurrent=conc)
            return collective_time("allreduce", nbytes, g, self.profile).time
        return self._priced(("dp", round(nbytes), dp, stride), price)


_PRICES: dict = {}  #: profile -> memo of its collective prices and plan spaces (equal profiles share it)
_BY_ID: dict = {}  #: id(profile) -> (profile, its memo): the lookup without hashing the profile again


def hardware(profile, gpus: int, efficiency: float | None = None) -> Hardware:
    """Read device peak (bf16; fp16, then fp32, when the profile has no bf16 figure), memory and
    the node size from *profile*.

    Raises
    ------
    ValueError
        The profile holds fewer than *gpus* devices, or its device has no bf16 / fp16 / fp32 peak.
    """
    dev = profile.require_device()
    try:
        _dtype, peak = dev.first_peak("bf16", "fp16", "fp32")
    except Exception:  # noqa: BLE001 - ProfileError: one line naming the technique
        raise ValueError(f"dflop: profile {profile.name!r}: device.peak_flops needs bf16 (or fp16 / fp32), "
                         f"got {sorted(dev.peak_flops)}") from None
    if efficiency is None:
        curve = dev.efficiency_at("gemm_bf16", 1e12) if getattr(dev, "efficiency", None) else None
        efficiency = curve if curve is not None else DEFAULT_EFFICIENCY
    have = profile.num_devices
    if gpus > have:
        raise ValueError(f"dflop: parameter 'nodes': expected <= {profile.num_nodes} (nodes of profile "
                         f"{profile.name!r}), got {gpus // max(1, profile.devices_per_node)}")
    return Hardware(profile, peak, float(efficiency), float(dev.memory), int(profile.devices_per_node), gpus)


# --------------------------------------------------------------------------- stage costs


def _coef(plan: Plan, hw: Hardware, v: ModuleSpec = SIGLIP, l: ModuleSpec = QWEN):
    """(P, 7) coefficients and (P,) constants: stage time of a bin = coef @ summed features + const."""
    P = len(plan.stages)
    C = np.zeros((P, 7))
    const = np.zeros(P)
    rho = encoder_share(plan)
    for s, st in enumerate(plan.stages):
        r = 1.0 / (st.tp * hw.eff * hw.peak)
        a, b = hw.allreduce_fit(st.tp)
        C[s, _F_VIS] = st.vis * r
        C[s, _F_PROJ] = r if st.proj else 0.0
        C[s, _F_LLM] = st.llm * r
        C[s, _F_VOCAB] = r if st.vocab else 0.0
        C[s, _F_VTOK] = st.vis * TP_ALLREDUCES_PER_LAYER * b * v.hidden * BF16
        C[s, _F_LTOK] = st.llm * TP_ALLREDUCES_PER_LAYER * b * l.hidden * BF16
        const[s] = (st.vis + st.llm) * TP_ALLREDUCES_PER_LAYER * a
        if plan.kind == "split" and st.component == 0 and rho != 1.0:  # pooled encoder replicas
            C[s] *= rho
            const[s] *= max(rho, 1.0)
    return C, const


def cost_vectors(plan: Plan, feats: Features, hw: Hardware) -> np.ndarray:
    """The scheduler's costs (2, n): each sample's time on the slowest encoder stage and on the
    slowest LLM stage of *plan* (s); a uniform plan's mixed stages count as LLM stages."""
    C, _ = _coef(plan, hw)
    T = C @ feats.x.T  # (P, n)
    comp = np.array([st.component for st in plan.stages])
    out = np.zeros((2, len(feats)))
    for c in (0, 1):
        if np.any(comp == c):
            out[c] = T[comp == c].max(axis=0)
    return out


@functools.lru_cache(maxsize=4096)
def _stage_params(st: Stage, v: ModuleSpec = SIGLIP, l: ModuleSpec = QWEN) -> float:
    pv = (v.params - 2 * v.hidden) / v.layers
    pl = (l.params - 2 * l.vocab * l.hidden) / l.layers
    out = st.vis * pv + st.llm * pl
    if st.proj:
        out += v.hidden * l.hidden + l.hidden ** 2
    if st.vocab:
        out += 2 * l.vocab * l.hidden
    return out


def plan_memory(plan: Plan, bin_feats: np.ndarray, v: ModuleSpec = SIGLIP, l: ModuleSpec = QWEN) -> np.ndarray:
    """Peak bytes per GPU of each stage (P,) for micro-batches with summed features *bin_feats*
    (shape (7,), the heaviest expected bin), by the module-doc formula (the shared model's counts)."""
    P = len(plan.stages)
    out = np.zeros(P)
    vt, lt, sq = bin_feats[_F_VTOK], bin_feats[_F_LTOK], bin_feats[_F_SQ]
    rho = encoder_share(plan)  # an encoder replica holds rho bins' checkpoints, min(rho, 1) of one bin at work
    for s, st in enumerate(plan.stages):
        state = STATE_BYTES * _stage_params(st, v, l) / st.tp
        inflight = min(P - s, plan.m)
        ckpt = ACT_BYTES * (st.vis * vt * v.hidden * rho + st.llm * lt * l.hidden) * inflight
        work = 0.0
        if st.vis:
            work = max(work, _working_set(v, st.tp, vt, vt * v.tokens_per_image) * min(rho, 1.0))
        if st.llm:
            work = max(work, _working_set(l, st.tp, lt, sq))
        if st.vocab:
            work = max(work, float(training.output_layer_bytes(l.shape, lt, st.tp)))
        out[s] = MEM_HEADROOM * (state + ckpt + work)
    return out


def _working_set(spec: ModuleSpec, tp: int, tokens: float, sq: float) -> float:
    """One layer's activations rebuilt by full recomputation, on *tokens* tokens whose squared
    sequence lengths sum to *sq* (Korthikanti et al. §4 by :func:`suite.perf.training.activation_terms`,
    Megatron's TP without sequence parallelism)."""
    per_token, per_score = training.activation_terms(spec.shape, tp, False)
    return float(tokens * per_token + spec.heads * sq * per_score)


# --------------------------------------------------------------------------- plans


def _uniform(tp: int, pp: int, dp: int, m: int, counts) -> Plan:
    stages, at = [], 0
    nv = SIGLIP.layers
    for s in range(pp):
        lo, hi = at, at + counts[s]
        vis = max(0, min(hi, nv) - lo)
        llm = max(0, hi - max(lo, nv))
        stages.append(Stage(tp, vis=vis, llm=llm, proj=lo < nv <= hi, vocab=(s == pp - 1)))
        at = hi
    return Plan("uniform", dp, tuple(stages), m)


def _equal_counts(total: int, pp: int) -> list[int]:
    q, r = divmod(total, pp)
    return [q + (1 if s < r else 0) for s in range(pp)]


def megatron_plan(hw: Hardware, m: int, mean_sample: np.ndarray, batch: int) -> Plan | None:
    """Megatron-LM's recipe (Narayanan et al. SC 2021 §3.3 takeaways): tensor parallelism over
    the node's GPUs, the smallest pipeline depth whose memory fits, data parallelism on the rest;
    layers split in equal counts (vision layers counted like LLM layers), data-blind."""
    tp = min(hw.per_node, 8)
    total = SIGLIP.layers + QWEN.layers
    for pp in range(1, total + 1):
        dp = hw.gpus // (tp * pp)
        if dp < 1:
            return None
        plan = _uniform(tp, pp, dp, m, _equal_counts(total, pp))
        sched.check_bins(batch, plan.bins, plan.dp, plan.m)
        if plan_memory(plan, mean_sample * (batch / plan.bins) * 1.5).max() <= hw.memory:
            return plan
    return None


def _layer_costs(mean_sample: np.ndarray, hw: Hardware) -> list[float]:
    v = mean_sample[_F_VIS]
    l = mean_sample[_F_LLM]
    costs = [v] * SIGLIP.layers + [l] * QWEN.layers
    costs[SIGLIP.layers - 1] += mean_sample[_F_PROJ]
    costs[-1] += mean_sample[_F_VOCAB]
    return costs


def uniform_plans(hw: Hardware, m: int, mean_sample: np.ndarray, max_pp: int = 16):
    """Every uniform (tp, pp, dp) plan with layers split by :func:`partition_layers` on the
    expected per-layer cost (the data-blind tuned baseline's space); dp as large as fits."""
    costs = _layer_costs(mean_sample, hw)
    out = []
    for tp in TP_DEGREES:
        if tp > hw.per_node:
            continue
        for pp in range(1, max_pp + 1):
            if tp * pp > hw.gpus:
                break
            b = partition_layers(costs, pp)
            counts = [b[i + 1] - b[i] for i in range(pp)]
            out.append(_uniform(tp, pp, hw.gpus // (tp * pp), m, counts))
    return out


def split_plans(hw: Hardware, m: int, max_pv: int = 8, max_pl: int = 14):
    """Every split plan, each module with its own (tp, pp, dp) (the authors' search, their
    code ``data_aware_optimizer.py``): the encoder as ``vdp`` replicas of ``pv`` stages on ``tv``
    GPUs, the LLM as ``dp`` pipelines of ``pl`` stages on ``tl`` GPUs (layers in equal counts
    within a module; the projector on the last encoder stage, the vocabulary on the last LLM
    stage), ``vdp tv pv + dp tl pl <= G``. For every LLM degree ``dp`` the encoder gets the most
    replicas that fit the remaining GPUs of ``G`` and of every smaller whole number of nodes (so
    the space on more nodes holds the space on fewer), or exactly ``dp`` (one replica per
    pipeline, the shared-dp plan). The list follows :func:`_split_space`'s order (cached per
    profile)."""
    return list(_split_space(hw, m, max_pv, max_pl).plans())


@dataclass(frozen=True)
class _Space:
    """The split-plan space as arrays (N,), with everything that does not depend on the data
    precomputed: layer counts of the four stages that can be a module's largest (the first,
    holding ceil(L / p) layers and the most micro-batches in flight, and the last, holding the
    projector / vocabulary), and the DP all-reduce of each plan."""

    tv: np.ndarray
    pv: np.ndarray
    vdp: np.ndarray
    tl: np.ndarray
    pl: np.ndarray
    dp: np.ndarray
    dp_time: np.ndarray
    m: int
    pre: dict = field(default_factory=dict, compare=False, repr=False)  #: data-independent arrays

    def plan(self, i: int) -> Plan:
        tv, pv, tl, pl = int(self.tv[i]), int(self.pv[i]), int(self.tl[i]), int(self.pl[i])
        return _split_plan(tv, pv, int(self.vdp[i]), tl, pl, int(self.dp[i]), self.m)

    def plans(self):
        return tuple(self.plan(i) for i in range(len(self.tv)))


@functools.lru_cache(maxsize=4096)
def _split_plan(tv: int, pv: int, vdp: int, tl: int, pl: int, dp: int, m: int) -> Plan:
    stages = [Stage(tv, vis=c, proj=(i == pv - 1)) for i, c in enumerate(_equal_counts(SIGLIP.layers, pv))]
    stages += [Stage(tl, llm=c, vocab=(i == pl - 1)) for i, c in enumerate(_equal_counts(QWEN.layers, pl))]
    return Plan("split", dp, tuple(stages), m, vdp=0 if vdp == dp else vdp)


def _split_space(hw: Hardware, m: int, max_pv: int = 8, max_pl: int = 14) -> _Space:
    local = ("space", m, max_pv, max_pl)
    if local in hw._cache:
        return hw._cache[local]
    memo = hw.shared()
    key = ("space", hw.gpus, hw.per_node, m, max_pv, max_pl)
    if key in memo:
        hw._cache[local] = memo[key]
        return memo[key]
    G = hw.gpus
    rows = []
    for tv in TP_DEGREES:
        for tl in TP_DEGREES:
            if max(tv, tl) > hw.per_node:
                continue
            for pv in range(1, max_pv + 1):
                gv = tv * pv
                for pl in range(1, max_pl + 1):
                    gl = tl * pl
                    if gv + gl > G:
                        break
                    for dp in range(1, (G - gv) // gl + 1):
                        # the most encoder replicas that fit G, and every node-multiple G' < G (so
                        # the space on more nodes holds the space on fewer), and dp itself
                        vdps = {(g - dp * gl) // gv for g in range(G, 0, -hw.per_node) if g - dp * gl >= gv}
                        if dp <= (G - dp * gl) // gv:
                            vdps.add(dp)
                        for vdp in sorted(vdps, reverse=True):
                            rows.append((tv, pv, vdp, tl, pl, dp))
    a = np.array(rows, dtype=np.int64).reshape(-1, 6)
    tv, pv, vdp, tl, pl, dp = a.T
    # DP all-reduce: each module's largest stage (bf16 gradients / tp) over its replicas, strided
    # by the module's replica size; the modules reduce at once on disjoint GPUs
    enc = {(t, p): BF16 * max(_stage_params(Stage(t, vis=c, proj=pr)) for c, pr in _first_last(SIGLIP.layers, p)) / t
           for t in TP_DEGREES for p in range(1, max_pv + 1)}
    llm = {(t, p): BF16 * max(_stage_params(Stage(t, llm=c, vocab=pr)) for c, pr in _first_last(QWEN.layers, p)) / t
           for t in TP_DEGREES for p in range(1, max_pl + 1)}
    seen: dict = {}

    def ar(nbytes, d, stride):
        k = (nbytes, d, stride)
        if k not in seen:
            seen[k] = hw.dp_allreduce(nbytes, d, stride)
        return seen[k]

    dpt = np.array([max(ar(enc[tv_, pv_], vdp_, tv_ * pv_), ar(llm[tl_, pl_], dp_, tl_ * pl_))
                    for tv_, pv_, vdp_, tl_, pl_, dp_ in rows])
    sp = _Space(tv, pv, vdp, tl, pl, dp, dpt, m)
    _precompute(sp, hw)
    memo[key] = hw._cache[local] = sp
    return sp


def _first_last(total: int, pp: int) -> tuple:
    """``(layers, holds the module's extra piece)`` of the first and the last stage of a module
    split in equal counts (the stages in between hold no more layers than the first)."""
    q, r = divmod(total, pp)
    return ((q + (1 if r else 0), pp == 1), (q, True))


def best_split_plan(hw: Hardware, m: int, mean_sample: np.ndarray, batch: int):
    """:func:`best_plan` over :func:`split_plans`, vectorised over the whole space in numpy (the
    same plan, expected time and feasible count; the tests compare the two).

    Per plan, the module-doc formulas at the mean bin (``mean * batch / (dp m)``): the encoder's
    stage times scaled by :func:`encoder_share`, the sum over stages in closed form (a module's
    layers are all on some stage once), the largest stage and the peak memory taken over each
    module's first and last stage (the first has ceil(L / p) layers and the most micro-batches
    in flight, so it dominates every middle stage; the last holds the projector / vocabulary).
    """
    sp = _split_space(hw, m)
    v, l = SIGLIP, QWEN
    q = sp.pre
    x = np.asarray(mean_sample, dtype=float)
    sc = batch * q["inv_dpm"]  # (N,) mean bin = mean sample x this
    rho = q["rho"]
    k = TP_ALLREDUCES_PER_LAYER
    inv = 1.0 / (hw.eff * hw.peak)
    # time of one layer / the extra module piece on a stage, per mean bin
    lay_v = sc * (x[_F_VIS] * inv * q["rho_itv"] + k * BF16 * v.hidden * x[_F_VTOK] * q["rho_bv"]) + q["lat_v"]
    proj = sc * (x[_F_PROJ] * inv) * q["rho_itv"]
    lay_l = sc * (x[_F_LLM] * inv * q["itl"] + k * BF16 * l.hidden * x[_F_LTOK] * q["bl"]) + q["lat_l"]
    vocab = sc * (x[_F_VOCAB] * inv) * q["itl"]
    total = v.layers * lay_v + proj + l.layers * lay_l + vocab
    top = np.maximum(np.maximum(q["cv0"] * lay_v + q["one_v"] * proj, q["qv"] * lay_v + proj),
                     np.maximum(q["cl0"] * lay_l + q["one_l"] * vocab, q["ql"] * lay_l + vocab))
    t = total + (m - 1) * top + sp.dp_time
    # memory at the heavy bin (1.5 x the mean bin), the module doc's formula, on the four stages
    # that can hold a module's peak: B = a + sc * b per stage, a = state, b = activations
    h = 1.5 * sc
    work_v = h * x[_F_VTOK] * (q["tok_v"] + v.heads * v.tokens_per_image * q["score_v"]) * q["wv"]
    work_l = h * (x[_F_LTOK] * q["tok_l"] + l.heads * x[_F_SQ] * q["score_l"])
    work_o = np.maximum(work_l, h * x[_F_LTOK] * q["out_l"])
    cv = h * (ACT_BYTES * x[_F_VTOK] * v.hidden) * rho
    cl = h * (ACT_BYTES * x[_F_LTOK] * l.hidden)
    mem = np.maximum(np.maximum(q["s_v0"] + cv * q["ck_v0"] + work_v, q["s_vl"] + cv * q["ck_vl"] + work_v),
                     np.maximum(q["s_l0"] + cl * q["ck_l0"] + np.where(q["one_l"], work_o, work_l),
                                q["s_ll"] + cl * q["ql"] + work_o))
    ok = (q["bins"] <= batch) & (MEM_HEADROOM * mem <= hw.memory)
    feasible = int(ok.sum())
    if not feasible:
        return None, math.inf, 0
    i = int(np.argmin(np.where(ok, t, np.inf)))
    return sp.plan(i), float(t[i]), feasible


def _precompute(sp: _Space, hw: Hardware) -> None:
    """The data-independent arrays of :func:`best_split_plan` (per plan, shape (N,))."""
    v, l = SIGLIP, QWEN
    m = sp.m
    tv, pv, vdp, tl, pl, dp = (x.astype(float) for x in (sp.tv, sp.pv, sp.vdp, sp.tl, sp.pl, sp.dp))
    rho = dp / vdp
    tps = np.array(TP_DEGREES)
    fits = np.array([hw.allreduce_fit(int(t)) if t <= hw.per_node else (0.0, 0.0) for t in tps])
    iv, il = np.searchsorted(tps, sp.tv), np.searchsorted(tps, sp.tl)
    k = TP_ALLREDUCES_PER_LAYER
    qv, r_v = np.divmod(v.layers, sp.pv)
    ql, r_l = np.divmod(l.layers, sp.pl)
    cv0, cl0 = qv + (r_v > 0), ql + (r_l > 0)
    one_v, one_l = (sp.pv == 1).astype(float), (sp.pl == 1).astype(float)
    pv_l = (v.params - 2 * v.hidden) / v.layers
    pl_l = (l.params - 2 * l.vocab * l.hidden) / l.layers
    p_proj, p_vocab = v.hidden * l.hidden + l.hidden ** 2, 2 * l.vocab * l.hidden
    P = sp.pv + sp.pl
    # the shared model's activation terms per token and per score element (Megatron TP, no SP)
    (tok_v, score_v), (tok_l, score_l) = (training.activation_terms(x.shape, t, False) for x, t in ((v, tv), (l, tl)))
    sp.pre.update(tok_v=tok_v, score_v=score_v, tok_l=tok_l, score_l=score_l)
    sp.pre.update(
        inv_dpm=1.0 / (dp * m), rho=rho, rho_itv=rho / tv, itl=1.0 / tl,
        rho_bv=rho * fits[iv, 1], bl=fits[il, 1],
        lat_v=np.maximum(rho, 1.0) * k * fits[iv, 0], lat_l=k * fits[il, 0],
        cv0=cv0, qv=qv, cl0=cl0, ql=ql, one_v=one_v, one_l=one_l.astype(bool),
        wv=np.minimum(rho, 1.0), bins=sp.dp * m, out_l=training.output_layer_bytes(l.shape, 1.0, tl),
        s_v0=STATE_BYTES * (cv0 * pv_l + one_v * p_proj) / tv, s_vl=STATE_BYTES * (qv * pv_l + p_proj) / tv,
        s_l0=STATE_BYTES * (cl0 * pl_l + one_l * p_vocab) / tl, s_ll=STATE_BYTES * (ql * pl_l + p_vocab) / tl,
        ck_v0=cv0 * np.minimum(P, m), ck_vl=qv * np.minimum(sp.pl + 1, m), ck_l0=cl0 * np.minimum(sp.pl, m))


def max_rho1(rho):
    """``max(rho, 1)`` elementwise: the all-reduce latency of an encoder stage is paid once per
    replica in parallel when a bin is split over replicas (rho < 1), rho times when shared."""
    return np.maximum(rho, 1.0)


def expected_time(plan: Plan, hw: Hardware, mean_sample: np.ndarray, batch: int) -> float:
    """The planner's objective: the expected makespan with every bin at the mean,
    ``sum_s t_s + (m - 1) max_s t_s`` (1F1B closed form) plus the DP all-reduce (s)."""
    m = plan.m
    per_bin = mean_sample * (batch / plan.bins)
    C, const = _coef(plan, hw)
    t = C @ per_bin + const
    return float(t.sum() + (m - 1) * t.max()) + _dp_time(plan, hw)


def _dp_time(plan: Plan, hw: Hardware) -> float:
    if plan.kind != "split":
        stride = sum(st.tp for st in plan.stages)
        return max(hw.dp_allreduce(BF16 * _stage_params(st) / st.tp, plan.dp, stride) for st in plan.stages)
    # each module over its own replicas, strided by its replica's GPUs (disjoint GPUs, at once)
    gv = sum(st.tp for st in plan.stages if st.component == 0)
    gl = sum(st.tp for st in plan.stages if st.component == 1)
    return max(hw.dp_allreduce(BF16 * _stage_params(st) / st.tp, plan.enc_dp if st.component == 0 else plan.dp,
                               gv if st.component == 0 else gl) for st in plan.stages)


def best_plan(plans, hw: Hardware, mean_sample: np.ndarray, batch: int):
    """The memory-feasible plan of least :func:`expected_time` (None when none fits), its
    expected time, and the number of memory-feasible plans."""
    best, best_t, feasible = None, math.inf, 0
    for p in plans:
        if p.bins > batch:
            continue
        heavy = mean_sample * (batch / p.bins) * 1.5  # an expected heavy bin (50% above the mean)
        if plan_memory(p, heavy).max() > hw.memory:
            continue
        feasible += 1
        t = expected_time(p, hw, mean_sample, batch)
        if t < best_t:
            best, best_t = p, t
    return best, best_t, feasible


# --------------------------------------------------------------------------- step time


@dataclass(frozen=True)
class StepTime:
    """A global batch's modelled step: time (s), per-pipeline makespans, imbalance (max / mean
    of the pipelines' compute), mean bubble fraction, DP all-reduce (s), peak memory (B)."""

    time: float
    makespans: tuple
    imbalance: float
    bubble: float
    dp_time: float
    memory: float


def step_time(plan: Plan, feats: Features, bins, hw: Hardware) -> StepTime:
    """Time one global batch under *plan* with micro-batches *bins* (bin j on pipeline j mod dp,
    as micro-batch j // dp), by the exact 1F1B recurrence.

    Raises
    ------
    ValueError
        The number of bins is not dp x m.
    """
    if len(bins) != plan.bins:
        raise ValueError(f"dflop: expected {plan.bins} bins (dp={plan.dp} x m={plan.m}), got {len(bins)}")
    C, const = _coef(plan, hw)
    order = np.fromiter((i for b in bins for i in b), dtype=np.int64)
    starts = np.cumsum([0] + [len(b) for b in bins[:-1]])
    if any(len(b) == 0 for b in bins):
        raise ValueError("dflop: a micro-batch bin is empty")
    F = np.add.reduceat(feats.x[order], starts, axis=0)  # (k, 7) summed features per bin
    T = C @ F.T + const[:, None]  # (P, k)
    P = len(plan.stages)
    mean_tok = F[:, _F_LTOK].mean()
    # a replica's stages sit together when the modules share dp; with their own dp the encoder
    # replicas and the LLM pipelines are placed module by module, so the hand-off crosses nodes
    # unless the whole plan fits in one node
    span = sum(st.tp for st in plan.stages) if plan.enc_dp == plan.dp else plan.gpus
    p2p = hw.p2p(BF16 * mean_tok * QWEN.hidden, cross_node=span > hw.per_node) if P > 1 else 0.0
    spans, busy = [], []
    for r in range(plan.dp):
        t = T[:, r::plan.dp]
        s = pipeline_1f1b_schedule(0.25 * t, 0.75 * t, t.shape[1], p2p)
        spans.append(s.makespan)
        busy.append(float(np.mean(s.bubble_fraction)))
    dp = _dp_time(plan, hw)
    comp = T.reshape(P, plan.m, plan.dp).sum(axis=(0, 1))  # compute per pipeline
    imb = float(comp.max() / comp.mean()) if comp.mean() > 0 else 1.0
    mem = float(plan_memory(plan, F[np.argmax(F[:, _F_LTOK])]).max())
    return StepTime(max(spans) + dp, tuple(spans), imb, max(0.0, float(np.mean(busy))), dp, mem)


# --------------------------------------------------------------------------- evaluate


PLANNER_SAMPLES = 2048  #: samples drawn (seed + 1) to estimate the mix's distribution for planning


def choose(variant: str, mixw: MixWorkload, samples: Samples, hw: Hardware, m: int, batch: int,
           seed: int, time_limit: float, skew: float = 1.0, node_limit: int | None = None):
    """Plan and bins of *variant* for one global batch; returns (plan, bins, schedule, info).

    With *node_limit* (the model fidelity's ``ilp_nodes``) the ILP's budget is that many
    branch-and-bound nodes, not seconds: the model does not depend on this host's clock.

    Raises
    ------
    suite.Skip
        No plan of *variant* fits *hw*'s memory per GPU (not applicable on this hardware).
    ValueError
        *batch* leaves bins empty (``schedule.check_bins``: a bad parameter)."""
    feats = features(samples)
    profile_feats = features(generate(mixw, PLANNER_SAMPLES, seed + 1, skew))
    mean = profile_feats.x.mean(axis=0)
    info = {}
    if variant == "megatron":
        plan = megatron_plan(hw, m, mean, batch)
        cands = []
        info["plans_tried"] = 1
    elif variant == "tuned-uniform":
        cands = uniform_plans(hw, m, mean)
        best, tb = None, math.inf
        for p in cands:  # data-blind exhaustive search: each plan timed with equal-count bins
            if p.bins > batch or plan_memory(p, mean * (batch / p.bins) * 1.5).max() > hw.memory:
                continue
            st = step_time(p, feats, sched.equal_count(np.zeros((1, batch)), p.bins).bins, hw)
            t = st.time if st.memory <= hw.memory else math.inf  # the batch's heaviest bin must fit
            if t < tb:
                best, tb = p, t
        plan = best
        info["plans_tried"] = len(cands)
    else:
        sp = _split_space(hw, m)
        plan, t_plan, feas = best_split_plan(hw, m, mean, batch)
        cands = [sp.plan(int(np.argmin(sp.dp)))]  # the plan with the fewest bins, for the bad-input message
        info["plans_tried"], info["plans_feasible"] = len(sp.tv), feas
        info["expected_step_s"] = float(t_plan)
    if plan is None and variant != "megatron" and cands and min(p.bins for p in cands) > batch:
        small = min(cands, key=lambda p: p.bins)
        sched.check_bins(batch, small.bins, small.dp, small.m)
    if plan is None:  # a plan that fits no device: not applicable on this hardware, not a failure
        raise Skip(f"dflop: no {variant} plan of {hw.gpus} GPUs fits {hw.memory / 2**30:.0f} GiB per GPU")
    sched.check_bins(batch, plan.bins, plan.dp, plan.m)
    d = cost_vectors(plan, feats, hw)
    if variant in ("megatron", "tuned-uniform", "data-aware-plan"):
        s = sched.equal_count(d, plan.bins)
    elif variant == "dflop-lpt":
        s = sched.lpt(d, plan.bins)
    else:
        if node_limit is not None:  # deterministic: a node budget, no clock (issue 42)
            info["ilp_nodes"] = int(node_limit)
            s = sched.schedule(d, plan.bins, time_limit, node_limit=node_limit)
        else:
            # the asynchronous scheduler must hide behind the step it overlaps: the whole scheduler is
            # bounded by HIDE_FRACTION of the plan's expected step time (schedule.HIDE_FRACTION)
            budget = sched.HIDE_FRACTION * info["expected_step_s"]
            info["hide_budget_s"] = budget
            s = sched.schedule(d, plan.bins, time_limit, hide_budget=budget)
    return plan, feats, s, info


def evaluate(scenario):
    """Model fidelity: plan, schedule and time one global batch of the scenario's dataset mix.

    Reads ``scenario.params`` (``nodes``, ``global_batch``, ``microbatches``, ``ilp_nodes`` (the ILP's
    deterministic budget; ``ilp_time_limit`` = 0 still means LPT only),
    ``efficiency``, ``skew``), ``scenario.workload`` (a dataset mix), ``scenario.profile`` (bf16
    peak, HBM, network levels) and ``scenario.seed`` (the batch).

    Returns
    -------
    suite.Result
        ``step_time`` (s), ``throughput`` (samples/s), ``imbalance`` (max / mean pipeline compute),
        ``bubble`` (mean idle fraction), ``dp_time`` (s), ``peak_memory`` (B per GPU, heaviest bin),
        ``fits_hbm`` (1 when it fits the device),
        ``sched_gap`` (makespan / bound - 1 of the bins), ``lpt_optimal``
        (1 when LPT met the bound); artifacts ``plan`` and ``schedule`` (with the
        scheduler's wall time, kept out of the metrics: a time limit that binds makes the ILP's
        answer timing-dependent, recorded in ``ilp_status``).

    Raises
    ------
    suite.Skip
        No dataset-mix workload, or no profile, ``nodes`` beyond the profile's, or no plan of the
        variant fits the device's memory (megatron at skew 2 on llava-video: 64 GPUs of 75 GiB).
        ``nodes`` left unset is the profile's, at most 8 (:func:`nodes_of`; metric ``nodes_used``).
    ValueError
        Bins left empty, or a bad parameter (one line).
    """
    from suite.api import Skip

    wl, prof = scenario.workload, scenario.profile
    if prof is None:
        raise Skip("dflop model fidelity needs a hardware profile")
    if not isinstance(wl, MixWorkload):
        raise Skip(f"dflop model fidelity needs a dflop dataset mix workload, got {getattr(wl, 'name', None)!r}")
    p = scenario.params
    tl = float(p["ilp_time_limit"])
    if not tl >= 0:
        raise ValueError(f"dflop: parameter 'ilp_time_limit': expected >= 0 s, got {tl:g}")
    used = nodes_of(p, prof)
    if used > prof.num_nodes:
        raise Skip(f"dflop: nodes={used} but profile {prof.name!r} has {prof.num_nodes} nodes")
    gpus = used * int(prof.devices_per_node)
    batch, m = int(p["global_batch"]), int(p["microbatches"])
    hw = hardware(prof, gpus, p.get("efficiency"))
    samples = generate(wl, batch, int(scenario.seed), float(p["skew"]))
    nodes = int(p.get("ilp_nodes", 200))
    plan, feats, s, info = choose(scenario.variant, wl, samples, hw, m, batch, int(scenario.seed), tl,
                                  float(p["skew"]), node_limit=nodes if tl > 0 else 0)
    res = _result(step_time(plan, feats, s.bins, hw), plan, s, info, hw, batch, gpus, wl.name)
    res.add("nodes_used", used, "1", "none")  # the resolved count: nodes=None is the profile's, at most 8
    return res


def nodes_of(params, profile) -> int:
    """``params['nodes']``, or when it is None (unset) the profile's nodes at most the claim's 8
    (:data:`suite_dflop.constants.CLAIM_NODES`; 8 without a profile: :func:`suite.api.resolve_scale`)."""
    return resolve_scale(params, "nodes", profile, CLAIM_NODES, count="nodes")


def _result(st: StepTime, plan: Plan, s, info: dict, hw: Hardware, batch: int, gpus: int, mix: str):
    """Model fidelity's metrics and artifacts (see :func:`evaluate`)."""
    from suite.api import Result

    res = Result()
    res.add("step_time", st.time, "s", "lower")
    res.add("throughput", batch / st.time, "samples/s", "higher")
    res.add("imbalance", st.imbalance, "1", "lower")
    res.add("bubble", st.bubble, "1", "lower")
    res.add("dp_time", st.dp_time, "s", "lower")
    res.add("peak_memory", st.memory, "B", "lower")
    res.add("fits_hbm", 1.0 if st.memory <= hw.memory else 0.0, "1", "none")
    res.add("sched_gap", s.gap, "1", "lower")
    res.add("lpt_optimal", 1.0 if s.method == "lpt-optimal" else 0.0, "1", "none")
    res.artifacts["plan"] = {**plan.describe(), **info}
    res.artifacts["schedule"] = {"method": s.method, "makespan_s": s.makespan, "bound_s": s.bound,
                                 "ilp_status": s.ilp_status, "bins": len(s.bins),
                                 "solve_time_s": s.solve_time}
    res.artifacts["setup"] = {"gpus": gpus, "efficiency": hw.eff, "peak_bf16": hw.peak, "memory_B": hw.memory,
                              "mix": mix, "global_batch": batch}
    return res
