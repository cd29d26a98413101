"""Reading a store: cases and metrics as pandas DataFrames, one case's result and history, and
the bulk look-ups the runner and ``suite reproduce`` make (stored keys, statuses, content digests).

Every function takes the store's connection; a run is given by its id (None: every stored case,
as currently stored), already resolved (:func:`suite.results.runs.resolve_run`).
"""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
from array import array
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from suite.errors import StoreError
from suite.results.schema import CASE_COLUMNS, IDENTITY_COLUMNS, METRICS_VIEW, OK
from suite.results.sql import KEY_IN, KEY_IS, key_args, key_lists, select_keys

if TYPE_CHECKING:
    import pandas as pd

    from suite.technique import Result

__all__ = ["cases", "case_records", "metrics", "metric_rows", "history", "result", "content_digests", "case", "statuses", "codes",
           "ok_keys", "summarized_keys", "CASE_FILTERS"]

#: the columns :func:`cases` and :func:`metrics` filter on
CASE_FILTERS = frozenset({"key", "technique", "variant", "fidelity", "profile", "profile_hash", "workload", "seed",
                          "status", "technique_version", "run_id"})

#: a run's view of a case: the result it produced or reused, the overrides it asked for
_RUN_VIEW = {"status": "COALESCE(r.status, c.status)", "error": "COALESCE(r.error, c.error)",
             "duration": "COALESCE(r.duration, c.duration)", "run_id": "COALESCE(r.run_id, c.run_id)",
             "created": "COALESCE(r.created, c.created)", "overrides": "COALESCE(rc.overrides, c.overrides)"}

_CASE_SELECT = ("c.key, c.technique, c.technique_version, c.variant, c.fidelity, c.profile, c.profile_hash, "
                "c.workload, c.workload_hash, c.params, c.overrides, c.seed, c.status, c.error, c.duration, "
                "c.run_id, c.created")

_METRIC_BASE = ["key", "technique", "variant", "fidelity", "profile", "profile_hash", "workload", "params", "seed"]


def _filter_sql(filters: Mapping[str, Any], col: Mapping[str, str]) -> tuple[list[str], list[Any]]:
    """The WHERE terms and their parameters of column = value (or list of values) *filters*."""
    where: list[str] = []
    args: list[Any] = []
    for k, v in filters.items():
        if v is None:
            continue
        if k not in CASE_FILTERS:
            raise StoreError(f"filter {k!r}: expected one of {sorted(CASE_FILTERS)}")
        vals = list(v) if isinstance(v, (list, tuple, set, frozenset)) else [v]
        if k == "key":  # through the key hashes' index (schema 8: the keys have none)
            where.append(KEY_IN)
            args.extend(key_lists(map(str, vals)))
            continue
        where.append(f"{col.get(k, 'c.' + k)} IN ({','.join('?' * len(vals))})")
        args.extend(vals)
    return where, args


def _case_query(rid: int | None, filters: Mapping[str, Any], columns: str) -> tuple[str, list[Any]]:
    """The query of the cases of run *rid* (each as the run saw it) or of every case."""
    col: Mapping[str, str] = {}
    if rid is not None:
        col = _RUN_VIEW
        columns = ", ".join(f"{col[c.strip()[2:]]} AS {c.strip()[2:]}" if c.strip()[2:] in col else c.strip()
                            for c in columns.split(","))
        sql = (f"SELECT {columns}, rc.outcome AS outcome FROM run_cases rc JOIN cases c ON c.id = rc.case_id "
               "LEFT JOIN results r ON r.id = rc.result_id")
    else:
        sql = f"SELECT {columns} FROM cases c"
    where, args = _filter_sql(filters, col)
    if rid is not None:
        where.insert(0, "rc.run_id = ?")
        args.insert(0, rid)
    if where:
        sql += " WHERE " + " AND ".join(where)
    return sql + f" ORDER BY c.technique, c.variant, {col.get('created', 'c.created')}, c.key", args


def cases(conn: sqlite3.Connection, rid: int | None, filters: Mapping[str, Any],
          expand_params: bool = True) -> pd.DataFrame:
    """Cases as a DataFrame, one row per case (see :meth:`suite.results.store.Store.cases`).

    Raises
    ------
    StoreError
        A filter on a column not in :data:`CASE_FILTERS`.
    """
    import pandas as pd

    sql, args = _case_query(rid, filters, _CASE_SELECT)
    df = pd.read_sql_query(sql, conn, params=args)
    df["params"] = [json.loads(p) if p else {} for p in df["params"]]
    df["overrides"] = [json.loads(p) if p else {} for p in df["overrides"]]
    if expand_params and len(df):
        pdf = pd.DataFrame(list(df["params"]), index=df.index)
        # one concat, not a column at a time (pandas warned "highly fragmented" per column)
        df = pd.concat([df, pdf.add_prefix("param.")], axis=1)
    return df


