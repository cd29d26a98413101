"""TPC-H data for the Theseus plugin: generated locally by DuckDB's ``dbgen``, never downloaded.

The data come from the official DuckDB ``tpch`` extension shipped in the PyPI package
``duckdb-extension-tpch`` (the ``[sql]`` extra), loaded from the file inside that package with
extension auto-install and auto-load switched off. Without the extra, :func:`available` is False
and every function here raises :class:`suite.Skip`.

Columns are handed to the engine in a GPU engine's columnar form:

* keys as ``int64`` (TPC-H identifiers, clause 1.4), decimals as ``int64`` in cents (every
  decimal of TPC-H has two fractional digits, clause 1.3.1: ``DECIMAL(15,2)``), so the engine's
  sums are exact integers, like DuckDB's ``DECIMAL`` arithmetic;
* dates as ``int32`` days since 1970-01-01;
* the string columns the seven queries filter or group on as ``int8`` dictionary codes, with the
  dictionaries taken from the specification's value lists (clause 4.2.2.13 and 4.2.3: ship modes,
  market segments, order priorities, part type syllables); a code is the 0-based position in the
  list. Nation and region names are kept as text (25 and 5 rows).

Row counts per scale factor are the specification's (TPC-H 3.0.1, clause 4.2.5.1):
:data:`ROWS_PER_SF`.
"""

from __future__ import annotations

import datetime as _dt
import functools
import glob
import os
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported where the data is built (TpchData), not by the workloads hook
    import numpy as np

# QUERIES (the queries the engine implements, the list) is defined in
# suite_theseus.constants, so the declaration reads it without this module.
from suite_theseus.constants import QUERIES

__all__ = [
    "QUERIES", "ROWS_PER_SF", "FIXED_ROWS", "SHIP_MODES", "SEGMENTS", "PRIORITIES", "PART_TYPES",
    "available", "extension_path", "connect", "TpchData", "load", "reference_answer", "rows",
    "day", "check_query", "tpch_workloads",
]

#: rows per unit scale factor (TPC-H 3.0.1 clause 4.2.5.1; lineitem is ~6,000,000 x SF: 1 to 7
#: lines per order, mean 4, clause 4.2.3)
ROWS_PER_SF = {"lineitem": 6_000_000, "orders": 1_500_000, "customer": 150_000, "part": 200_000,
               "partsupp": 800_000, "supplier": 10_000}
#: tables whose size does not scale (clause 4.2.5.1)
FIXED_ROWS = {"nation": 25, "region": 5}

# value lists of TPC-H 3.0.1 clause 4.2.2.13 (the codes are positions in these tuples)
SHIP_MODES = ("REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB")
SEGMENTS = ("AUTOMOBILE", "BUILDING", "FURNITURE", "MACHINERY", "HOUSEHOLD")
PRIORITIES = ("1-URGENT", "2-HIGH", "3-MEDIUM", "4-NOT SPECIFIED", "5-LOW")
_TYPE_S1 = ("STANDARD", "SMALL", "MEDIUM", "LARGE", "ECONOMY", "PROMO")
_TYPE_S2 = ("ANODIZED", "BURNISHED", "PLATED", "POLISHED", "BRUSHED")
_TYPE_S3 = ("TIN", "NICKEL", "BRASS", "STEEL", "COPPER")
#: the 150 part types (clause 4.2.2.13: Types = S1 x S2 x S3)
PART_TYPES = tuple(f"{a} {b} {c}" for a in _TYPE_S1 for b in _TYPE_S2 for c in _TYPE_S3)

_EPOCH = _dt.date(1970, 1, 1)


def day(iso: str) -> int:
    """Days since 1970-01-01 of an ISO date (``"1995-03-15"`` -> 9204)."""
    return (_dt.date.fromisoformat(iso) - _EPOCH).days


def rows(table: str, sf: float) -> float:
    """Rows of *table* at scale factor *sf* per the specification (clause 4.2.5.1)."""
    if table in FIXED_ROWS:
        return float(FIXED_ROWS[table])
    return ROWS_PER_SF[table] * float(sf)


def check_query(query: int, technique: str = "theseus") -> int:
    """*query* as an int, or :class:`suite.errors.ParameterError` naming the implemented ones."""
    from suite.api import ParameterError

    q = int(query)
    if q not in QUERIES:
        raise ParameterError(f"{technique}: query {q} is not implemented; expected one of {list(QUERIES)}")
    return q


