"""Every unit string the suite writes parses in the suite's pint registry and round-trips: count
units (samples, tokens, micro-batches, ...) are units of their own dimensions there."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import pytest

from suite.hardware.units import parse_unit, ureg

ROOT = Path(__file__).resolve().parents[1]
# res.add("name", value, "UNIT", ...) in the built-in plugins and the core (a value may subscript: x["k"])
_ADD = re.compile(r'\.add\(\s*"[A-Za-z_0-9]+",\s*[^,"\[]*(?:\[[^\]]*\][^,"\[]*)*,\s*"([^"]*)"')


@functools.cache  # (collection and the test below read the same files and plugins)
def _metric_units() -> frozenset[str]:
    found = set()
    for f in list((ROOT / "plugins").rglob("*.py")) + list((ROOT / "suite").rglob("*.py")):
        found |= set(_ADD.findall(f.read_text(encoding="utf-8")))
    return frozenset(found)


@functools.cache
def _param_units() -> frozenset[str]:
    from session_context import session_context

    return frozenset(p.unit for t in session_context().registry.techniques() for p in t.parameters.values() if p.unit)


def test_the_scan_finds_the_units_the_issue_names():
    units = _metric_units() | _param_units()
    assert {"samples/s", "samples", "tokens/s", "micro-batches", "s", "B"} <= units


@pytest.mark.parametrize("unit", sorted(_metric_units() | _param_units()))
def test_every_metric_and_parameter_unit_round_trips(unit):
    u = parse_unit(unit)
    assert parse_unit(str(u)) == u


def test_counts_convert_within_their_dimension_and_never_across():
    # 120 samples/s is 7,200 samples per minute (hand calculation: 120 x 60)
    assert (120 * parse_unit("samples/s")).to("sample/minute").magnitude == pytest.approx(7200.0)
    assert (3 * parse_unit("micro-batches")).to("micro_batch").magnitude == 3.0
    assert parse_unit("samples/s").dimensionality != parse_unit("tokens/s").dimensionality
    assert parse_unit("samples/s").dimensionality != ureg.Unit("1/s").dimensionality
    assert parse_unit("%") == ureg.percent and parse_unit("1") == ureg.dimensionless


def test_an_unknown_unit_is_one_line_naming_it():
    with pytest.raises(ValueError, match="unit 'wombats/s': not a unit of the suite's registry"):
        parse_unit("wombats/s")
