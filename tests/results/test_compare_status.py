"""suite compare pairs a scenario whatever its cases' statuses (the ops14 tryout: a run whose cases
timed out or raised passed `--threshold 5%` with exit 0, its failed scenarios listed as "only in
run 1" under a label without the one value that told them apart, and a run whose every case failed
was "no scenario in common"). Each store is built here by hand: 4 scenarios, workers 1, 2 x sleep
0, 1.2, of one technique."""

from __future__ import annotations

import json

import pytest

from suite.results import Store
from suite.results.compare import CompareError, compare_runs
from session_context import session_context

TIMEOUT = "case exceeded --timeout 1 s"
GRID = [(1, 0), (2, 0), (1, 1.2), (2, 1.2)]  # (workers, sleep)


def _ident(key, workers, sleep, variant="ring"):
    return {"key": key, "technique": "slowtech", "technique_version": "0.1", "variant": variant, "fidelity": "model",
            "profile": None, "profile_hash": None, "workload": None, "workload_hash": None,
            "params": {"workers": workers, "sleep": sleep}, "seed": 0, "overrides": {}}


def _ok(t):
    return {"status": "ok", "metrics": [["t", t, "s", "lower"], ["bytes", 8.0, "B", "none"]], "duration": 0.1}


def _not_ok(status, error):
    return {"status": status, "error": error, "duration": 1.0}


def _runs(path, *runs, variant_b="ring"):
    """One run per (label, {(workers, sleep): outcome}, status[, planned]); their ids. An interrupted
    run's row keeps its plan as its total (as the runner closes one); ``running``: left open, its
    plan stored (this process is alive: it reads as still running)."""
    ids = []
    with Store(path) as st:
        for i, (label, outcomes, status, *planned) in enumerate(runs):
            r = st.begin_run(label, plugins={})
            st.name_run(r, label)
            for (w, s), out in outcomes.items():
                st.add_outcome(_ident(f"{label}-{w}-{s}", w, s, variant_b if i else "ring"), out, r)
            total = planned[0] if planned else len(outcomes)
            if status == "running":
                st.plan_run(r, total)
                st.flush()
            else:
                st.finish_run(r, status, {"total": total})
            ids.append(r)
    return ids


def _cmp(path, a, b, **kw):
    return compare_runs(path, a, b, context=session_context(), **kw)


def test_cases_that_timed_out_in_b_are_paired_and_fail_the_gate(tmp_path, suite_cli):
    """good: 4 ok; bad: the two sleep=1.2 cases timed out. Before: 2 scenarios matched, "only in run 1:
    2 scenario(s), e.g. workers=1", exit 0 under --threshold 5%."""
    path = tmp_path / "s.sqlite"
    a, b = _runs(path, ("good", {g: _ok(1.0 + g[0]) for g in GRID}, "done"),
                 ("bad", {g: _ok(1.0 + g[0]) if g[1] == 0 else _not_ok("timeout", TIMEOUT) for g in GRID}, "failed"))
    loose = _cmp(path, a, b)
    assert loose.matched == 4 and loose.only_a == [] and loose.only_b == [] and loose.unpaired == 0
    assert [(s.scenario, s.status_a, s.status_b, s.error_b, s.verdict) for s in loose.status_rows] == [
        ("sleep=1.2 workers=1", "ok", "timeout", TIMEOUT, "not ok in B"),
        ("sleep=1.2 workers=2", "ok", "timeout", TIMEOUT, "not ok in B")]
    assert len(loose.rows) == 4 and {r.verdict for r in loose.rows} == {"same"}  # the 2 ok pairs, 2 metrics each
    assert loose.exit_code == 0 and loose.failures() == []  # no threshold: report only
    for gate in ({"threshold": "5%"}, {"thresholds": {"t": "5%"}}, {"strict": True}):
        cmp = _cmp(path, a, b, **gate)
        assert cmp.exit_code == 1 and len(cmp.failures()) == 2 and cmp.regressions() == [], gate
        assert cmp.as_dict()["exit_code"] == 1 and cmp.as_dict()["counts"]["failures"] == 2
    assert cmp.status_rows[0].label(a, b) == f"timeout in run 2: {TIMEOUT}, a regression"
    res = suite_cli(["compare", "good", "bad", "--store", str(path), "--threshold", "5%"])
    assert res.exit_code == 1, res.output
    assert "only in run" not in res.output
    assert "4 scenario(s), 4 metric value(s): 4 same, 2 not ok in run 2 (2 timeout)" in res.output
    assert (f"error: 2 scenario(s) ok in run 1 are not ok in run 2 (2 timeout): slowtech/ring sleep=1.2 workers=1 "
            f"timeout ({TIMEOUT}), slowtech/ring sleep=1.2 workers=2 timeout ({TIMEOUT})") in res.output
    doc = json.loads(suite_cli(["compare", "1", "2", "--store", str(path), "--format", "json"]).output)
    assert [r["status_b"] for r in doc["status_rows"]] == ["timeout", "timeout"] and doc["exit_code"] == 0