# --------------------------------------------------------------------------- DuckDB


def extension_path() -> str | None:
    """The ``tpch.duckdb_extension`` file inside the installed ``duckdb-extension-tpch`` package."""
    try:
        import duckdb  # noqa: F401
        import duckdb_extension_tpch
    except ImportError:
        return None
    found = sorted(glob.glob(os.path.join(os.path.dirname(duckdb_extension_tpch.__file__), "extensions", "*",
                                          "tpch.duckdb_extension")))
    return found[-1] if found else None


def available() -> bool:
    """Whether the ``[sql]`` extra (duckdb + duckdb-extension-tpch) is installed."""
    return extension_path() is not None


def _skip_reason() -> str:
    return ("theseus: TPC-H needs the [sql] extra (duckdb==1.5.5 and duckdb-extension-tpch==1.5.5): "
            "pip install -e '.[sql]'")


def connect(threads: int | None = None):
    """A fresh in-memory DuckDB connection with the TPC-H extension loaded from its package file.

    Extension auto-install and auto-load are off, so nothing is ever downloaded.

    Raises
    ------
    suite.Skip
        The ``[sql]`` extra is not installed.
    """
    from suite.api import Skip

    path = extension_path()
    if path is None:
        raise Skip(_skip_reason())
    import duckdb

    cfg = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
    if threads is not None:
        cfg["threads"] = int(threads)
    con = duckdb.connect(":memory:", config=cfg)
    con.execute(f"LOAD '{path}'")
    return con


def _codes(col: str, values: tuple[str, ...]) -> str:
    lst = ", ".join("'" + v.replace("'", "''") + "'" for v in values)
    return f"CAST(list_position([{lst}], {col}) - 1 AS TINYINT) AS {col}"


def _days(col: str) -> str:
    return f"CAST(date_diff('day', DATE '1970-01-01', {col}) AS INTEGER) AS {col}"


def _cents(col: str) -> str:
    return f"CAST(round({col} * 100) AS BIGINT) AS {col}"


#: the columns the seven queries read, as SQL expressions in the engine's encoding
_COLUMNS = {
    "lineitem": ["l_orderkey", "l_partkey", "l_suppkey", _cents("l_quantity"), _cents("l_extendedprice"),
                 _cents("l_discount"), _cents("l_tax"), "CAST(ascii(l_returnflag) AS TINYINT) AS l_returnflag",
                 "CAST(ascii(l_linestatus) AS TINYINT) AS l_linestatus", _days("l_shipdate"), _days("l_commitdate"),
                 _days("l_receiptdate"), _codes("l_shipmode", SHIP_MODES)],
    "orders": ["o_orderkey", "o_custkey", _days("o_orderdate"), _codes("o_orderpriority", PRIORITIES),
               "CAST(o_shippriority AS INTEGER) AS o_shippriority"],
    "customer": ["c_custkey", "c_nationkey", _codes("c_mktsegment", SEGMENTS), _cents("c_acctbal")],
    "part": ["p_partkey", "CAST(list_position([" + ", ".join(f"'{t}'" for t in PART_TYPES)
             + "], p_type) - 1 AS SMALLINT) AS p_type"],
    "supplier": ["s_suppkey", "s_nationkey"],
    "nation": ["n_nationkey", "n_name", "n_regionkey"],
    "region": ["r_regionkey", "r_name"],
}


