"""Quantities with units: parse ``"400 Gbit/s"`` into SI floats with pint, never guessing.

Bits vs bytes and GB vs GiB are distinct (pint's ``bit``/``byte`` and SI/IEC prefixes). A value
without a unit, or with the wrong dimension, is an error naming the expected dimension and the
value given.
"""

from __future__ import annotations

import functools
import math
import re
import os
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BeforeValidator, ValidationInfo

if TYPE_CHECKING:  # pint is imported when a quantity is first parsed that the cache does not hold
    from pathlib import Path

    import pint

__all__ = [
    "ureg",
    "parse_unit",
    "dimension",
    "convert",
    "to_base",
    "base_factor",
    "COUNT_UNITS",
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
    "POSITIVE",
    "dimension_of",
    "nonnegative_unit",
]


#: (pint's definition line, the suite's): bits carry a dimension, and "b" is the bit
_DEFINITION_EDITS = (("\nbit = []\n", "\nbit = [information] = b\n"),
                     ("\nbarn = 1e-28 * meter ** 2 = b\n", "\nbarn = 1e-28 * meter ** 2\n"),
                     ("\ngilbert = 1 / (4 * π) * biot_turn = Gb\n", "\ngilbert = 1 / (4 * π) * biot_turn\n"))


#: a sub-unit SI prefix on a bit or a byte ("1 mb/s", "100 mbps", "2 uB"): pint reads millibits,
#: a figure 10^9 below the megabits a network means; refused with the upper-case spelling offered
_SUB_PREFIX = {"m": "milli", "u": "micro", "µ": "micro", "n": "nano", "p": "pico", "c": "centi", "d": "deci",
               "f": "femto", "a": "atto", "z": "zepto", "y": "yocto"}
_SUB_UNIT_BITS = re.compile(r"(?<![A-Za-zµ])([munpµcdfazy])(bits?|bytes?|bps|b|B)(?![A-Za-z])")


def _refuse_sub_unit_bits(text: str, head: str) -> None:
    """ValueError (*head* and why) when *text* puts a sub-unit prefix on a bit or a byte: "1 mb/s"
    is read as millibits, a network's megabits written in lower case."""
    sub = _SUB_UNIT_BITS.search(text)
    if sub is not None:
        p, u = sub.group(1), sub.group(2)
        hint = f"; did you mean M{u} (mega)?" if p == "m" else ""
        raise ValueError(f"{head} ({p!r} is {_SUB_PREFIX[p]}: there is no {_SUB_PREFIX[p]}"
                         f"{'bit' if u[0] == 'b' else 'byte'}{hint})")


@functools.lru_cache(maxsize=1)
def _registry() -> "pint.UnitRegistry[Any]":
    # pint's default definitions make ``bit`` dimensionless; we need bits and bytes to carry a
    # dimension so that "80 GiB" is never accepted where a time or a rate is expected.
    import importlib.resources

    import pint

    # "b" is the bit, as a network's "7 Gb/s" and "100 Mb/s" mean: pint's barn ("b", so "Mb" was a
    # megabarn) and gilbert ("Gb") lose those symbols, units no benchmark measures.
    text = (importlib.resources.files("pint") / "default_en.txt").read_text(encoding="utf-8")
    for old, new in _DEFINITION_EDITS:
        if old not in text:  # pragma: no cover - a pint release changed its definitions
            raise RuntimeError(f"unexpected pint definitions: no {old.strip()!r} to replace")
        text = text.replace(old, new)
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
        reg: "pint.UnitRegistry[Any]" = pint.UnitRegistry(defs)
    reg.define("FLOP = [flop] = flop")
    reg.define("USD = [currency] = usd")
    reg.define("EUR = nan * USD")  # currencies other than USD are not converted
    reg.define("Gbps = gigabit / second")
    reg.define("Mbps = megabit / second")
    reg.define("GBps = gigabyte / second")
    import logging

    quiet = logging.getLogger("pint")
    level = quiet.level
    quiet.setLevel(logging.ERROR)  # "point" and "unit" replace pint's typographic point and micro-nit, on purpose
    try:
        for name in COUNT_UNITS:  # each count its own dimension: samples/s never adds to tokens/s
            reg.define(f"{name} = [{name}] = _ = {name}{'es' if name.endswith('ch') else 's'}")
    finally:
        quiet.setLevel(level)
    for name in ("define", "redefine", "load_definitions"):  # a definition after this one's: see _redefined
        if hasattr(reg, name):
            setattr(reg, name, _marking(reg, getattr(reg, name)))
    reg._suite_redefined = False  # type: ignore[attr-defined]
    return reg


