"""The terminal scoreboard explains itself: a legend, units, the comparison made, why, uncut ids."""

from __future__ import annotations

import importlib

import pytest

from suite.report.scoreboard import ClaimInfo, explain, legend, render_claim, render_text, why
from suite.runner.reproduce import ClaimOutcome, NullOutcome, Scoreboard
from suite.technique import Approx, AtMost, Gain, Ordered

LONG_ID = "inception-v3-32n-versus-tensorflow-at-thirty-two-machines"


def _outcome(**kw) -> ClaimOutcome:
    base = dict(technique="t", claim="c", statement="s", source="Table 1", verified=True, paper="")
    base.update(kw)
    return ClaimOutcome(**base)


def test_legend_defines_every_term_and_links_the_rules():
    text = " ".join(legend(100).split())
    for term in ("paper", "gain", "ours", "ratio", "null", "verdicts", "missing mechanism", "setup unknown",
                 "baseline not modelled", "source imprecise", "docs/verdicts.md", "--wide"):
        assert term in text, term
    # the worked examples are the arithmetic of the rules: 35 +- 20% is 28..42; gain 3 +- 20% of 3 is 3.4x..4.6x
    assert "28 to 42 MB" in text and "3.4x to 4.6x" in text


def test_memory_claim_in_its_unit_below_the_band():
    """The issue's example: 35 MB +- 20% against 0.8533 MB (the band is 28 to 42 MB)."""
    o = _outcome(ours=0.8533, ratio=0.8533 / 35, verdict="not reproduced",
                 note="Largest per-layer difference of peak memory. The reference point is not stated.",
                 nulls=[NullOutcome("no saving", "value", value=0.0, inside=False)])
    info = ClaimInfo(expect=Approx(35.0, rel=0.2), unit="MB")
    assert explain(o, info) == "ours 0.8533 MB, below the band 28 to 42 MB (paper 35 MB ± 20%); ratio 0.0244"
    lines = render_claim(o, info, width=200)
    assert "no saving = 0 MB (outside)" in "\n".join(lines)
    assert lines[-1].split(None, 1)[1] == "Largest per-layer difference of peak memory."  # one sentence


def test_gain_band_and_reason_class_and_assumptions():
    """A gain claim: paper 20x, band 16.2x to 23.8x (gain 19 +- 20% = 19 +- 3.8); reason class and an
    unsourced assumption shown (read through getattr: the fields may be absent)."""
    o = _outcome(claim="tf-32n", ours=26.14, ratio=26.14 / 20, verdict="not reproduced", note="TF is mapped to ps.")
    o.reason_class = "baseline not modelled"
    o.assumptions = [{"name": "bandwidth", "value": "40 Gbit/s", "flip_at": "10 Gbit/s", "sourced": False}]
    info = ClaimInfo(expect=Gain(20.0, rel=0.2), unit="x")
    assert explain(o, info) == "ours 26.14x, above the band 16.2x to 23.8x (paper 20x, gain 19 ± 20%); ratio 1.31"
    short = render_claim(o, info, width=120)
    assert short[0] == "  ✗ tf-32n  not reproduced · baseline not modelled †"
    assert why(o) == "baseline not modelled: TF is mapped to ps."  # no declared reason: the note's first sentence
    o.reason = "TF's gRPC overheads are not modelled"
    assert why(o) == "baseline not modelled: TF's gRPC overheads are not modelled"
    o.reason = ""
    wide = "\n".join(render_claim(o, info, wide=True, width=120))
    assert "bandwidth = 40 Gbit/s (NOT sourced: our assumption; the verdict flips at 10 Gbit/s)" in wide


