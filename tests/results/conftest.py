"""Fixtures for the results tests: stores filled by real ``suite run`` sweeps of poseidon.

Run A is the sweep of the issue: poseidon (all variants), nodes 1, 2, 4, on the technique's
default cluster profile with the outer network at 10 and 40 Gbit/s. Run B is the same sweep on a
changed profile (the NIC latency raised to 50 us), so its cases have another profile content
hash. Both runs go through the real runner (resolve -> evaluate -> store).
"""

from __future__ import annotations

import functools

import pytest

SWEEP = {"technique": "poseidon", "params": {"nodes": ["1", "2", "4"]},
         "set": {"network.-1.bandwidth": ["10 Gbit/s", "40 Gbit/s"]}}
CHANGED = {"network.-1.latency": ["50 us"]}


def run_sweep(store, entry, command, context):
    from suite.runner.engine import run_cases
    from suite.runner.experiment import expand_entry

    exp = expand_entry(entry, context=context)
    summary = run_cases(exp.cases, store, command=command, context=context)
    assert summary.failed == 0 and summary.ok == len(exp.cases)
    return summary.run_id


@pytest.fixture(scope="session")
def sweep(shared_context):
    """(run_sweep(store, entry, command) on the context a command builds once (the session's:
    the installed plugins, the shipped profiles), the sweep entry) for tests that build their own store."""
    return functools.partial(run_sweep, context=shared_context), SWEEP


@pytest.fixture(scope="session")
def sweep_store(tmp_path_factory, sweep):
    """(path, run A id, run B id) of a store holding the sweep and the changed-profile sweep."""
    from suite.results import Store

    run_sweep, _entry = sweep
    path = tmp_path_factory.mktemp("results") / "suite.sqlite"
    with Store(path) as store:
        a = run_sweep(store, SWEEP, "suite run --technique poseidon (test sweep A)")
        b = run_sweep(store, {**SWEEP, "set": {**SWEEP["set"], **CHANGED}},
                      "suite run --technique poseidon (test sweep B: NIC latency 50 us)")
    return path, a, b