def _marking(reg: Any, method: Any) -> Any:
    """*method* of registry *reg* (``define`` and the like), marking *reg* redefined when called."""
    @functools.wraps(method)
    def changes(*args: Any, **kwargs: Any) -> Any:
        reg._suite_redefined = True
        return method(*args, **kwargs)

    return changes


def _redefined() -> bool:
    """Whether the registry built in this process had a unit defined after the suite's own (a plugin's
    ``_registry().define("ms = 2 * second")`` in an in-process case): what it parses and converts is
    then no longer the suite's, and nothing more is kept in the on-disk cache (a later process, the
    plugin gone, would convert a built-in's seconds to milliseconds with the plugin's factor)."""
    return bool(_registry.cache_info().currsize) and bool(getattr(_registry(), "_suite_redefined", True))


#: Things a metric or a parameter counts, each a unit of its own dimension in the suite's registry
#: (plurals parse too: ``samples/s``, ``tokens/s``, ``micro_batches``). Spellings with a hyphen or
#: a space are mapped by :func:`parse_unit` (``micro-batches``, ``DSP slices``).
COUNT_UNITS = ("sample", "token", "sequence", "micro_batch", "layer", "unit", "node", "worker", "rank", "GPU",
               "device", "step", "epoch", "iteration", "element", "point", "row", "stage", "round", "replica",
               "peer", "thread", "shard", "request", "model", "generation", "feature", "cluster", "client",
               "block", "DSP_slice")
_SPELLINGS = {"micro-batches": "micro_batches", "micro-batch": "micro_batch", "DSP slices": "DSP_slices",
              "%": "percent"}


def parse_unit(text: str) -> "pint.Unit":
    """A unit string as the suite writes it (a metric's or a parameter's unit: ``"samples/s"``,
    ``"micro-batches"``, ``"B"``, ``"1"``, ``"%"``) as a unit of the suite's pint registry.

    Raises
    ------
    ValueError
        The text is no unit of the registry, or puts a sub-unit prefix on a bit or a byte (``mb``:
        millibits; one line naming it).
    """
    t = str(text).strip()
    for k, v in _SPELLINGS.items():
        t = t.replace(k, v)
    reg = _registry()
    if t in ("", "1"):
        return reg.dimensionless
    _refuse_sub_unit_bits(t, f"unit {text!r}: not a unit of the suite's registry")  # "mb/s": millibits
    try:
        return reg.Unit(t)
    except Exception as exc:  # noqa: BLE001 - pint raises several kinds
        raise ValueError(f"unit {text!r}: not a unit of the suite's registry ({type(exc).__name__})") from None


def dimension(unit: str) -> str:
    """The dimension of *unit* (a metric's unit as the suite writes it, :func:`parse_unit`) as pint
    writes it: ``"ms"`` and ``"s"`` -> ``"[time]"``, ``"GB/s"`` and ``"gigabyte / second"`` ->
    ``"[information] / [time]"``, ``"1"`` and ``"%"`` -> ``"dimensionless"``; a count is its own
    (``"samples/s"`` -> ``"[sample] / [time]"``). Kept in the cache of parsed quantities, so a unit an
    earlier process has seen builds no registry (~0.5 s).

    Raises
    ------
    ValueError
        *unit* is no unit of the registry (:func:`parse_unit`'s one line).
    """
    key = f"d|{unit}"
    hit = _cache().get(key)
    if hit is None:
        hit = str(parse_unit(unit).dimensionality)
        _remember(key, hit)
    return str(hit)


