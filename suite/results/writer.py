"""The store's writer: runs opened and closed, finished cases buffered and committed in batches by
a background thread, off the evaluation path.

Only the coordinating process of a run writes (workers return plain dicts). The runner calls
:meth:`Writer.add_outcome` per finished case; a flusher thread commits when ``batch_size`` cases
wait or the oldest has waited ``batch_seconds``, so a finished case never waits in memory behind a
long evaluation (``kill -9`` then loses at most the last ``batch_seconds`` of results; the next
run recomputes only those), and the caller's thread never waits on SQLite (the sqlite3 module
releases the GIL while SQLite works). A batch is one transaction of a few multi-row INSERTs: one
``results`` row per computation (all its metrics in one JSON text), the ``cases`` upsert (an ok
case is only replaced by a new ok one), its samples and artifacts, and each run's links.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from operator import itemgetter
from pathlib import Path
from typing import Any

from suite.results.codec import dumps, finite, js, metrics_json, now, samples_json
from suite.results.integrity import store_error
from suite.results.provenance import provenance
from suite.results.schema import CASE_COLUMNS, INSERT_CASE, INSERT_RESULT, OK, UPSERT_TAIL
from suite.results.sql import Tx, execute_in, insert_rows, key_hash, statement_chunks

__all__ = ["Writer", "RUN_COUNTS", "BATCH_SIZE", "BATCH_SECONDS"]

#: most outcomes one commit writes (a commit is also due when the oldest waited ``batch_seconds``).
#: Each commit writes every B-tree page it dirtied (to the WAL, then the checkpoint copies it): a
#: case's key lands on a random page of each key index (keys are hashes), so once a store holds
#: more index pages than a batch has cases, each case dirties about one page per key index and a
#: larger batch is the only way to share pages between cases (issue 44, "flat at scale"). A sweep
#: that finishes ~10k cases a second fills 32,768 in ~3 s, so ``batch_seconds`` ends most batches
#: (~20k cases) where 8,192 ended them at ~1 s: into a store of 750k-1M cases a commit of 32,768
#: cost 31.5 us/case against 37.9 for 8,192 (median, batches alternated into one store, load 3-4)
BATCH_SIZE = 32768

#: longest time (s) a finished case waits in the buffer before a commit: what a ``kill -9`` can
#: lose. At a few thousand cases per second, 2 s lets a commit carry a few thousand cases where
#: 0.5 s carried ~1,000; into a 200k-case store the writer then cost 25 us/case instead of 28-31
#: (closed-form sweep, load 5-6), and a commit of 1,000 cases costs 54 us/case against 36 for
#: 4,096 (the store alone, 200k cases)
BATCH_SECONDS = 2.0

#: the counts a finished run records
RUN_COUNTS = ("total", "computed", "cached", "ok", "failed", "skipped")

#: a buffered outcome, its texts built when it is added (so the caller may reuse its dicts): the
#: case key, its ``cases`` row up to ``run_id`` (:data:`CASE_COLUMNS`' order; ``created`` and
#: ``result_id`` are added on commit), its metrics and samples JSON texts (or None), the
#: fields-read text (or None), whether the case's samples and artifacts are replaced, its
#: ``samples`` rows but the case id (metric, index, value) and its artifacts' text (or None). Tuples of strings and numbers only: the
#: cyclic collector stops tracking them at its first pass (lists stay tracked, and a batch of
#: lists waiting was walked again by every collection of the coordinator's young objects); the
#: ``results`` row and the run link repeat the case's fields and are built on commit
Pending = tuple[str, tuple[Any, ...], "str | None", "str | None", "str | None", bool,
                tuple[tuple[str, int, "float | None"], ...], "str | None"]
#: a buffered link of a cached case: (run id, case key, its hash, "cached", overrides JSON)
Link = tuple[int, str, int, str, str]

#: (Links, each with its place in the batch first) the links of cached cases, to their current
#: results (a key with no case row gets none), before the ``VALUES`` of (place, run id, key, key
#: hash, "cached", overrides) rows: one statement for many links, in the order they were asked for
_LINK_CACHED = ("INSERT OR IGNORE INTO run_cases (run_id, case_id, case_key, outcome, result_id, overrides) "
                "SELECT v.column2, c.id, c.key, v.column5, c.result_id, v.column6 FROM (VALUES {values}) v "
                "JOIN cases c ON c.khash = v.column4 AND c.key = v.column3 ORDER BY v.column1")
#: the link of a computed case (run id, case id, key, outcome, result id, overrides), before its ``VALUES``
_LINK_COMPUTED = "INSERT OR REPLACE INTO run_cases (run_id, case_id, case_key, outcome, result_id, overrides)"
#: places in a Pending's cases row (CASE_COLUMNS' order)
_KEY_, _KHASH, _OVERRIDES, _STATUS, _RUN = (CASE_COLUMNS.index(c) for c in ("key", "khash", "overrides", "status",
                                                                             "run_id"))


#: the caches of this module (emptied when full or on a restore): the load-time tamper check leaves them be
__caches__ = ('_FIELDS_TEXT',)
#: fields-read list (as a worker sent it) -> its stored JSON text: a sweep repeats a handful of sets
_FIELDS_TEXT: dict[tuple[str, ...], str] = {}


def _identity_json(identity: Mapping[str, Any]) -> str:
    """The identity beyond the case's own columns (those are not stored twice)."""
    inputs = identity.get("inputs")
    return (f'{{"code":{js(identity.get("code"))},"env":{js(identity.get("env"))},'
            f'"inputs":{dumps(inputs) if inputs else "{}"}}}')


