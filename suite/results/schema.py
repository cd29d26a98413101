"""The store's schema: its tables, the migrations between versions, and opening a store file.

A store is one SQLite file in WAL mode. :func:`open_writable` creates it (or upgrades it with
:data:`MIGRATIONS`); :func:`open_readonly` opens it for reading only; neither ever writes to a
SQLite file of another application.

Tables (schema version :data:`SCHEMA_VERSION`)
----------------------------------------------
``runs``
    ``id, started, finished, host, platform, python, packages (JSON name -> version),
    plugins (JSON distribution -> version), git_commit, command, status`` (``running``, ``done``,
    ``failed`` (some case failed), ``interrupted``), and the counts ``total, computed, cached,
    ok, failed, skipped``.
``cases``
    one row per case key: ``id`` (an integer the store gives each case once, schema 7), ``key``,
    ``khash`` (:func:`suite.results.sql.key_hash` of the key, a signed 64-bit integer, indexed by
    ``cases_khash``; schema 8: a case is looked up by its hash *and* its key
    (:data:`suite.results.sql.KEY_IN`), so two keys sharing a hash never read each other's row;
    until schema 7 the text key had a UNIQUE index), ``identity`` (JSON of what the key hashes beyond the columns
    below: the code fingerprint, the environment and the referenced inputs' hashes,
    ``{"code": ..., "env": ..., "inputs": {...}}``; :meth:`suite.results.store.Store.case` gives the whole identity,
    and stores written before this kept it whole), ``technique,
    technique_version, variant, fidelity, profile, profile_hash, workload, workload_hash,
    params (JSON), overrides (JSON profile field -> value), seed, status`` (``ok``, ``failed``,
    ``timeout``, ``crashed``, ``skipped``), ``error`` (one line), ``traceback, duration`` (s,
    evaluation only), ``run_id`` (the run that computed it), ``created``, ``result_id`` (the
    ``results`` row it holds). This is the case's *current* result (the latest ok one).
``results``
    one row per computation of a case, never overwritten (schema 5): ``id, case_key, run_id``
    (the run that computed it), ``status, error, traceback, duration, created, metrics`` (JSON
    list of ``[name, value, unit, direction]``: all of a case's metrics in one row) and
    ``samples`` (JSON metric -> list, or NULL), ``fields_id`` (the ``field_sets`` row of the
    profile fields the evaluation was recorded reading, or NULL when it was not recorded; schema
    6, a JSON list in ``fields`` before), ``case_id`` (the case's ``cases.id``, schema 7: the
    results of a case are found by it).
``field_sets``
    ``id, fields`` (JSON list of profile field paths, sorted, unique): each distinct set of fields
    read is stored once (schema 6: a sweep's cases read a handful of distinct sets, ~300 B each).
``run_cases``
    ``run_id, case_id`` (``cases.id``; schema 7), ``case_key, outcome`` (``computed`` or ``cached``), ``result_id`` (the ``results``
    row the run produced, or the one it reused) and ``overrides`` (JSON: the profile overrides
    *this* run asked for): every case a run asked for, including those it found already
    stored. A run's cases, metrics and overrides are read through these (:meth:`suite.results.store.Store.cases`,
    :meth:`suite.results.store.Store.metrics`), so a later ``--rerun`` never changes what an earlier run shows.
    Indexed by ``case_id`` too (``run_cases_case``, 0.3.4: a case's history and an export's runs
    column find a case's links without a scan; a store 0.3.3 wrote gets it when opened for writing).
``metrics``
    a view (schema 5; a table before): long format ``case_key, name, value, unit, direction`` of
    each case's current result, read from its ``results`` row (metrics are stored once).
``samples``
    raw repeated measurements: ``case_id, metric, idx, value`` (of the current result; by
    ``cases.id`` since schema 8, by ``case_key`` before).
``artifacts``
    ``case_id, data`` (JSON object; of the current result only; by ``cases.id`` since schema 8,
    by ``case_key`` before).
``judgements``
    ``key, data, created``: ``suite reproduce``'s judged claim outcomes (JSON), keyed by
    everything a judgement depends on (:mod:`suite.runner.reproduce`: the claim, the technique's
    and the core's code, the case keys and :meth:`suite.results.store.Store.content_digests` of their results), so a
    cached reproduce re-derives nothing and an entry is never stale.

A case already stored with status ``ok`` is never overwritten by a non-ok outcome; ``--rerun``
replaces an ok case by a new ok one.

A suite older than this schema refuses a store written in it (``check_version``: "schema version
N is newer than this suite's"), for reading and for writing; a store of an older schema is
migrated when opened for writing (:data:`MIGRATIONS`, one transaction) and refused read-only
until then.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path

from suite.errors import StoreError
from suite.results.integrity import store_error
from suite.results.sql import Tx, key_hash

__all__ = ["SCHEMA_VERSION", "MIGRATIONS", "OK", "FAILED_STATUSES", "STATUSES", "IDENTITY_COLUMNS", "CASE_COLUMNS",
           "open_writable", "open_readonly", "check_version", "migrate", "schema_version", "CASE_RESULTS_INDEX",
           "CASES_KHASH_INDEX"]

SCHEMA_VERSION = 8
OK = "ok"
FAILED_STATUSES = ("failed", "timeout", "crashed")
STATUSES = (OK, "skipped") + FAILED_STATUSES

#: the long-format metrics of each case's current (ok) result, from its ``results`` row
METRICS_VIEW = ("SELECT c.key AS case_key, json_extract(j.value, '$[0]') AS name, json_extract(j.value, '$[1]') AS value, "
                 "json_extract(j.value, '$[2]') AS unit, json_extract(j.value, '$[3]') AS direction "
                 "FROM cases c JOIN results r ON r.id = c.result_id, json_each(r.metrics) j WHERE c.status = 'ok'")

SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    started TEXT NOT NULL,
    finished TEXT,
    host TEXT, platform TEXT, python TEXT,
    packages TEXT, plugins TEXT, git_commit TEXT, command TEXT,
    status TEXT NOT NULL DEFAULT 'running',
    pid INTEGER,
    total INTEGER DEFAULT 0, computed INTEGER DEFAULT 0, cached INTEGER DEFAULT 0,
    ok INTEGER DEFAULT 0, failed INTEGER DEFAULT 0, skipped INTEGER DEFAULT 0
);
CREATE TABLE IF NOT EXISTS cases (
    id INTEGER PRIMARY KEY,
    key TEXT NOT NULL, khash INTEGER NOT NULL,
    identity TEXT NOT NULL,
    technique TEXT NOT NULL, technique_version TEXT,
    variant TEXT, fidelity TEXT,
    profile TEXT, profile_hash TEXT, workload TEXT, workload_hash TEXT,
    params TEXT, overrides TEXT, seed INTEGER,
    status TEXT NOT NULL, error TEXT, traceback TEXT, duration REAL,
    run_id INTEGER REFERENCES runs(id), created TEXT NOT NULL, result_id INTEGER
);
CREATE INDEX IF NOT EXISTS cases_technique ON cases(technique, variant);
CREATE TABLE IF NOT EXISTS run_cases (
    run_id INTEGER NOT NULL, case_id INTEGER NOT NULL, case_key TEXT NOT NULL, outcome TEXT NOT NULL,
    result_id INTEGER, overrides TEXT,
    PRIMARY KEY (run_id, case_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT, case_key TEXT NOT NULL, run_id INTEGER,
    status TEXT NOT NULL, error TEXT, traceback TEXT, duration REAL, created TEXT NOT NULL,
    metrics TEXT, samples TEXT, fields_id INTEGER, case_id INTEGER
);
CREATE TABLE IF NOT EXISTS field_sets (id INTEGER PRIMARY KEY, fields TEXT NOT NULL UNIQUE);
CREATE VIEW IF NOT EXISTS metrics AS """ + METRICS_VIEW + """;
CREATE TABLE IF NOT EXISTS samples (
    case_id INTEGER NOT NULL, metric TEXT NOT NULL, idx INTEGER NOT NULL, value REAL,
    PRIMARY KEY (case_id, metric, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS fields_read (
    technique TEXT NOT NULL, code TEXT NOT NULL, variant TEXT NOT NULL, fidelity TEXT NOT NULL,
    fields TEXT NOT NULL,
    PRIMARY KEY (technique, code, variant, fidelity)
);
CREATE TABLE IF NOT EXISTS artifacts (case_id INTEGER PRIMARY KEY, data TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS judgements (key TEXT PRIMARY KEY, data TEXT NOT NULL, created TEXT NOT NULL);
"""

