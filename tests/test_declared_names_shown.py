"""A parameter named like a column is headed ``param.NAME`` in the report and ``suite compare``;
declaring it, or a variant, parameter or unit name holding a control character or a bidirectional
override, warns (``DeprecationWarning``, refused from dlsys-suite 0.4.0). The names are those of the
hostile review (hostile10c, findings 5 and 7)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from suite.declaration.params import Paper, Param, Variant
from suite.declaration.results import Result
from suite.technique import Technique

ANSI = "\x1b[2J\x1b[31mANSI\u202e"  # clears the screen, turns the text red, reverses the rest of the line


def _tech(variants, parameters):
    return Technique(name="evil", title="Evil", category="communication", paper=Paper("P", ("A",), "X", 2020),
                     variants=variants, parameters=parameters, needs_profile=False, needs_workload=False,
                     fidelities={"model": lambda s: Result().add("t", 1.0, "s", "lower")})


def test_declaration_warns_of_hiding_characters_and_shadowing_parameters():
    with pytest.warns(DeprecationWarning) as got:
        _tech([Variant("tree", "t", baseline=True), Variant(ANSI, "a")],
              {"variant": Param(str, "x"), "e\x1bvil": Param(int, 1), "size": Param(float, 1.0, unit="MB\u202e")})
    messages = sorted(str(w.message) for w in got)
    assert len(messages) == 4, messages
    assert all(m.endswith("refused when the plugin loads from dlsys-suite 0.4.0") for m in messages)
    assert "variant name: expected printable characters only, got U+001B, U+001B, U+202E" in " ".join(messages)
    assert "parameter name: expected printable characters only, got U+001B in 'e\\x1bvil'" in " ".join(messages)
    assert "parameter 'size' unit: expected printable characters only, got U+202E" in " ".join(messages)
    assert "parameter 'variant': expected a name that is not a case column" in " ".join(messages)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _tech([Variant("tree", "t", baseline=True)], {"duration": Param(float, 1.0, unit="s")})  # not shown there


def test_a_variant_name_with_a_comma_warns():
    """`--variant a,b` and an experiment file's list split on commas: a variant named "ring,fast" could
    never be picked (a hostile tryout); declaring it warns, refused from 0.4.0."""
    with pytest.warns(DeprecationWarning, match=r"technique 'evil': variant 'ring,fast': expected a name without a "
                                                r"comma .*refused when the plugin loads from dlsys-suite 0\.4\.0"):
        _tech([Variant("tree", "t", baseline=True), Variant("ring,fast", "r")], {})


def test_report_heads_parameters_named_like_columns_param_dot():
    from suite.report.html import _cases_part

    wide = pd.DataFrame({"variant": ["ring", "tree"], "profile": ["p", "p"], "workload": ["", ""],
                         "fidelity": ["model", "model"], "seed": [0, 0], "param.variant": ["poseidon", "x"],
                         "param.comm_time": [1, 2], "param.workers": [4, 8], "param.technique": ["poseidon"] * 2,
                         "comm_time": [0.09, 0.3]})
    html = "".join(_cases_part(wide, ["comm_time"], {"comm_time": "s"}, {"comm_time": "lower"}, None))
    heads = html[html.index("<thead>"):html.index("</thead>")]
    assert [h.split("</th>")[0] for h in heads.split("<th>")[1:]] == [
        "variant", "param.variant", "param.comm_time", "workers", "comm_time (ms)"]
    assert "the same in every case: param.technique=poseidon" in html


def test_compare_scenario_heads_parameters_named_like_columns_param_dot():
    from suite.results.compare import _describe

    ident = {"params": {"profile": "big", "comm_time": 1, "nodes": 4}, "set": {}, "workload": "", "fidelity": "model",
             "seed": 0}
    assert _describe(ident, {"profile", "comm_time", "nodes"}, None, ["comm_time"]) == \
        "param.comm_time=1 nodes=4 param.profile=big"


def test_a_string_parameter_default_or_choice_with_hiding_characters_warns():
    """A default or a choice is shown by `suite info` and in every case's parameters (escaped): it
    was never warned about. One warning each, what it is named; refused from 0.4.0."""
    with pytest.warns(DeprecationWarning) as got:
        _tech([Variant("tree", "t", baseline=True)],
              {"mode": Param(str, "fast\u202e", choices=("fast\u202e", "slow", "e\x1bvil")),
               "n": Param(int, 1, choices=(1, 2))})  # not strings: nothing to look at
    messages = sorted(str(w.message) for w in got)
    assert messages == [
        "technique 'evil': parameter 'mode' choice: expected printable characters only, got U+001B in 'e\\x1bvil'; "
        "this is refused when the plugin loads from dlsys-suite 0.4.0",
        "technique 'evil': parameter 'mode' choice: expected printable characters only, got U+202E in 'fast\\u202e'; "
        "this is refused when the plugin loads from dlsys-suite 0.4.0",
        "technique 'evil': parameter 'mode' default: expected printable characters only, got U+202E in 'fast\\u202e'; "
        "this is refused when the plugin loads from dlsys-suite 0.4.0"], messages
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        _tech([Variant("tree", "t", baseline=True)], {"mode": Param(str, "fast", choices=("fast", "slow"))})


def test_a_metric_unit_with_hiding_characters_warns_once_per_technique_and_unit(tmp_path, capfd):
    """A result's unit is set when the case runs (`Result.add`): it was escaped on screen, never
    warned about. Six cases in worker processes, two metrics in the same hiding unit: one line at
    the run's end, and nothing from the workers."""
    import types

    from suite import hookimpl
    from suite.context import Context
    from suite.registry import Registry
    from suite.results import Store
    from suite.runner import ExecOptions, expand_entry, run_cases

    tech = Technique(name="evil", title="Evil", category="communication", paper=Paper("P", ("A",), "X", 2020),
                     variants=[Variant("tree", "t", baseline=True)], parameters={"n": Param(int, 1)},
                     needs_profile=False, needs_workload=False,
                     fidelities={"model": _evil_units})
    mod = types.ModuleType("evil_units_plugin")
    mod.suite_techniques = hookimpl(lambda: [tech])
    ctx = Context.build(registry=Registry(entry_points_=[], modules=[("evil_units", mod)]))
    entry = {"technique": "evil", "params": {"n": [1, 2, 3, 4, 5, 6]}}
    with Store(tmp_path / "s.sqlite") as st:
        s = run_cases(expand_entry(entry, context=ctx).cases, st, options=ExecOptions(jobs=2), context=ctx)
    assert s.ok == 6, s.message()
    assert s.warnings == ["technique 'evil': metric 't' unit: expected printable characters only, got U+001B, "
                          "U+202E in 'ms\\x1bc\\u202e'; a result with it is refused from dlsys-suite 0.4.0"]
    assert "U+001B" not in capfd.readouterr().err


def _evil_units(scenario):
    return (Result().add("t", 1.0, "ms\x1bc\u202e", "lower").add("u", 2.0, "ms\x1bc\u202e", "lower")
            .add("v", 3.0, "s", "lower"))
