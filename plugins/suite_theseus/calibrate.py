"""Regenerate :data:`suite_theseus.coefficients` (``coefficients.json``) from the execute ledger.

Run: ``python -m suite_theseus.calibrate`` (needs the ``[sql]`` extra; ~1 min on 2 cores).

For every query it runs the engine at two scale factors (:data:`SFS`) with :data:`WORKERS`
workers and records, per unit scale factor, the byte counters of :class:`suite_theseus.engine.Stats`:
``scanned`` (columns read), ``routed`` (bytes hash-routed by shuffles, self included: the
all-to-all volume, independent of K), ``broadcast_table`` (the broadcast tables' bytes:
``broadcast / (K - 1)``), ``build`` (whole partitions held as join build sides) and ``kept``
(intermediate bytes stored in the tiers). Each counter is fitted as ``a + b * SF`` through the two
points (``b`` the slope per SF, ``a`` the fixed part: nation and region). It also times DuckDB
on this machine with one thread at :data:`RATE_SF` and stores the per-core scan rate
(scanned bytes / s) of each query: the ``cpu-engine`` baseline's calibration (docs/verdicts.md: model
constants from a stated calibration).
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import time

__all__ = ["SFS", "WORKERS", "RATE_SF", "measure", "main", "PATH"]

SFS = (0.01, 0.1)
WORKERS = 4
RATE_SF = 0.1
PATH = os.path.join(os.path.dirname(__file__), "coefficients.json")
_COUNTERS = ("scanned", "routed", "broadcast_table", "build", "kept", "gathered")


def measure(sf: float, query: int, workers: int = WORKERS) -> dict:
    """The byte counters of one run (bytes, all workers)."""
    from suite_theseus import engine, tpch

    data = tpch.load(sf)
    _, e = engine.run_query(data, query, workers=workers, batch_rows=1 << 16, hbm_budget=1 << 40,
                            host_pool=1 << 20, page_size=1 << 16)
    s = e.stats
    return {"scanned": s.scanned, "routed": s.shuffle_routed, "broadcast_table": s.broadcast / max(workers - 1, 1),
            "build": s.build, "kept": s.kept, "gathered": s.gathered}


def main() -> dict:
    from suite_theseus import tpch

    out = {"_doc": "bytes per query: value(SF) = a + b * SF; written by python -m suite_theseus.calibrate",
           "sfs": list(SFS), "workers": WORKERS, "queries": {}}
    for q in tpch.QUERIES:
        pts = [measure(sf, q) for sf in SFS]
        (s0, m0), (s1, m1) = zip(SFS, pts)
        row = {}
        for c in _COUNTERS:
            b = (m1[c] - m0[c]) / (s1 - s0)
            a = m0[c] - b * s0
            row[c] = {"a": round(a, 3), "b": round(b, 3)}
        data = tpch.load(RATE_SF)
        times = [data.duckdb_answer(q, threads=1)[1] for _ in range(5)]
        scanned = row["scanned"]["a"] + row["scanned"]["b"] * RATE_SF
        row["duckdb_rate_per_core"] = round(scanned / statistics.median(times), 1)
        out["queries"][str(q)] = row
    out["rate_machine"] = f"{platform.processor() or platform.machine()} ({os.cpu_count()} CPUs), " \
                          f"DuckDB 1 thread, SF {RATE_SF}, median of 5, {time.strftime('%Y-%m-%d')}"
    with open(PATH, "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    return out


if __name__ == "__main__":  # pragma: no cover
    print(json.dumps(main(), indent=1))
