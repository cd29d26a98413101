"""The claim contract's acceptances and nulls (hand-computed bands)."""

import pytest

from suite import Gain, Null, Ordered, ScenarioSpec
from suite.errors import TechniqueError


def test_gain_band_is_on_the_gain():
    g = Gain(15.5, rel=0.2)  # gain 14.5 +- 2.9 -> [12.6, 18.4]
    assert g.band() == pytest.approx((12.6, 18.4))
    assert g.check(12.61) and g.check(18.39)
    assert not g.check(12.5) and not g.check(18.5)
    small = Gain(1.229, rel=0.2)  # gain 0.229 +- 0.0458 -> [1.1832, 1.2748]: "no gain" is outside
    assert not small.check(1.0) and not small.check(1.012)
    assert small.check(1.19)


def test_gain_of_one_is_refused():
    with pytest.raises(TechniqueError):
        Gain(1.0)


def test_ordered_needs_a_margin_and_ties_fail():
    o = Ordered(("a", "b", "c"), margin=0.02)
    assert o.check({"a": 1.0, "b": 1.03, "c": 1.1})
    assert not o.check({"a": 1.0, "b": 1.0, "c": 1.1})  # tie
    assert not o.check({"a": 1.0, "b": 1.01, "c": 1.1})  # inside the 2% margin
    hi = Ordered(("x", "y"), lower=False)
    assert hi.check({"x": 2.0, "y": 1.0}) and not hi.check({"x": 1.0, "y": 1.0})


def test_null_substitutes_variants_and_needs_one_kind():
    n = Null("plain WFBP", variants={"poseidon": "wfbp"})
    specs = {"fast": ScenarioSpec("poseidon", "p", "w"), "base": ScenarioSpec("ps", "p", "w")}
    out = n.substitute(specs)
    assert out["fast"].variant == "wfbp" and out["base"].variant == "ps"
    with pytest.raises(TechniqueError):
        Null("both", variants={"a": "b"}, value=1.0)
    with pytest.raises(TechniqueError):
        Null("neither")


def test_a_claim_naming_a_variant_or_fidelity_the_technique_lacks_warns_when_declared():
    """Such a claim loaded "ok" and could only end as an error row of `suite reproduce` (a hostile
    tryout; plugin-authors.md says declaration mistakes are found when the plugin loads). It warns
    now, naming the claim, what the technique has and what it got; refused from 0.4.0."""
    import warnings

    from suite import Approx, Claim, Paper, Result, Technique, Variant

    def declare(spec, nulls=()):
        return Technique(name="t", title="t", category="communication", paper=Paper(title="p"),
                         variants=[Variant("a", "a", baseline=True), Variant("b", "b")],
                         fidelities={"model": lambda s: Result()}, needs_profile=False, needs_workload=False,
                         claims=[Claim("c1", "s", "Table 1", False, Approx(1.0), scenario=spec, metric="m",
                                       nulls=nulls, null_reason="" if nulls else "none")])

    cases = [(ScenarioSpec("z", None, None), "expected a variant of the technique (a, b), got 'z'"),
             (ScenarioSpec("a", None, None, fidelity="execute"), "expected a fidelity of the technique (model), got 'execute'")]
    for spec, said in cases:
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            declare(spec)
        assert [str(w.message) for w in got] == [f"technique 't': claim 'c1': {said}; its cases cannot run: this is "
                                                 "refused when the plugin loads from dlsys-suite 0.4.0"]
        assert got[0].category is DeprecationWarning
    with warnings.catch_warnings(record=True) as got:  # a variant null's substitute too
        warnings.simplefilter("always")
        declare(ScenarioSpec("b", None, None), nulls=(Null("baseline", variants={"b": "q"}),))
    assert [str(w.message)[:61] for w in got] == ["technique 't': claim 'c1': expected a variant of the techniqu"]
    with warnings.catch_warnings():  # a claim naming what there is: silent
        warnings.simplefilter("error")
        declare(ScenarioSpec("b", None, None), nulls=(Null("baseline", variants={"b": "a"}),))


def test_a_band_over_the_whole_real_line_is_a_claim_defect_in_any_domain():
    """`Between(-inf, inf)` on a dimensionless metric (no domain) was judged "not discriminating" (a
    hostile tryout): it cannot fail whatever the claim's value, so it is a claim defect. A band open on
    one side only stays a band."""
    import math

    from suite import AtLeast, AtMost, Between

    assert Between(-math.inf, math.inf).unreachable(None) == (
        "the band [-inf, inf] covers every value the claim can take [-inf, inf]: it cannot fail")
    assert AtMost(1.0).unreachable(None) == "" and AtLeast(0.0).unreachable(None) == ""
    assert Between(0.0, 1.0).unreachable(None) == ""


def test_an_acceptance_that_judges_nothing_warns_when_declared():
    """tryout11 #3, #5: an empty or NaN band, a negative tolerance, an ordering of one label or with a
    negative margin loaded silently; their verdict is now 'claim defect', and declaring one warns
    (refused from 0.4.0, the deprecation path of a tightened contract)."""
    import warnings

    from suite import Approx, AtLeast, Between, Claim, Paper, Result, Technique, Variant

    def declare(expect):
        return Technique(name="t", title="t", category="communication", paper=Paper(title="p"),
                         variants=[Variant("a", "a", baseline=True), Variant("b", "b")],
                         fidelities={"model": lambda s: Result()}, needs_profile=False, needs_workload=False,
                         claims=[Claim("c1", "s", "Table 1", False, expect, scenario=ScenarioSpec("a", None, None),
                                       metric="m", null_reason="none")])

    bad = {Approx(1.0, rel=-0.05): "the tolerance rel=-0.05 is negative or NaN",
           Between(1.05, 0.95): "the band [1.05, 0.95] is empty",
           AtLeast(float("nan")): "the band [nan, inf] is not a range of numbers (NaN)",
           Gain(3.0, rel=-0.2): "the tolerance rel=-0.2 is negative or NaN",
           Ordered(("ring",)): "an ordering of 1 label(s) ('ring',) compares no pair: it cannot fail",
           Ordered(("a", "b"), margin=-0.9): "the margin -0.9 is negative: a tie passes it"}
    for expect, said in bad.items():
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            declare(expect)
        assert len(got) == 1 and got[0].category is DeprecationWarning
        msg = str(got[0].message)
        assert msg.startswith(f"technique 't': claim 'c1': expect: expected a band that can be passed and failed, "
                              f"got {expect!r}: {said}"), msg
        assert msg.endswith("its verdict is 'claim defect': this is refused when the plugin loads from dlsys-suite 0.4.0")
    with warnings.catch_warnings():  # well-formed bands (one open on both sides is judged by its domain): silent
        warnings.simplefilter("error")
        for ok in (Approx(1.0, rel=0.0), Gain(3.0, rel=1.5), Between(-float("inf"), float("inf")),
                   Ordered(("a", "b"), margin=0.0)):
            declare(ok)
