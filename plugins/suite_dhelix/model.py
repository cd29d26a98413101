"""DHelix's cost model: per-layer operators, the pairing DP, the folded pipeline, closed form.

Operators (Megatron-LM tensor parallelism with sequence parallelism, Korthikanti et al. 2022
§4.2.2, Fig. 5): per transformer block and micro-batch of ``b`` sequences of ``s`` tokens on a TP
group of ``t`` ranks, the forward is

``AG, QKV, CORE, PROJ, RS, AG, FC1, FC2, RS``

(an all-gather of the sequence-sharded input before QKV and FC1, a reduce-scatter after the
output projection and FC2), the backward the mirror ``AG, FC2', FC1', RS, AG, PROJ', CORE',
QKV', RS`` (the gradient of a reduce-scatter is an all-gather and vice versa). Each collective
moves the full activation ``b s h`` x 2 bytes (bf16) over the TP group, priced by
:func:`suite.perf.collective.collective_time` on the real placement (:func:`tp_group`: inside a
node, or across nodes when ``t`` exceeds the node). GEMM FLOPs come from the zoo's layer table
(``attrs["weights"]``: ``2 b s`` x rows x cols / t forward, twice that backward: data and weight
gradients) and the attention core from ``attrs["core_flops"]`` (twice backward); every compute
operator is priced by :func:`suite.perf.compute.roofline_time` with one compute efficiency
(:data:`EFFICIENCY`).

Pair timing (two streams: the SMs and the network). ``pair_time(a, b)`` of two operators that
start together: two computes share the SMs (``c_a + c_b``), two collectives the links
(``m_a + m_b``); a compute ``c`` beside a collective ``m`` overlap, the compute slowed by
``1 + sigma`` while the collective runs (the collective's kernels take SMs and memory bandwidth):
``m`` when ``c (1 + sigma) <= m``, else ``m + c - m / (1 + sigma)``. ``sigma`` is one technique
constant, :data:`SIGMA` = 0.109: the TWIST blog (the authors', Fig. 3) measured a layer's
compute rising from 16.5 to 18.3 ms under co-execution.

Pairing DP (the SI plan; the recurrence as two secondary summaries of the paper give it, both
agree): over forward operators ``i`` of one strand and backward operators ``j`` of the other,
``T(i,j) = min(T(i-1,j) + P(i,-), T(i,j-1) + P(-,j), T(i-1,j-1) + P(i,j))``, ``T(0,0) = 0``
(:func:`pair_dp`). ``P(i,-)`` is the operator alone (compute plus communication, in series).

Baselines: ``megatron`` runs each operator in series (layer time ``sum c + sum m``);
``intra-overlap`` overlaps each collective with the GEMM that produces or consumes it, decomposed
into ``t`` steps so only one step of the pair is exposed (Wang et al., ASPLOS 2023, "Overlap
communication with dependent computation via decomposition"): ``max(c (1+sigma), m) + min(c, m) / t``.

Pipeline (1F1B, Narayanan et al. SC'21 §2.2): per micro-batch and stage, forward ``f = L_s t_f``
and backward ``b = L_s t_b`` with ``L_s = L / pp`` layers per GPU (folded: two chunks of
``L / 2pp``, :func:`fold`). ``megatron`` / ``intra-overlap``: ``T = (m + pp - 1)(f + b)``.
``dhelix``: the forward of one micro-batch co-executes with the backward of another on the folded
pipeline (``2 pp`` chunks, at most megatron's first-stage activations in flight per GPU), a pair
``q = L_s T_pair``: ``T = pp (f + b) + (m - 1) q`` (the fill and drain of ``pp`` unpaired slots,
then ``m - 1`` pairs; equal to 1F1B's when ``q = f + b``). The event simulation
(:mod:`suite_dhelix.simulate`) gives this exactly for ``pp = 1`` and within 2 % on balanced
stages with ``m >= 2 pp`` (tests pin it). Both add the pipeline sends on the fill and drain
(``b s h 2 / t`` bytes per stage boundary, priced as ``p2p``: ``2 (pp - 1)`` sends, ``4 (pp - 1)``
on the folded pipeline; a lower bound, since 1F1B's in-flight limit also exposes sends in the
steady state: the exact 1F1B recurrence and the simulation are up to 0.9 % and 1.7 % slower on
the claim plans) and the data-parallel all-reduce of the stage's fp32 gradients
(``4`` bytes per parameter / (t pp); Megatron's fp32 gradient buffers), overlapped with the last
micro-batch's backward on the stage (Megatron-LM's ``--overlap-grad-reduce``: bucketed reduction
starts as a bucket's gradients are final): ``max(0, T_dp - b)`` is exposed, in every variant.

Memory (per GPU): model states ``6 + 12 / dp`` bytes per parameter / (t pp) (Megatron-LM's
distributed optimizer, bf16 weights, fp32 gradients, fp32 master weights and Adam moments sharded
over DP: Megatron-LM docs, "Distributed optimizer"), plus activations: the first stage holds
``min(m, pp)`` micro-batches (1F1B) of ``L_s`` layers of the zoo's ``saved_bytes_selective`` x
``b / t`` (FlashAttention stores no ``s x s`` matrix, the selective figure of Korthikanti et al.
§4.3; sequence parallelism shards every activation, §4.2.2).
``dhelix`` shares the activation space between the strands (the abstract) and holds one more
layer of one micro-batch (the co-executing layer's working set; our assumption);
``dhelix-separate`` gives each strand its own activation space (twice the activations).

MFU: the shared model's model FLOPs (:func:`suite.perf.training.iteration_flops` without
recomputation: Narayanan et al.'s counting, matrix multiplications, causal mask not discounted;
equal to the zoo's ``training_flops`` on this technique's workloads) / (iteration time x world x
bf16 peak).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from suite.api import (Group, ParameterError, Result, TransformerSpec, collective_time, require_devices,
                       resolve_scale, training, transformer)

#: SIGMA (co-execution slowdown, 0.109): defined, with its source, in :mod:`suite_dhelix.constants`,
#: which the declaration reads. Compute efficiency is the device's (its profile's gemm_bf16 curve).
from suite_dhelix.constants import SIGMA

__all__ = ["SIGMA", "hardware", "STATE_BYTES_FIXED", "STATE_BYTES_SHARDED", "GRAD_BYTES", "Op", "layer_ops", "pair_time",
           "pair_dp", "serial_time", "intra_time", "fold", "tp_group", "Plan", "plan_of", "dp_of", "default_dp", "evaluate",
           "iteration", "rebuilt_table"]

#: Model-state bytes per parameter, Megatron-LM's distributed optimizer with bf16 parameters and
#: fp32 gradients (Megatron-LM docs, "Distributed optimizer": ``6 + 12 / dp``; the fp32 master
#: weights and two Adam moments, 12 bytes, are sharded over the data-parallel group).
STATE_BYTES_FIXED, STATE_BYTES_SHARDED = 6, 12
#: Bytes per gradient element in the data-parallel all-reduce (Megatron's fp32 gradient buffers).
GRAD_BYTES = 4
ACT_BYTES = 2  # bf16 activations


@dataclass(frozen=True)
class Op:
    """One operator of a layer: ``compute`` and ``comm`` seconds (one of them is 0)."""

    name: str
    compute: float = 0.0
    comm: float = 0.0

    @property
    def time(self) -> float:
        return self.compute + self.comm


def pair_time(a: Op | None, b: Op | None, sigma: float = SIGMA) -> float:
    """Two-stream time of operators *a* and *b* started together (either may be None: alone).

    See the module docstring; ``sigma`` >= 0 is the compute slowdown under a concurrent collective.
    """
    if a is None and b is None:
        return 0.0
    if a is None or b is None:
        o = a if b is None else b
        return o.compute + o.comm
    c = a.compute + b.compute
    m = a.comm + b.comm
    if c == 0.0 or m == 0.0:
        return c + m
    # one compute and one collective (an op is compute or comm, not both, in layer_ops)
    slow = c * (1.0 + sigma)
    if slow <= m:
        return m
    return m + c - m / (1.0 + sigma)


def pair_dp(fwd, bwd, sigma: float = SIGMA):
    """The pairing DP over forward ops *fwd* (one strand) and backward ops *bwd* (the other).

    ``T(i,j) = min(T(i-1,j) + P(i,-), T(i,j-1) + P(-,j), T(i-1,j-1) + P(i,j))`` with ``T(0,0) = 0``.

    Parameters
    ----------
    fwd, bwd : sequence of Op
    sigma : float

    Returns
    -------
    (time, plan) : float, list of (i or None, j or None)
        The optimal time (s) and the merge: each step runs forward op ``i`` and/or backward op
        ``j`` (0-based), in order; every op appears exactly once and each strand's order is kept.
    """
    n, k = len(fwd), len(bwd)
    INF = math.inf
    T = [[INF] * (k + 1) for _ in range(n + 1)]
    back = [[0] * (k + 1) for _ in range(n + 1)]
    T[0][0] = 0.0
    for i in range(n + 1):
        Ti, bi = T[i], back[i]
        for j in range(k + 1):
            if i == 0 and j == 0:
                continue
            best, how = INF, 0
            if i > 0:
                v = T[i - 1][j] + pair_time(fwd[i - 1], None, sigma)
                if v < best:
                    best, how = v, 1
            if j > 0:
                v = Ti[j - 1] + pair_time(None, bwd[j - 1], sigma)
                if v < best:
                    best, how = v, 2
            if i > 0 and j > 0:
                v = T[i - 1][j - 1] + pair_time(fwd[i - 1], bwd[j - 1], sigma)
                if v < best:
                    best, how = v, 3
            Ti[j], bi[j] = best, how
    plan = []
    i, j = n, k
    while i or j:
        how = back[i][j]
        if how == 1:
            plan.append((i - 1, None))
            i -= 1
        elif how == 2:
            plan.append((None, j - 1))
            j -= 1
        else:
            plan.append((i - 1, j - 1))
            i, j = i - 1, j - 1
    plan.reverse()
    return T[n][k], plan


def serial_time(ops) -> float:
    """Megatron's layer time: every operator in series (s)."""
    return sum(o.compute + o.comm for o in ops)


