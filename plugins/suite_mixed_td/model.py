"""Mixed-TD's cost model: a layer-pipelined (fpgaConvNet-style) dataflow accelerator on one FPGA,
and the evolutionary search over per-layer decompositions.

Pure functions from (layer table, FPGA resources, parameters) to metrics. Units: cycles, DSP
slices, bytes, seconds, images/s (batch 1, steady state).

Model
-----
* **Stages.** Every convolution (and the fc layer) of the network is one pipeline stage; a
  decomposed target layer becomes 2 (SVD) or 4 (CPD) stages, its factor layers
  (:func:`suite_mixed_td.decompose.factor_layers`). The pipeline holds the whole network (one
  partition, batch 1; the authors' optimiser settings, ``fpga_utils.py`` [Yu23]).
* **Folding** [Venieris16]. A stage with ``cin_g = cin / groups`` input channels per group,
  ``cout`` filters and a ``kh x kw`` kernel computes ``ho wo cout cin_g kh kw`` MACs per image with
  parallelism ``p = coarse_in x coarse_out x fine``, ``coarse_in | cin_g``, ``coarse_out | cout``,
  ``fine | kh kw``: ``cycles = MACs / p``, ``DSPs = ceil(p x dsp_per_mac)``.
* **Greedy** (after fpgaConvNet's optimiser, which raises the folding of the slowest node while
  resources allow): starting from all foldings 1, repeatedly raise the slowest stage one rung of
  its *ladder* (its next folding, the cheapest of "next divisor of fine / coarse_in / coarse_out")
  while the DSP total stays within the budget. The ladder does not reach every product of
  divisors, so the greedy can be worse than a brute force over all foldings (a test pins such a
  case). Because each stage's ladder is fixed, the greedy's final level is the smallest ``T`` with
  ``sum_s DSP_s(T) <= budget``, ``DSP_s(T)`` the cheapest rung with ``cycles <= T``; the
  vectorised evaluator finds it by bisection, the reference :func:`greedy_fold` by stepping.
* **Memory.** 8-bit weights (the authors' block floating point) are held on chip (BRAM18 x 18 Kib +
  URAM x 288 Kib, or ``[ext.fpga] on_chip_memory``). Weights beyond that spill to DRAM and are
  streamed once per image: ``t_dram = (W - M_onchip) / BW_dram``
  (:func:`suite.perf.transfer_time`).
* **Throughput** ``= 1 / max(T / f_clk, t_dram)`` images/s; ``throughput_per_dsp`` = throughput /
  DSPs used.
* **Search** (``search.py``, ``evo_agent.py`` [Yu23]): 100 random first designs drawn with the
  authors' MAC-ratio prior (normal over 0.05-wide MAC-ratio bins, mean ``ratio - sample_bias -
  macs_latency_bias``, sd 0.15), then per generation 25 parents, 50 mutants (each layer re-drawn
  with probability 0.2) and 50 uniform crossovers. Feasible: MACs <= ``macs_target`` x dense and
  throughput >= dense / ``ratio``. The authors rank by top-1 on 50,000 ImageNet images; offline we
  rank by an accuracy proxy, the kept-MAC score ``sum_l log(MACs_l / MACs_l^dense)`` (less
  compression, more accuracy), ties broken by throughput per DSP. The proxy cannot tell SVD from
  CPD at equal MACs: mixed vs single-method differences in this model come from how the factor
  layers map onto the folding only.

References
----------
.. [Yu23] Z. Yu, C.-S. Bouganis, "Mixed-TD", FPL 2023 (arXiv 2306.05021), and the authors' code
   ``Yu-Zhewen/Mixed-TD`` (``search.py``, ``evo_agent.py``, ``fpga_utils.py``, ``decomposition/``):
   search settings, candidate prior and the U250 optimiser configuration (code, secondary source).
.. [Venieris16] S. I. Venieris, C.-S. Bouganis, "fpgaConvNet: A Framework for Mapping
   Convolutional Neural Networks on FPGAs", FCCM 2016: layer-per-stage streaming pipeline,
   coarse/fine folding, throughput set by the slowest stage.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from suite.api import transfer_time

from suite_mixed_td.constants import DSP_PER_MAC  # the declaration's default, read without this module
from suite_mixed_td.decompose import (
    FactorLayer,
    Geometry,
    Scheme,
    candidate_ranks,
    dense_macs,
    divisors,
    factor_layers,
    schemes_for,
)

__all__ = [
    "DSP_PER_MAC",
    "WEIGHT_BITS",
    "METHODS",
    "PRIORS",
    "Resources",
    "resources_of",
    "ladder",
    "all_foldings",
    "Candidate",
    "Network",
    "build_network",
    "is_target",
    "greedy_fold",
    "brute_force_fold",
    "evaluate_designs",
    "design_metrics",
    "search",
    "SearchResult",
]

#: Weight word width (the authors' optimiser runs with 8-bit weights, ``fpga_utils.py`` [Yu23]).
WEIGHT_BITS = 8
#: ``--method`` of each variant (``search.py`` [Yu23]).
METHODS = {"dense": (), "svd-only": ("svd",), "cpd-only": ("cpd",), "mixed-td": ("svd", "cpd")}
#: (sample_bias, macs_latency_bias) of the authors' first-generation prior (``search.py`` [Yu23]):
#: by model family, and "cp" when the method is CP only.
PRIORS = {("resnet", "mixed"): (0.10, 0.23), ("resnet", "cp"): (0.20, 0.30),
          ("repvgg", "mixed"): (0.15, 0.23), ("repvgg", "cp"): (0.20, 0.35)}
_INFEASIBLE = 1e18  # DSPs of a level a candidate's stages cannot reach
_BRAM18_BITS = 18 * 1024
_URAM_BITS = 288 * 1024


# --------------------------------------------------------------------------- resources


@dataclass(frozen=True)
class Resources:
    """FPGA resources the model reads: DSP slices, on-chip weight capacity (B), design clock
    (Hz), off-chip bandwidth (B/s)."""

    dsps: int
    on_chip_bytes: float
    clock: float
    dram_bw: float


def resources_of(profile, dsp_budget: int | None = None) -> Resources:
    """The :class:`Resources` of a profile's ``[ext.fpga]`` table.

    On-chip capacity: ``on_chip_memory`` if given, else ``bram18 x 18 Kib + uram x 288 Kib``;
    bandwidth: ``[ext.fpga] memory_bandwidth`` (what the toolflow assumes), else the device's.

    Raises
    ------
    suite.Skip
        The profile has no ``[ext.fpga]`` table, or lacks a clock.
    """
    from suite.api import Skip

    fp = (profile.ext or {}).get("fpga") if profile is not None else None
    if not fp:
        name = profile.name if profile is not None else None
        raise Skip(f"mixed-td: profile {name!r} has no [ext.fpga] table (DSP slices, BRAM/URAM, clock); "
                   f"use an FPGA profile such as xilinx-alveo-u250")
    if fp.get("clock") is None:
        raise Skip(f"mixed-td: profile {profile.name!r}: [ext.fpga] has no clock")
    onchip = fp.get("on_chip_memory")
    if onchip is None:
        onchip = ((fp.get("bram18") or 0) * _BRAM18_BITS + (fp.get("uram") or 0) * _URAM_BITS) / 8
    bw = fp.get("memory_bandwidth") or (profile.device.memory_bandwidth if profile.device else None)
    if not bw:
        raise Skip(f"mixed-td: profile {profile.name!r}: no memory bandwidth ([ext.fpga] or [device])")
    dsps = int(fp["dsp_slices"]) if dsp_budget is None else int(dsp_budget)
    return Resources(dsps=dsps, on_chip_bytes=_si(profile, "on_chip_memory", onchip, "bytes"),
                     clock=_si(profile, "clock", fp["clock"], "frequency"),
                     dram_bw=_si(profile, "memory_bandwidth", bw, "bandwidth"))


def _si(profile, key: str, value, dim: str) -> float:
    """An ``[ext.fpga]`` figure in SI units: an override may leave a string with a unit there
    (``with_overrides({"ext.fpga.clock": "100 MHz"})``); a bad one is one line naming the field."""
    from suite.api import ProfileError, parse_quantity

    try:
        return parse_quantity(value, dim)
    except ValueError as e:
        raise ProfileError(f"profile {profile.name!r}: field ext.fpga.{key}: {e}") from None



def _row_keys(bp: np.ndarray, width: int) -> dict:
    """``keys``: the breakpoint rows laid end to end on one ascending axis, row ``c`` shifted by
    ``c x span`` (``span`` = the largest breakpoint + 1), so one :func:`numpy.searchsorted` counts
    the breakpoints <= T of every (design, candidate) at once. Exact only for non-negative
    integer breakpoints (cycles are integers: every folding divides the stage's MACs) whose
    shifted values stay below 2**53; otherwise ``keys`` is None and the caller bisects row by row."""
    rows = len(bp) // max(width, 1)
    span = float(bp.max()) + 1.0 if len(bp) else 1.0
    exact = len(bp) and bp.min() >= 0 and np.array_equal(bp, np.floor(bp)) and rows * span < 2.0 ** 53
    keys = bp + np.repeat(np.arange(rows, dtype=float) * span, width) if exact else None
    return {"keys": keys, "span": span}


# --------------------------------------------------------------------------- folding


def _stage_dims(fl: FactorLayer) -> tuple[int, int, int, int]:
    """(cin per group, cout, kernel elements, output pixels) of a stage."""
    return fl.cin // fl.groups, fl.cout, fl.kh * fl.kw, fl.ho * fl.wo


@functools.lru_cache(maxsize=65536)
def _ladder_dims(cin_g: int, cout: int, k: int) -> tuple[tuple[int, ...], ...]:
    """The rungs ``(fine, coarse_in, coarse_out)`` of :func:`ladder`, from (1, 1, 1) (every list of
    divisors starts at 1): at each step the dimension whose next divisor gives the smallest product
    of the three, ties to the earlier of fine, coarse_in, coarse_out."""
    dims = (divisors(k), divisors(cin_g), divisors(cout))
    idx, cur = [0, 0, 0], [1, 1, 1]
    rungs = [(1, 1, 1)]
    while True:
        best, pick = 0, -1
        for d in (0, 1, 2):
            if idx[d] + 1 < len(dims[d]):
                prod = dims[d][idx[d] + 1] * cur[d - 1] * cur[d - 2]  # the other two, in some order
                if pick < 0 or prod < best:
                    best, pick = prod, d
        if pick < 0:
            return tuple(rungs)
        idx[pick] += 1
        cur[pick] = dims[pick][idx[pick]]
        rungs.append((cur[0], cur[1], cur[2]))


def ladder(fl: FactorLayer) -> tuple[np.ndarray, np.ndarray]:
    """The greedy's folding ladder of one stage: parallelism ``p`` (increasing) and cycles per
    image ``MACs / p`` (decreasing) at each rung, from (1, 1, 1) to full unrolling.

    Each rung raises the one of fine (| kh kw), coarse_in (| cin/groups), coarse_out (| cout)
    whose next divisor gives the smallest product (ties: fine, then coarse_in, then coarse_out).
    """
    cin_g, cout, k, _pix = _stage_dims(fl)
    p, pf = _ladder_parallelism(cin_g, cout, k)
    return p, fl.macs / pf


@functools.lru_cache(maxsize=65536)
def _ladder_parallelism(cin_g: int, cout: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The rungs' parallelism ``fine x coarse_in x coarse_out`` (int64, read-only) and the same as
    floats, per stage shape: the 16,100 ladders of resnet-18 and repvgg-a0 took 0.077 -> 0.026 s
    (docs/performance.md, "Reproduce, 0.3.7")."""
    p = np.array([a * b * c for a, b, c in _ladder_dims(cin_g, cout, k)], dtype=np.int64)
    pf = p.astype(float)
    p.flags.writeable = pf.flags.writeable = False
    return p, pf


def all_foldings(fl: FactorLayer) -> np.ndarray:
    """Every distinct parallelism ``fine x coarse_in x coarse_out`` of a stage (sorted)."""
    cin_g, cout, k, _ = _stage_dims(fl)
    ps = {a * b * c for a in divisors(k) for b in divisors(cin_g) for c in divisors(cout)}
    return np.array(sorted(ps), dtype=np.int64)


def _dsp(p, dsp_per_mac: float):
    return np.ceil(np.asarray(p, dtype=float) * dsp_per_mac - 1e-9).astype(np.int64)


def greedy_fold(stages: list[FactorLayer], budget: int, dsp_per_mac: float = DSP_PER_MAC
                ) -> tuple[float, int, list[int]] | None:
    """The reference greedy, step by step: raise the slowest stage one rung while the DSP total
    fits in *budget*; then set every stage to the cheapest rung that still meets the final level
    (stages tied at the slowest level were raised past it one by one; the DSPs they do not need
    are released, so the design's DSP count is what its throughput requires).

    Returns
    -------
    (cycles, dsps, rungs) : the slowest stage's cycles per image, DSPs used, each stage's rung;
    or None when even folding 1 everywhere exceeds the budget.
    """
    lads = [ladder(s) for s in stages]
    rung = [0] * len(stages)
    dsps = [int(_dsp(l[0][0], dsp_per_mac)) for l in lads]
    if sum(dsps) > budget:
        return None
    while True:
        cyc = [l[1][r] for l, r in zip(lads, rung)]
        s = int(np.argmax(cyc))
        if rung[s] + 1 >= len(lads[s][0]):
            break
        new = int(_dsp(lads[s][0][rung[s] + 1], dsp_per_mac))
        if sum(dsps) - dsps[s] + new > budget:
            break
        rung[s] += 1
        dsps[s] = new
    level = max(l[1][r] for l, r in zip(lads, rung))
    # release what the level does not need (ties leave stages raised past it): cheapest rung <= level
    rung = [int(np.argmax(l[1] <= level)) for l in lads]
    dsps = [int(_dsp(l[0][r], dsp_per_mac)) for l, r in zip(lads, rung)]
    return float(level), int(sum(dsps)), rung


def brute_force_fold(stages: list[FactorLayer], budget: int, dsp_per_mac: float = DSP_PER_MAC
                     ) -> tuple[float, int] | None:
    """The best folding over every product of divisors of every stage (exhaustive; small layers
    only): the smallest slowest-stage cycles with DSPs <= budget, and the fewest DSPs reaching it."""
    import itertools

    opts = [all_foldings(s) for s in stages]
    best = None
    for combo in itertools.product(*opts):
        d = int(sum(_dsp(p, dsp_per_mac) for p in combo))
        if d > budget:
            continue
        cyc = max(s.macs / p for s, p in zip(stages, combo))
        if best is None or cyc < best[0] - 1e-9 or (abs(cyc - best[0]) <= 1e-9 and d < best[1]):
            best = (cyc, d)
    return best


# --------------------------------------------------------------------------- network


def is_target(layer) -> bool:
    """A layer the authors decompose: a 3x3 conv, groups 1, more than 3 input channels
    (``svd_target_module_filter`` [Yu23])."""
    return (layer.kind == "conv" and tuple(layer.attrs.get("kernel", ())) == (3, 3)
            and int(layer.attrs.get("groups", 1)) == 1 and layer.input_shape[0] > 3)


@dataclass(frozen=True)
class Candidate:
    """One per-layer choice: scheme, rank, its factor layers (stages), MACs and weights."""

    scheme: Scheme
    rank: int
    stages: tuple[FactorLayer, ...]
    macs: int
    params: int

    def label(self) -> str:
        return "keep" if self.scheme.kind == "keep" else f"{self.scheme}@{self.rank}"


@dataclass
class Network:
    """The search space of one workload: per target layer its candidates (index 0 = keep), the
    fixed stages (other convs, fc), and the padded stage tables the vectorised evaluator uses."""

    name: str
    layers: list[Geometry]
    candidates: list[list[Candidate]]
    fixed: list[FactorLayer]
    dense_macs: int
    # vectorised tables (built by _tables)
    stage_ids: np.ndarray = field(default=None, repr=False)  # (L, Kmax, 4) global stage id, 0 = null
    fixed_ids: np.ndarray = field(default=None, repr=False)  # (S_fixed,)
    P: np.ndarray = field(default=None, repr=False)  # (S_all, R) parallelism per rung
    CY: np.ndarray = field(default=None, repr=False)  # (S_all, R) cycles per rung
    W: np.ndarray = field(default=None, repr=False)  # (S_all,) weights per stage
    cand_macs: np.ndarray = field(default=None, repr=False)  # (L, Kmax)
    n_cands: np.ndarray = field(default=None, repr=False)  # (L,)

    def dsp_table(self, dsp_per_mac: float) -> np.ndarray:
        """DSPs of every stage at every rung (cached per dsp_per_mac)."""
        cache = getattr(self, "_dsps", None) or {}
        if dsp_per_mac not in cache:
            ds = _dsp(self.P, dsp_per_mac)
            ds[0] = 0
            cache[dsp_per_mac] = ds
            self._dsps = cache
        return cache[dsp_per_mac]

    def cand_tables(self, dsp_per_mac: float) -> dict:
        """Per candidate (and one group for the fixed stages) the DSPs its stages need at every level
        where that changes, a step function of the level T (cached per ``dsp_per_mac``).

        Keys: ``bp`` (flat, row c holds candidate c's breakpoints ascending, padded with the last),
        ``dsp`` (DSP total at each breakpoint; ``_INFEASIBLE`` below the level its stages can reach),
        ``width``, ``cid[l, k]`` (candidate id of layer l's k-th choice), ``fixed_id``, and per
        candidate ``hi`` / ``lo`` (slowest stage at folding 1 / fully unrolled), ``weights``, ``macs``.
        """
        cache = getattr(self, "_ctab", None) or {}
        if dsp_per_mac in cache:
            return cache[dsp_per_mac]
        DS = self.dsp_table(dsp_per_mac)
        cid = np.zeros(self.stage_ids.shape[:2], dtype=np.int64)
        c = 0
        for l in range(len(self.candidates)):
            for k in range(len(self.candidates[l])):
                cid[l, k] = c
                c += 1
        ids = np.concatenate([self.stage_ids[l, :len(r)] for l, r in enumerate(self.candidates)]
                             ) if c else np.zeros((0, self.stage_ids.shape[2]), np.int64)
        fixed = _step_function(self.CY, DS, self.W, [int(i) for i in self.fixed_ids])
        stacked = _step_functions_stacked(self.CY, DS, self.W, ids)
        if stacked is None:  # cycles not integer or not nonincreasing along the rungs: row by row
            rows = [_step_function(self.CY, DS, self.W, [int(i) for i in row if i]) for row in ids] + [fixed]
            bps, dss, hi, lo, wts = (list(x) for x in zip(*rows))
            width = max(len(b) for b in bps)
            bp = np.concatenate([np.concatenate([b, np.full(width - len(b), b[-1])]) for b in bps])
            dsp = np.concatenate([np.concatenate([d, np.full(width - len(d), d[-1])]) for d in dss])
        else:
            b, d, n, hi_c, lo_c, w_c = stacked
            width = max(b.shape[1], len(fixed[0]))
            bp = np.concatenate([_pad_last(b, n, width).reshape(-1), _pad_last(fixed[0][None, :], [len(fixed[0])], width)[0]])
            dsp = np.concatenate([_pad_last(d, n, width).reshape(-1), _pad_last(fixed[1][None, :], [len(fixed[1])], width)[0]])
            hi, lo, wts = hi_c.tolist() + [fixed[2]], lo_c.tolist() + [fixed[3]], w_c.tolist() + [fixed[4]]
        macs = np.concatenate([self.cand_macs[l, :len(self.candidates[l])] for l in range(len(self.candidates))]
                              + [np.array([float(sum(s.macs for s in self.fixed))])])
        out = {"bp": bp, "dsp": dsp, "width": width, "cid": cid, "fixed_id": c, "hi": np.array(hi),
               "lo": np.array(lo), "weights": np.array(wts), "macs": macs, **_row_keys(bp, width)}
        cache[dsp_per_mac] = out
        self._ctab = cache
        return out

    def stages_of(self, design) -> list[FactorLayer]:
        out = list(self.fixed)
        for l, k in enumerate(design):
            out += list(self.candidates[l][int(k)].stages)
        return out

    def macs_of(self, design) -> int:
        fixed = sum(s.macs for s in self.fixed)
        return fixed + sum(self.candidates[l][int(k)].macs for l, k in enumerate(design))

    def params_of(self, design) -> int:
        fixed = sum(s.params for s in self.fixed)
        return fixed + sum(self.candidates[l][int(k)].params for l, k in enumerate(design))

    def describe(self, design) -> list[dict]:
        return [{"layer": g.name, "choice": self.candidates[l][int(k)].label(),
                 "macs_ratio": self.candidates[l][int(k)].macs / dense_macs(g)}
                for l, (g, k) in enumerate(zip(self.layers, design))]


def _step_function(CY: np.ndarray, DS: np.ndarray, W: np.ndarray, g: list[int]
                   ) -> tuple[np.ndarray, np.ndarray, float, float, float]:
    """One candidate's (or the fixed layers') step function of the level T, from its stages *g*
    (rows of the stage tables ``CY`` cycles, ``DS`` DSPs per rung, ``W`` weights): ``(b, d, hi,
    lo, weights)``: its distinct cycle counts ``b`` ascending (the breakpoints), the DSPs ``d[j]``
    its stages need at level ``b[j]`` (each stage at its first rung whose cycles are <= b[j];
    ``_INFEASIBLE`` below the level all of them can reach), the slowest stage at folding 1 and
    fully unrolled, the stages' weights. No stage: ``([0], [0], 0, 0, 0)``."""
    if not g:
        return np.array([0.0]), np.array([0.0]), 0.0, 0.0, 0.0
    cy = CY[g]  # (stages, rungs), gathered once
    b = np.unique(cy)
    rung = (cy[:, None, :] > b[None, :, None]).sum(axis=2)  # (stages, breakpoints)
    reach = cy[:, -1].max()
    # DS[g] at each stage's rung (take_along_axis's gather, indexed directly)
    d = DS[g][np.arange(len(g))[:, None], np.minimum(rung, cy.shape[1] - 1)].sum(axis=0).astype(float)
    d[b < reach] = _INFEASIBLE
    return b, d, float(cy[:, 0].max()), float(reach), float(W[g].sum())


def _step_functions_stacked(CY: np.ndarray, DS: np.ndarray, W: np.ndarray, ids: np.ndarray
                            ) -> tuple[np.ndarray, ...] | None:
    """:func:`_step_function` of every row of *ids* (``(candidates, slots)`` stage ids, 0 = no
    stage) at once: ``(b, d, n, hi, lo, weights)``, row ``c``'s breakpoints ``b[c, :n[c]]`` and
    DSPs ``d[c, :n[c]]`` (then padding), ``hi``, ``lo``, ``weights`` one per row; None unless every
    stage's cycles are integers, nonincreasing along the rungs and small enough to count exactly
    (then the caller takes the rows one by one).

    The same figures: the breakpoints are each row's sorted distinct cycles; a stage's rung at a
    breakpoint is how many of its rungs have more cycles, counted by one ``searchsorted`` over
    every (row, slot)'s cycles laid end to end (ascending once reversed, each shifted by its
    position x ``span``: exact for integers below 2**53); the DSP sums are of integers (any
    order, the same value) and the weights of integer counts (exact in float64 below 2**53)."""
    C, S = ids.shape
    R = CY.shape[1]
    cy = CY[ids]  # (C, S, R); stage id 0 is the null stage: all-zero cycles and DSPs, weight 0
    live = ids > 0
    span = float(CY.max(initial=0.0)) + 1.0
    if (C == 0 or not np.array_equal(CY, np.floor(CY)) or CY.min(initial=0.0) < 0 or np.any(np.diff(CY, axis=1) > 0)
            or C * S * R * span >= 2.0 ** 53 or np.any(DS[0] != 0) or np.any(CY[0] != 0) or W[0] != 0):
        return None
    vals = np.sort(np.where(live[:, :, None], cy, np.inf).reshape(C, S * R), axis=1)
    new = np.ones(vals.shape, bool)
    new[:, 1:] = vals[:, 1:] != vals[:, :-1]
    new &= np.isfinite(vals)
    nb = new.sum(axis=1)  # breakpoints per row (0: no stage)
    width = max(int(nb.max()), 1)
    b = np.zeros((C, width))
    r_idx, c_idx = np.nonzero(new)
    b[r_idx, (np.cumsum(new, axis=1) - 1)[r_idx, c_idx]] = vals[r_idx, c_idx]
    b = _pad_last(b, np.maximum(nb, 1), width)  # the queries ascending along each row
    # per live (row, slot): its rungs with more cycles than each breakpoint of the row, R minus
    # those <= it in the stage's cycles reversed (ascending), the stages laid end to end
    pc, ps = np.nonzero(live)  # row-major: each row's live slots together, rows in order
    P = len(pc)
    shift = (np.arange(P, dtype=float) * span)[:, None]
    keys = (cy[pc, ps, ::-1] + shift).reshape(-1)
    le = np.searchsorted(keys, (b[pc] + shift).reshape(-1), side="right").reshape(P, width) - (np.arange(P) * R)[:, None]
    per_stage = DS[ids[pc, ps][:, None], np.minimum(R - le, R - 1)]  # (P, width) int DSPs
    d = np.zeros((C, width))
    rows = np.flatnonzero(nb)
    if P:
        d[rows] = np.add.reduceat(per_stage, np.searchsorted(pc, rows), axis=0).astype(float)
    reach = np.where(live, cy[:, :, -1], -np.inf).max(axis=1)
    d[b < reach[:, None]] = _INFEASIBLE
    hi = np.where(live, cy[:, :, 0], -np.inf).max(axis=1)
    wts = W[ids].sum(axis=1)
    empty = nb == 0  # no stage: one breakpoint 0 needing 0 DSPs, as _step_function gives
    b[empty, 0] = d[empty, 0] = hi[empty] = reach[empty] = 0.0
    return b, d, np.maximum(nb, 1), hi, reach, wts


def _pad_last(a: np.ndarray, n, width: int) -> np.ndarray:
    """Rows of *a* cut to their first ``n[r]`` entries and padded with the last of them to *width*."""
    n = np.asarray(n)
    cols = np.minimum(np.arange(width)[None, :], n[:, None] - 1)
    return a[np.arange(len(a))[:, None], cols]


def _fixed_stage(layer) -> FactorLayer | None:
    if layer.kind == "conv":
        g = Geometry.of_layer(layer)
        return FactorLayer(g.C, g.F, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, int(layer.attrs.get("groups", 1)),
                           g.ho, g.wo)
    if layer.kind == "fc":
        return FactorLayer(int(layer.input_shape[0]), int(layer.output_shape[0]), 1, 1, 1, 1, 0, 0, 1, 1, 1)
    return None


def build_network(workload, methods=("svd", "cpd")) -> Network:
    """The search space of a layer-table workload under the variant's methods (cached)."""
    key = (workload.name, workload.content_hash(), tuple(methods))
    net = _NETS.get(key)
    if net is None:
        if len(_NETS) > 32:
            _NETS.clear()
        net = _NETS[key] = _build_network(workload, tuple(methods))
    return net


_NETS: dict = {}


def _build_network(workload, methods: tuple[str, ...]) -> Network:
    layers, cands, fixed = [], [], []
    for layer in workload.layers:
        if is_target(layer):
            g = Geometry.of_layer(layer)
            keep = Candidate(Scheme("keep"), 0, tuple(factor_layers(g, Scheme("keep"), 0)), dense_macs(g),
                             g.F * g.C * g.kh * g.kw)
            row = [keep]
            for s in schemes_for(g, methods):
                for r in candidate_ranks(g, s):
                    fls = tuple(factor_layers(g, s, r))
                    row.append(Candidate(s, r, fls, sum(f.macs for f in fls), sum(f.params for f in fls)))
            layers.append(g)
            cands.append(row)
        else:
            st = _fixed_stage(layer)
            if st is not None:
                fixed.append(st)
    dense = sum(s.macs for s in fixed) + sum(row[0].macs for row in cands)
    net = Network(workload.name, layers, cands, fixed, dense)
    _tables(net)
    return net


def _tables(net: Network) -> None:
    stages: list[FactorLayer | None] = [None]  # id 0: the null stage (no work, no DSP)
    kmax = max((len(r) for r in net.candidates), default=1)
    ids = np.zeros((len(net.candidates), kmax, 4), dtype=np.int64)
    macs = np.zeros((len(net.candidates), kmax), dtype=float)
    for l, row in enumerate(net.candidates):
        for k, c in enumerate(row):
            for j, st in enumerate(c.stages):
                ids[l, k, j] = len(stages)
                stages.append(st)
            macs[l, k] = c.macs
    fixed_ids = np.arange(len(stages), len(stages) + len(net.fixed), dtype=np.int64)
    stages += net.fixed
    lads = [ladder(s) if s is not None else (np.array([0]), np.array([0.0])) for s in stages]
    rmax = max(len(p) for p, _ in lads)
    P = np.zeros((len(stages), rmax), dtype=np.int64)
    CY = np.zeros((len(stages), rmax), dtype=float)
    for i, (p, cy) in enumerate(lads):
        P[i, :len(p)], P[i, len(p):] = p, p[-1]
        CY[i, :len(cy)], CY[i, len(cy):] = cy, cy[-1]
    net.stage_ids, net.fixed_ids, net.P, net.CY = ids, fixed_ids, P, CY
    net.W = np.array([0 if s is None else s.params for s in stages], dtype=float)
    net.cand_macs = macs
    net.n_cands = np.array([len(r) for r in net.candidates], dtype=np.int64)


# --------------------------------------------------------------------------- evaluation


def evaluate_designs(net: Network, designs: np.ndarray, res: Resources, dsp_per_mac: float = DSP_PER_MAC,
                     weight_bits: int = WEIGHT_BITS, method: str = "searchsorted") -> dict[str, np.ndarray]:
    """Vectorised evaluation of many designs (one candidate index per target layer each).

    The greedy's final level is the smallest integer ``T`` (cycles are integers: every folding
    divides the stage's MACs) with ``sum_s DSP_s(T) <= budget``; found by integer bisection over T,
    each step a vectorised binary search in every chosen candidate's precomputed step function
    ``DSP_c(T)`` (:meth:`Network.cand_tables`).

    Parameters
    ----------
    designs : int ndarray, shape (n, L)
    res : Resources
    dsp_per_mac : float
        DSP slices per unit of MAC parallelism.
    method : {"searchsorted", "bisect"}
        How a level's step is found in each candidate's table: one searchsorted over all rows
        (default; exact for integer cycles, else it falls back) or the row-by-row branch-free
        bisection (its oracle). Both give the same counts, so the same figures bit for bit.

    Returns
    -------
    dict of ndarray, shape (n,)
        ``cycles`` (slowest stage, per image), ``dsps``, ``throughput`` (images/s, 0 when even
        folding 1 exceeds the DSP budget), ``macs``, ``weight_bytes``, ``spilled_bytes``,
        ``feasible_fold`` (bool).
    """
    if method not in ("searchsorted", "bisect"):
        raise ValueError(f"evaluate_designs: method must be 'searchsorted' or 'bisect', got {method!r}")
    designs = np.atleast_2d(np.asarray(designs, dtype=np.int64))
    t = net.cand_tables(dsp_per_mac)
    st = _StepTables(t, designs, method)
    budget = res.dsps
    hi = t["hi"][st.cids].max(axis=1)  # folding 1 everywhere (integer cycles)
    lo = t["lo"][st.cids].max(axis=1)  # full unrolling everywhere
    feas_hi = st.dsps_of(hi) <= budget
    lo_ok = st.dsps_of(lo) <= budget
    T = np.where(lo_ok, lo, _lowest_fitting_level(st, t, lo, hi, budget, dsp_per_mac))
    cnt = st.at(T)
    dsps = st.dsps_at(cnt)
    ok = feas_hi & (dsps <= budget)
    # the slowest stage's cycles: the largest breakpoint <= T over the design's candidates
    cycles = np.where(cnt > 0, st.bp[st.rows + np.maximum(cnt - 1, 0)], 0.0).max(axis=1)
    w_bytes = t["weights"][st.cids].sum(axis=1) * weight_bits / 8
    spilled = np.maximum(0.0, w_bytes - res.on_chip_bytes)
    interval = np.maximum(cycles / res.clock, spilled / res.dram_bw)
    tput = np.where(ok, 1.0 / interval, 0.0)
    macs = t["macs"][st.cids].sum(axis=1)
    return {"cycles": cycles, "dsps": np.where(ok, dsps, 0).astype(float), "throughput": tput, "macs": macs,
            "weight_bytes": w_bytes, "spilled_bytes": spilled, "feasible_fold": ok}


class _StepTables:
    """Every design's chosen candidates (plus the fixed layers) as rows of the precomputed step
    functions ``DSP_c(T)``: :meth:`at` counts each row's breakpoints <= T, :meth:`dsps_at` sums the
    DSPs at those counts per design."""

    def __init__(self, t: dict, designs: np.ndarray, method: str) -> None:
        n, L = designs.shape
        self.width, self.bp, self.dd = t["width"], t["bp"], t["dsp"]
        self.cids = np.concatenate([t["cid"][np.arange(L)[None, :], designs] if L else np.zeros((n, 0), np.int64),
                                    np.full((n, 1), t["fixed_id"])], axis=1)
        self.rows = self.cids * self.width
        self.steps = [1 << k for k in range(int(self.width).bit_length(), -1, -1)]
        self.keys, self.span = t["keys"], t["span"]
        self.shift = self.cids * self.span
        self.at = self.bisect_at if self.keys is None or method == "bisect" else self.search_at
        # the level table pays from the second evaluation on (a search's); one alone counts faster
        t["evaluations"] = t.get("evaluations", 0) + 1
        self.levels = _level_table(t) if self.at == self.search_at and t["evaluations"] > 1 else None

    def bisect_at(self, T: np.ndarray) -> np.ndarray:
        """Per (design, candidate): number of breakpoints <= T (branch-free binary search)."""
        tt = T[:, None]
        cnt = np.zeros(self.cids.shape, dtype=np.int64)
        for st in self.steps:
            nxt = cnt + st
            probe = self.bp[self.rows + np.minimum(nxt, self.width) - 1]
            cnt = np.where((nxt <= self.width) & (probe <= tt), nxt, cnt)
        return cnt

    def search_at(self, T: np.ndarray) -> np.ndarray:
        """The same counts by one searchsorted over the shifted rows (:func:`_row_keys`): integer
        breakpoints make ``bp <= T`` the same test as ``bp <= floor(T)``; T is clipped into
        [-0.5, span - 1] so a query never leaves its row (exact integers below 2**53)."""
        q = self.shift + np.clip(np.floor(T), -0.5, self.span - 1.0)[:, None]
        return np.searchsorted(self.keys, q, side="right") - self.rows

    def dsps_at(self, cnt: np.ndarray) -> np.ndarray:
        return np.where(cnt == 0, _INFEASIBLE, self.dd[self.rows + np.maximum(cnt - 1, 0)]).sum(axis=1)

    def dsps_of(self, T: np.ndarray) -> np.ndarray:
        """``dsps_at(at(T))``: with a level table (:func:`_level_table`), its column of the largest
        breakpoint <= T (no count changes between the two, so the same entries, summed in the same
        order); else by counting."""
        if self.levels is None:
            return self.dsps_at(self.at(T))
        U, F = self.levels
        col = np.searchsorted(U, T, side="right") - 1
        if col.min(initial=0) < 0:  # below every breakpoint: count as the step tables do
            return self.dsps_at(self.at(T))
        return F[self.cids, col[:, None]].sum(axis=1)


def _lowest_fitting_level(st: _StepTables, t: dict, lo: np.ndarray, hi: np.ndarray, budget: float,
                          dsp_per_mac: float) -> np.ndarray:
    """Per design, the smallest level T in [a, hi] whose DSPs fit the budget, or hi when none does.
    ``a``: no level below dsp_per_mac x sum(MACs) / budget fits (each stage needs MACs / T
    parallelism), nor below the full-unrolling level ``lo``.

    The DSP total is a nonincreasing step function of T that changes only at the candidates'
    breakpoints, so the answer is ``a`` itself or a breakpoint. With integer breakpoints (the
    searchsorted path) it is found by bisecting the index of the network's sorted breakpoints in
    (a, hi] against a table of every candidate's DSPs at every breakpoint (:func:`_level_table`):
    about log2(870) = 10 steps, each one gather and one sum, instead of the ~27 steps of an integer
    bisection of [a, hi] (:func:`_bisect_level`, kept for the ``bisect`` oracle path and for tables
    too large to hold). Both return the same T for every design, so the same figures bit for bit."""
    a = np.maximum(lo, np.floor(dsp_per_mac * t["macs"][st.cids].sum(axis=1) / max(budget, 1)))
    if st.levels is None:
        return _bisect_level(st, a, hi, budget)
    U, F = st.levels
    j = np.searchsorted(U, hi, side="left")  # hi (folding 1 everywhere) is a breakpoint of the design
    i = np.where(a < hi, np.searchsorted(U, a, side="right"), j)  # the first breakpoint above a
    k = _first_fitting(F, st.cids, i, j, budget)
    fits_a = st.dsps_of(a) <= budget
    fits_hi = F[st.cids, j[:, None]].sum(axis=1) <= budget
    return np.where(a >= hi, hi, np.where(fits_a, a, np.where(fits_hi, U[k], hi)))


def _first_fitting(F: np.ndarray, cids: np.ndarray, i: np.ndarray, j: np.ndarray, budget: float) -> np.ndarray:
    """Per design (row of *cids*), the smallest breakpoint index k in [i, j] whose DSP total (the
    row's candidates' entries of column k of *F*, summed in the order :meth:`_StepTables.dsps_at`
    sums them) fits *budget*; j when none does before it. Bisection: the total is nonincreasing in k."""
    a, b = i.copy(), j.copy()
    while True:
        active = a < b
        if not active.any():
            return b
        mid = (a + b) // 2
        ok = F[cids, mid[:, None]].sum(axis=1) <= budget
        b = np.where(active & ok, mid, b)
        a = np.where(active & ~ok, mid + 1, a)


#: cells (candidates x breakpoints) above which :func:`_level_table` is not built (8 B each: 64 MB)
_LEVEL_TABLE_CELLS = 8_000_000


def _level_table(t: dict) -> tuple[np.ndarray, np.ndarray] | None:
    """``(U, F)``: every distinct breakpoint of the network ascending, and ``F[c, u]`` the DSPs
    candidate row ``c`` needs at level ``U[u]`` (the entry :meth:`_StepTables.dsps_at` takes for
    it there: ``_INFEASIBLE`` below its reach), from the row's count of breakpoints <= ``U[u]``
    (padding included, the count :meth:`_StepTables.search_at` takes; tested against it); None
    without integer breakpoints (the searchsorted path's condition) or above
    :data:`_LEVEL_TABLE_CELLS`. Built once per candidate table (cached in *t*)."""
    if "levels" in t:
        return t["levels"]
    bp, width, keys = t["bp"], t["width"], t["keys"]
    rows = len(bp) // max(width, 1)
    U = np.unique(bp)
    out = None
    if keys is not None and rows * len(U) <= _LEVEL_TABLE_CELLS:
        out = (U, _dsps_at_breakpoints(bp, width, U, t["dsp"]))
    t["levels"] = out
    return out


def _dsps_at_breakpoints(bp: np.ndarray, width: int, U: np.ndarray, dsp: np.ndarray) -> np.ndarray:
    """``F[c, u]``: row ``c``'s DSP entry at its count of breakpoints <= ``U[u]`` (padding
    included), ``_INFEASIBLE`` at count 0. Each breakpoint marks its column of U (every one is in
    U) and a running sum along U counts them; in blocks of rows, so the temporaries stay small."""
    rows, n_u = len(bp) // width, len(U)
    col = np.searchsorted(U, bp)
    F = np.empty((rows, n_u))
    for r0 in range(0, rows, 256):
        r1 = min(rows, r0 + 256)
        marks = np.arange(r1 - r0, dtype=np.int64).repeat(width) * n_u + col[r0 * width:r1 * width]
        cnt = np.bincount(marks, minlength=(r1 - r0) * n_u).reshape(r1 - r0, n_u).cumsum(axis=1)
        at = np.maximum(cnt - 1, 0) + (np.arange(r0, r1, dtype=np.int64) * width)[:, None]
        F[r0:r1] = np.where(cnt == 0, _INFEASIBLE, dsp[at])
    return F


def _bisect_level(st: _StepTables, a: np.ndarray, hi: np.ndarray, budget: float) -> np.ndarray:
    """:func:`_lowest_fitting_level` by integer bisection of [a, hi]; 2x and 8x a are tried as
    upper ends before the folding-1 level."""
    b = hi.copy()  # invariant: b feasible (when folding 1 is), a - 1 infeasible unless lo fits
    for k in (8.0, 2.0):
        trial = np.minimum(np.floor(a * k), hi)
        b = np.where(st.dsps_at(st.at(trial)) <= budget, trial, b)
    while True:
        active = (b - a) > 0.5
        if not active.any():
            return b
        mid = np.floor((a + b) / 2)
        ok = st.dsps_at(st.at(mid)) <= budget
        b = np.where(active & ok, mid, b)
        a = np.where(active & ~ok, mid + 1, a)


def design_metrics(net: Network, design, res: Resources, dsp_per_mac: float = DSP_PER_MAC,
                   weight_bits: int = WEIGHT_BITS) -> dict[str, float]:
    """One design by the reference (scalar) path: :func:`greedy_fold` plus the DRAM bound through
    :func:`suite.perf.transfer_time`. Agrees with :func:`evaluate_designs`."""
    stages = net.stages_of(design)
    g = greedy_fold(stages, res.dsps, dsp_per_mac)
    w_bytes = sum(s.params for s in stages) * weight_bits / 8
    spilled = max(0.0, w_bytes - res.on_chip_bytes)
    t_dram = transfer_time(spilled, res.dram_bw)
    if g is None:
        return {"cycles": math.inf, "dsps": 0, "throughput": 0.0, "weight_bytes": w_bytes, "spilled_bytes": spilled}
    cycles, dsps, _ = g
    interval = max(cycles / res.clock, t_dram)
    return {"cycles": cycles, "dsps": dsps, "throughput": 1.0 / interval, "weight_bytes": w_bytes,
            "spilled_bytes": spilled}


# --------------------------------------------------------------------------- search


@dataclass
class SearchResult:
    """The best design of a search and its figures."""

    design: np.ndarray
    metrics: dict[str, float]
    feasible: bool
    evaluations: int
    generations: int
    history: list[float]


def _prior(net: Network, mean: float, sd: float = 0.15, step: float = 0.05) -> list[np.ndarray]:
    """The authors' first-generation prior (``generate_random_sample`` [Yu23]): candidates binned by
    MAC ratio into (k step, (k+1) step]; each bin gets the normal mass over its interval, shared
    equally by its candidates.

    The normal CDF of the standardised bound ``z`` is ``erfc(-z / sqrt 2) / 2`` (Abramowitz &
    Stegun 1964, 26.2.2 with 7.1.2), by :func:`math.erfc`: ``scipy.stats.norm.cdf(x, mean, sd)``
    to ~1e-14 relative (tested), without importing scipy (0.2-0.25 s of CPU per worker process
    for ``scipy.special``, 1 s for ``scipy.stats``)."""
    def cdf(x: float) -> float:
        return 0.5 * math.erfc(-(x - mean) / sd * math.sqrt(0.5))

    out = []
    for l, row in enumerate(net.candidates):
        base = row[0].macs
        bins = [min(int(math.ceil(c.macs / base / step - 1e-9)) - 1, int(round(1 / step)) - 1) for c in row]
        probs = np.zeros(len(row))
        for b in set(bins):
            members = [i for i, x in enumerate(bins) if x == b]
            mass = cdf((b + 1) * step) - cdf(b * step)
            probs[members] = mass / len(members)
        if probs.sum() <= 0:
            probs[:] = 1.0
        out.append(probs / probs.sum())
    return out


def _memoised(score: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]
              ) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """*score* (designs (n, L) int64 -> score (n,) float, feasible (n,) bool, row by row) evaluated
    once per distinct design of a search: a generation's kids repeat each other and their parents
    (about half of the 50,000 kids of a 500-generation search are repeats), and every figure of a
    row depends on that row alone, so a remembered row gives the same bits as a fresh one."""
    seen: dict[bytes, tuple[float, bool]] = {}

    def cached(designs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        designs = np.ascontiguousarray(designs, dtype=np.int64)
        keys = [row.tobytes() for row in designs]
        new = list(dict.fromkeys(k for k in keys if k not in seen))
        if new:
            rows = np.frombuffer(b"".join(new), dtype=np.int64).reshape(len(new), designs.shape[1])
            s, feas = score(rows)
            seen.update(zip(new, zip(s.tolist(), feas.tolist())))
        return (np.array([seen[k][0] for k in keys], dtype=float),
                np.array([seen[k][1] for k in keys], dtype=bool))

    return cached


def _scorer(net: Network, res: Resources, *, ratio: float, macs_target: float, dsp_per_mac: float,
            objective: str) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The score of :func:`search`: designs (n, L) -> (score (n,), feasible (n,)).

    The constraints come from the dense design: throughput ``>= dense throughput / ratio`` and MACs
    ``<= macs_target x`` the dense network's, and the fold must fit. A feasible design scores its
    kept-MAC accuracy proxy (the sum of ``log(macs / dense macs)`` of its choices) plus 1e-3 of its
    log throughput per DSP (``objective="accuracy-proxy"``), or the log throughput per DSP alone
    (``"per-dsp"``); an infeasible one scores below every feasible one, ``-1e6 - miss``, by how far
    it misses the constraints.
    """
    L = len(net.candidates)
    dense = np.zeros((1, L), dtype=np.int64)
    d0 = evaluate_designs(net, dense, res, dsp_per_mac)
    t_req = float(d0["throughput"][0]) / ratio
    m_req = macs_target * net.dense_macs
    base_macs = net.cand_macs[:, 0]
    log_keep = np.log(np.where(net.cand_macs > 0, net.cand_macs, 1.0) / base_macs[:, None])

    def score(designs):
        ev = evaluate_designs(net, designs, res, dsp_per_mac)
        proxy = log_keep[np.arange(L)[None, :], designs].sum(axis=1) if L else np.zeros(len(designs))
        tpd = np.where(ev["dsps"] > 0, ev["throughput"] / np.maximum(ev["dsps"], 1), 0.0)
        feas = (ev["macs"] <= m_req * (1 + 1e-12)) & (ev["throughput"] >= t_req * (1 - 1e-12)) & ev["feasible_fold"]
        # infeasible designs rank below every feasible one, by how far they miss the constraints
        miss = np.maximum(0, ev["macs"] / m_req - 1) + np.maximum(0, 1 - ev["throughput"] / max(t_req, 1e-300))
        ltpd = np.log(np.maximum(tpd, 1e-300))
        good = proxy + 1e-3 * ltpd if objective == "accuracy-proxy" else ltpd
        s = np.where(feas, good, -1e6 - miss)
        return s, feas

    return score


def _children(par: np.ndarray, nc: np.ndarray, rng: np.random.Generator, *, mutants: int, crossovers: int,
              mutate_prob: float) -> np.ndarray:
    """One generation's children of the parents *par* (P, L): *mutants* copies of random parents
    with each choice redrawn uniformly over its layer's ``nc`` candidates with probability
    *mutate_prob*, then *crossovers* uniform crossovers of two random parents; (mutants + crossovers, L)."""
    pick = rng.integers(0, len(par), size=mutants)
    mut = par[pick].copy()
    mask = rng.random(mut.shape) < mutate_prob
    fresh = (rng.random(mut.shape) * nc[None, :]).astype(np.int64)
    mut[mask] = fresh[mask]
    a = par[rng.integers(0, len(par), size=crossovers)]
    b = par[rng.integers(0, len(par), size=crossovers)]
    cross = np.where(rng.random(a.shape) < 0.5, a, b)
    return np.concatenate([mut, cross])


def search(net: Network, res: Resources, *, ratio: float, macs_target: float, generations: int, seed: int,
           prior_mean: float, dsp_per_mac: float = DSP_PER_MAC, parents: int = 25, mutants: int = 50,
           crossovers: int = 50, mutate_prob: float = 0.2, objective: str = "accuracy-proxy") -> SearchResult:
    """The evolutionary search over per-layer candidates (see the module docstring).

    Parameters
    ----------
    ratio : float
        Throughput constraint: ``throughput >= dense throughput / ratio``.
    macs_target : float
        MAC constraint as a fraction of the dense network's MACs.
    generations : int
        Generation 0 is the random population (``mutants + crossovers`` designs).
    prior_mean : float
        Mean MAC ratio of the first-generation prior.
    objective : {"accuracy-proxy", "per-dsp"}
        What feasible designs are ranked by: the kept-MAC accuracy proxy (the stand-in for the
        authors' top-1), or throughput per DSP alone (the model's ceiling, for the docs' sensitivity).

    Returns
    -------
    SearchResult
        The best design (feasible if any design was), its metrics, evaluation count.
    """
    rng = np.random.default_rng(seed)
    L = len(net.candidates)
    score = _memoised(_scorer(net, res, ratio=ratio, macs_target=macs_target, dsp_per_mac=dsp_per_mac,
                              objective=objective))
    prior = _prior(net, prior_mean)
    n0 = mutants + crossovers
    pop = np.stack([rng.choice(len(p), size=n0, p=p) for p in prior], axis=1) if L else np.zeros((n0, 0), np.int64)
    s, feas = score(pop)
    evals = n0
    history = []
    order = np.argsort(-s, kind="stable")[:parents]
    par, par_s, par_f = pop[order], s[order], feas[order]
    history.append(float(par_s[0]))
    nc = net.n_cands
    for _ in range(1, generations):
        kids = _children(par, nc, rng, mutants=mutants, crossovers=crossovers, mutate_prob=mutate_prob)
        ks, kf = score(kids)
        evals += len(kids)
        allp = np.concatenate([par, kids])
        alls = np.concatenate([par_s, ks])
        allf = np.concatenate([par_f, kf])
        order = np.argsort(-alls, kind="stable")[:parents]
        par, par_s, par_f = allp[order], alls[order], allf[order]
        history.append(float(par_s[0]))
    best = par[0]
    ev = evaluate_designs(net, best[None, :], res, dsp_per_mac)
    m = {k: float(v[0]) for k, v in ev.items()}
    return SearchResult(best, m, bool(par_f[0]), evals, generations, history)
