"""Mixed-TD's per-layer decompositions on real arrays: SVD schemes, CPD by ALS, factorised convolution.

Every target layer is a 2-D convolution with weight ``W`` of shape ``(F, C, Kh, Kw)`` (filters,
input channels, kernel), stride ``(sh, sw)`` and padding ``(ph, pw)``, groups 1. A *scheme* says how
``W`` is unfolded into matrices (SVD) or kept as a 4-way tensor (CPD), and which chain of smaller
convolutions (*factor layers*) replaces the layer:

=================  ==================================  ==========================================
scheme             unfolding / tensor                  factor layers (in order)
=================  ==================================  ==========================================
``svd-spatial``    one ``(F Kh) x (C Kw)`` matrix       1xKw conv C->r (stride 1,sw), Khx1 r->F (sh,1)
``svd-group-c:g``  g blocks ``F x (C/g Kh Kw)``, g | C  grouped KhxKw C->g r (groups g), 1x1 g r->F
``svd-group-f:g``  g blocks ``C x (F/g Kh Kw)``, g | F  1x1 C->g r, grouped KhxKw g r->F (groups g)
``cpd``            the tensor ``F x C x Kh x Kw``       1x1 C->R, Khx1 depthwise, 1xKw depthwise, 1x1 R->F
=================  ==================================  ==========================================

The SVD of each block is truncated to rank r and sqrt(sigma) is split into both factors; the CPD
is rank-R PARAFAC by alternating least squares from an SVD initialisation.

References
----------
.. [Yu23] Z. Yu, C.-S. Bouganis, "Mixed-TD: Efficient Neural Network Accelerator with
   Layer-Specific Tensor Decomposition", FPL 2023 (arXiv 2306.05021): the schemes as the authors'
   code ``Yu-Zhewen/Mixed-TD`` implements them (``decomposition/svd.py`` schemes 2, 4, 5;
   ``decomposition/cp.py``; rank candidates in ``decomposition/utils.py``); the paper's own section
   numbers were not readable (only the abstract was).
.. [EY36] C. Eckart, G. Young, "The approximation of one matrix by another of lower rank",
   Psychometrika 1(3), 1936: the rank-r truncated SVD is the best rank-r approximation in the
   Frobenius norm, with error ``sqrt(sum_{i>r} sigma_i^2)``.
.. [KB09] T. G. Kolda, B. W. Bader, "Tensor Decompositions and Applications", SIAM Review 51(3),
   2009, §3.4 (CP-ALS: ``A_n <- X_(n) (odot_{m!=n} A_m) (*_{m!=n} A_m^T A_m)^+``).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from suite.api import TechniqueError

__all__ = [
    "Geometry",
    "FactorLayer",
    "Scheme",
    "divisors",
    "schemes_for",
    "max_rank",
    "per_rank_macs",
    "per_rank_params",
    "factor_layers",
    "dense_macs",
    "candidate_ranks",
    "conv2d",
    "svd_factors",
    "svd_reconstruct",
    "svd_singular_values",
    "cp_als",
    "cp_to_tensor",
    "cpd_factors",
    "decompose",
    "run_factors",
    "reconstruct",
]


# --------------------------------------------------------------------------- geometry


@dataclass(frozen=True)
class Geometry:
    """A convolution's shape: ``F`` filters over ``C`` channels, kernel ``kh x kw``, stride,
    padding, input ``h x w`` (pixels). Output size ``ho = (h + 2 ph - kh) // sh + 1`` (same for w)."""

    F: int
    C: int
    kh: int
    kw: int
    sh: int = 1
    sw: int = 1
    ph: int = 0
    pw: int = 0
    h: int = 1
    w: int = 1
    name: str = ""

    @property
    def ho(self) -> int:
        return (self.h + 2 * self.ph - self.kh) // self.sh + 1

    @property
    def wo(self) -> int:
        return (self.w + 2 * self.pw - self.kw) // self.sw + 1

    @classmethod
    def of_layer(cls, layer) -> "Geometry":
        """From a zoo conv :class:`suite.workloads.Layer` (attrs kernel, stride, padding)."""
        c, h, w = layer.input_shape
        f = layer.output_shape[0]
        kh, kw = layer.attrs["kernel"]
        sh, sw = layer.attrs["stride"]
        ph, pw = layer.attrs["padding"]
        return cls(F=int(f), C=int(c), kh=int(kh), kw=int(kw), sh=int(sh), sw=int(sw), ph=int(ph), pw=int(pw),
                   h=int(h), w=int(w), name=layer.name)


