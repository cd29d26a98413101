"""Execute fidelity: the batch-streaming engine (:mod:`suite_theseus.engine`) on real TPC-H data,
checked against DuckDB on the same data.

The oracle is independent of the engine: DuckDB 1.5.5 runs the specification's SQL text
(``PRAGMA tpch(N)``, the extension's reference queries) on the very tables the engine reads. The
engine's answer is converted to DuckDB's row form (:func:`to_rows`: decimals as
:class:`decimal.Decimal`, dates as :class:`datetime.date`) and compared field by field
(:func:`compare`): keys, counts, text and decimals must be equal, floating-point averages within
1e-9 relative. The ``cpu-engine`` variant runs the query in DuckDB itself (the stand-in for the
closed Photon engine): its error is 0 by construction and its metric is DuckDB's time.

Metrics of :func:`evaluate`: ``correct`` (1 when every field equals DuckDB's), ``max_rel_error``
(vs DuckDB), ``feasible`` (0 when ``in-memory`` ran out of device memory), ``engine_time`` and
``duckdb_time`` (s), byte counters ``bytes_scanned``, ``bytes_shuffled``, ``bytes_broadcast``,
``bytes_gathered``, ``bytes_to_host``, ``bytes_to_disk``, ``bytes_from_host``, ``bytes_from_disk``
(B, all workers), ``ledger_bytes`` (B, sent, all tags), ``pool_failures`` (allocations the host
pool refused), ``peak_device`` (B, one worker), ``batches``; and when the published answer exists
at this SF (0.01, 0.1, 1), ``matches_published`` (1/0).
"""

from __future__ import annotations

import datetime as _dt
import math
import time
from decimal import Decimal

import numpy as np

from suite_theseus import tpch

__all__ = ["to_rows", "compare", "evaluate", "FLOAT_RTOL", "MAX_SF"]

#: relative tolerance for the floating-point columns (AVG, Q14's ratio); everything else exact
FLOAT_RTOL = 1e-9
#: the largest scale factor the execute fidelity generates (in memory)
MAX_SF = 1.0

_EPOCH = _dt.date(1970, 1, 1)


def _dec(v: int, scale: int) -> Decimal:
    return Decimal(int(v)).scaleb(-scale)


def _date(d: int) -> _dt.date:
    return _EPOCH + _dt.timedelta(days=int(d))


def to_rows(query: int, res: dict) -> list[tuple]:
    """The engine's result batch as DuckDB would return it (same columns and order; for Q10 the
    columns ``c_custkey, revenue, c_acctbal, n_name`` of the eight)."""
    q = int(query)
    if q == 1:
        out = []
        for i in range(len(res["_count"])):
            n = int(res["_count"][i])
            out.append((chr(int(res["l_returnflag"][i])), chr(int(res["l_linestatus"][i])),
                        _dec(res["sum_qty"][i], 2), _dec(res["sum_base_price"][i], 2),
                        _dec(res["sum_disc_price"][i], 4), _dec(res["sum_charge"][i], 6),
                        int(res["sum_qty"][i]) / 100 / n, int(res["sum_base_price"][i]) / 100 / n,
                        int(res["sum_disc"][i]) / 100 / n, n))
        return out
    if q == 3:
        return [(int(res["l_orderkey"][i]), _dec(res["revenue"][i], 4), _date(res["o_orderdate"][i]),
                 int(res["o_shippriority"][i])) for i in range(len(res["revenue"]))]
    if q == 5:
        return [(str(res["n_name"][i]), _dec(res["revenue"][i], 4)) for i in range(len(res["revenue"]))]
    if q == 6:
        return [(_dec(res["revenue"][0], 4),)]
    if q == 10:
        return [(int(res["c_custkey"][i]), _dec(res["revenue"][i], 4), _dec(res["c_acctbal"][i], 2),
                 str(res["n_name"][i])) for i in range(len(res["revenue"]))]
    if q == 12:
        return [(str(res["mode_name"][i]), int(res["high_line_count"][i]), int(res["low_line_count"][i]))
                for i in range(len(res["mode_name"]))]
    if q == 14:
        return [(float(res["promo_revenue"][0]),)]
    raise ValueError(f"query {q}")


