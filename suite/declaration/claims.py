"""A paper's claims: acceptances fixed before our number is seen, nulls, assumptions and reason
classes (docs/verdicts.md).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from suite.declaration.results import Result, ScenarioSpec
from suite.errors import TechniqueError

# --------------------------------------------------------------------------- claims


class Acceptance:
    """How a claim's number is judged. Fixed before our number is seen (docs/verdicts.md, Tolerances)."""

    paper: Any = None

    def check(self, ours: Any) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def ratio(self, ours: Any) -> float | None:
        try:
            p = float(self.paper)
            o = float(ours)
        except (TypeError, ValueError):
            return None
        return o / p if p != 0 else None

    def band(self) -> tuple[float, float] | None:
        """The closed interval of scalar values this acceptance passes, or None when it is not
        one interval (an ordering, a tuple, a string)."""
        return None

    def excludes(self, value: Any) -> bool:
        """Whether this acceptance rejects *value* by its construction, whatever the paper's
        number: such a value, as a null, could never have landed in the band (``no gain`` = 1.0
        under :class:`Gain`, a tie under :class:`Ordered`), so it is not evidence
        (docs/verdicts.md, Nulls)."""
        return False

    def malformed(self) -> str:
        """Why this acceptance, as declared, judges nothing whatever the claim's value and domain, or
        ``""``: a band that is empty (``Between(1.05, 0.95)``, ``Approx(1.0, rel=-0.05)``), NaN
        (``AtLeast(float("nan"))``) or holds no finite value (``AtLeast(float("inf"))``) cannot pass
        (docs/verdicts.md, Claim defects). Declaring one warns, and is refused from dlsys-suite 0.4.0."""
        b = self.band()
        if b is None:
            return ""
        lo, hi = b
        if math.isnan(lo) or math.isnan(hi):
            return f"the band [{lo:.4g}, {hi:.4g}] is not a range of numbers (NaN): it cannot pass"
        if lo > hi:
            return f"the band [{lo:.4g}, {hi:.4g}] is empty (its low end is above its high end): it cannot pass"
        if lo == math.inf or hi == -math.inf:
            return f"the band [{lo:.4g}, {hi:.4g}] holds no finite value: it cannot pass"
        return ""

    def unreachable(self, domain: tuple[float, float] | None, ours: Any = None) -> str:
        """Why a pass or a fail was impossible before any run, or ``""`` when both were possible.

        Parameters
        ----------
        domain : (low, high) or None
            The values the claim's value can take (``(0, 1)`` for an accuracy; for an ordering,
            each entry's); None: the whole real line.
        ours : any
            Our value (an ordering reads the other entries from it, a margin over a computed
            baseline being only reachable if the baseline leaves room).

        Returns
        -------
        str
            One line naming the band and the domain (docs/verdicts.md, Claim defects).
        """
        b = self.band()
        if b is None:
            return ""
        lo, hi = b
        a, z = (float(domain[0]), float(domain[1])) if domain is not None else (-math.inf, math.inf)
        if hi < a or lo > z:
            return f"the band [{lo:.4g}, {hi:.4g}] lies outside the values the claim can take [{a:g}, {z:g}]: it cannot pass"
        if lo <= a and hi >= z:
            return f"the band [{lo:.4g}, {hi:.4g}] covers every value the claim can take [{a:g}, {z:g}]: it cannot fail"
        return ""


def _negative_rel(rel: Any) -> str:
    """Why a relative tolerance *rel* judges nothing (negative or NaN), or ``""``."""
    try:
        ok = float(rel) >= 0
    except (TypeError, ValueError):
        return f"the tolerance rel={rel!r} is not a number: it cannot pass"
    return "" if ok else f"the tolerance rel={float(rel):g} is negative or NaN: no value lies within it, it cannot pass"


