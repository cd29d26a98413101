"""Reproduce paper claims: run every scenario a claim and its nulls need, compute our value, judge.

The orchestration of a reproduction, in three named steps: resolve every claim's cases and its
nulls' (:func:`suite.runner.judging.resolve_claim`), run them all through the runner (stored and
cached, :func:`suite.runner.engine.run_cases`), then judge each claim
(:func:`suite.runner.judging.judge`) unless its judgement is cached in the store
(:mod:`suite.runner.judgement_cache`). The verdict classes and their rules are in
:mod:`suite.runner.verdicts` (docs/verdicts.md), the bootstrap of a measured claim in
:mod:`suite.runner.bootstrap`, the rendering in :mod:`suite.report.scoreboard`.

One claim's error never stops the others. A judged outcome is cached in the store
(``Store.judgements``), keyed by everything the judgement reads, so a reproduce whose cases are
all stored re-derives nothing; error rows are never cached and ``--rerun`` judges afresh.

Every public name of the modules this one was split from stays importable from here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from suite.collector import collector_paused
from suite.runner.bootstrap import bootstrap_interval
from suite.runner.judgement_cache import Uncacheable, cacheable, encode_outcome, judgement_key, restore_outcome
from suite.runner.judging import (CoreWatch, NullCases, ResultReader, judge, judge_unchanged, null_cases,
                                  resolve_claim)
from suite.runner.verdicts import (BOOTSTRAP_REPLICATES, CLAIM_DEFECT, CONFIDENCE, ERROR, INCONCLUSIVE,
                                   MEASURED_LABEL, NOT_DISCRIMINATING, NOT_REPRODUCED, REPRODUCED,
                                   REPRODUCED_NO_NULL, VERDICTS, ClaimOutcome, NullOutcome, Scoreboard,
                                   informative_nulls, new_outcome)
from suite.runner.verdicts import claim_defect  # noqa: F401 - importable from here as before the split
from suite.tamper_process import recheck
from suite.technique import Result

if TYPE_CHECKING:
    from suite.results.store import Store
    from suite.runner.case import Case, Resolver
    from suite.runner.engine import RunSummary
    from suite.runner.executors import ExecOptions
    from suite.technique import Claim, Technique

__all__ = ["ClaimOutcome", "NullOutcome", "Scoreboard", "reproduce", "judge", "null_cases", "bootstrap_interval",
           "REPRODUCED", "REPRODUCED_NO_NULL", "NOT_DISCRIMINATING", "NOT_REPRODUCED", "INCONCLUSIVE",
           "CLAIM_DEFECT", "ERROR", "VERDICTS", "MEASURED_LABEL", "BOOTSTRAP_REPLICATES", "CONFIDENCE",
           "informative_nulls"]


@dataclass
class _Pending:
    """A claim whose cases resolved, waiting to be judged."""

    tech: Technique
    claim: Claim
    outcome: ClaimOutcome
    cases: dict[str, Case]
    nulls: list[NullCases]

    def keys(self) -> list[str]:
        """The case keys of the claim and of its nulls."""
        return [c.key for c in self.cases.values()] + [c.key for _n, nc, _r in self.nulls if nc for c in nc.values()]


def _resolve_all(techniques: Sequence[Technique], resolver: Resolver,
                 verified_only: bool) -> tuple[list[ClaimOutcome], list[_Pending]]:
    """An outcome per claim (in technique then declaration order), and those whose cases resolved."""
    outcomes: list[ClaimOutcome] = []
    pending: list[_Pending] = []
    for tech in techniques:
        for claim in tech.claims:
            if verified_only and not claim.verified:
                continue
            o = new_outcome(tech, claim)
            outcomes.append(o)
            cases = resolve_claim(tech, claim, resolver, o)
            if cases is not None:
                pending.append(_Pending(tech, claim, o, cases, null_cases(tech, claim, resolver)))
    return outcomes, pending


def _cases_of(pending: Sequence[_Pending]) -> list[Case]:
    """Every case the pending claims and their nulls need, in order (repeats included)."""
    out: list[Case] = []
    for p in pending:
        out.extend(p.cases.values())
        for _n, ncases, _r in p.nulls:
            if ncases:
                out.extend(ncases.values())
    return out


class _StoredOnce:
    """What :func:`judge` reads of *store* (:class:`~suite.runner.judging.ResultReader`), each
    case read once: a case shared by several claims and nulls (1,569 reads of 745 cases in a
    fresh ``--all``) is fetched and its artifacts parsed once. Every read hands out its own
    :class:`_Handed` copy, so a claim that writes to a result it was given changes no other
    claim's."""

    def __init__(self, store: ResultReader) -> None:
        self._store = store
        self._held: dict[str, Result] = {}

    def result(self, key: str) -> Result:
        """A copy of the stored result of case *key* (StoreError as :meth:`Store.result`)."""
        held = self._held.get(key)
        if held is None:
            held = self._held[key] = self._store.result(key)
        return _Handed(held)


