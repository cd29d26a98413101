"""Lazily expanded sweeps (issue 19, item 6): `stream_entry` resolves one case at a time and
`run_cases` runs any iterable in chunks, so a sweep's memory does not grow with its size; what a
chunked, streamed run stores equals what the list-based run stores."""

from __future__ import annotations

import pytest

from suite.context import Context
from suite.errors import ExperimentError
from suite.runner import ExecOptions, run_cases
from suite.runner.case import Resolver
from suite.runner.experiment import CaseStream, expand_entry, stream_entry, streamable

from plugin_context import plugin_context


def _ctx():
    """The context of the test: the fake plugin (the fake_registry fixture makes it the default)."""
    from suite.context import Context

    return Context.build()


ENTRY = {"technique": "fake", "params": {"x": [1, 2, 3], "n": [1, 2, 2]}, "seeds": [0, 1],
         "set": {"network.-1.bandwidth": ["2 Gbit/s", "10 Gbit/s"]}}


def _stream(entry=ENTRY, **kw):
    return stream_entry(entry, resolver=Resolver(context=Context.build()), **kw)


def test_stream_yields_the_cases_expand_entry_builds_in_the_same_order(fake_registry):
    listed = [c.key for c in expand_entry(ENTRY, context=_ctx()).cases]
    s = _stream()
    assert isinstance(s, CaseStream)
    # 2 variants x 3 x 3 (n = 2 given twice) x 2 seeds x 2 bandwidths
    assert len(s) == 2 * 3 * 3 * 2 * 2 == len(listed)
    assert [c.key for c in s] == listed
    assert [c.key for c in s] == listed  # iterable again: each pass resolves anew


def test_streamable_only_for_plain_products_of_one_technique():
    assert streamable({"technique": "fake", "params": {"x": [1, 2]}})
    assert not streamable({"technique": "*"})
    assert not streamable({"technique": "fake", "exclude": [{"x": 1}]})
    assert not streamable({"technique": "fake", "smoke": True})


def test_stream_checks_every_axis_value_before_the_first_case(fake_registry):
    # the bad value is the last of its axis: found at once, with expand_entry's message
    bad = {**ENTRY, "params": {"x": [1, 2, "three"], "n": [1]}}
    with pytest.raises(ExperimentError) as a:
        _stream(bad)
    with pytest.raises(ExperimentError) as b:
        expand_entry(bad, context=_ctx())
    assert str(a.value) == str(b.value) and "expected float, got 'three'" in str(a.value)
    with pytest.raises(ExperimentError, match="network.-1.bandwidth"):
        _stream({**ENTRY, "set": {"network.-1.bandwidth": ["2 Gbit/s", "fast"]}})
    with pytest.raises(ExperimentError, match=r"expected at most 10 cases \(--max-cases\), got a sweep of 72"):
        _stream(max_cases=10)


@pytest.mark.parametrize("chunk", [1, 7, 10_000])
def test_chunked_streamed_run_stores_what_the_list_run_stores(fake_registry, tmp_path, chunk):
    from suite.results import Store

    with Store(tmp_path / "list.sqlite") as st:
        a = run_cases(expand_entry(ENTRY, context=_ctx()).cases, st, options=ExecOptions(isolate=False), context=Context.build(registry=fake_registry))
        rows_a = sorted(st.conn.execute("SELECT c.key, m.name, m.value FROM cases c JOIN metrics m "
                                        "ON m.case_key = c.key").fetchall())
    with Store(tmp_path / "stream.sqlite") as st:
        b = run_cases(_stream(), st, options=ExecOptions(isolate=False), context=Context.build(registry=fake_registry), chunk_size=chunk)
        rows_b = sorted(st.conn.execute("SELECT c.key, m.name, m.value FROM cases c JOIN metrics m "
                                        "ON m.case_key = c.key").fetchall())
        # 72 combinations, 24 of them repeat n = 2: 48 distinct cases, each run once
        assert (b.total, b.computed, b.ok) == (48, 48, 48) == (a.total, a.computed, a.ok)
        assert rows_a == rows_b and len(rows_b) > 0
        again = run_cases(_stream(), st, options=ExecOptions(isolate=False), context=Context.build(registry=fake_registry),
                          chunk_size=chunk)
        assert (again.total, again.cached, again.computed) == (48, 48, 0)


def test_chunks_double_up_to_four_times_the_first():
    # a pool forks its worker once per chunk: later chunks grow (10, 20, 40, then 40 each: hand
    # count for 150 items), so a long sweep forks a few times, not once per 10,000 cases
    from suite.runner.engine import _chunks

    assert [len(c) for c in _chunks(iter(range(150)), 10)] == [10, 20, 40, 40, 40]
    assert [c[0] for c in _chunks(iter(range(150)), 10)] == [0, 10, 30, 70, 110]
    assert [len(c) for c in _chunks(list(range(25)), 10)] == [10, 15]


def test_a_combination_that_fails_mid_chunk_still_runs_the_cases_before_it(fake_registry, tmp_path):
    # a lazy sweep raises at the combination that does not resolve; the cases resolved before it
    # in the same chunk are run and stored (not dropped with the chunk's buffer), then the error
    from suite.results import Store

    cases = expand_entry({"technique": "fake", "params": {"x": [1, 2, 3], "n": [1, 2, 3]}, "seeds": [0, 1]}, context=_ctx()).cases

    def stream():
        for i, c in enumerate(cases):
            if i == 25:
                raise ExperimentError("command line: fake (variant=base): this combination does not resolve")
            yield c

    with Store(tmp_path / "s.sqlite") as st:
        with pytest.raises(ExperimentError, match="does not resolve"):
            run_cases(stream(), st, options=ExecOptions(isolate=False), context=Context.build(registry=fake_registry), chunk_size=10)
        assert st.conn.execute("SELECT count(*) FROM cases").fetchone()[0] == 25


def test_an_experiment_entry_that_quarantines_an_earlier_entrys_plugin_drops_only_its_cases(tmp_path):
    # entry [one] expands plugin b's technique on a zoo workload (b's workloads not built yet);
    # entry [two] needs a's workload, which builds every plugin's: b's reuse of a zoo name
    # quarantines it then. b's cases are dropped with one warning; a's remain.
    import types

    from suite import Paper, Result, Technique, Variant, hookimpl
    from suite.runner.experiment import expand_experiment
    from suite.workloads.types import Workload

    def tech(name):
        return Technique(name=name, title="t", category="communication", paper=Paper("P"),
                         variants=[Variant("base", "baseline", baseline=True)],
                         fidelities={"model": lambda s: Result().add("x", 1.0)}, needs_profile=False)

    a, b = types.ModuleType("a"), types.ModuleType("b")
    a.suite_techniques = hookimpl(lambda: [tech("alpha")])
    a.suite_workloads = hookimpl(lambda: [Workload(name="rvk-wl", kind="cnn")])
    b.suite_techniques = hookimpl(lambda: [tech("beta")])
    b.suite_workloads = hookimpl(lambda: [Workload(name="alexnet", kind="cnn")])
    ctx = plugin_context(("a", a), ("b", b))
    f = tmp_path / "exp.toml"
    f.write_text('[one]\ntechnique = "beta"\nworkloads = ["alexnet"]\n\n'
                 '[two]\ntechnique = "alpha"\nworkloads = ["rvk-wl"]\n')
    exp = expand_experiment(f, resolver=Resolver(context=ctx))
    assert [c.technique for c in exp.cases] == ["alpha"]
    [w] = exp.warnings
    assert "technique 'beta': plugin 'b' (<in-process>) is quarantined" in w and w.endswith("its 1 case(s) skipped")
