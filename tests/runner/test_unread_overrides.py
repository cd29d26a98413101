"""The end-of-run warning of an override some cases of a sweep did not read."""

from __future__ import annotations

from suite.context import Context
from suite.results import Store
from suite.runner import ExecOptions, expand_entry, run_cases
from suite.technique import Paper, Param, Result, Technique, Variant

from plugin_context import plugin_context


def _evaluate(scenario):
    """Reads the network's bandwidth only with more than one node (a one-node case moves no bytes)."""
    n = scenario.params["nodes"]
    t = 1.0 if n == 1 else 1.0 + 1e9 / scenario.profile.network[-1].bandwidth
    return Result().add("time", t, "s", "lower")


COND = Technique(
    name="cond", title="reads the bandwidth for some cases only", category="communication",
    paper=Paper(title="none"), variants=[Variant("base", "baseline", baseline=True)],
    fidelities={"model": _evaluate}, parameters={"nodes": Param(int, 1)},
    default_profile="titanx-cluster-10gbe", needs_workload=False,
)


def _context() -> Context:
    return plugin_context(COND)


def _run(tmp_path, nodes, name="s.sqlite"):
    ctx = _context()
    entry = {"technique": "cond", "params": {"nodes": nodes}, "set": {"network.-1.bandwidth": ["1 Gbit/s", "2 Gbit/s"]}}
    with Store(tmp_path / name) as st:
        return run_cases(expand_entry(entry, context=ctx).cases, st, options=ExecOptions(jobs=1, isolate=False),
                         context=ctx)


def test_a_run_says_how_many_cases_did_not_read_an_override_that_others_read(tmp_path):
    s = _run(tmp_path, [1, 2, 4])
    assert s.ok == 6, s.message()
    # by hand: the 2 one-node cases (one per bandwidth) of 6 never read network.0.bandwidth
    [w] = s.warnings
    assert w.startswith("--set network.-1.bandwidth: 2 of 6 cond cases of this run did not read profile "
                        "field 'network.0.bandwidth'"), w
    assert "nodes=1" in w


def test_no_warning_when_every_case_reads_it_and_one_line_when_none_does(tmp_path):
    assert _run(tmp_path, [2, 4]).warnings == []
    # no case reads it (nor any other field: before 0.3.8 such a run said nothing)
    [w] = _run(tmp_path, [1], "one.sqlite").warnings
    assert w.startswith("--set network.-1.bandwidth: 2 of 2 cond cases of this run did not read"), w


def test_an_efficiency_override_under_a_named_ring_warns_that_it_was_not_read(tmp_path):
    """hetseq's default algorithm=ring is the alpha-beta ring (43.54 ms at 1 node whatever the
    efficiency): before, its reads listed network.0.efficiency (recorded for any algorithm
    under NCCL) and the run said nothing. Under auto (NCCL's model) the field is read: no warning."""
    ctx = Context.build()
    for algorithm, warns in (("ring", True), ("auto", False)):
        entry = {"technique": "hetseq", "variant": "ddp-equal-batch", "params": {"nodes": 1, "algorithm": algorithm},
                 "set": {"network.0.efficiency": [0.01]}}
        with Store(tmp_path / f"{algorithm}.sqlite") as st:
            s = run_cases(expand_entry(entry, context=ctx).cases, st, options=ExecOptions(jobs=1, isolate=False),
                          context=ctx)
        assert s.ok == 1, s.message()
        assert [w.startswith("--set network.0.efficiency: hetseq never read profile field 'network.0.efficiency'")
                for w in s.warnings] == ([True] if warns else []), s.warnings


def test_a_cached_rerun_warns_of_the_same_cases_as_the_run_that_computed_them(tmp_path):
    """Before, `suite run` again (every case stored) printed no partial warning: it counted only the
    cases it computed. The stored cases keep their reads, so the rerun counts them: the same N of M."""
    from click.testing import CliRunner

    from suite.cli import main

    ctx = _context()

    def run(nodes):
        args = ["run", "-q", "-t", "cond", "--param", f"nodes={nodes}", "--set", "network.-1.bandwidth=1 Gbit/s,2 Gbit/s",
                "--store", str(tmp_path / "s.sqlite")]
        r = CliRunner().invoke(main, args, obj={"context": ctx})
        assert r.exit_code == 0, r.output
        return [line for line in r.stderr.splitlines() if "did not read" in line]

    # by hand: nodes=1 (2 cases, one per bandwidth) never reads the bandwidth, nodes=2 (2 cases) does
    first = run("1,2")
    assert len(first) == 1 and first[0].startswith(
        "warning: --set network.-1.bandwidth: 2 of 4 cond cases of this run did not read profile field "
        "'network.0.bandwidth'"), first
    assert run("1,2") == first  # all 4 cached: the same line
    # 4 cached and 2 computed (nodes=4 reads it): 2 of 6
    [w] = run("1,2,4")
    assert w.startswith("warning: --set network.-1.bandwidth: 2 of 6 cond cases of this run did not read"), w


def test_a_cached_rerun_builds_one_scenario_for_the_warning(tmp_path, monkeypatch):
    """A reused case is not evaluated, so its scenario (workload, inputs) is built only to read its
    profile's levels (`network.-1` -> `network.0`): once per (profile, field), not once per set of
    reads (here 2: nodes=1 reads nothing, nodes=2 and 4 read the bandwidth)."""
    from suite.runner.case import Resolver

    _run(tmp_path, [1, 2, 4])
    built = []
    build = Resolver._scenario
    monkeypatch.setattr(Resolver, "_scenario", lambda self, *a: built.append(a) or build(self, *a))
    s = _run(tmp_path, [1, 2, 4])
    assert s.cached == 6 and s.computed == 0
    assert s.warnings[0].startswith("--set network.-1.bandwidth: 2 of 6 cond cases of this run did not read"), s.warnings
    assert len(built) == 1