def convert(value: float, unit: str, to: str) -> float:
    """*value* in *unit* (a metric's unit as the suite writes it, :func:`parse_unit`) expressed in
    *to*: ``convert(0.1547, "s", "ms")`` -> 154.7.

    Raises
    ------
    ValueError
        Either unit is no unit of the registry, the two differ in dimension, or the registry fixes
        no rate between them (a currency's; one line naming both).
    """
    return float(value) * _factor(str(unit), str(to))


@functools.lru_cache(maxsize=1024)
def _factor(unit: str, to: str) -> float:
    """How many *to* one *unit* is (the suite's units are multiplicative): parsed and checked once
    per pair, so a column of converted values costs a multiplication each; kept (with a refusal's
    message) in the cache of parsed quantities, so a pair an earlier process converted builds no
    registry (~0.5 s: a wide load of techniques sharing a metric name in other units)."""
    return float(_kept(f"x|{unit}|{to}", lambda: _pint_factor(unit, to)))


@functools.lru_cache(maxsize=1024)
def base_factor(unit: str) -> tuple[float, str]:
    """How many of the registry's base units (bits, seconds) one *unit* is, and their name:
    ``"GB/s"`` -> ``(8e9, "bit / second")``, ``"Gbit/s"`` -> ``(1e9, "bit / second")``, ``"us"`` ->
    ``(1e-06, "second")``, ``""`` -> ``(1.0, "")``; so values of one dimension written in other
    units order and compare by ``value * factor``. Kept (with a refusal's message) in the cache of
    parsed quantities, as :func:`convert`'s factors are: an earlier process's unit builds no registry.

    Raises
    ------
    ValueError
        *unit* is no unit of the registry (:func:`parse_unit`'s one line).
    """
    fast = _table_base(unit)
    if fast is not None:
        return fast
    factor, base = _kept(f"b|{unit}", lambda: list(to_base(1.0, unit)))
    return float(factor), str(base)


#: each table dimension's SI unit (:data:`DIMENSIONS`) in the registry's base units: ``to_base(1, si)``
#: (a test checks it against pint), what :func:`base_factor` multiplies a shipped factor by
_SI_BASE: dict[str, tuple[float, str]] = {
    "bytes": (8.0, "bit"), "bandwidth": (8.0, "bit / second"), "flop_rate": (1.0, "FLOP / second"),
    "time": (1.0, "second"), "per_byte_time": (0.125, "second / bit"),
    "power": (1.0, "kilogram * meter ** 2 / second ** 3"), "money": (1.0, "USD"), "frequency": (1.0, "1 / second"),
}


def _table_base(unit: str) -> tuple[float, str] | None:
    """:func:`base_factor` of a unit the shipped table lists (``GB/s``, ``us``, ``GiB``), without pint
    (a sorted table of ``--set`` values built the registry, ~0.5 s, on an empty cache); else None."""
    from suite.hardware._unit_table import FACTORS

    u = unit.replace(" ", "")
    for dim, table in FACTORS.items():
        if u in table:
            k, base = _SI_BASE[dim]
            return table[u] * k, base
    return None


def _kept(key: str, compute: Any) -> Any:
    """``compute()`` (a JSON value), or its ValueError's message, kept in the cache of parsed
    quantities under *key*; a kept refusal is raised again as a ValueError."""
    hit = _cache().get(key)
    if hit is None:
        try:
            hit = compute()
        except ValueError as e:
            hit = str(e)
        _remember(key, hit)
    if isinstance(hit, str):
        raise ValueError(hit)
    return hit


def _pint_factor(unit: str, to: str) -> float:
    """:func:`_factor` through the unit registry."""
    ua, ub = parse_unit(unit), parse_unit(to)
    if ua.dimensionality != ub.dimensionality:
        raise ValueError(f"unit {unit!r} cannot be converted to {to!r} ({ua.dimensionality} is not "
                         f"{ub.dimensionality})")
    factor = float(_registry().Quantity(1.0, ua).to(ub).magnitude)
    if not math.isfinite(factor) or factor == 0.0:  # a rate the registry does not fix (EUR = nan * USD)
        raise ValueError(f"unit {unit!r} cannot be converted to {to!r} (no fixed rate between them)")
    return factor


