"""``--artifacts none|summary|full``: what of a result's artifacts the store keeps."""

from __future__ import annotations

from dataclasses import replace

import pytest

from suite.errors import SuiteError
from suite.results import Store
from suite.runner import ExecOptions, expand_entry, reproduce, run_cases
from suite.runner.executors import summarize_artifacts
from suite.technique import Approx, Claim, Paper, Param, Result, ScenarioSpec, Technique, Variant

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
        # only the names of what was left out (33 bytes), as summary lists its own
        assert st.result(big.key).artifacts == {"_omitted": ["layers", "setup"]}
        assert st.result(big.key).metrics["y"].value == 20.0
        # full after none: both cases computed again (issue ops14-1: "22 already stored: nothing new to compute")
        s = run_cases(cases, st, options=ExecOptions(isolate=isolate, artifacts="full"), context=context)
        assert (s.computed, s.cached) == (2, 0)
        assert st.result(big.key).artifacts == {"layers": [{"i": i} for i in range(20)], "setup": {"n": 20}}


def _bare(scenario):
    return Result().add("y", 1.0, "1", "higher")  # no artifacts at all


def test_none_with_no_artifacts_is_not_computed_again(tmp_path):
    bare = replace(ART, name="bare", fidelities={"model": _bare})
    ctx = plugin_context(bare)
    cases = expand_entry({"technique": "bare"}, context=ctx).cases
    with Store(tmp_path / "s.sqlite") as st:
        run_cases(cases, st, options=ExecOptions(artifacts="none"), context=ctx, command="suite run -t bare --artifacts none")
        s = run_cases(cases, st, options=ExecOptions(artifacts="full"), context=ctx)
        assert (s.computed, s.cached) == (0, 1)  # nothing was left out: nothing to recompute
        assert st.result(cases[0].key).artifacts == {}


def _layer_rows(results):
    return float(len(results["main"].artifacts["layers"]))  # a claim that reads an artifact


CLAIMED = replace(ART, claims=[Claim("rows", "20 layer rows", "Table 1", True, Approx(20.0, rel=0.01),
                                     cases={"main": ScenarioSpec("base", params={"n": 20})}, derive=_layer_rows,
                                     null_reason="a count")])


def _none_then_reproduce(tmp_path, command, legacy=False):
    """The claim's verdict and value, and the cases reproduce computed, after a ``none`` run
    (with *legacy*: its marker rows deleted, as 0.3.11 stored it) under *command*."""
    ctx = plugin_context(CLAIMED)
    cases = expand_entry({"technique": "art", "params": {"n": [20]}}, context=ctx).cases
    with Store(tmp_path / "s.sqlite") as st:
        run_cases(cases, st, options=ExecOptions(artifacts="none"), context=ctx, command=command)
        if legacy:
            st.conn.execute("DELETE FROM artifacts")
            st.conn.commit()
        board = reproduce([CLAIMED], st, context=ctx)
        (out,) = board.outcomes
        return out.verdict, out.ours, board.run.computed


def test_reproduce_after_none_computes_the_case_again(tmp_path):
    # was: 1 reused, "error: value could not be derived: KeyError: 'layers'"
    assert _none_then_reproduce(tmp_path, "suite run -t art --param n=20 --artifacts none") == ("reproduced (no null)",
                                                                                                 20.0, 1)


@pytest.mark.parametrize("mode", ["none", "summary"])
def test_reproduce_says_the_stored_cases_it_computes_for_their_artifacts(tmp_path, mode):
    """newuser14 finding 6: reproduce printed "0 already stored, 8 to compute" over cases stored with
    summary or none, which it computes again for the artifacts they left out. n=20: a 20-row table
    (left out by both); n=3: a 3-row table (kept whole by summary, left out by none)."""
    import io

    from suite.runner.progress import PlainProgress

    ctx = plugin_context(CLAIMED)
    cases = expand_entry({"technique": "art", "params": {"n": [3, 20]}}, context=ctx).cases
    out = io.StringIO()
    with Store(tmp_path / "s.sqlite") as st:
        run_cases(cases, st, options=ExecOptions(artifacts=mode), context=ctx)
        board = reproduce([CLAIMED], st, context=ctx, progress=PlainProgress(stream=out))
    assert board.run.computed == 1  # the claim's one case, n=20
    assert out.getvalue().splitlines()[0] == ("run: 1 case(s): 0 already stored, 1 to compute (1 stored without all "
                                              "their artifacts)")
    out = io.StringIO()
    with Store(tmp_path / "s.sqlite") as st:
        run_cases(cases, st, options=ExecOptions(artifacts="full"), progress=PlainProgress(stream=out), context=ctx)
    left = {"none": 1, "summary": 0}[mode]  # n=3, stored by the first run (n=20 by reproduce, whole)
    assert out.getvalue().splitlines()[0] == (f"run: 2 case(s): {2 - left} already stored, {left} to compute"
                                              + (f" ({left} stored without all their artifacts)" if left else ""))


