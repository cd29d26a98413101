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
from suite.results.sql import key_lists
from storedump import store_from_dump

DUMP = Path(__file__).parent / "data" / "store-0.3.2.sql"


@pytest.fixture
def store(tmp_path):
    with Store(store_from_dump(tmp_path / "old.sqlite", DUMP.name)) as st:
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
    assert store.schema_version == SCHEMA_VERSION == 8
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


def _crafted(tmp_path):
    """The 0.3.2 store edited by hand: the case row of (fast, 2) deleted (its two results and three
    run links are left naming a key with no case row) and a link of run 2 to a key never stored
    (``ghost``, no result). 0.3.2 never wrote such rows; its readers found them by key."""
    path = tmp_path / "crafted.sqlite"
    con = sqlite3.connect(path)
    con.executescript(DUMP.read_text())
    (key,) = con.execute("SELECT key FROM cases WHERE variant = 'fast' AND params = '{\"k\":2}'").fetchone()
    con.execute("DELETE FROM cases WHERE key = ?", (key,))
    con.execute("INSERT INTO run_cases (run_id, case_key, outcome, result_id, overrides) "
                "VALUES (2, 'ghost', 'cached', NULL, '{}')")
    con.commit()
    con.close()
    return path, key


def test_rows_of_a_key_without_a_case_row_are_kept_by_the_migration(tmp_path):
    path, key = _crafted(tmp_path)
    with Store(path) as st:
        con = st.conn
        assert con.execute("SELECT count(*) FROM results").fetchone() == (20,)  # as in the dump: none dropped
        assert con.execute("SELECT count(*) FROM run_cases").fetchone() == (25,)  # the dump's 24 + the ghost's
        # each key without a case row gets its own negative id, named by its results and links
        ids = dict(con.execute("SELECT DISTINCT case_key, case_id FROM run_cases WHERE case_id < 0"))
        assert sorted(ids) == sorted([key, "ghost"]) and len(set(ids.values())) == 2
        assert con.execute("SELECT DISTINCT case_id FROM results WHERE case_key = ?", (key,)).fetchall() == [(ids[key],)]
        assert con.execute("SELECT count(*) FROM results WHERE case_id IS NULL").fetchone() == (0,)
        # readers that join the cases skip them, as 0.3.2's did (run 2: ten cases, one deleted)
        assert len(st.cases(2)) == 9 and key not in set(st.cases()["key"])
        # the history by key lists them, as 0.3.2's did: computed by run 1, reused by run 2, rerun by 3
        assert [(h["run_id"], h["runs"], h["metrics"]) for h in st.history(key)] == [
            (1, [1, 2], {"time": 1.25, "gain": -3.0}), (3, [3], {"time": 1.25, "gain": -3.0})]
        assert st.history("ghost") == []
        # computed again, the key gets a case row; its history still lists its earlier results
        run = st.begin_run("after migration")
        ident = {"key": key, "technique": "oldstore", "variant": "fast", "fidelity": "model", "params": {"k": 2},
                 "overrides": {}, "seed": 0, "code": "c", "env": "e", "inputs": {}}
        st.add_outcome(ident, {"key": key, "status": "ok", "metrics": [["time", 1.25, "s", "lower"]]}, run)
        st.finish_run(run, "done", {"total": 1, "computed": 1, "ok": 1})
        assert [(h["run_id"], h["runs"]) for h in st.history(key)] == [(1, [1, 2]), (3, [3]), (run, [run])]


def test_history_and_an_exports_runs_find_their_rows_through_indexes(store):
    from suite.results import export, readers

    runs_of = export._RUNS_OF
    # a key list is read from its JSON parameter (SCAN json_each): no table is scanned
    plans = {q: " / ".join(r[3] for r in store.conn.execute("EXPLAIN QUERY PLAN " + q, args)
                           if not r[3].startswith("SCAN json_each"))
             for q, args in [(readers._HISTORY[0], (1, "k")), (readers._HISTORY[1], ("k",)),
                             (readers._RUNS_OF_CASE, (1,)), (runs_of, key_lists(["a", "b"]))]}
    for q, plan in plans.items():
        assert "SCAN" not in plan, (q, plan)  # e.g. "SEARCH run_cases USING INDEX run_cases_case (case_id=?)"
    assert "run_cases_case" in plans[readers._RUNS_OF_CASE] and "run_cases_case" in plans[runs_of]
    assert "cases_khash" in plans[readers._HISTORY[0]] and "cases_khash" in plans[runs_of]


def test_every_look_up_by_key_goes_through_the_key_hashes_index(store):
    """Schema 8: ``cases.key`` has no index of its own; each look-up by key (the writer's, the
    readers') searches ``cases_khash``, never scans ``cases`` (a scan per look-up would make a
    large store's every chunk cost its size)."""
    from suite.results import readers, writer

    lists = key_lists(["a", "b"])
    queries = [(writer._CASES_OF_HASHES, ("[1,2]",)),
               (readers._METRICS_OF_KEYS, lists), (readers._METRICS_OF_CASE, (1,)),
               (readers._OK_OF_KEYS, lists), (readers._CASE_BY_KEY, (1, "a")),
               (writer._LINK_CACHED.format(values="(?,?,?,?,?,?)"), (0, 1, "a", 1, "cached", "{}"))]
    for q, args in queries:
        plan = " / ".join(r[3] for r in store.conn.execute("EXPLAIN QUERY PLAN " + q, args))
        assert "SCAN c " not in plan + " " and "SCAN cases" not in plan, (q, plan)
        assert "cases_khash" in plan or "INTEGER PRIMARY KEY" in plan, (q, plan)


def test_a_schema_7_store_without_the_run_links_index_gets_it_on_open(tmp_path):
    path = tmp_path / "s.sqlite"
    Store(path).close()
    con = sqlite3.connect(path)
    con.execute("DROP INDEX run_cases_case")  # as 0.3.3 wrote schema 7
    con.commit()
    con.close()
    with Store(path) as st:
        assert st.conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'run_cases_case'").fetchone() == (1,)