@functools.lru_cache(maxsize=1024)
def to_base(value: float, unit: str) -> tuple[float, str]:
    """*value* in *unit* in the registry's base units (bits, seconds): ``(37.0, "us")`` ->
    ``(3.7e-05, "second")``; ``(1.25, "GB/s")`` and ``(10.0, "Gbit/s")`` -> ``(1e10, "bit / second")``;
    ``(8.0, "")`` -> ``(8.0, "")``.

    Raises
    ------
    ValueError
        *unit* is no unit of the registry (one line naming it).
    """
    q = _registry().Quantity(float(value), parse_unit(unit)).to_base_units()
    return float(q.magnitude), "" if q.dimensionless else str(q.units)


def __getattr__(name: str) -> Any:
    """``ureg``: the unit registry, built on first use (about 0.2 s plus pint's import), not at import."""
    if name == "ureg":
        return _registry()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# --- a cache of parsed and formatted quantities, kept on disk between processes --------------
# Parsing "80 GiB" needs pint's registry (about 0.5 s to import and build); the answers never change
# for a given pint release and this file, so they are cached by (text, unit) in a JSON file keyed
# by both. Only successful conversions are cached: a bad value always goes through pint again, so
# its error says exactly what pint says. SUITE_CACHE_DIR (or XDG_CACHE_HOME/dlsys-suite) is where;
# SUITE_NO_UNIT_CACHE=1 turns it off.
_CACHE: dict[str, Any] | None = None
_CACHE_NEW = 0
# suite.tamper: rebound by this module, not inputs; the registry is emptied after plugin code runs
__caches__ = ("_CACHE", "_CACHE_NEW", "_NUMBER_UNIT", "_registry", "_factor", "base_factor", "to_base", "nonnegative_unit")


def _cache_path() -> "Path | None":
    from pathlib import Path

    if os.environ.get("SUITE_NO_UNIT_CACHE"):
        return None
    from suite.cache import cache_dir

    base = cache_dir()
    import hashlib
    from importlib.metadata import PackageNotFoundError, version

    try:
        pv = version("pint")
    except PackageNotFoundError:  # pragma: no cover
        pv = "?"
    try:
        me = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:12]
    except OSError:  # pragma: no cover
        return None
    return Path(base) / f"units-{pv}-{me}.json"


def _cache() -> dict[str, Any]:
    global _CACHE
    if _CACHE is None:
        _CACHE = {}
        path = _cache_path()
        if path is not None:
            from suite.cache import read_json_dict

            _CACHE = read_json_dict(path)
            import atexit

            atexit.register(_save_cache)
    return _CACHE


def _remember(key: str, value: Any) -> None:
    global _CACHE_NEW
    c = _cache()
    if key not in c and len(c) < 100_000 and not _redefined():
        c[key] = value
        _CACHE_NEW += 1


def _save_cache() -> None:
    """Write the cache if this process added to it (merged with what another process wrote
    meanwhile, atomically; errors are ignored)."""
    if not _CACHE_NEW or _CACHE is None or _redefined():
        return
    path = _cache_path()
    if path is None:
        return
    from suite.cache import merge_json_dict

    merge_json_dict(path, _CACHE)

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


# Dimensions whose zero is meaningless (a zero bandwidth or compute rate is an error, not a value).
POSITIVE: frozenset[str] = frozenset({"bytes", "bandwidth", "flop_rate", "per_byte_time", "frequency"})


