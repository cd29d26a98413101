"""Verdicts that can fail (issue 18): judge() on hand-made results, and every installed claim.

The unit tests feed :func:`suite.runner.reproduce.judge` stored results directly (a dict-backed
store), so each verdict follows from numbers written here.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import pytest

from suite import Approx, AtLeast, AtMost, Between, Claim, Gain, Null, Ordered, Result, ScenarioSpec
from suite.runner.reproduce import (CLAIM_DEFECT, ERROR, INCONCLUSIVE, NOT_DISCRIMINATING, NOT_REPRODUCED,
                                    REPRODUCED, REPRODUCED_NO_NULL, bootstrap_interval, format_verdict, judge,
                                    new_outcome)
from suite.technique import Assumption


@dataclass
class _Case:
    key: str
    fidelity: str = "model"


class _Store:
    def __init__(self, results):
        self.results = results

    def result(self, key):
        return self.results[key]


def _res(t, samples=None):
    return Result().add("t", t, "s", "lower", samples=samples)


def _judge(claim, results, nulls=(), fidelity="model", status=None):
    """results: case key -> Result; the claim's labels are the keys of its specs, its case keys
    'label', and a variant null's case keys 'null:label'."""
    cases = {lab: _Case(lab, fidelity) for lab in claim.specs()}
    ncases = []
    for n in nulls:
        ncases.append((n, None, "") if n.variants is None else
                      (n, {lab: _Case(f"null:{lab}", fidelity) for lab in claim.specs()}, ""))
    status = status or {k: ("ok", None) for k in results}
    o = new_outcome(type("T", (), {"name": "t"})(), claim)
    judge(claim, o, cases, status, _Store(results), ncases)
    return o


def _ratio_claim(expect, nulls=(), measured=False):
    specs = {"base": ScenarioSpec("base"), "fast": ScenarioSpec("fast")}
    return Claim("c", "fast is x times base", "Table 1", True, expect, cases=specs,
                 derive=lambda r: r["base"]["t"] / r["fast"]["t"], nulls=tuple(nulls), measured=measured)


NULLS = (Null("no gain", value=1.0), Null("other for fast", variants={"fast": "other"}))
#: the baseline in the technique's place: null:fast runs base's scenario, so the ratio is 1 by construction
SELF = (Null("no gain", value=1.0), Null("base for fast", variants={"fast": "base"}))


def test_reproduced_needs_every_null_outside():
    c = _ratio_claim(Gain(2.0), NULLS)  # band [1.8, 2.2]
    # ours 4 / 2 = 2.0 inside; null: another variant in fast's place 4 / 3 = 1.33 outside; no gain 1.0 outside
    o = _judge(c, {"base": _res(4.0), "fast": _res(2.0), "null:base": _res(4.0), "null:fast": _res(3.0)},
               c.nulls)
    assert o.ours == 2.0 and [n.inside for n in o.nulls] == [False, False] and o.verdict == REPRODUCED


def test_the_baseline_against_itself_is_not_a_null():
    # the variant null puts base in fast's place: 4 / 4 = 1.0 exactly, outside every gain band by construction
    c = _ratio_claim(Gain(2.0), SELF)
    o = _judge(c, {"base": _res(4.0), "fast": _res(2.0), "null:base": _res(4.0), "null:fast": _res(4.0)},
               c.nulls)
    assert [n.value for n in o.nulls] == [1.0, 1.0] and o.verdict == REPRODUCED_NO_NULL


def test_the_baseline_against_itself_is_no_evidence_under_any_band():
    """The rule is about the null, not the band: under Between / Approx the baseline in the
    technique's place gives exactly 1.0 too, outside [1.12, 1.4] whatever the model computes, so it
    could never have landed (dhelix's 'megatron (no co-execution)' on its 12-40% claims)."""
    c = _ratio_claim(Between(1.12, 1.4), SELF[1:])
    o = _judge(c, {"base": _res(1.225), "fast": _res(1.0), "null:base": _res(1.225), "null:fast": _res(1.225)},
               c.nulls)
    assert o.nulls[0].value == 1.0 and o.nulls[0].inside is False and o.verdict == REPRODUCED_NO_NULL
    # another variant in fast's place could have landed anywhere: evidence
    c = _ratio_claim(Between(1.12, 1.4), NULLS[1:])
    o = _judge(c, {"base": _res(1.225), "fast": _res(1.0), "null:base": _res(1.225), "null:fast": _res(1.2)},
               c.nulls)
    assert o.nulls[0].inside is False and o.verdict == REPRODUCED


