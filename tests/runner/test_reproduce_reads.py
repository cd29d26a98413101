"""Judging reads each stored case once per reproduce (``suite.runner.reproduce._StoredOnce``: a
fresh ``--all`` read 745 cases 1,569 times), and each claim gets its own copy: a claim that
writes to the results it was given changes no other claim's value."""

from __future__ import annotations

import importlib
from dataclasses import replace

from suite.technique import Claim, Exact, ScenarioSpec

R = importlib.import_module("suite.runner.reproduce")  # the module (suite.runner.reproduce is the function too)

SPEC = dict(profile="fake-cluster-a", workload="fake-wl")


def _vandal(results):
    """Writes to everything it was given: a metric, the artifacts' list and the artifacts."""
    r = results["b"]
    r.metrics["y"] = replace(r.metrics["y"], value=1e9)
    r.artifacts["trace"].append(99)
    r.artifacts["extra"] = 1
    return 1


def _reader(results):
    r = results["b"]
    return r["y"] + len(r.artifacts["trace"]) + len(r.artifacts)


def _claims():
    one = {"b": ScenarioSpec("base", **SPEC)}
    return [Claim("vandal", "writes to its results", "Sec. 9", False, Exact(1), cases=one, derive=_vandal),
            Claim("reader", "reads them after", "Sec. 9", False, Exact(14.0), cases=one, derive=_reader)]


def test_each_case_is_read_once_and_a_claim_writing_to_its_results_changes_no_other(fake_registry, store, spy):
    from suite.context import Context

    tech = fake_registry.technique("fake")
    tech = replace(tech, claims=[*tech.claims, *_claims()])
    reads = spy(store, "result", lambda key: key)
    board = R.reproduce([tech], store, context=Context.build())
    by = {o.claim: o for o in board.outcomes}
    # the base case is read by ratio-2x, y-abs, derive-bad, vandal and reader: fetched once
    assert reads and sorted(reads) == sorted(set(reads))
    assert by["vandal"].ours == 1 and by["y-abs"].ours == 10.0
    # the base case's y is 10 (y-abs), its artifacts {"trace": [1, 2, 3]}: 10 + 3 + 1 as stored,
    # whatever the vandal (judged first) did to its own copy
    assert by["reader"].ours == 14.0 and by["reader"].verdict != R.ERROR


def test_resolving_and_judging_pause_the_collector_and_put_it_back(fake_registry, store, spy):
    """While claims resolve and are judged the cyclic collector is paused (suite.collector.collector_paused);
    afterwards it is on again, its thresholds and frozen count as before."""
    import gc

    from suite.context import Context

    before = (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled())
    during = spy(R, "judge_unchanged", lambda *a, **k: gc.isenabled())
    resolving = spy(R, "resolve_claim", lambda *a, **k: gc.isenabled())
    R.reproduce([fake_registry.technique("fake")], store, context=Context.build())
    assert during and not any(during)
    assert resolving and not any(resolving)
    assert (gc.get_threshold(), gc.get_freeze_count(), gc.isenabled()) == before


def test_a_handed_result_behaves_as_the_stored_result_to_a_derive():
    """What a claim's derive is given equals the stored Result (both ways round), survives
    dataclasses.replace and copy.copy, and its artifacts are its own."""
    import copy

    from suite.technique import Result

    held = Result().add("y", 10.0, "s", "lower")
    held.artifacts["trace"] = [1, 2, 3]
    handed = R._Handed(held)
    assert handed == held and held == handed
    assert handed != Result().add("y", 11.0, "s", "lower")
    other = replace(handed, metrics={})
    assert other.metrics == {} and other.artifacts == {"trace": [1, 2, 3]} and other != held
    twin = copy.copy(handed)
    assert twin == held and twin["y"] == 10.0
    handed.artifacts["trace"].append(4)
    assert held.artifacts == {"trace": [1, 2, 3]} and handed != held
