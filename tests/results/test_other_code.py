"""`suite results show` marks cases computed by other code than the installed technique's (issue 16:
a plugin changed without a version bump served stale results; now its fingerprint differs)."""

from __future__ import annotations

import json
import sqlite3


def test_results_show_marks_cases_of_other_code(tmp_path, suite_cli):
    st = tmp_path / "s.sqlite"
    r = suite_cli(["run", "--technique", "poseidon", "--variant", "ps", "--param", "nodes=1,2",
                   "-q", "--store", str(st)])
    assert r.exit_code == 0, r.output
    con = sqlite3.connect(st)
    (key, ident), = con.execute("SELECT key, identity FROM cases WHERE params LIKE '%\"nodes\":2%'").fetchall()
    d = json.loads(ident)
    assert len(d["code"]) == 16  # the fingerprint the case was computed with
    d["code"] = "0" * 16  # as if an earlier version of the plugin's source had computed it
    con.execute("UPDATE cases SET identity = ? WHERE key = ?", (json.dumps(d), key))
    con.commit()
    con.close()
    r = suite_cli(["results", "show", "latest", "--store", str(st), "--format", "json"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output[r.output.index("{"):])["cases"]
    assert {row["key"]: row["other_code"] for row in rows} == {row["key"]: row["key"] == key for row in rows}
    r = suite_cli(["results", "show", "latest", "--store", str(st)])
    assert "ok (other code)" in r.output and "1 case(s) of poseidon were computed by other code" in r.output


def test_cases_outside_the_papers_measured_range_are_flagged_extrapolated(tmp_path, suite_cli, shared_context):
    """Poseidon's abstract measures 16 and 32 machines; 64 nodes is outside what the paper checks."""
    tech = shared_context.technique("poseidon")
    assert tech.extrapolated({"nodes": 32}) == {}
    assert tech.extrapolated({"nodes": 64}) == {"nodes": "64 > 32, the largest the paper measured"}
    st = tmp_path / "s.sqlite"
    r = suite_cli(["run", "--technique", "poseidon", "--variant", "ps", "--param", "nodes=16,64",
                   "--set", "nodes=64", "--set", "network.-1.size=64", "-q", "--store", str(st)])
    assert r.exit_code == 0, r.output
    r = suite_cli(["results", "show", "latest", "--store", str(st), "--format", "json"])
    rows = json.loads(r.output[r.output.index("{"):])["cases"]
    assert sorted((row["param.nodes"], row["extrapolated"]) for row in rows) == [
        (16, None), (64, {"nodes": "64 > 32, the largest the paper measured"})]
