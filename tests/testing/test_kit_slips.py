"""What slipped through the kit and the runner (issue 46), each as a deliberately broken fixture
plugin that the kit now catches with one line naming the case, its parameters and its profile.

The fixtures price their communication on ``selene-dgx-a100`` (8 A100 per node on NVLink at
300 GB/s, 8 HDR NICs at 200 Gbit/s): an all-reduce of 8 ranks stays inside one node.
"""

from __future__ import annotations

import ast
import sys
import textwrap
import warnings

import pytest
from session_context import session_context

import suite
from suite import Null, Paper, Param, Result, ScenarioSpec, Technique, Variant
from suite.deprecation import KitWarning, fails_now
from suite.perf import collective_time, group_of
from suite.perf.sensitivity import check_network_sensitivity
from suite.runner.case import resolve_case
from suite.runner.executors import evaluate_outcome
from suite.testing import check_technique, run_check
from suite.testing.check import check_ids, comm_bandwidth_bound

PROFILE = "selene-dgx-a100"


def _comm(s, nbytes):
    cost = collective_time("allreduce", nbytes, group_of(s.profile, s.params["workers"]), s.profile, "ring")
    return cost


def _good_model(s):
    cost = _comm(s, s.params["size"] * 1e6)  # declared in MB
    return (Result().add("comm_time", cost.time, "s", "lower")
            .add("comm_bytes", sum(cost.bytes_per_level), "B"))


def _deaf_model(s):
    """Ignores the network: a fixed 1 GB/s, whatever the profile says."""
    return Result().add("comm_time", s.params["size"] * 1e6 / 1e9, "s", "lower")


_MEMO: dict = {}


def _memo_model(s):
    """Prices through collective_time, memoised per profile object (as node-aware-grids does): a
    second evaluation on the same profile prices nothing."""
    key = id(s.profile)
    if key not in _MEMO:
        _MEMO[key] = (s.profile, _comm(s, s.params["size"] * 1e6).time)
    return Result().add("comm_time", _MEMO[key][1], "s", "lower")


def _bytes_model(s):
    """Reads the size declared in MB as a byte count: off by 1e6."""
    cost = _comm(s, s.params["size"])
    return Result().add("comm_time", cost.time, "s", "lower")


def _too_fast_model(s):
    cost = _comm(s, s.params["size"] * 1e6)
    return (Result().add("comm_time", cost.time / 4, "s", "lower")
            .add("comm_bytes", sum(cost.bytes_per_level), "B"))


def _off_oracle(s):
    """An execute whose output disagrees with its oracle by 5.5e-5."""
    return Result().add("oracle_error", 5.5e-5, "1", "lower").add("elapsed", 1e-3, "s", "lower")


def _tech(name, model=None, execute=None, **kw):
    fids = {}
    if model:
        fids["model"] = model
    if execute:
        fids["execute"] = execute
    smoke = [ScenarioSpec("base", profile=PROFILE, fidelity=f, params={"workers": 8, "size": 64.0}) for f in fids]
    base = dict(name=name, title="kit slip fixture", category="communication",
                paper=Paper("A paper", ("A. Author",), "Venue", 2020),
                variants=[Variant("base", "the baseline", baseline=True)], fidelities=fids,
                parameters={"workers": Param(int, 8, minimum=1, maximum=4096, unit="workers"),
                            "size": Param(float, 64.0, minimum=0.0, maximum=1e6, unit="MB")},
                needs_workload=False, smoke=smoke)
    base.update(kw)
    return Technique(**base)


def _one_line_naming_the_case(message, tech, check):
    assert "\n" not in message, message
    assert message.startswith(f"{tech.name}: check {check!r} failed: case {tech.name} base "), message
    assert PROFILE in message and "size=64.0" in message and "workers=8" in message, message


def _as_of(monkeypatch, version):
    import suite._version

    monkeypatch.setattr(suite, "__version__", version)
    monkeypatch.setattr(suite._version, "__version__", version)  # where suite.deprecation reads it


# --------------------------------------------------------------------------- the network


