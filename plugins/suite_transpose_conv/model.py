"""Cost model of the four transpose-convolution variants: MACs, outputs, temporary memory, time.

Counts are closed forms of the algorithms (no execution). Time is a sum of roofline terms
(:func:`suite.perf.roofline_time`, [Williams09]) over the operations a variant issues, in one of
two traffic modes (parameter ``traffic``):

``per-tap`` (default)
    The structure of this suite's reference implementation (:mod:`.ops`), run one operation
    at a time. zero-insert, kernel segregation and unified share its schedule: the set-up copy
    (zero-inserted or padded input), then per output class and column tap one window copy
    (memory-bound) and per tap one GEMM ``(M, Ci) x (Ci, Co)`` accumulating in place; plus,
    for kernel segregation, the interleave of the sub-outputs and, for unified, the write of
    each class. scatter: per tap a GEMM and a strided add. The compiled loop nest the variants
    run for ``Co <= LOOP_MAX_CO`` is priced as the same GEMM schedule (not modelled
    separately). This is what ``suite validate`` compares with the measured execute fidelity.
``fused``
    One kernel per launch that reads its inputs and writes its outputs once, as a GPU
    implementation does: zero-insert = upsample kernel + convolution kernel; kernel
    segregation = ``s^2`` launches each writing a ``ceil(Ho/s) x ceil(Wo/s)`` sub-output, then an
    interleave; unified = one launch writing the output directly [Tida25 abstract].

Plus ``launches x launch_overhead`` (parameter; 0 by default because no profile field states it).

References
----------
.. [Williams09] S. Williams, A. Waterman, D. Patterson, "Roofline", CACM 52(4), 2009.
.. [Tida22] V. S. Tida et al., "Kernel-Segregated Transpose Convolution Operation", arXiv 2209.03704.
.. [Tida25] V. S. Tida et al., "Unified Kernel-Segregated Transpose Convolution Operation",
   arXiv 2502.20493 (abstract: one unified kernel; KS computes extra elements for odd sizes).
.. [Dumoulin16] V. Dumoulin, F. Visin, "A guide to convolution arithmetic", arXiv 1603.07285, §4.
"""

from __future__ import annotations

from dataclasses import dataclass

from suite.api import Result, Scenario, Skip, roofline_time

from .layers import ConvT, layers_of
from .ops import LOOP_MAX_CO, Phase, phase_plan

__all__ = ["macs", "outputs_computed", "extra_outputs", "temp_bytes", "operations", "layer_time",
           "evaluate", "Op"]

ITEMSIZE = {"float32": 4, "float64": 8}


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def macs(l: ConvT, variant: str) -> int:
    """Multiply-accumulates a variant issues for one layer (whole batch).

    Notes
    -----
    * scatter: ``N Ci Co H W k^2`` (every input times every tap).
    * zero-insert: ``N Ci Co Ho Wo k^2`` [Dumoulin16 §4.5].
    * kernel-segregated: ``N Ci Co ceil(Ho/s) ceil(Wo/s) k^2`` (``s^2`` classes, each on the
      ceil grid, ``sum_a ceil((k-a)/s) = k`` taps per axis) [Tida22].
    * unified: ``N Ci Co sum_{r,c} ceil((Ho-r)/s) ceil((Wo-c)/s) T_r T_c`` with
      ``T_r = ceil((k - (r+p) mod s)/s)`` [Tida25].
    """
    base = l.n * l.ci * l.co
    if variant == "scatter":
        return base * l.h * l.w * l.k * l.k
    if variant == "zero-insert":
        return base * l.ho * l.wo * l.k * l.k
    if variant == "kernel-segregated":
        return base * _cdiv(l.ho, l.s) * _cdiv(l.wo, l.s) * l.k * l.k
    if variant == "unified":
        rows, _, _ = phase_plan(l.h, l.k, l.s, l.p, l.op, grid="exact")
        cols, _, _ = phase_plan(l.w, l.k, l.s, l.p, l.op, grid="exact")
        return base * sum(r.count * r.taps for r in rows) * sum(c.count * c.taps for c in cols)
    raise ValueError(f"unknown variant {variant!r}")