@dataclass(frozen=True)
class Approx(Acceptance):
    """The paper's value within a relative tolerance: ``|ours/paper - 1| <= rel``."""

    paper: float
    rel: float = 0.2

    def check(self, ours: Any) -> bool:
        return math.isfinite(float(ours)) and abs(float(ours) - self.paper) <= self.rel * abs(self.paper)

    def describe(self) -> str:
        return f"{self.paper:g} ± {self.rel:.0%}"

    def band(self) -> tuple[float, float]:
        d = self.rel * abs(self.paper)
        return (self.paper - d, self.paper + d)

    def malformed(self) -> str:
        """:meth:`Acceptance.malformed`, and a negative or NaN ``rel`` (an empty band, or one point at 0)."""
        return _negative_rel(self.rel) or super().malformed()


@dataclass(frozen=True)
class AtLeast(Acceptance):
    paper: float

    def check(self, ours: Any) -> bool:
        return float(ours) >= self.paper

    def describe(self) -> str:
        return f">= {self.paper:g}"

    def band(self) -> tuple[float, float]:
        return (float(self.paper), math.inf)


@dataclass(frozen=True)
class AtMost(Acceptance):
    paper: float

    def check(self, ours: Any) -> bool:
        return float(ours) <= self.paper

    def describe(self) -> str:
        return f"<= {self.paper:g}"

    def band(self) -> tuple[float, float]:
        return (-math.inf, float(self.paper))


@dataclass(frozen=True)
class Between(Acceptance):
    low: float
    high: float

    @property
    def paper(self) -> str:
        return f"[{self.low:g}, {self.high:g}]"

    def check(self, ours: Any) -> bool:
        return self.low <= float(ours) <= self.high

    def describe(self) -> str:
        return f"in [{self.low:g}, {self.high:g}]"

    def band(self) -> tuple[float, float]:
        return (float(self.low), float(self.high))


@dataclass(frozen=True)
class Exact(Acceptance):
    """Exact equality: counts, orderings (a tuple of variant names), booleans."""

    paper: Any

    def check(self, ours: Any) -> bool:
        if isinstance(self.paper, (list, tuple)):
            return tuple(ours) == tuple(self.paper)
        return bool(ours == self.paper)

    def describe(self) -> str:
        if isinstance(self.paper, (list, tuple)):
            return "(" + ", ".join(map(str, self.paper)) + ")"
        return str(self.paper)

    def ratio(self, ours: Any) -> float | None:
        if isinstance(self.paper, (list, tuple, str, bool)):
            return None
        return super().ratio(ours)

    def band(self) -> tuple[float, float] | None:
        if isinstance(self.paper, (int, float)) and not isinstance(self.paper, bool):
            return (float(self.paper), float(self.paper))
        return None


@dataclass(frozen=True)
class Gain(Acceptance):
    """An "x-times faster" / "y% better" claim, judged on the gain (docs/verdicts.md, Tolerances).

    ``paper`` is the ratio as the paper states it (``15.5`` for "15.5x"; ``1.244`` for "24.4%
    better"); our value is the same ratio. Accepted when ``|(ours - 1) - (paper - 1)| <= rel *
    |paper - 1|``, so the band can never contain "no gain" (1.0) for ``rel < 1``.
    """

    paper: float
    rel: float = 0.2

    def __post_init__(self) -> None:
        if self.paper == 1.0:
            raise TechniqueError("Gain: a paper ratio of exactly 1.0 claims no gain; use Approx")

    def check(self, ours: Any) -> bool:
        o = float(ours)
        g = self.paper - 1.0
        return math.isfinite(o) and abs((o - 1.0) - g) <= self.rel * abs(g)

    def band(self) -> tuple[float, float]:
        g = self.paper - 1.0
        lo, hi = 1.0 + g - self.rel * abs(g), 1.0 + g + self.rel * abs(g)
        return (lo, hi)

    def malformed(self) -> str:
        """:meth:`Acceptance.malformed`, and a negative or NaN ``rel``."""
        return _negative_rel(self.rel) or super().malformed()

    def excludes(self, value: Any) -> bool:
        """No gain (1.0) is outside every gain band with ``rel < 1``."""
        try:
            v = float(value)
        except (TypeError, ValueError):
            return False
        return self.rel < 1.0 and v == 1.0

    def describe(self) -> str:
        lo, hi = self.band()
        return f"{self.paper:g}x (gain ± {self.rel:.0%}: [{lo:.4g}, {hi:.4g}])"