def test_compares_with_itself_needs_every_changed_case_on_a_scenario_the_claim_runs():
    specs = {"base": ScenarioSpec("base"), "fast": ScenarioSpec("fast")}
    assert Null("b", variants={"fast": "base"}).compares_with_itself(specs)
    assert not Null("o", variants={"fast": "other"}).compares_with_itself(specs)
    # kernel-kmeans' weak scaling: 1.5D at 4 and at 256 GPUs; 1D in 1.5D's place runs new scenarios
    scaling = {"small": ScenarioSpec("1.5d", params={"gpus": 4}), "big": ScenarioSpec("1.5d", params={"gpus": 256}),
               "one": ScenarioSpec("1d", params={"gpus": 4})}
    assert not Null("1d", variants={"1.5d": "1d"}).compares_with_itself(scaling)
    assert not Null("n", value=1.0).compares_with_itself(specs)
    # pfeddst against the best of three baselines: fedavg in its place still meets local-only and random
    best = {v: ScenarioSpec(v) for v in ("pfeddst", "local-only", "fedavg", "random-peers")}
    assert not Null("f", variants={"pfeddst": "fedavg"}).compares_with_itself(best)


def test_a_null_inside_makes_it_not_discriminating():
    c = _ratio_claim(Gain(2.0), NULLS)
    # the null's cases (another baseline) also give 4 / 2.1 = 1.905, inside [1.8, 2.2]
    o = _judge(c, {"base": _res(4.0), "fast": _res(2.0), "null:base": _res(4.0), "null:fast": _res(2.1)},
               c.nulls)
    assert o.nulls[1].value == pytest.approx(4.0 / 2.1)
    assert o.verdict == NOT_DISCRIMINATING and o.reason == "null inside the band: other for fast"


def test_outside_is_not_reproduced_whatever_the_nulls():
    c = _ratio_claim(Gain(2.0), (Null("ideal", value=2.0),))  # a null inside does not rescue ours
    o = _judge(c, {"base": _res(3.0), "fast": _res(2.0)}, c.nulls)  # 1.5 < 1.8
    assert o.verdict == NOT_REPRODUCED and o.nulls[0].inside


def test_a_failed_null_case_is_an_error_not_a_reproduction():
    c = _ratio_claim(Gain(2.0), NULLS)
    res = {"base": _res(4.0), "fast": _res(2.0), "null:base": _res(4.0)}
    status = {**{k: ("ok", None) for k in res}, "null:fast": ("failed", "boom")}
    o = _judge(c, res, c.nulls, status=status)
    assert o.verdict == ERROR and o.reason == "null 'other for fast': null case 'fast' failed: boom"


def _np_ratio(r):
    import numpy as np

    with np.errstate(all="ignore"):  # 0 / 0 in numpy is nan, with no exception
        return float(np.float64(r["base"]["t"]) / np.float64(r["fast"]["t"]))


