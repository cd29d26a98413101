"""The contract types: parameter validation, claims and acceptances, technique checks."""

from __future__ import annotations

import pytest

from suite import (Approx, AtLeast, AtMost, Between, Claim, Exact, Paper, Param, Result, ScenarioSpec,
                   Technique, Variant)
from suite.errors import ParameterError, TechniqueError


def test_param_validation_messages():
    p = Param(int, default=16, minimum=1, maximum=1024, unit="nodes")
    assert p.validate("nodes", "8") == 8
    with pytest.raises(ParameterError, match=r"parameter 'nodes': expected >= 1 nodes, got 0"):
        p.validate("nodes", 0)
    with pytest.raises(ParameterError, match=r"expected int, got '2.5'"):
        p.validate("nodes", "2.5")
    with pytest.raises(ParameterError, match="expected int, got True"):
        p.validate("nodes", True)
    f = Param(float, default=0.5, minimum=0, maximum=1)
    assert f.validate("eff", "0.25") == 0.25
    with pytest.raises(ParameterError, match="expected float, got 'nan'"):
        f.validate("eff", "nan")
    c = Param(str, default="fp32", choices=("fp32", "fp16"))
    with pytest.raises(ParameterError, match=r"expected one of \['fp32', 'fp16'\], got 'int8'"):
        c.validate("dtype", "int8")
    b = Param(bool, default=False)
    assert b.validate("x", "yes") is True
    assert Param(int, default=None, optional=True).validate("servers", None) is None


def test_a_bound_error_shows_a_quantity_as_given_and_converted():
    """``--param extra_latency="5 Ms"`` said "got 5000000000000.0": not what the user typed, and in
    no unit; 5 Ms = 5e6 s = 5e12 us."""
    p = Param(float, default=1.0, minimum=0, maximum=1e6, unit="us")
    with pytest.raises(ParameterError, match=r"^t: parameter 'lat': expected <= 1000000.0 us, got '5 Ms' \(= 5e\+12 us\)$"):
        p.validate("lat", "5 Ms", technique="t")
    with pytest.raises(ParameterError, match=r"expected >= 0 us, got '-3 ms' \(= -3000 us\)$"):
        p.validate("lat", "-3 ms", technique="t")
    with pytest.raises(ParameterError, match=r"expected <= 1000000.0 us, got 5000000000000.0$"):
        p.validate("lat", 5e12, technique="t")  # a plain number is in the parameter's unit already


def test_acceptances():
    assert Approx(15.5, rel=0.2).check(13.0) and not Approx(15.5, rel=0.2).check(12.0)
    assert Approx(15.5).ratio(31.0) == pytest.approx(2.0)
    assert AtLeast(2).check(2) and not AtLeast(2).check(1.99)
    assert AtMost(0.11).check(0.05) and not AtMost(0.11).check(0.2)
    assert Between(2, 3).check(2.5) and not Between(2, 3).check(3.1)
    assert Exact(("a", "b")).check(["a", "b"]) and not Exact(("a", "b")).check(["b", "a"])
    assert Exact(("a", "b")).describe() == "(a, b)"
    assert Exact(("a", "b")).ratio(("a", "b")) is None
    assert Exact(1920).ratio(1920) == 1.0


def _tech(**kw):
    base = dict(name="demo", title="Demo", category="communication", paper=Paper("P", ("A", "B"), "X", 2020),
                variants=[Variant("base", "b", baseline=True), Variant("new", "n")],
                fidelities={"model": lambda s: Result().add("t", float(s.params["n"]), "s", "lower")},
                parameters={"n": Param(int, 2, minimum=1)}, needs_profile=False, needs_workload=False)
    base.update(kw)
    return Technique(**base)


def test_technique_declaration_checks():
    t = _tech()
    assert t.variant_names == ["base", "new"] and [v.name for v in t.baselines] == ["base"]
    assert t.validate_params({}) == {"n": 2}
    with pytest.raises(ParameterError, match="unknown parameter 'm'; expected one of \\['n'\\]"):
        t.validate_params({"m": 1})
    with pytest.raises(TechniqueError, match="no variant is marked baseline"):
        _tech(variants=[Variant("a", "a")])
    with pytest.raises(TechniqueError, match="category must be one of"):
        _tech(category="misc")
    with pytest.raises(TechniqueError, match="lower-case"):
        _tech(name="Bad Name")
    with pytest.raises(TechniqueError, match="fidelities"):
        _tech(fidelities={"guess": lambda s: Result()})
    with pytest.raises(ParameterError, match="unknown variant 'zz'"):
        t.get_variant("zz")


def test_claim_value_single_and_derived():
    c = Claim("c1", "x", "abstract", True, Approx(2.0), scenario=ScenarioSpec("base"), metric="t")
    r = Result().add("t", 2.1)
    assert c.value({"main": r}) == 2.1 and c.expect.check(2.1)

    def ratio(res):
        return res["a"]["t"] / res["b"]["t"]

    d = Claim("c2", "y", "Table 1", False, Approx(1.5),
              cases={"a": ScenarioSpec("new"), "b": ScenarioSpec("base")}, derive=ratio)
    assert d.value({"a": Result().add("t", 3.0), "b": Result().add("t", 2.0)}) == 1.5
    with pytest.raises(TechniqueError):
        Claim("c3", "z", "abstract", True, Approx(1.0))
    with pytest.raises(TechniqueError):
        Claim("c4", "z", "abstract", True, Approx(1.0), scenario=ScenarioSpec("base"))


