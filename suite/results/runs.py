"""The runs of a store: finding one (an id, a name given with ``suite run --name``, ``latest``,
``latest~N``), naming one, and reading their provenance."""

from __future__ import annotations

import json
import re
import sqlite3
import unicodedata
from pathlib import Path
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from suite.errors import StoreError, did_you_mean
from suite.results.provenance import process_gone
from suite.results.schema import FAILED_STATUSES, OK

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["check_run_name", "resolve_run", "run_named", "run_names", "name_run", "run_info", "runs", "case_count"]

_BACK = re.compile(r"(?:latest|last)(?:~(\d+))?")


def check_run_name(name: str) -> str:
    """*name* as a run label in its canonical spelling (:func:`suite.results.names.normalize_run_name`:
    NFKC; no control or bidirectional characters).

    Raises
    ------
    StoreError
        A name that cannot label a run: empty, all digits, ``latest``/``last``/``latest~N``, or
        with whitespace or a control character.
    """
    from suite.results.names import normalize_run_name

    try:
        return normalize_run_name(name)
    except ValueError as exc:
        raise StoreError(str(exc)) from None


def _count(conn: sqlite3.Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM runs").fetchone()[0])


def _nth_latest(conn: sqlite3.Connection, path: Path, run: str, n: int) -> int:
    """The id of the *n*-th run before the newest (``latest~n``)."""
    row = conn.execute("SELECT id FROM runs ORDER BY id DESC LIMIT 1 OFFSET ?", (n,)).fetchone()
    if row is None:
        if n == 0:
            raise StoreError(f"store {str(path)!r} has no runs yet")
        raise StoreError(f"run {run!r}: expected at most latest~{_count(conn) - 1}, the store "
                         f"{str(path)!r} holds {_count(conn)} run(s)")
    return int(row[0])


def resolve_run(conn: sqlite3.Connection, path: Path, run: int | str | None) -> int | None:
    """A run id from an id, a run name, ``"latest"`` / ``"latest~N"`` or None (None stays None: all runs).

    Raises
    ------
    StoreError
        Unknown run id or name, ``latest`` on an empty store, ``latest~N`` past the first run.
    """
    if run is None:
        return None
    back = _BACK.fullmatch(run.strip().lower()) if isinstance(run, str) else None
    if back:  # latest, latest~N: the N-th run before the newest
        return _nth_latest(conn, path, str(run), int(back.group(1) or 0))
    named = run_named(conn, run) if isinstance(run, str) and not run.strip().isdigit() else None
    if named is not None:
        return named
    try:
        rid = int(run)
    except (TypeError, ValueError):
        raise StoreError(f"run: expected a run id, a name given with `suite run --name`, 'latest' or "
                         f"'latest~N', got {run!r}{did_you_mean(str(run), run_names(conn).values())} "
                         "(see `suite results list`)") from None
    if conn.execute("SELECT 1 FROM runs WHERE id = ?", (rid,)).fetchone() is None:
        raise StoreError(f"store {str(path)!r}: no run with id {rid} (see `suite results list`)")
    return rid


def run_named(conn: sqlite3.Connection, name: str) -> int | None:
    """The run id named *name* (``suite run --name``), or None (no such name, or a store from
    before names existed: the ``run_names`` table is created by the first :func:`name_run`)."""
    try:
        row = conn.execute("SELECT run_id FROM run_names WHERE name = ?",
                           (unicodedata.normalize("NFKC", name.strip()),)).fetchone()
    except sqlite3.OperationalError:
        return None
    return None if row is None else int(row[0])


def run_names(conn: sqlite3.Connection) -> dict[int, str]:
    """run id -> its name, for the runs that have one."""
    try:
        return {int(r): str(n) for n, r in conn.execute("SELECT name, run_id FROM run_names")}
    except sqlite3.OperationalError:
        return {}


def name_run(conn: sqlite3.Connection, path: Path, run_id: int, name: str, resumes: int | None = None) -> None:
    """Give run *run_id* the label *name* (``suite run --name LABEL``); the name moves to it from
    run *resumes*, the interrupted run it resumes, if that run holds it.

    Raises
    ------
    StoreError
        A name that :func:`check_run_name` refuses, or that already names another run.
    """
    name = check_run_name(name)
    other = run_named(conn, name)
    if other is not None and other not in (run_id, resumes):
        raise StoreError(f"--name {name!r}: expected a new name, got one that already names run {other} "
                         f"(store {str(path)!r})")
    with conn:
        conn.execute("CREATE TABLE IF NOT EXISTS run_names (name TEXT PRIMARY KEY, "
                     "run_id INTEGER NOT NULL REFERENCES runs(id))")
        conn.execute("INSERT OR REPLACE INTO run_names (name, run_id) VALUES (?, ?)", (name, int(run_id)))


def run_info(conn: sqlite3.Connection, rid: int | None) -> dict[str, Any]:
    """Run *rid*'s row as a dict, ``packages`` and ``plugins`` decoded (dicts). A run still marked
    ``running``, ``interrupted`` (Ctrl-C, SIGTERM, SIGHUP) or stopped on an ``error`` of the suite
    (:data:`UNFINISHED`) gets its counts from the cases it stored and ``planned``, the number of
    cases it set out to run (0: not known, always for an ``error`` run; absent for a run that
    finished); one still ``running`` whose process is gone reads as ``interrupted``."""
    cur = conn.execute("SELECT * FROM runs WHERE id = ?", (rid,))
    names = [c[0] for c in cur.description]
    d = dict(zip(names, cur.fetchone()))
    for k in ("packages", "plugins"):
        d[k] = json.loads(d[k]) if d.get(k) else {}
    if d.get("status") in UNFINISHED:
        d.update(_unfinished(d, stored_counts(conn, int(d["id"]))))
    return d


#: the statuses of a run that did not finish its plan (``error``: it stopped on an error of the suite),
#: read as "N stored of M planned" (:func:`run_info`, :func:`case_count`)
UNFINISHED = ("running", "interrupted", "error")


def _unfinished(row: Mapping[Any, Any], counts: Mapping[str, int]) -> dict[str, Any]:
    """What a run row of an :data:`UNFINISHED` status reads as: *counts* (:func:`stored_counts`: from
    the cases it stored), ``planned`` (its row's ``total``: the plan, written as it began,
    :meth:`suite.results.writer.Writer.plan_run`, and kept when an interrupted run closes; 0: not
    known) and its status (``interrupted`` once a running run's process is gone). A run stopped on
    an ``error`` keeps its status and no plan (``planned`` 0): its row's ``total`` counts the cases
    handed out, not those stored."""
    if row.get("status") == "error":
        return {**counts, "planned": 0}
    gone = row.get("status") == "interrupted" or process_gone(row.get("host"), row.get("pid"))
    status = "interrupted" if gone else "running"
    return {"status": status, **counts, "planned": int(row["total"] or 0)}


def case_count(info: Mapping[str, Any]) -> str:
    """A run's cases in words: ``"40"`` for a finished run; for one still running, interrupted, killed or
    stopped on an error (its ``planned`` set by :func:`run_info`) ``"19 stored of 40 planned"``, or
    ``"19 stored"`` when the plan is not known (``planned`` 0: a run stopped on an error)."""
    planned = info.get("planned")
    if planned is None or planned != planned:  # a finished run (None; NaN in a frame)
        return str(info["total"])
    return f"{info['total']} stored" + (f" of {int(planned)} planned" if planned else "")


#: the counts (RUN_COUNTS, in order) of the runs whose ids the JSON list parameter holds, each after its
#: id, from what it stored: its links (computed or cached) and their results' statuses (a run that
#: stored nothing has no row)
_STORED_COUNTS = ("SELECT rc.run_id, count(*), sum(rc.outcome = 'computed'), sum(rc.outcome = 'cached'), "
                  f"sum(r.status = '{OK}'), sum(r.status IN ({', '.join(repr(s) for s in FAILED_STATUSES)})), "
                  "sum(r.status = 'skipped') FROM run_cases rc LEFT JOIN results r ON r.id = rc.result_id "
                  "WHERE rc.run_id IN (SELECT value FROM json_each(?)) GROUP BY rc.run_id")


def stored_counts(conn: sqlite3.Connection, rid: int) -> dict[str, int]:
    """The counts of run *rid* (:data:`suite.results.writer.RUN_COUNTS`) from the cases it stored: for a
    run still running, or whose process ended before it could write its counts (killed, or a plugin
    that exited the process of an ``--in-process`` run), whose row holds zeros."""
    return _counts_of(conn, [rid])[rid]


def _counts_of(conn: sqlite3.Connection, ids: list[int]) -> dict[int, dict[str, int]]:
    """Each of the runs *ids* -> its :func:`stored_counts` (zeros for a run that stored nothing), in one
    query (``suite results list`` made one a run)."""
    from suite.results.writer import RUN_COUNTS

    got = {int(row[0]): row[1:] for row in conn.execute(_STORED_COUNTS, (json.dumps(ids),))}
    return {i: {c: int(v or 0) for c, v in zip(RUN_COUNTS, got.get(i, (0,) * len(RUN_COUNTS)))} for i in ids}


def runs(conn: sqlite3.Connection) -> pd.DataFrame:
    """Every run, newest last: columns ``id, started, finished, status, total, computed, cached,
    ok, failed, skipped, host, platform, python, packages, plugins, git_commit, command, planned``
    (``planned``: None for a finished run; see :func:`run_info`)."""
    import pandas as pd

    df = pd.read_sql_query("SELECT id, started, finished, status, total, computed, cached, ok, failed, skipped, "
                           "host, platform, python, packages, plugins, git_commit, command, pid FROM runs ORDER BY id",
                           conn)
    df["planned"] = None
    unfinished = df[df["status"].isin(UNFINISHED)]
    if len(unfinished):
        counts = _counts_of(conn, [int(i) for i in unfinished["id"]])
        for i, row in unfinished.iterrows():
            for col, v in _unfinished(row.to_dict(), counts[int(row["id"])]).items():
                df.at[i, col] = v
    return df.drop(columns=["pid"])
