"""The results store: one SQLite file (WAL mode) with runs, cases, results, samples, artifacts.

:class:`Store` is the one object callers hold; each of its jobs lives in a module of its own:

* :mod:`suite.results.schema`: the tables (documented there), migrations, opening a file;
* :mod:`suite.results.writer`: runs, and finished cases committed in batches by a background
  flusher thread, off the evaluation path;
* :mod:`suite.results.readers`: cases and metrics as pandas DataFrames, one case's result;
* :mod:`suite.results.runs`: finding and naming runs;
* :mod:`suite.results.provenance`: where and with what a run was made;
* :mod:`suite.results.judgements`: ``suite reproduce``'s judgement cache;
* :mod:`suite.results.fields`: the profile fields evaluations read.

Only the coordinating process of a run writes it (workers return plain dicts). Writes are
batched: the runner calls :meth:`Store.add_outcome` per finished case and a flusher thread
commits every ``batch_size`` cases or ``batch_seconds``, so a ``kill -9`` loses at most the
cases not yet committed (the next run recomputes only those). The current result of each case is
kept once per case key (the writer looks a batch's keys up and inserts or replaces inside one
``BEGIN IMMEDIATE`` transaction), so two ``suite run`` processes on one store lose nothing and
store no duplicate; every computation is also kept, per run (``results``).
A case already stored with status ``ok`` is never overwritten by a non-ok outcome; ``--rerun``
replaces an ok case by a new ok one.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from suite.errors import StoreError
import suite.results.fields as _fields
import suite.results.judgements as _judgements
import suite.results.readers as _readers
import suite.results.runs as _runs
import suite.results.schema as _schema
from suite.results.codec import dumps
from suite.results.integrity import check_on_open, remember
from suite.results.provenance import provenance
from suite.results.runs import check_run_name
from suite.results.schema import FAILED_STATUSES, MIGRATIONS, OK, SCHEMA_VERSION, STATUSES
from suite.results.writer import BATCH_SECONDS, BATCH_SIZE, Writer

if TYPE_CHECKING:
    import pandas as pd

    from suite.technique import Result

__all__ = ["Store", "SCHEMA_VERSION", "MIGRATIONS", "default_store_path", "OK", "FAILED_STATUSES", "STATUSES",
           "StoreError", "check_run_name", "dumps", "provenance"]


def default_store_path() -> Path:
    """``SUITE_STORE`` if set, else ``results/suite.sqlite`` relative to the working directory."""
    return Path(os.environ.get("SUITE_STORE") or Path("results") / "suite.sqlite")


def _file_id(path: Path) -> tuple[int, int] | None:
    """(device, inode) of the file at *path*, or None when there is none."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