def test_a_nan_null_is_no_evidence_but_an_error():
    # hostile tryout F2: the null's cases both report 0 s, its ratio is 0/0 = nan; ours 2/2 = 1.0
    # is inside [0.95, 1.05]. A nan could land in no band: it is a null that could not be
    # evaluated (error), not a null "outside" (which made the claim reproduced)
    specs = {"base": ScenarioSpec("base"), "fast": ScenarioSpec("fast")}
    c = Claim("c", "fast is as fast as base", "Table 1", True, Approx(1.0, rel=0.05), cases=specs,
              derive=_np_ratio, nulls=(Null("zero baseline", variants={"fast": "zero"}),))
    o = _judge(c, {"base": _res(2.0), "fast": _res(2.0), "null:base": _res(0.0), "null:fast": _res(0.0)},
               c.nulls)
    assert o.ours == 1.0 and o.nulls[0].inside is None
    assert o.verdict == ERROR
    assert o.reason == ("null 'zero baseline': null value could not be derived: the value is nan, "
                        "not a finite number (it could land in no band)")


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_a_constant_null_that_is_not_finite_is_an_error(bad):
    c = _ratio_claim(Approx(2.0, rel=0.1), (Null("odd", value=bad),))
    o = _judge(c, {"base": _res(4.0), "fast": _res(2.0)}, c.nulls)  # ours 2.0, inside [1.8, 2.2]
    assert o.verdict == ERROR and o.reason.startswith(f"null 'odd': null value could not be derived: the value is {bad}")
    # ours outside: not reproduced, whatever the null
    assert _judge(c, {"base": _res(3.0), "fast": _res(2.0)}, c.nulls).verdict == NOT_REPRODUCED


def test_our_value_not_finite_is_an_error_not_a_verdict():
    # ours 0 / 0 = nan was "not reproduced"; ours 1 / 0 = inf passed every AtLeast band
    specs = {"base": ScenarioSpec("base"), "fast": ScenarioSpec("fast")}
    c = Claim("c", "as fast", "Table 1", True, Approx(1.0, rel=0.05), cases=specs, derive=_np_ratio,
              nulls=(Null("ideal", value=3.0),))
    o = _judge(c, {"base": _res(0.0), "fast": _res(0.0)}, c.nulls)
    assert o.verdict == ERROR and o.ours is None
    assert o.reason == "value could not be derived: the value is nan, not a finite number (it could land in no band)"
    c = Claim("c", "fast is at least 2x base", "Table 1", True, AtLeast(2.0), cases=specs, derive=_np_ratio,
              nulls=(Null("ideal", value=1.5),))
    o = _judge(c, {"base": _res(1.0), "fast": _res(0.0)}, c.nulls)
    assert o.verdict == ERROR and o.reason.startswith("value could not be derived: the value is inf,")
    # an ordering with one entry nan is no ordering either
    c = Claim("o", "a faster than b", "abstract", True, Ordered(("a", "b"), margin=0.02),
              cases={"a": ScenarioSpec("a"), "b": ScenarioSpec("b")},
              derive=lambda r: {"a": r["a"]["t"], "b": float("nan")}, nulls=(Null("b for a", variants={"a": "b"}),))
    o = _judge(c, {"a": _res(1.0), "b": _res(1.03)}, c.nulls)
    assert o.verdict == ERROR and o.reason.startswith("value could not be derived: the value is a=1, b=nan,")


def test_a_numpy_array_holding_nan_is_not_finite():
    # a second reader: math.isfinite raised on an array, which was read as finite
    import numpy as np

    from suite.runner.verdicts import not_finite

    assert not_finite(np.array([float("nan"), 1.0])) and not_finite({"a": np.float64("inf")})
    assert not not_finite(np.array([1.0, 2.0])) and not not_finite(np.int64(3))


def test_ordering_ties_fail_and_the_margin_counts():
    c = Claim("o", "a faster than b", "abstract", True, Ordered(("a", "b"), margin=0.02),
              cases={"a": ScenarioSpec("a"), "b": ScenarioSpec("b")},
              derive=lambda r: {k: v["t"] for k, v in r.items()},
              nulls=(Null("c for a", variants={"a": "c"}),))
    tie = _judge(c, {"a": _res(1.0), "b": _res(1.0), "null:a": _res(1.0), "null:b": _res(1.0)}, c.nulls)
    assert tie.verdict == NOT_REPRODUCED
    ok = _judge(c, {"a": _res(1.0), "b": _res(1.03), "null:a": _res(1.02), "null:b": _res(1.03)}, c.nulls)
    assert ok.verdict == REPRODUCED and ok.nulls[0].inside is False  # 1.02 * 1.02 = 1.0404 > 1.03
    # the null gives a tie (b against itself): it could never pass, so it is not evidence
    tie_null = _judge(c, {"a": _res(1.0), "b": _res(1.03), "null:a": _res(1.03), "null:b": _res(1.03)}, c.nulls)
    assert tie_null.verdict == REPRODUCED_NO_NULL


