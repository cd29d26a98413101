"""Issue 20 on the command line: runs named with --name, latest~N, units in every machine-readable
output, headline metrics first, numeric sorting, profile differences in the profile's own
spelling, and the category sweep. Real poseidon / mg-wfbp cases (model fidelity, milliseconds)."""

from __future__ import annotations

import csv
import io
import json
import shlex
import sys

import pytest


@pytest.fixture(scope="module")
def cli(suite_cli):
    """``cli(*args, store=path)``: a ``suite`` command on *path*, with the session's one context (these
    tests read runs, units and names; none tests plugin loading)."""
    def run(*args, store):
        return suite_cli(*args, "--store", store)

    return run


@pytest.fixture
def in_command(shared_context):
    """A context manager: the code inside runs as inside a ``suite`` command (a click context whose
    object holds the command's one suite context), as these CLI helpers do in use."""
    import click

    from suite.cli import main

    return lambda: click.Context(main, obj={"context": shared_context})


# poseidon on its default cluster profile (titanx-cluster-10gbe: "10 Gbit/s" Ethernet)
SWEEP = ("run", "--technique", "poseidon", "--param", "nodes=2,16", "--set",
         "network.-1.bandwidth=5 Gbit/s,40 Gbit/s,10 Gbit/s", "-q")


@pytest.fixture(scope="module")
def store(tmp_path_factory, cli):
    st = tmp_path_factory.mktemp("tour") / "s.sqlite"
    assert cli(*SWEEP, "--name", "first", store=st).exit_code == 0
    r = cli("run", "--technique", "poseidon", "--param", "nodes=2,16", "--set", "network.-1.bandwidth=40 Gbit/s",
            "--name", "fast-net", "-q", store=st)
    assert r.exit_code == 0, r.output
    r = cli("run", "--technique", "poseidon", "--param", "nodes=2,16", "-q", store=st)  # run 3, unnamed
    assert r.exit_code == 0, r.output
    return st


def test_names_latest_and_latest_tilde(store, cli):
    r = cli("results", "show", "first", "--format", "json", store=store)
    assert r.exit_code == 0, r.output
    d = json.loads(r.output)
    assert d["run"]["id"] == 1 and d["run"]["name"] == "first" and len(d["cases"]) == 4 * 2 * 3
    ids = {}
    for ref in ("latest", "latest~1", "latest~2", "fast-net", "3"):
        r = cli("results", "show", ref, "--format", "json", store=store)
        assert r.exit_code == 0, (ref, r.output)
        ids[ref] = json.loads(r.output)["run"]["id"]
    assert ids == {"latest": 3, "latest~1": 2, "latest~2": 1, "fast-net": 2, "3": 3}
    r = cli("results", "show", "latest~3", store=store)
    assert r.exit_code == 2 and "expected at most latest~2" in r.output and "holds 3 run(s)" in r.output
    r = cli("results", "show", "no-such-name", store=store)
    assert r.exit_code == 2 and "a name given with `suite run --name`" in r.output
    r = cli("results", "list", "--format", "json", store=store)
    assert [x["name"] for x in json.loads(r.output)] == ["first", "fast-net", None]


def test_name_rules(store, tmp_path, cli):
    # a name already used is refused before anything runs; a number or latest~N is no name
    r = cli(*SWEEP, "--name", "first", store=store)
    assert r.exit_code == 2 and "already names run 1" in r.output
    for bad in ("12", "latest~1", "two words"):
        r = cli(*SWEEP, "--name", bad, store=tmp_path / "x.sqlite")
        assert r.exit_code == 2 and "--name: expected a label" in r.output, bad
    assert not (tmp_path / "x.sqlite").exists()


def test_json_and_csv_carry_units(store, cli):
    d = json.loads(cli("results", "show", "first", "--format", "json", store=store).output)
    assert d["units"]["iteration_time"] == "s" and d["units"]["throughput"] == "samples/s"
    assert d["units"]["comm_bytes"] == "B" and d["units"]["speedup"] == "1"
    assert d["directions"]["speedup"] == "higher"
    out = cli("results", "show", "first", "--format", "csv", store=store).output
    rows = list(csv.DictReader(io.StringIO(out)))
    assert "iteration_time [s]" in rows[0] and "comm_bytes [B]" in rows[0] and "speedup" in rows[0]
    out = cli("results", "show", "first", "--format", "csv", "--long", store=store).output
    long = list(csv.DictReader(io.StringIO(out)))
    assert {r["unit"] for r in long if r["name"] == "iteration_time"} == {"s"}
    assert len(long) == 24 * 10  # 24 cases x poseidon's 10 metrics (nodes_used the 10th)
    d = json.loads(cli("results", "show", "first", "--format", "json", "--long", store=store).output)
    assert {m["unit"] for m in d["metrics"] if m["name"] == "comm_bytes"} == {"B"}