class Store:
    """A results store in one SQLite file.

    Parameters
    ----------
    path : str or Path, optional
        The SQLite file; created if missing (with its folder when *path* is not given; a given
        path's folder must exist). Defaults to :func:`default_store_path` (``SUITE_STORE`` or
        ``results/suite.sqlite`` in the CWD).
    batch_size : int
        Outcomes buffered before a commit (default :data:`~suite.results.writer.BATCH_SIZE`, 32,768).
    batch_seconds : float
        Longest time (s) an outcome waits in the buffer before a commit (a background thread
        checks; default :data:`~suite.results.writer.BATCH_SECONDS`, 2 s): what a ``kill -9``
        of the coordinating process can lose.
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

    conn: Any  # sqlite3.Connection while open, None once closed

    def __init__(self, path: str | Path | None = None, *, batch_size: int = BATCH_SIZE,
                 batch_seconds: float = BATCH_SECONDS, readonly: bool = False) -> None:
        self.path = Path(path) if path is not None else default_store_path()
        self.batch_size = int(batch_size)
        self.batch_seconds = float(batch_seconds)
        self._wlock = threading.RLock()
        self._writer: Writer | None = None
        self._file: tuple[int, int] | None = None
        self.conn = None
        if readonly:
            self.conn = _schema.open_readonly(self.path)
            return
        if path is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        elif not self.path.parent.is_dir():
            raise StoreError(f"store {str(self.path)!r}: expected an existing folder, got no folder "
                             f"{str(self.path.parent)!r} (create it first)")
        self.conn = _schema.open_writable(self.path, self._wlock)
        self._file = _file_id(self.path)  # the file written: a path deleted or replaced meanwhile is named by `lost`
        check_on_open(self.conn, self.path)  # a store damaged since this machine last closed it
        self._writer = Writer(self.conn, self.path, self._wlock, batch_size=self.batch_size,
                              batch_seconds=self.batch_seconds)

    # ------------------------------------------------------------------ opening and closing
    def lost(self) -> str | None:
        """Why what this store wrote is no longer at its path (the file was deleted, moved or replaced
        since it was opened: SQLite keeps writing to the open file, which no path names any more), or
        None while the path names the file opened (and for a read-only store)."""
        if getattr(self, "_file", None) is None:
            return None
        now = _file_id(self.path)
        if now == self._file:
            return None
        what = "deleted or moved" if now is None else "replaced by another file"
        return f"store {str(self.path)!r}: the file was {what} while this process wrote it: what it wrote is lost"

    @property
    def writer(self) -> Writer:
        """The store's :class:`~suite.results.writer.Writer`; StoreError on a read-only store."""
        if self._writer is None:
            raise StoreError(f"store {str(self.path)!r}: opened read-only (expected a store opened for writing)")
        return self._writer

    def migrate(self, version: int) -> None:
        """Apply :data:`MIGRATIONS` from *version* up to :data:`SCHEMA_VERSION`, in one transaction."""
        _schema.migrate(self.conn, self.path, version, self._wlock)

    @property
    def schema_version(self) -> int:
        """The schema version the store is written in."""
        return _schema.schema_version(self.conn)

    def close(self) -> None:
        """Stop the background flusher, commit what is buffered, close the connection."""
        if self.conn is None:
            return
        try:
            if self._writer is not None:
                self._writer.close()  # joins the flusher first: never under the write lock
        finally:
            with self._wlock:
                self.conn.close()
                self.conn = None
                remember(self.path)

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writing
    def begin_run(self, command: str | None = None, plugins: Mapping[str, str] | None = None,
                  packages: Mapping[str, str] | None = None) -> int:
        """Record a new run with its provenance (:func:`suite.results.provenance.provenance`; *packages*:
        library -> version, beside the core's own); returns its id."""
        return self.writer.begin_run(command, plugins, packages)

    def plan_run(self, run_id: int, total: int) -> None:
        """Record how many cases running run *run_id* plans (read back as ``planned`` while it runs
        or after its process died; :func:`suite.results.runs.run_info`)."""
        self.writer.plan_run(run_id, total)

    def finish_run(self, run_id: int, status: str, counts: Mapping[str, int]) -> None:
        """Close a run: its final status and counts (total, computed, cached, ok, failed, skipped)."""
        self.writer.finish_run(run_id, status, counts)

    def link_cached(self, run_id: int, keys: Iterable[str],
                    overrides: Mapping[str, Mapping[str, Any]] | None = None) -> None:
        """Record that *run_id* used these already-stored cases (committed with the next flush):
        each is linked to the result it reuses (the case's current one), with the profile
        overrides *this* run asked for (*overrides*: key -> overrides; none when absent). *keys*
        may be a :func:`suite.results.sql.hashed` mapping (as for every look-up by keys): its
        hashes are used, not computed again."""
        self.writer.link_cached(run_id, keys, overrides)

    def add_outcome(self, identity: Mapping[str, Any], outcome: Mapping[str, Any], run_id: int,
                    replace: bool = True) -> None:
        """Buffer one finished case (committed by the flusher thread within ``batch_seconds``).

        Parameters
        ----------
        identity : mapping
            :meth:`suite.runner.case.Case.identity` plus ``key``.
        outcome : mapping
            What a worker returns: ``status``, ``metrics`` (list of ``[name, value, unit,
            direction]``), ``samples`` (metric -> list of float), ``artifacts`` (JSON text or
            None), ``error``, ``traceback``, ``duration`` (s), ``fields_read`` (profile field
            paths, optional).
        run_id : int
        replace : bool
            Delete the case's previous samples and artifacts before writing an ok outcome. Only
            a case already stored ok has any (a non-ok outcome never writes them), so the runner
            passes False unless it is recomputing stored cases (``--rerun``).
        """
        self.writer.add_outcome(identity, outcome, run_id, replace)

    def flush(self) -> int:
        """Commit buffered outcomes in one transaction; returns how many cases were written
        (0 on a read-only or closed store)."""
        return 0 if self._writer is None or self.conn is None else self._writer.flush()

    def add_judgements(self, items: Mapping[str, str]) -> None:
        """Store judgements (judgement key -> JSON text), replacing any under the same key."""
        _judgements.add_judgements(self.writer.tx(), items)

    def add_fields_read(self, technique: str, code: str, variant: str, fidelity: str,
                        fields: Iterable[str]) -> None:
        """Record (a union with what is stored) the profile fields an evaluation of this
        technique code, variant and fidelity read (:mod:`suite.hardware.tracking`)."""
        _fields.add_fields_read(self.writer.tx(), technique, code, variant, fidelity, fields)

    # ------------------------------------------------------------------ runs
    def resolve_run(self, run: int | str | None) -> int | None:
        """A run id from an id, a run name, ``"latest"``/``"latest~N"`` or None (None stays None: all runs).

        Raises
        ------
        StoreError
            Unknown run id or name, or ``latest`` on an empty store.
        """
        return _runs.resolve_run(self.conn, self.path, run)

    def run_named(self, name: str) -> int | None:
        """The run id named *name* (``suite run --name``), or None."""
        return _runs.run_named(self.conn, name)

    def run_names(self) -> dict[int, str]:
        """run id -> its name, for the runs that have one."""
        return _runs.run_names(self.conn)

    def name_run(self, run_id: int, name: str, resumes: int | None = None) -> None:
        """Give run *run_id* the label *name* (``suite run --name LABEL``); *resumes*: the
        interrupted run this one resumes, whose name (if it holds *name*) moves to *run_id*.

        Raises
        ------
        StoreError
            A name that is empty, all digits, ``latest``/``latest~N``, contains whitespace, or
            already names another run.
        """
        _runs.name_run(self.conn, self.path, run_id, name, resumes)

    def run_info(self, run: int | str) -> dict[str, Any]:
        """One run's row as a dict (packages and plugins decoded)."""
        return _runs.run_info(self.conn, self.resolve_run(run))

    def runs(self) -> pd.DataFrame:
        """Every run, newest last, as a :class:`pandas.DataFrame`.

        Columns: ``id, started, finished, status, total, computed, cached, ok, failed, skipped,
        host, platform, python, packages, plugins, git_commit, command``.
        """
        return _runs.runs(self.conn)

    # ------------------------------------------------------------------ reading
    def cases(self, run: int | str | None = None, *, expand_params: bool = True, **filters: Any) -> pd.DataFrame:
        """Cases as a :class:`pandas.DataFrame`, one row per case.

        Parameters
        ----------
        run : int, str or None
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

        Raises
        ------
        StoreError
            Unknown run, or a filter on another column.
        """
        return _readers.cases(self.conn, self.resolve_run(run), filters, expand_params)

    def case_records(self, run: int | str | None = None, *, with_metrics: bool = False,
                     **filters: Any) -> list[dict[str, Any]]:
        """:meth:`cases` as a list of dicts without pandas (no ``param.NAME`` columns); with
        *with_metrics*, each ok case's ``metrics`` as ``(name, value, unit, direction)`` tuples.
        For a short table; :meth:`cases` and :meth:`metrics` for analysis.

        Raises
        ------
        StoreError
            Unknown run, or a filter on another column.
        """
        return _readers.case_records(self.conn, self.resolve_run(run), filters, with_metrics)

    def metrics(self, run: int | str | None = None, wide: bool = False, **filters: Any) -> pd.DataFrame:
        """Metrics of ok cases as a :class:`pandas.DataFrame`.

        Parameters
        ----------
        run : int, str or None
        wide : bool
            False (long form): one row per (case, metric) with columns ``key, technique, variant,
            fidelity, profile, profile_hash, workload, params, seed, name, value, unit,
            direction`` and ``param.NAME``. True: one row per case, one column per metric name
            (values only; units are in the long form). A metric whose name is also a case
            column (``seed``, ``profile``, ...) is named ``metric.NAME``.
        **filters
            As :meth:`cases`.
        """
        return _readers.metrics(self.conn, self.resolve_run(run), filters, wide)

    def run_fields_read(self, run: int | str | None) -> dict[tuple[str, str], set[str]] | None:
        """(technique, code fingerprint) -> the profile fields recorded as read by the results
        *run* produced or reused (its own record); None when none of them recorded its reads."""
        return _fields.run_fields_read(self.conn, self.resolve_run(run))

    def case_fields_read(self, keys: Iterable[str]) -> dict[str, list[str]]:
        """Case key -> the profile fields its stored result recorded as read, for those of *keys*
        whose result recorded its reads (a result stored before reads were kept: absent)."""
        return _fields.case_fields_read(self.conn, keys)

    def fields_read(self, technique: str, code: str | None = None) -> dict[tuple[str, str], set[str]]:
        """(variant, fidelity) -> the profile fields stored as read by *technique* (its *code*
        fingerprint only, when given)."""
        return _fields.fields_read(self.conn, technique, code)

    def history(self, key: str) -> list[dict[str, Any]]:
        """Every stored computation of case *key*, oldest first: ``id, run_id`` (the run that
        computed it), ``status, error, duration, created``, ``metrics`` (name -> value) and
        ``runs`` (the ids of the runs that computed or reused it)."""
        return _readers.history(self.conn, key)

    def result(self, key: str) -> Result:
        """The stored :class:`suite.technique.Result` of an ok case (metrics, samples, artifacts).

        Raises
        ------
        StoreError
            No such case, or the case is not ok (its status and error are named).
        """
        return _readers.result(self.conn, self.path, key)

    def content_digests(self, keys: Iterable[str]) -> dict[str, str]:
        """key -> SHA-256 (hex) of everything stored for that case that :meth:`result` and
        :meth:`statuses` read: status and error, every metric (name, value, unit, direction),
        every sample and the artifacts' text. Keys not stored are left out. A few bulk queries
        (no Result is built), so a cache keyed by results' content costs little to check."""
        return _readers.content_digests(self.conn, keys)

    def judgements(self, keys: Iterable[str]) -> dict[str, str]:
        """key -> the stored judgement (JSON text) for the given judgement keys that are stored."""
        return _judgements.judgements(self.conn, keys)

    def case(self, key: str) -> dict[str, Any]:
        """One case's row as a dict (with ``traceback``), or StoreError. ``identity`` is the whole
        identity the key hashes (:meth:`suite.runner.case.Case.identity`)."""
        return _readers.case(self.conn, self.path, key)

    def codes(self, run: int | str | None = "latest") -> dict[str, tuple[str, str | None]]:
        """key -> (technique, code fingerprint it was computed with) for the cases of *run*
        (None for cases stored before fingerprints were recorded)."""
        return _readers.codes(self.conn, self.resolve_run(run))

    def statuses(self, keys: Iterable[str]) -> dict[str, tuple[str, str | None]]:
        """key -> (status, error) for the given keys that are stored."""
        return _readers.statuses(self.conn, keys)

    def ok_keys(self, keys: Iterable[str] | None = None) -> set[str]:
        """Keys stored with status ok (among *keys*, or all)."""
        return _readers.ok_keys(self.conn, keys)

    def summarized_keys(self, keys: Iterable[str]) -> set[str]:
        """Among *keys*, the cases stored without some of their artifacts: with a summary
        (``--artifacts summary``, the entries left out listed under ``"_omitted"``) or none
        (``--artifacts none``; one stored by 0.3.11's, which kept no marker, is found by its run's
        command). A ``full`` run or ``suite reproduce`` computes them again."""
        return _readers.summarized_keys(self.conn, keys)
