"""The types of the plugin contract: what a technique declares and what it returns.

A plugin builds one :class:`Technique` per published method and returns it from the
``suite_techniques`` hook (see :mod:`suite.hookspecs`). Everything here is plain data plus the
evaluation functions the plugin provides; the core never names a technique.

Vocabulary (docs/architecture.md): a *scenario* is (technique, variant, profile, workload, params, seed,
fidelity); a *claim* is a paper's number tied to one or more scenarios, with an acceptance fixed
before our number is seen.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from suite.errors import ParameterError, TechniqueError

if TYPE_CHECKING:  # pragma: no cover
    from suite.hardware import Profile
    from suite.workloads import Workload

__all__ = [
    "CATEGORIES",
    "FIDELITIES",
    "Paper",
    "Variant",
    "Param",
    "Metric",
    "Result",
    "Scenario",
    "ScenarioSpec",
    "Acceptance",
    "Approx",
    "AtLeast",
    "AtMost",
    "Between",
    "Exact",
    "Gain",
    "Ordered",
    "Null",
    "Assumption",
    "REASON_CLASSES",
    "Claim",
    "with_reasons",
    "Property",
    "Technique",
    "Skip",
    "CAPABILITIES",
    "KIT_OPT_OUTS",
    "DEFAULT_ORACLE_TOLERANCE",
    "VOCABULARIES",
    "Vocabulary",
]

_REF = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")


def is_reference(value: Any) -> bool:
    """Whether *value* is a ``"package.module:attribute"`` reference (:func:`resolve_reference`)."""
    return isinstance(value, str) and _REF.fullmatch(value) is not None


def resolve_reference(ref: str) -> Any:
    """The object a ``"package.module:attribute"`` reference names, importing its module.

    Plugins declare what is expensive to import (a fidelity's evaluate function, a profile
    extension's pydantic schema) as references, so that listing what a plugin provides imports
    none of it.

    Raises
    ------
    ValueError
        *ref* is not of that form.
    ImportError, AttributeError
        The module does not import or has no such attribute.
    """
    import importlib

    if not is_reference(ref):
        raise ValueError(f"expected a reference 'package.module:attribute', got {ref!r}")
    module, _, attr = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


CATEGORIES = (
    "communication",
    "memory",
    "fault-tolerance",
    "sgd",
    "kernels",
    "accelerators",
    "cluster-design",
    "data-systems",
)
FIDELITIES = ("model", "simulate", "execute")
DIRECTIONS = ("lower", "higher", "none")
#: Default checks of the conformance kit a technique may opt out of (``kit_opt_out``, with a reason)
KIT_OPT_OUTS = ("network-sensitivity", "oracle-agreement", "units")

#: ``oracle_error`` accepted when a technique declares no ``oracle_tolerance``
DEFAULT_ORACLE_TOLERANCE = 1e-8

#: Family checks of the conformance kit a technique may declare in ``capabilities``
#: (suite/testing/check.py, FAMILY_CHECKS); any other name is an error, never a skipped check.
CAPABILITIES = ("bytes-conserved", "alpha-beta-bound", "memory-capacity", "offload-balanced",
                "recovery-exact", "sgd-envelope", "oracle-exact", "network-sensitivity")


@dataclass(frozen=True)
class Vocabulary:
    """A metric vocabulary the techniques of one category share, so that they can be compared
    head to head (``suite run --category C``, ``suite report``).

    ``metrics`` maps each required metric to ``(unit, direction)``: the unit is the one a
    technique must report it in (bytes in ``B``, times in ``s``; tables scale for display only),
    the direction which way is better. The conformance kit checks that a technique declaring the
    vocabulary reports every one of them, in that unit, with that direction.
    """

    name: str
    category: str
    description: str
    metrics: Mapping[str, tuple[str, str]]


#: The shared metric vocabularies, by name. A technique speaks one by declaring
#: ``vocabulary="NAME"``; one that declares none keeps working and is compared on whatever
#: metrics it shares with the others.
VOCABULARIES: dict[str, Vocabulary] = {
    "data-parallel": Vocabulary(
        "data-parallel", "communication",
        "data-parallel training step: gradients exchanged every iteration",
        {"iteration_time": ("s", "lower"), "throughput": ("samples/s", "higher"), "speedup": ("1", "higher"),
         "comm_time": ("s", "lower"), "exposed_comm": ("s", "lower")}),
    "memory": Vocabulary(
        "memory", "memory", "training under a device-memory budget",
        {"peak_memory": ("B", "lower"), "iteration_time": ("s", "lower")}),
}


# --------------------------------------------------------------------------- metadata


@dataclass(frozen=True)
class Paper:
    """Bibliographic record of the paper a technique re-implements."""

    title: str
    authors: tuple[str, ...] = ()
    venue: str = ""
    year: int | None = None
    arxiv: str | None = None
    doi: str | None = None
    code: str | None = None

    def cite(self) -> str:
        who = self.authors[0] + (" et al." if len(self.authors) > 1 else "") if self.authors else ""
        parts = [p for p in (who, self.venue, str(self.year) if self.year else "") if p]
        ref = f"arXiv {self.arxiv}" if self.arxiv else (f"doi:{self.doi}" if self.doi else "")
        return f"{self.title} ({', '.join(parts)}{'; ' + ref if ref else ''})"


@dataclass(frozen=True)
class Variant:
    """One way to run a technique. Baselines are variants too, so a comparison is one sweep."""

    name: str
    description: str
    baseline: bool = False


_TYPES = {"int": int, "float": float, "str": str, "bool": bool}
_INT_LIMIT = 2**53  # larger integers are not exact as floats: a typo (1e308), never a parameter


def _has_unit(text: str) -> bool:
    t = text.strip()
    try:
        float(t)
        return False
    except ValueError:
        return any(ch.isalpha() for ch in t) and t.lower() not in ("inf", "-inf", "nan", "infinity")


def _to_unit(text: str, unit: str, where: str) -> float:
    """``"64 MiB"`` -> its magnitude in *unit* (the parameter's declared unit), with pint."""
    from suite.hardware.units import ureg

    try:
        q = ureg.Quantity(text.strip())
        return float(q.to(unit).magnitude)
    except Exception:  # noqa: BLE001 - pint raises several kinds: one line for all
        raise ParameterError(f"{where}: expected a number or a quantity convertible to {unit}, got {text!r}") from None


#: What a parameter can declare itself to be (:attr:`Param.role`).
PARAM_ROLES = (None, "scale", "efficiency")

#: What a parameter may name (:attr:`Param.ref`).
REF_KINDS = ("profile", "workload", "file")


@dataclass(frozen=True)
class Param:
    """A declared technique parameter: type, default, unit and allowed range.

    Values are validated by :meth:`validate` before a case runs; a bad value raises
    :class:`~suite.errors.ParameterError` with one line naming the parameter, what was expected
    and what was given.

    ``measured`` is the range the paper measured, ``(low, high)`` in the parameter's unit: a case
    outside it is still run, and is flagged *extrapolated* (:meth:`extrapolated`) in ``suite
    results show`` and the scoreboard, since nothing in the paper checks the model there.

    ``role="scale"`` marks the parameter that sets the technique's size, counted in its ``unit``
    (``"GPUs"``, ``"devices"``, ``"workers"``, ``"ranks"``: one device each; ``"nodes"``: the
    profile's devices per node each, or ``devices_each``); a category sweep sets it so every
    technique runs on the same number of GPUs. ``role="efficiency"`` marks an achieved fraction
    of peak that a head-to-head sets to one shared value.

    ``ref`` declares that the (string) value names an input, resolved by the runner before the
    case runs: ``"profile"`` (a hardware profile), ``"workload"`` (a workload) or ``"file"`` (a
    file path, read once). The resolved input is in :attr:`Scenario.inputs` under the
    parameter's name (:meth:`Scenario.input`), frozen like the scenario's own profile, and its
    content hash is part of the case key, so editing what it names makes new cases. A model never
    looks an input up by name itself.
    """

    type: type = float
    default: Any = None
    unit: str = ""
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple | None = None
    help: str = ""
    optional: bool = False  # None is an accepted value (e.g. "use the profile's figure")
    measured: tuple[float, float] | None = None  # the paper's measured range (low, high)
    role: str | None = None  # "scale" (the technique's size) or "efficiency" (achieved fraction of peak)
    devices_each: int | None = None  # a scale in nodes: devices one node counts (None: the profile's)
    ref: str | None = None  # the value names an input: one of REF_KINDS

    def __post_init__(self):
        if self.role not in PARAM_ROLES:
            raise TechniqueError(f"Param role: expected one of {', '.join(map(str, PARAM_ROLES))}, got {self.role!r}")
        if self.ref is not None and self.ref not in REF_KINDS:
            raise TechniqueError(f"Param: ref: expected one of {list(REF_KINDS)} or None, got {self.ref!r}")
        if self.ref is not None and self.type is not str:
            raise TechniqueError(f"Param: ref={self.ref!r}: expected type=str (the value is a name), "
                                 f"got type={getattr(self.type, '__name__', self.type)}")

    def extrapolated(self, value: Any) -> str | None:
        """Why *value* lies outside the paper's measured range, or None (inside, or no range)."""
        if self.measured is None or value is None or isinstance(value, (str, bool)):
            return None
        lo, hi = self.measured
        try:
            v = float(value)
        except (TypeError, ValueError):
            return None
        if v < lo:
            return f"{value:g} < {lo:g}, the smallest the paper measured"
        if v > hi:
            return f"{value:g} > {hi:g}, the largest the paper measured"
        return None

    def validate(self, name: str, value: Any, *, technique: str = "") -> Any:
        where = f"{technique}: parameter {name!r}" if technique else f"parameter {name!r}"
        if value is None:
            if self.optional:
                return None
            raise ParameterError(f"{where}: expected {self.type.__name__}, got None")
        if isinstance(value, str) and self.unit and self.type in (int, float) and _has_unit(value):
            value = _to_unit(value, self.unit, where)
        try:
            if self.type is bool and isinstance(value, str):
                low = value.strip().lower()
                if low not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(value)
                v: Any = low in ("true", "1", "yes")
            elif self.type is int:
                if isinstance(value, bool):
                    raise ValueError(value)
                if isinstance(value, float) and not value.is_integer():
                    raise ValueError(value)
                if isinstance(value, str):
                    txt = value.strip().replace("_", "")
                    if txt.lstrip("+-").isdigit():
                        v = int(txt)
                    else:
                        fv = float(txt)
                        if not fv.is_integer() or abs(fv) > _INT_LIMIT:
                            raise ValueError(value)
                        v = int(fv)
                elif isinstance(value, float):
                    if abs(value) > _INT_LIMIT:
                        raise ValueError(value)
                    v = int(value)
                else:
                    v = int(value)
            elif self.type is float:
                if isinstance(value, bool):
                    raise ValueError(value)
                v = float(value)
                if not math.isfinite(v):
                    raise ValueError(value)
            else:
                v = self.type(value)
        except (TypeError, ValueError):
            raise ParameterError(f"{where}: expected {self.type.__name__}, got {value!r}") from None
        if self.type is int and abs(v) > _INT_LIMIT:  # an integer, but a typo's size (99999999999999999999999)
            raise ParameterError(f"{where}: expected an integer of magnitude <= 2**53, got {value!r}")
        if self.choices is not None and v not in self.choices:
            raise ParameterError(f"{where}: expected one of {list(self.choices)}, got {v!r}")
        unit = f" {self.unit}" if self.unit else ""
        if self.minimum is not None and v < self.minimum:
            raise ParameterError(f"{where}: expected >= {self.minimum}{unit}, got {v!r}")
        if self.maximum is not None and v > self.maximum:
            raise ParameterError(f"{where}: expected <= {self.maximum}{unit}, got {v!r}")
        return v


def read_data(package: str, name: str, encoding: str | None = "utf-8") -> "str | bytes":
    """Read the data file *name* that ships inside the plugin package *package* (``__name__`` of
    a module of it will do), the one way a model reads a data file (a coefficient table, a
    trace shipped with the plugin).

    Every file inside the technique's package is part of its code fingerprint, hence of every
    case key (:func:`suite.runner.case.package_fingerprint`): editing the file makes new cases,
    so a stored result is never served for the old contents. A file outside the package is
    refused (declare a user-supplied file as ``Param(..., ref="file")`` instead).

    Parameters
    ----------
    package : str
        A module or package name of the plugin (its top-level package is used).
    name : str
        The path of the file relative to the top-level package folder (``"coefficients.json"``).
    encoding : str or None
        Text encoding; None returns the bytes.

    Raises
    ------
    TechniqueError
        *name* leaves the package folder or the file does not exist.
    """
    import importlib
    from pathlib import Path

    top = package.split(".")[0]
    mod = importlib.import_module(top)
    roots = [Path(p).resolve() for p in getattr(mod, "__path__", ())]
    for root in roots:
        path = (root / name).resolve()
        if not path.is_relative_to(root):
            raise TechniqueError(f"{top}: data file {name!r}: expected a path inside the package, got one outside it")
        if path.is_file():
            data = path.read_bytes()
            return data if encoding is None else data.decode(encoding)
    raise TechniqueError(f"{top}: data file {name!r}: expected a file inside the package ({', '.join(map(str, roots))}), "
                         f"got none")


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

    def __post_init__(self):
        if not isinstance(self.name, str) or not _METRIC_NAME.fullmatch(self.name):
            raise TechniqueError(f"metric {self.name!r}: expected a name of letters, digits and _ . - : / @ + "
                                 f"starting with a letter (no spaces, commas, quotes or brackets), got {self.name!r}")
        if self.name in RESERVED_METRIC_NAMES or self.name.startswith("param."):
            raise TechniqueError(f"metric {self.name!r}: expected a name that is not a case column "
                                 f"({', '.join(sorted(RESERVED_METRIC_NAMES))}, param.*), got {self.name!r}")
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
_METRIC_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.\-:/@+]*")
_METRIC_UNIT = re.compile(r"[^\[\],\"'\n\r]*")


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
        self.metrics[name] = Metric(name, float(value), unit, direction,
                                    tuple(float(s) for s in samples) if samples is not None else None)
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

    def __post_init__(self):
        from suite.frozen import freeze

        object.__setattr__(self, "params", freeze(self.params, "scenario.params"))
        if self.inputs:
            object.__setattr__(self, "inputs", freeze(dict(self.inputs), "scenario.inputs"))
        if self.workload is not None:
            freeze(self.workload, f"workload {getattr(self.workload, 'name', '')!r}")

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


# --------------------------------------------------------------------------- claims


class Acceptance:
    """How a claim's number is judged. Fixed before our number is seen (docs/verdicts.md, Tolerances)."""

    paper: Any = None

    def check(self, ours: Any) -> bool:  # pragma: no cover - abstract
        raise NotImplementedError

    def describe(self) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def ratio(self, ours: Any) -> float | None:
        try:
            p = float(self.paper)
            o = float(ours)
        except (TypeError, ValueError):
            return None
        return o / p if p != 0 else None

    def band(self) -> tuple[float, float] | None:
        """The closed interval of scalar values this acceptance passes, or None when it is not
        one interval (an ordering, a tuple, a string)."""
        return None

    def excludes(self, value: Any) -> bool:
        """Whether this acceptance rejects *value* by its construction, whatever the paper's
        number: such a value, as a null, could never have landed in the band (``no gain`` = 1.0
        under :class:`Gain`, a tie under :class:`Ordered`), so it is not evidence
        (docs/verdicts.md, Nulls)."""
        return False

    def unreachable(self, domain: tuple[float, float] | None, ours: Any = None) -> str:
        """Why a pass or a fail was impossible before any run, or ``""`` when both were possible.

        Parameters
        ----------
        domain : (low, high) or None
            The values the claim's value can take (``(0, 1)`` for an accuracy; for an ordering,
            each entry's); None: the whole real line.
        ours : any
            Our value (an ordering reads the other entries from it, a margin over a computed
            baseline being only reachable if the baseline leaves room).

        Returns
        -------
        str
            One line naming the band and the domain (docs/verdicts.md, Claim defects).
        """
        b = self.band()
        if b is None or domain is None:
            return ""
        lo, hi = b
        a, z = float(domain[0]), float(domain[1])
        if hi < a or lo > z:
            return f"the band [{lo:.4g}, {hi:.4g}] lies outside the values the claim can take [{a:g}, {z:g}]: it cannot pass"
        if lo <= a and hi >= z:
            return f"the band [{lo:.4g}, {hi:.4g}] covers every value the claim can take [{a:g}, {z:g}]: it cannot fail"
        return ""


@dataclass(frozen=True)
class Approx(Acceptance):
    """The paper's value within a relative tolerance: ``|ours/paper - 1| <= rel``."""

    paper: float
    rel: float = 0.2

    def check(self, ours: Any) -> bool:
        return math.isfinite(float(ours)) and abs(float(ours) - self.paper) <= self.rel * abs(self.paper)

    def describe(self) -> str:
        return f"{self.paper:g} ± {self.rel:.0%}"

    def band(self) -> tuple[float, float]:
        d = self.rel * abs(self.paper)
        return (self.paper - d, self.paper + d)


@dataclass(frozen=True)
class AtLeast(Acceptance):
    paper: float

    def check(self, ours: Any) -> bool:
        return float(ours) >= self.paper

    def describe(self) -> str:
        return f">= {self.paper:g}"

    def band(self) -> tuple[float, float]:
        return (float(self.paper), math.inf)


@dataclass(frozen=True)
class AtMost(Acceptance):
    paper: float

    def check(self, ours: Any) -> bool:
        return float(ours) <= self.paper

    def describe(self) -> str:
        return f"<= {self.paper:g}"

    def band(self) -> tuple[float, float]:
        return (-math.inf, float(self.paper))


@dataclass(frozen=True)
class Between(Acceptance):
    low: float
    high: float

    @property
    def paper(self) -> str:  # type: ignore[override]
        return f"[{self.low:g}, {self.high:g}]"

    def check(self, ours: Any) -> bool:
        return self.low <= float(ours) <= self.high

    def describe(self) -> str:
        return f"in [{self.low:g}, {self.high:g}]"

    def band(self) -> tuple[float, float]:
        return (float(self.low), float(self.high))


@dataclass(frozen=True)
class Exact(Acceptance):
    """Exact equality: counts, orderings (a tuple of variant names), booleans."""

    paper: Any

    def check(self, ours: Any) -> bool:
        if isinstance(self.paper, (list, tuple)):
            return tuple(ours) == tuple(self.paper)
        return ours == self.paper

    def describe(self) -> str:
        if isinstance(self.paper, (list, tuple)):
            return "(" + ", ".join(map(str, self.paper)) + ")"
        return str(self.paper)

    def ratio(self, ours: Any) -> float | None:
        if isinstance(self.paper, (list, tuple, str, bool)):
            return None
        return super().ratio(ours)

    def band(self) -> tuple[float, float] | None:
        if isinstance(self.paper, (int, float)) and not isinstance(self.paper, bool):
            return (float(self.paper), float(self.paper))
        return None


@dataclass(frozen=True)
class Gain(Acceptance):
    """An "x-times faster" / "y% better" claim, judged on the gain (docs/verdicts.md, Tolerances).

    ``paper`` is the ratio as the paper states it (``15.5`` for "15.5x"; ``1.244`` for "24.4%
    better"); our value is the same ratio. Accepted when ``|(ours - 1) - (paper - 1)| <= rel *
    |paper - 1|``, so the band can never contain "no gain" (1.0) for ``rel < 1``.
    """

    paper: float
    rel: float = 0.2

    def __post_init__(self):
        if self.paper == 1.0:
            raise TechniqueError("Gain: a paper ratio of exactly 1.0 claims no gain; use Approx")

    def check(self, ours: Any) -> bool:
        o = float(ours)
        g = self.paper - 1.0
        return math.isfinite(o) and abs((o - 1.0) - g) <= self.rel * abs(g)

    def band(self) -> tuple[float, float]:
        g = self.paper - 1.0
        lo, hi = 1.0 + g - self.rel * abs(g), 1.0 + g + self.rel * abs(g)
        return (lo, hi)

    def excludes(self, value: Any) -> bool:
        """No gain (1.0) is outside every gain band with ``rel < 1``."""
        try:
            v = float(value)
        except (TypeError, ValueError):
            return False
        return self.rel < 1.0 and v == 1.0

    def describe(self) -> str:
        lo, hi = self.band()
        return f"{self.paper:g}x (gain ± {self.rel:.0%}: [{lo:.4g}, {hi:.4g}])"


@dataclass(frozen=True)
class Ordered(Acceptance):
    """An ordering of labelled values with a margin: "A faster than B faster than C".

    ``paper`` is the labels from best to worst; our value is a mapping label -> value (``derive``
    returns it). Accepted when each consecutive pair differs by more than ``margin`` (relative, in
    the better direction): ``lower=True`` means smaller is better (times); a tie fails.
    """

    paper: tuple[str, ...]
    margin: float = 0.02
    lower: bool = True

    def check(self, ours: Any) -> bool:
        vals = [float(ours[k]) for k in self.paper]
        if not all(math.isfinite(v) for v in vals):
            return False
        for a, b in zip(vals, vals[1:]):
            if self.lower and not a * (1.0 + self.margin) < b:
                return False
            if not self.lower and not a > b * (1.0 + self.margin):
                return False
        return True

    def describe(self) -> str:
        sym = " < " if self.lower else " > "
        return sym.join(self.paper) + f" (margin {self.margin:.0%})"

    def ratio(self, ours: Any) -> float | None:
        return None

    def excludes(self, value: Any) -> bool:
        """A tie (every entry equal) fails every ordering with a margin >= 0."""
        try:
            vals = {float(value[k]) for k in self.paper}
        except (TypeError, ValueError, KeyError, IndexError):
            return False
        return len(vals) == 1 and self.margin >= 0

    def unreachable(self, domain: tuple[float, float] | None, ours: Any = None) -> str:
        """An ordering cannot pass when some entry would have to beat the next one's computed
        value by the margin beyond the domain's edge (a 2% margin over an accuracy of 0.985
        needs more than 1.0)."""
        if domain is None or ours is None:
            return ""
        try:
            vals = [float(ours[k]) for k in self.paper]
        except (TypeError, ValueError, KeyError):
            return ""
        a, z = float(domain[0]), float(domain[1])
        for (ka, _va), (kb, vb) in zip(zip(self.paper, vals), list(zip(self.paper, vals))[1:]):
            if self.lower:
                need = vb / (1.0 + self.margin)
                if need <= a:
                    return (f"{ka} would need a value below {need:.4g} ({kb} = {vb:.4g} less the {self.margin:.0%} "
                            f"margin), below the smallest value it can take ({a:g}): it cannot pass")
            else:
                need = vb * (1.0 + self.margin)
                if need >= z:
                    return (f"{ka} would need a value above {need:.4g} ({kb} = {vb:.4g} plus the {self.margin:.0%} "
                            f"margin), above the largest value it can take ({z:g}): it cannot pass")
        return ""


#: Why a claim is not reproduced (``Claim.reason_class``; docs/verdicts.md, Reason classes).
REASON_CLASSES = ("missing mechanism", "setup unknown", "baseline not modelled", "source imprecise")


@dataclass(frozen=True)
class Assumption:
    """A model assumption a claim's verdict depends on, with the value at which it flips.

    Parameters
    ----------
    name : str
        What is assumed (``"link bandwidth (GB/s)"``).
    value : any
        The value the model uses.
    flip_at : any
        The value at which the verdict changes (found by sweeping the assumption), or None
        when no value in the range swept flips it (``note`` says which range).
    sourced : bool
        True when *value* comes from a stated source (``source``), False when it is our
        assumption; the scoreboard marks verdicts resting on an unsourced one.
    source, note : str
    """

    name: str
    value: Any
    flip_at: Any = None
    sourced: bool = False
    source: str = ""
    note: str = ""

    def __post_init__(self):
        if self.sourced and not self.source.strip():
            raise TechniqueError(f"assumption {self.name!r}: sourced=True needs `source` (where the value comes from)")

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "value": self.value, "flip_at": self.flip_at, "sourced": self.sourced,
                "source": self.source, "note": self.note}