def test_comm_bytes_over_all_levels_passes_alpha_beta_bound_inside_one_node():
    """8 ranks on one DGX: the ring moves 2 * 7/8 * 64 MB over NVLink. Divided by the outer NIC's
    25 GB/s (the old rule) that is 4.48 ms, more than the 0.38 ms NVLink takes; the bound over all
    levels (300 GB/s + 8 x 25 GB/s = 500 GB/s) is 0.224 ms."""
    tech = _tech("slip-nvlink", _good_model, capabilities=frozenset({"alpha-beta-bound"}))
    out = run_check(tech, "family:alpha-beta-bound", isolate=False)
    assert out.status == "passed", out.message
    case = resolve_case(tech, tech.smoke[0], context=session_context())
    assert comm_bandwidth_bound(case.scenario.profile) == pytest.approx(300e9 + 8 * 25e9)
    r = tech.evaluate(case.scenario)
    assert r["comm_bytes"] == pytest.approx(2 * 7 / 8 * 64e6)
    assert r["comm_time"] < r["comm_bytes"] / 25e9  # what the outer-level rule wrongly failed


def test_a_model_faster_than_the_bandwidth_bound_fails_naming_the_case():
    tech = _tech("slip-fast", _too_fast_model, capabilities=frozenset({"alpha-beta-bound"}))
    out = run_check(tech, "family:alpha-beta-bound", isolate=False)
    assert out.status == "failed"
    _one_line_naming_the_case(out.message, tech, "alpha-beta-bound")


def test_a_model_memoised_per_profile_object_is_not_called_deaf(monkeypatch):
    """Its first evaluation recorded the collectives; the check's own evaluation hits the memo and
    prices nothing: the check asks again on an equal profile, a new object (0 false failures)."""
    tech = _tech("slip-memo", _memo_model)
    _as_of(monkeypatch, "0.3.0")
    case = resolve_case(tech, tech.smoke[0], context=session_context())
    tech.evaluate(case.scenario)  # fills the memo for this profile object
    assert check_network_sensitivity(tech, case.scenario) == []
    out = run_check(tech, "network-sensitivity", isolate=False)
    assert out.status == "passed", out.message


def test_a_model_deaf_to_the_network_warns_now_and_fails_from_0_3(monkeypatch):
    tech = _tech("slip-deaf", _deaf_model)
    _as_of(monkeypatch, "0.2.0")
    out = run_check(tech, "network-sensitivity", isolate=False)
    assert out.status == "warned", out
    assert "no collective was priced through suite.perf.collective_time" in out.message
    assert "fails from 0.3.0" in out.message and "kit_opt_out" in out.message
    _as_of(monkeypatch, "0.3.0")
    out = run_check(tech, "network-sensitivity", isolate=False)
    assert out.status == "failed"
    _one_line_naming_the_case(out.message, tech, "network-sensitivity")
    # the good model passes it
    assert run_check(_tech("slip-ok", _good_model), "network-sensitivity", isolate=False).status == "passed"


def test_opt_out_needs_a_reason_and_shows_as_a_skip():
    tech = _tech("slip-deaf", _deaf_model, kit_opt_out={"network-sensitivity": "the paper's model has no network"})
    out = run_check(tech, "network-sensitivity", isolate=False)
    assert (out.status, out.message) == ("skipped", "opted out: the paper's model has no network")
    with pytest.raises(suite.errors.TechniqueError, match="kit_opt_out\\['units'\\]: expected the written reason"):
        _tech("slip-deaf", _deaf_model, kit_opt_out={"units": " "})
    with pytest.raises(suite.errors.TechniqueError, match="kit_opt_out: expected check names"):
        _tech("slip-deaf", _deaf_model, kit_opt_out={"imports": "no"})


# --------------------------------------------------------------------------- units


def test_a_size_declared_in_mb_read_as_bytes_is_caught(monkeypatch):
    tech = _tech("slip-units", _bytes_model)
    _as_of(monkeypatch, "0.3.0")
    out = run_check(tech, "units", isolate=False)
    assert out.status == "failed"
    _one_line_naming_the_case(out.message, tech, "units")
    assert "parameter 'size' is declared in MB but reaches collective_time('allreduce') as a byte count" in out.message
    assert run_check(_tech("slip-ok", _good_model), "units", isolate=False).status == "passed"


def test_a_value_in_another_unit_reaches_the_model_in_the_declared_unit():
    """64 MB written as 5.12e8 bit (its SI base units) is validated to 64.0: the same number."""
    tech = _tech("slip-ok", _good_model)
    assert tech.validate_params({"size": "512000000.0 bit"})["size"] == pytest.approx(64.0)
    assert tech.validate_params({"size": "0.064 GB"})["size"] == pytest.approx(64.0)


# --------------------------------------------------------------------------- the oracle


