"""Runs that mix cases with and without a workload: the cases without one hold NaN in the loaded
frame, and NaN != NaN made ``suite compare`` print "workload nan: content hash nan in run 1, nan in
run 2 (its definition changed)" for them (found by trying the product as a new user)."""

from __future__ import annotations

from suite.results import Store
from suite.results.compare import compare_runs
from session_context import session_context


def _add(store, run, key, workload):
    ident = {"key": key, "technique": "toy", "technique_version": "1.0", "variant": "v", "fidelity": "model",
             "profile": None, "profile_hash": None, "workload": workload,
             "workload_hash": "c0ffee" if workload else None, "params": {"wl": bool(workload)}, "seed": 0,
             "overrides": {}}
    store.add_outcome(ident, {"status": "ok", "metrics": [["t", 1.0, "s", "lower"]], "duration": 0.1}, run)


def test_cases_without_a_workload_beside_cases_with_one_are_no_workload_change(tmp_path):
    path = tmp_path / "mixed.sqlite"
    with Store(path) as st:
        runs = []
        for name in ("a", "b"):
            r = st.begin_run(name, plugins={})
            _add(st, r, f"{name}-with", "vgg19-22k")
            _add(st, r, f"{name}-without", None)
            st.finish_run(r, "done", {"total": 2, "ok": 2})
            runs.append(r)
    cmp = compare_runs(path, *runs, context=session_context())
    assert cmp.matched == 2 and cmp.notes == [] and cmp.mismatches == []
    assert [r.verdict for r in cmp.rows] == ["same", "same"]