def test_rows_sort_numerically(store, cli):
    d = json.loads(cli("results", "show", "first", "--format", "json", store=store).output)
    ps = [(c["param.nodes"], c["overrides"]["network.-1.bandwidth"]) for c in d["cases"] if c["variant"] == "ps"]
    # as strings "10 Gbit/s" < "40 Gbit/s" < "5 Gbit/s" and 16 < 2; numerically:
    assert ps == [(2, "5 Gbit/s"), (2, "10 Gbit/s"), (2, "40 Gbit/s"),
                  (16, "5 Gbit/s"), (16, "10 Gbit/s"), (16, "40 Gbit/s")]


def test_table_shows_headline_metrics_scaled(store, cli, in_command):
    from suite.cli.results import compact_rows
    from suite.results import Store

    with Store(store, readonly=True) as st, in_command():
        rows = compact_rows(st, 1)
        full = compact_rows(st, 1, all_metrics=True)
    row = next(r for r in rows if r["variant"] == "ps")
    # poseidon speaks the data-parallel vocabulary: those five first, in order, times scaled
    names = [w.split("=")[0] for w in row["metrics"].split("  ") if "=" in w]
    assert names == ["iteration_time", "throughput", "speedup", "comm_time", "exposed_comm"]
    assert row["metrics"].endswith("(+5 more)")
    # the first row in numeric order; the override named set.PATH as in the csv/json (was unprefixed, like a parameter)
    assert row["params"] == "nodes=2;set.network.-1.bandwidth=5 Gbit/s"
    assert " ms" in row["metrics"] or " s " in row["metrics"]
    frow = next(r for r in full if r["variant"] == "ps")
    assert "comm_bytes=" in frow["metrics"] and "MiB" in frow["metrics"] and "more)" not in frow["metrics"]
    out = cli("results", "show", "first", store=store).output
    assert "headline metrics" in out and "--all-metrics" in out


def test_compare_profile_difference_in_the_profile_spelling(store, cli):
    # run 2 set the outer network to 40 Gbit/s; run 3 ran on the profile as written (10 Gbit/s)
    r = cli("compare", "fast-net", "latest", store=store)
    assert r.exit_code == 2 and "--allow-profile-change" in r.output  # refused without it
    r = cli("compare", "fast-net", "latest", "--allow-profile-change", store=store)
    assert r.exit_code == 0, r.output
    # each side as its profile spells it (the override converted to the file's unit), never 5e+09;
    # titanx-cluster-10gbe has one network level, so network.-1 is network.0
    assert "network.0.bandwidth: 40 Gbit/s -> 10 Gbit/s" in r.output, r.output
    assert "e+0" not in "".join(ln for ln in r.output.splitlines() if "bandwidth:" in ln)
    d = json.loads(cli("compare", "fast-net", "latest", "--allow-profile-change", "--format", "json",
                       store=store).output)
    assert d["units"]["iteration_time"] == "s" and d["units"]["comm_bytes"] == "B"
    assert all(row["unit"] for row in d["rows"])
    assert d["profile_diffs"][0]["fields_written"]["network.0.bandwidth"] == ["40 Gbit/s", "10 Gbit/s"]
    assert d["profile_diffs"][0]["fields"]["network.0.bandwidth"] == [5e9, 1.25e9]  # SI beside it


def test_parquet_export_carries_units(store, tmp_path, cli):
    import pandas as pd

    r = cli("results", "export", "-o", str(tmp_path / "x.parquet"), "--run", "first", store=store)
    assert r.exit_code == 0, r.output
    df = pd.read_parquet(tmp_path / "x.parquet")
    assert set(df.loc[df["name"] == "comm_time", "unit"]) == {"s"}
    assert set(df.loc[df["name"] == "bytes_per_node", "unit"]) == {"B"}