def test_an_assumption_without_a_flip_reads_the_same_in_every_view_and_carries_no_dagger():
    """Researcher 13 F6: an unsourced assumption with flip_at=None printed nothing in the terminal
    and --wide views where Markdown printed "no flip found", and the dagger ("the verdict rests on an
    unsourced assumption") showed though no value of it flips the verdict. Now every view says "no
    flip found" and the dagger marks only an unsourced assumption that flips; its flips_to shows."""
    from suite.report.scoreboard import format_verdict

    o = _outcome(claim="tc", ours=4.59, verdict="reproduced", nulls=[NullOutcome("base", "variant", value=1.0, inside=False)])
    o.assumptions = [{"name": "baseline", "value": "cuDNN", "flip_at": None, "sourced": False}]
    info = ClaimInfo(expect=Gain(4.0, rel=0.2), unit="x")
    assert render_claim(o, info, width=120)[0] == "  ✓ tc  reproduced"
    wide = "\n".join(render_claim(o, info, wide=True, width=120))
    assert "baseline = cuDNN (NOT sourced: our assumption; no flip found)" in wide
    assert format_verdict(o) == "reproduced; unsourced: baseline = cuDNN, no flip found"
    o.assumptions.append({"name": "batch", "value": 128, "flip_at": 26, "sourced": False,
                          "flips_to": "not discriminating"})
    assert render_claim(o, info, width=120)[0] == "  ✓ tc  reproduced †"
    wide = "\n".join(render_claim(o, info, wide=True, width=120))
    assert "batch = 128 (NOT sourced: our assumption; the verdict flips at 26 (to not discriminating))" in wide
    assert format_verdict(o).endswith("† unsourced: batch = 128, flips at 26 (to not discriminating)")


def test_an_unset_value_and_a_flip_to_the_verdict_the_claim_has_are_said_so():
    """hostile15 finding 5: "✓ flip-none reproduced †" with "nic-bandwidth =  (... the verdict flips at 0
    (to reproduced))": an empty value, and a flip to the verdict the claim already has, printed as if
    both were fine. A None value reads "unset" and such a flip says it contradicts the verdict, in the
    --wide lines and in the verdict column (Markdown); a flip to another verdict reads as before."""
    from suite.report.scoreboard import format_verdict

    o = _outcome(claim="flip-none", ours=4.59, verdict="reproduced",
                 nulls=[NullOutcome("base", "variant", value=1.0, inside=False)])
    o.assumptions = [{"name": "nic-bandwidth", "value": None, "flip_at": 0.0, "sourced": False, "flips_to": "reproduced"}]
    info = ClaimInfo(expect=Gain(4.0, rel=0.2), unit="x")
    wide = "\n".join(render_claim(o, info, wide=True, width=200))
    assert ("nic-bandwidth = unset (NOT sourced: our assumption; the verdict flips at 0 (to reproduced, the verdict "
            "it already has: flip_at or flips_to is wrong))") in wide
    assert format_verdict(o) == ("reproduced † unsourced: nic-bandwidth = unset, flips at 0 (to reproduced, the "
                                 "verdict it already has: flip_at or flips_to is wrong)")
    o.verdict = "not reproduced"
    assert format_verdict(o) == "not reproduced † unsourced: nic-bandwidth = unset, flips at 0 (to reproduced)"


def test_outcome_without_the_new_fields_renders():
    o = _outcome(ours=0.5, verdict="reproduced", nulls=[NullOutcome("no gain", "value", value=1.0, inside=False)])
    assert not hasattr(o, "reason_class") or o.reason_class is None
    lines = render_claim(o, ClaimInfo(expect=AtMost(1.0)), width=100)
    assert lines[0] == "  ✓ c  reproduced"
    assert "every null outside the band (no gain)" in lines[-1]


def test_claim_ids_are_never_cut():
    o = _outcome(claim=LONG_ID, ours=1.0, verdict="not reproduced", statement="x " * 200, note="y " * 200)
    for width in (40, 60, 80):
        lines = render_claim(o, ClaimInfo(expect=Approx(2.0)), width=width)
        assert LONG_ID in lines[0]
        assert all(len(line) <= max(width, 33) for line in lines[1:]), lines  # the others are shortened
    board = Scoreboard([o, _outcome(claim=LONG_ID + "-2", ours=1.0, verdict="error", reason="boom")])
    text = render_text(board, width=60)
    assert f" {LONG_ID}  " in text and f" {LONG_ID}-2  " in text


