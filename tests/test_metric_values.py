"""A metric value that is no number (hostile tryout F10): ``Result.add("t", "1.5")`` and
``Result.add("t", True)`` were stored ``ok`` as 1.5 and 1.0 with no word, although a value that is
not a number fails the case. The tightening warns for one minor version (DeprecationWarning, shown
by the `suite` command once per place in the plugin's code) and is refused from 0.4.0."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from suite.declaration.results import MetricValueError
from suite.deprecation import show_removals
from suite.technique import Result


@pytest.mark.parametrize("value, stored", [("1.5", 1.5), (True, 1.0), (False, 0.0), (b"2.5", 2.5),
                                           (np.bool_(True), 1.0), (np.array("2.5"), 2.5), (np.array(True), 1.0),
                                           (np.array(b"3"), 3.0)])
def test_a_string_or_a_boolean_is_stored_converted_and_warns(value, stored):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        r = Result().add("t", value, "s", "lower")
    assert r["t"] == stored and type(r["t"]) is float
    (w,) = got
    assert w.category is DeprecationWarning and w.filename == __file__
    assert str(w.message) == (f"metric 't': expected a number, got {type(value).__name__} (stored as float() reads "
                              "it); pass a float: this is refused from dlsys-suite 0.4.0")


def test_a_string_sample_warns_like_a_value():
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        r = Result().add("t", 1.0, "s", "lower", samples=[0.5, "1.5", 2])
    assert r.metrics["t"].samples == (0.5, 1.5, 2.0)
    assert [str(w.message)[:40] for w in got] == ["metric 't': expected a number, got str ("]
    assert got[0].filename == __file__


def test_numbers_do_not_warn_and_keep_their_value():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = (Result().add("a", 1.5, "s").add("b", 3, "B").add("c", np.float64(0.25), "s")
             .add("d", np.int64(7), "1").add("e", 2.0, "s", samples=(1.0, 3.0)).add("f", np.array(0.5), "s"))
    assert [(m.value, type(m.value)) for m in r.metrics.values()] == [
        (1.5, float), (3.0, float), (0.25, float), (7.0, float), (2.0, float), (0.5, float)]
    assert r.metrics["e"].samples == (1.0, 3.0)


def test_a_string_that_is_no_number_still_fails_the_case():
    with pytest.raises(MetricValueError, match=r"metric 't': expected a number, got str 'fast'"):
        Result().add("t", "fast", "s")


def _evaluate(i):  # one call site, as a plugin's evaluate function is
    return Result().add("t", str(i), "s", "lower")


def test_the_suite_command_shows_it_once_per_place_not_once_per_case():
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("ignore")
        show_removals()  # what `suite` does at start-up
        results = [_evaluate(i) for i in range(5)]
    assert [r["t"] for r in results] == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert len(got) == 1 and "refused from dlsys-suite 0.4.0" in str(got[0].message)