def test_an_execute_off_its_oracle_fails_the_kit_and_the_case():
    tech = _tech("slip-oracle", execute=_off_oracle, oracle_tolerance=1e-8)
    out = run_check(tech, "oracle-agreement", isolate=False)
    assert out.status == "failed"  # a declared tolerance fails at once, as the runner does
    _one_line_naming_the_case(out.message, tech, "oracle-agreement")
    assert "oracle_error = 5.5e-05 exceeds the declared oracle_tolerance 1e-08" in out.message
    case = resolve_case(tech, tech.smoke[0], context=session_context())
    got = evaluate_outcome(tech, case.scenario, case.key)
    assert got["status"] == "failed"
    assert got["error"] == ("BadMetric: slip-oracle: oracle_error = 5.5e-05 exceeds its declared oracle_tolerance 1e-08: "
                            "the execute result disagrees with its oracle")
    loose = _tech("slip-oracle", execute=_off_oracle, oracle_tolerance=1e-4)
    assert evaluate_outcome(loose, case.scenario, case.key)["status"] == "ok"


def test_an_undeclared_tolerance_warns_in_0_2_and_fails_from_0_3(monkeypatch):
    tech = _tech("slip-oracle", execute=_off_oracle)
    case = resolve_case(tech, tech.smoke[0], context=session_context())
    _as_of(monkeypatch, "0.2.0")
    assert not fails_now("oracle-agreement")
    assert run_check(tech, "oracle-agreement", isolate=False).status == "warned"
    assert evaluate_outcome(tech, case.scenario, case.key)["status"] == "ok"
    _as_of(monkeypatch, "0.3.0")
    out = run_check(tech, "oracle-agreement", isolate=False)
    assert out.status == "failed" and "the default tolerance (declare oracle_tolerance) 1e-08" in out.message
    assert evaluate_outcome(tech, case.scenario, case.key)["status"] == "failed"


def test_oracle_exact_names_the_case():
    tech = _tech("slip-oracle", execute=_off_oracle, capabilities=frozenset({"oracle-exact"}),
                 kit_opt_out={"oracle-agreement": "checked by oracle-exact"})
    out = run_check(tech, "family:oracle-exact", isolate=False)
    assert out.status == "failed"
    _one_line_naming_the_case(out.message, tech, "oracle-exact")


def test_check_technique_reports_a_warning_and_goes_on(monkeypatch):
    _as_of(monkeypatch, "0.2.0")
    tech = _tech("slip-deaf", _deaf_model, claims=[], properties=[])
    with pytest.warns(KitWarning, match="slip-deaf: check 'network-sensitivity' failed: case slip-deaf base"):
        rep = check_technique(tech, require_nulls=False)
    assert set(rep.warned) == {"network-sensitivity"}


# --------------------------------------------------------------------------- a misspelt hook


def test_a_misspelt_hook_is_named_not_reported_as_a_missing_profile(tmp_path, monkeypatch):
    pkg = tmp_path / "slip_misspelt_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent("""\
        from suite import hookimpl

        @hookimpl
        def suite_techniques():
            from slip_misspelt_pkg.technique import TECHNIQUE
            return [TECHNIQUE]

        @hookimpl
        def suite_hardware_profile():   # misspelt: suite_hardware_profiles
            return []
        """))
    (pkg / "model.py").write_text("from suite import Result\n\ndef evaluate(s):\n    return Result().add('t', 1.0, 's')\n")
    (pkg / "technique.py").write_text(textwrap.dedent("""\
        from suite import Paper, ScenarioSpec, Technique, Variant
        TECHNIQUE = Technique(name="slip-misspelt", title="t", category="communication",
                              paper=Paper("A paper", ("A. Author",), "Venue", 2020),
                              variants=[Variant("base", "the baseline", baseline=True)],
                              fidelities={"model": "slip_misspelt_pkg.model:evaluate"}, needs_workload=False,
                              smoke=[ScenarioSpec("base", profile="slip-misspelt-testbed")])
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import importlib

    from suite.registry import Registry
    from suite.testing import resolve as kit

    module = importlib.import_module("slip_misspelt_pkg")
    tech = importlib.import_module("slip_misspelt_pkg.technique").TECHNIQUE
    registry = Registry([], modules=[("slip-misspelt", module)], strict=False)

    class _Ctx:
        pass

    ctx = _Ctx()
    ctx.context = _Ctx()
    ctx.context.registry = registry
    monkeypatch.setattr(kit, "_resolver", lambda: ctx)
    out = run_check(tech, "metadata", isolate=False)
    assert out.status == "failed"
    assert "\n" not in out.message and "ProfileError" not in out.message
    assert out.message.startswith("slip-misspelt: check 'metadata' failed: plugin 'slip-misspelt' (<in-process>) "
                                  "is quarantined: bad hook implementation:"), out.message
    assert "suite_hardware_profile" in out.message
    for name in [m for m in sys.modules if m.startswith("slip_misspelt_pkg")]:
        monkeypatch.delitem(sys.modules, name)