def test_no_null_and_no_reason_is_reproduced_no_null():
    c = Claim("m", "under 2 s", "Sec. 4", True, AtMost(2.0), scenario=ScenarioSpec("fast"), metric="t")
    o = _judge(c, {"main": _res(1.0)})
    assert o.verdict == REPRODUCED_NO_NULL and o.reason == "none declared: no null prediction"


def test_a_written_null_reason_is_not_a_null():
    c = Claim("m", "under 2 s", "Sec. 4", True, AtMost(2.0), scenario=ScenarioSpec("fast"), metric="t",
              null_reason="a time has no trivial alternative")
    o = _judge(c, {"main": _res(1.0)})
    assert o.verdict == REPRODUCED_NO_NULL and o.reason == "none declared: a time has no trivial alternative"


def test_a_null_the_band_excludes_by_construction_is_not_evidence():
    # no gain = 1.0 lies outside every gain band with rel < 1: it could never have landed in [1.8, 2.2]
    c = _ratio_claim(Gain(2.0), (Null("no gain", value=1.0),))
    o = _judge(c, {"base": _res(4.0), "fast": _res(2.0)}, c.nulls)
    assert o.nulls[0].inside is False and o.verdict == REPRODUCED_NO_NULL
    assert o.reason == "every null is excluded by the band's construction: no gain"
    # ideal scaling 3.0 could have been inside a band drawn round 3: a value null that is evidence
    c = _ratio_claim(Gain(2.0), (Null("ideal", value=3.0),))
    assert _judge(c, {"base": _res(4.0), "fast": _res(2.0)}, c.nulls).verdict == REPRODUCED


def test_a_tie_null_of_an_ordering_is_not_evidence():
    c = Claim("o", "a faster than b", "abstract", True, Ordered(("a", "b"), margin=0.02),
              cases={"a": ScenarioSpec("a"), "b": ScenarioSpec("b")},
              derive=lambda r: {k: v["t"] for k, v in r.items()},
              nulls=(Null("tie", value={"a": 1.0, "b": 1.0}),))
    o = _judge(c, {"a": _res(1.0), "b": _res(1.03)}, c.nulls)
    assert o.verdict == REPRODUCED_NO_NULL


def test_an_accuracy_band_above_one_is_a_claim_defect():
    # "98.6% +- 2%": a band [0.966, 1.006] is fine; a band reaching above 1 only at its top is fine too
    acc = Claim("a", "accuracy 0.99", "Table 2", True, Approx(1.2, rel=0.1), scenario=ScenarioSpec("fast"),
                metric="t", domain=(0.0, 1.0), nulls=(Null("chance", value=0.1),))
    o = _judge(acc, {"main": _res(0.9)}, acc.nulls)  # band [1.08, 1.32] lies above every accuracy
    assert o.verdict == CLAIM_DEFECT and "cannot pass" in o.reason and o.ours == 0.9


def test_a_band_below_zero_for_a_time_is_a_claim_defect_without_a_declared_domain():
    # a time cannot be negative (the unit's dimension, the rule metrics are stored by): [-3, -1] s cannot pass
    c = Claim("n", "comm time -2 s", "Table 1", True, Between(-3.0, -1.0), scenario=ScenarioSpec("fast"),
              metric="t", nulls=(Null("chance", value=0.1),))
    o = _judge(c, {"main": _res(1.0)}, c.nulls)
    assert o.verdict == CLAIM_DEFECT and "[-3, -1] lies outside the values the claim can take [0, inf]" in o.reason
    # a dimensionless value may be negative: the same band is judged as usual
    d = Claim("n", "a ratio of -2", "Table 1", True, Between(-3.0, -1.0), scenario=ScenarioSpec("fast"),
              metric="r", nulls=(Null("chance", value=0.1),))
    o = _judge(d, {"main": Result().add("r", 1.0, "1", "none")}, d.nulls)
    assert o.verdict == NOT_REPRODUCED


