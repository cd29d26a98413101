"""Display-time scaling of metric values for people: a time in ``s`` shows as ``12.3 ms``, a size
in ``B`` as ``3.53 GiB``. Stored values, JSON, CSV and Parquet keep the technique's unit (bytes in
``B``, times in ``s``); only tables and figure labels scale.

Rules: times pick ns, us, ms, s (and min/h past an hour is left in s: results are compared, not
read as durations); byte sizes pick binary prefixes (KiB, MiB, GiB, TiB: memory is allocated in
powers of two); byte and FLOP rates and FLOP counts pick decimal prefixes (GB/s, TFLOP/s, as the
datasheets the profiles cite spell them). A whole column is scaled by one factor
(:func:`column_scale`), so one column has one unit and one number format.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from suite.results.codec import is_missing
from suite.results.scenarios import sort_key  # one order for every view (re-exported)

__all__ = ["scale_for", "column_scale", "format_value", "format_number", "sort_key", "geometric"]

_TIME = [(1e-9, "ns"), (1e-6, "us"), (1e-3, "ms"), (1.0, "s")]
_BIN = [(1.0, "B"), (2.0**10, "KiB"), (2.0**20, "MiB"), (2.0**30, "GiB"), (2.0**40, "TiB"), (2.0**50, "PiB")]
_DEC = [(1.0, ""), (1e3, "k"), (1e6, "M"), (1e9, "G"), (1e12, "T"), (1e15, "P"), (1e18, "E")]


def _ladder(unit: str) -> list[tuple[float, str]] | None:
    if unit == "s":
        return _TIME
    if unit == "B":
        return _BIN
    for base in ("B/s", "FLOP/s", "FLOP", "bit/s"):
        if unit == base:
            dec = {"": "", "k": "k", "M": "M", "G": "G", "T": "T", "P": "P", "E": "E"}
            return [(f, f"{dec[p]}{base}") for f, p in _DEC]
    return None


def scale_for(value: float, unit: str) -> tuple[float, str]:
    """The factor and display unit for one *value* in *unit* (``(1e-3, "ms")`` for 0.012 s).

    Units without a ladder (``1``, ``samples/s``, ``USD``) keep factor 1 and their own spelling.
    """
    ladder = _ladder(unit)
    if ladder is None or value is None or not math.isfinite(value) or value == 0:
        return 1.0, unit
    a = abs(value)
    chosen = ladder[0]
    for f, u in ladder:
        if a >= f * 0.9999:
            chosen = (f, u)
    return chosen


def column_scale(values: Iterable[float | None], unit: str) -> tuple[float, str]:
    """One factor and display unit for a whole column: the one that suits its median magnitude,
    so every cell of the column is in the same unit."""
    vals = sorted(abs(float(v)) for v in values if v is not None and isinstance(v, (int, float))
                  and not isinstance(v, bool) and math.isfinite(float(v)) and v != 0)
    if not vals:
        return 1.0, unit
    return scale_for(vals[len(vals) // 2], unit)


def format_number(v: float | None, digits: int = 4) -> str:
    """*digits* significant digits, never scientific notation between 1e-4 and 1e9; ``""`` for None/NaN."""
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return ""
    v = float(v)
    if v == 0:
        return "0"
    a = abs(v)
    if 1e-4 <= a < 1e9:
        decimals = max(0, digits - 1 - int(math.floor(math.log10(a))))
        s = f"{v:.{decimals}f}"
        if "." in s:
            s = s.rstrip("0").rstrip(".")
        return s
    return f"{v:.{digits - 1}e}"


def format_value(value: float | None, unit: str, digits: int = 4) -> str:
    """``0.0123, "s"`` -> ``"12.3 ms"``; ``3.79e9, "B"`` -> ``"3.531 GiB"``; ``2.5, "1"`` -> ``"2.5"``."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    f, u = scale_for(float(value), unit)
    text = format_number(float(value) / f, digits)
    return text if u in ("", "1", None) else f"{text} {u}"


def geometric(values: Iterable[float]) -> bool:
    """Whether swept *values* are spaced geometrically rather than linearly, so an axis over them
    reads better on a log scale: all positive, at least three distinct values spanning at least a
    factor 8, and the gaps between their logarithms more even than the gaps between the values
    (coefficient of variation; 1, 2, 4, 8, 16, 32 is geometric, 10, 20, 30, 40 is not)."""
    xs = sorted({float(v) for v in values})
    if len(xs) < 3 or xs[0] <= 0 or xs[-1] / xs[0] < 8:
        return False

    def cv(gaps: list[float]) -> float:
        m = sum(gaps) / len(gaps)
        return float((sum((g - m) ** 2 for g in gaps) / len(gaps)) ** 0.5 / m)

    lin = [b - a for a, b in zip(xs, xs[1:])]
    log = [math.log(b / a) for a, b in zip(xs, xs[1:])]
    return cv(log) <= cv(lin)