@dataclass(frozen=True)
class Ordered(Acceptance):
    """An ordering of labelled values with a margin: "A faster than B faster than C".

    ``paper`` is the labels from best to worst; our value is a mapping label -> value (``derive``
    returns it). Accepted when each consecutive pair differs by more than ``margin`` (relative, in
    the better direction): ``lower=True`` means smaller is better (times); a tie fails.
    """

    paper: tuple[str, ...]
    margin: float = 0.02
    lower: bool = True

    def check(self, ours: Any) -> bool:
        vals = [float(ours[k]) for k in self.paper]
        if not all(math.isfinite(v) for v in vals):
            return False
        for a, b in zip(vals, vals[1:]):
            if self.lower and not a * (1.0 + self.margin) < b:
                return False
            if not self.lower and not a > b * (1.0 + self.margin):
                return False
        return True

    def describe(self) -> str:
        sym = " < " if self.lower else " > "
        return sym.join(self.paper) + f" (margin {self.margin:.0%})"

    def ratio(self, ours: Any) -> float | None:
        return None

    def malformed(self) -> str:
        """Why this ordering judges nothing, or ``""``: fewer than two labels (no pair to compare: it
        cannot fail), a label named twice (it cannot beat itself: it cannot pass), or a margin that is
        negative (a tie, or a wrong order within the margin, would pass; docs/verdicts.md: a tie
        fails) or NaN (nothing passes). Declaring one warns, and is refused from dlsys-suite 0.4.0."""
        labels = tuple(self.paper)
        if len(labels) < 2:
            return f"an ordering of {len(labels)} label(s) {labels!r} compares no pair: it cannot fail"
        twice = sorted({k for k in labels if labels.count(k) > 1}, key=str)
        if twice:
            return f"label(s) {', '.join(map(repr, twice))} named twice: a value cannot beat itself, it cannot pass"
        if math.isnan(self.margin):
            return "the margin is NaN: no ordering passes it, it cannot pass"
        if self.margin < 0:
            return f"the margin {self.margin:g} is negative: a tie passes it, and a tie fails an ordering"
        return ""

    def excludes(self, value: Any) -> bool:
        """A tie (every entry equal) fails every ordering with a margin >= 0."""
        try:
            vals = {float(value[k]) for k in self.paper}
        except (TypeError, ValueError, KeyError, IndexError):
            return False
        return len(vals) == 1 and self.margin >= 0

    def unreachable(self, domain: tuple[float, float] | None, ours: Any = None) -> str:
        """An ordering cannot pass when some entry would have to beat the next one's computed
        value by the margin beyond the domain's edge (a 2% margin over an accuracy of 0.985
        needs more than 1.0)."""
        if domain is None or ours is None:
            return ""
        try:
            vals = [float(ours[k]) for k in self.paper]
        except (TypeError, ValueError, KeyError):
            return ""
        a, z = float(domain[0]), float(domain[1])
        for (ka, _va), (kb, vb) in zip(zip(self.paper, vals), list(zip(self.paper, vals))[1:]):
            if self.lower:
                need = vb / (1.0 + self.margin)
                if need <= a:
                    return (f"{ka} would need a value below {need:.4g} ({kb} = {vb:.4g} less the {self.margin:.0%} "
                            f"margin), below the smallest value it can take ({a:g}): it cannot pass")
            else:
                need = vb * (1.0 + self.margin)
                if need >= z:
                    return (f"{ka} would need a value above {need:.4g} ({kb} = {vb:.4g} plus the {self.margin:.0%} "
                            f"margin), above the largest value it can take ({z:g}): it cannot pass")
        return ""


#: Why a claim is not reproduced (``Claim.reason_class``; docs/verdicts.md, Reason classes).
REASON_CLASSES = ("missing mechanism", "setup unknown", "baseline not modelled", "source imprecise")


