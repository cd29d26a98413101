"""Judging one claim: resolve the cases it and its nulls need, then derive our value and every
null's from stored results, and let :func:`suite.runner.verdicts.decide` pick the verdict.

Nothing here runs a case: :func:`suite.runner.reproduce.reproduce` runs them (and caches the
judgements), :func:`suite.report.scoreboard.stored_scoreboard` judges what a store already holds.
Both resolve a claim with :func:`resolve_claim`, so they judge the same case keys.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from suite.runner.bootstrap import bootstrap_interval, classify, timed_metrics
from suite.runner.verdicts import ERROR, INSIDE, STRADDLES, ClaimOutcome, NullOutcome, decide, finite_value, one_line
from suite.tamper_process import recheck, watching

if TYPE_CHECKING:
    from suite.runner.case import Case, Resolver
    from suite.technique import Claim, Null, Result, Technique

__all__ = ["judge", "judge_unchanged", "JUDGE_TRIES", "null_cases", "resolve_claim", "NullCases", "ResultReader",
           "Statuses", "CoreWatch"]

#: One null of a claim with its resolved cases (label -> Case; None for a value null or a null
#: whose scenario does not resolve) and the reason it does not resolve ("" when it does).
NullCases = tuple["Null", "Mapping[str, Case] | None", str]
#: case key -> (status, error), as :meth:`suite.results.store.Store.statuses` returns.
Statuses = Mapping[str, tuple[str, "str | None"]]


class ResultReader(Protocol):
    """What judging reads of a store: one stored case's result."""

    def result(self, key: str) -> Any: ...


class CoreWatch:
    """The shared modules (:mod:`suite.tamper`) around the judging of each technique's claims in
    this process: a claim's ``derive``, a null's, a callable ``domain`` or a custom band is plugin
    code run here, not in a worker, and one that rebinds a core name (``AcceptanceBand.check``) or
    edits a core table changed the verdicts of every technique judged after it (and, cached, served
    them to later commands that never loaded that plugin). :meth:`check` after a technique's
    claims puts back what changed and names it; the caller turns those claims' outcomes into
    errors (:meth:`spoil`), so no verdict judged under a changed core is printed or cached.
    A snapshot is taken when the first claim is judged (about 1 ms), each check about 0.3 ms.

    The claims being judged are watched the same way (*techniques*: every technique of the
    command): a derive that rewrote another technique's claim past its freeze
    (``object.__setattr__(claim, "expect", ...)``) made that claim pass, cached under its clean
    key. Each claim's, its band's and its nulls' fields are compared after each technique (the
    same objects, in order) and put back."""

    __slots__ = ("_snap", "_techniques", "_fields")

    def __init__(self, techniques: Sequence[Technique] = ()) -> None:
        self._snap: Any = None
        self._techniques = list(techniques)
        self._fields: list[tuple[str, Any, dict[str, Any]]] = []

    def begin(self) -> None:
        """Before judging a technique's claims: the snapshots, taken once."""
        if self._snap is None:
            from suite.tamper import snapshot

            self._snap = snapshot()
            self._fields = [(f"{t.name}/{c.id}{part}", o, dict(vars(o)))
                            for t in {id(t): t for t in self._techniques}.values() for c in t.claims
                            for part, o in (("", c), (".expect", c.expect), *((f".nulls[{i}]", n)
                                                                             for i, n in enumerate(c.nulls)))
                            if hasattr(o, "__dict__")]

    def check(self, tech: Technique) -> list[str]:
        """What the judging of *tech*'s claims changed in the shared modules and in the claims
        judged, put back (empty: nothing)."""
        if self._snap is None:
            return []
        from suite.frozen import same_items
        from suite.runner.evaluate import package_of
        from suite.tamper import checked

        changed, self._snap = checked(self._snap, package_of(tech))
        for label, obj, saved in self._fields:
            now = vars(obj)
            if not same_items(now, saved):
                changed.append(f"claim {label}")
                now.clear()
                now.update(saved)
        return changed

    def settle(self, tech: Technique, judged: Sequence[ClaimOutcome]) -> bool:
        """After *tech*'s claims were judged (*judged*, its outcomes judged now): :meth:`check`, and
        each of them an error row (:meth:`spoil`) when anything changed; True when so (not cached)."""
        changed = self.check(tech) if judged else []
        for o in judged if changed else ():
            self.spoil(o, tech, changed)
        return bool(changed)

    @staticmethod
    def spoil(o: ClaimOutcome, tech: Technique, changed: list[str]) -> None:
        """*o*, judged while *tech*'s plugin code had changed the core: an error row saying so."""
        from suite.runner.verdicts import ERROR

        shown = ", ".join(changed[:3]) + (" ..." if len(changed) > 3 else "")
        o.verdict, o.ours, o.ratio, o.nulls, o.reason_class = ERROR, None, None, [], None
        o.reason = (f"not judged: the claims of {tech.name!r} changed the core while they were judged ({shown}; "
                    "put back): a claim's derive, domain or band must change no shared module")