def _fields_text(fields: Iterable[str]) -> str:
    """The stored text of a fields-read set: its paths sorted, as JSON (kept per distinct list)."""
    key = tuple(fields)
    text = _FIELDS_TEXT.get(key)
    if text is None:
        if len(_FIELDS_TEXT) > 4096:
            _FIELDS_TEXT.clear()
        text = _FIELDS_TEXT[key] = dumps(sorted(key))
    return text


def _outcome_rows(identity: Mapping[str, Any], outcome: Mapping[str, Any], run_id: int, replace: bool) -> Pending:
    """The rows of one finished case: *identity* (:meth:`suite.runner.case.Case.identity` plus
    ``key``) and *outcome* (what a worker returned; its ``key``, when given, is the case's)."""
    key = outcome["key"] if "key" in outcome else identity["key"]
    status = outcome["status"]
    get = outcome.get
    overrides = identity.get("overrides")
    overrides_json = dumps(overrides) if overrides else "{}"
    params = identity.get("params")
    case = (key, key_hash(key), _identity_json(identity), identity["technique"], identity.get("technique_version"),
            identity.get("variant"), identity.get("fidelity"), identity.get("profile"), identity.get("profile_hash"),
            identity.get("workload"), identity.get("workload_hash"), dumps(params) if params else "{}",
            overrides_json, identity.get("seed"), status, get("error"), get("traceback"), get("duration"), run_id)
    if status != OK:  # a non-ok outcome never touches the case's samples and artifacts
        return key, case, None, None, None, False, (), None
    samples = get("samples")
    fields = get("fields_read")
    sample_rows = tuple((mname, i, finite(v)) for mname, vals in samples.items()
                        for i, v in enumerate(vals)) if samples else ()
    art = get("artifacts")
    art_text = (art if isinstance(art, str) else dumps(art)) if art else None
    return (key, case, metrics_json(get("metrics") or ()), samples_json(samples) if samples else None,
            _fields_text(fields) if fields is not None else None, replace, sample_rows, art_text)


def _next_result_id(conn: sqlite3.Connection) -> int:
    """The id the next ``results`` row gets (AUTOINCREMENT: above every id ever used); read
    inside the write transaction, so the batch's ids are this and the ones after it."""
    row = conn.execute("SELECT max(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'results'), 0), "
                       "COALESCE((SELECT max(id) FROM results), 0))").fetchone()
    return int(row[0]) + 1


def _field_set_id(conn: sqlite3.Connection, text: str, known: dict[str, int]) -> int:
    """The ``field_sets`` id of fields text *text*, adding the set when it is not stored yet
    (*known*: text -> id, the writer's; ids never change)."""
    fid = known.get(text)
    if fid is None:
        conn.execute("INSERT OR IGNORE INTO field_sets (fields) VALUES (?)", (text,))
        fid = known[text] = int(conn.execute("SELECT id FROM field_sets WHERE fields = ?", (text,)).fetchone()[0])
    return fid


