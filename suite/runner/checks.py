"""Result checks: what a stored number must satisfy, decided by the dimension of its unit.

One function, :func:`metric_problem`, says why a metric cannot be a result; the worker runs it
after each evaluation, the coordinator runs it again on every outcome before the store sees it
(:func:`check_outcome`, where a plugin's code never runs, so a plugin that patches its worker
cannot switch it off), and the conformance kit (:mod:`suite.testing.check`) uses it as well.

Non-negativity is decided by dimension (:func:`nonnegative_unit`), not by a list of unit strings:
a unit is a product of factors (``ms/iter``, ``J``, ``GB/s``, ``samples/s``, ``S``); each factor is
a number, a physical unit pint knows (a time, an energy, a power, a size in bytes or bits, a FLOP
count, a length, a mass, a conductance, ...), or a word pint does not know, read as a count
(``samples``, ``iter``, ``cycles``, ``layers``). A quantity whose every factor is one of these is
a magnitude and cannot be negative (a count unit the suite registers, `samples`, `tokens`, has its own
dimension, and counts as one). A dimensionless factor (``1``, ``%``, ``x``, an angle), a
currency (a saving can be negative) or a temperature (``degC``) leaves the sign free.

A metric whose technique declares its meaning (its vocabulary's or ``[metric_meanings]``' unit,
:meth:`suite.technique.Technique.meaning`) is held to the declared unit as well: ``comm_time``
declared in ``s`` cannot be negative even when a result labels it ``1`` or ``""``
(:func:`declared_units`). The lookup is made only for a negative value (never on the common path).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Any, overload

__all__ = ["metric_problem", "nonnegative_unit", "check_outcome", "declared_units", "DeclaredUnit", "unit_warning", "BadMetric", "bounded_error", "bounded_traceback",
           "MAX_ERROR_CHARS", "MAX_TRACEBACK_CHARS"]

from suite.errors import SuiteError


class BadMetric(SuiteError):
    """A metric that cannot be true (NaN, infinite, a negative time, size, energy or count): the case fails."""


#: words pint reads as an angle or a dimensionless ratio that are counts in a benchmark's units,
#: and count words of the suite's units decided without building pint's registry (~0.6 s CPU in a
#: fresh process): each is a count pint does not know or one the suite registers with a dimension
#: of its own ([sample], [layer], [node], ...), a magnitude either way
_COUNT_WORDS = frozenset({"cycle", "cycles", "turn", "turns", "count", "counts", "revolution", "revolutions",
                          "sample", "samples", "layer", "layers", "token", "tokens", "image", "images",
                          "iteration", "iterations", "iter", "iters", "step", "steps", "epoch", "epochs",
                          "request", "requests", "query", "queries", "node", "nodes", "element", "elements",
                          "message", "messages", "parameter", "parameters", "item", "items", "event", "events"})
_FREE = frozenset({"", "1", "%", "x", "ratio", "percent", "ppm"})
_FACTOR = re.compile(r"[*/·]|\s+")
#: common magnitude units, prefixed or not, decided without loading pint's registry (seconds of a
#: case's time budget on a loaded machine)
_COMMON = re.compile(r"(?:[YZEPTGMkKmuµnp]i?)?(?:s|sec|B|bit|bits|byte|bytes|FLOP|FLOPs|flop|J|W|Wh|Hz|S|m|g|"
                     r"h|min|d|day|days|hour|hours|second|seconds)")


def _factors(unit: str) -> list[str]:
    """The named factors of *unit* (``"ms/iter"`` -> ``["ms", "iter"]``), exponents removed."""
    out = []
    for tok in _FACTOR.split(unit.replace("**", "^")):
        tok = tok.strip().strip("()")
        if not tok:
            continue
        tok = tok.split("^")[0].strip()
        if tok:
            out.append(tok)
    return out


def _factor_kind(tok: str) -> str:
    """``"number"``, ``"magnitude"`` (a physical unit or a count) or ``"free"`` (sign unconstrained)."""
    try:
        float(tok)
        return "number"
    except ValueError:
        pass
    if tok.lower() in _FREE:
        return "free"
    if tok.lower() in _COUNT_WORDS or _COMMON.fullmatch(tok):
        return "magnitude"
    from suite.hardware.units import _registry

    try:
        u = _registry().parse_units(tok)
    except Exception:  # noqa: BLE001 - a word pint does not know ("samples", "iter"): a count
        return "magnitude" if re.fullmatch(r"[A-Za-z][A-Za-z_-]*", tok) else "free"
    dims = dict(u.dimensionality)
    if not dims or "[currency]" in dims or "[temperature]" in dims:
        return "free"
    # a physical base dimension, or a count the suite's registry gives its own ([sample], [token])
    return "magnitude"


@functools.lru_cache(maxsize=1024)
def nonnegative_unit(unit: str) -> bool:
    """True when a quantity in *unit* cannot be negative, decided by dimension (module doc):
    ``"s"``, ``"ms/iter"``, ``"J"``, ``"W"``, ``"GiB"``, ``"GB/s"``, ``"TFLOP/s"``, ``"cycles"``,
    ``"S"``, ``"samples/s"``, ``"1/s"`` are; ``"1"``, ``"%"``, ``"USD"``, ``"degC"`` are not."""
    u = (unit or "").strip()
    if u.lower() in _FREE:
        return False
    kinds = [_factor_kind(t) for t in _factors(u)]
    return "magnitude" in kinds and all(k != "free" for k in kinds)


def _nonfinite(x: float) -> bool:
    return x - x != 0.0  # NaN or +-inf (inf - inf and nan - nan are NaN)


#: metric name -> the unit its technique declares for it at the case's fidelity, or None (none declared)
DeclaredUnit = Callable[[str], str | None]


def declared_units(tech: Any, fidelity: str | None) -> DeclaredUnit:
    """The :data:`DeclaredUnit` lookup of *tech* (a :class:`suite.technique.Technique`) at
    *fidelity*: the unit of :meth:`~suite.technique.Technique.meaning` (the core's method, not an
    override); a lookup that raises reads as none declared. Built once per technique and fidelity."""
    from suite.technique import Technique

    known: dict[str, str | None] = {}

    def unit(name: str) -> str | None:
        if name in known:
            return known[name]
        try:
            meaning = Technique.meaning(tech, name, fidelity)
        except Exception:  # noqa: BLE001 - a broken declaration leaves the result's own unit to decide
            meaning = None
        known[name] = got = meaning.unit if meaning is not None else None
        return got

    return unit


def metric_problem(m: Any, declared: DeclaredUnit | None = None) -> str | None:
    """Why metric *m* (``name``, ``value``, ``unit``, ``samples``) cannot be stored, or None.

    NaN and infinity are never results; a negative value is impossible where the dimension of the
    unit the result gives, or of the unit *declared* gives for its name, cannot be negative
    (:func:`nonnegative_unit`). Raw samples are checked the same way.
    """
    return _problem(m.name, m.value, m.unit, m.samples, declared)


def _negative_problem(name: str, v: float, unit: str, declared: DeclaredUnit | None) -> str | None:
    """Why *v* < 0 cannot be a metric in *unit* (or in the unit *declared* gives *name*), or None."""
    if nonnegative_unit(unit):
        return f"metric {name!r} is {v:g} {unit}: expected >= 0 for a quantity in {unit}"
    meant = declared(name) if declared is not None else None
    if meant and nonnegative_unit(meant):
        return (f"metric {name!r} is {v:g} {unit}: expected >= 0 for a quantity in {meant} (its declared "
                f"unit; the result gives {unit!r})")
    return None


def _problem(name: str, v: Any, unit: str, samples: Any = None, declared: DeclaredUnit | None = None) -> str | None:
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return f"metric {name!r} is {type(v).__name__} {v!r}: expected a number"
    if samples is None:  # the common case, on the hot path of every sweep
        if _nonfinite(v):
            return f"metric {name!r} is {v} ({unit}): expected a finite number"
        return _negative_problem(name, v, unit, declared) if v < 0 else None
    vals = [v, *samples]
    for x in vals:
        if not isinstance(x, (int, float)) or _nonfinite(x):
            return f"metric {name!r} is {x} ({unit}): expected a finite number"
    lo = min(vals)
    return _negative_problem(name, lo, unit, declared) if lo < 0 else None


def _rows_problem(metrics: list[Any], samples: Any, declared: DeclaredUnit | None = None) -> str | None:
    """Why the metric rows of an ok outcome cannot be stored, or None (:func:`check_outcome`)."""
    by_name = samples if isinstance(samples, dict) else {}
    for row in metrics:
        if not (isinstance(row, (list, tuple)) and len(row) == 4 and isinstance(row[0], str)
                and isinstance(row[2], str)):
            return f"expected metric rows [name, value, unit, direction], got {row!r:.80}"
        v = row[1]
        # the common row, decided here: a finite float >= 0 without samples
        if type(v) is float and v - v == 0.0 and v >= 0.0 and (not by_name or row[0] not in by_name):
            continue
        bad = _problem(row[0], v, row[2], by_name.get(row[0]), declared)
        if bad:
            return bad
    return None


def unit_warning(technique: str, metric: str, unit: str) -> str | None:
    """The run's warning of a metric *unit* holding a control, format or bidirectional character
    (:func:`suite.textsafe.hides`: shown escaped on screen, ``ms\\x1b[2J``), or None; the run
    gives it once per technique and unit (not per case)."""
    from suite.textsafe import hidden_characters

    hidden = hidden_characters(unit)
    if not hidden:
        return None
    return (f"technique {technique!r}: metric {metric!r} unit: expected printable characters only, got "
            f"{', '.join(hidden)} in {unit!r}; a result with it is refused from dlsys-suite 0.4.0")


#: the most characters of a case's one-line error and of its traceback the store keeps (a plugin's
#: exception carrying a 50 MB message was stored four times over: 200 MB for one failed case)
MAX_ERROR_CHARS = 2_000
MAX_TRACEBACK_CHARS = 64 * 1024
_LINE_CHARS = 1_000


#: what a cut adds ("... [N more characters left out]"): a text at most this much over its limit was
#: cut already (the worker cuts, the coordinator checks again) and is left as it is
_NOTE_ROOM = 64


def _cut(text: str, limit: int) -> str:
    return f"{text[:limit]}... [{len(text) - limit:,} more characters left out]"


@overload
def bounded_error(text: str) -> str: ...
@overload
def bounded_error(text: Any) -> Any: ...
def bounded_error(text: Any) -> Any:
    """*text* cut to :data:`MAX_ERROR_CHARS` (the rest counted, not kept); anything else as it is."""
    return _cut(text, MAX_ERROR_CHARS) if isinstance(text, str) and len(text) > MAX_ERROR_CHARS + _NOTE_ROOM else text


@overload
def bounded_traceback(text: str) -> str: ...
@overload
def bounded_traceback(text: Any) -> Any: ...
def bounded_traceback(text: Any) -> Any:
    """*text* with each line cut to 1,000 characters and then its last
    :data:`MAX_TRACEBACK_CHARS` kept (a traceback's innermost frames are at its end)."""
    if not isinstance(text, str) or len(text) <= MAX_TRACEBACK_CHARS + _NOTE_ROOM:
        return text
    lines = [_cut(line, _LINE_CHARS) if len(line) > _LINE_CHARS else line for line in text.split("\n")]
    text = "\n".join(lines)
    if len(text) > MAX_TRACEBACK_CHARS:
        text = f"[{len(text) - MAX_TRACEBACK_CHARS:,} characters of outer frames left out]\n" + text[-MAX_TRACEBACK_CHARS:]
    return text


def check_outcome(out: dict[str, Any], technique: str, declared: DeclaredUnit | None = None) -> dict[str, Any]:
    """The coordinator's check of an outcome a worker returned (before the store sees it).

    An ``ok`` outcome whose metrics are not ``[name, value, unit, direction]`` rows of finite
    numbers, or hold an impossible value (also by the unit *declared* gives a metric:
    :func:`declared_units`), becomes ``failed`` with a one-line error naming the technique and the
    metric (the worker ran the same check; this one cannot be patched away by the plugin). An error or traceback longer than :data:`MAX_ERROR_CHARS` /
    :data:`MAX_TRACEBACK_CHARS` is cut (:func:`bounded_error`, :func:`bounded_traceback`). Other
    outcomes are returned as they are.
    """
    if out.get("status") != "ok":
        err, tb = out.get("error"), out.get("traceback")
        if ((isinstance(err, str) and len(err) > MAX_ERROR_CHARS + _NOTE_ROOM)
                or (isinstance(tb, str) and len(tb) > MAX_TRACEBACK_CHARS + _NOTE_ROOM)):
            out = dict(out, error=bounded_error(err), traceback=bounded_traceback(tb))
        return out
    metrics = out.get("metrics")
    samples = out.get("samples") or {}
    bad = _rows_problem(metrics, samples, declared) if isinstance(metrics, list) else \
        f"expected a list of metrics, got {type(metrics).__name__}"
    if bad is None:
        return out
    out = dict(out, status="failed", metrics=None, samples=None, artifacts=None,
               error=f"BadMetric: {technique}: {bad} (checked by the coordinator)")
    return out