def intra_time(ops, tp: int, sigma: float = SIGMA) -> float:
    """A micro-batch overlapping its own collectives with the adjacent GEMM, decomposed in ``tp``
    steps (Wang et al. ASPLOS'23): each AG pairs with the next GEMM, each RS with the previous one;
    a pair costs ``max(c (1 + sigma), m) + min(c, m) / tp``. Other operators run in series."""
    ops = list(ops)
    used = [False] * len(ops)
    t = 0.0
    for idx, o in enumerate(ops):
        if o.comm == 0.0 or used[idx]:
            continue
        partner = idx + 1 if o.name.startswith("ag") else idx - 1
        if 0 <= partner < len(ops) and ops[partner].comm == 0.0 and not used[partner]:
            c, m = ops[partner].compute, o.comm
            t += max(c * (1.0 + sigma), m) + min(c, m) / max(tp, 1)
            used[idx] = used[partner] = True
    return t + sum(o.time for i, o in enumerate(ops) if not used[i])


def fold(layers: int, stages: int) -> list[list[int]]:
    """Model folding: GPU g holds layers ``[g L/2G, (g+1) L/2G)`` and their mirror
    ``[L - (g+1) L/2G, L - g L/2G)`` (the paper's W-shaped pipeline, per two secondary summaries).

    Raises
    ------
    ParameterError
        ``layers`` not divisible by ``2 stages``.
    """
    if stages < 1 or layers % (2 * stages):
        raise ParameterError(f"dhelix: model folding needs layers divisible by 2 x pp, got {layers} layers, "
                             f"pp={stages}")
    c = layers // (2 * stages)
    return [list(range(g * c, (g + 1) * c)) + list(range(layers - (g + 1) * c, layers - g * c))
            for g in range(stages)]