def case_records(conn: sqlite3.Connection, rid: int | None, filters: Mapping[str, Any],
                 with_metrics: bool = False) -> list[dict[str, Any]]:
    """Cases as dicts, in :func:`cases`' order, with its columns but no ``param.NAME`` ones, read
    without pandas (importing it costs 0.3-0.5 s of CPU: `suite run`'s table of a few cases
    needs none of it). *with_metrics*: each record's ``metrics``, a list of ``(name, value,
    unit, direction)`` (:func:`metric_rows`; empty unless the case is ok, as in :func:`metrics`).

    Raises
    ------
    StoreError
        A filter on a column not in :data:`CASE_FILTERS`.
    """
    sql, args = _case_query(rid, filters, _CASE_SELECT)
    cur = conn.execute(sql, args)
    names = [d[0] for d in cur.description]
    out = [dict(zip(names, row)) for row in cur]
    for r in out:
        r["params"] = json.loads(r["params"]) if r["params"] else {}
        r["overrides"] = json.loads(r["overrides"]) if r["overrides"] else {}
    if with_metrics:
        per: dict[str, list[tuple[Any, ...]]] = {r["key"]: [] for r in out}
        for k, *m in metric_rows(conn, rid, [r["key"] for r in out if r["status"] == OK]):
            per[k].append(tuple(m))
        for r in out:
            r["metrics"] = per[r["key"]]
    return out


def metrics(conn: sqlite3.Connection, rid: int | None, filters: Mapping[str, Any], wide: bool = False) -> pd.DataFrame:
    """Metrics of ok cases, long or wide (see :meth:`suite.results.store.Store.metrics`)."""
    import pandas as pd

    cs = cases(conn, rid, filters)
    cs = cs[cs["status"] == OK]
    if cs.empty:
        return pd.DataFrame(columns=_METRIC_BASE if wide else _METRIC_BASE + ["name", "value", "unit", "direction"])
    m = pd.DataFrame(metric_rows(conn, rid, list(cs["key"])), columns=["key", "name", "value", "unit", "direction"])
    keep = [c for c in cs.columns if c not in ("error", "created", "outcome", "run_id", "status")]
    if not wide:
        return cs[keep].merge(m, on="key", how="inner")
    w = m.pivot(index="key", columns="name", values="value")
    w.columns.name = None
    # a metric named like a case column (e.g. "seed") becomes "metric.NAME"
    w = w.rename(columns={c: f"metric.{c}" for c in w.columns if c in cs.columns}).reset_index()
    return cs[keep].merge(w, on="key", how="left")


#: the ``metrics`` view's rows of some keys (through the key hashes' index)
_METRICS_OF_KEYS = f"{METRICS_VIEW} AND {KEY_IN}"
#: the ``metrics`` view's rows of one case, by its id, in name order
_METRICS_OF_CASE = f"SELECT * FROM ({METRICS_VIEW} AND c.id = ?) ORDER BY name"


def metric_rows(conn: sqlite3.Connection, rid: int | None, keys: list[str]) -> list[tuple[Any, ...]]:
    """(key, name, value, unit, direction) of *keys*: with a run, of the result each case had in
    that run (``results.metrics``); else (or for a link without one) the current metrics."""
    rows: list[tuple[Any, ...]] = []
    current = keys
    if rid is not None:
        got = set()
        for k, m in select_keys(conn, "SELECT c.key, r.metrics FROM cases c JOIN run_cases rc ON rc.run_id = ? "
                                      "AND rc.case_id = c.id JOIN results r ON r.id = rc.result_id "
                                      f"WHERE {KEY_IN} AND r.metrics IS NOT NULL", keys, before=(rid,)):
            got.add(k)
            rows.extend((k, *x) for x in json.loads(m))
        current = [k for k in keys if k not in got]
    rows.extend(select_keys(conn, _METRICS_OF_KEYS, current))
    return rows


#: a case's results, by its id; and those of a key a version 6 store held results of but no case
#: row for (numbered below 0 by the migration to schema 7). Both through ``results_case_id``: two
#: queries, as SQLite scans ``results`` for their union in id order
_HISTORY_COLUMNS = "id, run_id, status, error, duration, created, metrics, case_id"
_HISTORY = (f"SELECT {_HISTORY_COLUMNS} FROM results WHERE case_id = "
            f"(SELECT id FROM cases WHERE {KEY_IS})",
            f"SELECT {_HISTORY_COLUMNS} FROM results WHERE case_id < 0 AND case_key = ?")
