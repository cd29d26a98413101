"""The reproduction scoreboard from what a store already holds (nothing is run).

:func:`suite.runner.reproduce.reproduce` runs the claims' cases (and their variant nulls') and
judges them; a report must only read. :func:`stored_scoreboard` resolves each claim's cases and
its nulls' substituted cases to their keys exactly as ``reproduce`` does (same
:class:`~suite.runner.case.Resolver`, so the same case keys), reads the stored results, and
judges with :func:`suite.runner.reproduce.judge` (the same verdict classes and nulls). Claims
none of whose own cases are stored are left out (counted in ``not_run``).
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
        case (verdicts as :func:`suite.runner.reproduce.judge`: reproduced / not discriminating /
        not reproduced / inconclusive / error, with the nulls), and how many claims had no stored
        case at all.
    """
    from suite.runner.case import Resolver
    from suite.runner.reproduce import ERROR, Scoreboard, _one_line, judge, new_outcome, null_cases

    resolver = resolver or Resolver()
    outcomes = []
    not_run = 0
    for tech in techniques:
        for claim in tech.claims:
            o = new_outcome(tech, claim)
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
            nc = null_cases(tech, claim, resolver)
            nkeys = [c.key for _n, ncases, _r in nc if ncases for c in ncases.values()]
            if nkeys:
                status.update(store.statuses(nkeys))
            outcomes.append(o)
            judge(claim, o, cases, status, store, nc)
    return Scoreboard(outcomes, None), not_run