@dataclass(frozen=True)
class Null:
    """A null prediction: what a trivial or baseline explanation would give for a claim.

    A claim is ``reproduced`` only if our value is inside its band and every null's value is
    outside it; a null inside the band makes the verdict ``not discriminating`` (docs/verdicts.md,
    Nulls).

    Give exactly one of:

    * ``variants``: variant substitutions, e.g. ``{"poseidon": "wfbp"}``. The claim's scenarios
      are evaluated again with every spec whose variant is a key replaced by its value, and the
      claim's value is derived from those results (the baseline at the same scenario);
    * ``value``: the trivial predictor's value itself (``1.0`` for no gain, ``16.0`` for ideal
      scaling on 16 nodes, ``0.0`` for zero communication), with ``label`` saying which;
    * ``derive``: a function of the claim's own results (label -> Result) giving the null's value,
      for a null the model computes at the claim's resolved scenario (e.g. ideal additive gain
      read from a metric of the claim's case): its inputs are the case's, resolved and keyed.
      Judged like a ``value`` null.
    """

    label: str
    variants: Mapping[str, str] | None = None
    value: Any = None
    derive: Callable[[Mapping[str, Any]], Any] | None = field(default=None, repr=False)

    def __post_init__(self):
        if sum(x is not None for x in (self.variants, self.value, self.derive)) != 1:
            raise TechniqueError(f"null {self.label!r}: give exactly one of `variants`, `value` or `derive`")

    def substitute(self, specs: Mapping[str, "ScenarioSpec"]) -> dict[str, "ScenarioSpec"]:
        """The claim's specs with this null's variant substitutions applied."""
        import dataclasses

        out = {}
        for label, spec in specs.items():
            v = (self.variants or {}).get(spec.variant)
            out[label] = dataclasses.replace(spec, variant=v) if v is not None else spec
        return out