def null_cases(tech: Technique, claim: Claim, resolver: Resolver) -> list[NullCases]:
    """The resolved cases of every variant-substitution null of *claim*.

    Returns one ``(null, cases, reason)`` per null in declaration order: ``cases`` maps the claim's
    labels to the substituted, resolved cases (``None`` for a value null, or when the substituted
    scenario does not resolve, with ``reason`` saying why).
    """
    out: list[NullCases] = []
    for n in claim.nulls:
        if n.variants is None:
            out.append((n, None, ""))
            continue
        try:
            specs = n.substitute(claim.specs())
            out.append((n, {label: resolver.resolve(tech, spec) for label, spec in specs.items()}, ""))
        except Exception as exc:  # noqa: BLE001 - reported on the null, the claim still judged
            out.append((n, None, f"null scenario does not resolve: {one_line(exc)}"))
    return out


def resolve_claim(tech: Technique, claim: Claim, resolver: Resolver, o: ClaimOutcome) -> dict[str, Case] | None:
    """The resolved cases of *claim* (label -> Case; its nulls' are :func:`null_cases`); fills
    ``o.cases``. None when the claim's own scenario does not resolve: *o* is then an error row
    whose reason says why."""
    try:
        cases = {label: resolver.resolve(tech, spec) for label, spec in claim.specs().items()}
    except Exception as exc:  # noqa: BLE001 - a claim that does not resolve is an error row
        o.reason = f"scenario does not resolve: {one_line(exc)}"
        return None
    o.cases = {label: c.key for label, c in cases.items()}
    return cases


def _bad_case(cases: Mapping[str, Case], status: Statuses) -> str:
    for label, c in cases.items():
        st, err = status.get(c.key, ("missing", "not computed"))
        if st != "ok":
            return f"case {label!r} {st}: {err or ''}".rstrip(": ")
    return ""


def _judge_value(claim: Claim, results: Mapping[str, Result],
                 statistics: bool) -> tuple[Any, str, tuple[float, float] | None, int]:
    """(value, state, interval, samples) of *claim* on *results*; bootstrap when *statistics*."""
    value = finite_value(claim.value(results))
    reps: list[Any] = []
    n = 0
    if statistics:
        timed = timed_metrics(results)
        n = min((len(m.samples or ()) for m in timed.values()), default=0)
        reps = bootstrap_interval(claim, results)
    state, interval = classify(claim, value, reps)
    return value, state, interval, n


def _judge_null(claim: Claim, n: Null, ncases: Mapping[str, Case] | None, why: str, results: Mapping[str, Result],
                status: Statuses, store: ResultReader, statistics: bool) -> NullOutcome:
    """One null of *claim*, judged: its value and where it lies (or the reason it could not be)."""
    no = NullOutcome(label=n.label, kind="value" if n.variants is None else "variants",
                     substitutions=dict(n.variants or {}))
    if why:
        no.reason = why
        return no
    try:
        if n.variants is None:
            no.value = n.value if n.derive is None else n.derive(results)
            finite_value(no.value)
            nstate, no.interval = classify(claim, no.value, [])
        else:
            assert ncases is not None  # a variant null without cases carries its reason (why)
            no.cases = {label: c.key for label, c in ncases.items()}
            nbad = _bad_case(ncases, status)
            if nbad:
                no.reason = "null " + nbad
                return no
            nres = {label: store.result(c.key) for label, c in ncases.items()}
            no.value, nstate, no.interval, _n = _judge_value(claim, nres, statistics)
    except Exception as exc:  # noqa: BLE001
        no.reason = f"null value could not be derived: {one_line(exc)}"
        return no
    no.straddles = nstate == STRADDLES
    no.inside = None if no.straddles else nstate == INSIDE
    return no


def _unjudged(nulls: Sequence[NullCases], why: str) -> list[NullOutcome]:
    """The declared nulls, visible with *why* when our own value cannot be judged."""
    return [NullOutcome(label=n.label, kind="value" if n.variants is None else "variants",
                        substitutions=dict(n.variants or {}), reason=why) for n, _c, _w in nulls]