@dataclass(frozen=True)
class Assumption:
    """A model assumption a claim's verdict depends on, with the value at which it flips.

    Parameters
    ----------
    name : str
        What is assumed (``"link bandwidth (GB/s)"``).
    value : any
        The value the model uses.
    flip_at : any
        The value at which the verdict changes (found by sweeping the assumption), or None
        when no value in the range swept flips it (``note`` says which range).
    sourced : bool
        True when *value* comes from a stated source (``source``), False when it is our
        assumption; the scoreboard marks (†) verdicts resting on an unsourced one that flips.
    source, note : str
    flips_to : str
        The verdict on the other side of *flip_at* (``"not discriminating"`` where a null lands
        beside ours there, ``"reproduced"``), shown beside the flip in every view; ``""`` when not
        stated. Only meaningful with a *flip_at*.

    Raises
    ------
    TechniqueError
        ``sourced=True`` without a ``source``; a ``flips_to`` that is not a string, or one given
        without a ``flip_at``.
    """

    name: str
    value: Any
    flip_at: Any = None
    sourced: bool = False
    source: str = ""
    note: str = ""
    flips_to: str = ""

    def __post_init__(self) -> None:
        if self.sourced and not self.source.strip():
            raise TechniqueError(f"assumption {self.name!r}: sourced=True needs `source` (where the value comes from)")
        if not isinstance(self.flips_to, str):
            raise TechniqueError(f"assumption {self.name!r}: `flips_to` must be a verdict name (a string), "
                                 f"got {type(self.flips_to).__name__} {self.flips_to!r}")
        if self.flips_to and self.flip_at is None:
            raise TechniqueError(f"assumption {self.name!r}: `flips_to` ({self.flips_to!r}) needs `flip_at` "
                                 "(the value at which the verdict flips to it); got flip_at=None")

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "flip_at": self.flip_at, "sourced": self.sourced,
                "source": self.source, "note": self.note, "flips_to": self.flips_to}


@dataclass(frozen=True)
class Null:
    """A null prediction: what a trivial or baseline explanation would give for a claim.

    A claim is ``reproduced`` only if our value is inside its band and every null's value is
    outside it; a null inside the band makes the verdict ``not discriminating`` (docs/verdicts.md,
    Nulls).

    Give exactly one of:

    * ``variants``: variant substitutions, e.g. ``{"mytech": "baseline"}``. The claim's scenarios
      are evaluated again with every spec whose variant is a key replaced by its value, and the
      claim's value is derived from those results (the baseline at the same scenario);
    * ``value``: the trivial predictor's value itself (``1.0`` for no gain, ``16.0`` for ideal
      scaling on 16 nodes, ``0.0`` for zero communication), with ``label`` saying which;
    * ``derive``: a function of the claim's own results (label -> Result) giving the null's value,
      for a null the model computes at the claim's resolved scenario (e.g. ideal additive gain
      read from a metric of the claim's case): its inputs are the case's, resolved and keyed.
      Judged like a ``value`` null.
    """

    label: str
    variants: Mapping[str, str] | None = None
    value: Any = None
    derive: Callable[[Mapping[str, Any]], Any] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        if sum(x is not None for x in (self.variants, self.value, self.derive)) != 1:
            raise TechniqueError(f"null {self.label!r}: give exactly one of `variants`, `value` or `derive`")

    def changes_nothing(self, specs: Mapping[str, "ScenarioSpec"]) -> bool:
        """A variant null whose substitutions leave every one of *specs* as it is: the claim's own
        value again, inside the band whenever ours is (a claim defect; the kit's claims-nulls check)."""
        return self.variants is not None and self.substitute(specs) == dict(specs)

    def compares_with_itself(self, specs: Mapping[str, "ScenarioSpec"]) -> bool:
        """A variant null that leaves the claim's cases on one variant where they ran several, each
        case it changes moved onto a scenario the claim already runs under another label (the
        baseline in the technique's place, where the claim compares the two): its derived value
        compares a result with itself (a ratio of exactly 1, a tie), fixed by construction whatever
        the model, so it is not evidence under any band (docs/verdicts.md, Nulls). ``megatron`` for
        ``dhelix`` in a claim on megatron / dhelix is; ``1d`` for ``1.5d`` in a claim on 1.5D alone
        (4 against 256 GPUs: new scenarios) is not, nor is ``fedavg`` for ``pfeddst`` in a claim
        on pfeddst against the best of three baselines (fedavg still meets the other two)."""
        if self.variants is None:
            return False
        new = self.substitute(specs)
        changed = [label for label, spec in specs.items() if new[label] != spec]
        others = [spec for label, spec in specs.items() if label not in changed]
        one_variant = len({s.variant for s in new.values()}) == 1 < len({s.variant for s in specs.values()})
        return bool(changed) and one_variant and all(new[label] in others for label in changed)

    def substitute(self, specs: Mapping[str, "ScenarioSpec"]) -> dict[str, "ScenarioSpec"]:
        """The claim's specs with this null's variant substitutions applied."""
        import dataclasses

        out = {}
        for label, spec in specs.items():
            v = (self.variants or {}).get(spec.variant)
            out[label] = dataclasses.replace(spec, variant=v) if v is not None else spec
        return out