# --------------------------------------------------------------------------- the generated tests


def test_a_generated_profile_missing_a_field_gives_one_line():
    """The scaffold's hand calculation reads each profile figure through ``_figure``: a profile
    without a device says so in one line (no raw TypeError)."""
    from suite.scaffold import scaffold_files

    text = scaffold_files("slip-demo")["tests/test_suite_slip_demo.py"]
    fn = next(n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef) and n.name == "_figure")
    ns = {"pytest": pytest}
    exec(compile(ast.Module([fn], []), "generated", "exec"), ns)

    class _P:
        name, path, device, network = "slip-demo-testbed", "/x/slip-demo-testbed.toml", None, ()

    with pytest.raises(pytest.fail.Exception) as info:
        ns["_figure"](_P(), "device.memory_bandwidth")
    msg = str(info.value)
    assert msg == ("profile 'slip-demo-testbed': device.memory_bandwidth is not set; the hand calculation needs it "
                   "(/x/slip-demo-testbed.toml)")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fails_now("units", "0.3.0") and not fails_now("units", "0.2.9")


def _mutating_model(s):
    """Writes into its own parameters past the freeze (the route the trial's hostile plugin used)."""
    dict.__setitem__(s.params, "workers", 999)
    return _good_model(s)


def test_a_model_that_changes_its_inputs_fails_the_kit_as_it_fails_in_suite_run():
    """The kit ran such a model without noticing while `suite run` failed every case with
    InputMutated: now runs-and-metrics fails naming the field, and the input is put back."""
    tech = _tech("slip-mutate", _mutating_model)
    out = run_check(tech, "runs-and-metrics", isolate=False)
    assert out.status == "failed"
    assert "changed its input scenario.params['workers']" in out.message and "InputMutated" in out.message
    case = resolve_case(tech, tech.smoke[0], context=session_context())
    assert case.scenario.params["workers"] == 8  # a fresh resolve is untouched
    assert run_check(_tech("slip-ok", _good_model), "runs-and-metrics", isolate=False).status == "passed"


# --------------------------------------------------------------------------- metric meanings


def test_a_meaning_that_the_results_contradict_warns_now_and_fails_from_0_4():
    """A hostile plugin declared `comm_time = {unit = "B", direction = "higher", ...}` while its model
    reports seconds, lower is better: `suite info` printed the declaration as what the results are."""
    from suite.declaration.vocabulary import MetricMeaning

    lying = {"comm_time": MetricMeaning("B", "higher", "bytes moved per step"),
             "comm_bytes": MetricMeaning("B", "none", "bytes over every level")}
    tech = _tech("slip-meaning", _good_model, metric_meanings=lying)
    out = run_check(tech, "meanings", isolate=False)
    assert out.status == "warned"
    assert out.message.startswith("slip-meaning: check 'meanings' failed: metric 'comm_time' (model fidelity): "
                                  "declared unit 'B', direction 'higher'; the results give 's', 'lower'")
    assert "a default check since 0.3.10" in out.message and "fails from 0.4.0" in out.message
    truthful = {"comm_time": MetricMeaning("s", "lower", "seconds of one all-reduce"), "comm_bytes": lying["comm_bytes"]}
    assert run_check(_tech("slip-meaning", _good_model, metric_meanings=truthful), "meanings",
                     isolate=False).status == "passed"
    assert "meanings" not in check_ids(_tech("slip-none", _good_model))  # declares none: nothing to check


def _unitless_negative(s):
    """hostile15 finding 4: a negative communication time labelled dimensionless."""
    return Result().add("comm_time", -1.0, "1", "lower")


def test_a_negative_time_labelled_unitless_fails_the_kit_and_the_run(tmp_path):
    """comm_time = -1 with unit "1" was stored ok and passed runs-and-metrics although the technique
    declares comm_time in s (the same -1 in "s" was refused): both now read the declared unit too."""
    from suite.declaration.vocabulary import MetricMeaning
    from suite.results import Store
    from suite.runner import ExecOptions, run_cases

    tech = _tech("slip-unitless", _unitless_negative,
                 metric_meanings={"comm_time": MetricMeaning("s", "lower", "seconds of one all-reduce")})
    with pytest.raises(AssertionError) as kit:
        check_technique(tech, properties=False)
    _one_line_naming_the_case(str(kit.value), tech, "metrics")
    assert str(kit.value).endswith("metric 'comm_time' is -1 1: expected >= 0 for a quantity in s (its declared "
                                   "unit; the result gives '1')")
    store = Store(tmp_path / "s.sqlite")
    try:
        case = resolve_case(tech, tech.smoke[0], context=session_context())
        run = run_cases([case], store, options=ExecOptions(jobs=1, isolate=False), context=session_context())
    finally:
        store.close()
    assert (run.ok, run.failed) == (0, 1)
    assert run.failures[0]["error"].startswith("BadMetric: slip-unitless: metric 'comm_time' is -1 1: expected >= 0")