#: Migrations: ``MIGRATIONS[n](conn)`` upgrades a store from schema version ``n`` to ``n + 1``.
#: Add one function per schema change and bump :data:`SCHEMA_VERSION`.
def _v1_to_v2(conn: sqlite3.Connection) -> None:
    """Runs record the coordinating process id, so a run whose process is gone shows as interrupted."""
    cols = {r[1] for r in conn.execute("PRAGMA table_info(runs)")}
    if "pid" not in cols:
        conn.execute("ALTER TABLE runs ADD COLUMN pid INTEGER")


def _v2_to_v3(conn: sqlite3.Connection) -> None:
    """The profile fields each (technique code, variant, fidelity) was seen to read."""
    conn.execute("CREATE TABLE IF NOT EXISTS fields_read (technique TEXT NOT NULL, code TEXT NOT NULL, "
                 "variant TEXT NOT NULL, fidelity TEXT NOT NULL, fields TEXT NOT NULL, "
                 "PRIMARY KEY (technique, code, variant, fidelity))")


def _v3_to_v4(conn: sqlite3.Connection) -> None:
    """A cache of ``suite reproduce``'s judged claim outcomes (issue 19: a cached reproduce spent
    2 s re-running every measured claim's bootstrap)."""
    conn.execute("CREATE TABLE IF NOT EXISTS judgements (key TEXT PRIMARY KEY, data TEXT NOT NULL, "
                 "created TEXT NOT NULL)")