@dataclass(frozen=True)
class Claim:
    """A number (or ordering) from the paper, tied to the scenario(s) that reproduce it.

    Either give ``scenario`` and ``metric`` (our value is that metric of that case), or give
    ``cases`` (label -> ScenarioSpec) and ``derive`` (a function from label -> Result to our
    value, e.g. a ratio of two variants or an ordering).

    ``source`` names where in the paper the number is (``"abstract"``, ``"Table 4"``);
    ``verified`` is True only if the number was read in the paper itself (its text or abstract),
    False when it comes from a secondary source (the authors' code or blog, a third-party summary).
    ``note`` explains assumptions, and why a claim is not
    reproduced when it is not.

    ``nulls`` are the null predictions that must fall outside the band for the verdict
    ``reproduced`` (:class:`Null`); at least one must be computed and able to land in the band
    (a variant null, or a value null the acceptance does not exclude by construction and that lies
    in the claim's domain), else the best verdict is ``reproduced (no null)``. A claim with none gives ``null_reason`` (a count,
    an exact value, a memory size with no trivial alternative); the conformance kit fails a
    claim with neither. ``measured`` marks a claim judged on execute-fidelity timings on this
    machine. ``unit`` is the unit of a derived value (``"MB"``), shown beside ours and the
    paper's number; a ``metric`` claim's unit is its metric's, and a :class:`Gain` reads as ``x``.

    The rules are docs/verdicts.md. Further fields:

    ``domain``
        ``(low, high)``, the values the claim's value can take (``(0, 1)`` for an accuracy; each
        entry's for an ordering), or a function of the results returning it (a ratio over a
        computed baseline); a band that cannot pass or cannot fail inside it is a ``claim defect``.
    ``defect``
        A defect of the claim found by reading it (a band tighter than the source's own
        precision): the verdict is ``claim defect`` with this reason.
    ``reason_class`` and ``reason``
        Why the claim is not reproduced when it is not: one of :data:`REASON_CLASSES` and one
        line naming the missing mechanism, the unknown setting and its flip point, the baseline
        we do not model or the source's imprecision.
    ``assumptions``
        The :class:`Assumption` s the verdict depends on, each with its flip point.
    """

    id: str
    statement: str
    source: str
    verified: bool
    expect: Acceptance
    scenario: ScenarioSpec | None = None
    metric: str | None = None
    cases: Mapping[str, ScenarioSpec] | None = None
    derive: Callable[[Mapping[str, Result]], Any] | None = None
    note: str = ""
    nulls: tuple[Null, ...] = ()
    null_reason: str = ""
    measured: bool = False
    unit: str = ""
    domain: tuple[float, float] | Callable[[Mapping[str, Result]], tuple[float, float]] | None = None
    defect: str = ""
    reason_class: str | None = None
    reason: str = ""
    assumptions: tuple[Assumption, ...] = ()

    def __post_init__(self) -> None:
        if self.reason_class is not None and self.reason_class not in REASON_CLASSES:
            raise TechniqueError(f"claim {self.id!r}: reason_class: expected one of {', '.join(REASON_CLASSES)}, "
                                 f"got {self.reason_class!r}")
        if isinstance(self.assumptions, Assumption):
            object.__setattr__(self, "assumptions", (self.assumptions,))
        elif not isinstance(self.assumptions, tuple):
            object.__setattr__(self, "assumptions", tuple(self.assumptions))
        if self.scenario is None and not self.cases:
            raise TechniqueError(f"claim {self.id!r}: give `scenario` (+ `metric`) or `cases` (+ `derive`)")
        if self.scenario is not None and self.metric is None and self.derive is None:
            raise TechniqueError(f"claim {self.id!r}: a single-scenario claim needs `metric`")
        if self.cases and self.derive is None:
            raise TechniqueError(f"claim {self.id!r}: `cases` needs a `derive` function")
        if isinstance(self.nulls, Null):
            object.__setattr__(self, "nulls", (self.nulls,))
        elif not isinstance(self.nulls, tuple):
            object.__setattr__(self, "nulls", tuple(self.nulls))
        for i, n in enumerate(self.nulls):
            if not isinstance(n, Null):  # a sentence is no null (docs/verdicts.md, Nulls)
                raise TechniqueError(f"claim {self.id!r}: nulls[{i}]: expected a computed null, Null(label, variants=...), "
                                     f"Null(label, value=...) or Null(label, derive=...), got {type(n).__name__} {n!r:.60} "
                                     "(a written reason for having none goes in `null_reason`)")

    def specs(self) -> dict[str, ScenarioSpec]:
        """Every scenario this claim needs, by label (``"main"`` for ``scenario``)."""
        out: dict[str, ScenarioSpec] = {}
        if self.scenario is not None:
            out["main"] = self.scenario
        if self.cases:
            out.update(self.cases)
        return out

    def value(self, results: Mapping[str, Result]) -> Any:
        """Our value from the results of :meth:`specs` (same labels)."""
        if self.derive is not None:
            return self.derive(results)
        main = results["main"]
        if self.metric is None or self.metric not in main:
            raise TechniqueError(f"claim {self.id!r}: metric {self.metric!r} is not among the metrics its case "
                                 f"reports ({', '.join(sorted(main.metrics)) or 'none'})")
        return main[self.metric]

    def value_domain(self, results: Mapping[str, Result]) -> tuple[float, float] | None:
        """``domain``, called on *results* when it is a function."""
        return self.domain(results) if callable(self.domain) else self.domain


