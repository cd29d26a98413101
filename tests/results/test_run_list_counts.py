"""``suite results list`` reads each unfinished run's counts from the cases it stored: one query for
them all (it made one a run, an N+1 over a store of many interrupted runs). The store is built here
by hand, each run's counts counted by hand below."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys

from suite.results import Store


def _ident(key):
    return {"key": key, "technique": "slowtech", "technique_version": "0.1", "variant": "ring", "fidelity": "model",
            "profile": None, "profile_hash": None, "workload": None, "workload_hash": None,
            "params": {"k": key}, "seed": 0, "overrides": {}}


def _out(status):
    return {"status": status, "metrics": [["t", 1.0, "s", "lower"]] if status == "ok" else [], "duration": 0.1,
            **({} if status == "ok" else {"error": "boom"})}


def _store(path):
    """Five runs: done (4 ok); interrupted after 2 computed (1 ok, 1 failed) + 1 cached of 5 planned; live
    (this process) with 1 skipped of 4 planned; killed (its pid gone) with 2 ok of 6 planned; interrupted
    before it stored anything, its plan not known."""
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    with Store(path) as st:
        r1 = st.begin_run("done", plugins={})
        for k in ("a1", "a2", "a3", "a4"):
            st.add_outcome(_ident(k), _out("ok"), r1)
        st.finish_run(r1, "done", {"total": 4, "computed": 4, "ok": 4})
        r2 = st.begin_run("interrupted", plugins={})
        st.add_outcome(_ident("b1"), _out("ok"), r2)
        st.add_outcome(_ident("b2"), _out("failed"), r2)
        st.link_cached(r2, ["a1"])
        st.finish_run(r2, "interrupted", {"total": 5})  # the runner keeps the plan as an interrupted run's total
        r3 = st.begin_run("live", plugins={})
        st.plan_run(r3, 4)
        st.add_outcome(_ident("c1"), _out("skipped"), r3)
        r4 = st.begin_run("killed", plugins={})
        st.plan_run(r4, 6)
        st.add_outcome(_ident("d1"), _out("ok"), r4)
        st.add_outcome(_ident("d2"), _out("ok"), r4)
        st.flush()
        r5 = st.begin_run("nothing", plugins={})
        st.finish_run(r5, "interrupted", {"total": 0})
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE runs SET pid = ? WHERE id = ?", (dead.pid, r4))
    conn.close()
    return path


#: (status, cases, planned, computed, cached, ok, failed, skipped), counted by hand from _store
LISTED = [("done", 4, None, 4, 0, 4, 0, 0), ("interrupted", 3, 5, 2, 1, 2, 1, 0), ("running", 1, 4, 1, 0, 0, 0, 1),
          ("interrupted", 2, 6, 2, 0, 2, 0, 0), ("interrupted", 0, 0, 0, 0, 0, 0, 0)]


def test_results_list_counts_each_unfinished_run_from_what_it_stored(tmp_path, suite_cli):
    path = _store(tmp_path / "s.sqlite")
    res = suite_cli(["results", "list", "--store", str(path), "--format", "json"])
    assert res.exit_code == 0, res.output
    got = [tuple(r[c] for c in ("status", "cases", "planned", "computed", "cached", "ok", "failed", "skipped"))
           for r in json.loads(res.output)]
    assert got == LISTED
    table = suite_cli(["results", "list", "--store", str(path)]).output
    for words in ("3 stored of 5 planned", "1 stored of 4 planned", "2 stored of 6 planned", "0 stored"):
        assert words in table, table
    with Store(path, readonly=True) as st:  # one run's own reading agrees with the list
        assert {k: st.run_info(2)[k] for k in ("status", "total", "planned", "cached", "failed")} == {
            "status": "interrupted", "total": 3, "planned": 5, "cached": 1, "failed": 1}


def test_results_list_counts_every_unfinished_run_in_one_query(tmp_path):
    """Four unfinished runs: one query over run_cases (was four, one a run)."""
    path = _store(tmp_path / "s.sqlite")
    with Store(path, readonly=True) as st:
        seen: list[str] = []
        st.conn.set_trace_callback(seen.append)
        listed = st.runs()
        st.conn.set_trace_callback(None)
    assert len([q for q in seen if "run_cases" in q]) == 1, seen
    assert list(listed["planned"])[1:] == [5, 4, 6, 0]