def test_a_run_whose_every_case_failed_is_compared_not_nothing_in_common(tmp_path, suite_cli):
    """Before: exit 2, "no scenario in common ... apart on fidelity: run 1 model, run 2 (none)"."""
    path = tmp_path / "all.sqlite"
    a, b = _runs(path, ("good", {g: _ok(2.0) for g in GRID}, "done"),
                 ("bad", {g: _not_ok("failed", "RuntimeError: every third case raises") for g in GRID}, "failed"))
    cmp = _cmp(path, a, b, threshold="5%")
    assert cmp.matched == 4 and cmp.rows == [] and cmp.unpaired == 0
    assert [s.status_b for s in cmp.status_rows] == ["failed"] * 4 and cmp.exit_code == 1
    assert _cmp(path, a, b).exit_code == 0
    res = suite_cli(["compare", "1", "2", "--store", str(path), "--threshold", "5%"])
    assert res.exit_code == 1, res.output
    assert "run 2: none of the 4 scenario(s) paired is ok (4 failed): no metric to compare" in res.output
    assert "no scenario in common" not in res.output


def test_nothing_in_common_counts_the_cases_that_are_not_ok(tmp_path):
    """Runs of other variants whose B cases all timed out: still nothing in common, the message counting
    B's cases by status and naming the variant apart (was "run 2 (0)", "fidelity: run 2 (none)")."""
    path = tmp_path / "apart.sqlite"
    a, b = _runs(path, ("a", {(1, 0): _ok(1.0), (2, 0): _ok(2.0)}, "done"),
                 ("b", {(1, 0): _not_ok("timeout", TIMEOUT), (2, 0): _not_ok("timeout", TIMEOUT)}, "failed"),
                 variant_b="tree")
    with pytest.raises(CompareError, match=r"^compare: run 1 \(2 ok case\(s\)\) and run 2 \(0 ok case\(s\), 2 not ok "
                                           r"\(2 timeout\)\) have no scenario in common .*; apart on variant: run 1 "
                                           r"ring, run 2 tree$"):
        _cmp(path, a, b)


