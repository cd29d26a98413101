"""What two stores must agree on, case for case (the SLURM and dask cluster tests compare an
executor's store with a local run's)."""

from __future__ import annotations

import sqlite3
from pathlib import Path


def store_table(path: Path) -> dict[str, tuple]:
    """Every stored case: key -> (status, error, metrics, samples, artifacts); not durations,
    tracebacks or run ids, which differ between any two runs."""
    conn = sqlite3.connect(path)
    try:
        metrics: dict[str, list] = {}
        rows = conn.execute("SELECT case_key, name, value, unit, direction FROM metrics")
        for k, name, value, unit, direction in rows:
            metrics.setdefault(k, []).append((name, value, unit, direction))
        samples: dict[str, list] = {}
        for k, m, i, v in conn.execute("SELECT c.key, s.metric, s.idx, s.value FROM samples s "
                                       "JOIN cases c ON c.id = s.case_id"):
            samples.setdefault(k, []).append((m, i, v))
        arts = dict(conn.execute("SELECT c.key, a.data FROM artifacts a JOIN cases c ON c.id = a.case_id"))
        return {k: (st, err, sorted(metrics.get(k, [])), sorted(samples.get(k, [])), arts.get(k))
                for k, st, err in conn.execute("SELECT key, status, error FROM cases")}
    finally:
        conn.close()