def _project(query: int, rows: list[tuple]) -> list[tuple]:
    """DuckDB's rows restricted to the columns :func:`to_rows` gives."""
    if int(query) == 10:
        return [(r[0], r[2], r[3], r[4]) for r in rows]
    return [tuple(r) for r in rows]


def compare(query: int, ours: list[tuple], reference: list[tuple]) -> tuple[bool, float, str]:
    """Field-by-field comparison: (equal, max relative error over numeric fields, first difference).

    Floats (DuckDB ``DOUBLE``) agree within :data:`FLOAT_RTOL`; every other field exactly."""
    ref = _project(query, reference)
    if len(ours) != len(ref):
        return False, math.inf, f"Q{query}: {len(ours)} rows, DuckDB {len(ref)}"
    worst, first = 0.0, ""
    ok = True
    for i, (a, b) in enumerate(zip(ours, ref)):
        if len(a) != len(b):
            return False, math.inf, f"Q{query} row {i}: {len(a)} fields, DuckDB {len(b)}"
        for j, (x, y) in enumerate(zip(a, b)):
            if isinstance(y, float) or isinstance(x, float):
                fx, fy = float(x), float(y)
                err = abs(fx - fy) / max(abs(fy), 1e-300) if fx != fy else 0.0
                worst = max(worst, err)
                good = err <= FLOAT_RTOL
            elif isinstance(y, (Decimal, int)) and not isinstance(y, bool):
                good = Decimal(x) == Decimal(y)
                if Decimal(y) != 0:
                    worst = max(worst, float(abs(Decimal(x) - Decimal(y)) / abs(Decimal(y))))
            else:
                good = x == y
            if not good and ok:
                ok, first = False, f"Q{query} row {i} field {j}: ours {x!r}, DuckDB {y!r}"
    return ok, worst, first


def evaluate(scenario):
    """Run one TPC-H query on K simulated workers and check it against DuckDB.

    Parameters
    ----------
    scenario : suite.Scenario
        ``params``: ``query`` (one of 1, 3, 5, 6, 10, 12, 14), ``sf`` (scale factor of the data,
        <= :data:`MAX_SF`; a ``tpch-sf<X>`` workload sets it), ``workers`` (K), ``batch_rows``,
        ``hbm_budget`` (B per worker), ``host_pool`` (B per worker), ``page_size`` (B).
        ``variant``: ``theseus``/``serial`` fixed-size pages; ``variable-host-alloc`` first fit;
        ``in-memory`` no spill tier; ``cpu-engine`` DuckDB itself.

    Returns
    -------
    suite.Result
        The metrics listed in the module docstring.

    Raises
    ------
    suite.Skip
        The ``[sql]`` extra is missing, or ``sf`` > :data:`MAX_SF`.
    suite.api.OracleMismatch
        The engine's answer differs from DuckDB's (a bug), or the ledger's two tallies disagree.
    """
    from suite.api import Result

    from suite_theseus import engine

    p = scenario.params
    q = tpch.check_query(p["query"])
    data = _load_data(scenario)
    ref = tpch.reference_answer(data, q)
    if scenario.variant == "cpu-engine":
        return _duckdb_result(data, q)
    kw = _engine_kwargs(scenario)
    res = Result()
    t0 = time.perf_counter()
    try:
        out, eng = engine.run_query(data, q, **kw)
    except engine.OutOfDeviceMemory as exc:
        res.add("feasible", 0.0, "1", "higher")
        res.artifacts["infeasible"] = str(exc)
        return res
    dt = time.perf_counter() - t0
    ours = to_rows(q, out)
    err = _check_against_oracles(q, ours, ref, eng, f"K={kw['workers']}, batch_rows={kw['batch_rows']}, "
                                                    f"variant {scenario.variant}")
    _, duck_t = data.duckdb_answer(q)
    res.add("correct", 1.0, "1", "higher")
    res.add("max_rel_error", err, "1", "lower")
    res.add("feasible", 1.0, "1", "higher")
    res.add("engine_time", dt, "s", "lower")
    res.add("duckdb_time", duck_t, "s", "lower")
    _add_engine_counters(res, eng)
    pub = data.published_answer(q)
    if pub is not None:
        res.add("matches_published", 1.0 if matches_published(q, ours, pub) else 0.0, "1", "higher")
    res.artifacts["rows"] = [tuple(str(x) for x in r) for r in ours]
    return res


