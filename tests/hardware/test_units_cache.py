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
from suite.hardware.units import parse_quantity, format_quantity
print(parse_quantity("80 GiB", "bytes"), parse_quantity("400 Gbit/s", "bandwidth"), format_quantity(2.5e10, "bandwidth"))
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
    assert first[1] == "True"  # nothing cached yet: pint parsed them
    (cache,) = tmp_path.glob("units-*.json")
    assert json.loads(cache.read_text())
    second = _probe(tmp_path)
    assert second[0] == first[0]
    assert second[1] == "False"  # every answer came from the cache


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