@dataclass(frozen=True)
class Claim:
    """A number (or ordering) from the paper, tied to the scenario(s) that reproduce it.

    Either give ``scenario`` and ``metric`` (our value is that metric of that case), or give
    ``cases`` (label -> ScenarioSpec) and ``derive`` (a function from label -> Result to our
    value, e.g. a ratio of two variants or an ordering).

    ``source`` names where in the paper the number is (``"abstract"``, ``"Table 4"``);
    ``verified`` is True only if the number was read in the paper itself (its text or abstract),
    False when it comes from a secondary source (the authors' code or blog, a third-party summary).
    ``note`` explains assumptions, and why a claim is not
    reproduced when it is not.

    ``nulls`` are the null predictions that must fall outside the band for the verdict
    ``reproduced`` (:class:`Null`); at least one must be computed and able to land in the band
    (a variant null, or a value null the acceptance does not exclude by construction), else the
    best verdict is ``reproduced (no null)``. A claim with none gives ``null_reason`` (a count,
    an exact value, a memory size with no trivial alternative); the conformance kit fails a
    claim with neither. ``measured`` marks a claim judged on execute-fidelity timings on this
    machine. ``unit`` is the unit of a derived value (``"MB"``), shown beside ours and the
    paper's number; a ``metric`` claim's unit is its metric's, and a :class:`Gain` reads as ``x``.

    The rules are docs/verdicts.md. Further fields:

    ``domain``
        ``(low, high)``, the values the claim's value can take (``(0, 1)`` for an accuracy; each
        entry's for an ordering), or a function of the results returning it (a ratio over a
        computed baseline); a band that cannot pass or cannot fail inside it is a ``claim defect``.
    ``defect``
        A defect of the claim found by reading it (a band tighter than the source's own
        precision): the verdict is ``claim defect`` with this reason.
    ``reason_class`` and ``reason``
        Why the claim is not reproduced when it is not: one of :data:`REASON_CLASSES` and one
        line naming the missing mechanism, the unknown setting and its flip point, the baseline
        we do not model or the source's imprecision.
    ``assumptions``
        The :class:`Assumption` s the verdict depends on, each with its flip point.
    """

    id: str
    statement: str
    source: str
    verified: bool
    expect: Acceptance
    scenario: ScenarioSpec | None = None
    metric: str | None = None
    cases: Mapping[str, ScenarioSpec] | None = None
    derive: Callable[[Mapping[str, Result]], Any] | None = None
    note: str = ""
    nulls: tuple[Null, ...] = ()
    null_reason: str = ""
    measured: bool = False
    unit: str = ""
    domain: tuple[float, float] | Callable[[Mapping[str, Result]], tuple[float, float]] | None = None
    defect: str = ""
    reason_class: str | None = None
    reason: str = ""
    assumptions: tuple[Assumption, ...] = ()

    def __post_init__(self):
        if self.reason_class is not None and self.reason_class not in REASON_CLASSES:
            raise TechniqueError(f"claim {self.id!r}: reason_class: expected one of {', '.join(REASON_CLASSES)}, "
                                 f"got {self.reason_class!r}")
        if isinstance(self.assumptions, Assumption):
            object.__setattr__(self, "assumptions", (self.assumptions,))
        elif not isinstance(self.assumptions, tuple):
            object.__setattr__(self, "assumptions", tuple(self.assumptions))
        if self.scenario is None and not self.cases:
            raise TechniqueError(f"claim {self.id!r}: give `scenario` (+ `metric`) or `cases` (+ `derive`)")
        if self.scenario is not None and self.metric is None and self.derive is None:
            raise TechniqueError(f"claim {self.id!r}: a single-scenario claim needs `metric`")
        if self.cases and self.derive is None:
            raise TechniqueError(f"claim {self.id!r}: `cases` needs a `derive` function")
        if isinstance(self.nulls, Null):
            object.__setattr__(self, "nulls", (self.nulls,))
        elif not isinstance(self.nulls, tuple):
            object.__setattr__(self, "nulls", tuple(self.nulls))

    def specs(self) -> dict[str, ScenarioSpec]:
        """Every scenario this claim needs, by label (``"main"`` for ``scenario``)."""
        out: dict[str, ScenarioSpec] = {}
        if self.scenario is not None:
            out["main"] = self.scenario
        if self.cases:
            out.update(self.cases)
        return out

    def value(self, results: Mapping[str, Result]) -> Any:
        """Our value from the results of :meth:`specs` (same labels)."""
        if self.derive is not None:
            return self.derive(results)
        main = results["main"]
        if self.metric not in main:
            raise TechniqueError(f"claim {self.id!r}: metric {self.metric!r} is not among the metrics its case "
                                 f"reports ({', '.join(sorted(main.metrics)) or 'none'})")
        return main[self.metric]

    def value_domain(self, results: Mapping[str, Result]) -> tuple[float, float] | None:
        """``domain``, called on *results* when it is a function."""
        return self.domain(results) if callable(self.domain) else self.domain


