"""Export a whole results store (or one run) to Parquet, with the provenance as file metadata.

The Parquet file holds the long form of :func:`suite.results.load` (one row per case and metric,
every ok case of the store) plus two columns: ``runs`` (every run that asked for the case) and
``samples`` (the raw repeated measurements, empty for model fidelity). ``params`` and
``overrides`` are JSON text (techniques declare different parameters); each profile field set
with ``--set`` is also a number column named with its unit (``set.network.-1.bandwidth [Gbit/s]``;
values written in another unit of its dimension converted into the first value's) beside its text
column (``set.network.-1.bandwidth``, the value as given). ``param.*`` columns
carry no unit in their names (the CSV of ``suite results show`` names them with theirs).
``run`` is the run asked for with ``--run``; over the whole store, the run that computed the
case's stored result (``run_id``; a case several runs asked for lists them all in ``runs``).
The file's key-value
metadata ``dlsys_suite`` is a JSON object::

    {"format": "dlsys-suite results", "format_version": 1, "store_schema_version": 1,
     "exported": "<UTC ISO time>", "store": "<path>", "run": <id or null>,
     "runs": [{"id": 1, "started": ..., "host": ..., "packages": {...}, "plugins": {...},
               "git_commit": ..., "command": ..., "status": ..., counts...}, ...],
     "cases": {"ok": N, "failed": N, ...}}

Read it back with ``pandas.read_parquet(path)`` and :func:`read_provenance`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from suite.errors import StoreError
from suite.results.sql import KEY_IN, select_keys
from suite.results.codec import is_missing

if TYPE_CHECKING:
    import pandas as pd

    from suite.results.store import Store

__all__ = ["export_parquet", "read_provenance", "METADATA_KEY", "FORMAT_VERSION"]

METADATA_KEY = b"dlsys_suite"
FORMAT_VERSION = 1


def _column_type(values: Iterable[Any]) -> str:
    kinds = set()
    for v in values:
        if is_missing(v):
            continue
        if isinstance(v, bool):
            kinds.add("bool")
        elif isinstance(v, int):
            kinds.add("int")
        elif isinstance(v, float):
            kinds.add("num")
        elif isinstance(v, str):
            kinds.add("str")
        else:
            kinds.add("other")
    if kinds == {"int", "num"}:
        return "num"
    return kinds.pop() if len(kinds) == 1 else ("none" if not kinds else "mixed")


def _portable(df: pd.DataFrame) -> pd.DataFrame:
    """Columns Parquet can hold whatever the techniques put in their parameters."""
    import pandas as pd

    df = df.copy()
    for c in ("params", "overrides"):
        if c in df.columns:
            df[c] = [json.dumps(v, sort_keys=True, default=str) for v in df[c]]
    from suite.results.load import numeric_overrides

    for c in [c for c in df.columns if c.startswith("set.")]:
        got = numeric_overrides(list(df[c]))
        if got is not None:  # "10 Gbit/s" -> 10.0 in a column named with its unit
            df[f"{c} [{got[1]}]" if got[1] else c] = pd.array(got[0], dtype="Float64")
    for c in [c for c in df.columns if c.startswith(("param.", "set.")) and "[" not in c]:
        kind = _column_type(df[c])
        if kind == "int":
            df[c] = df[c].astype("Int64")
        elif kind == "num":
            df[c] = pd.to_numeric(df[c], errors="coerce").astype("float64")
        elif kind == "bool":
            df[c] = df[c].astype("boolean")
        elif kind == "str":
            df[c] = df[c].astype("string")
        else:  # mixed, lists, dicts: JSON text per cell
            df[c] = [None if is_missing(v) else json.dumps(v, default=str)
                     for v in df[c]]
            df[c] = df[c].astype("string")
    if "run" in df.columns:
        df["run"] = df["run"].astype("Int64")
    return df


def export_parquet(store: Any, path: str | Path, run: int | str | None = None) -> dict[str, Any]:
    """Write every ok case's metrics (or one run's) to a Parquet file with provenance metadata.

    Parameters
    ----------
    store : Store, str, Path or None
        As :func:`suite.results.load`.
    path : str or Path
        The Parquet file to write (its folder is created).
    run : int, ``"latest"`` or None
        Only this run's cases; None: the whole store.

    Returns
    -------
    dict
        The provenance written under the metadata key ``dlsys_suite``, plus ``rows`` and
        ``path``.

    Raises
    ------
    StoreError
        Unknown store or run.
    """
    from suite.results.load import reading

    with reading(store) as st:
        df, prov = _collect(st, run)
    out = Path(path)
    _write_parquet(_portable(df), prov, out)
    return {**prov, "rows": len(df), "path": str(out)}


def _collect(st: Store, run: int | str | None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The long form with ``runs`` and ``samples`` columns, and the provenance of the export."""
    from suite.results.load import load, samples

    df = load(st, run=run, wide=False)
    keys = list(df["key"].unique())
    runs_of = _runs_of(st, keys)
    samp = samples(st, keys)
    runs = st.runs()
    rid = st.resolve_run(run)
    if rid is not None:
        runs = runs[runs["id"] == rid]
    counts = dict(st.conn.execute("SELECT status, count(*) FROM cases GROUP BY status").fetchall())
    if rid is None:  # no run asked for: each row's run is the one that computed its stored result
        df["run"] = df["run_id"]
    df["runs"] = [runs_of.get(k, []) for k in df["key"]]
    df["samples"] = [samp.get((k, n), []) for k, n in zip(df["key"], df["name"])]
    prov = {"format": "dlsys-suite results", "format_version": FORMAT_VERSION,
            "store_schema_version": st.schema_version,
            "exported": datetime.now(timezone.utc).isoformat(timespec="seconds"),
            "store": str(st.path), "run": rid, "runs": _run_rows(runs), "cases": counts}
    return df, prov


