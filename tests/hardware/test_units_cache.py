"""The unit registry is built on first use, and parsed quantities are cached on disk, so a
command that only reads profiles does not import pint (issue 19: 0.5 s of every start-up)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from suite.hardware.units import format_quantity, parse_quantity

PROBE = """
import sys
from suite.hardware.units import parse_quantity, format_quantity, convert
print(parse_quantity("80 GiB", "bytes"), parse_quantity("400 Gbit/s", "bandwidth"), format_quantity(2.5e10, "bandwidth"))
try:
    convert(1.0, "samples/s", "tokens/s")
except ValueError as e:
    print(round(convert(0.1547, "s", "ms"), 9), e)
print("pint" in sys.modules)
"""


def _probe(tmp_path):
    env = {**os.environ, "SUITE_CACHE_DIR": str(tmp_path)}
    env.pop("SUITE_NO_UNIT_CACHE", None)
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split("\n")


def test_second_process_parses_from_the_cache_without_pint(tmp_path):
    first = _probe(tmp_path)
    # 80 GiB = 80 * 2**30 B; 400 Gbit/s = 400e9 / 8 B/s = 5e10 B/s
    assert first[0] == f"{80 * 2**30:.1f} {5e10:.1f} 25 GB/s"
    # a wide load's conversion (0.1547 s = 154.7 ms) and refusal are cached too
    converted = "154.7 unit 'samples/s' cannot be converted to 'tokens/s' ([sample] / [time] is not [token] / [time])"
    assert first[1] == converted
    assert first[2] == "True"  # nothing cached yet: pint parsed them
    (cache,) = tmp_path.glob("units-*.json")
    assert json.loads(cache.read_text())
    second = _probe(tmp_path)
    assert second[:2] == first[:2]
    assert second[2] == "False"  # every answer came from the cache


def test_bad_values_are_never_cached_and_fail_as_before():
    for _ in range(2):
        with pytest.raises(ValueError, match=r"expected a size in bytes like \"80 GiB\", got '80 Gbit' \(bits"):
            parse_quantity("80 Gbit", "bytes")
        with pytest.raises(ValueError, match=r"got '3 s' \(wrong dimension"):
            parse_quantity("3 s", "bytes")
    # a cached text still gets the per-call checks (sign, the bare-number rule)
    assert parse_quantity("2 us", "time") == pytest.approx(2e-6)
    with pytest.raises(ValueError, match="bare number"):
        parse_quantity(3.0, "time", strict=True)
    assert format_quantity(80 * 2**30, "bytes") == "80 GiB"


def test_shipped_unit_table_is_what_pint_says_now():
    # the fast path's factors are pint's own: a pint release that changes one fails here
    from suite.hardware import _unit_table, units

    assert _unit_table.FACTORS == units.unit_table()
    assert _unit_table.FACTORS["bandwidth"]["Gbit/s"] == 1e9 / 8  # a bit is an eighth of a byte
    assert _unit_table.FACTORS["bytes"]["GiB"] == 2.0**30
    assert "Gbit" not in _unit_table.FACTORS["bytes"]  # sizes are bytes: bits go to pint and fail


def test_fast_parse_equals_pint_bit_for_bit_on_every_table_unit():
    import random

    from suite.hardware import units
    from suite.hardware._unit_table import FACTORS

    rnd = random.Random(4)
    for dim, table in FACTORS.items():
        si, what, example = units.DIMENSIONS[dim]
        for unit in table:
            for _ in range(5):
                num = rnd.choice([str(rnd.randint(0, 10**7)), f"{rnd.uniform(0, 1e3):.{rnd.randint(1, 7)}f}",
                                  f"{rnd.uniform(1, 10):.4g}e{rnd.randint(-12, 15)}", f"-{rnd.randint(1, 99)}"])
                for text in (f"{num} {unit}", f"{num}{unit}"):
                    want = units._parse_with_pint(text, text, dim, si, what, example)
                    assert units._fast_parse(text, dim) == want, (text, dim)


@pytest.mark.parametrize("text", ["007 GB", "7 G bit/s", "2*3 GB", "1,000 GB", "inf GB", "10 GB/s/2", "5 gigaparsec"])
def test_texts_that_are_not_a_plain_number_and_unit_go_to_pint(text):
    from suite.hardware import units

    assert units._fast_parse(text, "bytes") is None and units._fast_parse(text, "bandwidth") is None


FAST_PROBE = """
import sys
from suite.hardware.units import parse_quantity
print(parse_quantity("7 Gbit/s", "bandwidth"), parse_quantity("1.41 GHz", "frequency"), "pint" in sys.modules)
"""


def test_plain_quantities_parse_without_pint_even_with_an_empty_cache(tmp_path):
    env = {**os.environ, "SUITE_CACHE_DIR": str(tmp_path)}
    env.pop("SUITE_NO_UNIT_CACHE", None)
    out = subprocess.run([sys.executable, "-c", FAST_PROBE], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == [repr(7e9 / 8), repr(1.41e9), "False"]


CARELESS = """
from suite.hardware.units import _registry, convert
print(convert(1.0, "h", "s"))  # the suite's factor, kept on disk
_registry().define("ms = 2 * second")  # a plugin's careless definitions, in this process
_registry().define("Gb = 1e9 * byte")
print(convert(1.0, "s", "ms"), convert(1.0, "Gb/s", "GB/s"))
"""


def test_a_definition_after_the_suites_keeps_nothing_more_on_disk(tmp_path):
    """A careless plugin's `_registry().define("ms = 2 * second")` in an `--in-process` case: the
    conversions that process made after it reached the on-disk unit cache, and a later process
    (the plugin uninstalled) converted a built-in's 2094 ms to 1.047."""
    env = {**os.environ, "SUITE_CACHE_DIR": str(tmp_path)}
    env.pop("SUITE_NO_UNIT_CACHE", None)
    out = subprocess.run([sys.executable, "-c", CARELESS], capture_output=True, text=True, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[:2] == ["3600.0", "0.5 1.0"]  # the plugin's own process: its units
    probe = "from suite.hardware.units import convert\nprint(convert(1.0, 'h', 's'), convert(1.0, 's', 'ms'), " \
            "convert(1.0, 'Gb/s', 'GB/s'))"
    later = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, timeout=120)
    assert later.stdout.split() == ["3600.0", "1000.0", "0.125"]  # a gigabit is an eighth of a gigabyte