def with_reasons(claims: Sequence[Claim], reasons: Mapping[str, tuple[str, str]],
                 assumptions: Mapping[str, Sequence[Assumption]] | None = None) -> list[Claim]:
    """*claims* with the reason class and reason of each "not reproduced" and the assumptions
    that decide verdicts, given by claim id (docs/verdicts.md, Reason classes).

    Parameters
    ----------
    claims : sequence of Claim
    reasons : mapping of claim id -> (reason_class, reason)
        ``reason_class`` one of :data:`REASON_CLASSES`.
    assumptions : mapping of claim id -> sequence of Assumption, optional

    Returns
    -------
    list of Claim
        The claims in the same order, those named with the fields set.

    Raises
    ------
    TechniqueError
        An id that names no claim (a typo would silently leave a claim unexplained), or a
        reason class outside :data:`REASON_CLASSES`.
    """
    import dataclasses

    assumptions = assumptions or {}
    ids = {c.id for c in claims}
    unknown = sorted((set(reasons) | set(assumptions)) - ids)
    if unknown:
        raise TechniqueError(f"with_reasons: expected claim ids among {', '.join(sorted(ids))}, got {', '.join(unknown)}")
    out = []
    for c in claims:
        kw: dict[str, Any] = {}
        if c.id in reasons:
            kw["reason_class"], kw["reason"] = reasons[c.id]
        if c.id in assumptions:
            kw["assumptions"] = tuple(c.assumptions) + tuple(assumptions[c.id])
        out.append(dataclasses.replace(c, **kw) if kw else c)
    return out


