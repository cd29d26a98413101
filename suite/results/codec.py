"""JSON as the store writes it: sorted keys, numpy converted, floats SQLite's json functions read
back (NaN as null, infinities as ``1e999``: metric values and every other text, artifacts included),
and the UTC timestamps of its rows."""

from __future__ import annotations

import json
import math
from json.encoder import encode_basestring_ascii
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from typing import Any

__all__ = ["dumps", "now", "js", "finite", "num", "metrics_json", "samples_json", "is_missing"]


def now() -> str:
    """The current UTC time as stored: ISO 8601 with milliseconds."""
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds")


def _json_default(o: Any) -> Any:
    try:
        import numpy as np

        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, np.generic):
            return o.item()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(o, (set, frozenset, tuple)):
        return list(o)
    raise TypeError(f"{type(o).__name__} is not JSON-serialisable")


# one encoder each, built once: json.dumps with options builds a new encoder per call (a third of
# the cost of a small object)
_encode = json.JSONEncoder(separators=(",", ":")).encode
#: the stored JSON's C encoder, built once (``JSONEncoder.encode`` builds one per call), without the
#: circular-reference check and refusing NaN and infinities (a value holding one, or a circular
#: one, is sent to :func:`_checked_dumps`); None where the ``_json`` accelerator is missing
_c_make_encoder = getattr(json.encoder, "c_make_encoder", None)  # not in the typing stubs
try:  # its positional signature is CPython's private one: any other is the plain path
    _c_dumps = (_c_make_encoder(None, _json_default, encode_basestring_ascii, None, ":", ",", True, False, False)
                if _c_make_encoder is not None else None)
except TypeError:  # pragma: no cover - another Python's accelerator
    _c_dumps = None
#: the json module's pure-Python encoder loop, which takes the float writer as an argument
_make_iterencode = getattr(json.encoder, "_make_iterencode")


def _checked_dumps(obj: Any) -> str:
    """:func:`dumps` by the pure-Python encoder: checks for circular values (``ValueError``), writes
    NaN and infinities as :func:`num` writes a metric value (null, ``±1e999``)."""
    return "".join(_make_iterencode({}, _json_default, encode_basestring_ascii, None, num, ":", ",", True,
                                    False, True)(obj, 0))


def dumps(obj: Any) -> str:
    """JSON as stored: sorted keys, numpy converted, NaN as null and infinities as ``1e999`` /
    ``-1e999`` (as metric values are: :func:`num`), so every text is valid JSON (a bare ``NaN``
    is not, and SQLite's json functions refuse it).

    Raises
    ------
    TypeError
        A value that is neither JSON, numpy nor a set/tuple (its type named).
    ValueError
        A circular value.
    """
    if _c_dumps is None:  # pragma: no cover - CPython always has the accelerator
        return _checked_dumps(obj)
    try:
        return "".join(_c_dumps(obj, 0))
    except (RecursionError, ValueError):  # circular (or deeper than the recursion limit), or NaN/inf
        return _checked_dumps(obj)


def js(v: Any) -> str:
    """A scalar as JSON (fast paths for the identity fields: None, plain strings, ints)."""
    if v is None:
        return "null"
    t = type(v)
    if t is str:
        if v.isascii() and v.isprintable() and '"' not in v and "\\" not in v:
            return f'"{v}"'
        return _encode(v)
    if t is int:
        return str(v)
    return _encode(v)


def finite(v: Any) -> float | None:
    """*v* as a float, or None when it is no number or NaN (infinities are kept)."""
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if not math.isnan(f) else None


def num(v: Any) -> str:
    """A metric value as JSON that SQLite's json functions read back: NaN (or no number) as null,
    infinities as ``1e999`` / ``-1e999`` (parsed as inf by SQLite and Python alike)."""
    f = finite(v)
    if f is None:
        return "null"
    if math.isinf(f):
        return "1e999" if f > 0 else "-1e999"
    return repr(f)


#: the caches of this module (emptied when full or on a restore): the load-time tamper check leaves them be
__caches__ = ('_PARTS',)
#: (name, unit, direction) -> the JSON text around a metric's value: a sweep repeats a few metrics
_PARTS: dict[tuple[Any, Any, Any], tuple[str, str]] = {}


def _parts(m: Sequence[Any]) -> tuple[str, str]:
    key = (m[0], m[2], m[3])
    try:
        return _PARTS[key]
    except KeyError:
        pass
    except TypeError:  # an unhashable name or unit: not kept
        return f"[{_encode(str(m[0]))},", f",{_encode(m[2])},{_encode(m[3])}]"
    if len(_PARTS) > 4096:
        _PARTS.clear()
    parts = _PARTS[key] = (f"[{_encode(str(m[0]))},", f",{_encode(m[2])},{_encode(m[3])}]")
    return parts


def metrics_json(metrics: Iterable[Sequence[Any]]) -> str:
    """``[[name, value, unit, direction], ...]`` of a result, all its metrics in one text (values
    as :func:`num` writes them)."""
    if not isinstance(metrics, (list, tuple)):
        metrics = list(metrics)  # read twice when a row is not four long
    out = []
    try:  # rows of four with hashable names and units (every runner's): unpacked, one look-up each
        for name, v, unit, direction in metrics:
            try:
                head, tail = _PARTS[name, unit, direction]
            except KeyError:
                head, tail = _parts((name, v, unit, direction))
            # a finite float (v - v == 0: not NaN, not infinite) is its repr; anything else through num()
            out.append(head + (repr(v) if type(v) is float and v - v == 0 else num(v)) + tail)
    except (TypeError, ValueError):  # another length, or an unhashable name: each row as it is
        return "[" + ",".join(_metric_json(m) for m in metrics) + "]"
    return "[" + ",".join(out) + "]"


def _metric_json(m: Sequence[Any]) -> str:
    head, tail = _parts(m)
    return head + num(m[1]) + tail


def samples_json(samples: Mapping[str, Iterable[Any]]) -> str:
    """``{metric: [value, ...]}`` of a result's raw samples, metrics sorted (values as :func:`num`)."""
    return "{" + ",".join(f"{_encode(str(k))}:[{','.join(num(v) for v in vals)}]"
                          for k, vals in sorted(samples.items())) + "}"


def is_missing(v: Any) -> bool:
    """A cell that holds no value: None or NaN (pandas' missing float)."""
    return v is None or (isinstance(v, float) and v != v)
