"""Conformance check for the communication family: the network levels a scenario's traffic
crosses matter, the others do not (issue 17, item 6).

:func:`check_network_sensitivity` evaluates a scenario once while recording the collectives it
prices (:class:`suite.perf.network.record_levels`: the levels they cross and the calls),
then once per network level and slow-down (``bandwidth / 10``; ``latency x 10``, a zero latency
becoming 1 us; a ``bus`` topology):

* on a level the traffic crosses, the scenario must not get faster (its time metric, and its
  communication time unless the technique adapts its schedule), and when the recorded
  collectives themselves get slower on the slowed profile, the scenario's communication time
  or its time metric must rise: the technique must pass the network model's slow-down on.
  (A level that is not the bottleneck of any of its collectives, e.g. a ring's fast intra-node
  hop next to a slow NIC, may leave every time unchanged: that is the model, not a problem.)
* on a level the traffic does not cross, no metric may change at all.

The communication time is the first of :data:`COMM_METRICS` the result has; the time metric is
``iteration_time`` when present, else the communication time.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable
from typing import Any

from suite.perf.network import Group, record_levels

__all__ = ["COMM_METRICS", "check_network_sensitivity"]

#: metrics read as "the communication time", first found wins
COMM_METRICS = ("comm_time", "allreduce_time", "comm_time_per_iteration", "exposed_comm", "iteration_time")


def _slowdowns(level: Any) -> list[tuple[str, dict[str, str]]]:
    lat = level.latency * 10 if level.latency > 0 else 1e-6
    out = [("bandwidth / 10", {"bandwidth": f"{level.bandwidth / 10!r} B/s"}),
           ("latency x 10", {"latency": f"{lat!r} s"})]
    if level.topology != "bus":
        out.append(("bus topology", {"topology": "bus"}))
    return out


def _metrics(res: Any) -> dict[str, Any]:
    return {k: v for k, v in ((k, res[k]) for k in res.metrics) if isinstance(v, (int, float))}


def _priced(calls: Iterable[tuple[str, float, Group, str]], profile: Any) -> float:
    from suite.perf.network import collective_time

    return sum(collective_time(op, nb, g, profile, algo).time for op, nb, g, algo in calls)


def _equal_copy(profile: Any) -> Any:
    """A new profile object, every nested model new too, with the same content (and content hash)
    as *profile* and no override recorded (an override, even of a field's own value, sets aside the
    published fits of the levels it names: :func:`suite.perf.allreduce_fit`)."""
    return profile.model_copy(deep=True)


def _evaluate_recorded(technique: Any, scenario: Any) -> tuple[Any, Any, Any]:
    """``(scenario, result, recording)``: *technique* evaluated with its collectives recorded. A model
    that memoises its prices per profile object prices nothing the second time: then it is asked
    again on an equal profile that is a new object (same content hash, same numbers), which the
    returned scenario carries."""
    with record_levels() as rec:
        base = technique.evaluate(scenario)
    if not rec:
        scenario = dataclasses.replace(scenario, profile=_equal_copy(scenario.profile))
        with record_levels() as rec:
            base = technique.evaluate(scenario)
    return scenario, base, rec


def _crossed_level_problem(rec: Any, prof: Any, slow: Any, vals: dict[str, Any], got: dict[str, Any],
                           metric: str, judge: str) -> str | None:
    """What is wrong when a level the traffic crosses is slowed (*slow*), or None. A change is a
    slow-down only for the traffic it slows: on a bus a broadcast reaches every member in one
    transmission, so the same calls may price lower there, and the model may fall with them."""
    base_priced = _priced(rec.calls, prof) if rec.calls else 0.0
    slow_priced = _priced(rec.calls, slow) if rec.calls else 0.0
    t0, t1, comm = vals[judge], got.get(judge, math.nan), vals[metric]
    if not t1 >= t0 * (1 - 1e-12) and not slow_priced < base_priced * (1 - 1e-12):
        return f"{judge} fell from {t0:.6g} to {t1:.6g} on a level the traffic crosses"
    rises = got.get(metric, math.nan) > comm or t1 > t0
    if not rises and slow_priced > base_priced * (1 + 1e-12):
        what = f"{metric} ({comm:.6g})" if metric == judge else f"neither {metric} ({comm:.6g}) nor {judge} ({t0:.6g})"
        return (f"the collectives it prices get slower ({base_priced:.6g} -> {slow_priced:.6g} s) but "
                f"{what} {'did not rise' if metric == judge else 'rose'}")
    return None


def check_network_sensitivity(technique: Any, scenario: Any, metric: str | None = None) -> list[str]:
    """Problems found when slowing each network level of *scenario*'s profile (empty: none).

    Parameters
    ----------
    technique : suite.Technique
        Evaluated with ``technique.evaluate(scenario)`` (any fidelity; the model is cheapest).
    scenario : suite.technique.Scenario
        A resolved scenario whose profile has network levels (none: nothing to check, ``[]``).
    metric : str, optional
        The communication-time metric; default the first of :data:`COMM_METRICS` present.

    Returns
    -------
    list of str
        One line per problem, naming the technique, the level (``network.i``), the slow-down
        and the values; also when the technique reports communication time but priced no
        collective through :func:`suite.perf.collective_time`.
    """
    name = getattr(technique, "name", str(technique))
    prof = scenario.profile
    if prof is None or not prof.network:
        return []
    scenario, base, rec = _evaluate_recorded(technique, scenario)
    prof = scenario.profile
    vals = _metrics(base)
    metric = metric or next((m for m in COMM_METRICS if m in vals), None)
    if metric is None:
        return [f"{name}: none of the communication metrics {COMM_METRICS} in the result"]
    judge = "iteration_time" if "iteration_time" in vals else metric
    problems = []
    comm = vals[metric]
    if not rec and comm > 0 and metric != "iteration_time":
        problems.append(f"{name}: {metric} = {comm:.6g} s but no collective was priced through "
                        "suite.perf.collective_time (no network level recorded)")
    for i, level in enumerate(prof.network):
        for label, change in _slowdowns(level):
            over = {f"network.{i}.{k}": v for k, v in change.items()}
            slow = prof.with_overrides(over)
            got = _metrics(technique.evaluate(dataclasses.replace(scenario, profile=slow)))
            where = f"{name}: network.{i} ({level.name}) {label}"
            if i in rec:
                bad = _crossed_level_problem(rec, prof, slow, vals, got, metric, judge)
            else:
                changed = [k for k in vals if k in got and not math.isclose(vals[k], got[k], rel_tol=1e-12, abs_tol=0.0)]
                bad = (f"{changed[0]} changed ({vals[changed[0]]:.6g} -> {got[changed[0]]:.6g}) on a level the "
                       "traffic does not cross") if changed else None
            if bad:
                problems.append(f"{where}: {bad}")
    return problems
