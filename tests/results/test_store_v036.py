"""A store written by dlsys-suite 0.3.6 (schema 7) opens, migrates to schema 8 and reads as it did
(issue 44, flat at scale: schema 8 finds a case by an integer hash of its key, and samples and
artifacts name their case by ``cases.id``).

``data/store-0.3.6.sql.gz`` is the SQL dump (``sqlite3.Connection.iterdump``, gzip-compressed) of a
store that 0.3.6's ``Store`` wrote through its public methods (``begin_run``, ``add_outcome``,
``link_cached``, ``finish_run``; run with 0.3.6's tree on ``PYTHONPATH``): technique
``oldstore``, variants ``base`` and ``fast``, ``k`` = 1 .. 4, keys ``ab0K5e41...`` (base) and
``f00K5e41...`` (fast); an ok case has ``time`` = 0.5 k s (+ 0.25 s for ``fast``), ``gain`` = -1.5 k,
samples ``time`` = [0.1 k, 0.2 k, k] and artifacts ``{"trace": {"k": k}}``; k = 3 failed, k = 4
skipped; k = 1 asked for ``network.0.bandwidth`` = 1 Gbit/s. Run 1 computed all eight; run 2
reused the four ok ones (base k = 1 with 2 Gbit/s) and computed the four others again; run 3
recomputed the ok ones with ``time`` and the last sample doubled (``--rerun``).
"""

from __future__ import annotations

import sqlite3

import pytest

from suite.results import SCHEMA_VERSION, Store
from suite.results import sql as sql_mod
from suite.results import writer as writer_mod
from suite.results.sql import key_hash
from storedump import dump_text, store_from_dump

DUMP = "store-0.3.6.sql.gz"
KEY = {(v, k): f"{'ab' if v == 'base' else 'f0'}{k:02d}5e410089fb026b1c" for v in ("base", "fast") for k in (1, 2, 3, 4)}


@pytest.fixture
def store(tmp_path):
    with Store(store_from_dump(tmp_path / "old.sqlite", DUMP)) as st:
        yield st


def test_the_dump_is_a_schema_7_store():
    con = sqlite3.connect(":memory:")
    con.executescript(dump_text(DUMP))
    assert con.execute("SELECT version FROM schema_version").fetchone() == (7,)
    assert "khash" not in {r[1] for r in con.execute("PRAGMA table_info(cases)")}
    assert "case_key" in {r[1] for r in con.execute("PRAGMA table_info(samples)")}
    assert con.execute("SELECT count(*) FROM samples").fetchone() == (12,)  # 4 ok cases x 3
    assert con.execute("SELECT count(*) FROM artifacts").fetchone() == (4,)


