"""The two stencil kernels, written three ways, and their operation counts.

Grids are 3-D ``numpy`` arrays indexed ``[x, y, z]`` (axis 0 = x = i, axis 1 = y = j,
axis 2 = z = k), periodic in every direction. Each kernel is implemented

1. as **shifted slices** of a halo-padded array (:func:`diffusion7_padded`,
   :func:`advection_padded`): the production path, and the one the decomposed runs use (a
   slab or a block of columns pads itself with the halo planes it received);
2. as **correlations** with small fixed-weight kernels (:func:`diffusion7_correlate`,
   :func:`advection_correlate`) through :func:`scipy.ndimage.correlate` (``mode="wrap"``),
   standing in for TensorFlow's convolution ops, which is how a stencil is written as a TF
   "model" [Brown22] (TensorFlow itself is no dependency);
3. point-wise with :func:`numpy.roll` in float64 (:func:`diffusion7_roll`,
   :func:`advection_roll`): the oracle the execute fidelity checks against.

Kernels
-------
``diffusion7`` -- one Jacobi step of the 3-D 7-point Laplacian (explicit diffusion)::

    out[i,j,k] = a u[i,j,k] + c (u[i-1] + u[i+1] + u[j-1] + u[j+1] + u[k-1] + u[k+1]),
    a = 1 - 6 c

``advection`` -- second-order flux-form advection of the staggered velocities (u on x faces,
v on y faces, w on z faces) into three source fields, in the style of the MONC model's
Piacsek-Williams scheme; this flux form is OURS (the paper's kernel is not known, and MONC's
exact expression was not read). With ``tc* = 0.25 / d*`` every term is the difference of
a face flux ``(mean advecting velocity) x (mean advected velocity)`` (x4 absorbed in tc)::

    su = tcx [(u[i-1]+u[i])^2 - (u[i]+u[i+1])^2]
       + tcy [(v[i,j-1]+v[i+1,j-1]) (u[j-1]+u[j]) - (v[i,j]+v[i+1,j]) (u[j]+u[j+1])]
       + tcz [(w[i,k-1]+w[i+1,k-1]) (u[k-1]+u[k]) - (w[i,k]+w[i+1,k]) (u[k]+u[k+1])]
    sv = tcx [(u[i-1,j]+u[i-1,j+1]) (v[i-1]+v[i]) - (u[i,j]+u[i,j+1]) (v[i]+v[i+1])]
       + tcy [(v[j-1]+v[j])^2 - (v[j]+v[j+1])^2]
       + tcz [(w[j,k-1]+w[j+1,k-1]) (v[k-1]+v[k]) - (w[j,k]+w[j+1,k]) (v[k]+v[k+1])]
    sw = tcx [(u[i-1,k]+u[i-1,k+1]) (w[i-1]+w[i]) - (u[i,k]+u[i,k+1]) (w[i]+w[i+1])]
       + tcy [(v[j-1,k]+v[j-1,k+1]) (w[j-1]+w[j]) - (v[j,k]+v[j,k+1]) (w[j]+w[j+1])]
       + tcz [(w[k-1]+w[k])^2 - (w[k]+w[k+1])^2]

Each bracket is ``F(face - 1/2) - F(face + 1/2)``, so on a periodic grid every source sums to
zero (the fluxes telescope); zero velocity or a constant field gives zero source.

Operation counts (:func:`flop_count`) are those of the shifted-slice implementation, face
fluxes computed once per face: they are what :class:`Ops` counts while the kernel runs.

References
----------
.. [Brown22] N. Brown, B. Echols, J. Zarins, T. Grosser, "TensorFlow as a DSL for stencil-based
   computation on the Cerebras Wafer Scale Engine", arXiv 2210.04795 (2022), abstract.
.. [Piacsek70] S. A. Piacsek, G. P. Williams, "Conservation properties of convection difference
   schemes", J. Comput. Phys. 6(3), 1970.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from suite_cerebras_stencil.constants import KERNELS

__all__ = [
    "KERNELS",
    "FIELDS_IN",
    "FIELDS_OUT",
    "DIFFUSION_C",
    "ADVECTION_TC",
    "Ops",
    "pad_wrap",
    "diffusion7_padded",
    "advection_padded",
    "diffusion7_blocked",
    "diffusion7_jit",
    "advection_blocked",
    "diffusion7_correlate",
    "advection_correlate",
    "diffusion7_roll",
    "advection_roll",
    "apply",
    "apply_correlate",
    "apply_roll",
    "flop_count",
    "flops_per_point",
    "bytes_per_point",
    "resident_bytes_per_point",
    "halo_corners",
    "random_fields",
]

#: fields read and written per grid point
FIELDS_IN = {"diffusion7": 1, "advection": 3}
FIELDS_OUT = {"diffusion7": 1, "advection": 3}
#: diffusion coefficient c (stable for c <= 1/6); a = 1 - 6c
DIFFUSION_C = 0.1
#: (tcx, tcy, tcz) = 0.25 / (dx, dy, dz) for unit spacing
ADVECTION_TC = (0.25, 0.25, 0.25)


class Ops:
    """Elementwise arithmetic that counts FLOPs (one per output element of add, sub, mul).

    Parameters
    ----------
    count : bool
        When False the operations run without counting (the timed path).
    """

    def __init__(self, count: bool = True):
        self.count = count
        self.flops = 0

    def _n(self, r: np.ndarray) -> np.ndarray:
        if self.count:
            self.flops += int(r.size)
        return r

    def add(self, a, b):
        return self._n(np.add(a, b))

    def sub(self, a, b):
        return self._n(np.subtract(a, b))

    def mul(self, a, b):
        return self._n(np.multiply(a, b))


_NOCOUNT = Ops(count=False)


def pad_wrap(a: np.ndarray) -> np.ndarray:
    """The periodic halo of width 1 on every side: shape (a+2, b+2, c+2)."""
    return np.pad(a, 1, mode="wrap")


def _s(p: np.ndarray, x: slice, y: slice, z: slice) -> np.ndarray:
    return p[x, y, z]


# --------------------------------------------------------------------------- shifted slices


def diffusion7_padded(p: np.ndarray, c: float = DIFFUSION_C, ops: Ops | None = None) -> np.ndarray:
    """One 7-point Jacobi step on a halo-padded block.

    Parameters
    ----------
    p : ndarray, shape (a+2, b+2, c+2)
        The block with a halo of width 1 (face halos are read; corners are not).
    c : float
        Diffusion coefficient; the centre weight is ``1 - 6c``.
    ops : Ops, optional
        Counts FLOPs: 5 adds for the neighbour sum, 2 multiplies and 1 add = 8 per point.

    Returns
    -------
    ndarray, shape (a, b, c), the dtype of *p*.
    """
    o = ops or _NOCOUNT
    a_, b_, c_ = (n - 2 for n in p.shape)
    X, Y, Z = slice(1, a_ + 1), slice(1, b_ + 1), slice(1, c_ + 1)
    s = o.add(p[0:a_, Y, Z], p[2:a_ + 2, Y, Z])
    s = o.add(s, p[X, 0:b_, Z])
    s = o.add(s, p[X, 2:b_ + 2, Z])
    s = o.add(s, p[X, Y, 0:c_])
    s = o.add(s, p[X, Y, 2:c_ + 2])
    dt = p.dtype.type
    return o.add(o.mul(dt(1.0 - 6.0 * c), p[X, Y, Z]), o.mul(dt(c), s))


def diffusion7_blocked(p: np.ndarray, out: np.ndarray, c: float = DIFFUSION_C, planes: int = 4,
                       tmp: np.ndarray | None = None) -> np.ndarray:
    """:func:`diffusion7_padded` computed *planes* x-planes at a time into *out*, with in-place
    operations on one small temporary, so the temporaries stay in cache and main-memory
    traffic approaches the compulsory 2 values per point (the timed CPU path).

    The arithmetic per point is the same sequence as :func:`diffusion7_padded` (same order of
    additions), so the result is bit-identical to it.

    Parameters
    ----------
    p : ndarray, shape (a+2, b+2, c+2)
    out : ndarray, shape (a, b, c), written.
    planes : int
        x-planes per chunk.
    tmp : ndarray, optional
        Scratch of shape (planes, b, c) and p's dtype (allocated when absent).
    """
    a_, b_, c_ = out.shape
    dt = p.dtype.type
    ca, cc = dt(1.0 - 6.0 * c), dt(c)
    if tmp is None or tmp.shape != (planes, b_, c_):
        tmp = np.empty((planes, b_, c_), dtype=p.dtype)
    Y, Z = slice(1, b_ + 1), slice(1, c_ + 1)
    for i0 in range(0, a_, planes):
        i1 = min(i0 + planes, a_)
        n = i1 - i0
        t = tmp[:n]
        o = out[i0:i1]
        np.add(p[i0:i1, Y, Z], p[i0 + 2:i1 + 2, Y, Z], out=t)
        np.add(t, p[i0 + 1:i1 + 1, 0:b_, Z], out=t)
        np.add(t, p[i0 + 1:i1 + 1, 2:b_ + 2, Z], out=t)
        np.add(t, p[i0 + 1:i1 + 1, Y, 0:c_], out=t)
        np.add(t, p[i0 + 1:i1 + 1, Y, 2:c_ + 2], out=t)
        np.multiply(t, cc, out=t)
        np.multiply(p[i0 + 1:i1 + 1, Y, Z], ca, out=o)
        np.add(o, t, out=o)
    return out


def _diffusion7_loops(p, out, ca, cc):  # pragma: no cover - compiled by numba, see diffusion7_jit
    a_, b_, c_ = out.shape
    for i in range(a_):
        for j in range(b_):
            for k in range(c_):
                t = p[i, j + 1, k + 1] + p[i + 2, j + 1, k + 1]
                t = t + p[i + 1, j, k + 1]
                t = t + p[i + 1, j + 2, k + 1]
                t = t + p[i + 1, j + 1, k]
                t = t + p[i + 1, j + 1, k + 2]
                out[i, j, k] = p[i + 1, j + 1, k + 1] * ca + t * cc
    return out


_DIFFUSION7_COMPILED = None


def diffusion7_jit(p: np.ndarray, out: np.ndarray, c: float = DIFFUSION_C) -> np.ndarray:
    """:func:`diffusion7_padded` as one compiled loop nest over the points (numba, no fast-math):
    each point read once from memory and its six neighbours from cache, so the memory traffic is
    the compulsory 2 values per point in one pass. This is the timed CPU path for float32 and
    float64; its efficiency is what :data:`~suite_cerebras_stencil.model.CPU_STENCIL_EFFICIENCY`
    measures.

    The additions are in :func:`diffusion7_padded`'s order and numba does not contract them into
    fused multiply-adds without ``fastmath``, so the result is bit-identical to it (tested).

    Parameters
    ----------
    p : ndarray, shape (a+2, b+2, c+2), float32 or float64
    out : ndarray, shape (a, b, c), p's dtype; written.

    Raises
    ------
    TypeError
        For another dtype (numba has no float16 arithmetic: use :func:`diffusion7_blocked`).
    """
    global _DIFFUSION7_COMPILED
    if p.dtype not in (np.float32, np.float64) or out.dtype != p.dtype:
        raise TypeError(f"diffusion7_jit: expected float32 or float64 arrays of one dtype, got {p.dtype}/{out.dtype}")
    if _DIFFUSION7_COMPILED is None:
        import numba

        _DIFFUSION7_COMPILED = numba.njit(cache=True, nogil=True)(_diffusion7_loops)
    dt = p.dtype.type
    return _DIFFUSION7_COMPILED(p, out, dt(1.0 - 6.0 * c), dt(c))


def advection_padded(pu: np.ndarray, pv: np.ndarray, pw: np.ndarray, tc: tuple[float, float, float] = ADVECTION_TC,
                     ops: Ops | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Flux-form advection sources (su, sv, sw) on halo-padded blocks (formulas: module docstring).

    Parameters
    ----------
    pu, pv, pw : ndarray, shape (a+2, b+2, c+2)
        Padded velocity blocks. Read: the x, y, z face halos, plus two (x, y) corner columns:
        v at (+1, -1) and u at (-1, +1) (:func:`halo_corners`).
    tc : (tcx, tcy, tcz)
        ``0.25 / (dx, dy, dz)``.
    ops : Ops, optional
        FLOP counter (see :func:`flop_count`).

    Returns
    -------
    (su, sv, sw) : ndarrays of shape (a, b, c)
    """
    o = ops or _NOCOUNT
    a, b, c = (n - 2 for n in pu.shape)
    dt = pu.dtype.type
    tcx, tcy, tcz = (dt(t) for t in tc)
    X, Y, Z = slice(1, a + 1), slice(1, b + 1), slice(1, c + 1)
    Xf, Yf, Zf = slice(0, a + 1), slice(0, b + 1), slice(0, c + 1)  # faces i-1/2 for i = 0..a
    X1, Y1, Z1 = slice(1, a + 2), slice(1, b + 2), slice(1, c + 2)
    X2, Y2, Z2 = slice(2, a + 2), slice(2, b + 2), slice(2, c + 2)

    def dx(f):  # F(i-1/2) - F(i+1/2) for faces along x
        return o.sub(f[:-1], f[1:])

    def dy(f):
        return o.sub(f[:, :-1], f[:, 1:])

    def dz(f):
        return o.sub(f[:, :, :-1], f[:, :, 1:])

    def combine(tx, ty, tz):
        return o.add(o.add(o.mul(tcx, tx), o.mul(tcy, ty)), o.mul(tcz, tz))

    # su (u on x faces)
    s = o.add(pu[Xf, Y, Z], pu[X1, Y, Z])
    gx = o.mul(s, s)
    hy = o.mul(o.add(pv[X, Yf, Z], pv[X2, Yf, Z]), o.add(pu[X, Yf, Z], pu[X, Y1, Z]))
    hz = o.mul(o.add(pw[X, Y, Zf], pw[X2, Y, Zf]), o.add(pu[X, Y, Zf], pu[X, Y, Z1]))
    su = combine(dx(gx), dy(hy), dz(hz))
    # sv (v on y faces)
    hx = o.mul(o.add(pu[Xf, Y, Z], pu[Xf, Y2, Z]), o.add(pv[Xf, Y, Z], pv[X1, Y, Z]))
    s = o.add(pv[X, Yf, Z], pv[X, Y1, Z])
    gy = o.mul(s, s)
    hz = o.mul(o.add(pw[X, Y, Zf], pw[X, Y2, Zf]), o.add(pv[X, Y, Zf], pv[X, Y, Z1]))
    sv = combine(dx(hx), dy(gy), dz(hz))
    # sw (w on z faces)
    hx = o.mul(o.add(pu[Xf, Y, Z], pu[Xf, Y, Z2]), o.add(pw[Xf, Y, Z], pw[X1, Y, Z]))
    hy = o.mul(o.add(pv[X, Yf, Z], pv[X, Yf, Z2]), o.add(pw[X, Yf, Z], pw[X, Y1, Z]))
    s = o.add(pw[X, Y, Zf], pw[X, Y, Z1])
    gz = o.mul(s, s)
    sw = combine(dx(hx), dy(hy), dz(gz))
    return su, sv, sw


