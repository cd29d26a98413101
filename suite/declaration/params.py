"""What a technique declares about itself: its paper, variants and parameters, and the data
files it ships (:func:`read_data`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any

from suite.errors import ParameterError, TechniqueError

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

    def who(self, surnames: bool = False) -> str:
        """The authors as a citation names them: one, ``A and B``, or ``A et al.`` for three or more
        (*surnames*: each name's last word, ``Shi et al.``); ``""`` when none is declared."""
        names = [a.split()[-1] if surnames and a.split() else a for a in self.authors]
        if len(names) > 2:
            return f"{names[0]} et al."
        return " and ".join(names)

    def cite(self) -> str:
        who = self.who()
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
#: the units of a scale parameter that counts one device each (``"nodes"`` counts a node's devices)
ONE_DEVICE_UNITS = frozenset({"workers", "ranks", "GPUs", "devices"})
#: ``Param.devices_each`` as a product of parameter names (``"tp*pp"``)
_PRODUCT = re.compile(r"[A-Za-z_]\w*(\*[A-Za-z_]\w*)*")

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
    profile's devices per node each), or in units of ``devices_each`` devices (an int, or a
    product of the technique's int parameters such as ``"tp*pp"``: data-parallel replicas of a
    tensor x pipeline-parallel group, each as many devices as the case's ``tp`` x ``pp``); a
    category sweep sets it so every
    technique runs on the same number of GPUs. ``role="efficiency"`` marks an achieved fraction
    of peak that a head-to-head sets to one shared value.

    ``ref`` declares that the (string) value names an input, resolved by the runner before the
    case runs: ``"profile"`` (a hardware profile), ``"workload"`` (a workload) or ``"file"`` (a
    file path, read once). The resolved input is in :attr:`Scenario.inputs` under the
    parameter's name (:meth:`Scenario.input`), frozen like the scenario's own profile, and its
    content hash is part of the case key, so editing what it names makes new cases. A model never
    looks an input up by name itself. ``keywords`` (with ``ref``) lists values that name no input
    but a choice of the model (``"exponential"``, ``"none"`` beside a trace file's path): such a
    value is passed as it is and resolves nothing.
    """

    type: type = float
    default: Any = None
    unit: str = ""
    minimum: float | None = None
    maximum: float | None = None
    choices: tuple[Any, ...] | None = None
    help: str = ""
    optional: bool = False  # None is an accepted value (e.g. "use the profile's figure")
    measured: tuple[float, float] | None = None  # the paper's measured range (low, high)
    role: str | None = None  # "scale" (the technique's size) or "efficiency" (achieved fraction of peak)
    devices_each: int | str | None = None  # a scale's devices each: an int, or "tp*pp" (a product of int parameters)
    ref: str | None = None  # the value names an input: one of REF_KINDS
    keywords: tuple[str, ...] = ()  # with ref: values that name no input (a model's own choices)

    def __post_init__(self) -> None:
        if self.role not in PARAM_ROLES:
            raise TechniqueError(f"Param role: expected one of {', '.join(map(str, PARAM_ROLES))}, got {self.role!r}")
        if self.ref is not None and self.ref not in REF_KINDS:
            raise TechniqueError(f"Param: ref: expected one of {list(REF_KINDS)} or None, got {self.ref!r}")
        if self.keywords:
            object.__setattr__(self, "keywords", tuple(self.keywords))
            if self.ref is None or not all(isinstance(k, str) for k in self.keywords):
                raise TechniqueError(f"Param: keywords: expected strings, with ref set (values that name no input), "
                                     f"got {self.keywords!r} with ref={self.ref!r}")
        if self.devices_each is not None:
            self._check_devices_each()
        if self.ref is not None and self.type is not str:
            raise TechniqueError(f"Param: ref={self.ref!r}: expected type=str (the value is a name), "
                                 f"got type={getattr(self.type, '__name__', self.type)}")

    def _check_devices_each(self) -> None:
        """``devices_each`` is an int >= 1 or a product ``"tp*pp"``, on a ``role="scale"`` parameter in
        ``nodes`` (an int) or ``"1"`` (a count of replicas). The product form is new in 0.3.11 and
        refused otherwise; an int where it does nothing (another role, a unit that counts one device
        each) warns, and is refused from dlsys-suite 0.4.0."""
        if isinstance(self.devices_each, str):  # "tp * pp" is "tp*pp"
            object.__setattr__(self, "devices_each", "".join(self.devices_each.split()))
        each = self.devices_each
        if not ((type(each) is int and each >= 1) or (isinstance(each, str) and _PRODUCT.fullmatch(each))):
            raise TechniqueError(f"Param: devices_each: expected an integer >= 1 or a product of parameter names "
                                 f"like 'tp*pp', got {each!r}")
        problem = None
        if self.role != "scale":
            problem = f"expected with role='scale' (the devices one unit of the technique's scale counts), got it with role={self.role!r}"
        elif self.unit in ONE_DEVICE_UNITS or (self.unit == "nodes" and isinstance(each, str)):
            problem = (f"expected unit 'nodes' (an int: the devices of a node) or '1' (a count of replicas of "
                       f"'tp*pp' devices), got unit {self.unit!r}, which counts "
                       f"{'one device' if self.unit != 'nodes' else 'nodes'} each")
        if problem is None:
            return
        if isinstance(each, str):
            raise TechniqueError(f"Param: devices_each={each!r}: {problem}")
        import warnings

        warnings.warn(f"Param: devices_each={each!r}: {problem}; it is ignored, and refused from dlsys-suite 0.4.0",
                      DeprecationWarning, stacklevel=4)

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
        given = value
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
        # a quantity given in another unit is shown as given and as converted ('5 Ms' (= 5e+12 us))
        got = f"{given!r} (= {v:g}{unit})" if given is not value else repr(v)
        if self.minimum is not None and v < self.minimum:
            raise ParameterError(f"{where}: expected >= {self.minimum}{unit}, got {got}")
        if self.maximum is not None and v > self.maximum:
            raise ParameterError(f"{where}: expected <= {self.maximum}{unit}, got {got}")
        return v


def read_data(package: str, name: str, encoding: str | None = "utf-8") -> "str | bytes":
    """Read the data file *name* that ships inside the plugin package *package* (``__name__`` of
    a module of it will do), the one way a model reads a data file (a coefficient table, a
    trace shipped with the plugin).

    Every file inside the technique's package is part of its code fingerprint, hence of every
    case key (:func:`suite.runner.fingerprint.package_fingerprint`): editing the file makes new cases,
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


def scale_parameter(params: "Mapping[str, Param] | Any") -> "tuple[str, Param] | None":
    """(name, Param) of the first parameter in *params* declared ``role="scale"`` (the one that sets
    a technique's size, which a category sweep sets), or None when none is."""
    return next(((k, p) for k, p in params.items() if getattr(p, "role", None) == "scale"), None)


def scale_factors(params: "Mapping[str, Param] | Any", name: str) -> list[str]:
    """The parameter names whose values' product a scale parameter *name* with ``devices_each =
    "tp*pp"`` counts in devices (``["tp", "pp"]``); ``[]`` when its ``devices_each`` is an int or None.

    Raises
    ------
    TechniqueError
        A factor is *name* itself, not in *params*, or not an int parameter (one line: "parameter
        'dp': devices_each: expected a product of its other int parameters, got ...").
    """
    each = params[name].devices_each
    if not isinstance(each, str):
        return []
    factors = each.split("*")
    for factor in factors:
        q = params.get(factor)
        why = ("the scale parameter itself" if factor == name else "not a parameter" if q is None
               else "not an int parameter" if q.type is not int else None)
        if why:
            raise TechniqueError(f"parameter {name!r}: devices_each: expected a product of its other int parameters, "
                                 f"got {each!r} ({factor!r} is {why})")
    return factors


def devices_each(params: "dict[str, Param] | Any", name: str, values: "Any", per_node: int | None) -> int | None:
    """The devices one unit of scale parameter *name* counts: its ``devices_each`` (an int, or the
    product of the named parameters' values in *values*, else their defaults), the profile's
    *per_node* for a scale in nodes (or another unit), 1 for one in :data:`ONE_DEVICE_UNITS`; None when a
    named parameter has no single int value (several swept, or none).

    Raises
    ------
    TechniqueError
        ``devices_each`` is not a product of the technique's other int parameters (:func:`scale_factors`).
    """
    p = params[name]
    each = p.devices_each
    if isinstance(each, str):
        n = 1
        for factor in scale_factors(params, name):
            v = values.get(factor, params[factor].default) if values is not None else params[factor].default
            if isinstance(v, (list, tuple)):
                v = v[0] if len(v) == 1 else None
            try:
                n *= int(v)
            except (TypeError, ValueError):
                return None
        return n
    if each is not None:
        return each
    return 1 if p.unit in ONE_DEVICE_UNITS else per_node