def judge(claim: Claim, o: ClaimOutcome, cases: Mapping[str, Case], status: Statuses, store: ResultReader,
          nulls: Sequence[NullCases] | None = None) -> None:
    """Fill outcome *o* of *claim* from stored cases: our value, the ratio, every null and the verdict.

    Parameters
    ----------
    claim : Claim
    o : ClaimOutcome
        Filled in place.
    cases : mapping of label -> Case
        The claim's resolved cases.
    status : mapping of case key -> (status, error)
        As :meth:`suite.results.store.Store.statuses`, covering the claim's and the nulls' cases.
    store : Store
        Anything with ``result(key)`` (:class:`ResultReader`).
    nulls : sequence of (Null, cases or None, reason), optional
        As :func:`null_cases`. Default: value nulls are judged, variant nulls carry the reason
        "null cases not given to judge()" (so the verdict is never ``reproduced`` on evidence
        that was not evaluated).

    Notes
    -----
    The verdict: ``error`` when a claim case is not ok or a value cannot be derived or checked or
    is NaN or infinite (ours or, when ours is inside, a null's: :func:`suite.runner.verdicts.finite_value`);
    otherwise as :func:`suite.runner.verdicts.decide` says: ``claim defect`` when the claim
    declares a defect or its band cannot pass or cannot fail inside its ``domain``; ``not
    reproduced`` when our value (or, measured, its whole interval) is outside the band, with the
    claim's reason class; ``inconclusive`` when a measured interval straddles the band's edge;
    ``not discriminating`` when ours is inside and a null is inside too; ``inconclusive`` when
    ours is inside and a measured null straddles; ``error`` when ours is inside but a null could
    not be evaluated (the evidence is missing); ``reproduced (no null)`` when no null could have
    landed in the band; else ``reproduced``.
    """
    if nulls is None:
        nulls = [(n, None, "" if n.variants is None else "null cases not given to judge()") for n in claim.nulls]
    statistics = bool(claim.measured) or any(c.fidelity == "execute" for c in cases.values())
    bad = _bad_case(cases, status)
    if bad:
        o.reason = bad
        o.nulls = _unjudged(nulls, "not judged: the claim's own case failed")
        return
    try:
        results = {label: store.result(c.key) for label, c in cases.items()}
        ours, state, o.interval, o.samples = _judge_value(claim, results, statistics)
    except Exception as exc:  # noqa: BLE001
        o.reason = f"value could not be derived: {one_line(exc)}"
        o.nulls = _unjudged(nulls, "not judged: the claim's value could not be derived")
        return
    o.ours = ours
    try:
        o.ratio = claim.expect.ratio(ours)
    except Exception:  # noqa: BLE001 - a ratio is decoration
        o.ratio = None
    o.nulls = [_judge_null(claim, n, ncases, why, results, status, store, statistics) for n, ncases, why in nulls]
    decide(claim, o, state, results)


#: how many times a claim is judged while a watched plugin thread keeps changing the core
JUDGE_TRIES = 2


def judge_unchanged(claim: Claim, o: ClaimOutcome, cases: Mapping[str, Case], status: Statuses,
                    store: ResultReader, nulls: Sequence[NullCases] | None = None) -> str:
    """:func:`judge`, on a core no watched plugin thread changed meanwhile (:mod:`suite.tamper_process`).

    While a thread a plugin left running is watched, what it changed is put back after the
    judgement (:func:`~suite.tamper_process.recheck`); a claim judged while the core was changed
    is judged again, up to :data:`JUDGE_TRIES` times in all, then left an ``error`` row whose
    reason starts "not judged:" (never cached). No thread watched: :func:`judge` alone.

    Returns
    -------
    str
        One line when the core was changed while *claim* was judged (what was put back, and
        whether it was judged again); ``""`` otherwise.
    """
    if not watching():
        judge(claim, o, cases, status, store, nulls)
        return ""
    blank, changed = copy.deepcopy(o), ""
    for _ in range(JUDGE_TRIES):
        trial = copy.deepcopy(blank)
        judge(claim, trial, cases, status, store, nulls)
        note = recheck()
        if not note:
            vars(o).update(vars(trial))
            return f"claim {o.technique}/{claim.id} judged again once {changed}" if changed else ""
        changed = note
    o.verdict, o.reason = ERROR, f"not judged: the core was changed while this claim was judged ({JUDGE_TRIES} tries): {changed}"
    declared = nulls if nulls is not None else [(n, None, "") for n in claim.nulls]
    o.nulls = _unjudged(declared, "not judged: the core was changed while the claim was judged")
    return f"claim {o.technique}/{claim.id} not judged: {changed}"