def test_a_band_covering_the_domain_cannot_fail():
    c = Claim("a", "accuracy at most 1", "Table 2", True, AtMost(1.0), scenario=ScenarioSpec("fast"),
              metric="t", domain=(0.0, 1.0), nulls=(Null("chance", value=0.1),))
    o = _judge(c, {"main": _res(0.9)}, c.nulls)
    assert o.verdict == CLAIM_DEFECT and "cannot fail" in o.reason


def test_a_margin_over_a_baseline_near_the_ceiling_is_a_claim_defect():
    # pfeddst's case: the best baseline at 0.9845, a 2% relative margin needs more than 1.004
    c = Claim("o", "ours more accurate than local", "abstract", True, Ordered(("ours", "local"), 0.02, lower=False),
              cases={"ours": ScenarioSpec("a"), "local": ScenarioSpec("b")},
              derive=lambda r: {k: v["t"] for k, v in r.items()}, domain=(0.0, 1.0),
              nulls=(Null("other for ours", variants={"a": "c"}),))
    o = _judge(c, {"ours": _res(0.97), "local": _res(0.9845), "null:ours": _res(0.9845), "null:local": _res(0.9845)},
               c.nulls)
    assert o.verdict == CLAIM_DEFECT and "above 1.004" in o.reason
    # the same margin over 0.90 leaves room: judged as usual
    o = _judge(c, {"ours": _res(0.97), "local": _res(0.90), "null:ours": _res(0.91), "null:local": _res(0.90)},
               c.nulls)
    assert o.verdict == REPRODUCED  # the null: 0.91 > 0.90 * 1.02 = 0.918 fails, outside


def test_a_declared_defect_is_reported_with_ours():
    c = Claim("d", "MFU 51%", "Table 3", True, Approx(0.51, rel=0.025), scenario=ScenarioSpec("fast"), metric="t",
              defect="the band (+-1.3 points) is tighter than the source's integer percent", null_reason="x")
    o = _judge(c, {"main": _res(0.5)})
    assert o.verdict == CLAIM_DEFECT and o.reason.startswith("the band") and o.ours == 0.5


def test_not_reproduced_carries_its_reason_class_and_assumptions():
    a = Assumption("link bandwidth (GB/s)", 1.25, flip_at=12.5, sourced=False)
    c = _ratio_claim(Gain(2.0), NULLS)
    c = Claim(**{**vars(c), "reason_class": "setup unknown", "reason": "the cluster's network is not stated",
                 "assumptions": (a,)})
    o = _judge(c, {"base": _res(3.0), "fast": _res(2.0), "null:base": _res(3.0), "null:fast": _res(3.0)}, c.nulls)
    assert o.verdict == NOT_REPRODUCED and o.reason_class == "setup unknown"
    assert o.reason == "the cluster's network is not stated"
    assert o.assumptions == [a.as_dict()] and o.unsourced == [a.as_dict()]
    assert "† unsourced: link bandwidth (GB/s) = 1.25, flips at 12.5" in format_verdict(o)
    assert "not reproduced [setup unknown]: the cluster's network" in format_verdict(o)
    # undeclared: derived from the unsourced assumption that flips
    c2 = Claim(**{**vars(c), "reason_class": None, "reason": ""})
    o2 = _judge(c2, {"base": _res(3.0), "fast": _res(2.0), "null:base": _res(3.0), "null:fast": _res(3.0)}, c.nulls)
    assert o2.reason_class == "setup unknown" and "flips at 12.5" in o2.reason