def outputs_computed(l: ConvT, variant: str) -> int:
    """Output elements computed per (sample, output channel), before any crop.

    scatter: the uncropped buffer ``((H-1)s + k + max(0, op-p))``-squared; zero-insert and
    unified: ``Ho Wo``; kernel-segregated: ``s^2 ceil(Ho/s) ceil(Wo/s)`` [Tida22].
    """
    if variant == "scatter":
        extra = max(0, l.op - l.p)
        return ((l.h - 1) * l.s + l.k + extra) * ((l.w - 1) * l.s + l.k + extra)
    if variant in ("zero-insert", "unified"):
        return l.ho * l.wo
    if variant == "kernel-segregated":
        return l.s * l.s * _cdiv(l.ho, l.s) * _cdiv(l.wo, l.s)
    raise ValueError(f"unknown variant {variant!r}")


def extra_outputs(l: ConvT) -> int:
    """Extra elements kernel segregation computes and crops, per (sample, channel):
    ``s^2 ceil(Ho/s) ceil(Wo/s) - Ho Wo`` (zero when s divides Ho and Wo)."""
    return l.s * l.s * _cdiv(l.ho, l.s) * _cdiv(l.wo, l.s) - l.ho * l.wo


def _contiguous(sizes: tuple[int, ...], full: tuple[int, ...]) -> bool:
    """Whether a slab ``a[:s0, i:i+s1, j:j+s2, :]`` of a C-contiguous array of leading shape
    ``full`` is itself contiguous (then the tap GEMM reshapes it without a copy)."""
    partial = False
    for size, whole in reversed(list(zip(sizes, full))):
        if partial and size != 1:
            return False
        if size != whole:
            partial = True
    return True


def _strided_add_buffer(n: int, rows: int, cols: int, ch: int, step: int, full_rows: int, full_cols: int,
                        row0: int = 0, col0: int = 0) -> int:
    """Elements of the buffers numpy's ufunc machinery allocates for an in-place add into the view
    ``a[:n, row0::step][:rows], [col0::step][:cols], :ch]`` of a C-contiguous (n, full_rows,
    full_cols, ch) array: ``2 min(8192, size)`` when the view is not contiguous (numpy's default
    ufunc buffer of 8192 elements for the read and the write side; measured with tracemalloc in
    the tests), else 0."""
    import numpy as np

    view = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), shape=(n, rows, cols, ch),
                                           strides=(full_rows * full_cols * ch, step * full_cols * ch, step * ch, 1))
    if view.flags.c_contiguous:
        return 0
    return 2 * min(8192, n * rows * cols * ch)


def temp_bytes(l: ConvT, variant: str, itemsize: int = 4, traffic: str = "per-tap") -> int:
    """Peak temporary memory of a variant beyond its input, weights and output (bytes).

    Parameters
    ----------
    l : ConvT
    variant : str
    itemsize : int
        Bytes per element (4 for float32).
    traffic : {"per-tap", "fused"}
        ``per-tap``: the allocation sequence of :mod:`.ops` with weights pre-packed once per
        layer outside the call (:func:`.ops.pack`, as the execute fidelity does; no weight copy
        per tap). Gemm path (``Co > LOOP_MAX_CO``): zero-insert the zero-inserted input plus one
        window copy of all its rows by ``Wo`` columns (the output is its gemm's accumulator);
        kernel segregation the padded input, the sub-outputs made so far, the current one and
        its window copy; unified the padded input plus the largest class's accumulator and
        window copy (``count + taps - 1`` rows x batch per column tap; none when contiguous).
        Loop path (``Co <= LOOP_MAX_CO``, every variant's compiled loop nest): the padded (for
        zero-insert zero-inserted) NCHW input plus one ``(Co, count)`` row transient, and for
        kernel segregation its sub-outputs. scatter: its channels-last input, uncropped buffer,
        product buffer and numpy's ufunc buffers for the in-place add into a strided view. So
        the measured tracemalloc peak
        can be checked against it. ``fused``: only the buffers the algorithm
        itself needs: zero-insert the upsampled padded input ``N Ci (Ho+k-1)(Wo+k-1)``;
        kernel segregation the ``s^2`` sub-outputs ``N Co s^2 ceil(Ho/s) ceil(Wo/s)``; scatter
        the uncropped buffer minus the output; unified nothing [Tida25].

    Returns
    -------
    int
        Bytes.
    """
    loop = l.co <= LOOP_MAX_CO and itemsize in (4, 8)  # every variant's compiled loop nest (ops, small Co)
    if variant == "scatter":
        return _temp_scatter(l, traffic) * itemsize
    if variant == "zero-insert":
        return _temp_zero_insert(l, traffic, loop) * itemsize
    if variant in ("kernel-segregated", "unified"):
        return _temp_classes(l, variant, traffic, loop) * itemsize
    raise ValueError(f"unknown variant {variant!r}")


