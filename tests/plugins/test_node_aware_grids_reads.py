"""Every node-aware-grids case records the profile fields its numbers depend on, whichever case ran
before it in the worker (a tryout: a per-profile memo served the default grid's times to a later case,
which then recorded no read of the network bandwidth, and the run warned that 1 of 6 cases "did not
read" a field its comm_time depends on: 5.017 ms at 1 Gbit/s, 0.905 ms at 10)."""

from __future__ import annotations

from session_context import session_context

from suite.results import Store
from suite.runner import ExecOptions, expand_entry, run_cases


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
