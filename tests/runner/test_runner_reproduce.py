"""Reproduce: verdicts on a fake technique with known values."""

from __future__ import annotations

import pytest

from suite.runner.reproduce import (CLAIM_DEFECT, ERROR, INCONCLUSIVE, NOT_DISCRIMINATING, NOT_REPRODUCED,
                                    REPRODUCED, REPRODUCED_NO_NULL, render_markdown, reproduce)


def _ctx():
    """The context of the test: the fake plugin (the fake_registry fixture makes it the default)."""
    from suite.context import Context

    return Context.build()


def test_verdicts(fake_registry, store):
    board = reproduce([fake_registry.technique("fake")], store, context=_ctx())
    by = {o.claim: o for o in board.outcomes}
    # fast/base = 2 exactly (fakeplugin.y_of), paper 2.0 +- 20%; no null declared: not evidence
    assert by["ratio-2x"].verdict == REPRODUCED_NO_NULL
    assert by["ratio-2x"].ours == pytest.approx(2.0) and by["ratio-2x"].ratio == pytest.approx(1.0)
    # y = 1 * 1 * 1 * 10 Gbit/s = 10, paper 100 +- 30%
    assert by["y-abs"].verdict == NOT_REPRODUCED
    assert by["y-abs"].ours == pytest.approx(10.0) and by["y-abs"].ratio == pytest.approx(0.1)
    assert by["derive-bad"].verdict == ERROR
    assert by["derive-bad"].reason == "value could not be derived: ZeroDivisionError: derive exploded"
    assert by["case-fails"].verdict == ERROR
    assert by["case-fails"].reason == "case 'main' failed: ValueError: boom from the fake plugin"
    # the fake's claims declare no null: judged on the value alone, and the row says so
    assert by["ratio-2x"].reason == "none declared: no null prediction" and by["ratio-2x"].nulls == []
    assert board.counts() == {REPRODUCED: 0, REPRODUCED_NO_NULL: 1, NOT_DISCRIMINATING: 0, NOT_REPRODUCED: 1,
                              INCONCLUSIVE: 0, CLAIM_DEFECT: 0, ERROR: 2, "total": 4}
    assert board.counts(True) == {REPRODUCED: 0, REPRODUCED_NO_NULL: 1, NOT_DISCRIMINATING: 0, NOT_REPRODUCED: 0,
                                  INCONCLUSIVE: 0, CLAIM_DEFECT: 0, ERROR: 1, "total": 2}
    # stored and cached: a second reproduce computes nothing new
    again = reproduce([fake_registry.technique("fake")], store, context=_ctx())
    assert again.run.computed == 1  # only the failing case is retried
    assert [o.verdict for o in again.outcomes] == [o.verdict for o in board.outcomes]


def test_verified_only_and_markdown(fake_registry, store):
    board = reproduce([fake_registry.technique("fake")], store, verified_only=True, context=_ctx())
    assert sorted(o.claim for o in board.outcomes) == ["case-fails", "ratio-2x"]
    md = render_markdown(board)
    assert "## fake" in md and "### Verified claims" in md and "### Unverified" not in md
    assert ("| ratio-2x | fast is 2x base | Table 1 | 2 ± 20% | 2 | none declared | 1.000 | "
            "reproduced (no null): none declared: no null prediction |") in md
    assert ("| | claims | reproduced | reproduced (no null) | not discriminating | not reproduced | inconclusive | "
            "claim defect | error |") in md


def test_markdown_text_of_a_plugin_cannot_start_a_line(fake_registry, store):
    """A claim statement holding a bare CR, CR LF or U+2028 put a line of its own in the page: a
    Markdown reader showed "## poseidon: all claims reproduced" as a heading of the built-ins (a
    hostile tryout). Every such break is a space now; the one line of the table row stays one line."""
    import dataclasses

    board = reproduce([fake_registry.technique("fake")], store, verified_only=True, context=_ctx())
    fake = "x\r## poseidon: all claims reproduced\r\ny\u2028## z\u2029w\x85v"
    board.outcomes[0] = dataclasses.replace(board.outcomes[0], statement=fake)
    md = render_markdown(board)
    assert not any(line.startswith("## poseidon") or line.startswith("## z") for line in md.splitlines())
    assert "x ## poseidon: all claims reproduced y ## z w v" in md