def _v4_to_v5(conn: sqlite3.Connection) -> None:
    """Every run keeps its own results (issue 39: a ``--rerun`` rewrote what every earlier run
    showed, and a cached case showed the overrides of the run that computed it first).

    Adds the ``results`` table (one row per computation, all metrics in one row), and
    ``run_cases.result_id`` / ``run_cases.overrides`` / ``cases.result_id``. What a 4 store kept
    is one result per case (earlier values were overwritten then): it becomes that case's one
    ``results`` row, linked from every run that asked for the case, with the case's stored
    overrides."""
    def add(table: str, col: str, decl: str) -> None:
        if col not in {r[1] for r in conn.execute(f"PRAGMA table_info({table})")}:
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {col} {decl}")

    conn.execute("CREATE TABLE IF NOT EXISTS results (id INTEGER PRIMARY KEY AUTOINCREMENT, case_key TEXT NOT NULL, "
                 "run_id INTEGER, status TEXT NOT NULL, error TEXT, traceback TEXT, duration REAL, "
                 "created TEXT NOT NULL, metrics TEXT, samples TEXT, fields TEXT)")
    conn.execute("CREATE INDEX IF NOT EXISTS results_case ON results(case_key)")
    add("cases", "result_id", "INTEGER")
    add("run_cases", "result_id", "INTEGER")
    add("run_cases", "overrides", "TEXT")
    if conn.execute("SELECT 1 FROM cases WHERE result_id IS NULL LIMIT 1").fetchone():  # else nothing to move
        _v4_results(conn)
    conn.execute("UPDATE run_cases SET result_id = (SELECT c.result_id FROM cases c WHERE c.key = run_cases.case_key), "
                 "overrides = (SELECT c.overrides FROM cases c WHERE c.key = run_cases.case_key) "
                 "WHERE result_id IS NULL")
    # the metrics live in their results row now: the long table becomes a view of them
    if conn.execute("SELECT type FROM sqlite_master WHERE name = 'metrics'").fetchone() == ("table",):
        conn.execute("DROP TABLE metrics")
    conn.execute(f"CREATE VIEW IF NOT EXISTS metrics AS {METRICS_VIEW}")


