"""The CLI: suite run (flags and files), suite results list/show, suite reproduce."""

from __future__ import annotations

import json

from click.testing import CliRunner

from suite.cli import main


def invoke(*args, store=None):
    extra = ["--store", str(store)] if store is not None else []
    return CliRunner().invoke(main, [*args, *extra], catch_exceptions=False)


def test_run_flags_then_nothing_new(fake_registry, tmp_path):
    st = tmp_path / "s.sqlite"
    r = invoke("run", "--technique", "fake", "--variant", "base,fast", "--param", "x=1,2", "--param", "n=3",
               "--set", "network.-1.bandwidth=2 Gbit/s,20 Gbit/s", "-q", store=st)
    assert r.exit_code == 0, r.output
    assert "run 1: 8 case(s), 0 already stored, 8 computed; 8 ok" in r.output
    r = invoke("run", "--technique", "fake", "--variant", "base,fast", "--param", "x=1,2", "--param", "n=3",
               "--set", "network.-1.bandwidth=2 Gbit/s,20 Gbit/s", "-q", "--format", "json", store=st)
    d = json.loads(r.output)
    assert (d["total"], d["computed"], d["cached"], d["status"]) == (8, 0, 8, "done")
    r = invoke("results", "show", "latest", "--format", "json", store=st)
    show = json.loads(r.output)
    assert show["run"]["id"] == 2 and len(show["cases"]) == 8
    assert {c["outcome"] for c in show["cases"]} == {"cached"}
    # y = x * n * factor * Gbit/s
    ys = sorted(c["y"] for c in show["cases"])
    assert ys == sorted(x * 3 * f * g for x in (1, 2) for f in (1, 2) for g in (2, 20))
    r = invoke("results", "list", "--format", "json", store=st)
    runs = json.loads(r.output)
    assert [(x["run"], x["computed"], x["cached"]) for x in runs] == [(1, 8, 0), (2, 0, 8)]


def test_run_failures_exit_nonzero_with_count(fake_registry, tmp_path):
    r = invoke("run", "--technique", "fake", "--variant", "base", "--param", "mode=ok,raise", "-j", "2", "-q",
               store=tmp_path / "s.sqlite")
    assert r.exit_code == 1
    assert "error: 1 case(s) failed" in r.output
    assert "ValueError: boom from the fake plugin" in r.output


def test_run_errors_are_one_line(fake_registry, tmp_path):
    r = CliRunner().invoke(main, ["run", "--technique", "fake", "--param", "nodes=1", "--store",
                                  str(tmp_path / "s.sqlite")])
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        "error: command line: key 'params': fake has no parameter 'nodes'; expected one of ['delay', 'mode', 'n', 'x']"]
    r = CliRunner().invoke(main, ["run", "--technique", "fake", "--param", "x", "--store", str(tmp_path / "s.sqlite")])
    assert r.output.strip() == "error: --param 'x': expected NAME=VALUE[,VALUE...]"
    # an empty item was dropped in silence (a tryout's nodes=1,,2 ran nodes 1 and 2)
    for given, which in (("x=1,,2", 2), ("x=1,2,", 3), ("x=", None)):
        r = CliRunner().invoke(main, ["run", "--technique", "fake", "--param", given, "--store", str(tmp_path / "s.sqlite")])
        assert r.exit_code == 2 and r.output.strip().splitlines() == [
            f"error: --param {given!r}: value {which} of x is empty; expected NAME=VALUE[,VALUE...]" if which else
            f"error: --param {given!r}: expected NAME=VALUE[,VALUE...]"]
    # the same for the name lists (a 0.3.8 tryout: --variant a,,b and --seed 0,,1 dropped the gap)
    for flag, given, which in (("--variant", "base,,fast", 2), ("--seed", "0,", 2), ("--fidelity", ",model", 1)):
        r = CliRunner().invoke(main, ["run", "--technique", "fake", flag, given, "--store", str(tmp_path / "s.sqlite")])
        assert r.exit_code == 2 and r.output.strip().splitlines() == [
            f"error: {flag} {given!r}: value {which} is empty; expected NAME[,NAME...]"]


def test_run_experiment_file_and_show_csv(fake_registry, tmp_path):
    f = tmp_path / "e.toml"
    f.write_text('[a]\ntechnique = "fake"\nvariants = ["base"]\nparams = { x = [1, 2, 3] }\n')
    st = tmp_path / "s.sqlite"
    r = invoke("run", str(f), "-q", store=st)
    assert r.exit_code == 0 and "3 computed" in r.output
    out = tmp_path / "r.csv"
    r = invoke("results", "show", "1", "--format", "csv", "-o", str(out), store=st)
    assert r.exit_code == 0
    import csv

    rows = list(csv.DictReader(out.open()))
    assert sorted(float(r["y [s]"]) for r in rows) == [10.0, 20.0, 30.0]  # metric columns carry their unit
    r = CliRunner().invoke(main, ["results", "show", "9", "--store", str(st)])
    assert r.exit_code == 2 and "no run with id 9" in r.output


def test_dry_run(fake_registry, tmp_path):
    r = invoke("run", "--technique", "fake", "--param", "x=1,2", "--dry-run", "--format", "json")
    assert len(json.loads(r.output)) == 4


def test_reproduce_cli(fake_registry, tmp_path):
    st = tmp_path / "s.sqlite"
    md = tmp_path / "r.md"
    r = invoke("reproduce", "--all", "--format", "markdown", "-o", str(md), store=st)
    assert r.exit_code == 0, r.output
    text = md.read_text()
    assert "| y-abs |" in text and "not reproduced" in text
    r = invoke("reproduce", "fake", "--format", "json", store=st)
    d = json.loads(r.output)
    # ratio-2x declares no null: inside its band, but not evidence (docs/verdicts.md)
    assert d["counts"]["all"] == {"reproduced": 0, "reproduced (no null)": 1, "not discriminating": 0,
                                  "not reproduced": 1, "inconclusive": 0, "claim defect": 0, "error": 2, "total": 4}
    assert all("nulls" in c and "null_reason" in c for c in d["claims"])
    assert d["run"]["computed"] == 1  # only the failing case is retried
    r = invoke("reproduce", "fake", "--strict", "-q", store=st)
    assert r.exit_code == 1 and "2 claim(s) ended in error" in r.output
    assert "fake: verified claims" in r.output
    assert ("all: 4 claim(s): 0 reproduced, 1 reproduced (no null), 0 not discriminating, 1 not reproduced, "
            "0 inconclusive, 0 claim defect, 2 error" in r.output)


def test_the_sweeps_warnings_are_in_the_runs_json(fake_registry, tmp_path):
    """newuser14 finding 5: a warning printed as the sweep expanded (there, a technique left out of a
    --category run) was missing from `--format json`'s "warnings": []."""
    exp = tmp_path / "exp.toml"
    exp.write_text('[a]\ntechnique = "fake"\nvariants = ["base"]\nparams = { x = [1, 2] }\nexclude = [{ x = 3 }]\n')
    r = CliRunner().invoke(main, ["run", str(exp), "-q", "--format", "json", "--store", str(tmp_path / "s.sqlite")],
                           catch_exceptions=False)
    d = json.loads(r.stdout)
    warning = "exclude[0] matched no case of fake (params.x = 3); it removes nothing"
    assert d["total"] == 2 and [w.endswith(warning) for w in d["warnings"]] == [True], d["warnings"]
    assert r.stderr.count(warning) == 1  # printed once, as the sweep expanded