# --------------------------------------------------------------------------- properties


@dataclass(frozen=True)
class Property:
    """A declared invariant the conformance kit checks under hypothesis-generated inputs.

    ``check(technique, scenario)`` raises ``AssertionError`` with a message when the invariant
    does not hold for that scenario; the kit generates the scenarios (random valid profiles of
    the kinds the technique accepts, its variants, small parameters).
    """

    name: str
    description: str
    check: Callable[["Technique", Scenario], None]


# --------------------------------------------------------------------------- technique


@dataclass
class Technique:
    """One published method, as a plugin declares it.

    Parameters
    ----------
    name : str
        Unique identifier (``"poseidon"``); lower-case, digits and ``-``.
    title : str
        One line for listings.
    category : str
        One of :data:`CATEGORIES`.
    paper : Paper
    variants : list of Variant
        At least one baseline.
    parameters : dict of str -> Param
    fidelities : dict of str -> callable or str
        Fidelity name (``model``, ``simulate``, ``execute``) -> ``evaluate(scenario) -> Result``,
        or a reference ``"package.module:function"`` to it, imported the first time that
        fidelity runs (:meth:`fidelity`). References keep a technique's declaration importable
        without its execute code, so listing techniques stays fast; a reference that does not
        import is a :class:`~suite.errors.TechniqueError` for that technique's cases only.
    claims : list of Claim
    properties : list of Property
    version : str
        The technique's version; part of every case key, so bump it when results change.
    default_profile, default_workload : str or None
        What ``suite run --technique T`` uses when none is given.
    default_workloads : mapping of fidelity -> str
        A fidelity's own default workload, where ``default_workload`` is one that fidelity cannot
        run (``{"execute": "sbm-graph"}``: real arrays of a small generated graph).
    needs_profile, needs_workload : bool
        Whether a scenario must name a profile / workload.
    profile_kinds : tuple of str
        Which profile kinds the model accepts (``device``, ``node``, ``cluster``, ``measured``).
    capabilities : frozenset of str
        Family checks of the conformance kit that apply (e.g. ``{"bytes-conserved"}``).
    smoke : sequence of ScenarioSpec
        Small scenarios that run in well under a second (conformance kit, smoke experiment).
    validation : sequence of ScenarioSpec
        Scenarios ``suite validate`` runs at both execute and model fidelity (defaults to
        ``smoke`` when empty).
    vocabulary : str or None
        The shared metric vocabulary (a key of :data:`VOCABULARIES`) the technique reports, so
        it is compared head to head with its category; None: none declared.
    headline_metrics : tuple of str
        The metrics ``suite results show`` puts first (default: the vocabulary's metrics).
    oracle_tolerance : float or None
        The largest ``oracle_error`` an execute result may report (the metric's own scale, e.g.
        the largest absolute difference from the oracle); a case above it is stored ``failed``,
        and the kit's ``oracle-agreement`` check holds the smoke cases to it. None: not declared
        (:data:`DEFAULT_ORACLE_TOLERANCE` applies, as a warning in 0.2).
    kit_opt_out : mapping of str -> str
        Default checks of the conformance kit that do not apply, each with the written reason
        (``{"network-sensitivity": "..."}``; names from :data:`KIT_OPT_OUTS`); ``suite plugins``
        shows them.
    uses : tuple of str
        Inputs every case reads besides its own profile and workload, by a fixed name:
        ``"profile:NAME"`` or ``"workload:NAME"`` (a reference device whose calibrated figure
        stands in for a missing one, the devices of a fixed grid, a dataset an execute run
        trains on). The runner resolves each through the command's context into
        :attr:`Scenario.inputs` under that string (``scenario.input("profile:NAME")``) and
        hashes its content into the case key. An input that depends on a parameter's value is
        a ``Param(..., ref=...)`` instead.
    """

    name: str
    title: str
    category: str
    paper: Paper
    variants: list[Variant]
    fidelities: dict[str, Callable[[Scenario], Result] | str]
    parameters: dict[str, Param] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    properties: list[Property] = field(default_factory=list)
    version: str = "0.1.0"
    default_profile: str | None = None
    default_workload: str | None = None
    default_workloads: Mapping[str, str] = field(default_factory=dict)  # fidelity -> workload, over default_workload
    needs_profile: bool = True
    needs_workload: bool = True
    profile_kinds: tuple[str, ...] = ("device", "node", "cluster", "measured")
    capabilities: frozenset[str] = frozenset()
    smoke: Sequence[ScenarioSpec] = ()
    validation: Sequence[ScenarioSpec] = ()
    docs: str = ""  # path of the docs page, relative to the repository root
    vocabulary: str | None = None
    headline_metrics: tuple[str, ...] = ()
    oracle_tolerance: float | None = None
    kit_opt_out: Mapping[str, str] = field(default_factory=dict)
    uses: tuple[str, ...] = ()

    def __post_init__(self):
        import re

        if not re.fullmatch(r"[a-z][a-z0-9-]*", self.name or ""):
            raise TechniqueError(f"technique name must be lower-case letters, digits and '-', got {self.name!r}")
        if self.category not in CATEGORIES:
            raise TechniqueError(f"technique {self.name!r}: category must be one of {CATEGORIES}, got {self.category!r}")
        if not self.variants:
            raise TechniqueError(f"technique {self.name!r}: declares no variants")
        names = [v.name for v in self.variants]
        if len(set(names)) != len(names):
            raise TechniqueError(f"technique {self.name!r}: duplicate variant names {names}")
        if not any(v.baseline for v in self.variants):
            raise TechniqueError(f"technique {self.name!r}: no variant is marked baseline=True")
        bad = [f for f in self.fidelities if f not in FIDELITIES]
        if bad or not self.fidelities:
            raise TechniqueError(f"technique {self.name!r}: fidelities must be a non-empty subset of {FIDELITIES}, got {list(self.fidelities)}")
        for fid, ref in self.fidelities.items():
            if isinstance(ref, str):
                if not is_reference(ref):
                    raise TechniqueError(f"technique {self.name!r}: fidelity {fid!r}: expected a callable or a reference "
                                         f"'package.module:function', got {ref!r}")
            elif not callable(ref):
                raise TechniqueError(f"technique {self.name!r}: fidelity {fid!r}: expected a callable or a reference "
                                     f"'package.module:function', got {type(ref).__name__}")
        self.uses = tuple(self.uses)
        for u in self.uses:
            kind, _, nm = str(u).partition(":")
            if kind not in ("profile", "workload") or not nm:
                raise TechniqueError(f"technique {self.name!r}: uses: expected 'profile:NAME' or 'workload:NAME', got {u!r}")
        ids = [c.id for c in self.claims]
        if len(set(ids)) != len(ids):
            raise TechniqueError(f"technique {self.name!r}: duplicate claim ids")
        if isinstance(self.smoke, ScenarioSpec):
            self.smoke = (self.smoke,)
        if isinstance(self.capabilities, str):
            self.capabilities = frozenset({self.capabilities})
        unknown = sorted(set(self.capabilities) - set(CAPABILITIES))
        if unknown:
            raise TechniqueError(f"technique {self.name!r}: capabilities: expected names from {list(CAPABILITIES)}, "
                                 f"got unknown {unknown[0]!r}")
        if self.vocabulary is not None and self.vocabulary not in VOCABULARIES:
            raise TechniqueError(f"technique {self.name!r}: vocabulary: expected one of {sorted(VOCABULARIES)}, "
                                 f"got {self.vocabulary!r}")
        self._check_kit_fields()
        if isinstance(self.headline_metrics, str):
            self.headline_metrics = (self.headline_metrics,)
        self.headline_metrics = tuple(self.headline_metrics)

    def _check_kit_fields(self) -> None:
        tol = self.oracle_tolerance
        if tol is not None and (isinstance(tol, bool) or not isinstance(tol, (int, float)) or not tol >= 0):
            raise TechniqueError(f"technique {self.name!r}: oracle_tolerance: expected a number >= 0 or None, got {tol!r}")
        for check, why in dict(self.kit_opt_out).items():
            if check not in KIT_OPT_OUTS:
                raise TechniqueError(f"technique {self.name!r}: kit_opt_out: expected check names from "
                                     f"{list(KIT_OPT_OUTS)}, got {check!r}")
            if not isinstance(why, str) or not why.strip():
                raise TechniqueError(f"technique {self.name!r}: kit_opt_out[{check!r}]: expected the written reason "
                                     f"the check does not apply, got {why!r}")

    @property
    def headline(self) -> tuple[str, ...]:
        """The metrics to show first: :attr:`headline_metrics`, else the vocabulary's metrics,
        else none (every metric in name order)."""
        if self.headline_metrics:
            return self.headline_metrics
        if self.vocabulary:
            return tuple(VOCABULARIES[self.vocabulary].metrics)
        return ()

    # -- lookups
    def fidelity(self, name: str) -> Callable[[Scenario], Result]:
        """The evaluate function of fidelity *name*, importing it on first use when it was declared
        as a ``"module:function"`` reference (the imported function replaces the reference).

        Raises
        ------
        Skip
            The technique has no such fidelity.
        TechniqueError
            The reference does not import or does not name a callable.
        """
        if name not in self.fidelities:
            raise Skip(f"{self.name} has no {name!r} fidelity (has {sorted(self.fidelities)})")
        ref = self.fidelities[name]
        if isinstance(ref, str):
            try:
                obj = resolve_reference(ref)
            except Exception as e:  # noqa: BLE001 - any failure to import is this technique's own
                raise TechniqueError(f"technique {self.name!r}: fidelity {name!r}: cannot import {ref!r}: "
                                     f"{type(e).__name__}: {e}") from e
            if not callable(obj):
                raise TechniqueError(f"technique {self.name!r}: fidelity {name!r}: {ref!r} is "
                                     f"{type(obj).__name__}, expected a callable")
            # the reference's module stays the technique's implementation module (implementation_modules,
            # hence the code fingerprint in every case key), whatever module the object says it is from
            self.__dict__.setdefault("_reference_modules", {})[name] = ref.partition(":")[0]
            self.fidelities[name] = ref = obj
        return ref

    @property
    def implementation_modules(self) -> list[str]:
        """The modules that define the fidelities' evaluate functions, sorted, read from the
        references or the functions' ``__module__`` without importing anything. A reference's
        module stays the answer once it is imported (a re-exported function or a
        ``functools.partial`` names another module), so case keys do not change mid-process."""
        resolved = self.__dict__.get("_reference_modules", {})
        mods = {(f.partition(":")[0] if isinstance(f, str) else
                 resolved.get(n) or getattr(f, "__module__", None) or "")
                for n, f in self.fidelities.items()}
        return sorted(mods - {""})

    @property
    def package(self) -> str:
        """The top-level package (or single module) that implements the technique: the first of
        :attr:`implementation_modules`' top-level names; "" when none is known."""
        mods = self.implementation_modules
        return mods[0].split(".")[0] if mods else ""

    @property
    def references(self) -> dict[str, str]:
        """Parameter name -> what it names (``profile``, ``workload``, ``file``), for the
        parameters declared with ``Param(..., ref=...)``."""
        return {k: p.ref for k, p in self.parameters.items() if p.ref is not None}

    @property
    def variant_names(self) -> list[str]:
        return [v.name for v in self.variants]

    @property
    def baselines(self) -> list[Variant]:
        return [v for v in self.variants if v.baseline]

    def get_variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        raise ParameterError(f"{self.name}: unknown variant {name!r}; expected one of {self.variant_names}")

    def extrapolated(self, params: Mapping[str, Any]) -> dict[str, str]:
        """Parameter name -> why its value lies outside the paper's measured range
        (:attr:`Param.measured`), for the parameters that do."""
        out = {}
        for k, v in params.items():
            p = self.parameters.get(k)
            why = p.extrapolated(v) if p is not None else None
            if why:
                out[k] = why
        return out

    def validate_params(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        """Fill defaults and validate; unknown names are an error naming the known ones."""
        params = dict(params or {})
        unknown = sorted(set(params) - set(self.parameters))
        if unknown:
            raise ParameterError(
                f"{self.name}: unknown parameter {unknown[0]!r}; expected one of {sorted(self.parameters)}"
            )
        out = {}
        for pname, p in self.parameters.items():
            out[pname] = p.validate(pname, params.get(pname, p.default), technique=self.name)
        return out

    def evaluate(self, scenario: Scenario) -> Result:
        """Run one resolved scenario at its fidelity and check the result's shape."""
        fn = self.fidelity(scenario.fidelity)
        self.get_variant(scenario.variant)
        result = fn(scenario)
        if not isinstance(result, Result):
            raise TechniqueError(f"{self.name}: {scenario.fidelity} evaluate returned {type(result).__name__}, expected Result")
        return result