def _temp_scatter(l: ConvT, traffic: str) -> int:
    """Elements: the uncropped buffer minus the output (fused); per tap also the channels-last
    input, the product buffer and numpy's ufunc buffers for the in-place add into a strided view."""
    n, co, k, s = l.n, l.co, l.k, l.s
    out = n * co * l.ho * l.wo
    full = n * co * outputs_computed(l, "scatter")
    if traffic == "fused":
        return full - out
    hf, wf = (l.h - 1) * s + k + max(0, l.op - l.p), (l.w - 1) * s + k + max(0, l.op - l.p)
    buf = _strided_add_buffer(n, l.h, l.w, co, s, hf, wf) if k > 1 or s > 1 else 0
    return n * l.h * l.w * l.ci + full + buf + n * l.h * l.w * co - out


def _temp_zero_insert(l: ConvT, traffic: str, loop: bool) -> int:
    """Elements: the zero-inserted padded input, plus one (Co, Wo) row transient (loop path) or
    one window copy per column tap (gemm path: all Hu rows x batch x Wo columns; the output is
    the gemm's accumulator)."""
    n, ci, co, ho, wo, k = l.n, l.ci, l.co, l.ho, l.wo, l.k
    hu, wu = ho + k - 1, wo + k - 1
    up = n * ci * hu * wu
    if traffic == "fused":
        return up
    if loop:
        return up + co * wo
    return up + (0 if _contiguous((hu, n, wo), (hu, n, wu)) else hu * n * wo * ci)


def _temp_classes(l: ConvT, variant: str, traffic: str, loop: bool) -> int:
    """Elements for kernel segregation (ceil grid) and unified (exact grid): the padded input
    plus the peak of the per-class buffers (sub-outputs so far and the current one for kernel
    segregation; the largest class's accumulator and window copy for unified)."""
    n, ci, co, s = l.n, l.ci, l.co, l.s
    if traffic == "fused":
        return s * s * n * co * _cdiv(l.ho, s) * _cdiv(l.wo, s) if variant == "kernel-segregated" else 0
    grid = "exact" if variant == "unified" else "ceil"
    rows, rlo, rhi = phase_plan(l.h, l.k, s, l.p, l.op, grid=grid)
    cols, clo, chi = phase_plan(l.w, l.k, s, l.p, l.op, grid=grid)
    hp, wp = l.h + rlo + rhi, l.w + clo + chi
    xp = n * ci * hp * wp

    def window(pr, pc) -> int:
        # one window copy per column tap: (count + taps - 1) rows x batch x count columns of the
        # rows-outer (Hp, N, Wp, Ci) input; none when the window is that array's contiguous block
        rws = pr.count + pr.taps - 1
        return 0 if _contiguous((rws, n, pc.count), (hp, n, wp)) else rws * n * pc.count * ci

    if variant == "unified":
        if loop:  # the compiled loop nest: padded NCHW input + one (Co, count) row transient
            return xp + co * max(pc.count for pc in cols)
        # per class: its accumulator (M Co) + its window copy; the gemm accumulates in place
        return xp + max((window(pr, pc) + n * pr.count * pc.count * co for pr in rows for pc in cols
                         if pr.taps * pc.taps and pr.count and pc.count), default=0)
    # kernel segregation: the sub-outputs made so far, and the current class's sub-output with its
    # window copy (gemm path) or its (Co, count) row transient (loop path)
    peak, alive = 0, 0
    for pr in rows:
        for pc in cols:
            m = n * pr.count * pc.count
            if pr.taps and pc.taps and m:
                peak = max(peak, alive + m * co + (co * pc.count if loop else window(pr, pc)))
            alive += m * co
            peak = max(peak, alive)
    return xp + peak


@dataclass(frozen=True)
class Op:
    """One operation of a variant's schedule: FLOPs (2 per MAC, 1 per add) and bytes moved."""

    what: str
    flops: float
    bytes: float