def test_failed_in_a_or_in_both_is_shown_and_never_a_regression(tmp_path, suite_cli):
    """A: ok, failed, failed, skipped; B: ok, ok, crashed, skipped. Under 0% and --strict, exit 0:
    only a scenario ok in A and not ok in B fails the gate. Skipped in both is hidden without --all."""
    path = tmp_path / "both.sqlite"
    boom = "ValueError: boom\nTraceback (most recent call last): ..."  # stored errors show their first line
    a, b = _runs(path, ("a", {(1, 0): _ok(1.0), (2, 0): _not_ok("failed", boom), (1, 1.2): _not_ok("failed", boom),
                              (2, 1.2): _not_ok("skipped", "not applicable")}, "failed"),
                 ("b", {(1, 0): _ok(1.0), (2, 0): _ok(3.0), (1, 1.2): _not_ok("crashed", "worker died"),
                        (2, 1.2): _not_ok("skipped", "not applicable")}, "failed"))
    cmp = _cmp(path, a, b, threshold="0%", strict=True)
    assert cmp.exit_code == 0 and cmp.matched == 4 and cmp.failures() == []
    assert [(s.scenario, s.verdict, s.error_a) for s in cmp.status_rows] == [
        ("sleep=0 workers=2", "not ok in A", "ValueError: boom"),
        ("sleep=1.2 workers=1", "not ok in both", "ValueError: boom"),
        ("sleep=1.2 workers=2", "not ok in both", "not applicable")]
    assert [s.label(a, b) for s in cmp.status_rows] == [
        "failed in run 1: ValueError: boom; ok in run 2",
        "failed in run 1: ValueError: boom; crashed in run 2: worker died",
        "skipped in both runs: not applicable"]
    out = suite_cli(["compare", "1", "2", "--store", str(path), "--threshold", "0%"]).output
    assert "crashed in run 2: worker died" in out and "skipped in both runs" not in out
    assert ("4 scenario(s), 2 metric value(s): 2 same, 1 not ok in run 1 (1 failed), 2 not ok in both runs "
            "(1 failed/crashed, 1 skipped) (3 unchanged hidden; --all shows them)") in out
    assert "skipped in both runs: not applicable" in suite_cli(["compare", "1", "2", "--store", str(path), "--all"]).output


def test_unpaired_label_names_every_value_apart_and_the_header_each_run_status(tmp_path, suite_cli):
    """An interrupted B that holds the sleep=0 cases only (2 stored of 4 planned): A's sleep=1.2 scenarios
    are unpaired, labelled with sleep (was "workers=1" alone: the common scenarios all have sleep 0), and
    the header says which run was interrupted and how far it got. Without a gate: exit 0."""
    path = tmp_path / "int.sqlite"
    a, b = _runs(path, ("a", {g: _ok(1.0) for g in GRID}, "done"),
                 ("b", {g: _ok(1.0) for g in GRID if g[1] == 0}, "interrupted", 4))
    cmp = _cmp(path, a, b)
    assert cmp.only_a == ["sleep=1.2 workers=1 [slowtech/ring]", "sleep=1.2 workers=2 [slowtech/ring]"]
    assert cmp.exit_code == 0 and cmp.as_dict()["unfinished"] == [
        {"run": b, "status": "interrupted", "stored": 2, "planned": 4, "unpaired": 2}]
    res = suite_cli(["compare", "1", "2", "--store", str(path)])
    assert res.exit_code == 0, res.output
    lines = res.output.splitlines()
    assert lines[0].startswith("A = run 1 (done, started ") and lines[1].startswith("B = run 2 (interrupted, started ")
    assert lines[2] == ("warning: run 2 is interrupted (2 stored of 4 planned): the scenarios it did not reach are "
                        "counted 'only in run 1', and --threshold or --strict fails the gate on it")
    assert "only in run 1: 2 scenario(s), e.g. sleep=1.2 workers=1 [slowtech/ring]" in res.output
    assert "error:" not in res.output


UNREACHED = ("no partner in it; a gate does not pass an unfinished run (finish or resume it)")