def _v4_results(conn: sqlite3.Connection) -> None:
    """A version 4 store's one result per case (from its ``metrics`` table and its samples, both
    keyed by case key) becomes the case's ``results`` row."""
    conn.execute(
        "INSERT INTO results (case_key, run_id, status, error, traceback, duration, created, metrics, samples) "
        "SELECT c.key, c.run_id, c.status, c.error, c.traceback, c.duration, c.created, "
        "(SELECT json_group_array(json_array(m.name, m.value, m.unit, m.direction)) "
        " FROM (SELECT * FROM metrics m WHERE m.case_key = c.key ORDER BY m.name) m), "
        "(SELECT json_group_object(s.metric, json(s.vals)) FROM "
        " (SELECT metric, json_group_array(value) AS vals FROM "
        "  (SELECT metric, value FROM samples WHERE case_key = c.key ORDER BY metric, idx) GROUP BY metric) s "
        " HAVING count(*) > 0) "
        "FROM cases c WHERE c.result_id IS NULL ORDER BY c.created, c.key")
    conn.execute("UPDATE cases SET result_id = (SELECT max(r.id) FROM results r WHERE r.case_key = cases.key) "
                 "WHERE result_id IS NULL")


def _v5_to_v6(conn: sqlite3.Connection) -> None:
    """Each distinct set of profile fields read is stored once, in ``field_sets`` (issue 44: with
    the reads recorded for every case, a JSON list of ~12 paths per result took a sweep of a
    communication model from 1,465 to 1,767 B per case). ``results.fields`` (JSON text) becomes ``results.fields_id``."""
    conn.execute("CREATE TABLE IF NOT EXISTS field_sets (id INTEGER PRIMARY KEY, fields TEXT NOT NULL UNIQUE)")
    cols = {r[1] for r in conn.execute("PRAGMA table_info(results)")}
    if "fields_id" not in cols:
        conn.execute("ALTER TABLE results ADD COLUMN fields_id INTEGER")
    if "fields" not in cols:  # results was created by this schema (a version 4 store's migration)
        return
    conn.execute("INSERT OR IGNORE INTO field_sets (fields) SELECT fields FROM results WHERE fields IS NOT NULL "
                 "ORDER BY id")
    conn.execute("UPDATE results SET fields_id = (SELECT f.id FROM field_sets f WHERE f.fields = results.fields) "
                 "WHERE fields IS NOT NULL")
    try:
        conn.execute("ALTER TABLE results DROP COLUMN fields")
    except sqlite3.OperationalError:  # SQLite before 3.35 cannot drop a column: the texts are left unread
        conn.execute("UPDATE results SET fields = NULL")


#: a new store's index of each case's results (on ``results.case_id``: a migration adds the column first)
CASE_RESULTS_INDEX = "CREATE INDEX IF NOT EXISTS results_case_id ON results(case_id)"
#: the runs that asked for a case (``history``, an export's ``runs`` column): ``run_cases`` is keyed
#: by run first. New cases' ids grow, so it grows at its end
RUN_CASES_INDEX = "CREATE INDEX IF NOT EXISTS run_cases_case ON run_cases(case_id)"


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def _rebuild(conn: sqlite3.Connection, table: str, copy: str, create: str | None = None) -> None:
    """Replace *table* by the layout *create* (default: the one :data:`SCHEMA` gives it now), its
    rows copied by *copy* (columns and a SELECT that reads the old table as ``{old}``)."""
    if create is None:
        create = next(s for s in SCHEMA.split(";") if f"CREATE TABLE IF NOT EXISTS {table} (" in s)
    conn.execute(f"ALTER TABLE {table} RENAME TO {table}_old")
    conn.execute(create)
    conn.execute(f"INSERT INTO {table} {copy.format(old=table + '_old')}")
    conn.execute(f"DROP TABLE {table}_old")


