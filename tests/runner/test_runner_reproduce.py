"""Reproduce: verdicts on a fake technique with known values."""

from __future__ import annotations

import pytest

from suite.runner.reproduce import ERROR, NOT_REPRODUCED, REPRODUCED, render_markdown, reproduce


def test_verdicts(fake_registry, store):
    board = reproduce([fake_registry.technique("fake")], store)
    by = {o.claim: o for o in board.outcomes}
    # fast/base = 2 exactly (fakeplugin.y_of), paper 2.0 +- 20%
    assert by["ratio-2x"].verdict == REPRODUCED
    assert by["ratio-2x"].ours == pytest.approx(2.0) and by["ratio-2x"].ratio == pytest.approx(1.0)
    # y = 1 * 1 * 1 * 10 Gbit/s = 10, paper 100 +- 30%
    assert by["y-abs"].verdict == NOT_REPRODUCED
    assert by["y-abs"].ours == pytest.approx(10.0) and by["y-abs"].ratio == pytest.approx(0.1)
    assert by["derive-bad"].verdict == ERROR
    assert by["derive-bad"].reason == "value could not be derived: ZeroDivisionError: derive exploded"
    assert by["case-fails"].verdict == ERROR
    assert by["case-fails"].reason == "case 'main' failed: ValueError: boom from the fake plugin"
    assert board.counts() == {REPRODUCED: 1, NOT_REPRODUCED: 1, ERROR: 2, "total": 4}
    assert board.counts(True) == {REPRODUCED: 1, NOT_REPRODUCED: 0, ERROR: 1, "total": 2}
    # stored and cached: a second reproduce computes nothing new
    again = reproduce([fake_registry.technique("fake")], store)
    assert again.run.computed == 1  # only the failing case is retried
    assert [o.verdict for o in again.outcomes] == [o.verdict for o in board.outcomes]


def test_verified_only_and_markdown(fake_registry, store):
    board = reproduce([fake_registry.technique("fake")], store, verified_only=True)
    assert sorted(o.claim for o in board.outcomes) == ["case-fails", "ratio-2x"]
    md = render_markdown(board)
    assert "## fake" in md and "### Verified claims" in md and "### Unverified" not in md
    assert "| ratio-2x | fast is 2x base | Table 1 | 2 ± 20% | 2 | 1.000 | reproduced |" in md


def test_unresolvable_claim_is_an_error_row(fake_registry, store):
    from dataclasses import replace

    from suite.technique import Approx, Claim, ScenarioSpec

    tech = fake_registry.technique("fake")
    bad = Claim("no-profile", "refers to a missing profile", "Fig. 9", False, Approx(1.0),
                scenario=ScenarioSpec("base", profile="no-such-profile"), metric="y")
    t2 = replace(tech, claims=[bad, tech.claims[0]])
    board = reproduce([t2], store)
    assert board.outcomes[0].verdict == ERROR
    assert board.outcomes[0].reason.startswith("scenario does not resolve: ")
    assert "'no-such-profile'" in board.outcomes[0].reason
    assert board.outcomes[1].verdict == REPRODUCED