def parse_quantity(value: object, dimension: str, *, strict: bool = False, positive: bool | None = None) -> float:
    """Parse *value* (a string with a unit) into a float in the SI unit of *dimension*.

    Parameters
    ----------
    value : str or float
        ``"10 Gbit/s"``. A bare number (int/float) is taken as already in SI units, which is what
        programmatic construction and re-validation of a model need; with ``strict=True`` (every
        TOML file) a bare number is an error, so a profile always says its unit.
    dimension : str
        A key of :data:`DIMENSIONS`.
    strict : bool
        Reject bare numbers (the mode used for profile files).
    positive : bool, optional
        Require a value > 0 (default: for the dimensions in :data:`POSITIVE`); otherwise >= 0.

    Returns
    -------
    float
        The value in bytes, B/s, FLOP/s, s, s/B, W, USD or Hz.

    Raises
    ------
    ValueError
        One line "expected <what> like <example>, got <value> (<why>)". A size given in bits
        (``"80 Gbit"``) is an error: sizes are bytes; rates may be given in bits per second.
    """
    si, what, example = DIMENSIONS[dimension]
    positive = dimension in POSITIVE if positive is None else positive
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"expected {what} like {example}, got {value!r}")
    if isinstance(value, (int, float)):
        if strict:
            raise ValueError(f"expected {what} like {example}, got {value!r} (a bare number: write the unit, as a string)")
        out = float(value)
    else:
        text = value.strip().replace("FLOPS", "FLOP/s").replace("flops", "FLOP/s")
        _refuse_sub_unit_bits(text, f"expected {what} like {example}, got {value!r}")
        ckey = f"p|{si}|{dimension == 'bytes'}|{text}"
        fast = _fast_parse(text, dimension)
        hit = _cache().get(ckey) if fast is None else None
        if fast is not None:
            out = fast
        elif hit is not None:
            out = float(hit)
        else:
            out = _parse_with_pint(text, value, dimension, si, what, example)
            if out - out == 0.0:  # finite: a NaN or inf always goes through pint (and fails) again
                _remember(ckey, out)
    if out != out or out in (float("inf"), float("-inf")):  # NaN (e.g. an unconvertible currency) or inf
        raise ValueError(f"expected {what} like {example}, got {value!r} (cannot convert to a finite {si})")
    if positive and out <= 0:
        raise ValueError(f"expected {what} > 0 like {example}, got {value!r}")
    if out < 0:
        raise ValueError(f"expected {what} >= 0 like {example}, got {value!r}")
    return out


# --- the fast path: "<number> <unit>" against a table of pint's own factors, pint not imported ----
_NUMBER_UNIT = None


def _fast_parse(text: str, dimension: str) -> float | None:
    """*text* in SI when it is a plain ``"<number> <unit>"`` whose unit the shipped table
    (:mod:`suite.hardware._unit_table`) lists for *dimension*, else None (pint decides).

    The table holds the factor pint converts each unit with, and pint converts by one
    multiplication, so ``float(number) * factor`` is pint's answer bit for bit (tested against the
    registry, and the table against :func:`unit_table`). This is what keeps a new ``--set``
    quantity or an empty cache from importing pint and building its registry (~0.5 s of CPU).
    """
    global _NUMBER_UNIT
    if _NUMBER_UNIT is None:
        import re

        # a Python number literal (what pint's tokenizer reads), then the unit; "007" is no literal
        _NUMBER_UNIT = re.compile(r"(-?(?:(?:0|[1-9]\d*)(?:\.\d*)?|\d+\.\d*|\.\d+|\d+(?=[eE]))(?:[eE][+-]?\d+)?)"
                                  r"\s*([^\s\d.+-][^\s/]*(?:\s*/\s*[^\s/]+)?)")
    m = _NUMBER_UNIT.fullmatch(text)
    if m is None:
        return None
    from suite.hardware._unit_table import FACTORS

    factor = FACTORS[dimension].get(m.group(2).replace(" ", ""))
    return None if factor is None else float(m.group(1)) * factor


#: unit spellings tried for the table, per dimension (pint keeps those it parses to the dimension)
_DEC, _BIN, _SUB = ("", "k", "M", "G", "T", "P", "E"), ("Ki", "Mi", "Gi", "Ti", "Pi"), ("m", "u", "µ", "n", "p")