def _engine_kwargs(scenario) -> dict:
    """:func:`suite_theseus.engine.run_query`'s keywords from the params and the variant."""
    p = scenario.params
    return dict(workers=int(p["workers"]), batch_rows=int(p["batch_rows"]), hbm_budget=int(p["hbm_budget"]),
                host_pool=int(p["host_pool"]), page_size=int(p["page_size"]),
                allocator="first-fit" if scenario.variant == "variable-host-alloc" else "fixed-pages",
                spill=scenario.variant != "in-memory")


def _load_data(scenario):
    """The TPC-H tables at the scenario's scale factor, or Skip (too large, or no ``[sql]`` extra)."""
    from suite.api import Skip

    from suite_theseus import model

    sf = model.scale_factor(scenario)
    if sf > MAX_SF:
        raise Skip(f"theseus execute: sf={sf:g} > {MAX_SF:g} (data are generated in memory; the model covers "
                   "SF 1k-100k)")
    if not tpch.available():
        raise Skip(tpch._skip_reason())
    return tpch.load(sf)


def _duckdb_result(data, q: int):
    """The ``cpu-engine`` baseline: DuckDB's own answer and time (it is the oracle, so correct)."""
    from suite.api import Result

    _, dt = data.duckdb_answer(q)
    res = Result()
    res.add("duckdb_time", dt, "s", "lower")
    res.add("engine_time", dt, "s", "lower")
    res.add("correct", 1.0, "1", "higher")
    res.add("max_rel_error", 0.0, "1", "lower")
    res.add("feasible", 1.0, "1", "higher")
    return res


def _check_against_oracles(q: int, ours: list[tuple], ref, eng, where: str) -> float:
    """The largest relative error against DuckDB; OracleMismatch on a wrong field or a ledger
    whose sent and received tallies disagree."""
    from suite.api import OracleMismatch

    ok, err, first = compare(q, ours, ref)
    if not ok:
        raise OracleMismatch(f"theseus execute: {first} ({where})")
    problems = eng.ledger.conservation_problems(require_receipts=True)
    if problems:
        raise OracleMismatch("theseus execute: ledger: " + problems[0])
    return err


def _add_engine_counters(res, eng) -> None:
    """The engine's byte counters (all workers), ledger total, peak device bytes, pool failures."""
    st = eng.stats
    for name in ("scanned", "shuffled", "broadcast", "gathered", "to_host", "to_disk", "from_host", "from_disk"):
        res.add(f"bytes_{name}", float(getattr(st, name)), "B", "none")
    res.add("ledger_bytes", float(eng.ledger.total_bytes), "B", "none")
    res.add("peak_device", float(st.peak_device), "B", "none")
    res.add("pool_failures", float(sum(t.pool.failures for t in eng.tiers if t.pool is not None)), "1", "lower")
    res.add("batches", float(st.batches), "1", "none")


def matches_published(query: int, ours: list[tuple], published: list[list[str]]) -> bool:
    """Whether our rows equal the answer file shipped with the extension (text fields; decimals
    compared as numbers, floats within 1e-6 relative as the file prints ~15 digits)."""
    q = int(query)
    if q == 10:
        published = [[r[0], r[2], r[3], r[4]] for r in published]
    if len(ours) != len(published):
        return False
    for a, b in zip(ours, published):
        if len(a) != len(b):
            return False
        for x, y in zip(a, b):
            if isinstance(x, float):
                if not math.isclose(x, float(y), rel_tol=1e-6):
                    return False
            elif isinstance(x, (Decimal, int)):
                if Decimal(x) != Decimal(y.strip()):
                    return False
            elif str(x).strip() != y.strip():
                return False
    return True
