"""The reproduction scoreboard from what a store already holds (nothing is run).

:func:`suite.runner.reproduce.reproduce` runs the claims' cases and judges them; a report must
only read. :func:`stored_scoreboard` resolves each claim's cases to their keys exactly as
``reproduce`` does (same :class:`~suite.runner.case.Resolver`, so the same case keys), reads the
stored results, and applies the claim's acceptance. Claims none of whose cases are stored are
left out (counted in ``not_run``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["stored_scoreboard"]


def stored_scoreboard(techniques: Sequence[Any], store, resolver=None) -> tuple[Any, int]:
    """Judge the claims of *techniques* on the cases stored in *store*.

    Parameters
    ----------
    techniques : sequence of Technique
    store : suite.results.Store
    resolver : suite.runner.case.Resolver, optional

    Returns
    -------
    (Scoreboard, int)
        The :class:`suite.runner.reproduce.Scoreboard` of every claim with at least one stored
        case (verdicts: reproduced / not reproduced / error with the reason), and how many claims
        had no stored case at all.
    """
    from suite.runner.case import Resolver
    from suite.runner.reproduce import ERROR, ClaimOutcome, Scoreboard, judge

    resolver = resolver or Resolver()
    outcomes: list[ClaimOutcome] = []
    not_run = 0
    for tech in techniques:
        for claim in tech.claims:
            o = ClaimOutcome(technique=tech.name, claim=claim.id, statement=claim.statement, source=claim.source,
                             verified=claim.verified, paper=_safe(claim.expect.describe), note=claim.note)
            try:
                cases = {label: resolver.resolve(tech, spec) for label, spec in claim.specs().items()}
            except Exception as exc:  # noqa: BLE001 - a claim that does not resolve is an error row
                o.reason = f"scenario does not resolve: {_one_line(exc)}"
                o.verdict = ERROR
                outcomes.append(o)
                continue
            o.cases = {label: c.key for label, c in cases.items()}
            status = store.statuses(c.key for c in cases.values())
            if not status:
                not_run += 1
                continue
            outcomes.append(o)
            judge(claim, o, cases, status, store)
    return Scoreboard(outcomes, None), not_run


def _one_line(exc: BaseException) -> str:
    from suite.errors import SuiteError

    msg = str(exc).strip().splitlines()
    if not msg:
        return type(exc).__name__
    return msg[0] if isinstance(exc, SuiteError) else f"{type(exc).__name__}: {msg[0]}"


def _safe(f) -> str:
    try:
        return str(f())
    except Exception as exc:  # noqa: BLE001 - a description that fails is shown as its error type
        return f"<{type(exc).__name__}>"
