"""Judging runs plugin code in this process (a claim's ``derive``, a null's, a callable domain, a
custom band): a claim whose ``derive`` rebinds a core band's method changed the verdicts of every
technique judged after it, and the judgement cache then served them to later commands that never
loaded that plugin (a tryout: a built-in's "not reproduced" printed as "reproduced", 3 reproduced
and 0 not reproduced where a clean store gives 2 and 1). What the judging of a technique's claims
changes is put back and its claims are error rows, never cached.

The fake technique's claim ``y-abs`` (Approx(100, rel=0.3), ours 10) is "not reproduced"; the
technique ``sly`` has one claim whose derive makes every Approx pass."""

from __future__ import annotations

import importlib
from dataclasses import replace

from suite.declaration.claims import Approx
from suite.technique import Claim, ScenarioSpec

R = importlib.import_module("suite.runner.reproduce")
SPEC = dict(profile="fake-cluster-a", workload="fake-wl")
ORIGINAL = Approx.check


def _sly(results):
    Approx.check = lambda self, ours: True  # every Approx band passes from now on
    return results["base"]["y"]


def _techniques(fake):
    sly = replace(fake, name="sly", claims=[Claim("sly", "y is 10", "Sec. 1", True, Approx(10.0, rel=0.1),
                                                  cases={"base": ScenarioSpec("base", **SPEC)}, derive=_sly)])
    return [sly, replace(fake, claims=[c for c in fake.claims if c.id == "y-abs"])]


def _verdicts(board):
    return {(o.technique, o.claim): (o.verdict, o.reason) for o in board.outcomes}


def test_a_claim_that_changes_the_core_while_judged_changes_no_other_verdict(fake_registry, store):
    from suite.context import Context

    fake = fake_registry.technique("fake")
    try:
        got = _verdicts(R.reproduce(_techniques(fake), store, context=Context.build()))
        assert Approx.check is ORIGINAL  # put back
        assert got[("fake", "y-abs")][0] == "not reproduced"
        assert got[("sly", "sly")] == ("error", "not judged: the claims of 'sly' changed the core while they were "
                                       "judged (suite.declaration.claims.Approx.check; put back): a claim's derive, "
                                       "domain or band must change no shared module")
        # the next command (the fake alone, the cache of the same store): the same verdict, and the
        # sly claim was not cached (judged, and refused, again)
        again = _verdicts(R.reproduce([fake], store, context=Context.build()))
        assert again[("fake", "y-abs")][0] == "not reproduced"
        assert _verdicts(R.reproduce(_techniques(fake)[:1], store, context=Context.build()))[("sly", "sly")][0] == "error"
    finally:
        Approx.check = ORIGINAL


def test_the_stored_scoreboard_is_guarded_the_same_way(fake_registry, store):
    from suite.context import Context
    from suite.report.scoreboard import stored_scoreboard

    fake = fake_registry.technique("fake")
    try:
        R.reproduce(_techniques(fake), store, context=Context.build())  # stores the cases
        Approx.check = ORIGINAL
        board, _ = stored_scoreboard(_techniques(fake), store, context=Context.build())
        got = _verdicts(board)
        assert Approx.check is ORIGINAL
        assert got[("fake", "y-abs")][0] == "not reproduced" and got[("sly", "sly")][0] == "error"
    finally:
        Approx.check = ORIGINAL


def test_a_derive_that_rewrites_another_techniques_claim_is_put_back(fake_registry, store):
    """A derive wrote a built-in claim's band past its freeze (``object.__setattr__(claim, "expect",
    ...)``): that claim, judged after it, passed, and the verdict was cached under the clean claim's
    key (a hostile plugin author: "not reproduced" served as "reproduced" to later commands)."""
    from suite.context import Context

    fake = fake_registry.technique("fake")
    victim = _techniques(fake)[1]
    target = victim.claims[0]

    def _rewrite(results):
        object.__setattr__(target, "expect", Approx(10.0, rel=0.5))  # ours is 10: it would pass
        return results["base"]["y"]

    sly = replace(fake, name="sly", claims=[Claim("sly", "y is 10", "Sec. 1", True, Approx(10.0, rel=0.1),
                                                  cases={"base": ScenarioSpec("base", **SPEC)}, derive=_rewrite)])
    got = _verdicts(R.reproduce([sly, victim], store, context=Context.build()))
    assert target.expect == Approx(100.0, rel=0.3)  # put back
    assert got[("fake", "y-abs")][0] == "not reproduced"
    assert got[("sly", "sly")][0] == "error" and "claim fake/y-abs" in got[("sly", "sly")][1]
    again = _verdicts(R.reproduce([victim], store, context=Context.build()))
    assert again[("fake", "y-abs")][0] == "not reproduced"
