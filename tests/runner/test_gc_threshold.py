"""The engine raises the cyclic collector's youngest threshold for its own bookkeeping during a run;
plugin code (a pool worker, or an in-process run) evaluates under the thresholds the process had,
so a measured claim's timings and a plugin's memory are not changed by the runner."""

from __future__ import annotations

import gc

import pytest

from suite.results import Store
from suite.runner import ExecOptions, expand_entry, run_cases
from suite.runner.engine import RUN_GC_THRESHOLD
from suite.technique import Paper, Result, Technique, Variant

from plugin_context import plugin_context


def _threshold(scenario):
    return Result().add("gc_gen0", float(gc.get_threshold()[0]), "1", "higher")


GCT = Technique(name="gc-threshold", title="reports the collector's threshold", category="communication",
                paper=Paper(title="none"), variants=[Variant("base", "baseline", baseline=True)],
                fidelities={"model": _threshold}, parameters={}, needs_workload=False, needs_profile=False)


@pytest.mark.parametrize("isolate", [True, False])
def test_plugin_code_runs_under_the_process_thresholds(tmp_path, isolate):
    ctx = plugin_context(GCT)
    before = gc.get_threshold()
    assert before[0] < RUN_GC_THRESHOLD  # the interpreter's default (700)
    cases = expand_entry({"technique": "gc-threshold"}, context=ctx).cases
    with Store(tmp_path / "s.sqlite") as st:
        s = run_cases(cases, st, options=ExecOptions(jobs=1, isolate=isolate), command="t", context=ctx)
        assert s.ok == 1, s.message()
        seen = st.result(cases[0].key).metrics["gc_gen0"].value
    assert seen == before[0] and gc.get_threshold() == before