@dataclass(frozen=True)
class FactorLayer:
    """One convolution of a factorised layer: ``cout`` filters over ``cin`` channels in ``groups``
    groups, kernel ``kh x kw``, stride, padding, output ``ho x wo``.

    ``macs = ho wo cout (cin/groups) kh kw``; ``params = cout (cin/groups) kh kw``.
    """

    cin: int
    cout: int
    kh: int
    kw: int
    sh: int
    sw: int
    ph: int
    pw: int
    groups: int
    ho: int
    wo: int

    @property
    def macs(self) -> int:
        return self.ho * self.wo * self.cout * (self.cin // self.groups) * self.kh * self.kw

    @property
    def params(self) -> int:
        return self.cout * (self.cin // self.groups) * self.kh * self.kw


@dataclass(frozen=True)
class Scheme:
    """A decomposition scheme: ``kind`` in ``keep``, ``svd-spatial``, ``svd-group-c``,
    ``svd-group-f``, ``cpd``; ``group`` the g of the grouped SVD schemes (1 otherwise)."""

    kind: str
    group: int = 1

    KINDS = ("keep", "svd-spatial", "svd-group-c", "svd-group-f", "cpd")

    def __post_init__(self):
        if self.kind not in self.KINDS:
            raise TechniqueError(f"mixed-td: unknown scheme {self.kind!r}; expected one of {list(self.KINDS)}")
        if self.group < 1:
            raise TechniqueError(f"mixed-td: scheme {self.kind}: expected group >= 1, got {self.group}")

    @property
    def method(self) -> str:
        return "keep" if self.kind == "keep" else ("cpd" if self.kind == "cpd" else "svd")

    def __str__(self) -> str:
        return f"{self.kind}:{self.group}" if self.kind in ("svd-group-c", "svd-group-f") else self.kind


def divisors(n: int) -> list[int]:
    """All positive divisors of ``n`` in increasing order."""
    return list(_divisors(int(n)))


@functools.lru_cache(maxsize=65536)
def _divisors(n: int) -> tuple[int, ...]:
    """:func:`divisors` by trial division up to sqrt(n), remembered (a network's search space asks
    for the same few thousand numbers tens of thousands of times)."""
    if n < 1:
        raise ValueError(f"divisors: expected n >= 1, got {n}")
    small, large = [], []
    i = 1
    while i * i <= n:
        if n % i == 0:
            small.append(i)
            if i * i != n:
                large.append(n // i)
        i += 1
    return tuple(small + large[::-1])


def schemes_for(g: Geometry, methods=("svd", "cpd")) -> list[Scheme]:
    """The candidate schemes of a layer [Yu23, ``enumerate_decomposition_candidates``]: SVD
    spatial, SVD grouped for every g | C and every g | F; CPD (ungrouped, when the kernel is > 1)."""
    out: list[Scheme] = []
    if "svd" in methods:
        out.append(Scheme("svd-spatial"))
        out += [Scheme("svd-group-c", d) for d in divisors(g.C)]
        out += [Scheme("svd-group-f", d) for d in divisors(g.F)]
    if "cpd" in methods and g.kh > 1:
        out.append(Scheme("cpd"))
    return out


def _check_group(g: Geometry, s: Scheme) -> None:
    if s.kind == "svd-group-c" and g.C % s.group:
        raise TechniqueError(f"mixed-td: group {s.group} does not divide C={g.C} of {g.name or 'layer'} under {s}")
    if s.kind == "svd-group-f" and g.F % s.group:
        raise TechniqueError(f"mixed-td: group {s.group} does not divide F={g.F} of {g.name or 'layer'} under {s}")


def max_rank(g: Geometry, s: Scheme) -> int:
    """The largest rank of a scheme: the smaller side of each unfolded block (SVD); for CPD the
    product of the dimensions other than the largest one (an upper bound of the CP rank) [Yu23,
    ``get_max_rank``]."""
    _check_group(g, s)
    k = g.kh * g.kw
    if s.kind == "svd-spatial":
        return min(g.F * g.kh, g.C * g.kw)
    if s.kind == "svd-group-c":
        return min(g.F, g.C // s.group * k)
    if s.kind == "svd-group-f":
        return min(g.C, g.F // s.group * k)
    if s.kind == "cpd":
        dims = sorted([g.F, g.C, g.kh, g.kw])
        return int(math.prod(dims[:-1]))
    raise TechniqueError(f"mixed-td: scheme {s} has no rank")


def per_rank_macs(g: Geometry, s: Scheme) -> int:
    """MACs per unit of rank, the authors' closed forms [Yu23, ``get_per_rank_macs``], with
    ``P = ho wo`` the output pixels:

    * svd-spatial: ``P (F kh + C kw sh)``
    * svd-group-c: ``P g (F + C/g kh kw)``
    * svd-group-f: ``P g (C sh sw + F/g kh kw)``
    * cpd:         ``P (F + kw + kh sw + C sh sw)``
    """
    _check_group(g, s)
    p = g.ho * g.wo
    if s.kind == "svd-spatial":
        return p * (g.F * g.kh + g.C * g.kw * g.sh)
    if s.kind == "svd-group-c":
        return p * s.group * (g.F + g.C // s.group * g.kh * g.kw)
    if s.kind == "svd-group-f":
        return p * s.group * (g.C * g.sh * g.sw + g.F // s.group * g.kh * g.kw)
    if s.kind == "cpd":
        return p * (g.F + g.kw + g.kh * g.sw + g.C * g.sh * g.sw)
    raise TechniqueError(f"mixed-td: scheme {s} has no rank")


def per_rank_params(g: Geometry, s: Scheme) -> int:
    """Weights per unit of rank [Yu23, ``get_per_rank_params``]: svd-spatial ``F kh + C kw``;
    svd-group-c ``g (F + C/g kh kw)``; svd-group-f ``g (C + F/g kh kw)``; cpd ``F + C + kh + kw``."""
    _check_group(g, s)
    if s.kind == "svd-spatial":
        return g.F * g.kh + g.C * g.kw
    if s.kind == "svd-group-c":
        return s.group * (g.F + g.C // s.group * g.kh * g.kw)
    if s.kind == "svd-group-f":
        return s.group * (g.C + g.F // s.group * g.kh * g.kw)
    if s.kind == "cpd":
        return g.F + g.C + g.kh + g.kw
    raise TechniqueError(f"mixed-td: scheme {s} has no rank")


def dense_macs(g: Geometry) -> int:
    """MACs of the undecomposed convolution: ``ho wo F C kh kw``."""
    return g.ho * g.wo * g.F * g.C * g.kh * g.kw


def _out(size: int, k: int, s: int, p: int) -> int:
    return (size + 2 * p - k) // s + 1


def factor_layers(g: Geometry, s: Scheme, rank: int) -> list[FactorLayer]:
    """The convolutions that replace the layer under scheme *s* at *rank* [Yu23,
    ``initialise_low_rank_module``] (``keep``: the layer itself).

    Raises
    ------
    suite.errors.TechniqueError
        ``rank`` outside ``[1, max_rank]``, naming the layer and the scheme.
    """
    if s.kind == "keep":
        return [FactorLayer(g.C, g.F, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, 1, g.ho, g.wo)]
    mr = max_rank(g, s)
    if not 1 <= rank <= mr:
        what = "exceeds the maximum" if rank > mr else "is below the minimum 1, maximum"
        raise TechniqueError(f"mixed-td: rank {rank} {what} {mr} of {g.name or 'layer'} under {s}")
    if s.kind == "svd-spatial":
        w1 = _out(g.w, g.kw, g.sw, g.pw)
        return [FactorLayer(g.C, rank, 1, g.kw, 1, g.sw, 0, g.pw, 1, g.h, w1),
                FactorLayer(rank, g.F, g.kh, 1, g.sh, 1, g.ph, 0, 1, g.ho, g.wo)]
    if s.kind == "svd-group-c":
        gr = s.group * rank
        return [FactorLayer(g.C, gr, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, s.group, g.ho, g.wo),
                FactorLayer(gr, g.F, 1, 1, 1, 1, 0, 0, 1, g.ho, g.wo)]
    if s.kind == "svd-group-f":
        gr = s.group * rank
        return [FactorLayer(g.C, gr, 1, 1, 1, 1, 0, 0, 1, g.h, g.w),
                FactorLayer(gr, g.F, g.kh, g.kw, g.sh, g.sw, g.ph, g.pw, s.group, g.ho, g.wo)]
    # cpd: 1x1, kh x 1 depthwise (stride sh, 1), 1 x kw depthwise (stride 1, sw), 1x1
    h1 = _out(g.h, g.kh, g.sh, g.ph)
    return [FactorLayer(g.C, rank, 1, 1, 1, 1, 0, 0, 1, g.h, g.w),
            FactorLayer(rank, rank, g.kh, 1, g.sh, 1, g.ph, 0, rank, h1, g.w),
            FactorLayer(rank, rank, 1, g.kw, 1, g.sw, 0, g.pw, rank, g.ho, g.wo),
            FactorLayer(rank, g.F, 1, 1, 1, 1, 0, 0, 1, g.ho, g.wo)]


def candidate_ranks(g: Geometry, s: Scheme, lo: float = 0.30, hi: float = 0.70, step: float = 0.05) -> list[int]:
    """Candidate ranks of a scheme [Yu23, ``build_decomposition_candidates``]:

    1. for each MAC ratio ``q`` in ``hi, hi - step, ..., lo`` the rank
       ``max(1, floor(dense_macs q / per_rank_macs))``, duplicates dropped;
    2. the list is extended by one extrapolated rank at each end (``2 r_0 - r_1`` and, when
       positive, ``2 r_last - r_{last-1}``);
    3. each interval ``[r_{i+1}, r_i)`` is replaced by its integer with the most divisors (the
       first such, scanning upwards), which maps well onto a folded accelerator;
    4. ranks whose MACs exceed the dense layer's, or the scheme's maximum rank, are dropped.
    """
    base = dense_macs(g)
    prm = per_rank_macs(g, s)
    ratios = np.arange(lo, hi + step, step)[::-1]
    ranks: list[int] = []
    for q in ratios:
        r = max(1, int(base * float(q) / prm))
        if r not in ranks:
            ranks.append(r)
    if len(ranks) > 1:
        ranks = [2 * ranks[0] - ranks[1]] + ranks
        if 2 * ranks[-1] - ranks[-2] > 0:
            ranks = ranks + [2 * ranks[-1] - ranks[-2]]
        picked = []
        for a, b in zip(ranks, ranks[1:]):  # a > b
            best, best_n = None, 0
            for n in range(b, a):
                nd = len(_divisors(n))  # the cached tuple: no list copied per number
                if nd > best_n:
                    best, best_n = n, nd
            if best is not None:
                picked.append(best)
        ranks = picked
    mr = max_rank(g, s)
    return [r for r in ranks if 1 <= r <= mr and r * prm <= base]


# --------------------------------------------------------------------------- convolution


def conv2d(x: np.ndarray, w: np.ndarray, stride=(1, 1), padding=(0, 0), groups: int = 1) -> np.ndarray:
    """Cross-correlation (the deep-learning "convolution") by im2col and one matmul per group.

    Parameters
    ----------
    x : ndarray, shape (N, C, H, W)
    w : ndarray, shape (F, C/groups, kh, kw)
    stride, padding : pair of int
    groups : int
        ``C`` and ``F`` must both be multiples of it.

    Returns
    -------
    ndarray, shape (N, F, Ho, Wo), ``Ho = (H + 2 ph - kh) // sh + 1``.
    """
    n, c, hh, ww = x.shape
    f, cg, kh, kw = w.shape
    sh, sw = stride
    ph, pw = padding
    if c != cg * groups or f % groups:
        raise TechniqueError(f"mixed-td: conv2d: input has {c} channels, weight expects {cg} x {groups} groups "
                             f"and {f} filters")
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw))) if (ph or pw) else x
    ho, wo = (hh + 2 * ph - kh) // sh + 1, (ww + 2 * pw - kw) // sw + 1
    sn, sc, shh, sww = xp.strides
    cols = np.lib.stride_tricks.as_strided(
        xp, shape=(n, c, kh, kw, ho, wo), strides=(sn, sc, shh, sww, shh * sh, sww * sw), writeable=False)
    fg = f // groups
    out = np.empty((n, f, ho, wo), dtype=np.result_type(x, w))
    for gi in range(groups):
        cg_cols = cols[:, gi * cg:(gi + 1) * cg]  # (n, cg, kh, kw, ho, wo)
        wg = w[gi * fg:(gi + 1) * fg]  # (fg, cg, kh, kw)
        out[:, gi * fg:(gi + 1) * fg] = np.einsum("nckluv,fckl->nfuv", cg_cols, wg, optimize=True)
    return out


# --------------------------------------------------------------------------- SVD schemes


def _unfold(w: np.ndarray, s: Scheme) -> np.ndarray:
    """The stack of matrices a scheme factorises, shape (groups, m, n)."""
    f, c, kh, kw = w.shape
    g = s.group
    if s.kind == "svd-spatial":  # rows (f, kh), columns (c, kw)
        return w.transpose(0, 2, 1, 3).reshape(1, f * kh, c * kw)
    if s.kind == "svd-group-c":  # block gi: rows f, columns (c in group gi, kh, kw)
        return w.reshape(f, g, c // g, kh, kw).transpose(1, 0, 2, 3, 4).reshape(g, f, c // g * kh * kw)
    if s.kind == "svd-group-f":  # block gi: rows c, columns (f in group gi, kh, kw)
        return w.reshape(g, f // g, c, kh, kw).transpose(0, 2, 1, 3, 4).reshape(g, c, f // g * kh * kw)
    raise TechniqueError(f"mixed-td: scheme {s} is not an SVD scheme")


def _fold(mats: np.ndarray, shape, s: Scheme) -> np.ndarray:
    f, c, kh, kw = shape
    g = s.group
    if s.kind == "svd-spatial":
        return mats.reshape(f, kh, c, kw).transpose(0, 2, 1, 3)
    if s.kind == "svd-group-c":
        return mats.reshape(g, f, c // g, kh, kw).transpose(1, 0, 2, 3, 4).reshape(f, c, kh, kw)
    if s.kind == "svd-group-f":
        return mats.reshape(g, c, f // g, kh, kw).transpose(0, 2, 1, 3, 4).reshape(f, c, kh, kw)
    raise TechniqueError(f"mixed-td: scheme {s} is not an SVD scheme")  # pragma: no cover


def svd_singular_values(w: np.ndarray, s: Scheme) -> np.ndarray:
    """Singular values of each block of the scheme's unfolding, shape (groups, min(m, n))."""
    return np.linalg.svd(_unfold(w, s), compute_uv=False)


def svd_factors(w: np.ndarray, s: Scheme, rank: int) -> list[np.ndarray]:
    """The factor-layer weights of an SVD scheme at *rank* (``sqrt(sigma)`` on both sides).

    Returns the weights of :func:`factor_layers` ``(g, s, rank)`` in order: svd-spatial
    ``[(r, C, 1, kw), (F, r, kh, 1)]``; svd-group-c ``[(g r, C/g, kh, kw), (F, g r, 1, 1)]``;
    svd-group-f ``[(g r, C, 1, 1), (F, r, kh, kw)]`` (the second grouped, g groups).
    """
    f, c, kh, kw = w.shape
    geo = Geometry(f, c, kh, kw)
    mr = max_rank(geo, s)
    if not 1 <= rank <= mr:
        raise TechniqueError(f"mixed-td: rank {rank} exceeds the maximum {mr} of this layer under {s}")
    u, sig, vh = np.linalg.svd(_unfold(w, s), full_matrices=False)
    root = np.sqrt(sig[:, :rank])
    us = u[:, :, :rank] * root[:, None, :]  # (g, m, r)
    vs = vh[:, :rank, :] * root[:, :, None]  # (g, r, n)
    g = s.group
    if s.kind == "svd-spatial":
        w1 = vs[0].reshape(rank, c, 1, kw)
        w2 = us[0].reshape(f, kh, rank, 1).transpose(0, 2, 1, 3)
        return [w1, w2]
    if s.kind == "svd-group-c":
        w1 = vs.reshape(g * rank, c // g, kh, kw)
        w2 = us.transpose(1, 0, 2).reshape(f, g * rank, 1, 1)
        return [w1, w2]
    # svd-group-f: us (g, C, r) is the 1x1 C -> g r; vs (g, r, F/g kh kw) the grouped conv
    w1 = us.transpose(0, 2, 1).reshape(g * rank, c, 1, 1)
    w2 = vs.reshape(g, rank, f // g, kh, kw).transpose(0, 2, 1, 3, 4).reshape(f, rank, kh, kw)
    return [w1, w2]


def svd_reconstruct(w: np.ndarray, s: Scheme, rank: int) -> np.ndarray:
    """The weight the rank-r SVD scheme represents (fold of ``U_r S_r V_r^T`` per block)."""
    u, sig, vh = np.linalg.svd(_unfold(w, s), full_matrices=False)
    mats = np.einsum("gmr,gr,grn->gmn", u[:, :, :rank], sig[:, :rank], vh[:, :rank, :])
    return _fold(mats, w.shape, s)


# --------------------------------------------------------------------------- CPD


def _unfold_mode(x: np.ndarray, mode: int) -> np.ndarray:
    return np.moveaxis(x, mode, 0).reshape(x.shape[mode], -1)


def _khatri_rao(mats: list[np.ndarray]) -> np.ndarray:
    """Column-wise Kronecker product, the last matrix's row index varying fastest."""
    out = mats[0]
    for m in mats[1:]:
        out = (out[:, None, :] * m[None, :, :]).reshape(-1, out.shape[1])
    return out


def cp_to_tensor(factors: list[np.ndarray]) -> np.ndarray:
    """``sum_r a_r o b_r o c_r o d_r`` from factor matrices ``(I_n, R)``."""
    shape = tuple(a.shape[0] for a in factors)
    return (factors[0] @ _khatri_rao(factors[1:]).T).reshape(shape)


def cp_als(x: np.ndarray, rank: int, n_iter: int = 100, tol: float = 1e-8, seed: int = 0,
           init: str = "svd") -> tuple[list[np.ndarray], float]:
    """Rank-R CP decomposition by alternating least squares [KB09 §3.4].

    Initialisation ``"svd"`` (as the authors call ``tensorly.parafac`` with an SVD start): factor n is
    the leading R left singular vectors of the mode-n unfolding (mode 0 scaled by the singular
    values), padded with uniform random columns where the mode is smaller than R. Each sweep sets
    ``A_n = X_(n) KR(A_m, m != n) pinv(Hadamard_m (A_m^T A_m))``; stops when the relative error
    changes by less than ``tol``.

    Returns
    -------
    factors : list of ndarray, shapes (I_n, R)
    rel_error : float
        ``||X - [[A]]||_F / ||X||_F``.
    """
    if rank < 1:
        raise TechniqueError(f"mixed-td: CPD rank must be >= 1, got {rank}")
    rng = np.random.default_rng(seed)
    nmodes = x.ndim
    factors = []
    for n in range(nmodes):
        if init == "svd":
            u, sig, _ = np.linalg.svd(_unfold_mode(x, n), full_matrices=False)
            k = min(rank, u.shape[1])
            a = u[:, :k].copy()
            if n == 0:
                a *= sig[:k]
            if k < rank:
                a = np.concatenate([a, rng.random((x.shape[n], rank - k))], axis=1)
        else:
            a = rng.random((x.shape[n], rank))
        factors.append(a)
    norm = float(np.linalg.norm(x)) or 1.0
    prev = np.inf
    err = np.inf
    unfolded = [_unfold_mode(x, n) for n in range(nmodes)]
    for _ in range(n_iter):
        for n in range(nmodes):
            others = [factors[m] for m in range(nmodes) if m != n]
            gram = np.ones((rank, rank))
            for a in others:
                gram *= a.T @ a
            factors[n] = unfolded[n] @ _khatri_rao(others) @ np.linalg.pinv(gram)
        err = float(np.linalg.norm(x - cp_to_tensor(factors))) / norm
        if abs(prev - err) < tol:
            break
        prev = err
    return factors, err


def cpd_factors(w: np.ndarray, rank: int, *, stride=(1, 1), n_iter: int = 100, seed: int = 0
                ) -> tuple[list[np.ndarray], float]:
    """The four factor-layer weights of the CPD scheme: ``[(R, C, 1, 1), (R, 1, kh, 1),
    (R, 1, 1, kw), (F, R, 1, 1)]`` (the middle two depthwise), and the CPD's relative error."""
    f, c, kh, kw = w.shape
    (a_f, a_c, a_h, a_w), err = cp_als(w, rank, n_iter=n_iter, seed=seed)
    return [a_c.T.reshape(rank, c, 1, 1), a_h.T.reshape(rank, 1, kh, 1), a_w.T.reshape(rank, 1, 1, kw),
            a_f.reshape(f, rank, 1, 1)], err


# --------------------------------------------------------------------------- whole layer


def decompose(w: np.ndarray, geo: Geometry, s: Scheme, rank: int, *, seed: int = 0, n_iter: int = 100
              ) -> tuple[list[np.ndarray], np.ndarray]:
    """Factor weights and the reconstructed dense weight of one layer under (scheme, rank)."""
    if s.kind == "keep":
        return [w], w
    factor_layers(geo, s, rank)  # checks the rank against the layer's maximum (one clear line)
    if s.kind == "cpd":
        ws, _ = cpd_factors(w, rank, n_iter=n_iter, seed=seed)
        return ws, reconstruct(ws, s, w.shape)
    ws = svd_factors(w, s, rank)
    return ws, reconstruct(ws, s, w.shape)


def reconstruct(ws: list[np.ndarray], s: Scheme, shape) -> np.ndarray:
    """The dense ``(F, C, kh, kw)`` weight a list of factor weights represents (from the factors
    themselves, not from the SVD), so that "factorised = reconstructed convolution" is a real check."""
    f, c, kh, kw = shape
    if s.kind == "keep":
        return ws[0]
    if s.kind == "svd-spatial":
        w1, w2 = ws  # (r, C, 1, kw), (F, r, kh, 1)
        return np.einsum("rcw,frh->fchw", w1[:, :, 0, :], w2[:, :, :, 0])
    if s.kind == "svd-group-c":
        w1, w2 = ws  # (g r, C/g, kh, kw), (F, g r, 1, 1)
        g = s.group
        r = w1.shape[0] // g
        a = w1.reshape(g, r, c // g, kh, kw)
        b = w2[:, :, 0, 0].reshape(f, g, r)
        return np.einsum("grchw,fgr->fgchw", a, b).reshape(f, c, kh, kw)
    if s.kind == "svd-group-f":
        w1, w2 = ws  # (g r, C, 1, 1), (F, r, kh, kw) grouped
        g = s.group
        r = w1.shape[0] // g
        a = w1[:, :, 0, 0].reshape(g, r, c)
        b = w2.reshape(g, f // g, r, kh, kw)
        return np.einsum("grc,gfrhw->gfchw", a, b).reshape(f, c, kh, kw)
    w1, w2, w3, w4 = ws
    return np.einsum("rc,rh,rw,fr->fchw", w1[:, :, 0, 0], w2[:, 0, :, 0], w3[:, 0, 0, :], w4[:, :, 0, 0])


def run_factors(x: np.ndarray, ws: list[np.ndarray], geo: Geometry, s: Scheme, conv=conv2d) -> np.ndarray:
    """Run the factor layers of (scheme, rank) on input ``x`` (N, C, H, W) as real convolutions."""
    if s.kind == "keep":
        return conv(x, ws[0], (geo.sh, geo.sw), (geo.ph, geo.pw), 1)
    rank = ws[0].shape[0] // (s.group if s.kind in ("svd-group-c", "svd-group-f") else 1)
    specs = factor_layers(geo, s, rank)
    y = x
    for wi, fl in zip(ws, specs):
        y = conv(y, wi, (fl.sh, fl.sw), (fl.ph, fl.pw), fl.groups)
    return y
