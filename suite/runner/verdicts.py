"""Verdicts: the outcome types of a judged claim and the rules that pick its verdict.

A verdict is information, never forced (the rules, with examples: docs/verdicts.md):

``reproduced``
    our value is inside the claim's band, every null prediction is outside it, and at least one
    null is *computed and could have landed in the band* (a variant null: the baseline at the
    same scenario; or a value null, such as ideal scaling, that the acceptance does not exclude
    by its construction and that lies in the claim's domain: no negative time);
``reproduced (no null)``
    our value is inside and every null outside, but no null could have landed inside (none
    declared, only a written ``null_reason``, or only nulls the band excludes by construction,
    such as no gain = 1.0 under a gain band or a tie under an ordering, which is also what a
    variant null putting the baseline in the technique's place of a ratio or an ordering of
    the two gives): not evidence, counted apart;
``not discriminating``
    our value is inside, and so is a null (the baseline at the same scenario, or a trivial
    predictor such as no gain = 1.0x): the claim cannot tell the technique from its null;
``not reproduced``
    our value is outside the band; the outcome carries the claim's ``reason_class`` (missing
    mechanism, setup unknown, baseline not modelled, source imprecise) and reason;
``inconclusive``
    a measured claim (execute timings) whose bootstrap confidence interval straddles the band's
    edge, or one of whose measured nulls does;
``claim defect``
    a pass or a fail was impossible before any run: the band is empty or NaN, or an ordering of one
    label or with a negative margin (``Acceptance.malformed``), or it lies outside (or covers) every
    value the claim can take (``Claim.domain``), or the claim declares a ``defect``;
``error``
    a case (the claim's or a null's) failed, or a value could not be derived or is NaN or infinite
    (:func:`finite_value`: it could land in no band), with the reason.

This module is the bottom layer of reproduction: it imports neither the runner's engine nor the
store nor the report, so :mod:`suite.report.scoreboard` renders these types without importing the
orchestration (:mod:`suite.runner.reproduce`). Values are computed in :mod:`suite.runner.judging`
(and :mod:`suite.runner.bootstrap` for measured claims); :func:`decide` applies the rules.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from suite.errors import SuiteError

if TYPE_CHECKING:
    from suite.runner.engine import RunSummary
    from suite.technique import Claim, Result, Technique

__all__ = ["ClaimOutcome", "NullOutcome", "Scoreboard", "new_outcome", "informative_nulls", "could_land", "claim_domain",
           "claim_defect", "finite_value", "not_finite",
           "decide", "format_value", "flip_text", "assumption_value", "one_line", "safe_text", "REPRODUCED", "REPRODUCED_NO_NULL", "NOT_DISCRIMINATING",
           "NOT_REPRODUCED", "INCONCLUSIVE", "CLAIM_DEFECT", "ERROR", "VERDICTS", "MEASURED_LABEL",
           "BOOTSTRAP_REPLICATES", "CONFIDENCE", "INSIDE", "OUTSIDE", "STRADDLES"]

REPRODUCED, REPRODUCED_NO_NULL, NOT_DISCRIMINATING, NOT_REPRODUCED, INCONCLUSIVE, CLAIM_DEFECT, ERROR = (
    "reproduced", "reproduced (no null)", "not discriminating", "not reproduced", "inconclusive", "claim defect",
    "error")
#: Every verdict class, in the order the scoreboard counts them.
VERDICTS = (REPRODUCED, REPRODUCED_NO_NULL, NOT_DISCRIMINATING, NOT_REPRODUCED, INCONCLUSIVE, CLAIM_DEFECT, ERROR)
#: The label of a claim judged on timings taken on this machine (``Claim.measured``).
MEASURED_LABEL = "measured on this machine"
#: Bootstrap replicates of a measured claim's value, and the two-sided confidence level.
BOOTSTRAP_REPLICATES = 2000
CONFIDENCE = 0.95
#: Where a value (or its confidence interval) lies with respect to a claim's band.
INSIDE, OUTSIDE, STRADDLES = "inside", "outside", "straddles"


@dataclass
class NullOutcome:
    """One null prediction of a claim, judged against the claim's band.

    ``inside`` is True when the null's value is inside the band (the claim does not
    discriminate), False when outside, None when it could not be judged (``reason`` says why)
    or, for a measured null, when its interval straddles the band's edge (``straddles``).
    """

    label: str
    kind: str  # "variants" or "value"
    value: Any = None
    inside: bool | None = None
    straddles: bool = False
    interval: tuple[float, float] | None = None
    reason: str = ""
    substitutions: dict[str, str] = field(default_factory=dict)
    cases: dict[str, str] = field(default_factory=dict)  # label -> case key (variant nulls)

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "kind": self.kind, "value": _jsonable(self.value), "inside": self.inside,
                "straddles": self.straddles, "interval": list(self.interval) if self.interval else None,
                "reason": self.reason, "substitutions": dict(self.substitutions), "cases": dict(self.cases)}


@dataclass
class ClaimOutcome:
    """One row of the scoreboard: paper, ours, the nulls, the verdict."""

    technique: str
    claim: str
    statement: str
    source: str
    verified: bool
    paper: str  # expect.describe()
    ours: Any = None
    ratio: float | None = None
    verdict: str = ERROR
    reason: str = ""
    note: str = ""
    cases: dict[str, str] = field(default_factory=dict)  # label -> case key
    nulls: list[NullOutcome] = field(default_factory=list)
    null_reason: str = ""
    measured: bool = False
    label: str = ""  # "measured on this machine" for a measured claim
    interval: tuple[float, float] | None = None  # bootstrap CI of our value (measured)
    samples: int = 0  # fewest samples behind any timed metric of the claim (measured)
    #: on "not reproduced": one of suite.technique.REASON_CLASSES (None on other verdicts)
    reason_class: str | None = None
    #: the claim's deciding assumptions: dicts of name, value, flip_at, sourced (and source, note, flips_to)
    assumptions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def unsourced(self) -> list[dict[str, Any]]:
        """The deciding assumptions that come from no stated source (the scoreboard lists them all, and
        marks the verdict with † when one of them has a flip point)."""
        return [a for a in self.assumptions if not a.get("sourced")]

    def as_dict(self) -> dict[str, Any]:
        return {"technique": self.technique, "claim": self.claim, "statement": self.statement, "source": self.source,
                "verified": self.verified, "paper": self.paper, "ours": _jsonable(self.ours), "ratio": self.ratio,
                "verdict": self.verdict, "reason": self.reason, "note": self.note, "cases": self.cases,
                "nulls": [n.as_dict() for n in self.nulls], "null_reason": self.null_reason,
                "measured": self.measured, "label": self.label,
                "interval": list(self.interval) if self.interval else None, "samples": self.samples,
                "reason_class": self.reason_class, "assumptions": [_jsonable(a) for a in self.assumptions]}


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    np = sys.modules.get("numpy")  # the bottom layer imports no suite module: suite.frozen.loaded_numpy, inline
    if np is not None and isinstance(v, np.generic):
        return v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


@dataclass
class Scoreboard:
    """Every claim outcome, and the run that computed their cases."""

    outcomes: list[ClaimOutcome]
    run: RunSummary | None = None
    #: one line per claim judged while a watched plugin thread had changed the core (judged again
    #: or not judged: :func:`suite.runner.judging.judge_unchanged`); shown as warnings, not rendered
    notes: list[str] = field(default_factory=list)

    def counts(self, verified: bool | None = None) -> dict[str, int]:
        """Claims per verdict class (every class of :data:`VERDICTS`, zeros included) and ``total``."""
        rows = [o for o in self.outcomes if verified is None or o.verified == verified]
        c = {v: 0 for v in VERDICTS}
        for o in rows:
            c[o.verdict] += 1
        c["total"] = len(rows)
        return c

    def as_dict(self) -> dict[str, Any]:
        return {"claims": [o.as_dict() for o in self.outcomes],
                "counts": {"all": self.counts(), "verified": self.counts(True), "unverified": self.counts(False)},
                "run": self.run.as_dict() if self.run else None}


def one_line(exc: BaseException) -> str:
    """The first line of *exc*'s message, prefixed by its type unless it is a :class:`SuiteError`
    (whose messages are written for people)."""
    msg = str(exc).strip().splitlines()
    return msg[0] if msg and isinstance(exc, SuiteError) else (f"{type(exc).__name__}: {msg[0]}" if msg else type(exc).__name__)


def safe_text(f: Callable[[], Any]) -> str:
    """``str(f())``, or ``<ExceptionType>`` when *f* raises (a description that cannot fail)."""
    try:
        return str(f())
    except Exception as exc:  # noqa: BLE001
        return f"<{type(exc).__name__}>"


def new_outcome(tech: Technique, claim: Claim) -> ClaimOutcome:
    """An empty outcome row for *claim* (verdict ``error`` until judged)."""
    return ClaimOutcome(technique=tech.name, claim=claim.id, statement=claim.statement, source=claim.source,
                        verified=claim.verified, paper=safe_text(claim.expect.describe), note=claim.note,
                        null_reason=claim.null_reason, measured=bool(claim.measured),
                        label=MEASURED_LABEL if claim.measured else "",
                        assumptions=[a.as_dict() for a in claim.assumptions])


def flip_text(a: Mapping[str, Any], verdict: str | None = None) -> str:
    """Where an assumption (:meth:`suite.technique.Assumption.as_dict`) flips its claim's verdict:
    ``flips at 26 (to not discriminating)``, ``flips at 0.1475`` (no ``flips_to`` stated), or
    ``no flip found`` (``flip_at`` None: no value in the range swept flips it). A ``flips_to``
    equal to the claim's *verdict* contradicts it and is said so: ``flips at 0 (to reproduced,
    the verdict it already has: flip_at or flips_to is wrong)``."""
    if a.get("flip_at") is None:
        return "no flip found"
    to = a.get("flips_to") or ""
    same = ", the verdict it already has: flip_at or flips_to is wrong" if to and to == verdict else ""
    return f"flips at {format_value(a.get('flip_at'))}" + (f" (to {to}{same})" if to else "")


def assumption_value(a: Mapping[str, Any]) -> str:
    """An assumption's value as every view shows it: :func:`format_value`, ``unset`` for None."""
    v = a.get("value")
    return "unset" if v is None else format_value(v)


