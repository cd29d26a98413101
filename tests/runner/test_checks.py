"""The coordinator's metric checks (suite.runner.checks): decided without pint where a unit's
words are known counts."""

from __future__ import annotations

from suite.runner import checks


def test_count_words_are_magnitudes_without_pint(monkeypatch):
    """The count words of benchmark units ("samples/s", "layers", "tokens") are decided without
    building pint's registry (it costs ~0.6 s CPU in a fresh process): a magnitude, as pint's
    answer for them was ([sample] is a dimension the suite registers; "layers", "images" are
    words pint does not know and were read as counts)."""
    import suite.hardware.units as U

    asked: list[str] = []
    real = U._registry

    def counted():  # _factor_kind swallows a registry error, so the call itself is what is checked
        asked.append("registry")
        return real()

    monkeypatch.setattr(U, "_registry", counted)
    for word in ("samples", "sample", "layers", "tokens", "images", "iterations", "steps", "epochs",
                 "requests", "queries", "nodes", "messages", "parameters", "items", "events"):
        assert checks._factor_kind(word) == "magnitude", word
    assert asked == []
    checks.nonnegative_unit.cache_clear()
    assert checks.nonnegative_unit("samples/s") and checks.nonnegative_unit("tokens")


def test_a_negative_count_rate_is_refused_and_a_saving_is_not():
    """-3 samples/s cannot be (a rate of a count); -3 % can (a change)."""
    assert checks._problem("throughput", -3.0, "samples/s") is not None
    assert checks._problem("change", -3.0, "%") is None


def _ok(rows, samples=None):
    return {"key": "k", "status": "ok", "metrics": rows, "samples": samples}


def test_check_outcome_decides_each_row_of_a_sweeps_outcome():
    good = [["t", 0.5, "s", "lower"], ["x", 2.0, "1", "higher"]]
    out = _ok(good)
    assert checks.check_outcome(out, "tech") is out  # nothing to change: the outcome itself
    # each finite on its own, their sum overflows to inf: still stored (the C-loop test passes it on)
    big = _ok([["a", 1e308, "B", "none"], ["b", 1e308, "B", "none"]])
    assert checks.check_outcome(big, "tech") is big
    bad = checks.check_outcome(_ok(good + [["m", float("nan"), "s", "lower"]]), "tech")
    assert bad["status"] == "failed" and bad["metrics"] is None
    assert bad["error"] == "BadMetric: tech: metric 'm' is nan (s): expected a finite number (checked by the coordinator)"
    neg = checks.check_outcome(_ok([["t", -1.0, "s", "lower"]]), "tech")
    assert neg["error"] == "BadMetric: tech: metric 't' is -1 s: expected >= 0 for a quantity in s (checked by the coordinator)"
    flag = checks.check_outcome(_ok([["t", True, "s", "lower"]]), "tech")
    assert flag["error"] == "BadMetric: tech: metric 't' is bool True: expected a number (checked by the coordinator)"
    # an int value and tuple rows are numbers and rows too
    fine = _ok([("n", 3, "1", "none"), ["t", 0.25, "s", "lower"]])
    assert checks.check_outcome(fine, "tech") is fine
    # samples are checked one by one: a NaN sample fails its metric
    s = checks.check_outcome(_ok(good, {"t": [0.4, float("nan")]}), "tech")
    assert s["error"] == "BadMetric: tech: metric 't' is nan (s): expected a finite number (checked by the coordinator)"


def test_every_count_word_pint_knows_gets_the_answer_pint_gives(monkeypatch):
    """The fast answer for each count word pint parses equals what the pint path decides for it (the
    words a benchmark unit uses as counts; a word pint does not know takes the letters-only rule either way; "cycle", "turn", "count", "revolution" excepted: pint reads them
    as an angle or a ratio, and the suite decides them a magnitude on purpose)."""
    from suite.hardware.units import _registry

    def known(w):  # a word pint parses: its answer comes from its dimensions, not the letters-only rule
        try:
            _registry().parse_units(w)
        except Exception:  # noqa: BLE001
            return False
        return True

    on_purpose = {"cycle", "cycles", "turn", "turns", "count", "counts", "revolution", "revolutions"}
    words = sorted(w for w in checks._COUNT_WORDS - on_purpose if known(w))
    assert len(words) >= 10, words  # the comparison is with pint, not with the fallback, for these
    fast = {w: checks._factor_kind(w) for w in words}
    monkeypatch.setattr(checks, "_COUNT_WORDS", frozenset(on_purpose))
    assert {w: checks._factor_kind(w) for w in words} == fast
    assert set(fast.values()) == {"magnitude"}


