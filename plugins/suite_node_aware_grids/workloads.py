"""The ``contraction`` workload kind: an einsum spec plus the extent of every index.

Registered through the ``suite_workloads`` hook (names prefixed ``node-aware-grids-``). The
claim scenarios are ours (the paper's sizes were not found, shared research notes); the small
ones are what the execute fidelity runs.

Index classes: in the coupled-cluster terms the letters ``a``-``h`` are virtual orbitals (extent
``v``) and ``i``-``p`` occupied ones (extent ``o``), the usual convention of CC codes; the square
MMM tags ``i, j, k`` as class ``n``. The technique's ``o``, ``v`` and ``n`` parameters, when given,
replace the extents of the indices of that class.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from typing import Any

from suite.api import Workload, WorkloadError

__all__ = ["Contraction", "Groups", "parse_spec", "index_groups", "contraction_workloads", "with_extents"]


@dataclass(frozen=True)
class Groups:
    """The einsum indices grouped as a matrix product ``C[M, N] = A[M, K] B[K, N]``.

    ``m`` (free in A, kept in C), ``n`` (free in B, kept in C), ``k`` (contracted), each in the
    order of C (m, n) or of A (k); ``M, N, K`` the products of their extents.
    """

    a: str
    b: str
    c: str
    m: str
    n: str
    k: str
    M: int
    N: int
    K: int


def parse_spec(spec: str) -> tuple[str, str, str]:
    """``"ij,jk->ik"`` -> ``("ij", "jk", "ik")``.

    Raises
    ------
    WorkloadError
        Not of the form ``A,B->C`` with lower-case letters, a repeated index inside one operand.
    """
    s = spec.replace(" ", "")
    if "->" not in s or s.count(",") != 1:
        raise WorkloadError(f"contraction spec: expected 'A,B->C' (two operands), got {spec!r}")
    lhs, c = s.split("->")
    a, b = lhs.split(",")
    for name, t in (("A", a), ("B", b), ("C", c)):
        if not t or not t.isalpha() or not t.islower() or len(set(t)) != len(t):
            raise WorkloadError(f"contraction spec {spec!r}: operand {name} {t!r}: expected distinct lower-case letters")
    return a, b, c


def index_groups(spec: str, extents: dict[str, int]) -> Groups:
    """Group the indices of *spec* into m, n, k (:class:`Groups`).

    Raises
    ------
    WorkloadError
        An index without an extent (named), a non-positive extent, a batch index (in A, B and C),
        an index in one operand only, or an output index in neither input.
    """
    a, b, c = parse_spec(spec)
    for ix in dict.fromkeys(a + b + c):
        if ix not in extents:
            raise WorkloadError(f"contraction {spec!r}: index {ix!r} has no extent (extents given: {sorted(extents)})")
        if int(extents[ix]) < 1:
            raise WorkloadError(f"contraction {spec!r}: index {ix!r}: expected an extent >= 1, got {extents[ix]!r}")
    sa, sb, sc = set(a), set(b), set(c)
    batch = sa & sb & sc
    if batch:
        raise WorkloadError(f"contraction {spec!r}: batch index {sorted(batch)[0]!r} (in A, B and C) is not supported")
    lone = (sa ^ sb) - sc
    if lone:
        raise WorkloadError(f"contraction {spec!r}: index {sorted(lone)[0]!r} is in one operand only and not in C")
    missing = sc - (sa | sb)
    if missing:
        raise WorkloadError(f"contraction {spec!r}: output index {sorted(missing)[0]!r} is in neither operand")
    m = "".join(x for x in c if x in sa)
    n = "".join(x for x in c if x in sb)
    k = "".join(x for x in a if x in sb)
    prod = lambda s: math.prod(int(extents[x]) for x in s)  # noqa: E731
    return Groups(a, b, c, m, n, k, prod(m), prod(n), prod(k))


@functools.lru_cache(maxsize=1024)
def _groups(spec: str, extents: tuple[tuple[str, int], ...]) -> Groups:
    return index_groups(spec, dict(extents))


@dataclass(frozen=True)
class Contraction(Workload):
    """A tensor contraction workload: ``spec`` (einsum, two operands) and ``extents``.

    Attributes
    ----------
    spec : str
        e.g. ``"abcd,cdij->abij"``.
    extents : dict of str -> int
        Extent of every index of *spec*.
    classes : dict of str -> str
        Index -> class (``"o"``, ``"v"``, ``"n"``) for the technique's extent parameters.
    """

    spec: str = ""
    extents: dict[str, int] = field(default_factory=dict)
    classes: dict[str, str] = field(default_factory=dict)

    def groups(self) -> Groups:
        return _groups(self.spec, tuple(sorted((k, int(v)) for k, v in self.extents.items())))

    def content(self) -> Any:
        return {"name": self.name, "kind": self.kind, "spec": self.spec,
                "extents": dict(sorted(self.extents.items())), "classes": dict(sorted(self.classes.items()))}


def with_extents(wl: Contraction, **by_class: int | None) -> Contraction:
    """A copy of *wl* whose indices of class ``o``/``v``/``n`` take the given extents (None: keep).

    Raises
    ------
    WorkloadError
        A class is given that no index of the workload has.
    """
    given = {k: int(v) for k, v in by_class.items() if v is not None}
    if not given:
        return wl
    have = set(wl.classes.values())
    for cls in given:
        if cls not in have:
            raise WorkloadError(f"workload {wl.name!r}: parameter {cls!r} sets the extent of class-{cls!r} indices, "
                                f"but the workload has none (classes: {sorted(have) or 'none'})")
    ext = {ix: given.get(wl.classes.get(ix, ""), e) for ix, e in wl.extents.items()}
    return Contraction(name=wl.name, kind=wl.kind, source=wl.source, description=wl.description,
                       spec=wl.spec, extents=ext, classes=dict(wl.classes))


_SRC = ("ours: the paper's sizes were not found (only the abstract was read: MMM, tensor contractions and "
        "Cc4s coupled-cluster terms); fixed before any run")


def _mmm(name: str, m: int, n: int, k: int, desc: str, square: bool = False) -> Contraction:
    classes = {"i": "n", "j": "n", "k": "n"} if square else {}
    return Contraction(name=name, kind="contraction", source=_SRC, description=desc, spec="ik,kj->ij",
                       extents={"i": m, "j": n, "k": k}, classes=classes)


def _cc(name: str, spec: str, o: int, v: int, desc: str) -> Contraction:
    idx = dict.fromkeys(spec.replace(",", "").replace("->", ""))
    classes = {ix: ("v" if ix <= "h" else "o") for ix in idx}
    extents = {ix: (v if cls == "v" else o) for ix, cls in classes.items()}
    return Contraction(name=name, kind="contraction", source=_SRC, description=desc, spec=spec,
                       extents=extents, classes=classes)


def contraction_workloads() -> list[Contraction]:
    """The workloads this plugin registers (small ones for execute, claim-sized ones for the model)."""
    return [
        _mmm("node-aware-grids-mmm-256", 256, 256, 256, "square fp64 MMM, n = 256 (execute size)", square=True),
        _mmm("node-aware-grids-mmm-rect", 192, 128, 320, "rectangular MMM 192 x 320 times 320 x 128 (execute size)"),
        _mmm("node-aware-grids-mmm-65536", 65536, 65536, 65536,
             "square fp64 MMM, n = 65,536 (the MMM claim scenario, model only)", square=True),
        _cc("node-aware-grids-cc-ladder", "abcd,cdij->abij", 4, 8,
            "CC particle-particle ladder abcd,cdij->abij, o = 4, v = 8 (execute size)"),
        _cc("node-aware-grids-cc-ring", "acik,bcjk->abij", 4, 8,
            "CC ring-like term acik,bcjk->abij, o = 4, v = 8 (execute size)"),
        _cc("node-aware-grids-cc-ladder-o64-v512", "abcd,cdij->abij", 64, 512,
            "CC particle-particle ladder, o = 64, v = 512 (the contraction claim scenario, model only)"),
    ]