def test_ordering_claim_says_which_order_we_got():
    o = _outcome(ours={"a": 3.0, "b": 1.0, "c": 2.0}, verdict="not reproduced")
    s = explain(o, ClaimInfo(expect=Ordered(("a", "b", "c")), unit="s"))
    assert s.startswith("ours a=3 s, b=1 s, c=2 s: our order is b < c < a; paper a < b < c")


def test_a_claim_defect_with_our_order_reversed_says_so():
    """research14 #4: pfeddst's claim defect printed "the paper's order, by the margin" beside ours
    0.9661 against the best baseline's 0.9845: the sentence follows the values, not the verdict."""
    o = _outcome(ours={"pfeddst": 0.9661, "best baseline": 0.9845}, verdict="claim defect")
    s = explain(o, ClaimInfo(expect=Ordered(("pfeddst", "best baseline"), margin=0.02, lower=False)))
    assert s.startswith("ours pfeddst=0.9661, best baseline=0.9845: our order is best baseline > pfeddst; "
                        "paper pfeddst > best baseline")
    o = _outcome(ours={"pfeddst": 0.99, "best baseline": 0.9845}, verdict="claim defect")  # in order, inside 2%
    s = explain(o, ClaimInfo(expect=Ordered(("pfeddst", "best baseline"), margin=0.02, lower=False)))
    assert ": the order holds but not by the margin;" in s
    o = _outcome(ours={"pfeddst": 0.9, "best baseline": 0.8}, verdict="error")
    s = explain(o, ClaimInfo(expect=Ordered(("pfeddst", "best baseline"), margin=0.02, lower=False)))
    assert ": the paper's order, by the margin;" in s


def test_not_discriminating_names_the_null():
    o = _outcome(ours=16.0, verdict="not discriminating", reason="null inside the band: ideal scaling",
                 nulls=[NullOutcome("ideal scaling", "value", value=16.0, inside=True)])
    assert why(o) == "null inside the band: ideal scaling: the claim cannot tell the technique from that null"


def test_one_display_unit_per_claim():
    """Bytes: ours and the band in the same binary prefix (never 1004 MiB beside 0.88 GiB)."""
    o = _outcome(ours=1004 * 2**20, verdict="not discriminating")
    s = explain(o, ClaimInfo(expect=Approx(1.106 * 2**30, rel=0.2), unit="B"))
    assert s.startswith("ours 0.9805 GiB, inside the band 0.8848 to 1.327 GiB (paper 1.106 GiB ± 20%)")


@pytest.mark.parametrize("name", ["format_value", "format_nulls", "format_ours", "format_verdict", "counts_line",
                                  "render_markdown", "table_rows"])
def test_renderers_stay_importable_from_the_runner(name):
    import suite.report.scoreboard as sb
    rp = importlib.import_module("suite.runner.reproduce")

    assert getattr(rp, name) is getattr(sb, name)


def test_reproduced_with_no_null_says_why_no_null_counts():
    """A "reproduced (no null)" row whose only null lies outside the values the claim can take said
    "every null outside the band (negative time)", as if the null were evidence."""
    reason = "no null could have landed in the band: negative time (outside the values the claim can take [0, inf])"
    o = _outcome(ours=1.3, verdict="reproduced (no null)", reason=reason,
                 nulls=[NullOutcome("negative time", "value", value=-1.0, inside=False)])
    assert why(o) == reason
    beat = _outcome(ours=1.3, verdict="reproduced", nulls=[NullOutcome("ring", "variant", value=3.0, inside=False)])
    assert why(beat) == "every null outside the band (ring)"
