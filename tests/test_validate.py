"""Tests of `suite validate` (suite/model_validation.py and suite/cli/validate.py) with a fake technique
whose execute and model values are closed forms, so errors and MAPE are checked by hand."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from plugin_context import technique_module
from session_context import session_context

from suite.errors import ProfileError, SuiteError
from suite.technique import Paper, Param, Result, ScenarioSpec, Skip, Technique, Variant
from suite.model_validation import ValidationReport, ValidationRow, compare_results, validate, validation_specs

PROFILE_TOML = """
[profile]
name = "{name}"
kind = "measured"
source = "test fixture"
[device]
type = "cpu"
memory = "8 GB"
memory_bandwidth = "10 GB/s"
peak_flops = {{ fp32 = "100 GFLOP/s" }}
"""


def _execute(scenario) -> Result:
    x = scenario.params["x"]
    if x < 0:
        raise Skip("negative x does not apply")
    r = Result()
    r.add("time", 2.0 * x, "s", "lower", samples=[2.0 * x] * 3)
    r.add("bytes", 100.0 * x, "B", "lower")
    r.add("zero", 0.0, "1", "none")
    r.add("only_measured", 1.0, "1", "none")
    r.add("unit_differs", 5.0, "s", "none")
    return r


def _model(scenario) -> Result:
    x = scenario.params["x"]
    # predicted time = measured * (1 + x/10): error x/10 exactly; bytes exact; zero exact
    gflops = scenario.profile.device.peak_flops["fp32"] / 1e9  # 100 -> factor 1
    r = Result()
    r.add("time", 2.0 * x * (1 + x / 10) * gflops / 100, "s", "lower")
    r.add("bytes", 100.0 * x, "B", "lower")
    r.add("zero", 0.0, "1", "none")
    r.add("unit_differs", 5.0, "ms", "none")
    return r


def _tech(fidelities=("execute", "model"), validation=True) -> Technique:
    fns = {"execute": _execute, "model": _model}
    t = Technique(
        name="fakeval", title="fake for validate", category="kernels", paper=Paper("p"),
        variants=[Variant("base", "b", baseline=True), Variant("fast", "f")],
        fidelities={f: fns[f] for f in fidelities},
        parameters={"x": Param(float, 1.0, minimum=-10)},
        needs_workload=False, default_profile=None,
        smoke=[ScenarioSpec("base", params={"x": 1.0})],
    )
    if validation:
        t.validation = [ScenarioSpec("base", params={"x": 1.0}), ScenarioSpec("fast", params={"x": 2.0}),
                        ScenarioSpec("base", params={"x": -1.0})]
    return t


@pytest.fixture
def profiles(tmp_path):
    (tmp_path / "local.toml").write_text(PROFILE_TOML.format(name="local"))
    (tmp_path / "other.toml").write_text(PROFILE_TOML.format(name="other-box"))
    return (str(tmp_path),)


def test_validate_rows_errors_and_mape_by_hand(profiles):
    rep = validate(_tech(), "local", profile_dirs=profiles, context=session_context())
    assert rep.technique == "fakeval" and rep.profile == "local"
    # x=-1 is skipped with its reason; only metrics with the same name AND unit are compared
    assert rep.skipped == [("base x=-1.0", "negative x does not apply")]
    assert rep.metrics == ["time", "bytes", "zero"]
    t = {r.case: r for r in rep.rows if r.metric == "time"}
    assert t["base"].measured == 2.0 and t["base"].predicted == pytest.approx(2.2)
    assert t["base"].error == pytest.approx(0.1)
    assert t["fast x=2.0"].error == pytest.approx(0.2)
    assert rep.mape("time") == pytest.approx(15.0)
    assert rep.mape("bytes") == pytest.approx(0.0)
    # measured 0: relative error undefined, left out of the averages
    assert all(r.error is None for r in rep.rows if r.metric == "zero")
    assert rep.mape("zero") is None
    assert rep.mape() == pytest.approx((10 + 20 + 0 + 0) / 4)
    d = rep.as_dict()
    assert d["overall_mape_pct"] == pytest.approx(7.5)
    assert {s["metric"]: s["cases"] for s in d["mape_pct"]} == {"time": 2, "bytes": 2, "zero": 2}


def test_validate_falls_back_to_smoke_scenarios(profiles):
    tech = _tech(validation=False)
    assert validation_specs(tech) == list(tech.smoke)
    rep = validate(tech, "local", profile_dirs=profiles, context=session_context())
    assert [r.case for r in rep.rows if r.metric == "time"] == ["base"]


def test_validate_on_another_profile_and_explicit_scenarios(profiles):
    rep = validate(_tech(), "other-box", profile_dirs=profiles, metrics=["time"],
                   scenarios=[ScenarioSpec("fast", params={"x": 5.0})], context=session_context())
    assert [(r.metric, r.error) for r in rep.rows] == [("time", pytest.approx(0.5))]


def test_validate_errors_are_one_line(profiles):
    with pytest.raises(SuiteError, match=r"has no 'model' fidelity .*validate compares execute with model"):
        validate(_tech(fidelities=("execute",)), "local", profile_dirs=profiles, context=session_context())
    with pytest.raises(SuiteError, match=r"has no 'execute' fidelity"):
        validate(_tech(fidelities=("model",)), "local", profile_dirs=profiles, context=session_context())
    with pytest.raises(ProfileError, match=r"profile 'nope' not found.*suite hardware calibrate") as exc:
        validate(_tech(), "nope", profile_dirs=profiles, context=session_context())
    assert "\n" not in str(exc.value)


def test_missing_local_profile_suggests_calibrate(tmp_path, monkeypatch):
    monkeypatch.setenv("SUITE_PROFILES", str(tmp_path))  # empty: no calibrated profile here
    monkeypatch.setenv("HOME", str(tmp_path))
    from suite.context import Context

    ctx = Context.build()  # after the environment changed: its profiles are these
    if "local" in ctx.profiles:
        pytest.skip("a calibrated 'local' profile is installed on this machine")
    with pytest.raises(ProfileError, match=r"'local' not found; run `suite hardware calibrate`"):
        validate(_tech(), context=ctx)


def test_compare_results_rules():
    a = Result().add("t", 2.0, "s").add("m", 0.0, "B").add("nan", float("nan"), "s").add("u", 1.0, "s")
    b = Result().add("t", 3.0, "s").add("m", 1.0, "B").add("nan", 1.0, "s").add("u", 1.0, "ms")
    assert compare_results(a, b) == [("t", "s", 2.0, 3.0, 0.5), ("m", "B", 0.0, 1.0, None)]
    assert compare_results(a, b, ["m"]) == [("m", "B", 0.0, 1.0, None)]


def test_report_without_rows():
    rep = ValidationReport("x", "local")
    assert rep.mape() is None and rep.summary() == []
    row = ValidationRow("c", "v", "time", "s", 1.0, 1.5, 0.5)
    assert row.error_pct == pytest.approx(50.0)


# --------------------------------------------------------------------------- CLI


def _plugin_module(tech):
    return technique_module(tech, name="fakeval_plugin")


def test_cli_table_and_json(isolated_registry, profiles):
    from suite.cli import main

    isolated_registry(("fakeval", _plugin_module(_tech())))
    runner = CliRunner()
    res = runner.invoke(main, ["validate", "fakeval", "--profiles", profiles[0], "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert data["profile"] == "local"
    assert {(r["case"], r["metric"]): r["error_pct"] for r in data["rows"]}[("fast x=2.0", "time")] == \
        pytest.approx(20.0)
    res = runner.invoke(main, ["validate", "fakeval", "--profiles", profiles[0], "-q"])
    assert res.exit_code == 0, res.output
    # time's errors 10 % and 20 % (x/10 at x = 1, 2), bytes exact twice (zero's two rows have no
    # relative error): 7.5 % over the 6 values hides time's 15 %
    assert "MAPE" in res.output and ("overall MAPE: 7.5 % over 6 values (mixes metrics of every unit; worst: "
                                     "time 15.0 % over 2 values)") in res.output
    assert "skipped: base x=-1.0: negative x does not apply" in res.output


def test_cli_errors(isolated_registry, profiles):
    from suite.cli import main

    isolated_registry(("fakeval", _plugin_module(_tech(fidelities=("model",)))))
    res = CliRunner().invoke(main, ["validate", "fakeval", "--profiles", profiles[0]])
    assert res.exit_code == 2
    assert res.output.strip().splitlines() == [
        "error: validate: technique 'fakeval' has no 'execute' fidelity (has ['model']); "
        "validate compares execute with model"]


def test_scenarios_that_do_not_fit_the_profile_are_skipped_with_reason(profiles):
    from suite.errors import ParameterError

    def picky_model(scenario):
        if scenario.params["x"] > 3:
            raise ParameterError("fakeval: x > 3 needs a cluster profile")
        return _model(scenario)

    tech = _tech()
    tech.fidelities["model"] = picky_model
    rep = validate(tech, "local", profile_dirs=profiles,
                   scenarios=[ScenarioSpec("base", params={"x": 1.0}), ScenarioSpec("base", params={"x": 4.0})],
                   context=session_context())
    assert rep.skipped == [("base x=4.0", "fakeval: x > 3 needs a cluster profile")]
    assert {r.case for r in rep.rows} == {"base"}


def test_a_bug_in_a_technique_propagates(profiles):
    def broken(scenario):
        raise ZeroDivisionError("bug")

    tech = _tech()
    tech.fidelities["execute"] = broken
    with pytest.raises(ZeroDivisionError):
        validate(tech, "local", profile_dirs=profiles, context=session_context())