class TpchData:
    """One generated TPC-H database: the engine's columns (numpy) and DuckDB's reference answers.

    Attributes
    ----------
    sf : float
        Scale factor.
    tables : dict of str -> dict of str -> numpy.ndarray
        Table -> column -> array (encodings: module docstring). Read-only arrays.
    """

    def __init__(self, sf: float):
        import numpy as np

        self.sf = float(sf)
        self._lock = threading.Lock()
        self._con = connect()
        self._con.execute(f"CALL dbgen(sf={self.sf!r})")
        self.tables: dict[str, dict[str, np.ndarray]] = {}
        for t, cols in _COLUMNS.items():
            got = self._con.execute(f"SELECT {', '.join(cols)} FROM {t}").fetchnumpy()
            out = {}
            for name, arr in got.items():
                a = np.asarray(arr)
                if a.dtype == object:
                    a = np.array([str(x) for x in a], dtype=object)
                if name in ("l_orderkey", "l_partkey", "l_suppkey", "o_orderkey", "o_custkey", "c_custkey",
                            "c_nationkey", "p_partkey", "s_suppkey", "s_nationkey", "n_nationkey",
                            "n_regionkey", "r_regionkey"):
                    a = a.astype(np.int64)
                a.setflags(write=False)
                out[name] = a
            self.tables[t] = out
        self._answers: dict[int, list[tuple]] = {}

    def count(self, table: str) -> int:
        """Rows of *table* as generated."""
        return int(next(iter(self.tables[table].values())).shape[0])

    def sql(self, query: int) -> str:
        """The reference SQL text of *query* (the extension's ``tpch_queries()``)."""
        with self._lock:
            return self._con.execute("SELECT query FROM tpch_queries() WHERE query_nr = ?", [int(query)]).fetchone()[0]

    def duckdb_answer(self, query: int, threads: int | None = None) -> tuple[list[tuple], float]:
        """DuckDB's result rows for *query* on this data, and its wall time in seconds."""
        import time

        with self._lock:
            if threads is not None:
                self._con.execute(f"SET threads = {int(threads)}")
            t0 = time.perf_counter()
            res = self._con.execute(f"PRAGMA tpch({int(query)})").fetchall()
            dt = time.perf_counter() - t0
            if threads is not None:
                self._con.execute("RESET threads")
        return res, dt

    def published_answer(self, query: int) -> list[list[str]] | None:
        """The answer shipped with the extension (``tpch_answers()``) at this SF, as rows of text
        fields, or None when none is shipped (only SF 0.01, 0.1 and 1 are)."""
        with self._lock:
            got = self._con.execute("SELECT answer FROM tpch_answers() WHERE query_nr = ? AND scale_factor = ?",
                                    [int(query), self.sf]).fetchone()
        if got is None:
            return None
        lines = [ln for ln in got[0].strip().splitlines() if ln.strip()]
        return [ln.split("|") for ln in lines[1:]]  # first line: the header


@functools.lru_cache(maxsize=4)
def load(sf: float) -> TpchData:
    """The TPC-H database at scale factor *sf*, generated once per process (cached).

    Raises
    ------
    suite.Skip
        The ``[sql]`` extra is not installed.
    suite.errors.ParameterError
        *sf* is not in (0, 10] (the execute fidelity generates data in memory).
    """
    from suite.api import ParameterError

    if not 0 < float(sf) <= 10:
        raise ParameterError(f"theseus: parameter 'sf': expected 0 < sf <= 10 for the execute fidelity "
                             f"(data generated in memory), got {sf}")
    return TpchData(float(sf))


def reference_answer(data: TpchData, query: int) -> list[tuple]:
    """DuckDB's answer rows (cached on *data*)."""
    q = int(query)
    if q not in data._answers:
        data._answers[q] = data.duckdb_answer(q)[0]
    return data._answers[q]


# --------------------------------------------------------------------------- workloads


def _load_tpch(sf: float) -> Mapping[str, Mapping[str, np.ndarray]]:
    """Loader of the ``tpch-sf<X>`` workloads: table -> column -> array (module encodings)."""
    return load(sf).tables


#: the scale factors registered as workloads (execute at small SF, model up to SF 100k)
WORKLOAD_SFS = (0.01, 0.1, 1, 1000, 3000, 10000, 30000, 100000)


def _sf_name(sf: float) -> str:
    return f"tpch-sf{sf:g}".replace("+", "")


def tpch_workloads() -> list:
    """``tpch-sf<X>`` datasets for :data:`WORKLOAD_SFS` (``Dataset``; ``n`` = lineitem rows by the
    specification's row count; the loader generates the data with dbgen on first use)."""
    from suite.api import Dataset

    out = []
    for sf in WORKLOAD_SFS:
        out.append(Dataset(
            name=_sf_name(sf), kind="dataset",
            source="TPC-H 3.0.1, generated locally by DuckDB's tpch extension (dbgen), duckdb-extension-tpch 1.5.5",
            description=f"TPC-H at scale factor {sf:g} ({rows('lineitem', sf):,.0f} lineitem rows by clause 4.2.5.1)",
            loader=_load_tpch, params={"sf": float(sf)}, n=int(rows("lineitem", sf)), d=None, classes=None))
    return out


def sf_of(workload) -> float | None:
    """The scale factor of a ``tpch-sf<X>`` workload, else None."""
    if workload is None:
        return None
    p = getattr(workload, "params", None) or {}
    if getattr(workload, "name", "").startswith("tpch-sf") and "sf" in p:
        return float(p["sf"])
    return None