def test_flips_to_is_in_the_derived_reason_and_refused_without_a_flip():
    """Researcher 13 F5: the verdict on the other side of a flip is named (cocod-sgd's batch flip at 26
    leads to *not discriminating*, not *reproduced*); a flips_to without flip_at, or not a string, is
    refused in one line naming the field."""
    from suite.errors import TechniqueError

    a = Assumption("batch per GPU", 128, flip_at=26, sourced=False, flips_to="not discriminating")
    assert a.as_dict()["flips_to"] == "not discriminating"
    c = _ratio_claim(Gain(2.0), NULLS)
    c = Claim(**{**vars(c), "assumptions": (a,)})
    o = _judge(c, {"base": _res(3.0), "fast": _res(2.0), "null:base": _res(3.0), "null:fast": _res(3.0)}, c.nulls)
    assert o.reason == "batch per GPU = 128 is assumed; the verdict flips at 26 (to not discriminating)"
    with pytest.raises(TechniqueError, match="`flips_to` .* needs `flip_at`"):
        Assumption("k", 4, flips_to="reproduced")
    with pytest.raises(TechniqueError, match="`flips_to` must be a verdict name"):
        Assumption("k", 4, flip_at=2, flips_to=1)


def test_a_reason_class_outside_the_four_is_refused():
    from suite.errors import TechniqueError

    with pytest.raises(TechniqueError, match="reason_class: expected one of missing mechanism"):
        Claim("x", "s", "abstract", True, AtMost(1.0), scenario=ScenarioSpec("a"), metric="t", reason_class="bad luck")


# --------------------------------------------------------------------------- measured claims