def _v6_to_v7(conn: sqlite3.Connection) -> None:
    """Each case gets an integer ``cases.id``, and a case's results and run links are found by it
    (issue 44, flat at scale: the case keys are hashes, so every index keyed by one takes each
    new case on a random page, and a commit of a batch rewrote a page of each of three such
    indexes per case, 2 KB written per case at 100k cases and 18 KB at 1M; the results' index and
    the run links now grow at their end, and only ``cases``' own key index is random).

    ``cases`` is rebuilt with ``id`` (its old row id: the order cases were stored in),
    ``results.case_id`` is filled in and indexed in place of ``results(case_key)``, and
    ``run_cases`` is rebuilt keyed by ``(run_id, case_id)`` and indexed by ``case_id``. Every row is
    kept: results and links of a key with no case row get a negative case id
    (:func:`_number_orphans`). What any reader returns is unchanged."""
    if "id" not in _columns(conn, "cases"):
        conn.execute("DROP VIEW IF EXISTS metrics")  # names cases: dropped while the table is rebuilt
        conn.execute("DROP INDEX IF EXISTS cases_technique")
        cols = ", ".join(_V7_CASE_COLUMNS)
        _rebuild(conn, "cases", f"(id, {cols}) SELECT rowid, {cols} FROM {{old}} ORDER BY rowid", _V7_CASES)
        conn.execute("CREATE INDEX IF NOT EXISTS cases_technique ON cases(technique, variant)")
        conn.execute(f"CREATE VIEW IF NOT EXISTS metrics AS {METRICS_VIEW}")
    if "case_id" not in _columns(conn, "results"):
        conn.execute("ALTER TABLE results ADD COLUMN case_id INTEGER")
    conn.execute("UPDATE results SET case_id = (SELECT c.id FROM cases c WHERE c.key = results.case_key) "
                 "WHERE case_id IS NULL")
    _number_orphans(conn)
    conn.execute("UPDATE results SET case_id = -(SELECT n.id FROM temp.orphan_keys n WHERE n.key = results.case_key) "
                 "WHERE case_id IS NULL")
    conn.execute("DROP INDEX IF EXISTS results_case")
    conn.execute(CASE_RESULTS_INDEX)
    if "case_id" not in _columns(conn, "run_cases"):
        _rebuild(conn, "run_cases", "(run_id, case_id, case_key, outcome, result_id, overrides) "
                                    "SELECT o.run_id, COALESCE(c.id, -n.id), o.case_key, o.outcome, o.result_id, "
                                    "o.overrides FROM {old} o LEFT JOIN cases c ON c.key = o.case_key "
                                    "LEFT JOIN temp.orphan_keys n ON n.key = o.case_key")
    conn.execute("DROP TABLE temp.orphan_keys")
    conn.execute(RUN_CASES_INDEX)


def _number_orphans(conn: sqlite3.Connection) -> None:
    """``temp.orphan_keys``: each key that results or run links of a version 6 store name but
    ``cases`` does not (0.3.2 never wrote one; a store edited by hand may hold some), numbered
    1, 2, ... in key order. Their rows are kept, named by case id ``-n``: no case row has it,
    so every reader that joins ``cases`` skips them as it did, and
    :meth:`suite.results.store.Store.history` of such a key still lists its results and the runs
    that used them, as 0.3.2 did (by key)."""
    conn.execute("CREATE TEMP TABLE orphan_keys (id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE)")
    conn.execute("INSERT INTO temp.orphan_keys (key) SELECT case_key FROM results WHERE case_id IS NULL UNION "
                 "SELECT case_key FROM run_cases WHERE case_key NOT IN (SELECT key FROM cases) ORDER BY 1")


#: the ``cases`` table of schema 7 (its key UNIQUE, no hash), which :func:`_v6_to_v7` builds
_V7_CASES = """CREATE TABLE IF NOT EXISTS cases (
    id INTEGER PRIMARY KEY, key TEXT NOT NULL UNIQUE, identity TEXT NOT NULL,
    technique TEXT NOT NULL, technique_version TEXT, variant TEXT, fidelity TEXT,
    profile TEXT, profile_hash TEXT, workload TEXT, workload_hash TEXT,
    params TEXT, overrides TEXT, seed INTEGER,
    status TEXT NOT NULL, error TEXT, traceback TEXT, duration REAL,
    run_id INTEGER REFERENCES runs(id), created TEXT NOT NULL, result_id INTEGER
)"""

#: the case-key hashes' index (schema 8): a look-up by key goes through it (:data:`KEY_IN`)
CASES_KHASH_INDEX = "CREATE INDEX IF NOT EXISTS cases_khash ON cases(khash)"