class _Handed(Result):
    """A copy of a held :class:`Result`: its own metrics dict (of the frozen :class:`Metric`
    objects), and its own artifacts, copied from the held ones when first read (most claims read
    none, and one technique's cases hold 4.2 MB of event logs). The held artifacts are what the store's
    JSON gave, so a JSON round trip copies them exactly.

    To a claim's ``derive`` it is a :class:`Result`: equal to any Result with the same metrics and
    artifacts, and ``dataclasses.replace`` / a copy build it from its fields."""

    __hash__ = None  # type: ignore[assignment]  # mutable, as Result

    def __init__(self, held: Result | None = None, *, metrics: dict[str, Any] | None = None,
                 artifacts: dict[str, Any] | None = None) -> None:  # noqa: D107
        self._held: Result | None = held
        if held is not None:
            self.metrics = dict(held.metrics)
        else:  # from its fields (dataclasses.replace, copy.copy)
            self.metrics = dict(metrics) if metrics is not None else {}
            self.__dict__["_artifacts"] = artifacts if artifacts is not None else {}

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Result):
            return NotImplemented
        return self.metrics == other.metrics and self.artifacts == other.artifacts

    @property
    def artifacts(self) -> dict[str, Any]:
        if self._held is not None:
            self.__dict__["_artifacts"] = json.loads(json.dumps(self._held.artifacts))
            self._held = None
        art: dict[str, Any] = self.__dict__["_artifacts"]
        return art

    @artifacts.setter
    def artifacts(self, value: dict[str, Any]) -> None:
        self._held = None
        self.__dict__["_artifacts"] = value


def _judge_all(pending: Sequence[_Pending], store: Store, rerun: bool) -> list[str]:
    """Judge every pending claim on the stored cases, or restore its cached judgement; returns a
    line for each claim judged while a watched plugin thread had changed the core (judged again,
    or left "not judged": :func:`~suite.runner.judging.judge_unchanged`).

    Judged outcomes are cached in the store, keyed by everything a judgement reads
    (:func:`~suite.runner.judgement_cache.judgement_key`); *rerun* judges afresh and replaces
    the cached judgements. A read-only or locked store leaves the cache as it was.
    """
    notes: list[str] = []
    if not pending:
        return notes
    keys_needed = {k for p in pending for k in p.keys()}
    status = store.statuses(keys_needed)
    digests = store.content_digests(keys_needed)
    keys = [judgement_key(p.tech, p.claim, p.cases, p.nulls, digests) for p in pending]
    cached = {} if rerun else store.judgements(k for k in keys if k)
    fresh: dict[str, str] = {}
    reader = _StoredOnce(store)
    recheck()  # what a watched plugin's thread changed in the core, put back before judging
    watch, judged = CoreWatch([p.tech for p in pending]), []
    for i, (p, jkey) in enumerate(zip(pending, keys)):
        if not _restored(p.outcome, cached.get(jkey) if jkey else None):
            watch.begin()
            note = judge_unchanged(p.claim, p.outcome, p.cases, status, reader, p.nulls)
            if note:
                notes.append(note)
            judged.append((p, jkey))
        if judged and (i + 1 == len(pending) or pending[i + 1].tech is not p.tech):  # the technique's last claim
            if not watch.settle(p.tech, [q.outcome for q, _k in judged]):
                _keep_judged(judged, fresh)
            judged = []
    # judgements made while such a thread changed the core again are not kept for the next command
    if fresh and not recheck() and getattr(store, "conn", None) is not None:
        try:
            store.add_judgements(fresh)
        except Exception:  # noqa: BLE001 - a read-only store or a lock: the cache is an optimisation
            pass
    return notes


