"""Issue 43, name clashes: a third-party entry point named like a built-in plugin is the one
quarantined (it used to replace the built-in's hooks, so `reproduce kernel-kmeans` lost its
workloads: 10 of 10 claims in error, exit 0), and a claim whose scenario does not resolve makes
`suite reproduce` exit non-zero."""

from __future__ import annotations

import json
from pathlib import Path

from test_trust_plugins import install, run_suite  # noqa: F401  (run_suite: a fixture)

CLASH = '''
def fake(s):
    return Result().add("y", 1.0, "s", "lower")


@hookimpl
def suite_techniques():
    return [technique("clash-extra", fake)]
'''


def _as_entry_point(site: Path, pkg: str, name: str) -> None:
    (site / f"{pkg}-0.1.dist-info" / "entry_points.txt").write_text(f"[suite.plugins]\n{name} = {pkg}\n")


def test_third_party_entry_point_named_like_a_builtin_is_quarantined(tmp_path, run_suite):
    site = install(tmp_path / "site", "clash_kk", CLASH)
    _as_entry_point(site, "clash_kk", "kernel-kmeans")
    r = run_suite(site, "plugins", "--format", "json", store=tmp_path / "s.sqlite")
    assert r.returncode == 0, r.stderr
    rows = [p for p in json.loads(r.stdout) if p["plugin"] == "kernel-kmeans"]
    by_dist = {p["distribution"]: p for p in rows}
    assert by_dist["dlsys-suite"]["status"] == "ok"
    bad = by_dist["clash-kk"]
    assert bad["status"] == "quarantined"
    assert bad["reason"] == ("entry point name 'kernel-kmeans' is already taken by dlsys-suite (plugin "
                             "'kernel-kmeans'); expected a unique plugin name")
    # the built-in keeps its workloads (the clash used to remove them)
    r = run_suite(site, "workloads", "list", "--format", "json", store=tmp_path / "s.sqlite")
    assert r.returncode == 0, r.stderr
    mine = {w["name"] for w in json.loads(r.stdout) if "kernel-kmeans" in (w.get("provider") or "")}
    assert {"higgs", "kdd-sampled", "mnist8m"} <= mine


MISSING = '''
from suite.technique import Approx, Claim, ScenarioSpec


def y(s):
    return Result().add("y", 1.0, "s", "lower")


CLAIM = Claim("needs-wl", "y is 1 on a workload nobody provides", "Table 1", True, Approx(1.0, rel=0.2),
              scenario=ScenarioSpec("base", workload="no-such-workload-43"), metric="y")


@hookimpl
def suite_techniques():
    return [technique("lost-wl", y, claims=[CLAIM], needs_workload=True)]
'''


def test_claim_whose_workload_is_missing_makes_reproduce_exit_non_zero(tmp_path, run_suite):
    site = install(tmp_path / "site", "lost_wl", MISSING)
    r = run_suite(site, "reproduce", "lost-wl", "-q", store=tmp_path / "s.sqlite")
    assert r.returncode == 1, (r.stdout, r.stderr)
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("error: 1 claim(s) do not resolve, e.g. lost-wl/needs-wl: scenario does not resolve: ")
    assert "no-such-workload-43" in last


PATCHER = '''
import numpy
import suite.perf

_real = suite.perf.roofline_time


def _tripled(*a, **k):
    return 3 * _real(*a, **k)


suite.perf.roofline_time = _tripled  # every plugin's compute time x3
numpy.isfinite = lambda x: True      # and a NaN guard that sees no NaN


def y(s):
    return Result().add("y", 1.0, "s", "lower")


@hookimpl
def suite_techniques():
    return [technique("patcher", y)]
'''


def test_plugin_patching_shared_modules_at_import_is_quarantined_and_undone(tmp_path, run_suite):
    """Issue 43: a plugin that monkeypatched a shared module at import time made poseidon's
    speedup x3, stored `ok`. Now it is quarantined and what it rebound is put back."""
    from test_trust_plugins import POSEIDON_COMPUTE_S, stored

    site = install(tmp_path / "site", "evil_patch", PATCHER)
    st = tmp_path / "s.sqlite"
    r = run_suite(site, "plugins", "--format", "json", store=st)
    plugins = {p["plugin"]: p for p in json.loads(r.stdout)}
    assert plugins["evil_patch"]["status"] == "quarantined"
    assert plugins["evil_patch"]["reason"] == ("patched numpy.isfinite, suite.perf.roofline_time while loading "
                                               "(put back); expected a plugin that changes no shared module")
    r = run_suite(site, "run", "--technique", "poseidon", "--variant", "poseidon", "--param", "nodes=16", "-q", store=st)
    assert r.returncode == 0, r.stderr
    (pos,) = stored(st, "poseidon")
    assert abs(pos["metrics"]["compute_time"] - POSEIDON_COMPUTE_S) < 1e-3


def test_in_process_abort_keeps_every_finished_case(tmp_path, run_suite):
    """Issue 43: `--in-process` lost 24 finished but uncommitted cases on an abort. Each outcome is
    now committed as it finishes: the 20 cases before the abort are stored ok."""
    import sqlite3

    from test_trust_plugins import CRASHER

    site = install(tmp_path / "site", "evil_crash", CRASHER)
    exp = tmp_path / "crash.toml"
    exp.write_text('[before]\ntechnique = "evil-crash"\nparams = { mode = "ok", i = ['
                   + ", ".join(str(i) for i in range(1, 21)) + '] }\n'
                   '[abort]\ntechnique = "evil-crash"\nparams = { mode = "abort", i = 99 }\n')
    st = tmp_path / "s.sqlite"
    r = run_suite(site, "run", str(exp), "--in-process", "-q", store=st)
    assert r.returncode != 0  # the abort took the process down: what --in-process does not contain
    conn = sqlite3.connect(f"file:{st}?mode=ro", uri=True)
    try:
        n = conn.execute("SELECT count(*) FROM cases WHERE status = 'ok'").fetchone()[0]
    finally:
        conn.close()
    assert n == 20