#: the stored cases of a JSON list of key hashes (one parameter: a batch's look-up is one query)
_CASES_OF_HASHES = "SELECT c.id, c.key, c.status FROM json_each(?) j JOIN cases c ON c.khash = j.value"


def _stored_cases(conn: sqlite3.Connection, batch: list[Pending]) -> tuple[dict[str, int], dict[str, str]]:
    """(key -> case id, key -> status) of the stored cases among *batch*'s: found by their hashes,
    and each checked against the keys themselves, so a case whose key only shares a hash is left out."""
    ids: dict[str, int] = {}
    status: dict[str, str] = {}
    keys = {p[0] for p in batch}
    hashes = "[" + ",".join(dict.fromkeys([str(p[1][_KHASH]) for p in batch])) + "]"  # in the batch's (key) order
    for cid, key, st in conn.execute(_CASES_OF_HASHES, (hashes,)):
        if key in keys:
            ids[key], status[key] = cid, st
    return ids, status


def _upsert_cases(conn: sqlite3.Connection, batch: list[Pending], created: str, rid: int) -> dict[str, int]:
    """Insert or replace the ``cases`` rows of *batch*, in order, the i-th with ``created`` and
    result id ``rid + i``; key -> case id of each row's case.

    A stored case is found by its key (:func:`_stored_cases`) and keeps its id; a new key gets the
    next id (above the largest stored, in the batch's order). A row replaces a case's row unless
    the case is ok and the row is not (an ok case is only replaced by a new ok one: a rerun).
    The store has no UNIQUE index on keys (schema 8): the write transaction (``BEGIN IMMEDIATE``,
    one writer at a time) makes the look-up and the writes one step, so two processes writing
    one store still store no key twice."""
    ids, status = _stored_cases(conn, batch)
    nxt = conn.execute("SELECT COALESCE(max(id), 0) FROM cases").fetchone()[0]
    final: dict[str, int] = {}  # key -> the batch row that writes its case
    for i, p in enumerate(batch):
        key, st = p[0], p[1][_STATUS]
        if key not in ids:
            nxt += 1
            ids[key] = nxt
        elif status.get(key) == OK and st != OK:
            continue
        status[key] = st
        final[key] = i
    insert_rows(conn, INSERT_CASE, [(ids[k], *batch[i][1], created, rid + i) for k, i in final.items()], UPSERT_TAIL)
    return ids


def _link_cached(conn: sqlite3.Connection, links: list[Link]) -> None:
    """Write the links of cached cases (:data:`_LINK_CACHED`), a few hundred a statement."""
    for chunk in statement_chunks(conn, links, 6):
        conn.execute(_LINK_CACHED.format(values=",".join(["(?,?,?,?,?,?)"] * len(chunk))),
                     [v for j, link in enumerate(chunk) for v in (j, *link)])


def _commit_rows(conn: sqlite3.Connection, batch: list[Pending], created: str, field_ids: dict[str, int]) -> None:
    """Write one batch's rows, in key order (inside the caller's transaction): every computation
    keeps its own ``results`` row (history); the case and its run link point at it. The cases
    first: the results and links name each case by the id its upsert gave."""
    rid = _next_result_id(conn)
    fids = [_field_set_id(conn, p[4], field_ids) if p[4] is not None else None for p in batch]
    ids = _upsert_cases(conn, batch, created, rid)
    insert_rows(conn, INSERT_RESULT, [(rid + i, c[_KEY_], c[_RUN], *c[_STATUS:_RUN], created, p[2], p[3], fids[i],
                                       ids[c[_KEY_]]) for i, p in enumerate(batch) for c in (p[1],)])
    replaced = [ids[p[0]] for p in batch if p[5]]
    if replaced:  # an ok outcome replaces the case's samples and artifacts (its metrics are in results)
        for table in ("samples", "artifacts"):
            execute_in(conn, f"DELETE FROM {table} WHERE case_id IN ({{marks}})", replaced)
    samples = [(ids[p[0]], *row) for p in batch for row in p[6]]
    if samples:
        insert_rows(conn, "INSERT OR REPLACE INTO samples (case_id, metric, idx, value)", samples)
    artifacts = [(ids[p[0]], p[7]) for p in batch if p[7] is not None]
    if artifacts:
        insert_rows(conn, "INSERT OR REPLACE INTO artifacts (case_id, data)", artifacts)
    insert_rows(conn, _LINK_COMPUTED, [(c[_RUN], ids[c[_KEY_]], c[_KEY_], "computed", rid + i, c[_OVERRIDES])
                                       for i, p in enumerate(batch) for c in (p[1],)])


