"""What an evaluation receives and returns: scenarios (by name and resolved), metrics, results,
and :class:`Skip`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, TypeVar

from suite.declaration.vocabulary import DIRECTIONS
from suite.errors import ParameterError, TechniqueError
from suite.frozen import freeze

if TYPE_CHECKING:  # pragma: no cover
    from suite.hardware import Profile
    from suite.workloads import Workload

# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class Metric:
    """One measured or predicted quantity.

    ``unit`` is a pint-parsable unit string (``"s"``, ``"B"``, ``"samples/s"``, ``"1"`` for a
    dimensionless ratio). ``direction`` says which way is better: ``"lower"``, ``"higher"`` or
    ``"none"``. ``samples`` holds raw repeated measurements (execute fidelity) when there are any.
    """

    name: str
    value: float
    unit: str = "1"
    direction: str = "none"
    samples: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _METRIC_NAME.fullmatch(self.name):
            raise TechniqueError(f"metric {self.name!r}: expected a name of letters, digits and _ . - : / @ + "
                                 f"starting with a letter (no spaces, commas, quotes or brackets), got {self.name!r}")
        if self.name in _COLUMN_NAMES or self.name.startswith(("param.", "set.")):
            _column_name(self.name)
        if not isinstance(self.unit, str) or not _METRIC_UNIT.fullmatch(self.unit):
            raise TechniqueError(f"metric {self.name!r}: unit: expected a unit string without brackets, commas, "
                                 f"quotes or newlines (e.g. 's', 'B', 'samples/s', '1'), got {self.unit!r}")
        if self.direction not in DIRECTIONS:
            raise TechniqueError(f"metric {self.name!r}: direction must be one of {DIRECTIONS}, got {self.direction!r}")


#: The columns of a case in tables and exports (``suite results show``): a metric may not take
#: one of these names (nor ``param.*``), or it would overwrite the case's own field.
RESERVED_METRIC_NAMES = frozenset({"key", "technique", "variant", "fidelity", "profile", "workload", "seed",
                                   "status", "outcome", "error", "duration", "overrides", "run", "name", "unit",
                                   "value", "direction"})
#: Columns ``suite results show --format csv|json`` adds to a case (``set.PATH`` too): a metric of one
#: of these names is refused from dlsys-suite 0.4.0 and warned about before (until then the metric
#: keeps its column and the suite's is left out of that row)
SHOWN_COLUMN_NAMES = frozenset({"extrapolated", "other_code"})
#: Columns the report's case tables and ``suite compare`` show beside a case's parameters: a
#: parameter of one of these names (or a metric's) is headed ``param.NAME`` there, and warned about
#: when the technique is declared (refused from dlsys-suite 0.4.0)
PARAM_SHADOWED_COLUMNS = frozenset({"key", "run", "run_id", "technique", "variant", "fidelity", "profile", "workload",
                                    "seed", "status", "metric", "scenario"})
_COLUMN_NAMES = RESERVED_METRIC_NAMES | SHOWN_COLUMN_NAMES


def param_column(name: str, metrics: Iterable[str] = ()) -> str:
    """The heading of parameter *name* in the report and ``suite compare``: *name*, or
    ``param.NAME`` when it is also a case column (:data:`PARAM_SHADOWED_COLUMNS`) or one of
    *metrics* (the names of the metrics shown beside it), so ``variant=...`` always means the case's
    variant."""
    return f"param.{name}" if name in PARAM_SHADOWED_COLUMNS or name in set(metrics) else name


_METRIC_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.\-:/@+]*")


def _column_name(name: str) -> None:
    """Refuse (a case column) or warn about (a column `suite results show` adds) metric *name*."""
    if name in RESERVED_METRIC_NAMES or name.startswith("param."):
        raise TechniqueError(f"metric {name!r}: expected a name that is not a case column "
                             f"({', '.join(sorted(RESERVED_METRIC_NAMES))}, param.*), got {name!r}")
    import warnings

    warnings.warn(f"metric {name!r}: `suite results show` adds a column of that name ({', '.join(sorted(SHOWN_COLUMN_NAMES))}, "
                  "set.*); rename the metric: it is refused from dlsys-suite 0.4.0", DeprecationWarning, stacklevel=5)
_METRIC_UNIT = re.compile(r"[^\[\],\"'\n\r]*")


class MetricValueError(TechniqueError, ValueError):
    """A metric value that is not a number: a TechniqueError, and still the ValueError ``float``
    raised before 0.3.7 (a plugin that catches it keeps working)."""


def _number(name: str, value: Any, stacklevel: int = 3) -> float:
    """``float(value)``, or a TechniqueError naming the metric that shows a bounded part of *value*
    (``float`` of a 50 MB string raised a ValueError quoting all of it).

    A string, bytes or a boolean that ``float`` reads (``"1.5"``, ``True``) is no number either:
    it is converted and warns (``DeprecationWarning``; refused from dlsys-suite 0.4.0). The message
    names the metric and the type, not the value, so Python's warning registry shows it once per
    place in the plugin's code (``suite`` shows it once per worker), not once per case.
    """
    try:
        f = float(value)
    except (TypeError, ValueError):
        text = repr(value)
        shown = text if len(text) <= 80 else f"{text[:60]}... ({len(text):,} characters)"
        raise MetricValueError(f"metric {name!r}: expected a number, got {type(value).__name__} {shown}") from None
    if isinstance(value, (str, bytes, bytearray, bool)) or _numpy_text_or_bool(value):
        import warnings

        warnings.warn(f"metric {name!r}: expected a number, got {type(value).__name__} (stored as float() reads it); "
                      "pass a float: this is refused from dlsys-suite 0.4.0", DeprecationWarning, stacklevel=stacklevel)
    return f


def _numpy_text_or_bool(value: Any) -> bool:
    """Whether *value* is a numpy boolean, string or bytes that ``float`` reads: a scalar
    (``numpy.bool_``, no subclass of ``bool``) or a 0-d array of such a dtype (``numpy.array("2.5")``)."""
    return type(value).__module__ == "numpy" and getattr(getattr(value, "dtype", None), "kind", "") in ("b", "U", "S")


@dataclass
class Result:
    """What one evaluation returns: metrics by name, plus JSON-serialisable artifacts.

    Artifacts hold structured detail that is not a scalar metric (a timeline, a per-layer
    table, a loss curve, the chosen groups); they must be JSON-serialisable (lists, dicts,
    numbers, strings).
    """

    metrics: dict[str, Metric] = field(default_factory=dict)
    artifacts: dict[str, Any] = field(default_factory=dict)

    def add(self, name: str, value: float, unit: str = "1", direction: str = "none",
            samples: Sequence[float] | None = None) -> "Result":
        """Add (or replace) metric *name*: *value* in *unit* (a pint-parsable string), *direction*
        ``"lower"``, ``"higher"`` or ``"none"``, *samples* the raw repeated measurements.

        Raises
        ------
        TechniqueError
            *value* or a sample is not a number (a string, None, an array): the message shows at
            most 60 characters of it. A string or a boolean that ``float`` reads (``"1.5"``,
            ``True``) is stored converted and warns (``DeprecationWarning``): refused from
            dlsys-suite 0.4.0.

        A metric added twice replaces the first value and warns (``DeprecationWarning``; refused
        from dlsys-suite 0.4.0).
        """
        if name in self.metrics:
            import warnings

            warnings.warn(f"metric {name!r} added twice to one result (the second value replaced the first); "
                          "add each metric once: this is refused from dlsys-suite 0.4.0", DeprecationWarning, stacklevel=2)
        if samples is not None:
            given = tuple(samples)  # an iterator is read once
            # floats as they are; anything else through _number (raises naming a bad sample, warns on a string)
            samples = given if all(type(s) is float for s in given) else tuple(_number(name, s, 4) for s in given)
        # a float is kept as it is (the common case, no call); anything else through _number
        self.metrics[name] = Metric(name, value if type(value) is float else _number(name, value), unit, direction,
                                    samples)
        return self

    def __getitem__(self, name: str) -> float:
        return self.metrics[name].value

    def __contains__(self, name: str) -> bool:
        return name in self.metrics


@dataclass(frozen=True)
class Skip(Exception):
    """Raise from an evaluate function to decline a scenario that does not apply (benchopt's
    ``skip``): the case is stored with status ``skipped`` and the reason, never as a crash."""

    reason: str

    def __str__(self) -> str:
        return self.reason


def require_devices(profile: "Profile", n: int, what: str = "workers", have: int | None = None) -> None:
    """Decline (:class:`Skip`) a scenario that asks for more devices than its profile has.

    Placing more ranks than the profile holds would price nodes it does not have (the placement
    adds them), so a technique declines them with this one line:
    ``"{what}={n} but profile {name!r} has {have} devices"``.

    Parameters
    ----------
    profile : Profile
        The scenario's hardware profile (its ``name``, and ``num_devices`` unless *have* is given).
    n : int
        Devices asked for (workers, GPUs, ranks: one per device).
    what : str
        The parameter that asked, as the line names it (``"workers"``, ``"gpus"``, ``"ranks"``).
    have : int, optional
        The devices that may serve (e.g. those of one type of a mixed profile); default the
        profile's ``num_devices``.

    Raises
    ------
    Skip
        ``n > have``.
    """
    have = profile.num_devices if have is None else have
    if n > have:
        raise Skip(f"{what}={n} but profile {profile.name!r} has {have} devices")


def require_dataset(workload: "Workload | None", runs: str, *, priced: bool = True) -> "Workload | None":
    """The scenario's workload when an execute fidelity can train on it; decline (:class:`Skip`)
    any other, naming what the fidelity runs, so that its figures are never stored under the name
    of a network it did not run.

    Parameters
    ----------
    workload : Workload or None
        The scenario's resolved workload (None: the fidelity's own data, e.g. the digits).
    runs : str
        What the fidelity runs, as the line names it (``"NAME execute trains a softmax
        classifier on a classification dataset workload (e.g. digits)"``).
    priced : bool
        Whether another fidelity of the technique prices a layer table (the line says so);
        False where none does.

    Returns
    -------
    Workload or None
        *workload*: None, or a ``dataset`` workload with a local loader and classes.

    Raises
    ------
    Skip
        Any other workload: ``"{runs}; 'resnet-50' is a cnn (the model fidelity prices it)"``
        (without the parenthesis when not *priced*), or ``"...; 'higgs' is a dataset without a
        local loader or classes"``.
    """
    if workload is None:
        return None
    if workload.kind == "dataset":
        if getattr(workload, "loader", None) is not None and getattr(workload, "classes", None):
            return workload
        raise Skip(f"{runs}; {workload.name!r} is a dataset without a local loader or classes")
    raise Skip(f"{runs}; {workload.name!r} is a {workload.kind}" + (" (the model fidelity prices it)" if priced else ""))


#: what :func:`resolve_scale` counts in a profile by name (a callable counts anything else)
SCALE_COUNTS = ("nodes", "devices")


def resolve_scale(params: Mapping[str, Any], name: str, profile: "Profile | None", cap: int, *,
                  count: "str | Callable[[Profile], int]" = "devices", square: bool = False,
                  divides: int | None = None) -> int:
    """The scale a case runs at: its ``params[name]`` when set, else as much of the profile as the
    paper ran, at most.

    A technique whose scale parameter (nodes, GPUs, ranks, devices, data-parallel replicas) is
    left unset (None) runs on the profile's own count, capped at the paper's default, so a small
    profile runs at its size and a large one at the paper's.

    Parameters
    ----------
    params : Mapping[str, Any]
        The scenario's parameters; ``params[name]`` None or absent is unset.
    name : str
        The scale parameter (``"nodes"``, ``"gpus"``, ``"dp"``, ...).
    profile : Profile or None
        The scenario's hardware profile; None (no profile read) gives *cap*.
    cap : int
        The paper's default, in the parameter's unit (>= 1); returned as it is without a profile.
    count : "nodes", "devices" or callable
        What of the profile the parameter counts: ``profile.num_nodes`` (a cluster's nodes, any
        other profile 1), ``profile.num_devices`` (nodes x devices per node), or
        ``count(profile) -> int`` for any other unit (ranks on every node, replicas of a
        ``tp x pp`` plan, devices of one type); called only when the parameter is unset.
    square : bool
        Round down to a perfect square (a ``sqrt(P) x sqrt(P)`` process grid).
    divides : int, optional
        Round down to a divisor of *divides* (1 divides any; every count divides 0).

    Returns
    -------
    int
        ``int(params[name])`` when set (not checked: the declared ``Param`` range checks it);
        else *cap* without a profile; else ``min(cap, count)``, at least 1, rounded down as asked
        (4 nodes and a cap of 32: 4; 64 nodes: 32; 8 devices, a cap of 8 and ``square``: 4).

    Raises
    ------
    ValueError
        *cap* < 1, *count* not one of :data:`SCALE_COUNTS` or a callable, or both *square* and
        *divides* given (one line naming the argument).
    """
    if params.get(name) is not None:
        return int(params[name])
    if cap < 1:
        raise ValueError(f"resolve_scale({name!r}): cap: expected an int >= 1, got {cap!r}")
    if square and divides is not None:
        raise ValueError(f"resolve_scale({name!r}): expected square or divides, got both")
    if profile is None:
        return cap
    if callable(count):
        have = count(profile)
    elif count in SCALE_COUNTS:
        have = profile.num_nodes if count == "nodes" else profile.num_devices
    else:
        raise ValueError(f"resolve_scale({name!r}): count: expected one of {SCALE_COUNTS} or a callable, "
                         f"got {count!r}")
    n = max(1, min(cap, int(have)))
    if square:
        return math.isqrt(n) ** 2
    if divides is not None:
        return next(d for d in range(n, 0, -1) if divides % d == 0)
    return n


# --------------------------------------------------------------------------- scenarios


@dataclass(frozen=True)
class ScenarioSpec:
    """A scenario by name, as written in a claim or an experiment file (not yet resolved)."""

    variant: str
    profile: str | None = None
    workload: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    fidelity: str = "model"
    seed: int = 0
    overrides: Mapping[str, str] = field(default_factory=dict)  # profile field -> value with unit


@dataclass(frozen=True)
class Scenario:
    """A resolved scenario: what an evaluate function receives.

    ``profile`` is the resolved :class:`suite.hardware.Profile` (overrides applied) or ``None``;
    ``workload`` the resolved :class:`suite.workloads.Workload` or ``None``; ``params`` are
    validated and complete (defaults filled in). ``inputs`` holds, under the parameter's name,
    what each parameter declared with ``Param(..., ref=...)`` names: a Profile, a Workload or a
    file's bytes (absent when the parameter is None); read it with :meth:`input`.
    """

    technique: str
    variant: str
    fidelity: str
    profile: "Profile | None" = None
    workload: "Workload | None" = None
    params: Mapping[str, Any] = field(default_factory=dict)
    seed: int = 0
    inputs: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        _freeze_inputs(self.__dict__)

    @property
    def profile_name(self) -> str | None:
        return self.profile.name if self.profile is not None else None

    @property
    def workload_name(self) -> str | None:
        return self.workload.name if self.workload is not None else None

    def param(self, name: str) -> Any:
        return self.params[name]

    def input(self, name: str) -> Any:
        """The profile, workload or file bytes that parameter *name* (declared with
        ``Param(..., ref=...)``) names, None when the parameter is None or ``""``; or, for a *name* of the
        form ``"profile:NAME"`` / ``"workload:NAME"``, that input of :attr:`Technique.uses`.

        Raises
        ------
        ParameterError
            *name* is set but was not resolved (a scenario built by hand without its inputs, or a
            parameter declared without ``ref``).
        """
        if name in self.inputs:
            return self.inputs[name]
        if ":" in name:
            raise ParameterError(f"{self.technique}: input {name!r}: expected it resolved by the runner (declare it in "
                                 f"Technique(uses=...)), got a scenario without it")
        if self.params.get(name) in (None, ""):
            return None
        raise ParameterError(f"{self.technique}: parameter {name!r}: expected an input resolved by the runner "
                             f"(declare it with Param(..., ref=...)), got the bare name {self.params[name]!r}")


def _freeze_inputs(values: dict[str, Any]) -> None:
    """Freeze, in *values* (a :class:`Scenario`'s fields), what an evaluate function must not
    change: ``params`` and ``inputs`` become read-only copies, the workload is frozen in place
    (:func:`suite.frozen.freeze`; a frozen value is returned as it is)."""
    values["params"] = freeze(values["params"], "scenario.params")
    if values["inputs"]:
        values["inputs"] = freeze(dict(values["inputs"]), "scenario.inputs")
    if values["workload"] is not None:
        freeze(values["workload"], f"workload {getattr(values['workload'], 'name', '')!r}")


_T = TypeVar("_T")
_FIELD_NAMES: dict[type, frozenset[str]] = {}


def _check_fields(cls: type, values: dict[str, Any]) -> None:
    """Raise TypeError unless *values* names exactly the fields of the dataclass *cls*."""
    names = _FIELD_NAMES.get(cls)
    if names is None:
        names = _FIELD_NAMES[cls] = frozenset(f.name for f in fields(cls))
    if values.keys() != names:
        raise TypeError(f"{cls.__name__} fields: expected {sorted(names)}, got {sorted(values)}")


def built_as_dataclass(cls: type[_T], values: dict[str, Any]) -> _T:
    """``cls(**values)`` for the frozen dataclass *cls*, every field given, built without its
    ``__init__`` (one ``object.__setattr__`` per field, ~0.3 us each: a sweep builds a spec, a case
    and a scenario per case) and without running its ``__post_init__`` (the caller does what it
    does). *values* becomes the object's attribute dict.

    Raises
    ------
    TypeError
        *values* does not name exactly the fields of *cls*.
    """
    _check_fields(cls, values)
    return _build(cls, values)


def _build(cls: type[_T], values: dict[str, Any]) -> _T:
    obj = object.__new__(cls)
    obj.__dict__.update(values)
    return obj


def new_scenario(values: dict[str, Any]) -> Scenario:
    """``Scenario(**values)``, every field given: its inputs frozen as ``__post_init__`` freezes
    them (:func:`_freeze_inputs`), the object built by :func:`built_as_dataclass`.

    Raises
    ------
    TypeError
        *values* does not name exactly the fields of :class:`Scenario`.
    """
    _check_fields(Scenario, values)
    _freeze_inputs(values)
    return _build(Scenario, values)
