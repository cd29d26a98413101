"""The store's writer: runs opened and closed, finished cases buffered and committed in batches by
a background thread, off the evaluation path.

Only the coordinating process of a run writes (workers return plain dicts). The runner calls
:meth:`Writer.add_outcome` per finished case; a flusher thread commits when ``batch_size`` cases
wait or the oldest has waited ``batch_seconds``, so a finished case never waits in memory behind a
long evaluation (``kill -9`` then loses at most the last ``batch_seconds`` of results; the next
run recomputes only those), and the caller's thread never waits on SQLite (the sqlite3 module
releases the GIL while SQLite works). A batch is one transaction of a few ``executemany``: one
``results`` row per computation (all its metrics in one JSON text), the ``cases`` upsert (an ok
case is only replaced by a new ok one), its samples and artifacts, and each run's links.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.results.codec import dumps, finite, js, metrics_json, now, samples_json
from suite.results.integrity import store_error
from suite.results.provenance import provenance
from suite.results.schema import INSERT_RESULT, OK, UPSERT_CASE
from suite.results.sql import Tx

__all__ = ["Writer", "RUN_COUNTS", "BATCH_SIZE"]

#: most outcomes one commit writes (a commit is also due when the oldest waited ``batch_seconds``).
#: Each commit writes every B-tree page it dirtied (to the WAL, then the checkpoint copies it): a
#: case's key lands on a random page of each key index (keys are hashes), so once a store holds
#: more index pages than a batch has cases, each case dirties about one page per key index and a
#: larger batch is the only way to share pages between cases (issue 44, "flat at scale")
BATCH_SIZE = 4096

#: the counts a finished run records
RUN_COUNTS = ("total", "computed", "cached", "ok", "failed", "skipped")

#: a buffered outcome: (identity + outcome + "_replace", run id), copied when added (the caller may reuse its dicts)
Pending = tuple[dict[str, Any], int]
#: a buffered link of a cached case: (run id, case key, "cached", overrides JSON)
Link = tuple[int, str, str, str]

_LINK_CACHED = ("INSERT OR IGNORE INTO run_cases (run_id, case_key, outcome, result_id, overrides) "
                "VALUES (?, ?, ?, (SELECT result_id FROM cases WHERE key = ?), ?)")
_LINK_COMPUTED = ("INSERT OR REPLACE INTO run_cases (run_id, case_key, outcome, result_id, overrides) "
                  "VALUES (?, ?, ?, ?, ?)")


@dataclass
class _Rows:
    """The rows one batch of outcomes writes, table by table (``result_id`` filled in on commit)."""

    results: list[list[Any]] = field(default_factory=list)
    cases: list[list[Any]] = field(default_factory=list)
    links: list[list[Any]] = field(default_factory=list)
    replaced: list[tuple[str]] = field(default_factory=list)
    samples: list[tuple[str, str, int, float | None]] = field(default_factory=list)
    artifacts: list[tuple[str, str]] = field(default_factory=list)


def _identity_json(d: Mapping[str, Any]) -> str:
    """The identity beyond the case's own columns (those are not stored twice)."""
    inputs = d.get("inputs")
    return f'{{"code":{js(d.get("code"))},"env":{js(d.get("env"))},"inputs":{dumps(inputs) if inputs else "{}"}}}'


def _add_outcome_rows(rows: _Rows, d: Mapping[str, Any], run_id: int, created: str) -> None:
    """Append the rows of one finished case *d* (identity + outcome) to *rows*."""
    key, status = d["key"], d["status"]
    overrides = dumps(d["overrides"]) if d.get("overrides") else "{}"
    ok = status == OK
    rows.cases.append([key, _identity_json(d), d["technique"], d.get("technique_version"), d.get("variant"),
                       d.get("fidelity"), d.get("profile"), d.get("profile_hash"), d.get("workload"),
                       d.get("workload_hash"), dumps(d.get("params") or {}), overrides, d.get("seed"), status,
                       d.get("error"), d.get("traceback"), d.get("duration"), run_id, created, None])
    rows.links.append([run_id, key, "computed", None, overrides])
    samples = d.get("samples") if ok else None
    fields = d.get("fields_read") if ok else None
    rows.results.append([None, key, run_id, status, d.get("error"), d.get("traceback"), d.get("duration"), created,
                         metrics_json(d.get("metrics") or ()) if ok else None,
                         samples_json(samples) if samples else None,
                         dumps(sorted(fields)) if fields is not None else None])
    if not ok:  # a non-ok outcome never touches the case's samples and artifacts
        return
    if d.get("_replace", True):
        rows.replaced.append((key,))
    for mname, vals in (samples or {}).items():
        rows.samples.extend((key, mname, i, finite(v)) for i, v in enumerate(vals))
    art = d.get("artifacts")
    if art:
        rows.artifacts.append((key, art if isinstance(art, str) else dumps(art)))