def advection_blocked(pu: np.ndarray, pv: np.ndarray, pw: np.ndarray, out: tuple[np.ndarray, np.ndarray, np.ndarray],
                      planes: int = 2, tc: tuple[float, float, float] = ADVECTION_TC):
    """:func:`advection_padded` computed *planes* x-planes at a time into *out* (su, sv, sw), so
    its temporaries stay in cache (the timed CPU path). Each chunk is the padded kernel on the
    chunk's planes and their halo planes, so the result is bit-identical to the whole-block call.
    """
    a = out[0].shape[0]
    for i0 in range(0, a, planes):
        i1 = min(i0 + planes, a)
        for o, r in zip(out, advection_padded(pu[i0:i1 + 2], pv[i0:i1 + 2], pw[i0:i1 + 2], tc)):
            o[i0:i1] = r
    return out


def halo_corners(kernel: str) -> tuple[tuple[str, int, int], ...]:
    """The (x, y) corner columns a block reads beyond its face halos: (field, dx, dy).

    ``diffusion7`` reads none; ``advection`` reads v at (+1, -1) (in su) and u at (-1, +1)
    (in sv) -- read off :func:`advection_padded`'s slices.
    """
    return () if kernel == "diffusion7" else (("v", +1, -1), ("u", -1, +1))


