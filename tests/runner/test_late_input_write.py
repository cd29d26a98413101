"""A thread a case leaves running that writes an input later fails the case it writes during, as
any change to an input does, and that case's error names the thread and the case that left it
(before, the error blamed the later case alone: "the case changed its input", which it had not).

The technique ``late``: ``how="start"`` starts a thread that waits until the next case begins,
writes the profile's bandwidth and ends; ``how="wait"`` lets it write and waits for the write;
``how="plain"`` reads its profile. Returned ``y = x * bandwidth in Gbit/s`` (10 on fake-cluster-a).
"""

from __future__ import annotations

import json
import threading
import types
from pathlib import Path

import pytest

from suite import hookimpl
from suite.context import Context
from suite.runner import ExecOptions, expand_entry, run_cases
from suite.technique import Paper, Param, Result, Technique, Variant

HERE = Path(__file__).resolve().parent
GO, WRITTEN = threading.Event(), threading.Event()


def _write_later(profile) -> None:
    GO.wait(10)
    vars(profile.network[-1])["bandwidth"] = 1.0  # past the freeze, as a hostile thread would
    WRITTEN.set()


def _evaluate(scenario) -> Result:
    p, how, x = scenario.profile, scenario.params["how"], scenario.params["x"]
    if how == "start":
        threading.Thread(target=_write_later, args=(p,), name="late-writer", daemon=True).start()
    elif how == "wait":
        GO.set()
        WRITTEN.wait(10)
    return Result().add("y", x * p.network[-1].bandwidth * 8 / 1e9, "s", "lower")


LATE = Technique(
    name="late", title="leaves a thread that writes its profile later", category="communication",
    paper=Paper(title="L", year=2026), variants=[Variant("base", "the only variant", baseline=True)],
    fidelities={"model": _evaluate},
    parameters={"x": Param(int, 1, minimum=0), "how": Param(str, "plain", choices=("start", "wait", "plain"))},
    needs_workload=False, default_profile="fake-cluster-a", profile_kinds=("cluster",),
)


@pytest.fixture
def ctx(monkeypatch):
    from suite.registry import Registry

    mod = types.ModuleType("late_plugin")
    mod.suite_techniques = hookimpl(lambda: [LATE])
    monkeypatch.setenv("SUITE_PROFILES", str(HERE / "profiles"))
    GO.clear()
    WRITTEN.clear()
    return Context.build(registry=Registry(entry_points_=[], modules=[("late", mod)]))


@pytest.mark.parametrize("isolate", [True, False], ids=["worker", "in-process"])
def test_a_late_write_names_the_thread_and_the_case_that_left_it(ctx, tmp_path, isolate):
    from suite.results import Store

    cases = []
    for x, how in ((1, "start"), (2, "wait"), (3, "plain")):
        cases += expand_entry({"technique": "late", "params": {"x": [x], "how": [how]}}, context=ctx).cases
    with Store(tmp_path / "s.sqlite") as st:
        s = run_cases(cases, st, options=ExecOptions(isolate=isolate), context=ctx)
        rows = st.conn.execute("SELECT c.params, r.status, r.error, r.metrics FROM results r "
                               "JOIN cases c ON c.key = r.case_key WHERE r.run_id = ?", (s.run_id,)).fetchall()
    got = {json.loads(p)["how"]: (status, error, metrics) for p, status, error, metrics in rows}
    assert got["start"][0] == "ok" and json.loads(got["start"][2])[0][1] == pytest.approx(10.0)
    assert got["wait"][:2] == ("failed", "InputMutated: late: the case changed its input profile.network[0].bandwidth "
                               "(inputs are read-only; copy them to change them); put back for the next case (a "
                               f"thread an earlier case left running may have written it: 'late-writer', left "
                               f"running by case {cases[0].key})")
    # put back: the next case reads 10 Gbit/s again, and names no thread (it has ended)
    assert got["plain"][:2] == ("ok", None) and json.loads(got["plain"][2])[0][1] == pytest.approx(30.0)


def test_a_thread_started_as_another_ends_is_still_noted():
    """A second reader: case A's thread ended and case B left a timer in the same case, so the
    thread count did not move and B's thread was never noted."""
    from suite.runner.evaluate import LeftThreads

    left = LeftThreads()
    left.before()
    stop_a, stop_b = threading.Event(), threading.Event()
    a = threading.Thread(target=stop_a.wait, name="a-thread", daemon=True)
    a.start()
    left.after("case-a")
    stop_a.set()
    a.join()
    b = threading.Thread(target=stop_b.wait, name="b-thread", daemon=True)
    b.start()  # one ended, one started: the same count as after case A
    left.after("case-b")
    try:
        assert left.suspects() == (" (a thread an earlier case left running may have written it: 'b-thread', "
                                   "left running by case case-b)")
    finally:
        stop_b.set()
        b.join()