def _key_of(p: Pending) -> str:
    return str(p[0]["key"])


def _next_result_id(conn: sqlite3.Connection) -> int:
    """The id the next ``results`` row gets (AUTOINCREMENT: above every id ever used); read
    inside the write transaction, so the batch's ids are this and the ones after it."""
    row = conn.execute("SELECT max(COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'results'), 0), "
                       "COALESCE((SELECT max(id) FROM results), 0))").fetchone()
    return int(row[0]) + 1


def _field_set_ids(conn: sqlite3.Connection, results: list[list[Any]], known: dict[str, int]) -> None:
    """Replace the fields text (the last item) of each ``results`` row by its ``field_sets`` id,
    adding the sets not stored yet (*known*: text -> id, the writer's; ids never change)."""
    for res in results:
        text = res[-1]
        if text is None:
            continue
        fid = known.get(text)
        if fid is None:
            conn.execute("INSERT OR IGNORE INTO field_sets (fields) VALUES (?)", (text,))
            fid = known[text] = int(conn.execute("SELECT id FROM field_sets WHERE fields = ?", (text,)).fetchone()[0])
        res[-1] = fid


def _commit_rows(conn: sqlite3.Connection, rows: _Rows, field_ids: dict[str, int]) -> None:
    """Write one batch's rows (inside the caller's transaction): every computation keeps its own
    ``results`` row (history); the case and its run link point at it."""
    first = _next_result_id(conn)
    for i, (res, case, link) in enumerate(zip(rows.results, rows.cases, rows.links)):
        res[0] = case[-1] = link[3] = first + i
    _field_set_ids(conn, rows.results, field_ids)
    conn.executemany(INSERT_RESULT, rows.results)
    conn.executemany(UPSERT_CASE, rows.cases)
    if rows.replaced:  # an ok outcome replaces the case's samples and artifacts (its metrics are in results)
        conn.executemany("DELETE FROM samples WHERE case_key = ?", rows.replaced)
        conn.executemany("DELETE FROM artifacts WHERE case_key = ?", rows.replaced)
    if rows.samples:
        conn.executemany("INSERT OR REPLACE INTO samples VALUES (?, ?, ?, ?)", rows.samples)
    if rows.artifacts:
        conn.executemany("INSERT OR REPLACE INTO artifacts VALUES (?, ?)", rows.artifacts)
    conn.executemany(_LINK_COMPUTED, rows.links)


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
                 batch_seconds: float = 0.5) -> None:
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
    def begin_run(self, command: str | None = None, plugins: Mapping[str, str] | None = None) -> int:
        """Record a new run (status ``running``) with its provenance and this process id; its id."""
        prov = provenance(command, plugins)
        with self.tx():
            cur = self.conn.execute(
                "INSERT INTO runs (started, host, platform, python, packages, plugins, git_commit, command, status, pid) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?)",
                (now(), prov["host"], prov["platform"], prov["python"], prov["packages"], prov["plugins"],
                 prov["git_commit"], prov["command"], os.getpid()))
            return int(cur.lastrowid or 0)

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
        with self._lock:
            self._run_links.extend((run_id, k, "cached", dumps(overrides[k]) if overrides.get(k) else "{}")
                                   for k in keys)
        self._maybe_flush()
        self._ensure_flusher()

    def add_outcome(self, identity: Mapping[str, Any], outcome: Mapping[str, Any], run_id: int,
                    replace: bool = True) -> None:
        """Buffer one finished case (see :meth:`suite.results.store.Store.add_outcome`)."""
        d = {**identity, **outcome}
        d["_replace"] = replace
        with self._lock:
            self._buffer.append((d, run_id))
        self._maybe_flush()  # never under _lock: a flush takes _wlock, then _lock
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
        created = now()
        rows = _Rows()
        # in key order: each key index is walked once, front to back, in a batch (stable: two
        # outcomes of one key keep their order)
        for d, run_id in sorted(buf, key=_key_of):
            _add_outcome_rows(rows, d, run_id, created)
        with self.tx():
            if rows.cases:
                _commit_rows(self.conn, rows, self._field_ids)
            # a cached case links to the result it reuses: the case's current one
            self.conn.executemany(_LINK_CACHED, [(r, k, o, k, ov) for r, k, o, ov in links])
        return len(rows.cases)

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
