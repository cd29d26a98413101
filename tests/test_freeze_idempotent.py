"""Freezing is idempotent: a second freeze of a frozen input changes no object identity, so the
per-case input guard (suite.frozen.guard / restore_changed) does not blame a case for the core's
own re-freeze (a Scenario rebuilt around a tracked profile view re-froze its `uses` inputs and
failed every node-aware-grids execute case with InputMutated: profile.network)."""
from suite.frozen import freeze, guard, restore_changed


def test_a_second_freeze_of_a_profile_keeps_every_identity(shared_context):
    profile = shared_context.profile("perlmutter-cpu")
    levels = profile.__dict__["network"]
    assert len(levels) >= 1  # a profile with network levels: the tuple that used to be rebuilt
    snap = guard(("profile", profile))
    assert freeze(profile) is profile
    assert profile.__dict__["network"] is levels
    assert restore_changed(snap) is None


def test_a_tuple_of_frozen_models_is_returned_as_it_is(shared_context):
    profile = shared_context.profile("perlmutter-cpu")
    levels = profile.network
    assert freeze(levels) is levels
    fresh = (levels[0], [1, 2])  # a list inside still freezes into a new tuple
    out = freeze(fresh)
    assert out is not fresh and out[1] == (1, 2) and out[0] is levels[0]
