"""A store written by dlsys-suite 0.3.2 (schema 6) opens, migrates to the current schema and reads
as it did (issue 44: schema 7 gives each case an integer id that its results and run links use).

``data/store-0.3.2.sql`` is the SQL dump (``sqlite3.Connection.iterdump``) of a store 0.3.2 wrote
(tracebacks' paths shortened): a closed-form technique ``oldstore``, variants ``base`` and
``fast``, ``k`` = 1 .. 5, metrics ``time`` = 0.5 k s (+ 0.25 s for ``fast``) with samples
[0.1 k, 0.2 k, k] and ``gain`` = -1.5 k, artifacts ``{"trace": {"k": k}}``; k = 3 raises
(failed), k = 4 is skipped, k = 5 returns a negative time (failed: a bad metric). Run 1 computed
all ten cases; run 2 reused the four ok ones and computed the six others again; run 3 recomputed
the four ok ones (``--rerun``).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from suite.results import SCHEMA_VERSION, Store

DUMP = Path(__file__).parent / "data" / "store-0.3.2.sql"


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.executescript(DUMP.read_text())
    con.close()
    with Store(path) as st:
        yield st


def _keys(st):
    """(variant, k) -> case key."""
    cs = st.cases()
    return {(v, int(k)): key for v, k, key in zip(cs["variant"], cs["param.k"], cs["key"])}


def test_the_dump_is_a_schema_6_store(tmp_path):
    con = sqlite3.connect(":memory:")
    con.executescript(DUMP.read_text())
    assert con.execute("SELECT version FROM schema_version").fetchone() == (6,)
    assert "id" not in {r[1] for r in con.execute("PRAGMA table_info(cases)")}


def test_a_0_3_2_store_migrates_and_reads_its_runs(store):
    assert store.schema_version == SCHEMA_VERSION == 7
    statuses = {(r["variant"], r["param.k"]): r["status"] for _, r in store.cases().iterrows()}
    assert statuses == {(v, k): s for v in ("base", "fast")
                        for k, s in ((1, "ok"), (2, "ok"), (3, "failed"), (4, "skipped"), (5, "failed"))}
    outcomes = store.cases(2).groupby("outcome").size().to_dict()
    assert outcomes == {"cached": 4, "computed": 6}  # run 2 reused the four ok cases
    assert len(store.cases(3)) == 4
    wide = store.metrics(3, wide=True)
    got = {(v, int(k)): (t, g) for v, k, t, g in zip(wide["variant"], wide["param.k"], wide["time"], wide["gain"])}
    assert got == {("base", 1): (0.5, -1.5), ("fast", 1): (0.75, -1.5), ("base", 2): (1.0, -3.0),
                   ("fast", 2): (1.25, -3.0)}


def test_a_0_3_2_stores_history_results_and_links(store):
    keys = _keys(store)
    hist = store.history(keys["base", 1])
    assert [(h["run_id"], h["runs"], h["metrics"]) for h in hist] == [
        (1, [1, 2], {"time": 0.5, "gain": -1.5}), (3, [3], {"time": 0.5, "gain": -1.5})]
    assert [h["status"] for h in store.history(keys["fast", 3])] == ["failed", "failed"]
    res = store.result(keys["fast", 2])
    assert res.metrics["time"].value == 1.25 and res.metrics["time"].samples == (0.2, 0.4, 2.0)
    assert res.artifacts == {"trace": {"k": 2}}
    # every result and every run link names its case by the id of that case's row
    con = store.conn
    assert con.execute("SELECT count(*) FROM results r JOIN cases c ON c.id = r.case_id "
                       "AND c.key = r.case_key").fetchone() == (20,)
    assert con.execute("SELECT count(*) FROM run_cases rc JOIN cases c ON c.id = rc.case_id "
                       "AND c.key = rc.case_key").fetchone() == (24,)


def test_a_migrated_store_takes_new_runs(store):
    keys = _keys(store)
    run = store.begin_run("after migration")
    store.link_cached(run, [keys["base", 1]])
    ident = {"key": "newcase", "technique": "oldstore", "variant": "base", "fidelity": "model", "params": {"k": 6},
             "overrides": {}, "seed": 0, "code": "c", "env": "e", "inputs": {}}
    store.add_outcome(ident, {"key": "newcase", "status": "ok", "metrics": [["time", 3.0, "s", "lower"]]}, run)
    store.finish_run(run, "done", {"total": 2, "computed": 1, "cached": 1, "ok": 2})
    assert dict(zip(store.cases(run)["key"], store.cases(run)["outcome"])) == {keys["base", 1]: "cached",
                                                                              "newcase": "computed"}
    assert [h["runs"] for h in store.history("newcase")] == [[run]]
    assert [h["runs"] for h in store.history(keys["base", 1])] == [[1, 2], [3, run]]