#: the runs that asked for a case, each with the result it produced or reused (``run_cases_case``)
_RUNS_OF_CASE = "SELECT run_id, result_id FROM run_cases WHERE case_id = ? ORDER BY run_id"


def history(conn: sqlite3.Connection, key: str) -> list[dict[str, Any]]:
    """Every stored computation of case *key*, oldest first (see :meth:`suite.results.store.Store.history`)."""
    rows = sorted([*conn.execute(_HISTORY[0], key_args(key)), *conn.execute(_HISTORY[1], (key,))])
    used: dict[int, list[int]] = {}
    for cid in sorted({r[7] for r in rows}):
        for run_id, rid in conn.execute(_RUNS_OF_CASE, (cid,)):
            used.setdefault(rid, []).append(run_id)
    return [{"id": rid_, "run_id": run_id, "status": status, "error": error, "duration": duration,
             "created": created, "metrics": {m[0]: m[1] for m in json.loads(mets or "[]")}, "runs": used.get(rid_, [])}
            for rid_, run_id, status, error, duration, created, mets, _cid in rows]


#: a case's status, error and id by its key (through the ``cases_khash`` index, the key checked)
_CASE_BY_KEY = f"SELECT status, error, id FROM cases WHERE {KEY_IS}"
#: the ok cases among a list of keys (:func:`suite.results.sql.select_keys`)
_OK_OF_KEYS = f"SELECT c.key FROM cases c WHERE c.status = 'ok' AND {KEY_IN}"


def result(conn: sqlite3.Connection, path: Path, key: str) -> Result:
    """The stored Result of an ok case (see :meth:`suite.results.store.Store.result`).

    Raises
    ------
    StoreError
        No such case, or the case is not ok (its status and error are named).
    """
    from suite.technique import Metric, Result

    row = conn.execute(_CASE_BY_KEY, key_args(key)).fetchone()
    if row is None:
        raise StoreError(f"store {str(path)!r}: no case with key {key!r}")
    if row[0] != OK:
        raise StoreError(f"case {key}: status {row[0]}: {row[1] or ''}".rstrip(": "))
    cid = row[2]
    samples: dict[str, list[float]] = {}
    for metric, _idx, value in conn.execute(
            "SELECT metric, idx, value FROM samples WHERE case_id = ? ORDER BY metric, idx", (cid,)):
        samples.setdefault(metric, []).append(value if value is not None else math.nan)
    res = Result()
    for _key, name, value, unit, direction in conn.execute(_METRICS_OF_CASE, (cid,)):
        s = samples.get(name)
        res.metrics[name] = Metric(name, value if value is not None else math.nan, unit or "1",
                                   direction or "none", tuple(s) if s is not None else None)
    art = conn.execute("SELECT data FROM artifacts WHERE case_id = ?", (cid,)).fetchone()
    if art is not None:
        res.artifacts = json.loads(art[0])
    return res


def _digest_samples(conn: sqlite3.Connection, hs: Mapping[str, Any], ids: Mapping[int, str]) -> None:
    """Add the samples of the cases *ids* (case id -> key) to their digests: the values as float64
    bytes (NULL read as NaN, as :func:`result` does), not one repr per sample (95,000 of them took 0.2 s)."""
    marks = ",".join("?" * len(ids))
    counts = conn.execute(f"SELECT case_id, metric, count(*) FROM samples WHERE case_id IN ({marks}) "
                          "GROUP BY case_id, metric ORDER BY case_id, metric", list(ids)).fetchall()
    vals = conn.execute(f"SELECT value FROM samples WHERE case_id IN ({marks}) "
                        "ORDER BY case_id, metric, idx", list(ids)).fetchall()
    raw = array("d", [math.nan if v is None else v for (v,) in vals]).tobytes()
    pos = 0
    for cid, metric, n in counts:
        hs[ids[cid]].update(repr(("s", metric, n)).encode() + raw[8 * pos:8 * (pos + n)])
        pos += n