def tp_group(profile, tp: int) -> Group:
    """The TP group's placement: packed on a node (``tp <= devices per node``), else across
    ``tp / devices_per_node`` nodes with a full node each (Megatron's rank order, TP fastest)."""
    dpn = profile.devices_per_node
    per = min(tp, dpn)
    return Group(ranks_per_node=per, nodes=-(-tp // per))


def rebuilt_table(table, seq: int):
    """The zoo table at *seq* tokens (rebuilt from its hyperparameters when they differ)."""
    spec = getattr(table, "spec", None)
    if not spec:
        raise ParameterError(f"dhelix: workload {table.name!r} is not a transformer layer table")
    if int(spec["seq"]) == seq:
        return table
    fields = {k: v for k, v in dict(spec).items() if k in TransformerSpec.__dataclass_fields__}
    fields["seq"] = seq
    fields["name"] = table.name
    return transformer(TransformerSpec(**fields))


@dataclass(frozen=True)
class Plan:
    """A validated parallel plan (TP, PP, DP, micro-batch, sequence, global batch)."""

    tp: int
    pp: int
    dp: int
    mbs: int
    seq: int
    gbs: int

    @property
    def world(self) -> int:
        return self.tp * self.pp * self.dp

    @property
    def microbatches(self) -> int:
        return self.gbs // (self.mbs * self.dp)


#: the paper's data-parallel degree (8 x 2 x 4 = 64 A800s): ``dp`` when the profile holds it
PAPER_DP = 4


def dp_of(params, profile) -> int:
    """``params['dp']``, or when it is None (unset) the most replicas of the ``tp x pp`` plan that
    *profile*'s devices hold, at most :data:`PAPER_DP`, whose ``mbs x dp`` divides ``gbs``; 1 when
    none fits (the plan is then declined by :func:`plan_of` for want of GPUs);
    :data:`PAPER_DP` without a profile (:func:`suite.api.resolve_scale`). ``mbs x dp`` divides
    ``gbs`` when ``dp`` divides ``gbs / mbs``; none does when ``mbs`` does not divide ``gbs``."""
    tp, pp, mbs, gbs = (int(params[k]) for k in ("tp", "pp", "mbs", "gbs"))
    return resolve_scale(params, "dp", profile, PAPER_DP, count=lambda prof: prof.num_devices // (tp * pp),
                         divides=gbs // mbs if gbs % mbs == 0 else 1)


def default_dp(tp: int, pp: int, mbs: int, gbs: int, profile) -> int:
    """Deprecated in 0.3.12, removed in 0.4.0: ``dp_of({"tp": tp, "pp": pp, "mbs": mbs, "gbs": gbs}, profile)``."""
    import warnings

    warnings.warn("suite_dhelix.model.default_dp(tp, pp, mbs, gbs, profile) is deprecated and removed in 0.4.0: "
                  "use dp_of(params, profile)", DeprecationWarning, stacklevel=2)
    return dp_of({"tp": tp, "pp": pp, "mbs": mbs, "gbs": gbs}, profile)


def plan_of(params, table, profile, folded: bool = True) -> Plan:
    """Validate the scenario's plan against the workload and profile (one-line errors).

    ``folded``: the plan runs on the folded (W-shaped) pipeline (dhelix variants): layers must divide
    into ``2 pp`` chunks; the baselines' plain 1F1B only needs ``pp`` to divide the layers.

    Raises ParameterError for a plan the workload cannot take, and Skip (``require_devices``) for
    one needing more GPUs (``tp x pp x dp``) than the profile has: the scenario is declined, as
    other techniques decline it. ``dp`` None (unset) is :func:`dp_of`'s."""
    tp, pp = int(params["tp"]), int(params["pp"])
    mbs, seq, gbs = int(params["mbs"]), int(params["seq"]), int(params["gbs"])
    dp = dp_of(params, profile)
    spec = table.spec
    heads, layers = int(spec["heads"]), int(spec["layers"])
    name = table.name.split("@")[0]
    if heads % tp:
        raise ParameterError(f"dhelix: tp={tp} must divide the {heads} heads of {name}")
    if folded:
        fold(layers, pp)
    elif layers % pp:
        raise ParameterError(f"dhelix: pp={pp} must divide the {layers} layers of {name}")
    if gbs % (mbs * dp):
        raise ParameterError(f"dhelix: gbs={gbs} must be a multiple of mbs x dp = {mbs * dp}")
    require_devices(profile, tp * pp * dp, "tp x pp x dp")
    return Plan(tp, pp, dp, mbs, seq, gbs)


def _peak(dev) -> float:
    """bf16 peak (FLOP/s); fp16 when a device lists no bf16 (same tensor-core rate on NVIDIA parts)."""
    return dev.first_peak("bf16", "fp16")[1]


def hardware(profile, efficiency: float | None = None) -> training.Hardware:
    """The shared model's :class:`~suite.perf.training.Hardware` of *profile*: the device's own
    ``gemm_bf16`` curve (per device), or one flat *efficiency* when the scenario sets it."""
    hw = training.hardware_of(profile)
    return hw if efficiency is None else hw.with_efficiency(efficiency)


def layer_ops(table, plan: Plan, profile, efficiency: float | None = None):
    """Forward and backward operators of one block, priced by the shared training model
    (:func:`suite.perf.training.layer_kernels`: each GEMM at the device's efficiency curve, the
    layer norms, softmax, dropout, GeLU and residual kernels at its memory bandwidth, folded into
    the adjacent compute operator) and :func:`suite.perf.training.tp_collectives` (Megatron-LM TP
    with sequence parallelism: all-gathers and reduce-scatters of the micro-batch's activation).

    Returns
    -------
    (fwd, bwd) : lists of :class:`Op` (seconds), in execution order.
    """
    hw = hardware(profile, efficiency)
    m = training.shape_of(table)
    k = training.layer_kernels(m, hw, {"tp": plan.tp, "cp": 1, "mbs": plan.mbs, "flash": True, "sp": True})
    c = training.tp_collectives(m, hw, plan.tp, plan.mbs) if plan.tp > 1 else {"allgather": 0.0, "reduce-scatter": 0.0}
    ag, rs = c["allgather"], c["reduce-scatter"]
    f = {n: float(v[0]) for n, v in k.items()}
    b = {n: float(v[1]) for n, v in k.items()}
    fwd = [Op("ag_attn", comm=ag), Op("qkv", compute=f["qkv"]), Op("core", compute=f["core"]),
           Op("proj", compute=f["proj"]), Op("rs_attn", comm=rs), Op("ag_mlp", comm=ag),
           Op("fc1", compute=f["fc1"]), Op("fc2", compute=f["fc2"]), Op("rs_mlp", comm=rs)]
    bwd = [Op("ag_mlp_b", comm=ag), Op("fc2_b", compute=b["fc2"]), Op("fc1_b", compute=b["fc1"]),
           Op("rs_mlp_b", comm=rs), Op("ag_attn_b", comm=ag), Op("proj_b", compute=b["proj"]),
           Op("core_b", compute=b["core"]), Op("qkv_b", compute=b["qkv"]), Op("rs_attn_b", comm=rs)]
    return fwd, bwd


def _variant_times(variant, fwd, bwd, tp, sigma):
    """(t_f, t_b, t_pair) per layer (s) for *variant*."""
    if variant == "megatron":
        tf, tb = serial_time(fwd), serial_time(bwd)
        return tf, tb, tf + tb
    tf, tb = intra_time(fwd, tp, sigma), intra_time(bwd, tp, sigma)
    if variant == "intra-overlap":
        return tf, tb, tf + tb
    tpair, _plan = pair_dp(fwd, bwd, sigma)
    return tf, tb, min(tpair, tf + tb)


def iteration(scenario) -> dict:
    """The closed-form iteration of the scenario's plan (see the module docstring): a dict of
    times (s), fractions, memory (B) and the plan, for :func:`evaluate` and the simulator."""
    p = scenario.params
    profile = scenario.profile
    table = rebuilt_table(scenario.workload, int(p["seq"]))
    plan = plan_of(p, table, profile, folded=scenario.variant.startswith("dhelix"))
    eff = float(p["efficiency"]) if p.get("efficiency") is not None else None
    fwd, bwd = layer_ops(table, plan, profile, eff)
    variant = scenario.variant
    base = "dhelix" if variant == "dhelix-separate" else variant
    tf, tb, tq = _variant_times(base, fwd, bwd, plan.tp, float(p["sigma"]))
    Ls = int(table.spec["layers"]) // plan.pp
    f, b, q = Ls * tf, Ls * tb, Ls * tq
    p2p = _p2p_time(plan, int(table.spec["hidden"]), profile)
    T_pipe, sends = _pipeline_time(base, plan, f, b, q, p2p)
    dp_t = _dp_time(plan, table, profile)
    # Megatron-LM's --overlap-grad-reduce: bucketed reduction overlaps the last micro-batch's
    # backward on the stage; what is left of it is exposed
    dp_exposed = max(0.0, dp_t - b)
    T = T_pipe + dp_exposed
    dev = profile.require_device()
    flops = training.iteration_flops(training.shape_of(table), plan.gbs, "none")
    return {"plan": plan, "table": table, "fwd": fwd, "bwd": bwd, "t_fwd": tf, "t_bwd": tb, "t_pair": tq,
            "f": f, "b": b, "q": q, "p2p": p2p, "p2p_exposed": sends, "dp_time": dp_t, "dp_exposed": dp_exposed,
            "iteration_time": T, "pipeline_time": T_pipe, **_layer_overlap(fwd, bwd, tq),
            **_memory(table, plan, variant, Ls), "mfu": flops / (T * plan.world * _peak(dev)), "flops": flops,
            "layers_per_gpu": Ls, "capacity": dev.memory}


def _p2p_time(plan: Plan, h: int, profile) -> float:
    """One pipeline send of a micro-batch's activation (``2 b s h / tp`` B): stage neighbours are
    ``tp dp`` ranks apart (Megatron's order: tp, dp, pp), on one node or two."""
    if plan.pp <= 1:
        return 0.0
    dpn = profile.devices_per_node
    msg = plan.mbs * plan.seq * h * ACT_BYTES / plan.tp
    cross = plan.tp * plan.dp >= dpn
    g = Group(ranks_per_node=min(plan.tp, dpn), nodes=2) if cross else Group(ranks_per_node=2, nodes=1)
    return float(collective_time("p2p", msg, g, profile).time)


def _pipeline_time(base: str, plan: Plan, f: float, b: float, q: float, p2p: float) -> tuple[float, float]:
    """The pipeline's time and its exposed sends (s): 1F1B ``(m + pp - 1)(f + b)``, or the folded W
    ``pp (f + b) + (m - 1) q``; sends counted on the fill and drain only, ``pp - 1`` hops each way
    (the folded W: ``2 (pp - 1)``). A lower bound: 1F1B's in-flight limit puts a round trip of sends
    in every window of pp micro-batches too (suite.perf.pipeline.pipeline_1f1b_schedule, exact for
    the unpaired variants, is 0.1-0.9 % slower on this technique's claim plans; simulate.py
    0.1-1.7 % for dhelix)."""
    m = plan.microbatches
    sends = (4 if base == "dhelix" else 2) * (plan.pp - 1) * p2p
    if base == "dhelix":
        return plan.pp * (f + b) + (m - 1) * q + sends, sends
    return (m + plan.pp - 1) * (f + b) + sends, sends


def _dp_time(plan: Plan, table, profile) -> float:
    """The data-parallel all-reduce of the stage's gradients (:data:`GRAD_BYTES` per parameter; every variant)."""
    if plan.dp <= 1:
        return 0.0
    dpn = profile.devices_per_node
    stage_params = sum(l.params for l in table.layers) / (plan.tp * plan.pp)
    rpn = max(1, min(plan.dp, dpn // plan.tp)) if plan.tp < dpn else 1
    g = Group(ranks_per_node=rpn, nodes=-(-plan.dp // rpn), concurrent=min(plan.tp, dpn))
    return float(collective_time("allreduce", stage_params * GRAD_BYTES, g, profile).time)


def _layer_overlap(fwd, bwd, tq: float) -> dict:
    """Communication of one layer, serial and as left exposed by the variant (one layer's forward
    + backward: for dhelix one co-executed pair)."""
    comm_layer = sum(o.comm for o in fwd) + sum(o.comm for o in bwd)
    comp_layer = sum(o.compute for o in fwd) + sum(o.compute for o in bwd)
    exposed = max(0.0, tq - comp_layer)
    return {"comm_layer": comm_layer, "compute_layer": comp_layer, "layer_time": tq, "exposed_layer": exposed,
            "hidden_fraction": 1.0 - exposed / comm_layer if comm_layer > 0 else 1.0}


def _memory(table, plan: Plan, variant: str, Ls: int) -> dict:
    """Memory per GPU (the shared model's counts): model states with Megatron's distributed
    optimizer and fp32 gradients (ZeRO-1 bytes with g = 4: 6 + 12 / dp, Megatron-LM docs),
    activations per layer with flash attention and sequence parallelism (Korthikanti et al.
    Table 2 without the s^2 term) for ``min(m, pp)`` micro-batches; dhelix holds one layer more
    (the paired strand), dhelix-separate two strands' worth."""
    shape = training.shape_of(table)
    per_param = float(training.state_bytes_per_param(1, plan.dp, GRAD_BYTES))
    states = sum(l.params for l in table.layers) * per_param / (plan.tp * plan.pp)
    stored, _work = training.layer_activation_bytes(shape, plan.mbs, plan.tp, True, 1, 0, True)
    per_layer_act = float(stored)
    acts = min(plan.microbatches, plan.pp) * Ls * per_layer_act
    if variant == "dhelix":
        acts += per_layer_act
    elif variant == "dhelix-separate":
        acts = 2 * acts
    return {"peak_memory": states + acts, "model_states": states, "activations": acts}


def to_result(it: dict, scenario) -> Result:
    """The metrics of :func:`iteration` as a :class:`~suite.Result`."""
    plan = it["plan"]
    r = Result()
    r.add("iteration_time", it["iteration_time"], "s", "lower")
    r.add("throughput", plan.gbs * plan.seq / it["iteration_time"], "tokens/s", "higher")
    r.add("mfu", 100.0 * it["mfu"], "%", "higher")
    r.add("exposed_comm", it["exposed_layer"] * it["layers_per_gpu"] * plan.microbatches
          + it["p2p_exposed"] + it["dp_exposed"], "s", "lower")
    r.add("exposed_comm_layer", it["exposed_layer"], "s", "lower")
    r.add("exposed_fraction", 100.0 * it["exposed_layer"] / it["layer_time"] if it["layer_time"] else 0.0, "%",
          "lower")
    r.add("hidden_fraction", 100.0 * it["hidden_fraction"], "%", "higher")
    r.add("comm_layer", it["comm_layer"], "s", "none")
    r.add("compute_layer", it["compute_layer"], "s", "none")
    r.add("layer_time", it["layer_time"], "s", "lower")
    r.add("peak_memory", it["peak_memory"], "B", "lower")
    r.add("dp_allreduce_time", it["dp_time"], "s", "lower")
    r.add("microbatches", plan.microbatches, "1", "none")
    r.add("dp_used", plan.dp, "1", "none")  # the resolved degree: dp=None is the profile's, at most 4
    r.artifacts["plan"] = {"tp": plan.tp, "pp": plan.pp, "dp": plan.dp, "mbs": plan.mbs, "seq": plan.seq,
                           "gbs": plan.gbs, "fold": fold(int(it["table"].spec["layers"]), plan.pp)}
    if scenario.variant.startswith("dhelix"):
        _, si = pair_dp(it["fwd"], it["bwd"], float(scenario.params["sigma"]))
        r.artifacts["si_plan"] = [[it["fwd"][i].name if i is not None else None,
                                   it["bwd"][j].name if j is not None else None] for i, j in si]
    return r


def evaluate(scenario) -> Result:
    """Model fidelity: the closed-form iteration on the scenario's profile."""
    it = iteration(scenario)
    if it["peak_memory"] > it["capacity"]:
        raise ParameterError(f"dhelix: the plan needs {it['peak_memory'] / 1e9:.1f} GB per GPU, "
                             f"profile {scenario.profile.name!r} has {it['capacity'] / 1e9:.1f} GB")
    return to_result(it, scenario)
