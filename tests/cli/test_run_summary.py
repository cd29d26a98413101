"""`suite run`'s table of a small run: read without pandas (0.3-0.5 s of CPU of the command),
the same rows as the DataFrame readers give."""

from __future__ import annotations

import math
import os
import subprocess
import sys


def _sweep_store(path):
    from suite.context import Context
    from suite.results import Store
    from suite.runner.engine import run_cases
    from suite.runner.experiment import expand_entry

    ctx = Context.build()
    entry = {"technique": "poseidon", "params": {"nodes": ["1", "2"]},
             "set": {"network.-1.bandwidth": ["10 Gbit/s", "40 Gbit/s"]}}
    store = Store(path)
    exp = expand_entry(entry, context=ctx)
    run = run_cases(exp.cases, store, command="test", context=ctx).run_id
    return store, run


def _same(a, b):
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return (a is None and isinstance(b, float) and math.isnan(b)) or a == b


def test_case_records_are_the_rows_of_cases_and_metrics(tmp_path):
    store, run = _sweep_store(tmp_path / "s.sqlite")
    try:
        for r in (run, None):
            records = store.case_records(r, with_metrics=True)
            df = store.cases(r, expand_params=False)
            assert len(records) == len(df) == 16
            for rec, row in zip(records, df.to_dict("records")):
                assert set(rec) - {"metrics"} == set(row)
                assert all(_same(rec[k], row[k]) for k in row), (rec, row)
            m = store.metrics(r)
            want = sorted(zip(m["key"], m["name"], m["value"], m["unit"], m["direction"]))
            got = sorted((rec["key"], *x) for rec in records for x in rec["metrics"])
            assert got == want and len(got) > 16
    finally:
        store.close()


PROBE = r"""
import sys
from suite.cli import main
try:
    main.main(args=sys.argv[1:], prog_name="suite", standalone_mode=False)
finally:
    print("PANDAS", "pandas" in sys.modules, file=sys.stderr)
"""


def test_suite_run_prints_its_table_without_importing_pandas(tmp_path):
    env = {**os.environ, "SUITE_STORE": str(tmp_path / "s.sqlite"), "SUITE_CACHE_DIR": str(tmp_path / "c"),
           "COLUMNS": "250"}
    r = subprocess.run([sys.executable, "-c", PROBE, "run", "--technique", "poseidon", "--param", "nodes=2",
                        "--set", "network.-1.bandwidth=7 Gbit/s"], env=env, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "iteration_time=" in r.stdout and "network.-1.bandwidth=7 Gbit/s" in r.stdout
    assert "PANDAS False" in r.stderr
