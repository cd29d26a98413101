"""Transpose convolution four ways, on real numpy arrays (NCHW), with counted work.

Every function computes PyTorch ``ConvTranspose2d`` semantics (no dilation, no groups, no bias):

    Ho = (H - 1) s - 2 p + k + op,   Wo = (W - 1) s - 2 p + k + op
    out[n, co, i s + kh - p, j s + kw - p] += x[n, ci, i, j] * w[ci, co, kh, kw]

with ``x`` of shape (N, Ci, H, W), ``w`` of shape (Ci, Co, k, k) (PyTorch's layout), stride
``s``, padding ``p`` and output padding ``op`` (0 <= op < s). Each returns ``(out, stats)`` where
``out`` has shape (N, Co, Ho, Wo) and ``stats`` is a :class:`Work` counted by the code as it runs
(multiply-accumulates issued, output elements computed before any crop).

scatter, zero-insert and kernel segregation share one computational primitive: a *tap GEMM*,
``(N h w, Ci) @ (Ci, Co)`` for one kernel tap over a spatial slab (``numpy.tensordot``), plus
an add. Data are held channels-last (NHWC) inside; the result is returned as an NCHW view of the
channels-last buffer. Every variant takes the weights pre-packed once per layer
(:func:`pack`, contiguous ``(k, k, Ci, Co)`` taps). Since issue 19 the unified variant runs
faster kernels for the same sums, with the same MACs and its class-at-a-time semantics: BLAS
``gemm`` accumulating in place over contiguous row blocks of per-column-tap window copies, or, for
``Co <= LOOP_MAX_CO``, a compiled loop nest. Its measured speed-ups over the others therefore
include an implementation gap (docs/techniques/transpose-conv.md).

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

import numpy as np

from suite.errors import ParameterError

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


def output_size(h: int, k: int, s: int, p: int, op: int = 0) -> int:
    """Transpose-convolution output size along one axis: ``(h - 1) s - 2 p + k + op``.

    Raises
    ------
    ParameterError
        A size, kernel or stride below 1, negative padding, ``op`` outside ``[0, s)``, or an
        output size below 1.
    """
    if h < 1 or k < 1 or s < 1:
        raise ParameterError(f"transpose conv: expected input size, kernel and stride >= 1, got h={h}, k={k}, s={s}")
    if p < 0:
        raise ParameterError(f"transpose conv: expected padding >= 0, got {p}")
    if not 0 <= op < s:
        raise ParameterError(f"transpose conv: expected 0 <= output_padding < stride ({s}), got {op}")
    ho = (h - 1) * s - 2 * p + k + op
    if ho < 1:
        raise ParameterError(f"transpose conv: output size (h-1)s-2p+k+op = {ho} < 1 for h={h}, k={k}, s={s}, p={p}, op={op}")
    return ho


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


def _gemm(slab: np.ndarray, tap: np.ndarray, work: Work) -> np.ndarray:
    """One tap GEMM: (N, h, w, Ci) x (Ci, Co) -> (N, h, w, Co); counts its MACs."""
    work.macs += slab.shape[0] * slab.shape[1] * slab.shape[2] * tap.shape[0] * tap.shape[1]
    return np.tensordot(slab, tap, axes=([3], [0]))


def _nchw(out_nhwc: np.ndarray) -> np.ndarray:
    return out_nhwc.transpose(0, 3, 1, 2)


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
    """
    s, p, op = stride, padding, output_padding
    n, ci, co, h, wd, ho, wo = _check(x, w, s, p, op)
    k = w.shape[2]
    taps = _taps(w, packed)
    xn = np.ascontiguousarray(x.transpose(0, 2, 3, 1))
    hf = (h - 1) * s + k + max(0, op - p)
    wf = (wd - 1) * s + k + max(0, op - p)
    full = np.zeros((n, hf, wf, co), dtype=np.result_type(x, w))
    work = Work(outputs=hf * wf)
    for kh in range(k):
        for kw in range(k):
            full[:, kh:kh + (h - 1) * s + 1:s, kw:kw + (wd - 1) * s + 1:s, :] += _gemm(xn, taps[kh, kw], work)
    del xn, taps
    return _nchw(full[:, p:p + ho, p:p + wo, :]), work


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
    ``out[o] = sum_kh u[o + kh] w[k - 1 - kh]`` [Dumoulin16 §4.5, relationship 13-14].
    """
    s, p, op = stride, padding, output_padding
    n, ci, co, h, wd, ho, wo = _check(x, w, s, p, op)
    k = w.shape[2]
    taps = _taps(w, packed)
    lo = k - 1 - p
    hu, wu = ho + k - 1, wo + k - 1
    up = np.zeros((n, hu, wu, ci), dtype=x.dtype)

    def span(size_in: int, size_up: int) -> tuple[int, int]:
        i0 = max(0, _ceil_div(-lo, s))
        i1 = min(size_in, (size_up - 1 - lo) // s + 1)
        return i0, i1

    (i0, i1), (j0, j1) = span(h, hu), span(wd, wu)
    if i1 > i0 and j1 > j0:
        up[:, lo + i0 * s:lo + (i1 - 1) * s + 1:s, lo + j0 * s:lo + (j1 - 1) * s + 1:s, :] = \
            x[:, :, i0:i1, j0:j1].transpose(0, 2, 3, 1)
    out = np.zeros((n, ho, wo, co), dtype=np.result_type(x, w))
    work = Work(outputs=ho * wo)
    for kh in range(k):
        for kw in range(k):
            out += _gemm(up[:, kh:kh + ho, kw:kw + wo, :], taps[k - 1 - kh, k - 1 - kw], work)
    del up, taps
    return _nchw(out), work


def _to_nhwc_loops(x, xp, lo, clo):  # pragma: no cover - compiled by numba, see _padded
    n_, c_, h_, w_ = x.shape
    for n in range(n_):
        for i in range(h_):
            for c in range(c_):
                xr = x[n, c, i]
                for j in range(w_):
                    xp[n, lo + i, clo + j, c] = xr[j]
    return xp


_TO_NHWC_COMPILED = None


def _padded(x: np.ndarray, ph: tuple[int, int], pw: tuple[int, int], *, rows_outer: bool = False) -> np.ndarray:
    """The input zero-padded and channels-last, (N, H + ph0 + ph1, W + pw0 + pw1, Ci): the one
    layout conversion. For float32 / float64 C-contiguous input a numba loop nest writes it
    (2-4x numpy's strided transpose-assign on the GAN layers), else numpy; same values.
    ``rows_outer``: stored as (Hp, N, Wp, Ci) in memory (returned as the (N, Hp, Wp, Ci) view)."""
    global _TO_NHWC_COMPILED
    n, ci, h, wd = x.shape
    hp, wp = h + ph[0] + ph[1], wd + pw[0] + pw[1]
    xp = np.zeros((hp, n, wp, ci), dtype=x.dtype).transpose(1, 0, 2, 3) if rows_outer else \
        np.zeros((n, hp, wp, ci), dtype=x.dtype)
    if x.dtype in (np.float32, np.float64) and x.flags.c_contiguous:
        if _TO_NHWC_COMPILED is None:
            try:
                import numba
            except ImportError:  # pragma: no cover - numba is a core dependency
                _TO_NHWC_COMPILED = False
            else:
                _TO_NHWC_COMPILED = numba.njit(cache=True, nogil=True)(_to_nhwc_loops)
        if _TO_NHWC_COMPILED:
            return _TO_NHWC_COMPILED(x, xp, ph[0], pw[0])
    xp[:, ph[0]:ph[0] + h, pw[0]:pw[0] + wd, :] = x.transpose(0, 2, 3, 1)
    return xp


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
    interleave, as with one buffer per sub-kernel launch.
    """
    s, p, op = stride, padding, output_padding
    n, ci, co, h, wd, ho, wo = _check(x, w, s, p, op)
    k = w.shape[2]
    taps = _taps(w, packed)
    rows, rlo, rhi = phase_plan(h, k, s, p, op, grid="ceil")
    cols, clo, chi = phase_plan(wd, k, s, p, op, grid="ceil")
    xp = _padded(x, (rlo, rhi), (clo, chi))
    dtype = np.result_type(x, w)
    out = np.empty((n, ho, wo, co), dtype=dtype)
    work = Work()
    subs = []
    for pr in rows:
        for pc in cols:
            work.outputs += pr.count * pc.count
            y = None
            for t in range(pr.taps):
                for v in range(pc.taps):
                    i0, j0 = rlo + pr.d - t, clo + pc.d - v
                    g = _gemm(xp[:, i0:i0 + pr.count, j0:j0 + pc.count, :], taps[pr.a + s * t, pc.a + s * v], work)
                    if y is None:
                        y = g
                    else:
                        y += g
                    del g
            if y is None:
                y = np.zeros((n, pr.count, pc.count, co), dtype=dtype)
            subs.append((pr.r, pc.r, y))
    for r, c, y in subs:  # interleave, cropping the extra elements
        view = out[:, r::s, c::s, :]
        view[...] = y[:, :view.shape[1], :view.shape[2], :]
    del subs, xp, taps
    return _nchw(out), work


def _blas_gemm(dtype: np.dtype):
    """BLAS ``?gemm`` for float32 / float64 (scipy.linalg.blas), or None for another dtype."""
    from scipy.linalg import blas

    return {np.dtype(np.float32): blas.sgemm, np.dtype(np.float64): blas.dgemm}.get(np.dtype(dtype))


#: Output channels up to which :func:`unified` runs its compiled loop nest instead of per-tap BLAS
#: gemms: a gemm with N = Co <= 8 columns fills few vector lanes (measured: (1024, 128) x (128, 3)
#: at 24 GFLOP/s vs 110 for Co = 128 on this suite's 1-thread reference machine, docs/performance.md).
LOOP_MAX_CO = 8


def _unified_loops(xpc, wk, out, acc, rows, cols, s, rlo, clo):  # pragma: no cover - compiled by numba
    """Loop nest of :func:`unified` for small ``Co`` (see :func:`_unified_jit`). ``xpc``: padded
    NCHW input (N, Ci, Hp, Wp); ``wk``: packed (k, k, Ci, Co) taps; ``out``: NCHW output, zeroed;
    ``acc``: (Co, max count) scratch; ``rows`` / ``cols``: (s, 5) int64 ``(r, a, d, taps, count)``."""
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
                        kh = ar + s * t
                        for v in range(tc):
                            j0 = clo + dc - v
                            wtap = wk[kh, ac + s * v]
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
                    for o in range(co_):  # each output element written once, in place
                        orow = out[n, o, s * q + r]
                        ao = acc[o]
                        for u in range(cc):
                            orow[s * u + c] = ao[u]
    return out


_UNIFIED_COMPILED = None


def _unified_jit():
    """:func:`_unified_loops` compiled by numba on first use (``cache=True``; ``fastmath`` only
    contracts multiply-adds into FMAs: no reassociation across taps or channel groups), or None
    when numba is missing."""
    global _UNIFIED_COMPILED
    if _UNIFIED_COMPILED is None:
        try:
            import numba
        except ImportError:  # pragma: no cover - numba is a core dependency
            _UNIFIED_COMPILED = False
        else:
            _UNIFIED_COMPILED = numba.njit(cache=True, nogil=True, fastmath={"contract"})(_unified_loops)
    return _UNIFIED_COMPILED or None


def _gemm_acc(gemm, a: np.ndarray, tap: np.ndarray, acc: np.ndarray, first: bool, work: Work) -> None:
    """``acc <- a @ tap (+ acc unless first)`` in place by BLAS ``?gemm``: (M, Ci) x (Ci, Co) into
    the C-contiguous (M, Co) ``acc``, through Fortran views (``acc.T = tap.T a.T + beta acc.T``)."""
    if not tap.flags.c_contiguous:
        tap = np.ascontiguousarray(tap)
    work.macs += a.shape[0] * a.shape[1] * tap.shape[1]
    gemm(1.0, tap.T, a.T, beta=0.0 if first else 1.0, c=acc.T, overwrite_c=True)


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

    For float32 / float64 each tap is one BLAS ``gemm`` that accumulates into the class's
    transient in place (``C <- A W + beta C``, beta 0 for the class's first tap, 1 after), so
    no per-tap product buffer or separate add exists; its operand ``A`` is the tap's input slab,
    a block of rows of one window copy: per column tap, the ``count + taps - 1`` input rows the
    class's row taps read, by the column window, for the whole batch. The padded input and the
    output are held rows-outermost, (Hp, N, Wp, Ci) and (Ho, N, Wo, Co), so those blocks are
    contiguous: a class copies ``taps_c`` windows instead of ``taps_r taps_c`` slabs. The result
    is an NCHW view of the (Ho, N, Wo, Co) buffer. Other dtypes take the shared tap GEMM (tensordot) plus an add.
    With ``Co <= LOOP_MAX_CO`` (float32 / float64, numba present) the same sums run as one
    compiled loop nest over the zero-padded NCHW input instead: per class and output row, a
    ``(Co, count)`` transient accumulates every tap (issuing the same MACs, padding zeros
    included) and is written once into the output, which is then a contiguous NCHW array.
    """
    s, p, op = stride, padding, output_padding
    n, ci, co, h, wd, ho, wo = _check(x, w, s, p, op)
    k = w.shape[2]
    taps = _taps(w, packed)
    rows, rlo, rhi = phase_plan(h, k, s, p, op, grid="exact")
    cols, clo, chi = phase_plan(wd, k, s, p, op, grid="exact")
    dtype = np.result_type(x, w)
    gemm = _blas_gemm(dtype)
    loops = _unified_jit() if gemm is not None and co <= LOOP_MAX_CO else None
    if loops is not None:
        xpc = np.zeros((n, ci, h + rlo + rhi, wd + clo + chi), dtype=dtype)
        xpc[:, :, rlo:rlo + h, clo:clo + wd] = x
        out = np.zeros((n, co, ho, wo), dtype=dtype)
        acc = np.empty((co, max(pc.count for pc in cols)), dtype=dtype)
        plan = [np.array([(ph.r, ph.a, ph.d, ph.taps, ph.count) for ph in phases], dtype=np.int64)
                for phases in (rows, cols)]
        loops(xpc, taps if taps.dtype == dtype and taps.flags.c_contiguous else np.ascontiguousarray(taps, dtype),
              out, acc, plan[0], plan[1], s, rlo, clo)
        work = Work(outputs=ho * wo)
        for pr in rows:  # the classes the loop nest runs, each issuing its rows x taps x channels
            for pc in cols:
                if pr.taps and pc.taps and pc.count:
                    work.macs += n * pr.count * pc.count * pr.taps * pc.taps * ci * co
        del xpc, acc, plan
        return out, work
    xr = x if x.dtype == dtype else x.astype(dtype)
    if gemm is None:  # another dtype: the shared tap GEMM and an add per tap
        xp = _padded(xr, (rlo, rhi), (clo, chi))
        out = np.zeros((n, ho, wo, co), dtype=dtype)
        work = Work()
        for pr in rows:
            for pc in cols:
                work.outputs += pr.count * pc.count
                if not (pr.count and pc.count and pr.taps and pc.taps):
                    continue
                acc = None
                for t in range(pr.taps):
                    for v in range(pc.taps):
                        i0, j0 = rlo + pr.d - t, clo + pc.d - v
                        g = _gemm(xp[:, i0:i0 + pr.count, j0:j0 + pc.count, :], taps[pr.a + s * t, pc.a + s * v], work)
                        acc = g if acc is None else acc.__iadd__(g)
                        del g
                out[:, pr.r::s, pc.r::s, :] = acc
                del acc
        del xp, taps
        return _nchw(out), work
    if taps.dtype != dtype:
        taps = taps.astype(dtype)
    # rows outermost in memory, (Hp, N, Wp, Ci) and (Ho, N, Wo, Co): the rows a row tap reads of a
    # column window are then one contiguous block for the whole batch
    xq = _padded(xr, (rlo, rhi), (clo, chi), rows_outer=True).transpose(1, 0, 2, 3)  # (Hp, N, Wp, Ci)
    outq = np.zeros((ho, n, wo, co), dtype=dtype)
    work = Work()
    for pr in rows:
        for pc in cols:
            work.outputs += pr.count * pc.count
            if not (pr.count and pc.count and pr.taps and pc.taps):
                continue
            m = n * pr.count * pc.count
            acc = np.empty((m, co), dtype=dtype)  # the class's outputs, rows (q, n, u)
            ilo = rlo + pr.d - (pr.taps - 1)  # first padded input row any of the class's row taps reads
            for v in range(pc.taps):
                j0 = clo + pc.d - v
                # one window copy per column tap: the count + taps - 1 input rows the class's row taps
                # read, by this column window; every row tap's gemm operand is a contiguous block of it
                win = np.ascontiguousarray(xq[ilo:ilo + pr.count + pr.taps - 1, :, j0:j0 + pc.count, :])
                for t in range(pr.taps):
                    i0 = rlo + pr.d - t - ilo
                    a = win[i0:i0 + pr.count].reshape(m, ci)  # a view: no copy per tap
                    _gemm_acc(gemm, a, taps[pr.a + s * t, pc.a + s * v], acc, (t, v) == (0, 0), work)
                    del a  # a view of win: it would keep this window alive beside the next one
                del win
            outq[pr.r::s, :, pc.r::s, :] = acc.reshape(pr.count, n, pc.count, co)  # each output written once
            del acc
    del xq, taps
    return outq.transpose(1, 3, 0, 2), work


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