@pytest.mark.parametrize("gate", [["--threshold", "5%"], ["--threshold", "t=5%"], ["--strict"]])
def test_a_gate_fails_on_an_interrupted_run_that_did_not_reach_scenarios(tmp_path, suite_cli, gate):
    """B interrupted after 2 of its 4 planned cases, every value the same: before, `--threshold 5%` exited
    0 (the 2 scenarios B never reached were only "in run 1"; only --strict failed them). Now any gate
    exits 1 with one line naming the run, its state and how far it got."""
    path = tmp_path / "int.sqlite"
    a, b = _runs(path, ("a", {g: _ok(1.0) for g in GRID}, "done"),
                 ("b", {g: _ok(1.0) for g in GRID if g[1] == 0}, "interrupted", 4))
    res = suite_cli(["compare", "a", "b", "--store", str(path), *gate])
    assert res.exit_code == 1, res.output
    assert f"error: run 2 is interrupted (2 stored of 4 planned): 2 scenario(s) of run 1 have {UNREACHED}" \
        in res.output.splitlines()
    assert "2 scenario(s), 4 metric value(s): 4 same (4 unchanged hidden; --all shows them)" in res.output
    doc = json.loads(suite_cli(["compare", "a", "b", "--store", str(path), "--format", "json", *gate]).stdout)
    assert doc["exit_code"] == 1 and doc["unfinished"][0]["planned"] == 4


def test_a_gate_fails_on_an_unfinished_baseline_and_on_a_run_stopped_on_an_error(tmp_path, suite_cli):
    """A still running (2 of 4 planned stored: this process is its live owner) against a finished B, and
    a finished A against a B stopped on an error of the suite after 1 case (its plan not kept): the
    scenarios the unfinished run lacks fail the gate, either side."""
    path = tmp_path / "live.sqlite"
    a, b, c = _runs(path, ("a", {g: _ok(1.0) for g in GRID if g[1] == 0}, "running", 4),
                    ("b", {g: _ok(1.0) for g in GRID}, "done"),
                    ("c", {(1, 0): _ok(1.0)}, "error"))
    assert _cmp(path, a, b).exit_code == 0 and _cmp(path, a, b, threshold="5%").exit_code == 1
    res = suite_cli(["compare", "a", "b", "--store", str(path), "--threshold", "5%"])
    assert res.exit_code == 1, res.output
    assert f"error: run 1 is running (2 stored of 4 planned): 2 scenario(s) of run 2 have {UNREACHED}" in res.output
    res = suite_cli(["compare", "b", "c", "--store", str(path), "--threshold", "5%"])
    assert res.exit_code == 1, res.output
    assert f"error: run 3 stopped on an error (1 stored): 3 scenario(s) of run 2 have {UNREACHED}" in res.output


def test_an_interrupted_run_passes_when_it_stored_its_plan_and_fails_short_of_it_paired_or_not(tmp_path, suite_cli):
    """Interrupted after storing all 4 it planned (the Ctrl-C came as it closed), against a done run of
    4: it passes the gate (exit 0). Interrupted after 2 of 4, against a done run of just those 2:
    nothing unpaired, yet short of its plan: it fails the gate (was exit 0: only scenarios an
    unfinished run left unpaired failed it)."""
    path = tmp_path / "late.sqlite"
    half = {g: _ok(1.0) for g in GRID if g[1] == 0}
    full, late, short, small = _runs(path, ("full", {g: _ok(1.0) for g in GRID}, "done"),
                                     ("late", {g: _ok(1.0) for g in GRID}, "interrupted", 4),
                                     ("short", half, "interrupted", 4), ("small", half, "done"))
    assert _cmp(path, full, late, threshold="5%").exit_code == 0
    assert _cmp(path, full, late, threshold="5%").unfinished() == []
    res = suite_cli(["compare", "full", "late", "--store", str(path), "--strict"])
    assert res.exit_code == 0, res.output
    assert res.output.splitlines()[2] == ("warning: run 2 is interrupted (4 stored of 4 planned): it stored every "
                                          "case it planned (a gate judges it as finished)")
    cmp = _cmp(path, small, short, threshold="5%")
    assert (cmp.exit_code, cmp.unpaired, [(i["id"], n) for i, n in cmp.unfinished()]) == (1, 0, [(short, 0)])
    assert _cmp(path, small, short).exit_code == 0  # no gate: report only
    assert _cmp(path, short, full, threshold="5%").exit_code == 1  # A short: B's 2 sleep=1.2 unpaired
    res = suite_cli(["compare", "small", "short", "--store", str(path), "--threshold", "5%"])
    assert res.exit_code == 1, res.output
    assert ("error: run 3 is interrupted (2 stored of 4 planned); a gate does not pass an unfinished run "
            "(finish or resume it)") in res.output.splitlines()