# --------------------------------------------------------------------------- correlations


def _corr(a: np.ndarray, taps: Mapping[tuple[int, int, int], float]) -> np.ndarray:
    """``out[i] = sum_o w_o a[i + o]`` (periodic) with :func:`scipy.ndimage.correlate`, a 3x3x3
    weight kernel holding ``w_o`` at ``1 + o`` (the centre is offset 0). float16 is correlated
    in float32 and rounded back (scipy has no float16 kernels)."""
    from scipy import ndimage

    work = a.astype(np.float32) if a.dtype == np.float16 else a  # ndimage has no float16 kernels
    k = np.zeros((3, 3, 3), dtype=work.dtype)
    for (ox, oy, oz), w in taps.items():
        k[1 + ox, 1 + oy, 1 + oz] = w
    return ndimage.correlate(work, k, mode="wrap").astype(a.dtype, copy=False)


def diffusion7_correlate(u: np.ndarray, c: float = DIFFUSION_C) -> np.ndarray:
    """:func:`diffusion7_padded` as one 3x3x3 correlation (``mode="wrap"``)."""
    taps = {(0, 0, 0): 1.0 - 6.0 * c}
    for ax in range(3):
        for s in (-1, 1):
            off = [0, 0, 0]
            off[ax] = s
            taps[tuple(off)] = c
    return _corr(u, taps)


