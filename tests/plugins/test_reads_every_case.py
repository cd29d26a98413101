"""Every case records the profile fields its numbers depend on, whichever case ran before it in the
worker. A plugin's memo across cases (keyed by the profile object) served a later case figures it then
never read the profile for, so the run warned that it "did not read" a field its result depends on:
node-aware-grids (a tryout: 1 of 6 cases, comm_time 5.017 ms at 1 Gbit/s, 0.905 ms at 10), and, found
by a second reader, computron's stage times, virtualflow's virtual-node times and device slots, and
cerebras-stencil's platform (6 of 8, 6 of 8, 2 of 4 cases)."""

from __future__ import annotations

import pytest
from session_context import session_context

from suite.results import Store
from suite.runner import ExecOptions, expand_entry, run_cases


@pytest.mark.parametrize("entry", [
    {"technique": "computron", "fidelities": ["simulate"], "workloads": ["computron-c00"]},
    {"technique": "virtualflow"},
    {"technique": "cerebras-stencil", "variants": ["gpu-4x"], "profiles": ["dgx-a100"], "params": {"steps": [10, 20]}},
])
def test_no_case_of_a_memory_bandwidth_sweep_misses_its_reads(tmp_path, entry):
    ctx = session_context()
    entry = {**entry, "set": {"device.memory_bandwidth": ["1000 GB/s", "2000 GB/s"]}}
    with Store(tmp_path / "s.sqlite") as st:
        s = run_cases(expand_entry(entry, context=ctx).cases, st, options=ExecOptions(jobs=1, isolate=False),
                      context=ctx)
    assert s.ok >= 4 and s.warnings == [], s.warnings


def test_each_case_of_a_bandwidth_sweep_reads_the_bandwidth_it_depends_on(tmp_path):
    ctx = session_context()
    entry = {"technique": "node-aware-grids", "profiles": ["k80-cluster-10gbe"],
             "variants": ["node-aware", "summa-2d", "default-grid"],  # the baseline priced first by the others
             "set": {"network.-1.bandwidth": ["1 Gbit/s", "10 Gbit/s"]}}
    cases = expand_entry(entry, context=ctx).cases
    with Store(tmp_path / "s.sqlite") as st:
        s = run_cases(cases, st, options=ExecOptions(jobs=1, isolate=False), context=ctx)
        comm = {(c.variant, next(iter(c.overrides.values()))): st.result(c.key).metrics["comm_time"].value
                for c in cases if c.variant == "default-grid"}
    assert s.ok == 6 and s.warnings == [], s.warnings
    assert comm[("default-grid", "1 Gbit/s")] > 2 * comm[("default-grid", "10 Gbit/s")]  # it depends on it