def _v7_to_v8(conn: sqlite3.Connection) -> None:
    """Cases are found by an integer hash of their key, and samples and artifacts name their case
    by ``cases.id`` (issue 44, flat at scale: the case keys are hashes, so the UNIQUE index of the
    20-character text keys took each new case on a random page, and once a store held more of its
    pages than a commit had cases, each case dirtied a page of it: the commits grew from 14-18 to
    28 us/case from 10k to 1M cases; ``samples`` and ``artifacts``, keyed by the text key, did the
    same for cases that have them).

    ``cases`` is rebuilt without the UNIQUE key index, with ``khash``
    (:func:`suite.results.sql.key_hash` of its key, half the bytes of an index entry), indexed by
    ``cases_khash``; ``samples`` and ``artifacts`` are rebuilt keyed by ``case_id``, so a new
    case's rows go at their end. Samples and artifacts of a key with no case row (only a store
    edited by hand has any) keep the negative case id the migration to schema 7 gave that key's
    results, or a new one below every id in use. What any reader returns is unchanged."""
    conn.create_function("suite_key_hash", 1, key_hash, deterministic=True)
    if "khash" not in _columns(conn, "cases"):
        conn.execute("DROP VIEW IF EXISTS metrics")  # names cases: dropped while the table is rebuilt
        conn.execute("DROP INDEX IF EXISTS cases_technique")
        cols = ", ".join(_V7_CASE_COLUMNS)
        _rebuild(conn, "cases", f"(id, khash, {cols}) SELECT id, suite_key_hash(key), {cols} FROM {{old}} ORDER BY id")
        conn.execute("CREATE INDEX IF NOT EXISTS cases_technique ON cases(technique, variant)")
        conn.execute(f"CREATE VIEW IF NOT EXISTS metrics AS {METRICS_VIEW}")
    conn.execute(CASES_KHASH_INDEX)
    if "case_key" in _columns(conn, "samples") or "case_key" in _columns(conn, "artifacts"):
        _number_case_ids(conn)
        for table, cols in (("samples", "metric, idx, value"), ("artifacts", "data")):
            if "case_key" in _columns(conn, table):
                _rebuild(conn, table, f"(case_id, {cols}) SELECT n.id, {', '.join('o.' + c for c in cols.split(', '))} "
                                      "FROM {old} o JOIN temp.case_ids n ON n.key = o.case_key")
        conn.execute("DROP TABLE temp.case_ids")


def _number_case_ids(conn: sqlite3.Connection) -> None:
    """``temp.case_ids``: the case id of each key that a version 7 store's samples or artifacts
    name: its ``cases.id``; else (no case row) the negative id its results have (:func:`_number_orphans`);
    else a new one, below every id in use, in key order."""
    conn.execute("CREATE TEMP TABLE case_ids (key TEXT PRIMARY KEY, id INTEGER)")
    named = " UNION ".join(f"SELECT case_key FROM {t}" for t in ("samples", "artifacts") if "case_key" in _columns(conn, t))
    conn.execute(f"INSERT INTO temp.case_ids (key) {named}")
    conn.execute("UPDATE temp.case_ids SET id = (SELECT c.id FROM cases c WHERE c.khash = suite_key_hash(case_ids.key) "
                 "AND c.key = case_ids.key)")
    conn.execute("UPDATE temp.case_ids SET id = (SELECT min(r.case_id) FROM results r WHERE r.case_id < 0 "
                 "AND r.case_key = case_ids.key) WHERE id IS NULL")
    low = conn.execute("SELECT min(0, COALESCE((SELECT min(case_id) FROM results), 0), "
                       "COALESCE((SELECT min(case_id) FROM run_cases), 0), "
                       "COALESCE((SELECT min(id) FROM temp.case_ids), 0))").fetchone()[0]
    conn.execute("UPDATE temp.case_ids SET id = ? - (SELECT count(*) FROM temp.case_ids o WHERE o.id IS NULL "
                 "AND o.key <= case_ids.key) WHERE id IS NULL", (low,))


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4,
                                                                4: _v4_to_v5, 5: _v5_to_v6, 6: _v6_to_v7,
                                                                7: _v7_to_v8}

#: the identity fields (Case.identity) with a column of their own; the identity column holds the rest
IDENTITY_COLUMNS = ("technique", "technique_version", "variant", "fidelity", "profile", "profile_hash", "workload",
                     "workload_hash", "params", "overrides", "seed")