def test_evaluate_and_resolve_case_key_changes_with_params():
    from session_context import session_context
    from suite.runner.case import resolve_case

    t, ctx = _tech(), session_context()
    a = resolve_case(t, ScenarioSpec("base", params={"n": 3}), context=ctx)
    b = resolve_case(t, ScenarioSpec("base", params={"n": 4}), context=ctx)
    a2 = resolve_case(t, ScenarioSpec("base", params={"n": 3}), context=ctx)
    assert a.key == a2.key != b.key
    assert t.evaluate(a.scenario)["t"] == 3.0
    assert resolve_case(t, ScenarioSpec("new", params={"n": 3}), context=ctx).key != a.key
    with pytest.raises(ParameterError, match="fidelity 'execute' not supported"):
        resolve_case(t, ScenarioSpec("base", fidelity="execute"), context=ctx)


def test_metric_names_and_units_that_would_break_tables_are_refused():
    """A metric named like a case column would overwrite it in `results show` / CSV (a hostile
    plugin's 'status' metric showed status=7.0); commas, quotes and brackets break the CSV header
    ``NAME [UNIT]``."""
    import pytest

    from suite.errors import TechniqueError
    from suite.technique import Result

    r = Result().add("latency_p90_m0", 1.0, "s").add("speedup@8", 2.0).add("t-x", 3.0, "samples/s")
    assert set(r.metrics) == {"latency_p90_m0", "speedup@8", "t-x"}
    for bad in ("status", "key", "seed", "param.nodes", "a,b", "x y", "q'", "[x]", "1st", ""):
        with pytest.raises(TechniqueError, match="metric"):
            Result().add(bad, 1.0)
    with pytest.raises(TechniqueError, match="unit"):
        Result().add("x", 1.0, "s]")


def test_fidelity_reference_is_imported_on_first_use(tmp_path, monkeypatch):
    # A declaration that names its evaluate function as "module:function" imports nothing until
    # that fidelity runs; the reference's module is known without importing it.
    import sys

    from suite import Scenario

    (tmp_path / "lazy_demo_impl.py").write_text(
        "from suite import Result\n"
        "def evaluate(s):\n"
        "    return Result().add('t', 2.0 * s.params['n'], 's', 'lower')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    t = _tech(fidelities={"model": "lazy_demo_impl:evaluate"})
    assert "lazy_demo_impl" not in sys.modules
    assert t.implementation_modules == ["lazy_demo_impl"] and t.package == "lazy_demo_impl"
    sc = Scenario(technique="demo", variant="new", profile=None, workload=None, params={"n": 3}, seed=0,
                  fidelity="model")
    assert t.evaluate(sc).metrics["t"].value == 6.0  # 2 x n, n = 3
    assert callable(t.fidelities["model"]) and "lazy_demo_impl" in sys.modules


def test_fidelity_reference_errors_name_the_technique_and_reference():
    from suite import Scenario

    with pytest.raises(TechniqueError, match=r"fidelity 'model': expected a callable or a reference "
                                             r"'package\.module:function', got 'no colon'"):
        _tech(fidelities={"model": "no colon"})
    with pytest.raises(TechniqueError, match=r"fidelity 'model': expected a callable .* got int"):
        _tech(fidelities={"model": 3})
    t = _tech(fidelities={"model": "no_such_module_xyz.impl:evaluate"})
    sc = Scenario(technique="demo", variant="new", profile=None, workload=None, params={"n": 3}, seed=0,
                  fidelity="model")
    with pytest.raises(TechniqueError, match=r"technique 'demo': fidelity 'model': cannot import "
                                             r"'no_such_module_xyz\.impl:evaluate': ModuleNotFoundError"):
        t.evaluate(sc)
    t = _tech(fidelities={"model": "math:pi"})
    with pytest.raises(TechniqueError, match=r"'math:pi' is float, expected a callable"):
        t.evaluate(sc)


def test_a_resolved_reference_keeps_its_module_so_case_keys_do_not_change(tmp_path, monkeypatch):
    # "pkg:evaluate" may name a functools.partial or a function re-exported from another package:
    # once imported, implementation_modules (and so the code fingerprint in every case key) must
    # still say the reference's module, or a case resolved after the first evaluation has another key
    (tmp_path / "lazy_partial_impl.py").write_text(
        "import functools\nfrom suite import Result\n"
        "def _ev(s, k):\n    return Result().add('t', k * s.params['n'], 's', 'lower')\n"
        "evaluate = functools.partial(_ev, k=2.0)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    t = _tech(fidelities={"model": "lazy_partial_impl:evaluate"})
    before = (t.implementation_modules, t.package)
    t.fidelity("model")
    assert callable(t.fidelities["model"])
    assert (t.implementation_modules, t.package) == before == (["lazy_partial_impl"], "lazy_partial_impl")
