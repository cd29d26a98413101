"""``--artifacts none|summary|full``: what of a result's artifacts the store keeps."""

from __future__ import annotations

import pytest

from suite.errors import SuiteError
from suite.results import Store
from suite.runner import ExecOptions, expand_entry, run_cases
from suite.runner.executors import summarize_artifacts
from suite.technique import Paper, Param, Result, Technique, Variant

from plugin_context import plugin_context


def _evaluate(scenario):
    n = int(scenario.params["n"])
    res = Result().add("y", float(n), "1", "higher")
    res.artifacts["layers"] = [{"i": i} for i in range(n)]  # a table of n rows
    res.artifacts["setup"] = {"n": n}
    return res


ART = Technique(name="art", title="artifacts fixture", category="communication", paper=Paper(title="none"),
                variants=[Variant("base", "baseline", baseline=True)], fidelities={"model": _evaluate},
                parameters={"n": Param(int, 20)}, needs_workload=False, needs_profile=False)


@pytest.fixture
def context():
    return plugin_context(ART)


def test_summary_leaves_out_sequences_longer_than_16():
    art = {"table": list(range(17)), "short": list(range(16)), "setup": {"a": 1}, "name": "x"}
    assert summarize_artifacts(art) == {"short": list(range(16)), "setup": {"a": 1}, "name": "x",
                                        "_omitted": ["table"]}
    small = {"setup": {"a": 1}}
    assert summarize_artifacts(small) is small  # nothing left out: no copy, no marker


def test_summary_leaves_out_texts_longer_than_64_kib():
    # a plugin's 300 MB string was stored whole under the default summary (630 MB of store for two cases)
    art = {"log": "x" * 65537, "blob": b"y" * 70000, "note": "z" * 65536, "n": 3}
    assert summarize_artifacts(art) == {"note": "z" * 65536, "n": 3, "_omitted": ["blob", "log"]}


def test_bad_mode_is_one_line():
    with pytest.raises(SuiteError, match="--artifacts: expected one of none, summary, full, got 'all'"):
        ExecOptions(artifacts="all")


@pytest.mark.parametrize("isolate", [False, True])
def test_modes_end_to_end(tmp_path, context, isolate):
    cases = expand_entry({"technique": "art", "params": {"n": [3, 20]}}, context=context).cases
    small, big = cases  # n=3: a 3-row table (kept); n=20: a 20-row table (left out by summary)
    with Store(tmp_path / "s.sqlite") as st:
        s = run_cases(cases, st, options=ExecOptions(isolate=isolate), context=context)  # default
        assert s.computed == 2
        assert st.result(small.key).artifacts == {"layers": [{"i": i} for i in range(3)], "setup": {"n": 3}}
        assert st.result(big.key).artifacts == {"setup": {"n": 20}, "_omitted": ["layers"]}
        assert st.summarized_keys([small.key, big.key]) == {big.key}
        # full: only the case stored with a summary is computed again, and now keeps its table
        s = run_cases(cases, st, options=ExecOptions(isolate=isolate, artifacts="full"), context=context)
        assert (s.computed, s.cached) == (1, 1)
        assert st.result(big.key).artifacts["layers"] == [{"i": i} for i in range(20)]
        assert st.result(big.key).metrics["y"].value == 20.0
        s = run_cases(cases, st, options=ExecOptions(isolate=isolate, artifacts="full"), context=context)
        assert s.computed == 0
    with Store(tmp_path / "none.sqlite") as st:
        run_cases(cases, st, options=ExecOptions(isolate=isolate, artifacts="none"), context=context)
        assert st.result(big.key).artifacts == {}
        assert st.result(big.key).metrics["y"].value == 20.0