def running(output: str) -> list[str]:
    import re

    m = re.search(r"category communication: running (.*?) \(\d+ case\(s\)\)", output)
    assert m, output
    return m.group(1).split(", ")


def test_category_run_on_a_node_and_with_a_shared_parameter(tmp_path, cli):
    st = tmp_path / "c.sqlite"
    r = cli("run", "--category", "communication", "--workload", "resnet-50", "--profile", "dgx-a100", store=st)
    assert r.exit_code == 0, r.output
    # one node of 8 GPUs: every communication technique that applies runs on its 8 GPUs (hetseq's one
    # node, mg-wfbp's 8 workers, poseidon's 8 single-GPU workers behind the node's switch), labelled
    assert {"hetseq", "mg-wfbp", "poseidon"} <= set(running(r.output))
    assert ("every technique on 8 GPUs (the size of profile dgx-a100; --gpus to change) with efficiency 0.5"
            in r.output)
    assert "hetseq nodes=1; mg-wfbp workers=8; poseidon nodes=8" in r.output
    # a technique that cannot be put at 8 GPUs and reads no CNN at any scale is named, with that reason
    # (newuser14: it said "it cannot run on 8 GPUs (... 16 GPU(s) each: tp*pp)")
    assert ("dhelix left out (does not apply): ParameterError: dhelix: workload 'resnet-50' is not a transformer layer "
            "table") in r.output
    assert "run at their own default scale" not in r.output
    # nodes is Poseidon's parameter only: it applies there and the note says who runs
    r = cli("run", "--category", "communication", "--workload", "resnet-50", "--profile", "dgx-a100",
            "--param", "nodes=1", "--param", "no_such=3", "--name", "both", store=st)
    assert r.exit_code == 0, r.output
    assert {"mg-wfbp", "poseidon"} <= set(running(r.output))
    assert "--param no_such: no technique of category communication declares it" in r.output
    # a scale given with --param wins over the profile's size (poseidon and hetseq at 1 node), and the
    # note says so with their GPUs (it said "every technique on 8 GPUs" with Poseidon on 1)
    assert ("the scale of hetseq, poseidon set by your --param (its GPUs below), every other technique on 8 GPUs "
            "(the size of profile dgx-a100; --gpus to change) with efficiency 0.5 (--param efficiency=...): "
            "hetseq nodes=1 = 8 GPUs; mg-wfbp workers=8; poseidon nodes=1 = 1 GPU") in r.output
    assert "run at their own default scale" not in r.output
    d = json.loads(cli("results", "show", "both", "--format", "json", store=st).output)
    got = {(c["technique"], c["variant"]) for c in d["cases"] if c["technique"] in ("mg-wfbp", "poseidon")}
    assert got == {("mg-wfbp", v) for v in ("sync", "wfbp", "bucket", "mg-wfbp")} | {
        ("poseidon", v) for v in ("ps", "wfbp", "sfb", "poseidon")}  # each with all its baselines
    r = cli("run", "--category", "nope", store=st)
    assert r.exit_code == 2 and "--category: expected one of communication, memory" in r.output
    r = cli("run", "--category", "communication", "--technique", "poseidon", store=st)
    assert r.exit_code == 2 and "not both" in r.output


def test_reproduce_json_names_each_claims_metric_and_unit(tmp_path, cli):
    st = tmp_path / "r.sqlite"
    r = cli("reproduce", "poseidon", "--format", "json", "-q", store=st)
    assert r.exit_code == 0, r.output
    claims = {c["claim"]: c for c in json.loads(r.stdout)["claims"]}
    # Poseidon's abstract claim is a speed-up (dimensionless "1"); a derived comparison has no single unit
    assert (claims["vgg19-22k-16n-10gbe"]["metric"], claims["vgg19-22k-16n-10gbe"]["unit"]) == ("speedup", "1")
    assert claims["inception-v3-32n-vs-tf"]["unit"] is None


def test_spelling_takes_the_dimension_from_the_schema_not_the_field_name(in_command):
    from suite.cli.compare import spelling

    # no profile file to read the spelling from: the SI value in the schema's unit, by hand
    with in_command():
        assert spelling("no-such-profile", "network.0.fits.0.alpha", 2e-6) == "2 µs"  # "alpha": no name hint
        assert spelling("no-such-profile", "reliability.repair_time", 7200.0) == "2 h"
        # a cycle count whose name says "latency" is no time: left a plain number
        assert spelling("no-such-profile", "ext.hopper.global_latency_cycles", 600.0) == "600.0"