#: the ``cases`` columns but ``id`` (schema 8: with ``khash``)
CASE_COLUMNS = ("key", "khash", "identity", "technique", "technique_version", "variant", "fidelity", "profile",
                 "profile_hash", "workload", "workload_hash", "params", "overrides", "seed", "status",
                 "error", "traceback", "duration", "run_id", "created", "result_id")
#: the ``cases`` columns but ``id`` of schema 7
_V7_CASE_COLUMNS = tuple(c for c in CASE_COLUMNS if c != "khash")

#: a ``results`` row with its id and its case's id given (the writer numbers a batch's rows itself
#: and reads each case's id from its upsert: no look-up by key), before its ``VALUES``
INSERT_RESULT = ("INSERT INTO results (id, case_key, run_id, status, error, traceback, duration, created, metrics, "
                 "samples, fields_id, case_id)")

#: a ``cases`` row with its id (``id`` and :data:`CASE_COLUMNS`), before its ``VALUES``: the writer
#: gives a new case the next id and a stored one its own (found by key), and decides itself which
#: stored case a row replaces (an ok case only by a new ok one)
INSERT_CASE = f"INSERT INTO cases (id, {', '.join(CASE_COLUMNS)})"
#: after an :data:`INSERT_CASE`'s ``VALUES``: a row of a stored case replaces its columns in place
UPSERT_TAIL = " ON CONFLICT(id) DO UPDATE SET " + ", ".join(f"{c}=excluded.{c}" for c in CASE_COLUMNS)


def schema_version(conn: sqlite3.Connection) -> int:
    """The schema version the store at *conn* is written in."""
    return int(conn.execute("SELECT version FROM schema_version").fetchone()[0])


def refuse_foreign(path: Path) -> None:
    """StoreError unless *path* is missing, empty or a suite store: an existing SQLite file of
    another application (or any other file) is never written to (no tables added, no switch to WAL)."""
    if not path.exists() or path.stat().st_size == 0:
        return
    try:
        with open(path, "rb") as fh:
            head = fh.read(16)
    except OSError as exc:
        raise StoreError(f"store {str(path)!r}: cannot read: {exc.strerror or exc}") from None
    if head != b"SQLite format 3\x00":
        raise StoreError(f"store {str(path)!r}: expected a dlsys-suite store (SQLite), got another kind of file")
    try:
        conn = sqlite3.connect(f"file:{path.resolve()}?mode=ro", uri=True, timeout=60)
        try:
            tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        raise StoreError(f"store {str(path)!r}: cannot open: {exc}") from None
    if tables and "schema_version" not in tables:
        shown = ", ".join(sorted(tables)[:5])
        raise StoreError(f"store {str(path)!r}: expected a dlsys-suite store, got another application's "
                         f"SQLite database (tables {shown}); give another --store path")


def open_readonly(path: Path) -> sqlite3.Connection:
    """A read-only connection to the existing store at *path*, its schema version checked.

    Raises
    ------
    StoreError
        No such file, not a store, or a schema version that needs migrating or is newer.
    """
    if not path.exists():
        raise StoreError(f"store {str(path)!r} does not exist (run `suite run` first, or give --store PATH)")
    err: Exception | None = None
    # a store on a read-only file or folder cannot even create the WAL's shared-memory file:
    # fall back to immutable mode (nobody can be writing it)
    for query in ("mode=ro", "mode=ro&immutable=1"):
        try:
            conn = sqlite3.connect(f"file:{path.resolve()}?{query}", uri=True, timeout=60, check_same_thread=False)
        except sqlite3.DatabaseError as exc:
            err = exc
            continue
        try:
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError as exc:
            err = exc
            conn.close()
            continue
        try:
            check_version(conn, path, None)
        except BaseException:
            conn.close()
            raise
        return conn
    raise StoreError(f"store {str(path)!r}: cannot open: {err}") from None