def advection_correlate(u: np.ndarray, v: np.ndarray, w: np.ndarray, tc: tuple[float, float, float] = ADVECTION_TC
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`advection_padded` as correlations: two-tap "sum" kernels build the face means,
    the products are elementwise, and a two-tap "difference" kernel takes ``F(-1/2) - F(+1/2)``."""
    tcx, tcy, tcz = tc
    E = [(1, 0, 0), (0, 1, 0), (0, 0, 1)]

    def neg(o):
        return tuple(-x for x in o)

    def add(o1, o2):
        return tuple(a + b for a, b in zip(o1, o2))

    def diff(f, ax):  # F at face i-1/2 stored at i -> F[i] - F[i+1]
        return _corr(f, {(0, 0, 0): 1.0, E[ax]: -1.0})

    def src(q, own_ax, vels):
        # q is advected, staggered along own_ax; vels[ax] advects along ax
        terms = []
        for ax in range(3):
            if ax == own_ax:
                m = _corr(q, {neg(E[ax]): 1.0, (0, 0, 0): 1.0})
                f = m * m
            else:
                back = neg(E[ax])
                vel = _corr(vels[ax], {back: 1.0, add(back, E[own_ax]): 1.0})
                f = vel * _corr(q, {back: 1.0, (0, 0, 0): 1.0})
            terms.append(diff(f, ax))
        return tcx * terms[0] + tcy * terms[1] + tcz * terms[2]

    vels = (u, v, w)
    return src(u, 0, vels), src(v, 1, vels), src(w, 2, vels)


# --------------------------------------------------------------------------- np.roll oracle


def _at(a: np.ndarray, ox: int = 0, oy: int = 0, oz: int = 0) -> np.ndarray:
    """``a[i+ox, j+oy, k+oz]`` on the periodic grid."""
    return np.roll(a, (-ox, -oy, -oz), axis=(0, 1, 2))


def diffusion7_roll(u: np.ndarray, c: float = DIFFUSION_C) -> np.ndarray:
    """Point-form float64 oracle of the 7-point step."""
    u = np.asarray(u, dtype=np.float64)
    nb = (_at(u, -1) + _at(u, 1) + _at(u, 0, -1) + _at(u, 0, 1) + _at(u, 0, 0, -1) + _at(u, 0, 0, 1))
    return (1.0 - 6.0 * c) * u + c * nb


def advection_roll(u: np.ndarray, v: np.ndarray, w: np.ndarray, tc: tuple[float, float, float] = ADVECTION_TC):
    """Point-form float64 oracle of the advection sources, written from the module formulas."""
    u, v, w = (np.asarray(q, dtype=np.float64) for q in (u, v, w))
    tcx, tcy, tcz = tc
    A = _at
    su = (tcx * ((A(u, -1) + u) ** 2 - (u + A(u, 1)) ** 2)
          + tcy * ((A(v, 0, -1) + A(v, 1, -1)) * (A(u, 0, -1) + u) - (v + A(v, 1)) * (u + A(u, 0, 1)))
          + tcz * ((A(w, 0, 0, -1) + A(w, 1, 0, -1)) * (A(u, 0, 0, -1) + u) - (w + A(w, 1)) * (u + A(u, 0, 0, 1))))
    sv = (tcx * ((A(u, -1) + A(u, -1, 1)) * (A(v, -1) + v) - (u + A(u, 0, 1)) * (v + A(v, 1)))
          + tcy * ((A(v, 0, -1) + v) ** 2 - (v + A(v, 0, 1)) ** 2)
          + tcz * ((A(w, 0, 0, -1) + A(w, 0, 1, -1)) * (A(v, 0, 0, -1) + v) - (w + A(w, 0, 1)) * (v + A(v, 0, 0, 1))))
    sw = (tcx * ((A(u, -1) + A(u, -1, 0, 1)) * (A(w, -1) + w) - (u + A(u, 0, 0, 1)) * (w + A(w, 1)))
          + tcy * ((A(v, 0, -1) + A(v, 0, -1, 1)) * (A(w, 0, -1) + w) - (v + A(v, 0, 0, 1)) * (w + A(w, 0, 1)))
          + tcz * ((A(w, 0, 0, -1) + w) ** 2 - (w + A(w, 0, 0, 1)) ** 2))
    return su, sv, sw


# --------------------------------------------------------------------------- dispatch


def apply(kernel: str, fields: tuple[np.ndarray, ...], ops: Ops | None = None) -> tuple[np.ndarray, ...]:
    """Run *kernel* on the single periodic domain by shifted slices (pads, then the padded kernel)."""
    if kernel == "diffusion7":
        return (diffusion7_padded(pad_wrap(fields[0]), ops=ops),)
    if kernel == "advection":
        return advection_padded(*(pad_wrap(f) for f in fields), ops=ops)
    raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")


def apply_correlate(kernel: str, fields: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """Run *kernel* by correlations (:func:`diffusion7_correlate` / :func:`advection_correlate`)."""
    if kernel == "diffusion7":
        return (diffusion7_correlate(fields[0]),)
    return advection_correlate(*fields)


def apply_roll(kernel: str, fields: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """The float64 np.roll oracle of *kernel*."""
    if kernel == "diffusion7":
        return (diffusion7_roll(fields[0]),)
    return advection_roll(*fields)


def flop_count(kernel: str, a: int, b: int, c: int) -> int:
    """FLOPs of one step of the shifted-slice kernel on an a x b x c block (what :class:`Ops`
    counts).

    ``diffusion7``: 8 per point. ``advection``, per source field: the self term 2 ops on each of
    its n+1 faces; each cross term 3 ops on its n+1 faces; 3 differences, 3 scalings and
    2 additions per point. With N = abc and faces Fx = (a+1)bc, Fy = a(b+1)c, Fz = ab(c+1)::

        advection = 2 (Fx + Fy + Fz) + 3 * 2 (Fx + Fy + Fz) + 3 * 8 N = 8 (Fx + Fy + Fz) + 24 N

    -> 48 per point for large blocks.

    Raises
    ------
    ValueError
        Unknown kernel or a non-positive size.
    """
    if min(a, b, c) < 1:
        raise ValueError(f"block sizes must be >= 1, got {a} x {b} x {c}")
    n = a * b * c
    if kernel == "diffusion7":
        return 8 * n
    if kernel == "advection":
        faces = (a + 1) * b * c + a * (b + 1) * c + a * b * (c + 1)
        return 8 * faces + 24 * n
    raise ValueError(f"kernel must be one of {KERNELS}, got {kernel!r}")


def flops_per_point(kernel: str) -> float:
    """Large-block limit of :func:`flop_count` per point: 8 (diffusion7), 48 (advection)."""
    return {"diffusion7": 8.0, "advection": 48.0}[kernel]


def bytes_per_point(kernel: str, dtype_bytes: int) -> float:
    """Compulsory memory traffic per point per step: every input field read once, every output
    written once: ``(FIELDS_IN + FIELDS_OUT) d`` (8 B diffusion7, 24 B advection, fp32)."""
    return float((FIELDS_IN[kernel] + FIELDS_OUT[kernel]) * dtype_bytes)


def resident_bytes_per_point(kernel: str, dtype_bytes: int) -> float:
    """Bytes per point that must be resident while the kernel runs: inputs and outputs
    (2 fields for diffusion7, 6 for advection)."""
    return bytes_per_point(kernel, dtype_bytes)


def random_fields(kernel: str, shape: tuple[int, int, int], rng: np.random.Generator, dtype=np.float32
                  ) -> tuple[np.ndarray, ...]:
    """Random input fields of *shape* (standard normal) for *kernel*."""
    return tuple(rng.standard_normal(shape).astype(dtype) for _ in range(FIELDS_IN[kernel]))