def _run_rows(runs: pd.DataFrame) -> list[dict[str, Any]]:
    """The runs as JSON-able dicts, ``packages`` and ``plugins`` decoded."""
    out = []
    for r in runs.to_dict("records"):
        row = {str(k): (v.item() if hasattr(v, "item") else v) for k, v in r.items()}
        for k in ("packages", "plugins"):
            row[k] = json.loads(row[k]) if row.get(k) else {}
        out.append(row)
    return out


def _write_parquet(df: pd.DataFrame, prov: Mapping[str, Any], out: Path) -> None:
    """Write *df* to *out* (its folder created) with *prov* under :data:`METADATA_KEY`."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.Table.from_pandas(df, preserve_index=False)
    meta = dict(table.schema.metadata or {})
    meta[METADATA_KEY] = json.dumps(prov, default=str).encode()
    table = table.replace_schema_metadata(meta)
    out.parent.mkdir(parents=True, exist_ok=True)
    try:
        pq.write_table(table, out)
    except OSError as exc:
        raise StoreError(f"export: cannot write {str(out)!r}: {exc}") from None


def read_provenance(path: str | Path) -> dict[str, Any]:
    """The ``dlsys_suite`` metadata of an exported Parquet file.

    Raises
    ------
    StoreError
        The file is not a Parquet file written by :func:`export_parquet`.
    """
    import pyarrow.parquet as pq

    try:
        meta = pq.read_schema(path).metadata or {}
    except (OSError, ValueError) as exc:
        raise StoreError(f"{str(path)!r}: not a Parquet file: {exc}") from None
    if METADATA_KEY not in meta:
        raise StoreError(f"{str(path)!r}: no dlsys_suite metadata (not written by `suite results export`)")
    prov: dict[str, Any] = json.loads(meta[METADATA_KEY])
    return prov


#: the runs that asked for each of some cases (by key, then ``run_cases_case``: no scan of the links)
_RUNS_OF = (f"SELECT c.key, rc.run_id FROM cases c JOIN run_cases rc ON rc.case_id = c.id WHERE {KEY_IN} "
            "ORDER BY rc.run_id")


def _runs_of(store: Store, keys: list[str]) -> dict[str, list[int]]:
    out: dict[str, list[int]] = {}
    for k, r in select_keys(store.conn, _RUNS_OF, keys):
        out.setdefault(k, []).append(int(r))
    return out