_KEY = itemgetter(0)


class Writer:
    """Writes one open store: runs, and finished cases in batches (see the module docstring).

    Parameters
    ----------
    conn : sqlite3.Connection
        The store's connection (autocommit mode: transactions are explicit).
    path : Path
        The store file (named in errors).
    lock : threading.RLock
        The store's write lock: every write transaction holds it.
    batch_size : int
        Outcomes buffered before a commit.
    batch_seconds : float
        Longest time an outcome waits in the buffer before a commit; ``<= 0``: no flusher thread,
        the caller commits each full batch itself.
    """

    def __init__(self, conn: sqlite3.Connection, path: Path, lock: threading.RLock, *, batch_size: int = BATCH_SIZE,
                 batch_seconds: float = BATCH_SECONDS) -> None:
        self.conn, self.path = conn, path
        self.batch_size = int(batch_size)
        self.batch_seconds = float(batch_seconds)
        self._buffer: list[Pending] = []
        self._run_links: list[Link] = []
        self._field_ids: dict[str, int] = {}  # field_sets: text -> id (ids never change once stored)
        self._last_flush = time.monotonic()
        self._closed = False
        # `_lock` guards the buffers only; `_wlock` serialises write transactions (lock order:
        # `_wlock` before `_lock`; the caller never flushes while holding `_lock`)
        self._lock: Any = threading.RLock()
        self._wlock = lock
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._flusher: threading.Thread | None = None

    def tx(self) -> Tx:
        """A write transaction on the store (``with writer.tx() as conn:``)."""
        return Tx(self.conn, self._wlock)

    # ------------------------------------------------------------------ runs
    def begin_run(self, command: str | None = None, plugins: Mapping[str, str] | None = None,
                  packages: Mapping[str, str] | None = None) -> int:
        """Record a new run (status ``running``) with its provenance and this process id; its id."""
        prov = provenance(command, plugins, packages)
        with self.tx():
            cur = self.conn.execute(
                "INSERT INTO runs (started, host, platform, python, packages, plugins, git_commit, command, status, pid) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?)",
                (now(), prov["host"], prov["platform"], prov["python"], prov["packages"], prov["plugins"],
                 prov["git_commit"], prov["command"], os.getpid()))
            return int(cur.lastrowid or 0)

    def plan_run(self, run_id: int, total: int) -> None:
        """Record the number of cases running run *run_id* plans (its ``total`` until it finishes),
        so that a live or killed run reads as "N stored of *total* planned"."""
        with self.tx():
            self.conn.execute("UPDATE runs SET total = ? WHERE id = ? AND status = 'running'", (int(total), run_id))

    def finish_run(self, run_id: int, status: str, counts: Mapping[str, int]) -> None:
        """Commit what is buffered, then close the run: its final status and :data:`RUN_COUNTS`."""
        self.flush()
        with self.tx():
            self.conn.execute(
                f"UPDATE runs SET finished = ?, status = ?, {', '.join(c + ' = ?' for c in RUN_COUNTS)} WHERE id = ?",
                (now(), status, *[int(counts.get(c, 0)) for c in RUN_COUNTS], run_id))

    # ------------------------------------------------------------------ cases
    def link_cached(self, run_id: int, keys: Iterable[str],
                    overrides: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        """Buffer links of *run_id* to already-stored cases (each to its current result), with the
        profile overrides *this* run asked for (key -> overrides; none when absent)."""
        overrides = overrides or {}
        khash = keys if isinstance(keys, Mapping) else {}  # a hashed() mapping: its hashes
        with self._lock:
            self._run_links.extend((run_id, k, khash[k] if k in khash else key_hash(k), "cached",
                                    dumps(overrides[k]) if overrides.get(k) else "{}") for k in keys)
        self._maybe_flush()
        self._ensure_flusher()

    def add_outcome(self, identity: Mapping[str, Any], outcome: Mapping[str, Any], run_id: int,
                    replace: bool = True) -> None:
        """Buffer one finished case (see :meth:`suite.results.store.Store.add_outcome`)."""
        rows = _outcome_rows(identity, outcome, run_id, replace)
        with self._lock:
            self._buffer.append(rows)
            n = self._pending()
        # a batch is due only when full or at its deadline (the flusher also looks every
        # batch_seconds / 2): most calls stop here
        if n >= self.batch_size or time.monotonic() - self._last_flush >= self.batch_seconds:
            self._maybe_flush()  # never under _lock: a flush takes _wlock, then _lock
        if self._flusher is None:
            self._ensure_flusher()

    # ------------------------------------------------------------------ committing
    def _pending(self) -> int:
        return len(self._buffer) + len(self._run_links) // 8

    def _due(self) -> int:
        """How many outcomes wait, when a batch is due (full, or its oldest waited batch_seconds); else 0."""
        n = self._pending()
        return n if n >= self.batch_size or (n and time.monotonic() - self._last_flush >= self.batch_seconds) else 0

    def _maybe_flush(self) -> None:
        """Wake the flusher when a batch is due; commit here only without a flusher
        (``batch_seconds <= 0``) or when the caller produces faster than SQLite commits (four
        batches waiting: memory stays bounded). Called without holding ``_lock``."""
        n = self._due()
        if not n:
            return
        if self.batch_seconds <= 0 or n >= 4 * self.batch_size:
            self._flush()
        else:
            self._wake.set()

    def _flush_loop(self) -> None:
        while True:
            self._wake.wait(self.batch_seconds / 2)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                if self._due():
                    self._flush()
            except Exception:  # noqa: BLE001 - the caller's next flush raises the same error
                pass

    def _ensure_flusher(self) -> None:
        if self._flusher is None and self.batch_seconds > 0 and not self._closed:
            self._flusher = threading.Thread(target=self._flush_loop, name="suite-store-flusher", daemon=True)
            self._flusher.start()

    def flush(self) -> int:
        """Commit buffered outcomes in one transaction; how many cases were written.

        Raises
        ------
        StoreError
            SQLite failed (a full disk, a damaged page: the store named); nothing buffered is lost.
        """
        return self._flush()

    def _flush(self) -> int:
        with self._wlock:  # one flush at a time, in order; the buffers are swapped, not held
            with self._lock:
                if self._closed or (not self._buffer and not self._run_links):
                    return 0
                buf, links = self._buffer, self._run_links
                self._buffer, self._run_links = [], []
                self._last_flush = time.monotonic()
            try:
                return self._write(buf, links)
            except BaseException as exc:
                self._field_ids.clear()  # ids added by the rolled-back transaction are not stored
                with self._lock:  # nothing is lost: the next flush tries again (and raises again)
                    self._buffer[:0] = buf
                    self._run_links[:0] = links
                if isinstance(exc, sqlite3.DatabaseError):  # a full disk, a damaged page: name the store
                    raise store_error(self.path, exc) from None
                raise

    def _write(self, buf: list[Pending], links: list[Link]) -> int:
        """Commit *buf* and *links* in one transaction; how many cases were written."""
        # in key order, so a batch's new cases are numbered in key order (stable: two outcomes of
        # one key keep their order)
        batch = sorted(buf, key=_KEY)
        with self.tx():
            if batch:
                _commit_rows(self.conn, batch, now(), self._field_ids)
            # a cached case links to the result it reuses: the case's current one
            _link_cached(self.conn, links)
        return len(batch)

    def close(self) -> None:
        """Stop the flusher thread and commit what is buffered; later flushes write nothing."""
        self._stop.set()
        self._wake.set()
        if self._flusher is not None:
            self._flusher.join(5)
            self._flusher = None
        with self._wlock:
            try:
                self._flush()
            finally:
                self._closed = True