def with_reasons(claims: Sequence[Claim], reasons: Mapping[str, tuple[str, str]],
                 assumptions: Mapping[str, Sequence[Assumption]] | None = None) -> list[Claim]:
    """*claims* with the reason class and reason of each "not reproduced" and the assumptions
    that decide verdicts, given by claim id (docs/verdicts.md, Reason classes).

    Parameters
    ----------
    claims : sequence of Claim
    reasons : mapping of claim id -> (reason_class, reason)
        ``reason_class`` one of :data:`REASON_CLASSES`.
    assumptions : mapping of claim id -> sequence of Assumption, optional

    Returns
    -------
    list of Claim
        The claims in the same order, those named with the fields set.

    Raises
    ------
    TechniqueError
        An id that names no claim (a typo would silently leave a claim unexplained), or a
        reason class outside :data:`REASON_CLASSES`.
    """
    import dataclasses

    assumptions = assumptions or {}
    ids = {c.id for c in claims}
    unknown = sorted((set(reasons) | set(assumptions)) - ids)
    if unknown:
        raise TechniqueError(f"with_reasons: expected claim ids among {', '.join(sorted(ids))}, got {', '.join(unknown)}")
    out = []
    for c in claims:
        kw: dict[str, Any] = {}
        if c.id in reasons:
            kw["reason_class"], kw["reason"] = reasons[c.id]
        if c.id in assumptions:
            kw["assumptions"] = tuple(c.assumptions) + tuple(assumptions[c.id])
        out.append(dataclasses.replace(c, **kw) if kw else c)
    return out