def _table_candidates() -> dict[str, list[str]]:
    sizes = [p + b for p in _DEC + _BIN for b in ("B", "byte", "bytes")]
    bits = [p + b for p in _DEC + _BIN for b in ("bit", "b")]
    secs = ["s"] + [p + "s" for p in _SUB]
    return {
        "bytes": sizes,
        "bandwidth": [f"{a}/{t}" for a in sizes + bits for t in ("s", "second")] + ["Gbps", "Mbps", "GBps"],
        "flop_rate": [f"{p}{f}/s" for f in ("FLOP", "flop") for p in _DEC],
        "time": secs + ["second", "seconds", "sec", "min", "minute", "minutes", "h", "hour", "hours"],
        "per_byte_time": [f"{t}/{b}" for t in secs for b in ("B", "byte", "kB", "KiB", "MB", "MiB", "GB", "GiB")],
        "power": ["W", "kW", "MW", "mW", "watt", "watts"],
        "money": ["USD"],
        "frequency": ["Hz", "kHz", "MHz", "GHz"],
    }


def unit_table() -> dict[str, dict[str, float]]:
    """Per dimension, unit spelling -> pint's factor to the dimension's SI unit (builds the registry).

    The source of :mod:`suite.hardware._unit_table`; a test compares the two, so a pint release
    that changes a factor fails there, not silently. Regenerate with
    ``python -c "from suite.hardware.units import write_unit_table; write_unit_table()"``.
    """
    out: dict[str, dict[str, float]] = {}
    for dim, spellings in _table_candidates().items():
        si, what, example = DIMENSIONS[dim]
        out[dim] = {}
        for u in spellings:
            try:
                out[dim][u] = _parse_with_pint(f"1 {u}", u, dim, si, what, example)
            except ValueError:  # not a unit pint knows, or not of this dimension (bits for a size)
                continue
    return out


def write_unit_table() -> None:
    """Write :func:`unit_table` to ``suite/hardware/_unit_table.py``."""
    from pathlib import Path

    lines = ['"""Generated by suite.hardware.units.write_unit_table from pint\'s registry: do not edit.\n\n'
             'Per dimension, unit spelling -> the factor pint converts it to SI with (see units._fast_parse)."""\n',
             "FACTORS = {"]
    for dim, tab in unit_table().items():
        lines.append(f"    {dim!r}: {{")
        lines += [f"        {u!r}: {f!r}," for u, f in tab.items()]
        lines.append("    },")
    lines.append("}\n")
    (Path(__file__).parent / "_unit_table.py").write_text("\n".join(lines), encoding="utf-8")


def _parse_with_pint(text: str, value: object, dimension: str, si: str, what: str, example: str) -> float:
    import pint

    try:
        q: Any = _registry().Quantity(text)
    except Exception:
        raise ValueError(f"expected {what} like {example}, got {value!r} (not a quantity)") from None
    if not isinstance(q, pint.Quantity) or not q._units:
        raise ValueError(f"expected {what} like {example}, got {value!r} (no unit)")
    if q.dimensionless:  # "2 ms/s", "3 percent": a unit, of no dimension
        raise ValueError(f"expected {what} like {example}, got {value!r} (wrong dimension: dimensionless)")
    if dimension == "bytes" and _has_bits(q):
        raise ValueError(f"expected {what} like {example}, got {value!r} (bits: a size must be given in bytes, "
                         f"B/kB/MB/GB or KiB/MiB/GiB)")
    try:
        return float(q.to(si).magnitude)
    except pint.DimensionalityError:
        raise ValueError(f"expected {what} like {example}, got {value!r} (wrong dimension "
                         f"{q.dimensionality})") from None


def _has_bits(q: Any) -> bool:
    """True when the unit of *q* counts information in bits (``Gbit``, ``Mibit``), not bytes."""
    return any("bit" in str(name) and "byte" not in str(name) for name in q._units)