@pytest.mark.parametrize("flag", ["--artifacts none", "--artifacts=none"])
def test_reproduce_after_a_0311_none_run_computes_it_again(tmp_path, flag):
    # 0.3.11 stored no artifacts and no marker: the run's command tells
    verdict, ours, computed = _none_then_reproduce(tmp_path, f"suite run -t art --param n=20 {flag} -q", legacy=True)
    assert (verdict, ours, computed) == ("reproduced (no null)", 20.0, 1)


def test_a_0311_none_run_without_a_command_needs_rerun(tmp_path):
    # the Python API records no command: such a case is reused, as the user guide says (--rerun)
    verdict, _ours, computed = _none_then_reproduce(tmp_path, None, legacy=True)
    assert (verdict, computed) == ("error", 0)


@pytest.mark.parametrize("mode", ["none", "summary"])
def test_the_report_says_a_claims_cases_lack_the_artifacts_it_reads(tmp_path, mode):
    """newuser14 finding 3: the report (judged from the store, nothing run) showed "error: value
    could not be derived: KeyError: 'layers'" for a claim whose case was stored with --artifacts
    none or summary (the 20-row table left out), where `suite reproduce` computes it again."""
    from suite.report.scoreboard import format_verdict, stored_scoreboard

    ctx = plugin_context(CLAIMED)
    cases = expand_entry({"technique": "art", "params": {"n": [20]}}, context=ctx).cases
    with Store(tmp_path / "s.sqlite") as st:
        run_cases(cases, st, options=ExecOptions(artifacts=mode), context=ctx)
        board, not_run = stored_scoreboard([CLAIMED], st, context=ctx)
        (out,) = board.outcomes
        assert (not_run, format_verdict(out)) == (0, "error: value not derived: its cases are stored without the "
                                                     "artifacts its value reads (--artifacts summary or none): "
                                                     "`suite reproduce` computes them")
        run_cases(cases, st, options=ExecOptions(artifacts="full"), context=ctx)  # the case, computed again
        (out,) = stored_scoreboard([CLAIMED], st, context=ctx)[0].outcomes
        assert (out.verdict, out.ours) == ("reproduced (no null)", 20.0)  # 20 layer rows


def test_the_report_says_a_nulls_cases_lack_the_artifacts_it_reads(tmp_path):
    """A null whose value reads a left-out artifact says so too; the claim's own value (from the
    metric y = 20) is derived."""
    from suite.report.scoreboard import stored_scoreboard
    from suite.technique import Null

    null = Null("a row short", derive=lambda r: len(r["main"].artifacts["layers"]) - 1.0)
    claimed = replace(CLAIMED, claims=[replace(CLAIMED.claims[0], derive=lambda r: r["main"]["y"],
                                               nulls=(null,), null_reason="")])
    ctx = plugin_context(claimed)
    cases = expand_entry({"technique": "art", "params": {"n": [20]}}, context=ctx).cases
    with Store(tmp_path / "s.sqlite") as st:
        run_cases(cases, st, options=ExecOptions(artifacts="none"), context=ctx)
        (out,) = stored_scoreboard([claimed], st, context=ctx)[0].outcomes
    assert (out.ours, out.verdict) == (20.0, "error")
    assert [(n.label, n.value, n.reason) for n in out.nulls] == [
        ("a row short", None, "null value not derived: its cases are stored without the artifacts its value reads "
                              "(--artifacts summary or none): `suite reproduce` computes them")]


def test_the_report_keeps_the_error_of_a_derive_that_fails_on_whole_artifacts(tmp_path):
    """A value that fails on a case stored with all its artifacts keeps its own error."""
    broken = replace(CLAIMED, claims=[replace(CLAIMED.claims[0], derive=lambda r: r["main"].artifacts["nope"])])
    from suite.report.scoreboard import stored_scoreboard

    ctx = plugin_context(broken)
    cases = expand_entry({"technique": "art", "params": {"n": [20]}}, context=ctx).cases
    with Store(tmp_path / "s.sqlite") as st:
        run_cases(cases, st, options=ExecOptions(artifacts="full"), context=ctx)
        (out,) = stored_scoreboard([broken], st, context=ctx)[0].outcomes
        assert (out.verdict, out.reason) == ("error", "value could not be derived: KeyError: 'nope'")