def test_unresolvable_claim_is_an_error_row(fake_registry, store):
    from dataclasses import replace

    from suite.technique import Approx, Claim, ScenarioSpec

    tech = fake_registry.technique("fake")
    bad = Claim("no-profile", "refers to a missing profile", "Fig. 9", False, Approx(1.0),
                scenario=ScenarioSpec("base", profile="no-such-profile"), metric="y")
    t2 = replace(tech, claims=[bad, tech.claims[0]])
    board = reproduce([t2], store, context=_ctx())
    assert board.outcomes[0].verdict == ERROR
    assert board.outcomes[0].reason.startswith("scenario does not resolve: ")
    assert "'no-such-profile'" in board.outcomes[0].reason
    assert board.outcomes[1].verdict == REPRODUCED_NO_NULL


def test_variant_null_is_run_stored_and_judged(fake_registry, store):
    """A variant null's cases are extra cases of the run; the stored scoreboard judges them the same."""
    from dataclasses import replace

    from suite.report.scoreboard import stored_scoreboard
    from suite.technique import Approx, Claim, Gain, Null, ScenarioSpec

    tech = fake_registry.technique("fake")
    spec = dict(profile="fake-cluster-a", workload="fake-wl")
    # y(fast, x=1) = 2 * 10 = 20; y(base, x=1) = 10 (10 Gbit/s profile): the ratio fast/base is 2
    two = Claim("gain-2x", "fast is 2x base", "Table 1", True, Gain(2.0),
                cases={"base": ScenarioSpec("base", **spec), "fast": ScenarioSpec("fast", **spec)},
                derive=lambda r: r["fast"]["y"] / r["base"]["y"],
                nulls=(Null("base for fast", variants={"fast": "base"}), Null("no gain", value=1.0)))
    # weak: base at x=2 (y = 20) halved stands in for base at x=1; its null runs fast at x=2 too
    weak = replace(two, id="weak", cases={"base": ScenarioSpec("base", params={"x": 2.0}, **spec),
                                           "fast": ScenarioSpec("fast", **spec)},
                   derive=lambda r: r["fast"]["y"] / (r["base"]["y"] / 2.0),
                   nulls=(Null("fast everywhere", variants={"base": "fast"}),))
    # blind: a value that never reads the fast case (2 x base = 20, inside 20 +- 30%), so the null
    # "base for fast" gives 20 as well: inside -> not discriminating, through the whole pipeline
    blind = replace(two, id="blind", expect=Approx(20.0, rel=0.3), derive=lambda r: 2.0 * r["base"]["y"],
                    nulls=(Null("base for fast", variants={"fast": "base"}),))
    t2 = replace(tech, claims=[two, weak, blind])
    board = reproduce([t2], store, context=_ctx())
    by = {o.claim: o for o in board.outcomes}
    # both nulls give exactly 1.0 (base against itself, no gain): a gain band excludes it by
    # construction, so neither is evidence (issue 42)
    assert by["gain-2x"].verdict == REPRODUCED_NO_NULL and by["gain-2x"].ours == pytest.approx(2.0)
    assert [(n.label, n.value, n.inside) for n in by["gain-2x"].nulls] == [("base for fast", 1.0, False),
                                                                          ("no gain", 1.0, False)]
    assert by["gain-2x"].nulls[0].cases["fast"] != by["gain-2x"].cases["fast"]
    # weak: ours = 20 / (20 / 2) = 2; null: base->fast at x=2 gives 40, 20 / 20 = 1 -> outside, but
    # exactly no gain: reproduced (no null)
    assert by["weak"].ours == pytest.approx(2.0)
    assert by["weak"].nulls[0].value == 1.0 and by["weak"].verdict == REPRODUCED_NO_NULL
    assert by["blind"].ours == pytest.approx(20.0) and by["blind"].nulls[0].value == pytest.approx(20.0)
    assert by["blind"].nulls[0].inside is True
    assert (by["blind"].verdict, by["blind"].reason) == (NOT_DISCRIMINATING, "null inside the band: base for fast")
    # distinct cases: base(x=1), fast(x=1) [gain-2x; its null only repeats base(x=1)], base(x=2) [weak;
    # its fast(x=1) is shared], fast(x=2) [weak's null; its other case is fast(x=1) again]: 4
    assert board.run.total == 4
    stored, not_run = stored_scoreboard([t2], store, context=_ctx())
    assert not_run == 0
    assert [o.as_dict() for o in stored.outcomes] == [o.as_dict() for o in board.outcomes]
    d = board.as_dict()
    assert d["claims"][0]["nulls"][1] == {"label": "no gain", "kind": "value", "value": 1.0, "inside": False,
                                         "straddles": False, "interval": None, "reason": "", "substitutions": {},
                                         "cases": {}}


