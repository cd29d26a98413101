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
