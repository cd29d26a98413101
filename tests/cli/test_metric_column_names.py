"""A metric named like a column `suite results show` adds (a tryout's plugin reported
``extrapolated = 7`` and ``set.network.0.bandwidth = 5``): csv/json showed the suite's column under
the metric's name (None, 20.0) while the table and the export showed 7 and 5. Until 0.4.0 refuses
these names, the metric keeps its column and the plugin is warned."""

from __future__ import annotations

import warnings

import pytest

from suite.errors import TechniqueError
from suite.technique import Result


@pytest.mark.parametrize("name", ["extrapolated", "other_code", "set.network.0.bandwidth"])
def test_a_metric_named_like_a_shown_column_is_warned_about_and_kept(name):
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        r = Result().add(name, 7.0, "1")
    assert r[name] == 7.0
    (w,) = [x for x in got if issubclass(x.category, DeprecationWarning)]
    assert f"metric {name!r}: `suite results show` adds a column of that name" in str(w.message)
    assert "refused from dlsys-suite 0.4.0" in str(w.message)


def test_a_case_column_name_is_still_refused():
    with pytest.raises(TechniqueError, match=r"metric 'status': expected a name that is not a case column"):
        Result().add("status", 1.0)


def test_the_shown_set_column_does_not_overwrite_a_metric_of_that_name():
    from suite.cli.results import _numeric_overrides

    rows = [{"overrides": {"network.0.bandwidth": "20 Gbit/s"}, "set.network.0.bandwidth": 5.0},
            {"overrides": {"network.0.bandwidth": "40 Gbit/s"}}]
    _numeric_overrides(rows)
    assert rows[0]["set.network.0.bandwidth"] == 5.0  # the metric, as stored
    assert rows[1]["set.network.0.bandwidth"] == 40.0  # the swept value, in the unit the run shares


def test_a_metric_added_twice_warns_and_keeps_the_second_value():
    """A tryout's plugin added comm_time 1 s then 2 s: stored ok with 2 s and no word."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        r = Result().add("comm_time", 1.0, "s").add("comm_time", 2.0, "s")
    assert r["comm_time"] == 2.0
    (w,) = [x for x in got if issubclass(x.category, DeprecationWarning)]
    assert str(w.message).startswith("metric 'comm_time' added twice to one result")