def test_the_coordinator_cuts_an_error_and_a_traceback_a_worker_sent_whole():
    """A plugin that switched off its worker's cut (or a crash report) still reaches the store
    bounded: the one-line error to 2,000 characters, each traceback line to 1,000, the whole
    traceback to its last 64 KiB (the innermost frames)."""
    from suite.runner.checks import check_outcome

    header, frame = "Traceback (most recent call last):\n", '  File "x.py", line 1\n'  # 35 and 22 characters
    tb = header + frame * 10_000 + "ValueError: " + "y" * 5_000_000
    out = check_outcome({"status": "failed", "error": "ValueError: " + "y" * 5_000_000, "traceback": tb}, "t")
    # 12 + 5,000,000 characters, 2,000 kept
    assert out["error"] == "ValueError: " + "y" * 1_988 + "... [4,998,012 more characters left out]"
    # the last line: 5,000,012 -> 1,000 + the 40-character note; with it the traceback is
    # 35 + 220,000 + 1,040 = 221,075 characters, of which the last 65,536 are kept
    assert out["traceback"].startswith("[155,539 characters of outer frames left out]\n")
    assert out["traceback"].endswith("y" * 10 + "... [4,999,012 more characters left out]")
    assert len(out["traceback"]) == 46 + 65_536
    assert check_outcome(dict(out), "t") == out  # a second check (the coordinator's) cuts nothing more
    ok = {"status": "failed", "error": "ValueError: short", "traceback": "tb"}
    assert check_outcome(ok, "t") is ok  # nothing to cut: the same object, no copy


def test_a_negative_value_labelled_dimensionless_is_held_to_its_declared_unit():
    """hostile15 finding 4: `comm_time = -1` with unit "1" or "" was stored ok although the
    technique declares comm_time in s (the same -1 in "s" or "ms/iter" was refused): the sign check
    read only the unit the result gave. The declared unit decides as well; a metric declared
    dimensionless (a change in %) or not declared keeps its free sign."""
    declared = {"comm_time": "s", "change": "%"}.get
    for unit in ("1", ""):
        out = checks.check_outcome(_ok([["t", 0.5, "s", "lower"], ["comm_time", -1.0, unit, "lower"]]), "evil", declared)
        assert out["status"] == "failed" and out["metrics"] is None
        assert out["error"] == (f"BadMetric: evil: metric 'comm_time' is -1 {unit}: expected >= 0 for a quantity in s "
                                f"(its declared unit; the result gives {unit!r}) (checked by the coordinator)")
    # a negative sample of a metric declared in s, labelled "1", is refused the same way
    s = checks.check_outcome(_ok([["comm_time", 1.0, "1", "lower"]], {"comm_time": [1.0, -2.0]}), "evil", declared)
    assert s["status"] == "failed" and "is -2 1: expected >= 0 for a quantity in s" in s["error"]
    free = _ok([["change", -3.0, "%", "none"], ["other", -2.0, "1", "none"]])
    assert checks.check_outcome(free, "evil", declared) is free
    assert checks.check_outcome(_ok([["comm_time", -1.0, "1", "lower"]]), "evil")["status"] == "ok"  # no declaration


def test_declared_units_reads_the_shared_and_the_fidelitys_own_meanings():
    """The lookup the coordinator builds once per technique and fidelity: the shared meaning's unit,
    a fidelity's own meaning over the shared one, none for an undeclared metric."""
    from suite.declaration.vocabulary import MetricMeaning
    from suite.technique import Paper, Param, Result, ScenarioSpec, Technique, Variant

    def model(s):
        return Result().add("comm_time", 1.0, "s", "lower")

    tech = Technique(name="units-fixture", title="t", category="communication", paper=Paper("P", ("A",), "V", 2020),
                     variants=[Variant("base", "the baseline", baseline=True)],
                     fidelities={"model": model, "simulate": model}, needs_workload=False, needs_profile=False,
                     parameters={"n": Param(int, 1)},
                     smoke=[ScenarioSpec("base", fidelity=f) for f in ("model", "simulate")],
                     metric_meanings={"wait": MetricMeaning("s", "lower", "seconds waited"),
                                      "simulate": {"wait": MetricMeaning("%", "lower", "share of the step waited")}})
    model_units = checks.declared_units(tech, "model")
    assert (model_units("wait"), model_units("nothing")) == ("s", None)
    assert checks.declared_units(tech, "simulate")("wait") == "%"