@pytest.mark.parametrize("gate", [["--threshold", "5%"], ["--strict"]])
def test_two_half_finished_runs_in_two_stores_fail_every_gate(tmp_path, suite_cli, gate):
    """Two stores, each with a run interrupted after 1 of its 4 planned cases (the same scenario): every
    scenario is paired, the values the same. Before: `--strict` and `--threshold 5%` exited 0 (a gate
    passed on a quarter of each run). Now exit 1, one line per run; without a gate exit 0."""
    one = {(1, 0): _ok(1.0)}
    _runs(tmp_path / "a.sqlite", ("a", one, "interrupted", 4))
    _runs(tmp_path / "b.sqlite", ("b", one, "interrupted", 4))
    args = ["compare", "1", "1", "--store", str(tmp_path / "a.sqlite"), "--store-b", str(tmp_path / "b.sqlite")]
    res = suite_cli([*args, *gate])
    assert res.exit_code == 1, res.output
    assert [line for line in res.output.splitlines() if line.startswith("error:")] == [
        "error: run 1 is interrupted (1 stored of 4 planned); a gate does not pass an unfinished run (finish or "
        "resume it)"] * 2
    doc = json.loads(suite_cli([*args, "--format", "json", *gate]).stdout)
    assert (doc["exit_code"], doc["unpaired"]) == (1, 0)
    assert doc["unfinished"] == [{"run": 1, "status": "interrupted", "stored": 1, "planned": 4, "unpaired": 0}] * 2
    assert suite_cli(args).exit_code == 0


class _StopsAfter:
    """The in-process executor, stopped by an error of the suite after *n* outcomes (as a lost
    cluster or a broken executor plugin stops a run: the run is closed with status ``error``)."""

    name = "stops"

    def __init__(self, n):
        self.n = n

    def map_cases(self, cases, options):
        from suite.errors import SuiteError
        from suite.runner import ExecOptions
        from suite.runner.pool import LocalExecutor

        for i, out in enumerate(LocalExecutor().map_cases(cases, ExecOptions(jobs=1))):
            if i == self.n:
                raise SuiteError("executor 'stops': lost its workers")
            yield out


def test_a_run_stopped_on_an_error_reads_what_it_stored_and_fails_the_gate(tmp_path, suite_cli):
    """4 palsgd model cases done, then the same sweep recomputed by an executor that raises after 2
    outcomes. Before: the error run's row counted the cases handed out, and the gate line read
    `error: run 2 is error (4 stored): ...` where 2 were stored. Now 2 stored, in words."""
    from suite.errors import SuiteError
    from suite.runner import expand_entry, run_cases

    ctx = session_context()
    cases = expand_entry({"technique": "palsgd", "variants": ["s-sgd"], "fidelity": "model",
                          "params": {"workers": [2, 4, 8, 16]}}, context=ctx).cases
    path = tmp_path / "err.sqlite"
    with Store(path) as st:
        assert run_cases(cases, st, context=ctx).status == "done"
        with pytest.raises(SuiteError, match="lost its workers"):
            run_cases(cases, st, executor=_StopsAfter(2), context=ctx, rerun=True)
        info = st.run_info(2)
    assert (info["status"], info["total"], info["ok"], info["planned"]) == ("error", 2, 2, 0)
    res = suite_cli(["compare", "1", "2", "--store", str(path), "--threshold", "5%"])
    assert res.exit_code == 1, res.output
    assert (f"error: run 2 stopped on an error (2 stored): 2 scenario(s) of run 1 have {UNREACHED}"
            in res.output.splitlines())
    listed = json.loads(suite_cli(["results", "list", "--store", str(path), "--format", "json"]).stdout)
    assert [(r["status"], r["cases"], r["planned"]) for r in listed] == [("done", 4, None), ("error", 2, 0)]
