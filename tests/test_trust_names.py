"""Issue 43, name clashes: a third-party entry point named like a built-in plugin is the one
quarantined (it used to replace the built-in's hooks, so `reproduce kernel-kmeans` lost its
workloads: 10 of 10 claims in error, exit 0), and a claim whose scenario does not resolve makes
`suite reproduce` exit non-zero."""

from __future__ import annotations

import json
from pathlib import Path

from test_trust_plugins import install, suite

CLASH = '''
def fake(s):
    return Result().add("y", 1.0, "s", "lower")


@hookimpl
def suite_techniques():
    return [technique("clash-extra", fake)]
'''


def _as_entry_point(site: Path, pkg: str, name: str) -> None:
    (site / f"{pkg}-0.1.dist-info" / "entry_points.txt").write_text(f"[suite.plugins]\n{name} = {pkg}\n")


def test_third_party_entry_point_named_like_a_builtin_is_quarantined(tmp_path):
    site = install(tmp_path / "site", "clash_kk", CLASH)
    _as_entry_point(site, "clash_kk", "kernel-kmeans")
    r = suite(site, "plugins", "--format", "json", store=tmp_path / "s.sqlite")
    assert r.returncode == 0, r.stderr
    rows = [p for p in json.loads(r.stdout) if p["plugin"] == "kernel-kmeans"]
    by_dist = {p["distribution"]: p for p in rows}
    assert by_dist["dlsys-suite"]["status"] == "ok"
    bad = by_dist["clash-kk"]
    assert bad["status"] == "quarantined"
    assert bad["reason"] == ("entry point name 'kernel-kmeans' is already taken by dlsys-suite (plugin "
                             "'kernel-kmeans'); expected a unique plugin name")
    # the built-in keeps its workloads (the clash used to remove them)
    r = suite(site, "workloads", "list", "--format", "json", store=tmp_path / "s.sqlite")
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


def test_claim_whose_workload_is_missing_makes_reproduce_exit_non_zero(tmp_path):
    site = install(tmp_path / "site", "lost_wl", MISSING)
    r = suite(site, "reproduce", "lost-wl", "-q", store=tmp_path / "s.sqlite")
    assert r.returncode == 1, (r.stdout, r.stderr)
    last = r.stderr.strip().splitlines()[-1]
    assert last.startswith("error: 1 claim(s) do not resolve, e.g. lost-wl/needs-wl: scenario does not resolve: ")
    assert "no-such-workload-43" in last