def test_html_scoreboard_shows_the_null_column(fake_registry, store):
    """The HTML report's scoreboard has a null(s) column with each null's value and side."""
    from dataclasses import replace

    from suite.report.html import _scoreboard_section
    from suite.technique import Claim, Gain, Null, ScenarioSpec

    tech = fake_registry.technique("fake")
    spec = dict(profile="fake-cluster-a", workload="fake-wl")
    two = Claim("gain-2x", "fast is 2x base", "Table 1", True, Gain(2.0),
                cases={"base": ScenarioSpec("base", **spec), "fast": ScenarioSpec("fast", **spec)},
                derive=lambda r: r["fast"]["y"] / r["base"]["y"], nulls=(Null("no gain", value=1.0),))
    board = reproduce([replace(tech, claims=[two])], store, context=_ctx())
    html = _scoreboard_section(board, 0, True)
    assert "<th>null(s)</th>" in html and "<th>not discriminating</th>" in html
    assert "<td>no gain = 1 (outside)</td>" in html


def test_a_failed_claim_still_shows_its_declared_nulls(fake_registry, store):
    """The claim's own case fails: the verdict is error, and its nulls stay on the scoreboard,
    marked not judged (they showed 'none declared', as if the claim had none)."""
    import dataclasses

    from suite import Claim, Exact, Null, ScenarioSpec
    from suite.runner.reproduce import format_nulls

    spec = ScenarioSpec("base", params={"mode": "raise"}, profile="fake-cluster-a", workload="fake-wl")
    claim = Claim("fails-with-nulls", "a failing case with nulls", "Sec. 4", True, Exact(1), scenario=spec,
                  metric="y", nulls=(Null("no gain", value=1.0), Null("the fast variant", variants={"base": "fast"})))
    tech = dataclasses.replace(fake_registry.technique("fake"), claims=[claim])
    (o,) = reproduce([tech], store, context=_ctx()).outcomes
    assert o.verdict == ERROR
    assert format_nulls(o) == ("no gain (not judged: the claim's own case failed); the fast variant (not judged: "
                               "the claim's own case failed)")


def test_reproduce_cli_prints_legend_reason_and_units(fake_registry, store):
    """Through the renderer the CLI uses: the fake's 'y-abs' claim (ours 10, paper 100 +- 30%)."""
    from suite.report.scoreboard import claim_info, render_text
    from suite.runner.reproduce import reproduce

    tech = fake_registry.technique("fake")
    board = reproduce([tech], store, context=_ctx())
    text = render_text(board, claim_info([tech], store, board), width=120)
    assert text.startswith("How to read this")
    assert "  ✗ y-abs  not reproduced" in text
    assert "ours 10 s, below the band 70 to 130 s (paper 100 s ± 30%); ratio 0.1" in text  # y is in s
    assert "  ○ ratio-2x  reproduced (no null)" in text
    assert text.rstrip().endswith("all: 4 claim(s): 0 reproduced, 1 reproduced (no null), 0 not discriminating, "
                                  "1 not reproduced, 0 inconclusive, 0 claim defect, 2 error")
