"""The results store: one SQLite file (WAL mode) with runs, cases, metrics, samples, artifacts.

Only the coordinating process of a run writes it (workers return plain dicts). Writes are
batched: the runner calls :meth:`Store.add_outcome` per finished case and :meth:`Store.flush`
commits every ``batch_size`` cases or ``batch_seconds``, so a ``kill -9`` loses at most the
cases not yet committed (the next run recomputes only those). The current result of each case is
keyed by the case key (``INSERT ... ON CONFLICT``), so two ``suite run`` processes on one store
lose nothing and store no duplicate; every computation is also kept, per run (``results``).

Tables (schema version :data:`SCHEMA_VERSION`)
----------------------------------------------
``runs``
    ``id, started, finished, host, platform, python, packages (JSON name -> version),
    plugins (JSON distribution -> version), git_commit, command, status`` (``running``, ``done``,
    ``failed`` (some case failed), ``interrupted``), and the counts ``total, computed, cached,
    ok, failed, skipped``.
``cases``
    one row per case key: ``key, identity`` (JSON of what the key hashes beyond the columns
    below: the code fingerprint, the environment and the referenced inputs' hashes,
    ``{"code": ..., "env": ..., "inputs": {...}}``; :meth:`Store.case` gives the whole identity,
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
    ``samples`` (JSON metric -> list, or NULL), ``fields`` (JSON list of the profile fields the
    evaluation was recorded reading, or NULL when it was not recorded).
``run_cases``
    ``run_id, case_key, outcome`` (``computed`` or ``cached``), ``result_id`` (the ``results``
    row the run produced, or the one it reused) and ``overrides`` (JSON: the profile overrides
    *this* run asked for): every case a run asked for, including those it found already
    stored. A run's cases, metrics and overrides are read through these (:meth:`Store.cases`,
    :meth:`Store.metrics`), so a later ``--rerun`` never changes what an earlier run shows.
``metrics``
    a view (schema 5; a table before): long format ``case_key, name, value, unit, direction`` of
    each case's current result, read from its ``results`` row (metrics are stored once).
``samples``
    raw repeated measurements: ``case_key, metric, idx, value`` (of the current result).
``artifacts``
    ``case_key, data`` (JSON object; of the current result only).
``judgements``
    ``key, data, created``: ``suite reproduce``'s judged claim outcomes (JSON), keyed by
    everything a judgement depends on (:mod:`suite.runner.reproduce`: the claim, the technique's
    and the core's code, the case keys and :meth:`Store.content_digests` of their results), so a
    cached reproduce re-derives nothing and an entry is never stale.

A case already stored with status ``ok`` is never overwritten by a non-ok outcome; ``--rerun``
replaces an ok case by a new ok one.
"""

from __future__ import annotations

import json
import math
import os
import platform as _platform
import socket
import sqlite3
import subprocess
import sys
import threading
import time
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from suite.errors import StoreError
from suite.results.integrity import check_on_open, remember, store_error

__all__ = ["Store", "SCHEMA_VERSION", "MIGRATIONS", "default_store_path", "OK", "FAILED_STATUSES"]

SCHEMA_VERSION = 5
OK = "ok"
FAILED_STATUSES = ("failed", "timeout", "crashed")
STATUSES = (OK, "skipped") + FAILED_STATUSES

#: the long-format metrics of each case's current (ok) result, from its ``results`` row
_METRICS_VIEW = ("SELECT c.key AS case_key, json_extract(j.value, '$[0]') AS name, json_extract(j.value, '$[1]') AS value, "
                 "json_extract(j.value, '$[2]') AS unit, json_extract(j.value, '$[3]') AS direction "
                 "FROM cases c JOIN results r ON r.id = c.result_id, json_each(r.metrics) j WHERE c.status = 'ok'")

_SCHEMA = """
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
    key TEXT PRIMARY KEY,
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
    run_id INTEGER NOT NULL, case_key TEXT NOT NULL, outcome TEXT NOT NULL,
    result_id INTEGER, overrides TEXT,
    PRIMARY KEY (run_id, case_key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT, case_key TEXT NOT NULL, run_id INTEGER,
    status TEXT NOT NULL, error TEXT, traceback TEXT, duration REAL, created TEXT NOT NULL,
    metrics TEXT, samples TEXT, fields TEXT
);
CREATE INDEX IF NOT EXISTS results_case ON results(case_key);
CREATE VIEW IF NOT EXISTS metrics AS """ + _METRICS_VIEW + """;
CREATE TABLE IF NOT EXISTS samples (
    case_key TEXT NOT NULL, metric TEXT NOT NULL, idx INTEGER NOT NULL, value REAL,
    PRIMARY KEY (case_key, metric, idx)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS fields_read (
    technique TEXT NOT NULL, code TEXT NOT NULL, variant TEXT NOT NULL, fidelity TEXT NOT NULL,
    fields TEXT NOT NULL,
    PRIMARY KEY (technique, code, variant, fidelity)
);
CREATE TABLE IF NOT EXISTS artifacts (case_key TEXT PRIMARY KEY, data TEXT NOT NULL);
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
    conn.execute("UPDATE run_cases SET result_id = (SELECT c.result_id FROM cases c WHERE c.key = run_cases.case_key), "
                 "overrides = (SELECT c.overrides FROM cases c WHERE c.key = run_cases.case_key) "
                 "WHERE result_id IS NULL")
    # the metrics live in their results row now: the long table becomes a view of them
    if conn.execute("SELECT type FROM sqlite_master WHERE name = 'metrics'").fetchone() == ("table",):
        conn.execute("DROP TABLE metrics")
    conn.execute(f"CREATE VIEW IF NOT EXISTS metrics AS {_METRICS_VIEW}")


MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4,
                                                                4: _v4_to_v5}

#: the identity fields (Case.identity) with a column of their own; the identity column holds the rest
_IDENTITY_COLUMNS = ("technique", "technique_version", "variant", "fidelity", "profile", "profile_hash", "workload",
                     "workload_hash", "params", "overrides", "seed")

_CASE_COLUMNS = ("key", "identity", "technique", "technique_version", "variant", "fidelity", "profile",
                 "profile_hash", "workload", "workload_hash", "params", "overrides", "seed", "status",
                 "error", "traceback", "duration", "run_id", "created", "result_id")

_INSERT_RESULT = ("INSERT INTO results (case_key, run_id, status, error, traceback, duration, created, metrics, samples, "
                  "fields) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")

# Insert a case; an existing ok case is only replaced by a new ok one (a rerun).
_UPSERT_CASE = (
    f"INSERT INTO cases ({', '.join(_CASE_COLUMNS)}) VALUES ({', '.join('?' * len(_CASE_COLUMNS))}) "
    "ON CONFLICT(key) DO UPDATE SET "
    + ", ".join(f"{c}=excluded.{c}" for c in _CASE_COLUMNS if c != "key")
    + " WHERE cases.status != 'ok' OR excluded.status = 'ok'"
)


def check_run_name(name: str) -> str:
    """*name* as a run label in its canonical spelling (:func:`suite.results.names.normalize_run_name`:
    NFKC; no control or bidirectional characters); StoreError unless it can label a run: not
    empty, not all digits, not ``latest``/``last``/``latest~N``, no whitespace."""
    from suite.results.names import normalize_run_name

    try:
        return normalize_run_name(name)
    except ValueError as exc:
        raise StoreError(str(exc)) from None


def default_store_path() -> Path:
    """``SUITE_STORE`` if set, else ``results/suite.sqlite`` relative to the working directory."""
    return Path(os.environ.get("SUITE_STORE") or Path("results") / "suite.sqlite")


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _json_default(o: Any) -> Any:
    try:
        import numpy as np

        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, np.generic):
            return o.item()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    raise TypeError(f"{type(o).__name__} is not JSON-serialisable")


def dumps(obj: Any) -> str:
    """JSON as stored: sorted keys, numpy converted."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), default=_json_default)