def test_conversions_a_plugin_made_while_loading_are_forgotten(tmp_path):
    """The factors memo held 0.5 ms per s after a plugin defined `ms = 2 * second` at import and
    converted: `load(wide=True)` then printed poseidon's 2094 ms as 1.047 for the rest of the process.
    (A new interpreter: the registry this test rebuilds must not meet another test's quantities.)"""
    code = ("from suite.hardware import units\nfrom suite.tamper import checked, snapshot\n"
            "print(units.convert(1.0, 'h', 's'))\n"  # the memo holds something before the load ...
            "units._registry.cache_clear()\n"  # ... the registry not (a cached factor needs none)
            "snap = snapshot()\n"
            "units._registry().define('ms = 2 * second')\n"  # the plugin builds the registry and defines
            "print(units.convert(1.0, 's', 'ms'))\n"
            "checked(snap, 'careless')\n"
            "print(units.convert(1.0, 's', 'ms'))\n")
    env = {**os.environ, "SUITE_CACHE_DIR": str(tmp_path), "SUITE_NO_UNIT_CACHE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.split() == ["3600.0", "0.5", "1000.0"], out.stderr[-500:]


def test_sorting_quantities_of_the_shipped_units_builds_no_registry(tmp_path):
    """`suite run --set "network.-1.bandwidth=7 Gbit/s"` with an empty cache took 0.8 s instead of
    0.37: its table's sort (by value across units) built pint's registry for the factors. The
    shipped table's units need none; their factors are pint's (checked below)."""
    from suite.hardware.units import _SI_BASE, DIMENSIONS, _table_base, to_base

    assert _SI_BASE == {d: to_base(1.0, si) for d, (si, _h, _e) in DIMENSIONS.items()}
    for unit in ("GB/s", "Gbit/s", "us", "GiB", "TFLOP/s", "ns/B", "W", "GHz"):
        fast, pint_ = _table_base(unit), to_base(1.0, unit)
        assert fast is not None and fast[1] == pint_[1] and fast[0] == pytest.approx(pint_[0], rel=1e-12), unit
    code = ("import sys\nfrom suite.report.units import sort_key\n"
            "print(sorted(['20 Gbit/s', '1 GB/s', '4 Gbit/s', '2 us', '1 ms'], key=sort_key), 'pint' in sys.modules)")
    env = {**os.environ, "SUITE_CACHE_DIR": str(tmp_path), "SUITE_NO_UNIT_CACHE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    # by dimension (bits a second before seconds), then by value: 4 Gbit/s < 1 GB/s (8) < 20 Gbit/s
    assert out.stdout.strip() == "['4 Gbit/s', '1 GB/s', '20 Gbit/s', '2 us', '1 ms'] False", out.stderr[-500:]