def _measured(base, fast, null_fast=None):
    c = _ratio_claim(Gain(2.0), NULLS, measured=True)
    res = {"base": _res(sorted(base)[len(base) // 2], base), "fast": _res(sorted(fast)[len(fast) // 2], fast),
           "null:base": _res(sorted(base)[len(base) // 2], base)}
    nf = null_fast or [x * 1.25 for x in fast]  # another variant in fast's place: ratio ~1.6, outside [1.8, 2.2]
    res["null:fast"] = _res(sorted(nf)[len(nf) // 2], nf)
    return c, _judge(c, res, c.nulls, fidelity="execute")


def test_measured_tight_samples_reproduce_with_their_interval():
    # base median 1.0, fast medians of resamples in [0.499, 0.501]: ratio in [1.996, 2.004] ⊂ [1.8, 2.2]
    c, o = _measured([1.0] * 5, [0.5, 0.499, 0.5, 0.501, 0.5])
    assert o.verdict == REPRODUCED and o.label == "measured on this machine"
    lo, hi = o.interval
    assert 1.99 < lo <= 2.0 <= hi < 2.01 and o.samples == 5


def test_measured_interval_straddling_the_edge_is_inconclusive():
    # fast samples 0.4 .. 0.6 (median 0.5, ratio 2.0): resampled medians reach 0.6 -> ratio 1.67 < 1.8
    c, o = _measured([1.0] * 5, [0.4, 0.45, 0.5, 0.55, 0.6])
    assert o.ours == pytest.approx(2.0) and o.interval[0] < 1.8 <= o.interval[1]
    assert o.verdict == INCONCLUSIVE


def test_measured_far_outside_is_not_reproduced():
    c, o = _measured([1.0] * 5, [0.25, 0.251, 0.249, 0.25, 0.25])  # ratio ~ 4
    assert o.verdict == NOT_REPRODUCED and o.interval[0] > 2.2


def test_bootstrap_is_deterministic():
    c = _ratio_claim(Gain(2.0), measured=True)
    res = {"base": _res(1.0, [0.9, 1.0, 1.1]), "fast": _res(0.5, [0.45, 0.5, 0.55])}
    assert bootstrap_interval(c, res) == bootstrap_interval(c, res)
    assert len(bootstrap_interval(c, res, replicates=10)) == 10


# --------------------------------------------------------------------------- every installed claim


def _installed(context):
    """Every installed technique (the session's context: the installed plugins, loaded once)."""
    return context.registry.techniques()


def test_every_installed_claim_declares_a_null_or_a_reason(shared_context):
    missing = [f"{t.name}:{c.id}" for t in _installed(shared_context) for c in t.claims
               if not c.nulls and not c.null_reason]
    assert missing == []


@pytest.mark.slow
def test_no_installed_claim_is_reproduced_with_a_null_inside(tmp_path, shared_context):
    """Run every installed model/simulate claim (and its nulls) and check the judge's output: a
    ``reproduced`` claim has every null evaluated and outside its band, re-checked here with the
    claim's own acceptance on the null's value."""
    from dataclasses import replace

    from suite.results import Store
    from suite.runner.executors import ExecOptions
    from suite.runner.reproduce import reproduce

    techs = []
    for t in _installed(shared_context):
        claims = [c for c in t.claims if all(s.fidelity != "execute" for s in c.specs().values())]
        techs.append(replace(t, claims=claims))
    store = Store(tmp_path / "s.sqlite")
    try:
        board = reproduce(techs, store, options=ExecOptions(timeout=300), context=shared_context)  # a case past it: an error row
    finally:
        store.close()
    claims = {(t.name, c.id): c for t in techs for c in t.claims}
    for o in board.outcomes:
        if o.verdict != REPRODUCED:
            continue
        c = claims[(o.technique, o.claim)]
        assert len(o.nulls) == len(c.nulls), o.claim
        for n in o.nulls:
            assert not n.reason and n.inside is False, (o.claim, n.label)
            assert not c.expect.check(n.value), (o.claim, n.label, n.value)


def test_a_variant_null_that_substitutes_nothing_is_a_claim_defect():
    """`Null("ring itself", variants={"ring": "ring"})` is the claim's own value: `suite reproduce` said
    "not discriminating" (the null inside the band with ours) where the kit's claims-nulls check failed
    the claim (a plugin-author tryout); the verdict is the claim's defect now, with the kit's reason."""
    c = _ratio_claim(Gain(2.0), (Null("fast itself", variants={"fast": "fast"}),))
    o = _judge(c, {"base": _res(4.0), "fast": _res(2.0), "null:base": _res(4.0), "null:fast": _res(2.0)}, c.nulls)
    assert o.verdict == CLAIM_DEFECT
    assert o.reason.startswith("null 'fast itself' changes no scenario of the claim")


def test_a_sentence_is_no_null():
    """nulls=("a tree would be slower",) quarantined the plugin with "AttributeError: 'str' object has no
    attribute 'variants'", naming neither the claim nor the field."""
    from suite.errors import TechniqueError

    with pytest.raises(TechniqueError, match=r"^claim 'c': nulls\[0\]: expected a computed null, Null\(label, "
                                             r"variants=\.\.\.\).*got str 'a tree would be slower'"):
        _ratio_claim(Gain(2.0), ("a tree would be slower",))


def _efficiency(expect, nulls=(Null("tree", value=0.3),)):
    return Claim("e", "efficiency 1.0", "Table 2", True, expect, scenario=ScenarioSpec("fast"), metric="eff",
                 nulls=nulls)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("expect, said", [
    (Approx(1.0, rel=-0.05), "the tolerance rel=-0.05 is negative or NaN: no value lies within it, it cannot pass"),
    (Between(1.05, 0.95), "the band [1.05, 0.95] is empty (its low end is above its high end): it cannot pass"),
    (AtLeast(float("nan")), "the band [nan, inf] is not a range of numbers (NaN): it cannot pass"),
    (Gain(3.0, rel=-0.2), "the tolerance rel=-0.2 is negative or NaN: no value lies within it, it cannot pass"),
    (AtMost(float("-inf")), "the band [-inf, -inf] holds no finite value: it cannot pass"),
])
def test_an_empty_or_nan_band_is_a_claim_defect_not_a_failed_reproduction(expect, said):
    """tryout11 #3: these bands were judged 'not reproduced' against ours 0.994 (efficiency, no domain):
    a fail was certain before any run."""
    o = _judge(_efficiency(expect), {"main": Result().add("eff", 0.994, "1", "higher")})
    assert (o.verdict, o.reason, o.ours) == (CLAIM_DEFECT, said, 0.994)
    # a band that can be passed and failed, 0.994 below it: judged as usual
    assert _judge(_efficiency(Between(0.995, 1.05)), {"main": Result().add("eff", 0.994, "1", "higher")}
                  ).verdict == NOT_REPRODUCED


def test_a_constant_null_outside_the_claims_domain_is_no_evidence():
    """tryout11 #4: 'negative time' = -1 s could never land in a band of times ([0, inf) from the
    unit); it made the claim 'reproduced'."""
    c = Claim("n", "comm time 1.4 s", "Table 1", True, Approx(1.4, rel=0.3), scenario=ScenarioSpec("fast"),
              metric="t", nulls=(Null("negative time", value=-1.0),))
    o = _judge(c, {"main": _res(1.3)}, c.nulls)  # band [0.98, 1.82] s
    assert o.nulls[0].inside is False and o.verdict == REPRODUCED_NO_NULL
    assert o.reason == ("no null could have landed in the band: negative time (outside the values the claim can "
                        "take [0, inf])")
    # a null that could have landed (zero communication: 0 s is a time) is evidence
    c0 = Claim("n", "comm time 1.4 s", "Table 1", True, Approx(1.4, rel=0.3), scenario=ScenarioSpec("fast"),
               metric="t", nulls=(Null("negative time", value=-1.0), Null("no communication", value=0.0)))
    assert _judge(c0, {"main": _res(1.3)}, c0.nulls).verdict == REPRODUCED
    # a declared domain: chance level 1.5 is no accuracy; an ordering's entries likewise
    acc = Claim("a", "accuracy 0.9", "Table 2", True, Approx(0.9, rel=0.05), scenario=ScenarioSpec("fast"),
                metric="t", domain=(0.0, 1.0), nulls=(Null("above one", value=1.5), Null("no gain", value=1.0)))
    o = _judge(acc, {"main": _res(0.9)}, acc.nulls)
    assert o.verdict == REPRODUCED  # 1.0 is an accuracy, outside [0.855, 0.945]: evidence
    o = _judge(replace(acc, nulls=acc.nulls[:1]), {"main": _res(0.9)}, acc.nulls[:1])
    assert o.verdict == REPRODUCED_NO_NULL
    ordc = Claim("o", "a more accurate than b", "abstract", True, Ordered(("a", "b"), lower=False),
                 cases={"a": ScenarioSpec("a"), "b": ScenarioSpec("b")}, domain=(0.0, 1.0),
                 derive=lambda r: {k: v["t"] for k, v in r.items()},
                 nulls=(Null("impossible", value={"a": 0.5, "b": 2.0}),))
    assert _judge(ordc, {"a": _res(0.9), "b": _res(0.5)}, ordc.nulls).verdict == REPRODUCED_NO_NULL


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_an_ordering_of_one_label_or_with_a_negative_margin_is_a_claim_defect():
    """tryout11 #5: `Ordered(("ring",))` cannot fail, and a margin of -90% passes a tie ('a tie fails')."""
    one = Claim("o", "ring is best", "abstract", True, Ordered(("ring",)), cases={"ring": ScenarioSpec("ring")},
                derive=lambda r: {k: v["t"] for k, v in r.items()}, nulls=(Null("tie", value={"ring": 1.0}),))
    o = _judge(one, {"ring": _res(1.0)}, one.nulls)
    assert o.verdict == CLAIM_DEFECT
    assert o.reason == "an ordering of 1 label(s) ('ring',) compares no pair: it cannot fail"
    neg = Claim("o", "a faster than b", "abstract", True, Ordered(("a", "b"), margin=-0.9),
                cases={"a": ScenarioSpec("a"), "b": ScenarioSpec("b")},
                derive=lambda r: {k: v["t"] for k, v in r.items()}, nulls=(Null("b for a", variants={"a": "b"}),))
    tie = _judge(neg, {"a": _res(1.0), "b": _res(1.0), "null:a": _res(1.0), "null:b": _res(1.0)}, neg.nulls)
    assert tie.verdict == CLAIM_DEFECT
    assert tie.reason == "the margin -0.9 is negative: a tie passes it, and a tie fails an ordering"
    twice = replace(neg, expect=Ordered(("a", "a")))
    assert _judge(twice, {"a": _res(1.0), "b": _res(1.0), "null:a": _res(1.0), "null:b": _res(1.0)},
                  neg.nulls).reason == "label(s) 'a' named twice: a value cannot beat itself, it cannot pass"
