"""tryout13 (findings 4 and 7, a papercut): a ``--set`` sweep written in mixed units lost its numbers
(no ``set.*`` column in the CSV, only text in Parquet, none in a whole-store export, 1 GB/s sorted
before 4 Gbit/s, no figure in the report), a text sweep had no ``set.*`` column, the report drew one
value of a text sweep only, and the CSV's ``duration`` had no unit. Real poseidon / hetseq runs."""

from __future__ import annotations

import csv
import io
import json
import re

import pytest

MIXED = "network.-1.bandwidth=1 GB/s,4 Gbit/s,20 Gbit/s"
#: each value as given, in Gbit/s by hand (1 byte = 8 bits)
GBIT = {"1 GB/s": 8.0, "4 Gbit/s": 4.0, "20 Gbit/s": 20.0, "2 GB/s": 16.0, "10 Gbit/s": 10.0}
IN_GBIT = {"Gbit/s": 1.0, "GB/s": 8.0}  # Gbit/s per unit the column may be in (its first value's)


@pytest.fixture(scope="module")
def store(tmp_path_factory, suite_cli):
    st = tmp_path_factory.mktemp("setunits") / "s.sqlite"
    for args in (("-t", "poseidon", "--set", MIXED, "--name", "mixed"),
                 ("-t", "hetseq", "--param", "algorithm=auto", "--param", "nodes=2,4",
                  "--set", "communication.library=nccl,mpi", "--name", "libs"),
                 ("-t", "poseidon", "--set", "network.-1.bandwidth=2 GB/s", "--name", "bytes"),
                 ("-t", "poseidon", "--set", "network.-1.bandwidth=10 Gbit/s", "--name", "bits")):
        r = suite_cli("run", *args, "-q", "--store", st)
        assert r.exit_code == 0, r.output
    return st


def _csv(suite_cli, store, run):
    r = suite_cli("results", "show", run, "--format", "csv", "--store", store)
    assert r.exit_code == 0, r.output
    return list(csv.DictReader(io.StringIO(r.output)))


def _bandwidth_column(row):
    """The one number column of the swept bandwidth and how many Gbit/s its unit is."""
    (m,) = [m for c in row if (m := re.fullmatch(r"set\.network\.-1\.bandwidth \[(.*)\]", c))]
    return m.group(0), IN_GBIT[m.group(1)]


def test_a_mixed_unit_sweep_is_one_number_column_sorted_by_value(store, suite_cli):
    rows = _csv(suite_cli, store, "mixed")
    assert len(rows) == 4 * 3
    col, factor = _bandwidth_column(rows[0])
    for r in rows:
        given = json.loads(r["overrides"])["network.-1.bandwidth"]
        assert float(r[col]) * factor == pytest.approx(GBIT[given])
    # rows by value (4 < 8 < 20 Gbit/s), not by the unit's spelling ("GB/s" < "Gbit/s" put 1 GB/s first)
    ps = [json.loads(r["overrides"])["network.-1.bandwidth"] for r in rows if r["variant"] == "ps"]
    assert ps == ["4 Gbit/s", "1 GB/s", "20 Gbit/s"]
    d = json.loads(suite_cli("results", "show", "mixed", "--format", "json", "--store", store).output)
    assert f"set.network.-1.bandwidth [{d['units']['set.network.-1.bandwidth']}]" == col
    assert sorted(c["set.network.-1.bandwidth"] * factor for c in d["cases"] if c["variant"] == "ps") == [4, 8, 20]
    table = suite_cli("results", "show", "mixed", "--store", store).output  # the cells, not the command line
    first = [m.group(1) for m in re.finditer(r"network\.-1\.bandwidth=(\d+ G(?:B|bit)/s) *│", table)][:3]
    assert first == ["4 Gbit/s", "1 GB/s", "20 Gbit/s"]


def test_a_text_sweep_is_a_text_column(store, suite_cli):
    rows = _csv(suite_cli, store, "libs")
    assert len(rows) == 2 * 2 * 2
    assert [r["set.communication.library"] for r in rows] == [
        json.loads(r["overrides"])["communication.library"] for r in rows]
    assert {r["set.communication.library"] for r in rows} == {"nccl", "mpi"}
    d = json.loads(suite_cli("results", "show", "libs", "--format", "json", "--store", store).output)
    assert {c["set.communication.library"] for c in d["cases"]} == {"nccl", "mpi"}
    assert "set.communication.library" not in d["units"]


def test_duration_says_its_unit(store, suite_cli):
    rows = _csv(suite_cli, store, "bits")
    assert "duration [s]" in rows[0] and "duration" not in rows[0]
    d = json.loads(suite_cli("results", "show", "bits", "--format", "json", "--store", store).output)
    assert d["units"]["duration"] == "s" and isinstance(d["cases"][0]["duration"], float)  # the key stays


def test_a_whole_store_export_keeps_every_runs_number(store, suite_cli, tmp_path):
    import pandas as pd

    out = tmp_path / "all.parquet"
    r = suite_cli("results", "export", "-o", out, "--store", store)
    assert r.exit_code == 0, r.output
    df = pd.read_parquet(out)
    bw = df[df["technique"] == "poseidon"].drop_duplicates("key")
    assert len(bw) == 4 * (3 + 1 + 1)
    col, factor = _bandwidth_column({c: None for c in df.columns})
    assert str(df[col].dtype).lower().startswith("float") and bw[col].notna().all()
    for given, num in zip(bw["set.network.-1.bandwidth"], bw[col]):
        assert num * factor == pytest.approx(GBIT[given])


def test_the_report_draws_a_mixed_unit_sweep_and_each_value_of_a_text_sweep(store, suite_cli, tmp_path):
    r = suite_cli("report", "mixed", "-o", tmp_path / "m.html", "--store", store)
    assert r.exit_code == 0, r.output
    page = (tmp_path / "m.html").read_text()
    assert "no numeric parameter or profile field is swept" not in page
    m = re.search(r"iteration_time \(s, lower is better\) against network\.-1\.bandwidth \((GB/s|Gbit/s)\)", page)
    assert m, re.findall(r"<figcaption>[^<]*", page)
    spec = json.loads(re.search(r'<script type="application/json" id="fig-poseidon-0">(.*?)</script>', page).group(1))
    xs = sorted(x for x, _y, _row in spec["p"][0]["s"]["ps"])
    assert [x * IN_GBIT[m.group(1)] for x in xs] == pytest.approx([4.0, 8.0, 20.0])

    r = suite_cli("report", "libs", "-o", tmp_path / "l.html", "--store", store)
    assert r.exit_code == 0, r.output
    page = (tmp_path / "l.html").read_text()
    caps = re.findall(r"<figcaption>([^<]*against nodes[^<]*)", page)
    assert caps and all("one panel per communication.library" in c for c in caps), caps
    assert "fixed at communication.library" not in page
    spec = json.loads(re.search(r'<script type="application/json" id="fig-hetseq-0">(.*?)</script>', page).group(1))
    assert [p["t"] for p in spec["p"]] == ["communication.library = mpi", "communication.library = nccl"]
    assert all(len(pts) == 2 for p in spec["p"] for pts in p["s"].values())  # nodes 2 and 4 in each panel