_encode = json.JSONEncoder(separators=(",", ":")).encode


def _js(v: Any) -> str:
    """A scalar as JSON (fast paths for the identity fields: None, plain strings, ints)."""
    if v is None:
        return "null"
    t = type(v)
    if t is str:
        if v.isascii() and v.isprintable() and '"' not in v and "\\" not in v:
            return f'"{v}"'
        return _encode(v)
    if t is int:
        return str(v)
    return _encode(v)


def _finite(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if not math.isnan(f) else None


def _num(v: Any) -> str:
    """A metric value as JSON that SQLite's json functions read back: NaN (or no number) as null,
    infinities as ``1e999`` / ``-1e999`` (parsed as inf by SQLite and Python alike)."""
    f = _finite(v)
    if f is None:
        return "null"
    if math.isinf(f):
        return "1e999" if f > 0 else "-1e999"
    return repr(f)


def _metrics_json(metrics: Iterable[Any]) -> str:
    """``[[name, value, unit, direction], ...]`` of a result, all its metrics in one text."""
    return "[" + ",".join(f"[{_encode(str(m[0]))},{_num(m[1])},{_encode(m[2])},{_encode(m[3])}]" for m in metrics) + "]"


def _samples_json(samples: Mapping[str, Iterable[Any]]) -> str:
    return "{" + ",".join(f"{_encode(str(k))}:[{','.join(_num(v) for v in vals)}]"
                          for k, vals in sorted(samples.items())) + "}"


_GIT: dict[str, str | None] = {}


def _git_commit() -> str | None:
    """The commit of the checkout the suite runs from (or of the CWD), if it is a git checkout."""
    if "c" in _GIT:
        return _GIT["c"]
    commit = None
    for where in (Path(__file__).resolve().parents[2], Path.cwd()):
        if not (where / ".git").exists():
            continue
        try:
            out = subprocess.run(["git", "-C", str(where), "rev-parse", "HEAD"], capture_output=True,
                                 text=True, timeout=5)
            if out.returncode == 0:
                commit = out.stdout.strip()
                dirty = subprocess.run(["git", "-C", str(where), "status", "--porcelain", "--untracked-files=no"],
                                       capture_output=True, text=True, timeout=5)
                if dirty.returncode == 0 and dirty.stdout.strip():
                    commit += "-dirty"
                break
        except (OSError, subprocess.SubprocessError):
            pass
    _GIT["c"] = commit
    return commit


def _package_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in ("dlsys-suite", "numpy", "scipy", "pandas", "pydantic", "pint", "pluggy", "dask", "distributed"):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            pass
    return out


def provenance(command: str | None = None, plugins: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Where and with what a run was made (the ``runs`` row, without times and counts)."""
    plugins = dict(plugins or {})  # the runner passes its context's plugin distributions
    return {
        "host": socket.gethostname(),
        "platform": _platform.platform(),
        "python": sys.version.split()[0],
        "packages": dumps(_package_versions()),
        "plugins": dumps(dict(plugins)),
        "git_commit": _git_commit(),
        "command": command if command is not None else " ".join(sys.argv),
    }


def _gone(host: Any, pid: Any) -> bool:
    """True when a run marked ``running`` cannot be: it was started on this host by a process that
    no longer exists (killed with -9, a power cut). Runs of other hosts are left as they are."""
    if host != socket.gethostname() or pid is None:
        return False
    try:
        pid = int(pid)
    except (TypeError, ValueError):
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError):
        return False
    if pid == os.getpid():
        return False
    try:  # a reused pid of another program: compare its command line
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            cmd = fh.read().decode("utf-8", "replace")
        return "suite" not in cmd and "python" not in cmd and "pytest" not in cmd
    except OSError:
        return False


class Store:
    """A results store in one SQLite file.

    Parameters
    ----------
    path : str or Path, optional
        The SQLite file; created (with its folder) if missing. Defaults to
        :func:`default_store_path` (``SUITE_STORE`` or ``results/suite.sqlite`` in the CWD).
    batch_size : int
        Outcomes buffered before a commit.
    batch_seconds : float
        Longest time an outcome waits in the buffer before a commit (checked on each add).
    readonly : bool
        Open an existing store for reading only.

    Raises
    ------
    StoreError
        The file is not a store, cannot be created, or was written by a newer schema version.

    Examples
    --------
    >>> store = Store("results/suite.sqlite")          # doctest: +SKIP
    >>> store.metrics(run="latest", wide=True)          # doctest: +SKIP
    """

    def __init__(self, path: str | Path | None = None, *, batch_size: int = 500, batch_seconds: float = 0.5,
                 readonly: bool = False):
        self.path = Path(path) if path is not None else default_store_path()
        self.batch_size = int(batch_size)
        self.batch_seconds = float(batch_seconds)
        self._buffer: list[tuple[dict, int]] = []
        self._run_links: list[tuple[int, str, str, str | None]] = []
        self._last_flush = time.monotonic()
        # Outcomes are committed by a background flusher thread: when `batch_size` are waiting or
        # the oldest has waited `batch_seconds`, so a finished case never waits in memory behind a
        # long evaluation (kill -9 then loses at most the last batch_seconds of results), and the
        # caller's thread never waits on SQLite (the sqlite3 module releases the GIL while SQLite
        # works). `_lock` guards the buffers only; `_wlock` serialises write transactions.
        self._lock = threading.RLock()
        self._wlock = threading.RLock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._flusher: threading.Thread | None = None
        if readonly:
            if not self.path.exists():
                raise StoreError(f"store {str(self.path)!r} does not exist (run `suite run` first, or give --store PATH)")
            self.conn = None
            # a store on a read-only file or folder cannot even create the WAL's shared-memory file:
            # fall back to immutable mode (nobody can be writing it)
            for query in ("mode=ro", "mode=ro&immutable=1"):
                uri = f"file:{self.path.resolve()}?{query}"
                try:
                    self.conn = sqlite3.connect(uri, uri=True, timeout=60, check_same_thread=False)
                    self.conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
                    break
                except sqlite3.DatabaseError as exc:
                    err = exc
                    self.conn = None
            if self.conn is None:
                raise StoreError(f"store {str(self.path)!r}: cannot open: {err}") from None
            self._check_version(readonly=True)
            return
        if path is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.parent.is_dir():
            raise StoreError(f"store {str(self.path)!r}: expected an existing folder, got no folder "
                             f"{str(self.path.parent)!r} (create it first)")
        self._refuse_foreign()
        # Two processes opening a new store at once: switching to WAL needs a moment of exclusive
        # access and SQLite reports "database is locked" without waiting on the busy timeout, so
        # the set-up is retried for a while before it is an error.
        deadline = time.monotonic() + 60
        while True:
            try:
                self.conn = sqlite3.connect(str(self.path), timeout=60, isolation_level=None,
                                            check_same_thread=False)
                self.conn.execute("PRAGMA busy_timeout = 60000")
                self.conn.execute("PRAGMA journal_mode = WAL")
                self.conn.execute("PRAGMA synchronous = NORMAL")
                # 64 MiB of page cache (SQLite's default is 2 MiB): the key indexes of a
                # million-case store stay in memory, so the cost of an insert stays flat
                self.conn.execute("PRAGMA cache_size = -65536")
                with self._tx():
                    for stmt in _SCHEMA.strip().split(";"):
                        if stmt.strip():
                            self.conn.execute(stmt)
                    row = self.conn.execute("SELECT version FROM schema_version").fetchone()
                    if row is None:
                        self.conn.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
                break
            except sqlite3.OperationalError as exc:
                if "locked" in str(exc) and time.monotonic() < deadline:
                    if getattr(self, "conn", None) is not None:
                        self.conn.close()
                    time.sleep(0.05)
                    continue
                raise store_error(self.path, exc) from None
            except sqlite3.DatabaseError as exc:
                raise store_error(self.path, exc) from None
        self._check_version(readonly=False)
        check_on_open(self.conn, self.path)  # a store damaged since this machine last closed it

    def _refuse_foreign(self) -> None:
        """An existing SQLite file that is not a suite store is never written to (no tables added,
        no switch to WAL)."""
        if not self.path.exists() or self.path.stat().st_size == 0:
            return
        try:
            with open(self.path, "rb") as fh:
                head = fh.read(16)
        except OSError as exc:
            raise StoreError(f"store {str(self.path)!r}: cannot read: {exc.strerror or exc}") from None
        if head != b"SQLite format 3\x00":
            raise StoreError(f"store {str(self.path)!r}: expected a dlsys-suite store (SQLite), got another kind of file")
        try:
            conn = sqlite3.connect(f"file:{self.path.resolve()}?mode=ro", uri=True, timeout=60)
            try:
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
            finally:
                conn.close()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"store {str(self.path)!r}: cannot open: {exc}") from None
        if tables and "schema_version" not in tables:
            shown = ", ".join(sorted(tables)[:5])
            raise StoreError(f"store {str(self.path)!r}: expected a dlsys-suite store, got another application's "
                             f"SQLite database (tables {shown}); give another --store path")

    # ------------------------------------------------------------------ plumbing
    class _Tx:
        def __init__(self, conn, lock):
            self.conn, self.lock = conn, lock

        def __enter__(self):
            self.lock.acquire()
            try:
                self.conn.execute("BEGIN IMMEDIATE")
            except BaseException:
                self.lock.release()
                raise
            return self.conn

        def __exit__(self, et, ev, tb):
            try:
                self.conn.execute("COMMIT" if et is None else "ROLLBACK")
            finally:
                self.lock.release()
            return False

    def _tx(self) -> "_Tx":
        return Store._Tx(self.conn, self._wlock)

    def _check_version(self, readonly: bool) -> None:
        try:
            row = self.conn.execute("SELECT version FROM schema_version").fetchone()
        except sqlite3.DatabaseError as exc:
            if "no such table" not in str(exc):  # a lock, a damaged file: said as such
                raise store_error(self.path, exc) from None
            raise StoreError(f"store {str(self.path)!r}: not a dlsys-suite store (no schema_version table)") from None
        version = row[0] if row else SCHEMA_VERSION
        if version > SCHEMA_VERSION:
            raise StoreError(f"store {str(self.path)!r}: schema version {version} is newer than this suite's "
                             f"({SCHEMA_VERSION}); upgrade dlsys-suite")
        if version < SCHEMA_VERSION:
            if readonly:
                raise StoreError(f"store {str(self.path)!r}: schema version {version} needs migrating to "
                                 f"{SCHEMA_VERSION}; open it once for writing (e.g. `suite run`)")
            self.migrate(version)

    def migrate(self, version: int) -> None:
        """Apply :data:`MIGRATIONS` from *version* up to :data:`SCHEMA_VERSION`, in one transaction."""
        with self._tx():
            for v in range(version, SCHEMA_VERSION):
                if v not in MIGRATIONS:
                    raise StoreError(f"store {str(self.path)!r}: no migration from schema version {v}")
                MIGRATIONS[v](self.conn)
            self.conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION,))

    @property
    def schema_version(self) -> int:
        return self.conn.execute("SELECT version FROM schema_version").fetchone()[0]

    def close(self) -> None:
        """Stop the background flusher, commit what is buffered, close the connection."""
        if getattr(self, "conn", None) is None:
            return
        self._stop.set()
        self._wake.set()
        if self._flusher is not None:
            self._flusher.join(5)
            self._flusher = None
        with self._wlock:
            try:
                self.flush()
            finally:
                self.conn.close()
                self.conn = None
                remember(self.path)

    def _pending(self) -> int:
        return len(self._buffer) + len(self._run_links) // 8

    def _flush_loop(self) -> None:
        while True:
            self._wake.wait(self.batch_seconds / 2)
            self._wake.clear()
            if self._stop.is_set():
                return
            try:
                n = self._pending()
                if n >= self.batch_size or (n and time.monotonic() - self._last_flush >= self.batch_seconds):
                    self._flush()
            except Exception:  # noqa: BLE001 - the caller's next flush raises the same error
                pass

    def _ensure_flusher(self) -> None:
        if self._flusher is None and self.batch_seconds > 0:
            self._flusher = threading.Thread(target=self._flush_loop, name="suite-store-flusher", daemon=True)
            self._flusher.start()

    def __enter__(self) -> "Store":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ writing: runs
    def begin_run(self, command: str | None = None, plugins: Mapping[str, str] | None = None) -> int:
        """Record a new run with its provenance; returns its id."""
        prov = provenance(command, plugins)
        with self._tx():
            cur = self.conn.execute(
                "INSERT INTO runs (started, host, platform, python, packages, plugins, git_commit, command, status, pid) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'running', ?)",
                (_now(), prov["host"], prov["platform"], prov["python"], prov["packages"], prov["plugins"],
                 prov["git_commit"], prov["command"], os.getpid()))
            return int(cur.lastrowid)

    def finish_run(self, run_id: int, status: str, counts: Mapping[str, int]) -> None:
        """Close a run: its final status and counts (total, computed, cached, ok, failed, skipped)."""
        cols = ("total", "computed", "cached", "ok", "failed", "skipped")
        self.flush()
        with self._tx():
            self.conn.execute(
                f"UPDATE runs SET finished = ?, status = ?, {', '.join(c + ' = ?' for c in cols)} WHERE id = ?",
                (_now(), status, *[int(counts.get(c, 0)) for c in cols], run_id))

    # ------------------------------------------------------------------ writing: cases
    def ok_keys(self, keys: Iterable[str] | None = None) -> set[str]:
        """Keys stored with status ok (among *keys*, or all)."""
        if keys is None:
            return {r[0] for r in self.conn.execute("SELECT key FROM cases WHERE status = 'ok'")}
        keys = list(keys)
        out: set[str] = set()
        for i in range(0, len(keys), 900):
            chunk = keys[i:i + 900]
            q = f"SELECT key FROM cases WHERE status = 'ok' AND key IN ({','.join('?' * len(chunk))})"
            out.update(r[0] for r in self.conn.execute(q, chunk))
        return out

    def summarized_keys(self, keys: Iterable[str]) -> set[str]:
        """Among *keys*, the ok cases stored with a summary of their artifacts (``--artifacts
        summary``: some entries left out, listed under ``"_omitted"``)."""
        keys = list(keys)
        out: set[str] = set()
        for i in range(0, len(keys), 900):
            chunk = keys[i:i + 900]
            q = (f"SELECT case_key FROM artifacts WHERE case_key IN ({','.join('?' * len(chunk))}) "
                 "AND json_type(data, '$._omitted') IS NOT NULL")
            out.update(r[0] for r in self.conn.execute(q, chunk))
        return out

    def link_cached(self, run_id: int, keys: Iterable[str],
                    overrides: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        """Record that *run_id* used these already-stored cases (committed with the next flush):
        each is linked to the result it reuses (the case's current one), with the profile
        overrides *this* run asked for (*overrides*: key -> overrides; none when absent)."""
        overrides = overrides or {}
        with self._lock:
            self._run_links.extend((run_id, k, "cached", dumps(overrides[k]) if overrides.get(k) else "{}")
                                   for k in keys)
        self._maybe_flush()
        self._ensure_flusher()

    def add_outcome(self, identity: Mapping[str, Any], outcome: Mapping[str, Any], run_id: int,
                    replace: bool = True) -> None:
        """Buffer one finished case.

        Parameters
        ----------
        identity : mapping
            :meth:`suite.runner.case.Case.identity` plus ``key``.
        outcome : mapping
            What a worker returns: ``status``, ``metrics`` (list of ``[name, value, unit,
            direction]``), ``samples`` (metric -> list of float), ``artifacts`` (JSON text or
            None), ``error``, ``traceback``, ``duration`` (s).
        run_id : int
        replace : bool
            Delete the case's previous metrics, samples and artifacts before writing an ok
            outcome. Only a case already stored ok has any (a non-ok outcome never writes them),
            so the runner passes False unless it is recomputing stored cases (``--rerun``).
        """
        d = {**identity, **outcome}
        d["_replace"] = replace
        with self._lock:
            self._buffer.append((d, run_id))
        self._maybe_flush()  # never under _lock: a flush takes _wlock, then _lock
        self._ensure_flusher()

    def _maybe_flush(self) -> None:
        """Wake the flusher when a batch is full; commit here only without a flusher
        (``batch_seconds <= 0``) or when the caller produces faster than SQLite commits (four
        batches waiting: memory stays bounded). Called without holding ``_lock`` (lock order:
        ``_wlock`` before ``_lock``)."""
        n = self._pending()
        due = n >= self.batch_size or (n and time.monotonic() - self._last_flush >= self.batch_seconds)
        if not due:
            return
        if self.batch_seconds <= 0 or n >= 4 * self.batch_size:
            self._flush()
        else:
            self._wake.set()

    def flush(self) -> int:
        """Commit buffered outcomes in one transaction; returns how many cases were written."""
        return self._flush()

    def _flush(self) -> int:
        with self._wlock:  # one flush at a time, in order; the buffers are swapped, not held
            with self._lock:
                if self.conn is None or (not self._buffer and not self._run_links):
                    return 0
                buf, links = self._buffer, self._run_links
                self._buffer, self._run_links = [], []
                self._last_flush = time.monotonic()
            try:
                return self._write(buf, links)
            except BaseException as exc:
                with self._lock:  # nothing is lost: the next flush tries again (and raises again)
                    self._buffer[:0] = buf
                    self._run_links[:0] = links
                if isinstance(exc, sqlite3.DatabaseError):  # a full disk, a damaged page: name the store
                    raise store_error(self.path, exc) from None
                raise

    def _write(self, buf: list, links: list) -> int:
        created = _now()
        case_rows, sample_rows, art_rows, dels, links2 = [], [], [], [], []
        result_rows = []
        for d, run_id in buf:
            key = d["key"]
            params = dumps(d.get("params") or {})
            overrides = dumps(d["overrides"]) if d.get("overrides") else "{}"
            # the rest of the identity is in the case's own columns (_IDENTITY_COLUMNS): not twice
            inputs = d.get("inputs")
            ident = (f'{{"code":{_js(d.get("code"))},"env":{_js(d.get("env"))},'
                     f'"inputs":{dumps(inputs) if inputs else "{}"}}}')
            case_rows.append((
                key, ident, d["technique"], d.get("technique_version"), d.get("variant"), d.get("fidelity"),
                d.get("profile"), d.get("profile_hash"), d.get("workload"), d.get("workload_hash"),
                params, overrides, d.get("seed"),
                d["status"], d.get("error"), d.get("traceback"), d.get("duration"), run_id, created, None))
            links2.append((run_id, key, "computed", None, overrides))
            ok = d["status"] == OK
            result_rows.append((key, run_id, d["status"], d.get("error"), d.get("traceback"), d.get("duration"), created,
                                _metrics_json(d.get("metrics") or ()) if ok else None,
                                _samples_json(d["samples"]) if ok and d.get("samples") else None,
                                dumps(sorted(d["fields_read"])) if ok and d.get("fields_read") is not None else None))
            if ok:
                if d.get("_replace", True):
                    dels.append((key,))
                for mname, vals in (d.get("samples") or {}).items():
                    sample_rows.extend((key, mname, i, _finite(v)) for i, v in enumerate(vals))
                if d.get("artifacts"):
                    art = d["artifacts"]
                    art_rows.append((key, art if isinstance(art, str) else dumps(art)))
        with self._tx():
            if case_rows:
                # every computation keeps its own row (history); the case and its run link point at it
                for i, row in enumerate(result_rows):
                    rid = self.conn.execute(_INSERT_RESULT, row).lastrowid
                    case_rows[i] = case_rows[i][:-1] + (rid,)
                    links2[i] = links2[i][:3] + (rid,) + links2[i][4:]
                self.conn.executemany(_UPSERT_CASE, case_rows)
                # an ok outcome replaces the case's metrics; a non-ok one never touches them
                for tbl in ("samples", "artifacts"):  # (the metrics are in the results row)
                    self.conn.executemany(f"DELETE FROM {tbl} WHERE case_key = ?", dels)
                self.conn.executemany("INSERT OR REPLACE INTO samples VALUES (?, ?, ?, ?)", sample_rows)
                self.conn.executemany("INSERT OR REPLACE INTO artifacts VALUES (?, ?)", art_rows)
                self.conn.executemany("INSERT OR REPLACE INTO run_cases (run_id, case_key, outcome, result_id, "
                                      "overrides) VALUES (?, ?, ?, ?, ?)", links2)
            # a cached case links to the result it reuses: the case's current one
            self.conn.executemany("INSERT OR IGNORE INTO run_cases (run_id, case_key, outcome, result_id, overrides) "
                                  "VALUES (?, ?, ?, (SELECT result_id FROM cases WHERE key = ?), ?)",
                                  [(r, k, o, k, ov) for r, k, o, ov in links])
        return len(case_rows)

    # ------------------------------------------------------------------ reading
    def resolve_run(self, run: int | str | None) -> int | None:
        """A run id from an id, ``"latest"`` or None (None stays None: all runs).

        Raises
        ------
        StoreError
            Unknown run id, or ``latest`` on an empty store.
        """
        if run is None:
            return None
        import re

        back = re.fullmatch(r"(?:latest|last)(?:~(\d+))?", run.strip().lower()) if isinstance(run, str) else None
        if back:  # latest, latest~N: the N-th run before the newest
            n = int(back.group(1) or 0)
            row = self.conn.execute("SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (n,)).fetchone()
            if row is None:
                raise StoreError(f"store {str(self.path)!r} has no runs yet" if n == 0 else
                                 f"run {run!r}: expected at most latest~{self._count_runs() - 1}, the store "
                                 f"{str(self.path)!r} holds {self._count_runs()} run(s)")
            return int(row[0])
        named = self.run_named(run) if isinstance(run, str) and not run.strip().isdigit() else None
        if named is not None:
            return named
        try:
            rid = int(run)
        except (TypeError, ValueError):
            raise StoreError(f"run: expected a run id, a name given with `suite run --name`, 'latest' or "
                             f"'latest~N', got {run!r} (see `suite results list`)") from None
        if self.conn.execute("SELECT 1 FROM runs WHERE id = ?", (rid,)).fetchone() is None:
            raise StoreError(f"store {str(self.path)!r}: no run with id {rid} (see `suite results list`)")
        return rid

    def _count_runs(self) -> int:
        return int(self.conn.execute("SELECT count(*) FROM runs").fetchone()[0])

    def run_named(self, name: str) -> int | None:
        """The run id named *name* (``suite run --name``), or None (no such name, or a store from
        before names existed: the ``run_names`` table is created by the first :meth:`name_run`)."""
        try:
            row = self.conn.execute("SELECT run_id FROM run_names WHERE name = ?",
                                    (unicodedata.normalize("NFKC", name.strip()),)).fetchone()
        except sqlite3.OperationalError:
            return None
        return None if row is None else int(row[0])

    def run_names(self) -> dict[int, str]:
        """run id -> its name, for the runs that have one."""
        try:
            return {int(r): str(n) for n, r in self.conn.execute("SELECT name, run_id FROM run_names")}
        except sqlite3.OperationalError:
            return {}

    def name_run(self, run_id: int, name: str) -> None:
        """Give run *run_id* the label *name* (``suite run --name LABEL``).

        Raises
        ------
        StoreError
            A name that is empty, all digits, ``latest``/``latest~N``, contains whitespace, or
            already names another run.
        """
        name = check_run_name(name)
        other = self.run_named(name)
        if other is not None and other != run_id:
            raise StoreError(f"--name {name!r}: expected a new name, got one that already names run {other} "
                             f"(store {str(self.path)!r})")
        with self.conn:
            self.conn.execute("CREATE TABLE IF NOT EXISTS run_names (name TEXT PRIMARY KEY, "
                              "run_id INTEGER NOT NULL REFERENCES runs(id))")
            self.conn.execute("INSERT OR REPLACE INTO run_names (name, run_id) VALUES (?, ?)", (name, int(run_id)))

    def run_info(self, run: int | str) -> dict[str, Any]:
        """One run's row as a dict (packages and plugins decoded)."""
        rid = self.resolve_run(run)
        cur = self.conn.execute("SELECT * FROM runs WHERE id = ?", (rid,))
        names = [c[0] for c in cur.description]
        d = dict(zip(names, cur.fetchone()))
        for k in ("packages", "plugins"):
            d[k] = json.loads(d[k]) if d.get(k) else {}
        if d.get("status") == "running" and _gone(d.get("host"), d.get("pid")):
            d["status"] = "interrupted"
        return d

    def runs(self):
        """Every run, newest last, as a :class:`pandas.DataFrame`.

        Columns: ``id, started, finished, status, total, computed, cached, ok, failed, skipped,
        host, platform, python, packages, plugins, git_commit, command``.
        """
        import pandas as pd

        df = pd.read_sql_query("SELECT id, started, finished, status, total, computed, cached, ok, failed, skipped, "
                               "host, platform, python, packages, plugins, git_commit, command, pid FROM runs ORDER BY id",
                               self.conn)
        if len(df):
            gone = [st == "running" and _gone(h, p) for st, h, p in zip(df["status"], df["host"], df["pid"])]
            df.loc[gone, "status"] = "interrupted"
        return df.drop(columns=["pid"])

    #: a run's view of a case: the result it produced or reused, the overrides it asked for
    _RUN_VIEW = {"status": "COALESCE(r.status, c.status)", "error": "COALESCE(r.error, c.error)",
                 "duration": "COALESCE(r.duration, c.duration)", "run_id": "COALESCE(r.run_id, c.run_id)",
                 "created": "COALESCE(r.created, c.created)", "overrides": "COALESCE(rc.overrides, c.overrides)"}

    def _case_query(self, run: int | str | None, filters: Mapping[str, Any], columns: str) -> tuple[str, list]:
        rid = self.resolve_run(run)
        where, args = [], []
        col = {}
        if rid is not None:
            col = self._RUN_VIEW
            columns = ", ".join(f"{col[c.strip()[2:]]} AS {c.strip()[2:]}" if c.strip()[2:] in col else c.strip()
                                for c in columns.split(","))
            sql = (f"SELECT {columns}, rc.outcome AS outcome FROM run_cases rc JOIN cases c ON c.key = rc.case_key "
                   "LEFT JOIN results r ON r.id = rc.result_id")
            where.append("rc.run_id = ?")
            args.append(rid)
        else:
            sql = f"SELECT {columns} FROM cases c"
        allowed = {"key", "technique", "variant", "fidelity", "profile", "profile_hash", "workload", "seed", "status",
                   "technique_version", "run_id"}
        for k, v in filters.items():
            if v is None:
                continue
            if k not in allowed:
                raise StoreError(f"filter {k!r}: expected one of {sorted(allowed)}")
            vals = list(v) if isinstance(v, (list, tuple, set, frozenset)) else [v]
            where.append(f"{col.get(k, 'c.' + k)} IN ({','.join('?' * len(vals))})")
            args.extend(vals)
        if where:
            sql += " WHERE " + " AND ".join(where)
        return sql + f" ORDER BY c.technique, c.variant, {col.get('created', 'c.created')}, c.key", args

    def cases(self, run: int | str | None = None, *, expand_params: bool = True, **filters: Any):
        """Cases as a :class:`pandas.DataFrame`, one row per case.

        Parameters
        ----------
        run : int, ``"latest"`` or None
            Only the cases this run asked for (computed or found cached), each as this run saw it:
            the status, error, duration and ``run_id`` of the result it produced or reused, and
            the overrides it asked for; None: every stored case, as currently stored.
        expand_params : bool
            Add one column ``param.NAME`` per technique parameter.
        **filters
            Column = value (or list of values): ``technique, variant, fidelity, profile,
            profile_hash, workload, seed, status, key, technique_version, run_id``.

        Returns
        -------
        DataFrame
            Columns ``key, technique, technique_version, variant, fidelity, profile, profile_hash,
            workload, workload_hash, params`` (dict), ``overrides`` (dict), ``seed, status, error,
            duration`` (s), ``run_id`` (the run that computed it), ``created``, then ``outcome``
            (``computed``/``cached``, only with *run*) and the ``param.NAME`` columns.
        """
        import pandas as pd

        cols = ("c.key, c.technique, c.technique_version, c.variant, c.fidelity, c.profile, c.profile_hash, "
                "c.workload, c.workload_hash, c.params, c.overrides, c.seed, c.status, c.error, c.duration, "
                "c.run_id, c.created")
        sql, args = self._case_query(run, filters, cols)
        df = pd.read_sql_query(sql, self.conn, params=args)
        df["params"] = [json.loads(p) if p else {} for p in df["params"]]
        df["overrides"] = [json.loads(p) if p else {} for p in df["overrides"]]
        if expand_params and len(df):
            pdf = pd.DataFrame(list(df["params"]), index=df.index)
            # one concat, not a column at a time (pandas warned "highly fragmented" per column)
            df = pd.concat([df, pdf.add_prefix("param.")], axis=1)
        return df

    def metrics(self, run: int | str | None = None, wide: bool = False, **filters: Any):
        """Metrics of ok cases as a :class:`pandas.DataFrame`.

        Parameters
        ----------
        run : int, ``"latest"`` or None
        wide : bool
            False (long form): one row per (case, metric) with columns ``key, technique, variant,
            fidelity, profile, profile_hash, workload, params, seed, name, value, unit,
            direction`` and ``param.NAME``. True: one row per case, one column per metric name
            (values only; units are in the long form). A metric whose name is also a case
            column (``seed``, ``profile``, ...) is named ``metric.NAME``.
        **filters
            As :meth:`cases`.
        """
        import pandas as pd

        filters = {**filters}
        cases = self.cases(run, **filters)
        cases = cases[cases["status"] == OK]
        if cases.empty:
            base = ["key", "technique", "variant", "fidelity", "profile", "profile_hash", "workload", "params", "seed"]
            return pd.DataFrame(columns=base if wide else base + ["name", "value", "unit", "direction"])
        keys = list(cases["key"])
        rows = self._run_metric_rows(self.resolve_run(run), keys)
        m = pd.DataFrame(rows, columns=["key", "name", "value", "unit", "direction"])
        keep = [c for c in cases.columns if c not in ("error", "created", "outcome", "run_id", "status")]
        if not wide:
            return cases[keep].merge(m, on="key", how="inner")
        w = m.pivot(index="key", columns="name", values="value")
        w.columns.name = None
        # a metric named like a case column (e.g. "seed") becomes "metric.NAME"
        w = w.rename(columns={c: f"metric.{c}" for c in w.columns if c in cases.columns}).reset_index()
        return cases[keep].merge(w, on="key", how="left")

    def _run_metric_rows(self, rid: int | None, keys: list[str]) -> list[tuple]:
        """(key, name, value, unit, direction) of *keys*: with a run, of the result each case had in
        that run (``results.metrics``); else (or for a link without one) the current metrics."""
        rows: list[tuple] = []
        current = keys
        if rid is not None:
            got = set()
            for i in range(0, len(keys), 900):
                chunk = keys[i:i + 900]
                for k, m in self.conn.execute(
                        f"SELECT rc.case_key, r.metrics FROM run_cases rc JOIN results r ON r.id = rc.result_id "
                        f"WHERE rc.run_id = ? AND r.metrics IS NOT NULL AND rc.case_key IN ({','.join('?' * len(chunk))})",
                        [rid, *chunk]):
                    got.add(k)
                    rows.extend((k, *x) for x in json.loads(m))
            current = [k for k in keys if k not in got]
        for i in range(0, len(current), 900):
            chunk = current[i:i + 900]
            rows.extend(self.conn.execute(
                f"SELECT case_key, name, value, unit, direction FROM metrics WHERE case_key IN ({','.join('?' * len(chunk))})",
                chunk).fetchall())
        return rows

    def run_fields_read(self, run: int | str | None) -> dict[tuple[str, str], set[str]] | None:
        """(technique, code fingerprint) -> the profile fields recorded as read by the results
        *run* produced or reused (its own record); None when none of them recorded its reads."""
        rid = self.resolve_run(run)
        out: dict[tuple[str, str], set[str]] = {}
        for t, code, fields in self.conn.execute(
                "SELECT c.technique, json_extract(c.identity, '$.code'), r.fields FROM run_cases rc "
                "JOIN results r ON r.id = rc.result_id JOIN cases c ON c.key = rc.case_key "
                "WHERE rc.run_id = ? AND r.fields IS NOT NULL", (rid,)):
            out.setdefault((t, code or ""), set()).update(json.loads(fields))
        return out or None

    def history(self, key: str) -> list[dict[str, Any]]:
        """Every stored computation of case *key*, oldest first: ``id, run_id`` (the run that
        computed it), ``status, error, duration, created``, ``metrics`` (name -> value) and
        ``runs`` (the ids of the runs that computed or reused it)."""
        out = []
        for rid_, run_id, status, error, duration, created, metrics in self.conn.execute(
                "SELECT id, run_id, status, error, duration, created, metrics FROM results WHERE case_key = ? "
                "ORDER BY id", (key,)).fetchall():
            runs = [r for (r,) in self.conn.execute("SELECT run_id FROM run_cases WHERE result_id = ? ORDER BY run_id",
                                                     (rid_,))]
            out.append({"id": rid_, "run_id": run_id, "status": status, "error": error, "duration": duration,
                        "created": created, "metrics": {m[0]: m[1] for m in json.loads(metrics or "[]")}, "runs": runs})
        return out

    def result(self, key: str):
        """The stored :class:`suite.technique.Result` of an ok case (metrics, samples, artifacts).

        Raises
        ------
        StoreError
            No such case, or the case is not ok (its status and error are named).
        """
        from suite.technique import Metric, Result

        row = self.conn.execute("SELECT status, error FROM cases WHERE key = ?", (key,)).fetchone()
        if row is None:
            raise StoreError(f"store {str(self.path)!r}: no case with key {key!r}")
        if row[0] != OK:
            raise StoreError(f"case {key}: status {row[0]}: {row[1] or ''}".rstrip(": "))
        samples: dict[str, list[float]] = {}
        for metric, _idx, value in self.conn.execute(
                "SELECT metric, idx, value FROM samples WHERE case_key = ? ORDER BY metric, idx", (key,)):
            samples.setdefault(metric, []).append(value if value is not None else math.nan)
        res = Result()
        for name, value, unit, direction in self.conn.execute(
                "SELECT name, value, unit, direction FROM metrics WHERE case_key = ? ORDER BY name", (key,)):
            s = samples.get(name)
            res.metrics[name] = Metric(name, value if value is not None else math.nan, unit or "1",
                                       direction or "none", tuple(s) if s is not None else None)
        art = self.conn.execute("SELECT data FROM artifacts WHERE case_key = ?", (key,)).fetchone()
        if art is not None:
            res.artifacts = json.loads(art[0])
        return res

    def content_digests(self, keys: Iterable[str]) -> dict[str, str]:
        """key -> SHA-256 (hex) of everything stored for that case that :meth:`result` and
        :meth:`statuses` read: status and error, every metric (name, value, unit, direction),
        every sample and the artifacts' text. Keys not stored are left out. A few bulk queries
        (no Result is built), so a cache keyed by results' content costs little to check."""
        import hashlib
        from array import array

        keys = sorted(set(keys))
        hs: dict[str, Any] = {}
        for i in range(0, len(keys), 900):
            chunk = keys[i:i + 900]
            marks = ",".join("?" * len(chunk))
            for k, st, err in self.conn.execute(f"SELECT key, status, error FROM cases WHERE key IN ({marks})", chunk):
                hs[k] = hashlib.sha256(repr(("case", st, err)).encode())
            for k, *row in self.conn.execute(f"SELECT case_key, name, value, unit, direction FROM metrics "
                                             f"WHERE case_key IN ({marks}) ORDER BY case_key, name", chunk):
                if k in hs:
                    hs[k].update(repr(("m", *row)).encode())
            # samples: their values as float64 bytes (NULL read as NaN, as result() does), not one
            # repr per sample (95,000 of them took 0.2 s)
            counts = self.conn.execute(f"SELECT case_key, metric, count(*) FROM samples WHERE case_key IN ({marks}) "
                                       "GROUP BY case_key, metric ORDER BY case_key, metric", chunk).fetchall()
            vals = self.conn.execute(f"SELECT value FROM samples WHERE case_key IN ({marks}) "
                                     "ORDER BY case_key, metric, idx", chunk).fetchall()
            raw = array("d", [math.nan if v is None else v for (v,) in vals]).tobytes()
            pos = 0
            for k, metric, n in counts:
                if k in hs:
                    hs[k].update(repr(("s", metric, n)).encode() + raw[8 * pos:8 * (pos + n)])
                pos += n
            for k, data in self.conn.execute(f"SELECT case_key, data FROM artifacts WHERE case_key IN ({marks})", chunk):
                if k in hs:
                    hs[k].update(b"\0a\0" + data.encode())
        return {k: h.hexdigest() for k, h in hs.items()}

    def judgements(self, keys: Iterable[str]) -> dict[str, str]:
        """key -> the stored judgement (JSON text) for the given judgement keys that are stored."""
        keys = list(keys)
        out: dict[str, str] = {}
        for i in range(0, len(keys), 900):
            chunk = keys[i:i + 900]
            out.update(self.conn.execute(
                f"SELECT key, data FROM judgements WHERE key IN ({','.join('?' * len(chunk))})", chunk).fetchall())
        return out

    def add_judgements(self, items: Mapping[str, str]) -> None:
        """Store judgements (judgement key -> JSON text), replacing any under the same key."""
        if not items:
            return
        created = _now()
        with self._tx():
            self.conn.executemany("INSERT OR REPLACE INTO judgements VALUES (?, ?, ?)",
                                  [(k, v, created) for k, v in items.items()])

    def case(self, key: str) -> dict[str, Any]:
        """One case's row as a dict (with ``traceback``), or StoreError. ``identity`` is the whole
        identity the key hashes (:meth:`suite.runner.case.Case.identity`)."""
        cur = self.conn.execute("SELECT * FROM cases WHERE key = ?", (key,))
        row = cur.fetchone()
        if row is None:
            raise StoreError(f"store {str(self.path)!r}: no case with key {key!r}")
        d = dict(zip([c[0] for c in cur.description], row))
        for k in ("identity", "params", "overrides"):
            d[k] = json.loads(d[k]) if d.get(k) else {}
        d["identity"] = {**{c: d.get(c) for c in _IDENTITY_COLUMNS}, **d["identity"]}
        return d

    def add_fields_read(self, technique: str, code: str, variant: str, fidelity: str,
                        fields: Iterable[str]) -> None:
        """Record (a union with what is stored) the profile fields an evaluation of this
        technique code, variant and fidelity read (:mod:`suite.hardware.tracking`)."""
        with self._tx():
            row = self.conn.execute("SELECT fields FROM fields_read WHERE technique=? AND code=? AND variant=? "
                                    "AND fidelity=?", (technique, code or "", variant, fidelity)).fetchone()
            have = set(json.loads(row[0])) if row else set()
            new = have | set(fields)
            if row is None or new != have:
                self.conn.execute("INSERT OR REPLACE INTO fields_read VALUES (?, ?, ?, ?, ?)",
                                  (technique, code or "", variant, fidelity, json.dumps(sorted(new))))

    def fields_read(self, technique: str, code: str | None = None) -> dict[tuple[str, str], set[str]]:
        """(variant, fidelity) -> the profile fields stored as read by *technique* (its *code*
        fingerprint only, when given)."""
        q = "SELECT variant, fidelity, fields FROM fields_read WHERE technique = ?"
        args: list = [technique]
        if code is not None:
            q += " AND code = ?"
            args.append(code)
        out: dict[tuple[str, str], set[str]] = {}
        for v, f, fields in self.conn.execute(q, args):
            out.setdefault((v, f), set()).update(json.loads(fields))
        return out

    def codes(self, run: int | str | None = "latest") -> dict[str, tuple[str, str | None]]:
        """key -> (technique, code fingerprint it was computed with) for the cases of *run*
        (None for cases stored before fingerprints were recorded)."""
        rid = self.resolve_run(run)
        rows = self.conn.execute(
            "SELECT c.key, c.technique, json_extract(c.identity, '$.code') FROM cases c "
            "JOIN run_cases r ON r.case_key = c.key WHERE r.run_id = ?", (rid,))
        return {k: (t, code) for k, t, code in rows}

    def statuses(self, keys: Iterable[str]) -> dict[str, tuple[str, str | None]]:
        """key -> (status, error) for the given keys that are stored."""
        keys = list(keys)
        out = {}
        for i in range(0, len(keys), 900):
            chunk = keys[i:i + 900]
            for k, s, e in self.conn.execute(
                    f"SELECT key, status, error FROM cases WHERE key IN ({','.join('?' * len(chunk))})", chunk):
                out[k] = (s, e)
        return out