def _keep_judged(judged: Sequence[tuple[_Pending, str | None]], fresh: dict[str, str]) -> None:
    """The claims of one technique just judged, that changed nothing while judged
    (:meth:`suite.runner.judging.CoreWatch.settle`): each cacheable one added to *fresh*."""
    for p, jkey in judged:
        if jkey and cacheable(p.outcome):
            try:
                fresh[jkey] = encode_outcome(p.outcome)
            except Uncacheable:  # a value of a type the cache cannot round-trip: not cached
                pass


def _restored(o: ClaimOutcome, hit: str | None) -> bool:
    """Fill *o* from a cached judgement; False when there is none or it is unreadable (judged again)."""
    if hit is None:
        return False
    try:
        restore_outcome(o, hit)
    except Exception:  # noqa: BLE001 - an unreadable entry is judged again (and replaced)
        return False
    return True


def reproduce(techniques: Sequence[Technique], store: Store, *, executor: str = "local",
              options: ExecOptions | None = None, verified_only: bool = False, rerun: bool = False,
              progress: Any = None, command: str | None = None, resolver: Resolver | None = None,
              context: Any = None) -> Scoreboard:
    """Run the claims of *techniques* and their variant nulls through the runner (stored and
    cached) and judge them (:func:`judge`).

    Parameters
    ----------
    techniques : sequence of Technique
    store : Store
    verified_only : bool
        Only claims whose number was read in the paper (``verified=True``).
    executor, options, rerun, progress, command, context
        As :func:`suite.runner.engine.run_cases`.
    resolver : Resolver, optional
        A resolver of *context* whose caches to reuse (default: a new one); its context is used
        when no *context* is given. One of the two is required (``registry=``, deprecated since
        0.2.0, is gone in 0.3.0: a context carries the registry).

    Returns
    -------
    Scoreboard
        One :class:`ClaimOutcome` per claim, in technique then declaration order.

    Raises
    ------
    KeyboardInterrupt
        The run was interrupted (the finished cases are stored).
    """
    from suite.context import Context
    from suite.runner.case import Resolver
    from suite.runner.engine import run_cases
    from suite.runner.executors import ExecOptions

    if context is None and resolver is not None:
        context = resolver.context
    context = Context.given(context, "reproduce()")
    if resolver is None:
        resolver = Resolver(context=context)
    # resolving builds the workloads (one of 25,000 layers), judging reads every result
    # (141,597 samples for one technique): nearly all acyclic, freed by reference counting, yet each
    # generation-2 collection walked the whole heap: in a fresh --all (isolated, load ~5) resolving
    # 1.40-1.46 -> 1.20-1.27 s CPU, judging 0.69-0.75 -> 0.48-0.49 s (a run's gc.freeze and raised
    # threshold instead, as run_cases does: 1.36-1.60 / 0.49-0.50 s)
    with collector_paused():
        outcomes, pending = _resolve_all(techniques, resolver, verified_only)
    all_cases = _cases_of(pending)
    summary: RunSummary | None = None
    if all_cases:
        # claims derive from stored results, artifacts included: reproduce stores them whole
        summary = run_cases(all_cases, store, executor=executor,
                            options=replace(options or ExecOptions(), artifacts="full"), rerun=rerun, progress=progress,
                            command=command, context=context)
        if summary.interrupted:
            raise KeyboardInterrupt
    with collector_paused():
        notes = _judge_all(pending, store, rerun)
    return Scoreboard(outcomes, summary, notes)


# --------------------------------------------------------------------------- rendering

#: the renderers moved to suite.report.scoreboard; these names stay importable from here
_RENDERERS = ("format_value", "format_nulls", "format_ours", "format_verdict", "counts_line", "render_markdown",
              "table_rows")


def __getattr__(name: str) -> Any:
    if name in _RENDERERS:
        import suite.report.scoreboard as scoreboard

        return getattr(scoreboard, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