def operations(l: ConvT, variant: str, itemsize: int = 4, traffic: str = "per-tap") -> list[Op]:
    """The operations a variant issues for one layer, in order (see the module docstring).

    ``per-tap``: scatter per tap a GEMM ``2 M Ci Co`` FLOPs over ``M Ci + Ci Co + M Co``
    elements and a strided add ``M Co`` FLOPs over ``3 M Co`` elements. zero-insert (one
    stride-1 class over the zero-inserted input), kernel segregation (``s^2`` ceil-grid
    classes) and unified (``s^2`` exact-grid classes) follow the shared class schedule of
    :mod:`.ops`: per class and column tap one window copy of ``(count + taps - 1) N count Ci``
    elements (read + write; none when it is a contiguous block), per tap one in-place gemm
    (``C <- A W + beta C``: ``M Ci + Ci Co`` elements read and the ``M Co`` accumulator written,
    also read after the class's first tap; no separate accumulate).
    Set-up: padded / zero-inserted input written once (its size) plus the input read and
    written; unified zeroes its output; kernel segregation's interleave reads and writes the
    output; the unified method writes each class's accumulator once (read + write of its
    size). ``fused``: see the module docstring; every kernel reads its operands and writes its
    results once.
    """
    b = float(itemsize)
    if traffic == "fused":
        return _fused_ops(l, variant, b)
    if variant == "scatter":
        return _scatter_ops(l, b)
    return _class_ops(l, variant, b)


def _fused_ops(l: ConvT, variant: str, b: float) -> list[Op]:
    """Every kernel reads its operands and writes its results once."""
    n, ci, co, k, s, ho, wo = l.n, l.ci, l.co, l.k, l.s, l.ho, l.wo
    x_el, w_el, out_el = n * ci * l.h * l.w, ci * co * k * k, n * co * ho * wo
    m_total = macs(l, variant)
    if variant == "scatter":
        full = n * co * outputs_computed(l, "scatter")
        return [Op("scatter", 2.0 * m_total, b * (x_el + w_el + 2 * full)), Op("crop", 0.0, b * 2 * out_el)]
    if variant == "zero-insert":
        up = n * ci * (ho + k - 1) * (wo + k - 1)
        return [Op("upsample", 0.0, b * (x_el + up)), Op("conv", 2.0 * m_total, b * (up + w_el + out_el))]
    if variant == "kernel-segregated":
        sub = n * co * _cdiv(ho, s) * _cdiv(wo, s)
        ops = [Op("sub-kernel", 2.0 * m_total / (s * s), b * (x_el + w_el / (s * s) + sub)) for _ in range(s * s)]
        return ops + [Op("interleave", 0.0, b * (s * s * sub + out_el))]
    if variant == "unified":
        return [Op("unified", 2.0 * m_total, b * (x_el + w_el + out_el))]
    raise ValueError(f"unknown variant {variant!r}")


def _scatter_ops(l: ConvT, b: float) -> list[Op]:
    """Scatter's reference schedule: layout change, zeroed buffer, per tap a gemm and a strided add."""
    n, ci, co = l.n, l.ci, l.co
    full = n * co * outputs_computed(l, "scatter")
    ops = [Op("layout", 0.0, b * 2 * n * ci * l.h * l.w), Op("zero", 0.0, b * full)]
    mm = n * l.h * l.w
    for _ in range(l.k * l.k):
        ops.append(Op("gemm", 2.0 * mm * ci * co, b * (mm * ci + ci * co + mm * co)))
        ops.append(Op("add", 1.0 * mm * co, b * 3 * mm * co))
    return ops


def _class_ops(l: ConvT, variant: str, b: float) -> list[Op]:
    """zero-insert, kernel-segregated, unified: the shared class schedule of ops (per class, per
    column tap one window copy, per tap one in-place gemm C <- A W + beta C: no product buffer, no
    add pass)."""
    n, ci, co, h, w, k, s, ho, wo = l.n, l.ci, l.co, l.h, l.w, l.k, l.s, l.ho, l.wo
    x_el, out_el = n * ci * h * w, n * co * ho * wo
    ops: list[Op] = []
    if variant == "zero-insert":
        hp, wp = ho + k - 1, wo + k - 1
        ops.append(Op("upsample", 0.0, b * (n * ci * hp * wp + 2 * x_el)))
        classes = [(Phase(0, 0, k - 1, k, ho), Phase(0, 0, k - 1, k, wo))]
    else:
        grid = "exact" if variant == "unified" else "ceil"
        rows, rlo, rhi = phase_plan(h, k, s, l.p, l.op, grid=grid)
        cols, clo, chi = phase_plan(w, k, s, l.p, l.op, grid=grid)
        hp, wp = h + rlo + rhi, w + clo + chi
        ops.append(Op("pad", 0.0, b * (n * ci * hp * wp + 2 * x_el)))
        if variant == "unified":
            ops.append(Op("zero", 0.0, b * out_el))
        classes = [(pr, pc) for pr in rows for pc in cols]
    for pr, pc in classes:
        mm = n * pr.count * pc.count
        if not (mm and pr.taps and pc.taps):
            continue
        rws = pr.count + pr.taps - 1
        for v in range(pc.taps):
            if not _contiguous((rws, n, pc.count), (hp, n, wp)):
                ops.append(Op("window", 0.0, b * 2 * rws * n * pc.count * ci))
            for t in range(pr.taps):
                first = t == 0 and v == 0
                ops.append(Op("gemm", 2.0 * mm * ci * co, b * (mm * ci + ci * co + (1 if first else 2) * mm * co)))
        if variant == "unified":
            ops.append(Op("write", 0.0, b * 2 * mm * co))  # the class's accumulator into its strided outputs
    if variant == "kernel-segregated":
        ops.append(Op("interleave", 0.0, b * 2 * out_el))
    return ops