def test_a_0_3_6_store_migrates_to_the_key_hash_and_case_ids(store):
    con = store.conn
    assert store.schema_version == SCHEMA_VERSION == 8
    rows = con.execute("SELECT id, key, khash FROM cases ORDER BY id").fetchall()
    assert [r[1] for r in rows] == sorted(KEY.values())  # ids kept: 0.3.6 numbered the first batch in key order
    assert all(h == key_hash(k) for _, k, h in rows)
    # no index of the text keys is left; the hashes' is there
    indexes = {r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'cases'")}
    assert indexes == {"cases_technique", "cases_khash"}
    ids = {k: i for i, k, _ in rows}
    assert sorted(con.execute("SELECT case_id, count(*) FROM samples GROUP BY case_id")) == sorted(
        (ids[KEY[v, k]], 3) for v in ("base", "fast") for k in (1, 2))
    assert sorted(con.execute("SELECT case_id, data FROM artifacts")) == sorted(
        (ids[KEY[v, k]], '{"trace":{"k":%d}}' % k) for v in ("base", "fast") for k in (1, 2))


def test_a_0_3_6_store_reads_its_runs_results_and_history(store):
    statuses = {(r["variant"], r["param.k"]): r["status"] for _, r in store.cases().iterrows()}
    assert statuses == {(v, k): s for v in ("base", "fast") for k, s in ((1, "ok"), (2, "ok"), (3, "failed"),
                                                                        (4, "skipped"))}
    assert store.cases(2).groupby("outcome").size().to_dict() == {"cached": 4, "computed": 4}
    for run, factor in ((1, 1.0), (3, 2.0)):
        wide = store.metrics(run, wide=True)
        got = {(v, int(k)): t for v, k, t in zip(wide["variant"], wide["param.k"], wide["time"])}
        assert got == {("base", 1): 0.5 * factor, ("fast", 1): 0.75 * factor, ("base", 2): 1.0 * factor,
                       ("fast", 2): 1.25 * factor}
    over = {r["run_id"]: r["overrides"] for r in store.case_records(None, key=KEY["base", 1])}
    assert over == {3: {"network.0.bandwidth": "1 Gbit/s"}}
    asked = {run: store.cases(run, key=KEY["base", 1])["overrides"][0] for run in (1, 2)}
    assert asked == {1: {"network.0.bandwidth": "1 Gbit/s"}, 2: {"network.0.bandwidth": "2 Gbit/s"}}
    res = store.result(KEY["fast", 2])
    assert res.metrics["time"].value == 2.5 and res.metrics["time"].samples == (0.2, 0.4, 4.0)
    assert res.artifacts == {"trace": {"k": 2}}
    assert [(h["run_id"], h["runs"], h["metrics"]) for h in store.history(KEY["base", 1])] == [
        (1, [1, 2], {"time": 0.5, "gain": -1.5}), (3, [3], {"time": 1.0, "gain": -1.5})]
    assert store.statuses([KEY["fast", 3], "nokey"]) == {KEY["fast", 3]: ("failed", "ValueError: k = 3")}
    assert store.ok_keys(KEY.values()) == {KEY[v, k] for v in ("base", "fast") for k in (1, 2)}
    assert store.case(KEY["base", 4])["status"] == "skipped"


def test_a_migrated_0_3_6_store_takes_a_rerun_and_new_cases(store):
    run = store.begin_run("after migration")
    ident = {"key": KEY["fast", 2], "technique": "oldstore", "variant": "fast", "fidelity": "model",
             "params": {"k": 2}, "overrides": {}, "seed": 0, "code": "c", "env": "e", "inputs": {}}
    store.add_outcome(ident, {"key": KEY["fast", 2], "status": "ok", "metrics": [["time", 9.0, "s", "lower"]],
                              "samples": {"time": [9.0]}, "artifacts": {"trace": {"k": 9}}}, run, replace=True)
    store.add_outcome({**ident, "key": "new"}, {"key": "new", "status": "ok", "metrics": [["time", 1.0, "s", "lower"]],
                                                "samples": {"time": [1.0, 2.0]}}, run)
    store.add_outcome({**ident, "key": KEY["base", 1]}, {"key": KEY["base", 1], "status": "failed", "error": "E"}, run)
    store.finish_run(run, "done", {"total": 3})
    res = store.result(KEY["fast", 2])
    assert res.metrics["time"].samples == (9.0,) and res.artifacts == {"trace": {"k": 9}}
    assert store.result("new").metrics["time"].samples == (1.0, 2.0)
    assert store.statuses([KEY["base", 1]]) == {KEY["base", 1]: ("ok", None)}  # a failure never replaces an ok case
    assert [h["status"] for h in store.history(KEY["base", 1])] == ["ok", "ok", "failed"]
    assert store.conn.execute("SELECT count(*) FROM cases").fetchone() == (9,)


def test_keys_sharing_a_hash_never_read_each_others_rows(tmp_path, monkeypatch):
    """Every key hashed alike (a collision for every pair): each case is still written, replaced,
    linked and read as its own, since every look-up checks the key itself."""
    same = lambda key: 7  # noqa: E731
    for mod in (sql_mod, writer_mod):  # the readers hash through suite.results.sql's key_args / key_lists
        monkeypatch.setattr(mod, "key_hash", same)
    ident = {"technique": "t", "variant": "v", "fidelity": "model", "params": {}, "overrides": {}, "seed": 0}
    with Store(tmp_path / "s.sqlite", batch_seconds=3600) as st:
        run = st.begin_run()
        for i, key in enumerate(("a", "b", "c")):
            st.add_outcome({**ident, "key": key}, {"key": key, "status": "ok", "metrics": [["y", float(i), "s", "lower"]],
                                                   "samples": {"y": [float(i)]}, "artifacts": {"i": i}}, run)
        st.add_outcome({**ident, "key": "d"}, {"key": "d", "status": "failed", "error": "E"}, run)
        st.flush()
        run2 = st.begin_run()
        st.link_cached(run2, ["b"])
        st.add_outcome({**ident, "key": "c"}, {"key": "c", "status": "ok", "metrics": [["y", 5.0, "s", "lower"]]}, run2,
                       replace=True)
        st.flush()
        assert set(st.conn.execute("SELECT khash FROM cases")) == {(7,)}
        assert [(st.result(k).metrics["y"].value, st.result(k).artifacts) for k in ("a", "b")] == [(0.0, {"i": 0}),
                                                                                                 (1.0, {"i": 1})]
        assert st.result("c").metrics["y"].value == 5.0 and st.result("c").artifacts == {}
        assert st.statuses(["a", "d", "e"]) == {"a": ("ok", None), "d": ("failed", "E")}
        assert st.ok_keys(["a", "d", "e"]) == {"a"}
        assert dict(zip(st.cases(run2)["key"], st.cases(run2)["outcome"])) == {"b": "cached", "c": "computed"}
        assert [h["metrics"] for h in st.history("c")] == [{"y": 2.0}, {"y": 5.0}]
        assert st.case("b")["key"] == "b" and len(st.cases(key="a")) == 1


def test_a_case_keys_hash_is_its_first_8_bytes_by_hand_and_sorts_as_the_keys_do():
    """cases.khash = int(first 16 hex digits, 16) - 2^63 (the sort order the writer's in-order
    batches rely on), counted by hand here, not by the function."""
    assert key_hash("8000000000000000abcd") == 0  # 2^63 - 2^63
    assert key_hash("0000000000000000ffff") == -(2 ** 63)
    assert key_hash("ffffffffffffffff0000") == 2 ** 63 - 1
    assert key_hash("80000000000000010000") == 1
    keys = ["0f3a000000000000aaaa", "7fffffffffffffff0000", "8000000000000001ffff", "c0ffee0000000000beef"]
    assert [key_hash(k) for k in keys] == sorted(key_hash(k) for k in keys)  # key order is hash order
    assert -(2 ** 63) <= key_hash("not a hex key at all") < 2 ** 63  # any other text: a 64-bit hash too