def format_value(v: Any) -> str:
    """A value as a reason or a table shows it: numbers with 4 significant digits, orderings
    ``(a, b)``, mappings ``a=1, b=2``."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, (int,)):
        return str(v)
    if isinstance(v, float):
        return f"{v:.4g}" if math.isfinite(v) else str(v)
    if isinstance(v, Mapping):
        return ", ".join(f"{k}={format_value(x)}" for k, x in v.items())
    if isinstance(v, (list, tuple)):
        if v and all(isinstance(x, str) for x in v):
            return "(" + ", ".join(v) + ")"
        return "[" + ", ".join(format_value(x) for x in v) + "]"
    try:
        return f"{float(v):.4g}"
    except (TypeError, ValueError):
        return str(v)


# --------------------------------------------------------------------------- the rules


def not_finite(v: Any) -> bool:
    """Whether *v* (a number, or a mapping, sequence or numpy array of them: an ordering's values)
    holds NaN or an infinity. Strings and booleans are not numbers and pass (an exact ordering of names)."""
    if isinstance(v, Mapping):
        return any(not_finite(x) for x in v.values())
    if isinstance(v, (list, tuple)):
        return any(not_finite(x) for x in v)
    if isinstance(v, (str, bytes, bool)):
        return False
    if hasattr(v, "tolist") and not isinstance(v, (int, float)):  # a numpy array or scalar: its values
        return not_finite(v.tolist())
    try:
        return not math.isfinite(v)
    except OverflowError:  # an int beyond every float
        return True
    except (TypeError, ValueError):
        return False


def finite_value(v: Any) -> Any:
    """*v*, a derived value (ours or a null's), when every number in it is finite.

    Raises
    ------
    SuiteError
        *v* holds NaN or an infinity (a ratio over zero, ``0/0`` in numpy): such a value could
        land in no band and is no number the claim can be judged on, so the value counts as not
        derived (docs/verdicts.md: *error*), like a metric the runner refuses.
    """
    if not_finite(v):
        raise SuiteError(f"the value is {format_value(v)}, not a finite number (it could land in no band)")
    return v



def informative_nulls(claim: Claim, nulls: Sequence[NullOutcome],
                      domain: tuple[float, float] | None = None) -> list[NullOutcome]:
    """The judged nulls that are evidence: those whose value could have landed in the band
    (:func:`could_land`). Excluded: ``no gain`` = 1.0 under a gain band, and likewise a variant null
    that puts the baseline in the technique's place of a ratio of the two (exactly 1.0), or of an
    ordering (a tie), under any band (:meth:`~suite.declaration.claims.Null.compares_with_itself`);
    a value outside *domain* (:func:`claim_domain`: -1 s for a time)."""
    specs = claim.specs()
    itself = {n.label for n in claim.nulls if n.compares_with_itself(specs)}
    return [n for n in nulls
            if not n.reason and n.label not in itself and (n.inside is not None or n.straddles)
            and could_land(claim, n.value, domain)]


def could_land(claim: Claim, value: Any, domain: tuple[float, float] | None) -> bool:
    """Whether a null's *value* could have landed in *claim*'s band, so that it is evidence
    (docs/verdicts.md, Nulls): a finite number (or ordering of them) that the acceptance does not
    exclude by construction (:meth:`Acceptance.excludes`) and that lies inside *domain*, the
    ``(low, high)`` values the claim's value can take (each entry's for an ordering; None: any).
    The one rule of ``suite reproduce`` and of the kit's ``claims-nulls`` check."""
    return not (claim.expect.excludes(value) or not_finite(value) or _outside(value, domain))


def _outside(v: Any, domain: tuple[float, float] | None) -> bool:
    """Whether the number *v* (or an entry of the mapping *v*) lies outside *domain*."""
    if domain is None or isinstance(v, (str, bytes, bool)):
        return False
    if isinstance(v, Mapping):
        return any(_outside(x, domain) for x in v.values())
    try:
        x = float(v)
    except (TypeError, ValueError):
        return False
    return x < float(domain[0]) or x > float(domain[1])


def claim_domain(claim: Claim, results: Mapping[str, Result]) -> tuple[float, float] | None:
    """The values *claim*'s value can take: its ``domain`` (called on *results* when a function),
    else the one its metric's unit implies (:func:`_unit_domain`), else None (any). Raises what a
    ``domain`` function raises."""
    domain = claim.value_domain(results)
    return _unit_domain(claim, results) if domain is None else domain


def claim_defect(claim: Claim, ours: Any, results: Mapping[str, Result]) -> str:
    """Why *claim* could not both pass and fail before any run (a declared ``defect``, a variant null
    that substitutes nothing the claim uses, an acceptance that judges nothing as declared: an empty
    or NaN band, an ordering of one label or with a negative margin (:meth:`Acceptance.malformed`),
    or a band unreachable inside the claim's ``domain``), or ``""`` (docs/verdicts.md, Claim defects)."""
    return _defect(claim, ours, results)[0]


def _defect(claim: Claim, ours: Any, results: Mapping[str, Result]) -> tuple[str, tuple[float, float] | None]:
    """(:func:`claim_defect`, the claim's :func:`claim_domain` when there is no defect)."""
    if claim.defect:
        return claim.defect, None
    same = next((n.label for n in claim.nulls if n.changes_nothing(claim.specs())), None)
    if same is not None:  # the claim's own value again: it lands wherever ours does (the kit's claims-nulls says so)
        return f"null {same!r} changes no scenario of the claim: it is our own value, inside the band whenever ours is", None
    malformed = claim.expect.malformed()
    if malformed:
        return malformed, None
    try:
        domain = claim_domain(claim, results)
    except Exception as exc:  # noqa: BLE001 - a domain that cannot be computed is reported, not raised
        return f"the claim's domain could not be computed: {one_line(exc)}", None
    return claim.expect.unreachable(domain, ours), domain


def _unit_domain(claim: Claim, results: Mapping[str, Result]) -> tuple[float, float] | None:
    """The domain a metric claim's unit implies when the claim declares none: ``[0, inf)`` for a
    quantity that cannot be negative (a time, a size, a rate; :func:`suite.runner.checks.nonnegative_unit`,
    the rule the runner stores metrics by), else None. A band wholly below 0 s is then a claim
    defect, not "not reproduced"."""
    from suite.runner.checks import nonnegative_unit

    main = results.get("main")
    if claim.metric is None or claim.derive is not None or main is None or claim.metric not in main.metrics:
        return None
    return (0.0, math.inf) if nonnegative_unit(main.metrics[claim.metric].unit) else None


def _why_not(claim: Claim, o: ClaimOutcome) -> None:
    """The reason class and reason of a "not reproduced": the claim's declaration, else derived
    from an unsourced deciding assumption that flips (setup unknown)."""
    if claim.reason_class:
        o.reason_class, o.reason = claim.reason_class, claim.reason
        return
    flips = [a for a in claim.assumptions if not a.sourced and a.flip_at is not None]
    if flips:
        a = flips[0]
        o.reason_class = "setup unknown"
        o.reason = claim.reason or (f"{a.name} = {assumption_value(a.as_dict())} is assumed; the verdict "
                                    f"{flip_text(a.as_dict(), o.verdict)}")
    else:
        o.reason = claim.reason or "no reason class declared"


def _inside_verdict(claim: Claim, o: ClaimOutcome, domain: tuple[float, float] | None) -> tuple[str, str]:
    """(verdict, reason) when our value is inside the band: what the nulls make of it (*domain*:
    the claim's, a null outside it being no evidence)."""
    inside = [n.label for n in o.nulls if n.inside]
    if inside:
        return NOT_DISCRIMINATING, "null inside the band: " + ", ".join(inside)
    straddling = [n.label for n in o.nulls if n.straddles]
    if straddling:
        return INCONCLUSIVE, f"the {CONFIDENCE:.0%} interval of a null straddles the band's edge: " + ", ".join(straddling)
    unevaluated = [n for n in o.nulls if n.reason]
    if unevaluated:
        return ERROR, f"null {unevaluated[0].label!r}: {unevaluated[0].reason}"
    if not informative_nulls(claim, o.nulls, domain):
        if not o.nulls:
            return REPRODUCED_NO_NULL, "none declared: " + (claim.null_reason or "no null prediction")
        return REPRODUCED_NO_NULL, _no_evidence(o.nulls, domain)
    return REPRODUCED, o.reason


def _no_evidence(nulls: Sequence[NullOutcome], domain: tuple[float, float] | None) -> str:
    """Why none of *nulls* (each judged outside the band) could have landed in it."""
    if domain is None or not any(_outside(n.value, domain) for n in nulls):
        return "every null is excluded by the band's construction: " + ", ".join(n.label for n in nulls)
    why = {True: f"outside the values the claim can take [{domain[0]:g}, {domain[1]:g}]",
           False: "excluded by the band's construction"}
    return "no null could have landed in the band: " + ", ".join(f"{n.label} ({why[_outside(n.value, domain)]})"
                                                                  for n in nulls)


def decide(claim: Claim, o: ClaimOutcome, state: str, results: Mapping[str, Result]) -> None:
    """Set the verdict (and reason) of a judged outcome *o* whose value and nulls are filled in.

    *state* is where our value lies (:data:`INSIDE`, :data:`OUTSIDE`, :data:`STRADDLES`). In order:
    ``claim defect`` (:func:`claim_defect`, checked before the band is read); ``not reproduced``
    when outside, with the reason class; ``inconclusive`` when a measured interval straddles;
    then, inside, ``not discriminating`` when a null is inside too, ``inconclusive`` when a
    measured null straddles, ``error`` when a null could not be evaluated (the evidence is
    missing), ``reproduced (no null)`` when no null could have landed in the band
    (:func:`informative_nulls`), else ``reproduced``.
    """
    defect, domain = _defect(claim, o.ours, results)
    if defect:
        o.verdict, o.reason = CLAIM_DEFECT, defect
    elif state == OUTSIDE:
        o.verdict = NOT_REPRODUCED
        _why_not(claim, o)
    elif state == STRADDLES:
        o.verdict = INCONCLUSIVE
        o.reason = f"the {CONFIDENCE:.0%} interval of our value straddles the band's edge"
    else:
        o.verdict, o.reason = _inside_verdict(claim, o, domain)