def content_digests(conn: sqlite3.Connection, keys: Iterable[str]) -> dict[str, str]:
    """key -> SHA-256 (hex) of everything stored for that case that :func:`result` and
    :func:`statuses` read (see :meth:`suite.results.store.Store.content_digests`): status and
    error, an ok case's metrics as the JSON text of its result (what the ``metrics`` view reads),
    its samples as float64 bytes, its artifacts' text."""
    ordered = sorted(set(keys))
    hs: dict[str, Any] = {}
    for i in range(0, len(ordered), 900):
        # an ok case's metrics: the JSON text the `metrics` view unpacks (the view's json_each and
        # a repr per row cost half of this function)
        ids: dict[int, str] = {}
        for cid, k, st, err, metrics in select_keys(conn, "SELECT c.id, c.key, c.status, c.error, r.metrics FROM "
                                                          f"cases c LEFT JOIN results r ON r.id = c.result_id WHERE {KEY_IN}",
                                                    ordered[i:i + 900]):
            ids[cid] = k
            hs[k] = hashlib.sha256(repr(("case", st, err)).encode())
            if st == OK and metrics is not None:
                hs[k].update(b"\0m\0" + metrics.encode())
        if not ids:
            continue
        _digest_samples(conn, hs, ids)
        for cid, data in conn.execute(f"SELECT case_id, data FROM artifacts WHERE case_id IN ({','.join('?' * len(ids))})",
                                      list(ids)):
            hs[ids[cid]].update(b"\0a\0" + data.encode())
    return {k: hs[k].hexdigest() for k in ordered if k in hs}


def case(conn: sqlite3.Connection, path: Path, key: str) -> dict[str, Any]:
    """One case's row as a dict (see :meth:`suite.results.store.Store.case`).

    Raises
    ------
    StoreError
        No case with that key.
    """
    cur = conn.execute(f"SELECT {', '.join(c for c in CASE_COLUMNS if c != 'khash')} FROM cases "
                       f"WHERE {KEY_IS}", key_args(key))
    row = cur.fetchone()
    if row is None:
        raise StoreError(f"store {str(path)!r}: no case with key {key!r}")
    d = dict(zip([c[0] for c in cur.description], row))
    for k in ("identity", "params", "overrides"):
        d[k] = json.loads(d[k]) if d.get(k) else {}
    d["identity"] = {**{c: d.get(c) for c in IDENTITY_COLUMNS}, **d["identity"]}
    return d


def statuses(conn: sqlite3.Connection, keys: Iterable[str]) -> dict[str, tuple[str, str | None]]:
    """key -> (status, error) for the given keys that are stored."""
    return {k: (s, e) for k, s, e in sorted(select_keys(conn, f"SELECT c.key, c.status, c.error FROM cases c "
                                                              f"WHERE {KEY_IN}", keys))}


def codes(conn: sqlite3.Connection, rid: int | None) -> dict[str, tuple[str, str | None]]:
    """key -> (technique, code fingerprint it was computed with) for the cases of run *rid* (None
    for cases stored before fingerprints were recorded)."""
    rows = conn.execute("SELECT c.key, c.technique, json_extract(c.identity, '$.code') FROM cases c "
                        "JOIN run_cases r ON r.case_id = c.id WHERE r.run_id = ? ORDER BY c.key", (rid,))
    return {k: (t, code) for k, t, code in rows}


def ok_keys(conn: sqlite3.Connection, keys: Iterable[str] | None = None) -> set[str]:
    """Keys stored with status ok (among *keys*, or all)."""
    if keys is None:
        return {r[0] for r in conn.execute("SELECT key FROM cases WHERE status = 'ok'")}
    return {r[0] for r in select_keys(conn, _OK_OF_KEYS, keys)}


#: the keys (among :data:`KEY_IN`'s) stored without some of their artifacts: those listed under
#: ``"_omitted"`` (``--artifacts summary`` or ``none``), or none at all by a run whose command asked
#: for ``--artifacts none`` (0.3.11 stored no marker for it; a run of this version stores ``{}`` when
#: there were no artifacts). A case stored so by a command-less run (the Python API) is not found.
_OMITTED_OF_KEYS = ("SELECT c.key FROM cases c LEFT JOIN artifacts a ON a.case_id = c.id "
                    f"LEFT JOIN runs r ON r.id = c.run_id WHERE {KEY_IN} AND "
                    "(json_type(a.data, '$._omitted') IS NOT NULL OR (a.case_id IS NULL AND "
                    "' ' || r.command || ' ' GLOB '* --artifacts[ =]none *'))")


def summarized_keys(conn: sqlite3.Connection, keys: Iterable[str]) -> set[str]:
    """Among *keys*, the cases stored without some of their artifacts (:data:`_OMITTED_OF_KEYS`):
    with a summary (``--artifacts summary``, the entries left out listed under ``"_omitted"``)
    or none (``--artifacts none``)."""
    return {r[0] for r in select_keys(conn, _OMITTED_OF_KEYS, keys)}