def layer_time(l: ConvT, variant: str, peak_flops: float, mem_bandwidth: float, *, itemsize: int = 4,
               traffic: str = "per-tap", efficiency: float = 1.0, launch_overhead: float = 0.0) -> float:
    """Predicted time of one layer (s): ``sum_ops max(F/(eff peak), B/BW) + launches t_launch``.

    Parameters
    ----------
    l : ConvT
    variant : str
    peak_flops : float
        FLOP/s of the profile's device for the dtype.
    mem_bandwidth : float
        B/s.
    itemsize : int
    traffic : {"per-tap", "fused"}
    efficiency : float
        Achieved fraction of peak, in (0, 1] (parameter; default 1).
    launch_overhead : float
        Seconds per operation (kernel launch / dispatch), default 0.

    References
    ----------
    [Williams09] for each term; the operation list is :func:`operations`.
    """
    ops = operations(l, variant, itemsize, traffic)
    return sum(roofline_time(o.flops, o.bytes, peak_flops, mem_bandwidth, efficiency) for o in ops) \
        + launch_overhead * len(ops)


def evaluate(scenario: Scenario) -> Result:
    """Model fidelity: time, MACs, outputs and temporary memory of one variant on a profile.

    Metrics (sums over the scenario's layers; ``peak_temp_bytes`` is the maximum):
    ``time`` (s), ``macs`` (1), ``outputs_computed`` (1, per channel, summed over layers),
    ``extra_outputs`` (1, per channel), ``peak_temp_bytes`` (B). Artifact ``layers``: the same
    per layer.

    Raises
    ------
    Skip
        The scenario has no profile, or its device has no peak for the dtype's precision.
    """
    prof = scenario.profile
    if prof is None or prof.device is None:
        raise Skip("transpose-conv model needs a profile with a device")
    prm = scenario.params
    dtype = prm["dtype"]
    itemsize = ITEMSIZE[dtype]
    prec = "fp32" if dtype == "float32" else "fp64"
    if prec not in prof.device.peak_flops:
        raise Skip(f"profile {prof.name!r} has no {prec} peak")
    peak, bw = prof.device.flops(prec), prof.device.memory_bandwidth
    traffic, eff, launch = prm["traffic"], float(prm["efficiency"]), float(prm["launch_overhead"])
    v = scenario.variant
    rows = []
    for l in layers_of(scenario):
        rows.append({
            **l.as_dict(),
            "time": layer_time(l, v, peak, bw, itemsize=itemsize, traffic=traffic, efficiency=eff,
                               launch_overhead=launch),
            "macs": macs(l, v),
            "outputs_computed": outputs_computed(l, v),
            "extra_outputs": outputs_computed(l, v) - l.ho * l.wo,
            "peak_temp_bytes": temp_bytes(l, v, itemsize, traffic),
        })
    res = Result()
    res.add("time", sum(r["time"] for r in rows), "s", "lower")
    res.add("macs", sum(r["macs"] for r in rows), "1", "lower")
    res.add("outputs_computed", sum(r["outputs_computed"] for r in rows), "1", "lower")
    res.add("extra_outputs", sum(r["extra_outputs"] for r in rows), "1", "lower")
    res.add("peak_temp_bytes", max(r["peak_temp_bytes"] for r in rows), "B", "lower")
    res.artifacts["layers"] = rows
    res.artifacts["profile"] = {"name": prof.name, "peak_flops": peak, "memory_bandwidth": bw, "precision": prec}
    return res