def test_a_metric_without_a_meaning_warns_and_names_a_misspelt_entry():
    """A plugin author wrote `comm_tme = {...}` for `comm_time`: the check passed, and `suite info` listed
    `comm_tme` while the reported `comm_time` had no meaning (computron's 26 simulate metrics had none)."""
    from suite.declaration.vocabulary import MetricMeaning

    misspelt = {"comm_tme": MetricMeaning("s", "lower", "seconds of one all-reduce"),
                "comm_bytes": MetricMeaning("B", "none", "bytes over every level")}
    out = run_check(_tech("slip-meaning", _good_model, metric_meanings=misspelt), "meanings", isolate=False)
    assert out.status == "warned"
    assert out.message.startswith("slip-meaning: check 'meanings' failed: metric 'comm_time' (model fidelity): expected "
                                  "a meaning (its vocabulary's or [metric_meanings]'), got none; [metric_meanings] "
                                  "declares 'comm_tme': a typo?")
    only_bytes = {"comm_bytes": misspelt["comm_bytes"]}
    out = run_check(_tech("slip-meaning", _good_model, metric_meanings=only_bytes), "meanings", isolate=False)
    assert out.status == "warned" and out.message.split("(model fidelity): ")[1].startswith(
        "expected a meaning (its vocabulary's or [metric_meanings]'), got none [a default check")


def test_a_contradicted_meaning_fails_from_0_4(monkeypatch):
    from suite.declaration.vocabulary import MetricMeaning

    _as_of(monkeypatch, "0.4.0")
    tech = _tech("slip-meaning", _good_model, metric_meanings={"comm_time": MetricMeaning("B", "higher", "bytes")})
    assert run_check(tech, "meanings", isolate=False).status == "failed"


def test_a_meaning_in_another_unit_of_the_same_dimension_is_no_contradiction():
    """The check compared unit strings: a model reporting `comm_time` in s against a meaning in ms,
    or bytes in B against a meaning in byte, was a contradiction (the results carry their unit and
    are converted where shown). Units are compared by dimension; a different one names both."""
    from suite.declaration.vocabulary import MetricMeaning

    same = {"comm_time": MetricMeaning("ms", "lower", "milliseconds of one all-reduce"),
            "comm_bytes": MetricMeaning("byte", "none", "bytes over every level")}
    assert run_check(_tech("slip-units", _good_model, metric_meanings=same), "meanings", isolate=False).status == "passed"
    rate = {"comm_time": MetricMeaning("gigabyte / second", "lower", "a rate, where the model gives a time")}
    out = run_check(_tech("slip-units", _good_model, metric_meanings=rate), "meanings", isolate=False)
    assert out.status == "warned"
    assert ("metric 'comm_time' (model fidelity): declared unit 'gigabyte / second', direction 'lower'; the results "
            "give 's', 'lower' ('gigabyte / second' is [information] / [time], 's' is [time]: different dimensions)"
            ) in out.message
    typo = {"comm_time": MetricMeaning("img/s", "lower", "images a second")}
    out = run_check(_tech("slip-units", _good_model, metric_meanings=typo), "meanings", isolate=False)
    assert "the results give 's', 'lower' (units that cannot be compared: unit 'img/s': not a unit of" in out.message


def test_a_units_dimension_is_cached_with_the_parsed_quantities(monkeypatch):
    """`GB/s` against `gigabyte / second` (one unit, two spellings): [information] / [time] both, read
    from the cache of parsed quantities once known (the kit builds no pint registry for a unit an
    earlier process has seen)."""
    from suite.hardware import units

    assert units.dimension("GB/s") == units.dimension("gigabyte / second") == "[information] / [time]"
    assert units._cache()["d|GB/s"] == "[information] / [time]"
    monkeypatch.setattr(units, "parse_unit", lambda text: pytest.fail(f"{text} parsed again"))
    assert units.dimension("GB/s") == "[information] / [time]"