def test_swept_profile_fields_are_numeric_columns_with_their_unit(store, tmp_path, cli):
    """`--set network.-1.bandwidth=5 Gbit/s,40 Gbit/s,10 Gbit/s`: a number column with its unit in
    CSV, JSON and Parquet (not the text "5 Gbit/s"), and parameters declared with a unit say it."""
    import pandas as pd

    r = cli("results", "show", "first", "--format", "csv", store=store)
    rows = list(csv.DictReader(io.StringIO(r.output)))
    assert "set.network.-1.bandwidth [Gbit/s]" in rows[0] and "param.nodes [nodes]" in rows[0]
    assert sorted({float(x["set.network.-1.bandwidth [Gbit/s]"]) for x in rows}) == [5.0, 10.0, 40.0]
    d = json.loads(cli("results", "show", "first", "--format", "json", store=store).output)
    assert d["units"]["set.network.-1.bandwidth"] == "Gbit/s"
    assert sorted({c["set.network.-1.bandwidth"] for c in d["cases"]}) == [5.0, 10.0, 40.0]
    out = tmp_path / "e.parquet"
    r = cli("results", "export", "--run", "first", "-o", str(out), store=store)
    assert r.exit_code == 0, r.output
    df = pd.read_parquet(out)
    col = df["set.network.-1.bandwidth [Gbit/s]"]
    assert str(col.dtype).lower().startswith("float") and sorted(set(col)) == [5.0, 10.0, 40.0]


def test_a_category_run_shows_each_techniques_scale(tmp_path, suite_cli):
    """One case per technique varies nothing, so the swept-parameter rule showed no scale at all; the
    parameters a technique declares a role for are shown. By hand: 32 GPUs of 8 per node are
    hetseq's nodes=4, mg-wfbp's workers=32, poseidon's nodes=32 (one GPU per node in its model)."""
    r = suite_cli("run", "--category", "communication", "--workload", "resnet-50", "--profile", "h100-ndr-fat-tree",
                  "--gpus", "32", "--store", tmp_path / "c.sqlite")
    assert r.exit_code == 0, r.output
    rows = [line for line in r.output.splitlines() if line.startswith("│ ") and "ok" in line]
    params = {line.split("│")[1].strip(): line.split("│")[5].strip() for line in rows if line.split("│")[1].strip()}
    assert params == {"hetseq": "efficiency=0.5,nodes=4", "mg-wfbp": "efficiency=0.5,workers=32",
                      "poseidon": "efficiency=0.5,nodes=32"}, r.output