def format_quantity(value: float, dimension: str) -> str:
    """Render an SI float in a readable unit (``2.5e10`` B/s -> ``"25 GB/s"``).

    Sizes are shown in decimal (GB) or binary (GiB) units, whichever needs fewer digits, so that a
    datasheet's "80 GB" and "32 GiB" both come back as written.
    """
    ckey = f"f|{dimension}|{float(value)!r}"
    hit = _cache().get(ckey)
    if hit is not None:
        return str(hit)
    out = _format_with_pint(value, dimension)
    _remember(ckey, out)
    return out


def _format_with_pint(value: float, dimension: str) -> str:
    ureg = _registry()
    si = DIMENSIONS[dimension][0]
    q: Any = ureg.Quantity(value, si)
    if dimension == "bytes" and value >= 1024:
        dec, binq = q.to_compact(), _binary(q)
        a, b = f"{dec.magnitude:.4g}", f"{binq.magnitude:.4g}"
        q = binq if len(b.replace(".", "")) < len(a.replace(".", "")) else dec
    elif dimension == "time" and value >= 60:
        q = q.to("hour") if value >= 3600 else q.to("minute")
    elif value != 0:
        q = q.to_compact()
    unit = f"{q.units:~P}".replace("flop", "FLOP").replace("usd", "USD")
    return f"{q.magnitude:.6g} {unit}"


def _binary(q: Any) -> Any:
    ureg = _registry()
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        if q.to("byte").magnitude >= ureg.Quantity(1, unit).to("byte").magnitude:
            return q.to(unit)
    return q.to("byte")


class _QuantityValidator:
    """Pydantic before-validator for one dimension; strict (no bare numbers) when the validation
    context says ``{"strict_units": True}`` (profile files), lenient (SI floats) otherwise."""

    def __init__(self, dimension: str):
        self.dimension = dimension

    def __call__(self, value: object, info: ValidationInfo) -> float:
        strict = bool(info.context and info.context.get("strict_units"))
        return parse_quantity(value, self.dimension, strict=strict)


def _validator(dimension: str) -> BeforeValidator:
    v = BeforeValidator(_QuantityValidator(dimension))
    return v


def dimension_of(metadata: list[Any]) -> str | None:
    """The quantity dimension declared by a field's metadata (``BytesQ`` -> ``"bytes"``), or None."""
    for m in metadata:
        func = getattr(m, "func", None)
        if isinstance(func, _QuantityValidator):
            return func.dimension
    return None


BytesQ = Annotated[float, _validator("bytes")]
BandwidthQ = Annotated[float, _validator("bandwidth")]
FlopRateQ = Annotated[float, _validator("flop_rate")]
TimeQ = Annotated[float, _validator("time")]
PerByteTimeQ = Annotated[float, _validator("per_byte_time")]
PowerQ = Annotated[float, _validator("power")]
MoneyQ = Annotated[float, _validator("money")]
FrequencyQ = Annotated[float, _validator("frequency")]


_NONNEG_DIMS = frozenset({"[time]", "[information]", "[flop]"})


@functools.lru_cache(maxsize=512)
def nonnegative_unit(unit: str) -> bool:
    """True when a quantity in *unit* cannot be negative: a time, a size in bytes or bits, a
    FLOP count, or a rate of any of these (``"s"``, ``"MiB"``, ``"GB/s"``, ``"TFLOP/s"``,
    ``"samples/s"``). Dimensionless units (``"1"``, ``"%"``) and units pint does not know (a
    count such as ``samples``) are not constrained, except a rate per second of such a count.
    """
    u = (unit or "").strip()
    if u in ("", "1", "%", "x"):
        return False
    try:
        dims: dict[str, Any] = dict(_registry().parse_units(u).dimensionality)
    except Exception:  # noqa: BLE001 - "samples/s", "img/s", "tokens/s": a count per time
        head, _, tail = u.partition("/")
        return bool(tail) and tail.strip() in ("s", "second", "h", "ms", "us") and bool(head.strip())
    if not dims:
        return False
    pos = {d for d, e in dims.items() if e > 0}
    neg = {d for d, e in dims.items() if e < 0}
    return pos <= _NONNEG_DIMS and (not neg or neg <= {"[time]"}) and bool(pos)
