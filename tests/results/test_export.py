"""suite results export: the whole store to Parquet, read back by pandas, provenance in metadata."""

from __future__ import annotations

import importlib.metadata
import json

import pandas as pd
import pytest

from suite.errors import StoreError
from suite.results.export import export_parquet, read_provenance
from suite.results.load import load


def test_export_round_trip(sweep_store, tmp_path):
    path, a, b = sweep_store
    out = tmp_path / "sub" / "all.parquet"
    info = export_parquet(path, out)
    back = pd.read_parquet(out)
    ref = load(path)  # every ok case of the store, long form
    assert info["rows"] == len(back) == len(ref) == 2 * 24 * ref["name"].nunique()
    # the metric values are the store's, row for row
    merged = back.merge(ref[["key", "name", "value", "unit"]], on=["key", "name"], suffixes=("", "_ref"))
    assert len(merged) == len(ref)
    assert (merged["value"] == merged["value_ref"]).all() and (merged["unit"] == merged["unit_ref"]).all()
    # parameters keep their types; params/overrides are JSON text
    assert str(back["param.nodes"].dtype) == "Int64" and sorted(back["param.nodes"].unique()) == [1, 2, 4]
    assert {json.loads(o)["network.-1.bandwidth"] for o in back["overrides"]} == {"10 Gbit/s", "40 Gbit/s"}
    assert set(back.loc[back["set.network.-1.latency"].notna(), "run_id"]) == {b}
    assert all(list(r) in ([a], [b]) for r in back["runs"])
    # no --run: each row's run is the run that computed it (24 cases of each run, none empty)
    assert back["run"].notna().all() and (back["run"] == back["runs"].str[0]).all()  # each case asked for by one run
    assert back.groupby("run")["key"].nunique().to_dict() == {a: 24, b: 24}
    assert all(len(s) == 0 for s in back["samples"])
    # provenance: every run, with its command, packages and plugins
    prov = read_provenance(out)
    assert prov["format"] == "dlsys-suite results" and prov["run"] is None
    assert [r["id"] for r in prov["runs"]] == [a, b]
    assert "test sweep B" in prov["runs"][1]["command"]
    assert "pandas" in prov["runs"][0]["packages"] and prov["cases"] == {"ok": 48}
    # and the libraries the suite's plugins declare (0.3.7: their versions are in every case key)
    assert prov["runs"][0]["packages"]["networkx"] == importlib.metadata.version("networkx")


def test_export_one_run_via_cli(sweep_store, tmp_path, suite_cli):
    path, a, _b = sweep_store
    out = tmp_path / "a.parquet"
    res = suite_cli(["results", "export", "--store", str(path), "--run", str(a), "-o", str(out),
                     "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["runs"] == [a]
    back = pd.read_parquet(out)
    assert set(back["run"]) == {a} and back["key"].nunique() == 24
    assert read_provenance(out)["run"] == a


def test_export_takes_the_run_positionally_as_show_and_report_do(sweep_store, tmp_path, suite_cli):
    # `suite results export pos-sweep` said "Got unexpected extra argument" (a new user's tryout)
    path, a, b = sweep_store
    out = tmp_path / "b.parquet"
    res = suite_cli(["results", "export", str(b), "--store", str(path), "-o", str(out), "--format", "json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.output)["runs"] == [b] and set(pd.read_parquet(out)["run"]) == {b}
    both = suite_cli(["results", "export", str(b), "--run", str(a), "--store", str(path), "-o", str(out)])
    assert both.exit_code == 2 and f"RUN '{b}' and --run '{a}': expected one run, got two" in both.output


def test_read_provenance_rejects_foreign_parquet(tmp_path):
    p = tmp_path / "plain.parquet"
    pd.DataFrame({"x": [1]}).to_parquet(p)
    with pytest.raises(StoreError, match="no dlsys_suite metadata"):
        read_provenance(p)
    (tmp_path / "t.txt").write_text("hello")
    with pytest.raises(StoreError, match="not a Parquet file"):
        read_provenance(tmp_path / "t.txt")


def test_export_missing_store_is_one_line_error(tmp_path, suite_cli):
    res = suite_cli(["results", "export", "--store", str(tmp_path / "none.sqlite"),
                     "-o", str(tmp_path / "x.parquet")])
    assert res.exit_code == 2 and "does not exist" in res.output


def test_export_refuses_other_suffixes(sweep_store, tmp_path, suite_cli):
    path, _a, _b = sweep_store
    res = suite_cli(["results", "export", "--store", str(path), "-o", str(tmp_path / "x.csv")])
    assert res.exit_code == 2 and "expected a .parquet file" in res.output
    assert not (tmp_path / "x.csv").exists()
