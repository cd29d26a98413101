"""Quantities with units: parse ``"400 Gbit/s"`` into SI floats with pint, never guessing.

Bits vs bytes and GB vs GiB are distinct (pint's ``bit``/``byte`` and SI/IEC prefixes). A value
without a unit, or with the wrong dimension, is an error naming the expected dimension and the
value given.
"""

from __future__ import annotations

import functools
from typing import Annotated

import pint
from pydantic import BeforeValidator

__all__ = [
    "ureg",
    "parse_quantity",
    "format_quantity",
    "BytesQ",
    "BandwidthQ",
    "FlopRateQ",
    "TimeQ",
    "PerByteTimeQ",
    "PowerQ",
    "MoneyQ",
    "FrequencyQ",
    "DIMENSIONS",
]


@functools.lru_cache(maxsize=1)
def _registry() -> pint.UnitRegistry:
    # pint's default definitions make ``bit`` dimensionless; we need bits and bytes to carry a
    # dimension so that "80 GiB" is never accepted where a time or a rate is expected.
    import importlib.resources

    text = (importlib.resources.files("pint") / "default_en.txt").read_text(encoding="utf-8")
    if "\nbit = []" not in text:  # pragma: no cover - a pint release changed its definitions
        raise RuntimeError("unexpected pint definitions: cannot give bits a dimension")
    text = text.replace("\nbit = []", "\nbit = [information]")
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        for fname in ("constants_en.txt",):
            src = importlib.resources.files("pint") / fname
            with open(os.path.join(tmp, fname), "w", encoding="utf-8") as fh:
                fh.write(src.read_text(encoding="utf-8"))
        defs = os.path.join(tmp, "default_en.txt")
        with open(defs, "w", encoding="utf-8") as fh:
            fh.write(text)
        reg = pint.UnitRegistry(defs)
    reg.define("FLOP = [flop] = flop")
    reg.define("USD = [currency] = usd")
    reg.define("EUR = nan * USD")  # currencies other than USD are not converted
    reg.define("Gbps = gigabit / second")
    reg.define("Mbps = megabit / second")
    reg.define("GBps = gigabyte / second")
    return reg


ureg = _registry()

# name -> (SI unit string, human description, example)
DIMENSIONS: dict[str, tuple[str, str, str]] = {
    "bytes": ("byte", "a size in bytes", '"80 GiB"'),
    "bandwidth": ("byte / second", "a bandwidth in bytes or bits per second", '"400 Gbit/s"'),
    "flop_rate": ("FLOP / second", "a compute rate", '"312 TFLOP/s"'),
    "time": ("second", "a time", '"2 us"'),
    "per_byte_time": ("second / byte", "a time per byte", '"0.8 ns/B"'),
    "power": ("watt", "a power", '"400 W"'),
    "money": ("USD", "an amount of money", '"32 USD"'),
    "frequency": ("hertz", "a frequency", '"1.41 GHz"'),
}


def parse_quantity(value: object, dimension: str) -> float:
    """Parse *value* (a string with a unit) into a float in the SI unit of *dimension*.

    Parameters
    ----------
    value : str or float
        ``"10 Gbit/s"``. A bare number is only accepted for ``0`` (the zero of any dimension)
        or when it is already a float produced by this function (re-validation of a model).
    dimension : str
        A key of :data:`DIMENSIONS`.

    Returns
    -------
    float
        The value in bytes, B/s, FLOP/s, s, s/B, W or USD.

    Raises
    ------
    ValueError
        With a message "expected <dimension> like <example>, got <value>".
    """
    si, what, example = DIMENSIONS[dimension]
    if isinstance(value, bool):
        raise ValueError(f"expected {what} like {example}, got {value!r}")
    if isinstance(value, (int, float)):
        # Already-normalised floats (model re-validation, programmatic construction) are SI.
        return float(value)
    if not isinstance(value, str):
        raise ValueError(f"expected {what} like {example}, got {value!r}")
    text = value.strip().replace("FLOPS", "FLOP/s").replace("flops", "FLOP/s")
    try:
        q = ureg.Quantity(text)
    except Exception:
        raise ValueError(f"expected {what} like {example}, got {value!r} (not a quantity)") from None
    if not isinstance(q, pint.Quantity) or q.dimensionless:
        raise ValueError(f"expected {what} like {example}, got {value!r} (no unit)")
    try:
        out = float(q.to(si).magnitude)
    except pint.DimensionalityError:
        raise ValueError(f"expected {what} like {example}, got {value!r} (dimension {q.dimensionality})") from None
    if out != out:  # NaN (e.g. an unconvertible currency)
        raise ValueError(f"expected {what} like {example}, got {value!r} (cannot convert to {si})")
    if out < 0:
        raise ValueError(f"expected {what} >= 0, got {value!r}")
    return out


def format_quantity(value: float, dimension: str) -> str:
    """Render an SI float in a readable unit (``2.5e10 B/s`` -> ``"25 GB/s"``)."""
    si = DIMENSIONS[dimension][0]
    q = ureg.Quantity(value, si)
    if dimension == "bytes":
        q = q.to_compact() if value < 1024 else _binary(q)
    else:
        q = q.to_compact()
    return f"{q.magnitude:.4g} {q.units:~P}"


def _binary(q: pint.Quantity) -> pint.Quantity:
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        if q.to("byte").magnitude >= ureg.Quantity(1, unit).to("byte").magnitude:
            return q.to(unit)
    return q.to("byte")


def _validator(dimension: str):
    def check(v: object) -> float:
        return parse_quantity(v, dimension)

    return BeforeValidator(check)


BytesQ = Annotated[float, _validator("bytes")]
BandwidthQ = Annotated[float, _validator("bandwidth")]
FlopRateQ = Annotated[float, _validator("flop_rate")]
TimeQ = Annotated[float, _validator("time")]
PerByteTimeQ = Annotated[float, _validator("per_byte_time")]
PowerQ = Annotated[float, _validator("power")]
MoneyQ = Annotated[float, _validator("money")]
FrequencyQ = Annotated[float, _validator("frequency")]