def test_the_same_command_with_its_name_resumes_an_interrupted_run(tmp_path, cli, monkeypatch):
    """`suite run --help` says an interrupted run resumes when the same command is run again; with
    --name the same command stopped at "expected a new name" (a tryout's Ctrl-C)."""
    import sqlite3

    st = tmp_path / "s.sqlite"
    # run 1, named p2, stored the 12 nodes=2 cases of SWEEP (2 node counts x 3 bandwidths x poseidon's 4
    # variants) when it was cut
    r = cli("run", "--technique", "poseidon", "--param", "nodes=2", "--set",
            "network.-1.bandwidth=5 Gbit/s,40 Gbit/s,10 Gbit/s", "--name", "p2", "-q", store=st)
    assert r.exit_code == 0, r.output
    with sqlite3.connect(st) as conn:  # a run still marked running by this (live) process is not resumed
        conn.execute("UPDATE runs SET status = 'running' WHERE id = 1")
    r = cli(*SWEEP, "--name", "p2", store=st)
    assert r.exit_code == 2 and "--name 'p2': expected a new name, got one that already names run 1" in r.output
    with sqlite3.connect(st) as conn:  # what Ctrl-C leaves, of another command (a second reader's case)
        conn.execute("UPDATE runs SET status = 'interrupted', command = 'suite run -t hetseq --name p2' WHERE id = 1")
    r = cli(*SWEEP, "--name", "p2", store=st)
    assert r.exit_code == 2 and ("--name 'p2': expected a new name or the command of interrupted run 1 "
                                 "(`suite run -t hetseq --name p2`, which resumes it), got another command") in r.output
    with sqlite3.connect(st) as conn:  # the same command (as this process's argv writes it: CliRunner keeps pytest's)
        conn.execute("UPDATE runs SET command = ? WHERE id = 1", (shlex.join(["suite", *sys.argv[1:]]),))
    r = cli(*SWEEP, "--name", "p2", store=st)
    assert r.exit_code == 0, r.output
    assert "note: --name 'p2': run 1 was interrupted; this run resumes it" in r.output
    assert "24 case(s), 12 already stored, 12 computed" in r.output
    r = cli("results", "show", "p2", "--format", "json", store=st)
    assert json.loads(r.output)["run"]["id"] == 2 and len(json.loads(r.output)["cases"]) == 24  # the refusal began no run
    # the same sweep with its options in another order and other output options resumes too (the text
    # compared before: `-q` moved, or `--format json` added, was "another command")
    with sqlite3.connect(st) as conn:
        conn.execute("UPDATE runs SET status = 'interrupted', command = ? WHERE id = 2",
                     ("suite run -q --set 'network.-1.bandwidth=5 Gbit/s,40 Gbit/s,10 Gbit/s' --name p2 "
                      "--param nodes=2 --technique poseidon -j 2",))
    args = ["run", "--technique", "poseidon", "--param", "nodes=2", "--set",
            "network.-1.bandwidth=5 Gbit/s,40 Gbit/s,10 Gbit/s", "--name", "p2", "--format", "json"]
    monkeypatch.setattr(sys, "argv", ["suite", *args])  # the command the run stores, as the `suite` script's
    r = cli(*args, store=st)
    assert r.exit_code == 0 and "this run resumes it" in r.output, r.output
    with sqlite3.connect(st) as conn:  # another --set value is another sweep
        conn.execute("UPDATE runs SET status = 'interrupted' WHERE id = 3")
    args = ["run", "--technique", "poseidon", "--param", "nodes=2", "--set", "network.-1.bandwidth=5 Gbit/s", "--name", "p2"]
    monkeypatch.setattr(sys, "argv", ["suite", *args])
    r = cli(*args, store=st)
    assert r.exit_code == 2 and "got another command" in r.output, r.output
    r = cli("results", "show", "p2", "--format", "json", store=st)
    assert json.loads(r.output)["run"]["id"] == 3  # the resumed run took the name; the refused one began none


def test_a_sweep_is_the_same_however_its_lists_are_written():
    """`--variant x,y`, `--variant y --variant x`; `--param a=1,2`, `--param a=2 --param a=1`: the same
    cases, so the same sweep for `--name` resume (words sorted whole called them different; a second
    reader). Another value is another sweep."""
    from suite.cli.run import _sweep_of

    a = _sweep_of("suite run -t poseidon --variant x,y --param a=1,2 --set 'n.-1.bandwidth=1 Gbit/s,2 Gbit/s'")
    assert a == _sweep_of("suite run -q -t poseidon --variant y --variant x --param a=2 --param a=1 "
                          "--set 'n.-1.bandwidth=2 Gbit/s' --set 'n.-1.bandwidth=1 Gbit/s' -j 2")
    assert a != _sweep_of("suite run -t poseidon --variant x,y --param a=1,3 --set 'n.-1.bandwidth=1 Gbit/s,2 Gbit/s'")
    assert a != _sweep_of("suite run -t poseidon --variant x --param a=1,2 --set 'n.-1.bandwidth=1 Gbit/s,2 Gbit/s'")


def test_a_value_given_twice_is_the_same_sweep():
    """`--variant x,x` runs the cases of `--variant x` (a key is run once): it was another sweep, so
    `--name` refused to resume the run it had begun ("got another command")."""
    from suite.cli.run import _sweep_of

    a = _sweep_of("suite run -t poseidon --variant x --param a=1 --set 'n.-1.bandwidth=1 Gbit/s'")
    assert a == _sweep_of("suite run -t poseidon --variant x,x --param a=1,1 --param a=1 "
                          "--set 'n.-1.bandwidth=1 Gbit/s,1 Gbit/s'")
    assert a == _sweep_of("suite run -t poseidon --variant x --variant x --param a=1 --set 'n.-1.bandwidth=1 Gbit/s'")
    assert a != _sweep_of("suite run -t poseidon --variant x,y --param a=1 --set 'n.-1.bandwidth=1 Gbit/s'")
