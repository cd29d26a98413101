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