def _connect(path: Path, lock: threading.RLock) -> sqlite3.Connection:
    """One attempt at opening *path* for writing: WAL mode, the tables created if missing."""
    conn = sqlite3.connect(str(path), timeout=60, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA busy_timeout = 60000")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        # 64 MiB of page cache (SQLite's default is 2 MiB): the key indexes of a million-case
        # store stay in memory, so the cost of an insert stays flat
        conn.execute("PRAGMA cache_size = -65536")
        # a checkpoint (copying the WAL's pages into the store) when the WAL holds 64 MiB, not
        # SQLite's 4 MiB: a commit into a large store dirties pages all over the case-key index,
        # and each checkpoint copies each page once however many commits rewrote it since the last
        # (1M-case sweep, 600k-800k cases: 7.3 KB written per case against 9.1, COMMIT 9.4 us/case
        # against 12.5; `benchmarks/bench_scale.py`'s children instrumented, run side by side, load 10)
        # (pages: 64 MiB at the default 4 KiB page), and the WAL file cut back to 64 MiB after a
        # checkpoint (without a limit it keeps its largest size on disk after every run)
        conn.execute("PRAGMA wal_autocheckpoint = 16384")
        conn.execute("PRAGMA journal_size_limit = 67108864")
        with Tx(conn, lock):
            for stmt in SCHEMA.strip().split(";"):
                if stmt.strip():
                    conn.execute(stmt)
            row = conn.execute("SELECT version FROM schema_version").fetchone()
            if row is None:  # a new store
                conn.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
                conn.execute(CASE_RESULTS_INDEX)
                conn.execute(RUN_CASES_INDEX)
                conn.execute(CASES_KHASH_INDEX)
            elif row[0] == SCHEMA_VERSION:  # 0.3.3 wrote schema 7 without it (older ones get it migrating)
                conn.execute(RUN_CASES_INDEX)
    except BaseException:
        conn.close()
        raise
    return conn


def open_writable(path: Path, lock: threading.RLock) -> sqlite3.Connection:
    """A connection to the store at *path* for writing, created if missing and migrated to
    :data:`SCHEMA_VERSION` (write transactions hold *lock*).

    Two processes opening a new store at once: switching to WAL needs a moment of exclusive
    access and SQLite reports "database is locked" without waiting on the busy timeout, so the
    set-up is retried for up to 60 s before it is an error.

    Raises
    ------
    StoreError
        Another kind of file, a store of a newer schema version, a lock held past 60 s, a damaged file.
    """
    refuse_foreign(path)
    deadline = time.monotonic() + 60
    while True:
        try:
            conn = _connect(path, lock)
            break
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) and time.monotonic() < deadline:
                time.sleep(0.05)
                continue
            raise store_error(path, exc) from None
        except sqlite3.DatabaseError as exc:
            raise store_error(path, exc) from None
    try:
        check_version(conn, path, lock)
    except BaseException:
        conn.close()
        raise
    return conn


def check_version(conn: sqlite3.Connection, path: Path, lock: threading.RLock | None) -> None:
    """Migrate an older store (*lock*: the write lock; None: read-only, an older store is an error).

    Raises
    ------
    StoreError
        Not a store (no ``schema_version`` table), a newer schema version, or (read-only) an
        older one.
    """
    try:
        row = conn.execute("SELECT version FROM schema_version").fetchone()
    except sqlite3.DatabaseError as exc:
        if "no such table" not in str(exc):  # a lock, a damaged file: said as such
            raise store_error(path, exc) from None
        raise StoreError(f"store {str(path)!r}: not a dlsys-suite store (no schema_version table)") from None
    version = row[0] if row else SCHEMA_VERSION
    if version > SCHEMA_VERSION:
        raise StoreError(f"store {str(path)!r}: schema version {version} is newer than this suite's "
                         f"({SCHEMA_VERSION}); upgrade dlsys-suite")
    if version < SCHEMA_VERSION:
        if lock is None:
            raise StoreError(f"store {str(path)!r}: schema version {version} needs migrating to "
                             f"{SCHEMA_VERSION}; open it once for writing (e.g. `suite run`)")
        migrate(conn, path, version, lock)


def migrate(conn: sqlite3.Connection, path: Path, version: int, lock: threading.RLock) -> None:
    """Apply :data:`MIGRATIONS` from *version* up to :data:`SCHEMA_VERSION`, in one transaction.

    Raises
    ------
    StoreError
        No migration from some version on the way.
    """
    with Tx(conn, lock):
        for v in range(version, SCHEMA_VERSION):
            if v not in MIGRATIONS:
                raise StoreError(f"store {str(path)!r}: no migration from schema version {v}")
            MIGRATIONS[v](conn)
        conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))
