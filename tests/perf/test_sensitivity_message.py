"""The kit's network-sensitivity failure names a metric once when the judged metric is the
communication metric itself (it read "neither comm_time (0.0258906) nor comm_time (0.0258906) rose"
for a plugin that looked its profile up by name; found by trying the product as a plugin author)."""

from __future__ import annotations

from types import SimpleNamespace

from suite.api import group_of
from suite.perf.sensitivity import _crossed_level_problem
from session_context import session_context


def _problem(metric: str, judge: str) -> str | None:
    prof = session_context().profile("titanx-cluster-10gbe")
    slow = prof.with_overrides({"network.0.bandwidth": prof.network[0].bandwidth / 2})
    rec = SimpleNamespace(calls=[("allreduce", 64e6, group_of(prof, 4), "ring")])
    same = {"comm_time": 0.0258906, "iteration_time": 1.5}  # the model's numbers did not move
    return _crossed_level_problem(rec, prof, slow, dict(same), dict(same), metric, judge)


def test_one_metric_judged_is_named_once():
    msg = _problem("comm_time", "comm_time")
    assert msg is not None and msg.endswith("but comm_time (0.0258906) did not rise"), msg
    assert msg.count("comm_time") == 1


def test_two_metrics_are_both_named():
    msg = _problem("comm_time", "iteration_time")
    assert msg is not None and msg.endswith("but neither comm_time (0.0258906) nor iteration_time (1.5) rose"), msg
