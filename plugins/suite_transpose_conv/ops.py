"""Transpose convolution four ways, on real numpy arrays (NCHW), with counted work.

Every function computes PyTorch ``ConvTranspose2d`` semantics (no dilation, no groups, no bias):

    Ho = (H - 1) s - 2 p + k + op,   Wo = (W - 1) s - 2 p + k + op
    out[n, co, i s + kh - p, j s + kw - p] += x[n, ci, i, j] * w[ci, co, kh, kw]

with ``x`` of shape (N, Ci, H, W), ``w`` of shape (Ci, Co, k, k) (PyTorch's layout), stride
``s``, padding ``p`` and output padding ``op`` (0 <= op < s). Each returns ``(out, stats)`` where
``out`` has shape (N, Co, Ho, Wo) and ``stats`` is a :class:`Work` counted by the code as it runs
(multiply-accumulates issued, output elements computed before any crop).

All four variants are built from the same primitives, so that their times differ only by the
work each algorithm does (docs/techniques/transpose-conv.md, "Like for like"): one layout
conversion (:func:`_padded`: the zero-padded, for zero-insert also zero-inserted, channels-last
copy of the input), the weights pre-packed once per layer (:func:`pack`, contiguous
``(k, k, Ci, Co)`` taps), and one *tap GEMM*: BLAS ``gemm`` accumulating in place into a
preallocated ``(M, Co)`` buffer (:func:`_gemm_acc`), run over output classes by one schedule
(:func:`_class_gemms`: per column tap one window copy, per row tap a gemm on a contiguous block
of it), or, for ``Co <= LOOP_MAX_CO``, one compiled loop nest (:func:`_class_loops`) over the
zero-padded NCHW input. A variant is a choice of input (zero-inserted or not), of classes (one
stride-1 class; ``s^2`` classes on the ceil grid; ``s^2`` classes on the exact grid) and of
where their outputs go (the output itself; ``s^2`` sub-output buffers then an interleave; once
into the output). Data are held channels-last, rows outermost, inside; the result is returned as
an NCHW view.

* :func:`scatter` -- the definition: one tap GEMM per kernel tap over the whole input, added
  into an uncropped buffer at stride ``s``, then cropped by ``p``. The oracle of the others.
* :func:`zero_insert` -- the conventional method: insert ``s - 1`` zeros between input
  elements, pad by ``k - 1 - p`` (plus ``op`` at the end), and run a stride-1 correlation with the
  flipped kernel. About ``(s^2 - 1)/s^2`` of its MACs multiply inserted zeros.
* :func:`kernel_segregated` -- Tida et al. 2022: the kernel is split into ``s^2`` sub-kernels
  ``w[:, :, a::s, b::s]``, one per output parity class; each class is a small dense correlation
  of the *original* input with its sub-kernel, computed on a ``ceil(Ho/s) x ceil(Wo/s)`` grid into
  its own sub-output buffer, then interleaved into the output and cropped. For ``Ho`` or ``Wo``
  not divisible by ``s`` (odd sizes for s = 2) it computes
  ``s^2 ceil(Ho/s) ceil(Wo/s) - Ho Wo`` extra elements per channel.
* :func:`unified` -- Tida et al. 2025: one pass over the output parity classes, each output
  element computed exactly once from its class's sub-kernel and written in place; no extra
  elements, no sub-output buffers.

References
----------
.. [Tida22] V. S. Tida et al., "Kernel-Segregated Transpose Convolution Operation",
   arXiv 2209.03704, 2022 (abstract: four sub-kernels, no multiplications by inserted zeros).
.. [Tida25] V. S. Tida et al., "Unified Kernel-Segregated Transpose Convolution Operation",
   arXiv 2502.20493, 2025 (abstract: one unified kernel, no extra elements for odd sizes).
.. [Dumoulin16] V. Dumoulin, F. Visin, "A guide to convolution arithmetic for deep learning",
   arXiv 1603.07285, 2016, §4 (transposed convolution as zero insertion + stride-1 convolution).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from suite.api import ParameterError

from .geometry import output_size  # numpy-free, so that the declaration can import it

__all__ = ["Work", "output_size", "phase_plan", "pack", "scatter", "zero_insert", "kernel_segregated",
           "unified", "VARIANTS", "run"]


@dataclass
class Work:
    """Work counted by an implementation while it runs.

    Attributes
    ----------
    macs : int
        Multiply-accumulates issued (including those against padding zeros or inserted zeros).
    outputs : int
        Output elements computed per (sample, output channel), before any crop.
    """

    macs: int = 0
    outputs: int = 0


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Phase:
    """One output parity class along one axis.

    Outputs ``o = s q + r`` for ``q in [0, count)`` use kernel taps ``a + s t`` (``t < taps``)
    and input rows ``q + d - t``: ``out[s q + r] = sum_t x[q + d - t] w[a + s t]``, where
    ``a = (r + p) mod s`` and ``d = (r + p) div s``.
    """

    r: int
    a: int
    d: int
    taps: int
    count: int


def phase_plan(h: int, k: int, s: int, p: int, op: int = 0, *, grid: str = "exact") -> tuple[list[Phase], int, int]:
    """Parity classes of one axis and the input padding they need.

    Parameters
    ----------
    h, k, s, p, op : int
        Input size, kernel, stride, padding, output padding along this axis.
    grid : {"exact", "ceil"}
        ``exact``: class ``r`` has ``ceil((Ho - r)/s)`` outputs (the unified method);
        ``ceil``: every class has ``ceil(Ho/s)`` outputs (kernel segregation, 2022).

    Returns
    -------
    phases : list of Phase
        One per ``r in [0, s)``.
    pad_lo, pad_hi : int
        Zeros needed before and after the input so that every tap slab is in range.

    Notes
    -----
    From the scatter definition, output ``o`` receives tap ``kh`` from input ``i`` iff
    ``i s + kh = o + p``, so ``kh = (o + p) mod s + s t`` and ``i = (o + p) div s - t``
    [Tida22]. The number of taps of class ``a`` is ``ceil((k - a)/s)`` (0 when ``a >= k``),
    and ``sum_a ceil((k - a)/s) = k``.
    """
    ho = output_size(h, k, s, p, op)
    phases = []
    lo = hi = 0
    for r in range(s):
        a, d = (r + p) % s, (r + p) // s
        taps = max(0, _ceil_div(k - a, s))
        count = _ceil_div(ho - r, s) if grid == "exact" else _ceil_div(ho, s)
        count = max(0, count)
        phases.append(Phase(r, a, d, taps, count))
        if taps and count:
            lo = max(lo, taps - 1 - d)
            hi = max(hi, count - 1 + d - (h - 1))
    return phases, lo, hi


def _check(x: np.ndarray, w: np.ndarray, s: int, p: int, op: int) -> tuple[int, int, int, int, int, int, int]:
    if x.ndim != 4:
        raise ParameterError(f"transpose conv: input must be NCHW (4-D), got shape {x.shape}")
    if w.ndim != 4 or w.shape[2] != w.shape[3]:
        raise ParameterError(f"transpose conv: weight must be (Ci, Co, k, k), got shape {w.shape}")
    n, ci, h, wd = x.shape
    if w.shape[0] != ci:
        raise ParameterError(f"transpose conv: weight has {w.shape[0]} input channels, input has {ci}")
    k = w.shape[2]
    ho, wo = output_size(h, k, s, p, op), output_size(wd, k, s, p, op)
    return n, ci, w.shape[1], h, wd, ho, wo


def pack(w: np.ndarray) -> np.ndarray:
    """Weights pre-packed once per layer, as an inference library does at load: a C-contiguous
    ``(k, k, Ci, Co)`` copy of ``w`` (PyTorch's ``(Ci, Co, k, k)``), so that ``packed[kh, kw]``
    is the contiguous ``(Ci, Co)`` matrix of one tap and no call copies a strided weight slice.

    Parameters
    ----------
    w : ndarray, shape (Ci, Co, k, k)

    Returns
    -------
    ndarray, shape (k, k, Ci, Co), C-contiguous, ``Ci Co k^2`` elements (the size of ``w``).

    Raises
    ------
    ParameterError
        ``w`` is not 4-D with a square kernel.
    """
    if w.ndim != 4 or w.shape[2] != w.shape[3]:
        raise ParameterError(f"transpose conv: weight must be (Ci, Co, k, k), got shape {w.shape}")
    return np.ascontiguousarray(w.transpose(2, 3, 0, 1))


def _taps(w: np.ndarray, packed: np.ndarray | None = None) -> np.ndarray:
    """Weights as (k, k, Ci, Co): the pre-packed array when given (checked against ``w``'s
    shape), else a *view* of ``w`` (then each tap GEMM copies its strided (Ci, Co) tap)."""
    if packed is None:
        return w.transpose(2, 3, 0, 1)
    ci, co, k, _ = w.shape
    if packed.shape != (k, k, ci, co):
        raise ParameterError(f"transpose conv: packed weights must have shape {(k, k, ci, co)} (ops.pack(w)), "
                             f"got {packed.shape}")
    return packed


def _nchw(out_rows: np.ndarray) -> np.ndarray:
    """The NCHW view of a rows-outermost (Ho, N, Wo, Co) output buffer (no copy)."""
    return out_rows.transpose(1, 3, 0, 2)


# --------------------------------------------------------------------------- shared primitives
#
# Every variant is built from the same four primitives, so that their measured times differ only
# by the work each algorithm does:
#
# * the layout conversion :func:`_padded` (NCHW input -> zero-padded, optionally zero-inserted,
#   channels-last copy; a numba loop for float32 / float64);
# * the weights pre-packed once per layer (:func:`pack`), one contiguous (Ci, Co) matrix per tap;
# * :func:`_gemm_acc`, one BLAS ``?gemm`` per tap accumulating in place into a preallocated
#   (M, Co) buffer (``C <- A W + beta C``);
# * the class schedule :func:`_class_gemms` (per output class: per column tap one window copy,
#   per row tap one in-place gemm on a contiguous block of it) or, for ``Co <= LOOP_MAX_CO``,
#   the compiled loop nest :func:`_class_loops` over the zero-padded NCHW input.
#
# zero-insert runs them on one class (stride 1) over the zero-inserted, padded input; kernel
# segregation on ``s^2`` classes of the ceil grid into ``s^2`` sub-output buffers, then
# interleaves and crops; unified on the ``s^2`` classes of the exact grid, each written once into
# the output. scatter (the definition) uses the same layout conversion and gemm, into a product
# buffer added at stride ``s`` into the uncropped output.


def _span(size_in: int, lo: int, step: int, size_out: int) -> tuple[int, int]:
    """Input indices ``[i0, i1)`` whose position ``lo + i step`` lies in ``[0, size_out)``."""
    i0 = max(0, _ceil_div(-lo, step))
    i1 = min(size_in, (size_out - 1 - lo) // step + 1)
    return i0, max(i0, i1)


def _to_nhwc_loops(x, xp, lo, clo, step, i0, i1, j0, j1):  # pragma: no cover - compiled by numba, see _padded
    n_, c_, _, _ = x.shape
    for n in range(n_):
        for i in range(i0, i1):
            for c in range(c_):
                xr = x[n, c, i]
                for j in range(j0, j1):
                    xp[n, lo + i * step, clo + j * step, c] = xr[j]
    return xp


_TO_NHWC_COMPILED = None


def _padded(x: np.ndarray, hp: int, wp: int, lo: int, clo: int, *, step: int = 1, layout: str = "rows",
            dtype=None) -> np.ndarray:
    """The input placed in a zero array of ``hp x wp`` per image and channel: ``x[n, c, i, j]`` at
    row ``lo + i step``, column ``clo + j step`` (positions outside the array dropped, so a
    negative ``lo`` crops): zero padding (``step`` 1) or zero insertion plus padding (``step`` s).
    The one layout conversion of every variant.

    ``layout``: ``"rows"`` (default) returns the (Hp, N, Wp, Ci) array, rows outermost, so that
    the rows a row tap reads of a column window are one contiguous block for the whole batch;
    ``"nhwc"`` the (N, Hp, Wp, Ci) array; ``"nchw"`` the (N, Ci, Hp, Wp) array (the loop nest's
    input, a strided numpy copy with no transpose). For the channels-last layouts and float32 /
    float64 C-contiguous input a numba loop nest writes it (2-4x numpy's strided
    transpose-assign on the GAN layers), else numpy; same values.
    """
    global _TO_NHWC_COMPILED
    n, ci, h, wd = x.shape
    dtype = x.dtype if dtype is None else np.dtype(dtype)
    (i0, i1), (j0, j1) = _span(h, lo, step, hp), _span(wd, clo, step, wp)
    r0, c0 = lo + i0 * step, clo + j0 * step
    r1, c1 = lo + (i1 - 1) * step + 1, clo + (j1 - 1) * step + 1
    if layout == "nchw":
        xp = np.zeros((n, ci, hp, wp), dtype=dtype)
        if i1 > i0 and j1 > j0:
            xp[:, :, r0:r1:step, c0:c1:step] = x[:, :, i0:i1, j0:j1]
        return xp
    store = np.zeros((hp, n, wp, ci), dtype=dtype) if layout == "rows" else np.zeros((n, hp, wp, ci), dtype=dtype)
    view = store.transpose(1, 0, 2, 3) if layout == "rows" else store  # (N, Hp, Wp, Ci) either way
    if i1 <= i0 or j1 <= j0:
        return store
    if x.dtype in (np.float32, np.float64) and x.dtype == dtype and x.flags.c_contiguous:
        if _TO_NHWC_COMPILED is None:
            try:
                import numba
            except ImportError:  # pragma: no cover - numba is a core dependency
                _TO_NHWC_COMPILED = False
            else:
                _TO_NHWC_COMPILED = numba.njit(cache=True, nogil=True)(_to_nhwc_loops)
        if _TO_NHWC_COMPILED:
            _TO_NHWC_COMPILED(x, view, lo, clo, step, i0, i1, j0, j1)
            return store
    view[:, r0:r1:step, c0:c1:step, :] = x[:, :, i0:i1, j0:j1].transpose(0, 2, 3, 1)
    return store


def _blas_gemm(dtype: np.dtype):
    """BLAS ``?gemm`` for float32 / float64 (scipy.linalg.blas), or None for another dtype."""
    from scipy.linalg import blas

    return {np.dtype(np.float32): blas.sgemm, np.dtype(np.float64): blas.dgemm}.get(np.dtype(dtype))


def _gemm_acc(gemm, a: np.ndarray, tap: np.ndarray, acc: np.ndarray, first: bool, work: Work) -> None:
    """``acc <- a @ tap (+ acc unless first)`` in place by BLAS ``?gemm``: (M, Ci) x (Ci, Co) into
    the preallocated C-contiguous (M, Co) ``acc``, through Fortran views
    (``acc.T = tap.T a.T + beta acc.T``); counts its MACs. ``gemm`` None (a dtype without BLAS):
    numpy's matmul, into ``acc`` or added to it."""
    if not tap.flags.c_contiguous:
        tap = np.ascontiguousarray(tap)
    work.macs += a.shape[0] * a.shape[1] * tap.shape[1]
    if gemm is None:
        if first:
            np.matmul(a, tap, out=acc)
        else:
            acc += a @ tap
        return
    gemm(1.0, tap.T, a.T, beta=0.0 if first else 1.0, c=acc.T, overwrite_c=True)


def _class_gemms(xq: np.ndarray, taps: np.ndarray, rows, cols, step: int, rlo: int, clo: int, gemm, work: Work,
                 acc_for):
    """Run output classes by in-place gemms; yields ``(pr, pc, acc)`` after each class.

    ``xq``: the padded input, rows outermost (Hp, N, Wp, Ci) (:func:`_padded`); ``taps``: packed
    (k, k, Ci, Co); ``rows`` / ``cols``: the classes per axis (:class:`Phase`: outputs ``q`` of the
    class read padded input rows ``rlo + d - t + q`` with kernel row ``a + step t``); ``acc_for(pr,
    pc, m)``: the preallocated C-contiguous (m, Co) buffer a class accumulates into, rows in
    (q, n, u) order. A class without taps or outputs yields ``acc`` None and allocates nothing.

    Per column tap ``v`` one window copy: the ``count + taps - 1`` input rows the class's row taps
    read, by the column window, for the whole batch; every row tap's gemm operand is a contiguous
    block of it (a view). Only one window is alive at a time.
    """
    n, ci = xq.shape[1], xq.shape[3]
    for pr in rows:
        for pc in cols:
            m = n * pr.count * pc.count
            if not (m and pr.taps and pc.taps):
                yield pr, pc, None
                continue
            acc = acc_for(pr, pc, m)
            ilo = rlo + pr.d - (pr.taps - 1)  # first padded input row any of the class's row taps reads
            for v in range(pc.taps):
                j0 = clo + pc.d - v
                win = np.ascontiguousarray(xq[ilo:ilo + pr.count + pr.taps - 1, :, j0:j0 + pc.count, :])
                for t in range(pr.taps):
                    i0 = rlo + pr.d - t - ilo
                    a = win[i0:i0 + pr.count].reshape(m, ci)  # a view: no copy per tap
                    _gemm_acc(gemm, a, taps[pr.a + step * t, pc.a + step * v], acc, (t, v) == (0, 0), work)
                    del a  # a view of win: it would keep this window alive beside the next one
                del win
            yield pr, pc, acc
            del acc


#: Output channels up to which every variant runs the compiled loop nest instead of per-tap BLAS
#: gemms: a gemm with N = Co <= 8 columns fills few vector lanes (measured: (1024, 128) x (128, 3)
#: at 24 GFLOP/s vs 110 for Co = 128 on this suite's 1-thread reference machine, docs/performance.md).
LOOP_MAX_CO = 8


def _class_loops(xpc, wk, out, acc, rows, cols, tstep, ostep, rlo, clo):  # pragma: no cover - compiled by numba
    """Loop nest of the output classes for small ``Co`` (see :func:`_loops_jit`). ``xpc``: padded
    NCHW input (N, Ci, Hp, Wp); ``wk``: packed (k, k, Ci, Co) taps; ``out``: NCHW destination,
    zeroed; ``acc``: (Co, max count) scratch; ``rows`` / ``cols``: (classes, 5) int64
    ``(r, a, d, taps, count)``. Output ``q`` of a class is written at ``ostep q + r`` and reads
    input row ``rlo + d - t + q`` with kernel row ``a + tstep t``."""
    n_, ci_, _, _ = xpc.shape
    co_ = out.shape[1]
    c4 = ci_ - ci_ % 4
    for n in range(n_):
        for ri in range(rows.shape[0]):
            r, ar, dr, tr, cr = rows[ri, 0], rows[ri, 1], rows[ri, 2], rows[ri, 3], rows[ri, 4]
            for cj in range(cols.shape[0]):
                c, ac, dc, tc, cc = cols[cj, 0], cols[cj, 1], cols[cj, 2], cols[cj, 3], cols[cj, 4]
                if tr == 0 or tc == 0 or cc == 0:
                    continue
                for q in range(cr):  # one output row of the class: (Co, cc) accumulated over its taps
                    acc[:, :cc] = 0.0
                    for t in range(tr):
                        i = rlo + dr - t + q
                        kh = ar + tstep * t
                        for v in range(tc):
                            j0 = clo + dc - v
                            wtap = wk[kh, ac + tstep * v]
                            for ch in range(0, c4, 4):  # four input channels per pass over the row
                                x0 = xpc[n, ch, i, j0:j0 + cc]
                                x1 = xpc[n, ch + 1, i, j0:j0 + cc]
                                x2 = xpc[n, ch + 2, i, j0:j0 + cc]
                                x3 = xpc[n, ch + 3, i, j0:j0 + cc]
                                for o in range(co_):
                                    w0, w1, w2, w3 = wtap[ch, o], wtap[ch + 1, o], wtap[ch + 2, o], wtap[ch + 3, o]
                                    ao = acc[o]
                                    for u in range(cc):
                                        ao[u] += w0 * x0[u] + w1 * x1[u] + w2 * x2[u] + w3 * x3[u]
                            for ch in range(c4, ci_):
                                xr = xpc[n, ch, i, j0:j0 + cc]
                                for o in range(co_):
                                    wv = wtap[ch, o]
                                    ao = acc[o]
                                    for u in range(cc):
                                        ao[u] += wv * xr[u]
                    for o in range(co_):  # each output element written once
                        orow = out[n, o, ostep * q + r]
                        ao = acc[o]
                        for u in range(cc):
                            orow[ostep * u + c] = ao[u]
    return out


_LOOPS_COMPILED = None


def _loops_jit():
    """:func:`_class_loops` compiled by numba on first use (``cache=True``; ``fastmath`` only
    contracts multiply-adds into FMAs: no reassociation across taps or channel groups), or None
    when numba is missing."""
    global _LOOPS_COMPILED
    if _LOOPS_COMPILED is None:
        try:
            import numba
        except ImportError:  # pragma: no cover - numba is a core dependency
            _LOOPS_COMPILED = False
        else:
            _LOOPS_COMPILED = numba.njit(cache=True, nogil=True, fastmath={"contract"})(_class_loops)
    return _LOOPS_COMPILED or None


def _run_loops(loops, xpc: np.ndarray, taps: np.ndarray, out: np.ndarray, rows, cols, tstep: int, ostep: int,
               rlo: int, clo: int, work: Work) -> None:
    """Run classes ``rows x cols`` through the compiled loop nest into ``out`` (NCHW, zeroed),
    with one ``(Co, max count)`` row transient; counts the MACs the loop issues (padding and
    inserted zeros included)."""
    n, ci = xpc.shape[0], xpc.shape[1]
    co = out.shape[1]
    if not any(pc.taps and pc.count for pc in cols) or not any(pr.taps and pr.count for pr in rows):
        return
    acc = np.empty((co, max(pc.count for pc in cols)), dtype=out.dtype)
    plan = [np.array([(ph.r, ph.a, ph.d, ph.taps, ph.count) for ph in phases], dtype=np.int64)
            for phases in (rows, cols)]
    wk = taps if taps.dtype == out.dtype and taps.flags.c_contiguous else np.ascontiguousarray(taps, out.dtype)
    loops(xpc, wk, out, acc, plan[0], plan[1], tstep, ostep, rlo, clo)
    for pr in rows:  # the classes the loop nest runs, each issuing its rows x taps x channels
        for pc in cols:
            if pr.taps and pc.taps and pc.count:
                work.macs += n * pr.count * pc.count * pr.taps * pc.taps * ci * co
    del acc, plan, wk


def _engine(x: np.ndarray, w: np.ndarray, packed: np.ndarray | None, co: int):
    """What every variant's call shares: result dtype, packed taps in it, the BLAS gemm (None for
    a dtype without one) and the compiled loop nest when it applies (float32 / float64 and
    ``Co <= LOOP_MAX_CO``, numba present), else None."""
    dtype = np.result_type(x, w)
    taps = _taps(w, packed)
    if taps.dtype != dtype:
        taps = taps.astype(dtype)
    gemm = _blas_gemm(dtype)
    loops = _loops_jit() if gemm is not None and co <= LOOP_MAX_CO else None
    return dtype, taps, gemm, loops


def scatter(x: np.ndarray, w: np.ndarray, stride: int, padding: int = 0, output_padding: int = 0, *,
            packed: np.ndarray | None = None):
    """Transpose convolution by its definition (scatter-add of every input times every tap).

    Parameters
    ----------
    x : ndarray, shape (N, Ci, H, W)
    w : ndarray, shape (Ci, Co, k, k)
    stride, padding, output_padding : int
    packed : ndarray, shape (k, k, Ci, Co), optional
        ``pack(w)``, made once per layer; without it each tap's (Ci, Co) slice of ``w`` is copied.

    Returns
    -------
    out : ndarray, shape (N, Co, Ho, Wo)
    work : Work
        ``macs = N Ci Co H W k^2``; ``outputs`` = size of the uncropped buffer per channel.

    Notes
    -----
    ``full[i s + kh, j s + kw] += x[i, j] w[kh, kw]`` on a buffer of
    ``(H - 1) s + k + max(0, op - p)`` rows, then ``out = full[p : p + Ho]`` [Dumoulin16 §4].
    The channels-last input is the shared layout conversion (:func:`_padded`, no padding); each
    tap is the shared in-place gemm (:func:`_gemm_acc`, beta 0) into one (N H W, Co) product
    buffer allocated once, then added at stride ``s`` into the uncropped buffer.
    """
    s, p, op = stride, padding, output_padding
    n, ci, co, h, wd, ho, wo = _check(x, w, s, p, op)
    k = w.shape[2]
    dtype, taps, gemm, _ = _engine(x, w, packed, co)
    xn = _padded(x, h, wd, 0, 0, layout="nhwc", dtype=dtype).reshape(n * h * wd, ci)
    hf = (h - 1) * s + k + max(0, op - p)
    wf = (wd - 1) * s + k + max(0, op - p)
    full = np.zeros((n, hf, wf, co), dtype=dtype)
    prod = np.empty((n * h * wd, co), dtype=dtype)
    work = Work(outputs=hf * wf)
    for kh in range(k):
        for kw in range(k):
            _gemm_acc(gemm, xn, taps[kh, kw], prod, True, work)
            full[:, kh:kh + (h - 1) * s + 1:s, kw:kw + (wd - 1) * s + 1:s, :] += prod.reshape(n, h, wd, co)
    del xn, prod, taps
    return full[:, p:p + ho, p:p + wo, :].transpose(0, 3, 1, 2), work


def zero_insert(x: np.ndarray, w: np.ndarray, stride: int, padding: int = 0, output_padding: int = 0, *,
                packed: np.ndarray | None = None):
    """Conventional transpose convolution: zero insertion, padding, stride-1 correlation.

    Parameters
    ----------
    x : ndarray, shape (N, Ci, H, W)
    w : ndarray, shape (Ci, Co, k, k)
    stride, padding, output_padding : int
    packed : ndarray, shape (k, k, Ci, Co), optional
        ``pack(w)``, made once per layer; without it each tap's (Ci, Co) slice of ``w`` is copied.

    Returns
    -------
    out : ndarray, shape (N, Co, Ho, Wo)
    work : Work
        ``macs = N Ci Co Ho Wo k^2``; ``outputs = Ho Wo``.

    Notes
    -----
    ``u`` = x with ``s - 1`` zeros between elements, padded by ``k - 1 - p`` before and
    ``k - 1 - p + op`` after (a negative pad crops), shape ``Ho + k - 1``; then
    ``out[o] = sum_kh u[o + kh] w[k - 1 - kh]`` [Dumoulin16 §4.5, relationship 13-14], i.e.
    ``out[o] = sum_t u[o + k - 1 - t] w[t]``: one output class of stride 1 with ``k`` taps per
    axis, run by the shared class schedule (:func:`_class_gemms`; the output itself is the
    class's accumulator) or, for ``Co <= LOOP_MAX_CO``, the shared loop nest, on the
    zero-inserted input built by the shared layout conversion (:func:`_padded`, ``step = s``).
    About ``(s^2 - 1)/s^2`` of its MACs multiply inserted zeros.
    """
    s, p, op = stride, padding, output_padding
    n, ci, co, h, wd, ho, wo = _check(x, w, s, p, op)
    k = w.shape[2]
    dtype, taps, gemm, loops = _engine(x, w, packed, co)
    lo = k - 1 - p
    hu, wu = ho + k - 1, wo + k - 1
    rows, cols = [Phase(0, 0, k - 1, k, ho)], [Phase(0, 0, k - 1, k, wo)]
    work = Work(outputs=ho * wo)
    if loops is not None:
        up = _padded(x, hu, wu, lo, lo, step=s, layout="nchw", dtype=dtype)
        out = np.zeros((n, co, ho, wo), dtype=dtype)
        _run_loops(loops, up, taps, out, rows, cols, 1, 1, 0, 0, work)
        del up, taps
        return out, work
    up = _padded(x, hu, wu, lo, lo, step=s, dtype=dtype)  # (Hu, N, Wu, Ci)
    outq = np.empty((ho, n, wo, co), dtype=dtype)
    for _ in _class_gemms(up, taps, rows, cols, 1, 0, 0, gemm, work, lambda pr, pc, m: outq.reshape(m, co)):
        pass
    del up, taps
    return _nchw(outq), work


class _Grid(NamedTuple):
    """The phases of a class-schedule variant on one grid (:func:`phase_plan`): the row and column
    phases with their low and high padding (input elements), and the padded input's height and width."""

    rows: list[Phase]
    rlo: int
    rhi: int
    cols: list[Phase]
    clo: int
    chi: int
    hp: int
    wp: int


def _grid(h: int, wd: int, k: int, s: int, p: int, op: int, grid: str) -> _Grid:
    """The row and column phase plans the class-schedule variants share, on *grid* (``"ceil"`` or
    ``"exact"``, :func:`phase_plan`), for an (h, wd) input."""
    rows, rlo, rhi = phase_plan(h, k, s, p, op, grid=grid)
    cols, clo, chi = phase_plan(wd, k, s, p, op, grid=grid)
    return _Grid(rows, rlo, rhi, cols, clo, chi, h + rlo + rhi, wd + clo + chi)


def _loop_sub_outputs(loops, xpc: np.ndarray, taps: np.ndarray, rows, cols, s: int, rlo: int, clo: int, work: Work,
                      n: int, co: int, dtype) -> list:
    """Kernel-segregated's sub-outputs by the shared loop nest: one zeroed (N, Co, rows, cols)
    buffer per sub-kernel ``(r, c)``, each alive until the interleave, as ``(r, c, y)``."""
    subs = []
    for pr in rows:
        for pc in cols:
            y = np.zeros((n, co, pr.count, pc.count), dtype=dtype)  # one sub-kernel's own buffer
            _run_loops(loops, xpc, taps, y, [Phase(0, pr.a, pr.d, pr.taps, pr.count)],
                       [Phase(0, pc.a, pc.d, pc.taps, pc.count)], s, 1, rlo, clo, work)
            subs.append((pr.r, pc.r, y))
    return subs


def _interleave_nchw(out: np.ndarray, subs: list, s: int) -> None:
    """Write each sub-output ``(r, c, y)`` (y of shape (N, Co, ceil(Ho/s), ceil(Wo/s))) into
    ``out[:, :, r::s, c::s]`` (N, Co, Ho, Wo), cropping the extra elements [Tida22]."""
    for r, c, y in subs:
        view = out[:, :, r::s, c::s]
        view[...] = y[:, :, :view.shape[2], :view.shape[3]]


def _interleave_rows(outq: np.ndarray, subs: list, s: int) -> None:
    """Write each sub-output ``(pr, pc, y)`` (y of shape (rows, N, cols, Co)) into
    ``outq[pr.r::s, :, pc.r::s, :]`` (Ho, N, Wo, Co), cropping the extra elements [Tida22]."""
    for pr, pc, y in subs:
        view = outq[pr.r::s, :, pc.r::s, :]
        view[...] = y[:view.shape[0], :, :view.shape[2], :]


def kernel_segregated(x: np.ndarray, w: np.ndarray, stride: int, padding: int = 0, output_padding: int = 0, *,
                      packed: np.ndarray | None = None):
    """Kernel-segregated transpose convolution (Tida et al. 2022): ``s^2`` sub-kernels, each
    computing a ``ceil(Ho/s) x ceil(Wo/s)`` sub-output, interleaved and cropped.

    Parameters
    ----------
    x : ndarray, shape (N, Ci, H, W)
    w : ndarray, shape (Ci, Co, k, k)
    stride, padding, output_padding : int
    packed : ndarray, shape (k, k, Ci, Co), optional
        ``pack(w)``, made once per layer; without it each tap's (Ci, Co) slice of ``w`` is copied.

    Returns
    -------
    out : ndarray, shape (N, Co, Ho, Wo)
    work : Work
        ``macs = N Ci Co k^2 ceil(Ho/s) ceil(Wo/s)``; ``outputs = s^2 ceil(Ho/s) ceil(Wo/s)``.

    Notes
    -----
    Sub-output ``(r, c)`` is ``Y[q, u] = sum_{t, v} x[q + d_r - t, u + d_c - v] w[a_r + s t, a_c + s v]``
    on the ceil grid (see :func:`phase_plan`); ``out[r::s, c::s] = Y[:ceil((Ho - r)/s), :ceil((Wo - c)/s)]``
    drops the extra elements [Tida22]. All ``s^2`` sub-output buffers are alive before the
    interleave, as with one buffer per sub-kernel launch. Each sub-output is computed by the
    shared class schedule (:func:`_class_gemms`, the sub-output its accumulator) or, for
    ``Co <= LOOP_MAX_CO``, the shared loop nest, on the input padded by the shared layout
    conversion (:func:`_padded`).
    """
    s, p, op = stride, padding, output_padding
    n, ci, co, h, wd, ho, wo = _check(x, w, s, p, op)
    k = w.shape[2]
    dtype, taps, gemm, loops = _engine(x, w, packed, co)
    g = _grid(h, wd, k, s, p, op, "ceil")
    rows, cols, rlo, clo, hp, wp = g.rows, g.cols, g.rlo, g.clo, g.hp, g.wp
    del g  # held through the call, its tuple would count in the measured peak temporary memory
    work = Work(outputs=sum(pr.count for pr in rows) * sum(pc.count for pc in cols))
    if loops is not None:
        xpc = _padded(x, hp, wp, rlo, clo, layout="nchw", dtype=dtype)
        out = np.empty((n, co, ho, wo), dtype=dtype)
        subs = _loop_sub_outputs(loops, xpc, taps, rows, cols, s, rlo, clo, work, n, co, dtype)
        del xpc
        _interleave_nchw(out, subs, s)
        del subs, taps
        return out, work
    xq = _padded(x, hp, wp, rlo, clo, dtype=dtype)  # (Hp, N, Wp, Ci)
    outq = np.empty((ho, n, wo, co), dtype=dtype)
    subs = []
    for pr, pc, y in _class_gemms(xq, taps, rows, cols, s, rlo, clo, gemm, work,
                                  lambda pr, pc, m: np.empty((m, co), dtype=dtype)):
        if y is None:  # a sub-kernel without taps (a >= k): its sub-output is zero
            y = np.zeros((n * pr.count * pc.count, co), dtype=dtype)
        subs.append((pr, pc, y.reshape(pr.count, n, pc.count, co)))
        del y
    del xq
    _interleave_rows(outq, subs, s)
    del subs, taps
    return _nchw(outq), work


def unified(x: np.ndarray, w: np.ndarray, stride: int, padding: int = 0, output_padding: int = 0, *,
            packed: np.ndarray | None = None):
    """Unified kernel-segregated transpose convolution (Tida et al. 2025): each output element
    computed once, from its parity class's sub-kernel, written in place.

    Parameters
    ----------
    x : ndarray, shape (N, Ci, H, W)
    w : ndarray, shape (Ci, Co, k, k)
    stride, padding, output_padding : int
    packed : ndarray, shape (k, k, Ci, Co), optional
        ``pack(w)``, made once per layer; without it each tap's (Ci, Co) slice of ``w`` is copied.

    Returns
    -------
    out : ndarray, shape (N, Co, Ho, Wo)
    work : Work
        ``macs = N Ci Co sum_{r,c} ceil((Ho-r)/s) ceil((Wo-c)/s) taps_r taps_c``;
        ``outputs = Ho Wo`` exactly.

    Notes
    -----
    ``out[s q + r, s u + c] = sum_{t, v} x[q + d_r - t, u + d_c - v] w[a_r + s t, a_c + s v]`` over
    the exact grid of class ``(r, c)`` (see :func:`phase_plan`) [Tida25]. A class's taps are
    accumulated in one transient the size of that class (what a GPU thread keeps in registers)
    and written once into its strided output positions; no class's buffer outlives its write, so
    there are never ``s^2`` sub-outputs alive and no element is computed twice. Classes without
    taps (``a >= k``, possible when ``s > k``) stay zero.

    The classes run through the shared class schedule (:func:`_class_gemms`: per column tap one
    window copy, per row tap one in-place gemm on a contiguous block of it) on the input padded
    by the shared layout conversion (:func:`_padded`, rows outermost); the output is held as
    (Ho, N, Wo, Co) and returned as its NCHW view. With ``Co <= LOOP_MAX_CO`` (float32 /
    float64, numba present) the same sums run as the shared compiled loop nest over the
    zero-padded NCHW input instead: per class and output row, a ``(Co, count)`` transient
    accumulates every tap (issuing the same MACs, padding zeros included) and is written once
    into the output, which is then a contiguous NCHW array.
    """
    s, p, op = stride, padding, output_padding
    n, ci, co, h, wd, ho, wo = _check(x, w, s, p, op)
    k = w.shape[2]
    dtype, taps, gemm, loops = _engine(x, w, packed, co)
    g = _grid(h, wd, k, s, p, op, "exact")
    rows, cols, rlo, clo, hp, wp = g.rows, g.cols, g.rlo, g.clo, g.hp, g.wp
    del g  # held through the call, its tuple would count in the measured peak temporary memory
    work = Work(outputs=ho * wo)
    if loops is not None:
        xpc = _padded(x, hp, wp, rlo, clo, layout="nchw", dtype=dtype)
        out = np.zeros((n, co, ho, wo), dtype=dtype)
        _run_loops(loops, xpc, taps, out, rows, cols, s, s, rlo, clo, work)
        del xpc, taps
        return out, work
    xq = _padded(x, hp, wp, rlo, clo, dtype=dtype)  # (Hp, N, Wp, Ci)
    outq = np.zeros((ho, n, wo, co), dtype=dtype)
    for pr, pc, acc in _class_gemms(xq, taps, rows, cols, s, rlo, clo, gemm, work,
                                    lambda pr, pc, m: np.empty((m, co), dtype=dtype)):
        if acc is not None:  # each output written once
            outq[pr.r::s, :, pc.r::s, :] = acc.reshape(pr.count, n, pc.count, co)
        del acc
    del xq, taps
    return _nchw(outq), work


VARIANTS = {
    "scatter": scatter,
    "zero-insert": zero_insert,
    "kernel-segregated": kernel_segregated,
    "unified": unified,
}


def run(variant: str, x: np.ndarray, w: np.ndarray, stride: int, padding: int = 0, output_padding: int = 0, *,
        packed: np.ndarray | None = None):
    """Dispatch to one variant by name (``packed``: optional :func:`pack` of ``w``). Raises
    ParameterError for an unknown name."""
    try:
        fn = VARIANTS[variant]
    except KeyError:
        raise ParameterError(f"transpose-conv: unknown variant {variant!r}; expected one of {list(VARIANTS)}") from None
    return fn(x, w, stride, padding, output_padding, packed=packed)
