"""A technique's plain-data declaration read from ``technique.toml`` (:func:`declare_technique`).

What a technique declares splits in two: plain data (its name and title, the paper, the variants,
the parameters, the fidelities' references, the smoke scenarios, the defaults, the properties'
names and descriptions) and Python (the claims with their derive functions, the properties' checks,
named from the file). The plain data can live in a TOML file beside
the plugin's ``technique.py``, one table per :class:`~suite.technique.Technique` field, with the
schema held here once; :func:`declare_technique` reads it through :func:`read_data` (so the file
is part of the technique's code fingerprint, hence of every case key) and builds the same
:class:`~suite.technique.Technique` a Python declaration builds. A Python declaration stays fully
supported; a plugin may mix both (a field in one place or the other, never both).

A value that must follow a Python constant (a parameter's default that the model also reads from
its ``constants.py``) is written as a reference, ``{ python = "package.module:NAME" }``, and
resolved when the file is read, so the TOML never holds a copy that can drift.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, cast

from suite.declaration.params import Paper, Param, Variant, read_data
from suite.declaration.results import ScenarioSpec
from suite.declaration.vocabulary import CATEGORIES, FIDELITIES, MetricMeaning, resolve_reference
from suite.errors import ParameterError, TechniqueError, did_you_mean

if TYPE_CHECKING:  # pragma: no cover
    from suite.technique import Technique

__all__ = ["declare_technique", "TECHNIQUE_FILE"]

#: The file name :func:`declare_technique` reads, in the plugin's top-level package folder.
TECHNIQUE_FILE = "technique.toml"

_PARAM_TYPES: dict[str, type] = {"int": int, "float": float, "str": str, "bool": bool}
_NUMBER = (int, float)
#: What a value of each parameter type is called in an error (``expected ..., got ...``).
_PARAM_KINDS: dict[type, str] = {int: 'an integer (type = "int")', float: 'a number (type = "float")',
                                 str: 'a string (type = "str")', bool: 'true or false (type = "bool")'}


class _Nothing:
    """The "given" of a field that is absent: the error reads ``got nothing``."""

    def __repr__(self) -> str:
        return "nothing"


_NOTHING = _Nothing()


class _Where:
    """The file being read, for one-line errors: ``FILE: FIELD: expected X, got Y``; and the
    declaring module, where a property's ``check`` written as a bare name is looked up."""

    def __init__(self, path: str, module: str = "") -> None:
        self.path = path
        self.module = module

    def fail(self, field: str, expected: str, given: Any) -> TechniqueError:
        return TechniqueError(f"{self.path}: {field}: expected {expected}, got {given!r}")


def _resolve(value: Any, field: str, where: _Where) -> Any:
    """*value*, or the Python object a ``{ python = "package.module:NAME" }`` reference names."""
    if isinstance(value, dict) and "python" in value:
        extra = sorted(set(value) - {"python"})
        if extra:
            raise where.fail(f"{field}.{extra[0]}", "only the key 'python' in a reference "
                                                    '{ python = "package.module:NAME" }', extra[0])
        ref = value["python"]
        try:
            return resolve_reference(ref)
        except Exception as e:  # noqa: BLE001 - whatever the module raises on import: one line naming the field
            raise where.fail(field, f"a reference 'package.module:NAME' that imports ({type(e).__name__}: {e})",
                             ref) from None
    return value


def _typed(value: Any, kinds: type | tuple[type, ...], expected: str, field: str, where: _Where) -> Any:
    value = _resolve(value, field, where)
    if isinstance(value, bool) and bool not in (kinds if isinstance(kinds, tuple) else (kinds,)):
        raise where.fail(field, expected, value)
    if not isinstance(value, kinds):
        raise where.fail(field, expected, value)
    return value


def _strings(value: Any, field: str, where: _Where) -> tuple[str, ...]:
    value = _typed(value, (list, tuple), "an array of strings", field, where)
    for i, s in enumerate(value):
        _typed(s, str, "a string", f"{field}[{i}]", where)
    return tuple(value)


def _string_table(value: Any, field: str, where: _Where) -> dict[str, str]:
    value = _typed(value, dict, "a table of strings", field, where)
    return {k: _typed(v, str, "a string", f"{field}.{k}", where) for k, v in value.items()}


def _table(value: Any, field: str, where: _Where) -> dict[str, Any]:
    value = _typed(value, dict, "a table", field, where)
    return {k: _resolve(v, f"{field}.{k}", where) for k, v in value.items()}


def _keys(table: Mapping[str, Any], allowed: Mapping[str, Any], field: str, where: _Where) -> None:
    for key in table:
        if key not in allowed:
            raise TechniqueError(f"{where.path}: {f'{field}.{key}' if field else key}: expected a key among "
                                 f"{sorted(allowed)}, got {key!r}{did_you_mean(key, allowed)}")


def _paper(value: Any, field: str, where: _Where) -> Paper:
    table = _typed(value, dict, "a table (title, authors, venue, year, arxiv, doi, code)", field, where)
    _keys(table, _PAPER_FIELDS, field, where)
    if "title" not in table:
        raise where.fail(f"{field}.title", "the paper's title", _NOTHING)
    return Paper(**{k: _PAPER_FIELDS[k](v, f"{field}.{k}", where) for k, v in table.items()})


def _variant(value: Any, field: str, where: _Where) -> Variant:
    table = _typed(value, dict, "a table (name, description, baseline)", field, where)
    _keys(table, _VARIANT_FIELDS, field, where)
    for key in ("name", "description"):
        if key not in table:
            raise where.fail(f"{field}.{key}", "a string", _NOTHING)
    return Variant(**{k: _VARIANT_FIELDS[k](v, f"{field}.{k}", where) for k, v in table.items()})


def _metric_meanings(value: Any, field: str, where: _Where) -> dict[str, Any]:
    """``[metric_meanings]``: metric name (or ``<i>`` pattern) -> ``{ unit = "s", direction = "lower",
    meaning = "..." }``, ``include = ["package.module:NAME", ...]``, and a fidelity's sub-table
    ``[metric_meanings.execute]`` of the same (:mod:`suite.declaration.meanings`)."""
    value = _typed(value, dict, "a table of metric name -> { unit, direction, meaning }", field, where)
    out: dict[str, Any] = {}
    for name, entry in value.items():
        if name in FIDELITIES and "." not in field:
            out[name] = _metric_meanings(entry, f"{field}.{name}", where)
        elif name == "include":
            out[name] = _includes(entry, f"{field}.{name}", where)
        else:
            out[name] = _meaning(entry, f"{field}.{name}", where)
    return out


def _includes(value: Any, field: str, where: _Where) -> tuple[str, ...]:
    """``include = ["package.module:NAME", ...]``: each resolved now, to a mapping of metric name ->
    MetricMeaning (:func:`suite.declaration.meanings.included`), so a misspelt one quarantines its
    plugin when it loads instead of failing ``suite info`` and ``suite report`` later."""
    from suite.declaration.meanings import included

    refs = _strings(value, field, where)
    for ref in refs:
        included(ref, lambda expected, given: where.fail(field, expected, given))
    return refs


def _meaning(entry: Any, field: str, where: _Where) -> MetricMeaning:
    """One ``{ unit, direction, meaning }`` entry of ``[metric_meanings]``."""
    table = _typed(entry, dict, "a table { unit, direction, meaning }", field, where)
    _keys(table, _MEANING_FIELDS, field, where)
    for key in _MEANING_FIELDS:
        if key not in table:
            raise where.fail(f"{field}.{key}", "a string", _NOTHING)
    try:
        return MetricMeaning(**{k: _typed(v, str, "a string", f"{field}.{k}", where) for k, v in table.items()})
    except ValueError as e:
        raise TechniqueError(f"{where.path}: {field}.{e}") from None


def _param_type(value: Any, field: str, where: _Where) -> type:
    if not isinstance(value, str) or value not in _PARAM_TYPES:
        raise where.fail(field, f"one of {', '.join(_PARAM_TYPES)}", value)
    return _PARAM_TYPES[value]


def _param(value: Any, field: str, where: _Where) -> Param:
    table = _typed(value, dict, "a table (type, default, unit, minimum, maximum, choices, help, ...)", field, where)
    _keys(table, _PARAM_FIELDS, field, where)
    kwargs = {k: _PARAM_FIELDS[k](v, f"{field}.{k}", where) for k, v in table.items()}
    try:
        param = Param(**kwargs)
    except TechniqueError as e:
        raise TechniqueError(f"{where.path}: {field}: {e}") from None
    _check_param(param, "default" in table, field, where)
    return param


def _is_a(value: Any, kind: type) -> bool:
    """Whether *value* is a value of a parameter of type *kind* as TOML writes it (an integer is a
    float; true/false is neither)."""
    if isinstance(value, bool):
        return kind is bool
    return isinstance(value, _NUMBER) if kind is float else isinstance(value, kind)


def _check_param(p: Param, has_default: bool, field: str, where: _Where) -> None:
    """The declaration is consistent: ``minimum <= maximum``, each choice of the declared type, and
    the default of that type, among the choices and inside the range (checked when the file is
    read, so a bad declaration quarantines its plugin instead of failing each case that runs)."""
    if p.minimum is not None and p.maximum is not None and p.minimum > p.maximum:
        raise where.fail(f"{field}.minimum", f"a number <= maximum ({p.maximum})", p.minimum)
    for i, c in enumerate(p.choices or ()):
        if not _is_a(c, p.type):
            raise where.fail(f"{field}.choices[{i}]", _PARAM_KINDS[p.type], c)
    if not has_default or (p.default is None and p.optional):
        return
    d, at = p.default, f"{field}.default"
    if not _is_a(d, p.type):
        raise where.fail(at, _PARAM_KINDS[p.type], d)
    if p.choices is not None and d not in p.choices:
        raise where.fail(at, f"one of the choices {list(p.choices)}", d)
    if p.minimum is not None and d < p.minimum:
        raise where.fail(at, f"a value >= minimum ({p.minimum})", d)
    if p.maximum is not None and d > p.maximum:
        raise where.fail(at, f"a value <= maximum ({p.maximum})", d)


def _parameters(value: Any, field: str, where: _Where) -> dict[str, Param]:
    table = _typed(value, dict, "a table of parameter tables", field, where)
    return {k: _param(v, f"{field}.{k}", where) for k, v in table.items()}


def _spec(value: Any, field: str, where: _Where) -> ScenarioSpec:
    table = _typed(value, dict, "a table (variant, profile, workload, params, fidelity, seed, overrides)",
                   field, where)
    _keys(table, _SPEC_FIELDS, field, where)
    if "variant" not in table:
        raise where.fail(f"{field}.variant", "a variant name", _NOTHING)
    return ScenarioSpec(**{k: _SPEC_FIELDS[k](v, f"{field}.{k}", where) for k, v in table.items()})


def _check(value: Any, field: str, where: _Where) -> Callable[..., None]:
    """A property's check: ``"name"`` (a function of the declaring module, defined above the
    :func:`declare_technique` call) or ``"package.module:function"``."""
    import sys

    name = _typed(value, str, "a function name or a reference 'package.module:function'", field, where)
    if ":" in name:
        fn = _resolve({"python": name}, field, where)
    else:
        fn = getattr(sys.modules.get(where.module), name, None)
    if not callable(fn):
        raise where.fail(field, f"a function defined in {where.module} before declare_technique(...) is called, "
                                "or a reference 'package.module:function'", name)
    return cast(Callable[..., None], fn)


def _property(value: Any, field: str, where: _Where) -> Any:
    from suite.technique import Property

    table = _typed(value, dict, "a table (name, description, check)", field, where)
    _keys(table, {"name": 0, "description": 0, "check": 0}, field, where)
    for key in ("name", "description", "check"):
        if key not in table:
            raise where.fail(f"{field}.{key}", "a string", _NOTHING)
    return Property(_STR(table["name"], f"{field}.name", where),
                    _STR(table["description"], f"{field}.description", where),
                    _check(table["check"], f"{field}.check", where))


def _array_of(item: Callable[[Any, str, _Where], Any]) -> Callable[[Any, str, _Where], list[Any]]:
    def read(value: Any, field: str, where: _Where) -> list[Any]:
        value = _typed(value, list, "an array of tables", field, where)
        return [item(v, f"{field}[{i}]", where) for i, v in enumerate(value)]
    return read


def _scalar(kinds: type | tuple[type, ...], expected: str) -> Callable[[Any, str, _Where], Any]:
    return lambda value, field, where: _typed(value, kinds, expected, field, where)


def _optional_tuple(value: Any, field: str, where: _Where) -> tuple[Any, ...]:
    value = _typed(value, (list, tuple), "an array", field, where)
    return tuple(_resolve(v, f"{field}[{i}]", where) for i, v in enumerate(value))


def _one_of(value: Any, allowed: tuple[str, ...], field: str, where: _Where) -> str:
    """A string among *allowed* (a near miss gets a "did you mean")."""
    value = _typed(value, str, "a string", field, where)
    if value not in allowed:
        raise TechniqueError(f"{where.path}: {field}: expected one of {list(allowed)}, got {value!r}"
                             f"{did_you_mean(value, allowed)}")
    return cast(str, value)


def _keyed_strings(value: Any, keys: tuple[str, ...], field: str, where: _Where) -> dict[str, str]:
    """A table of strings whose keys are among *keys* (``[fidelities]``: model, simulate, execute)."""
    table = _string_table(value, field, where)
    _keys(table, dict.fromkeys(keys), field, where)
    return table


def _any(value: Any, field: str, where: _Where) -> Any:
    return _resolve(value, field, where)


_STR = _scalar(str, "a string")
_INT = _scalar(int, "an integer")
_BOOL = _scalar(bool, "true or false")
_NUM = _scalar(_NUMBER, "a number")

_PAPER_FIELDS: dict[str, Callable[[Any, str, _Where], Any]] = {
    "title": _STR, "authors": _strings, "venue": _STR, "year": _INT, "arxiv": _STR, "doi": _STR, "code": _STR,
}
_MEANING_FIELDS = dict.fromkeys(("unit", "direction", "meaning"))
_VARIANT_FIELDS: dict[str, Callable[[Any, str, _Where], Any]] = {"name": _STR, "description": _STR, "baseline": _BOOL}
_PARAM_FIELDS: dict[str, Callable[[Any, str, _Where], Any]] = {
    "type": _param_type, "default": _any, "unit": _STR, "minimum": _NUM, "maximum": _NUM,
    "choices": _optional_tuple, "help": _STR, "optional": _BOOL, "measured": _optional_tuple, "role": _STR,
    "devices_each": _scalar((int, str), "an integer or a product of parameter names like 'tp*pp'"), "ref": _STR, "keywords": _optional_tuple,
}
_SPEC_FIELDS: dict[str, Callable[[Any, str, _Where], Any]] = {
    "variant": _STR, "profile": _STR, "workload": _STR, "params": _table, "fidelity": _STR, "seed": _INT,
    "overrides": _string_table,
}

#: Technique field -> how its TOML value is read (the fields that are plain data, and the properties,
#: whose checks are named; claims hold Python objects and are passed to :func:`declare_technique`).
_FIELDS: dict[str, Callable[[Any, str, _Where], Any]] = {
    "name": _STR, "title": _STR, "category": lambda v, f, w: _one_of(v, CATEGORIES, f, w), "version": _STR, "docs": _STR, "vocabulary": _STR,
    "default_profile": _STR, "default_workload": _STR, "default_workloads": _string_table,
    "needs_profile": _BOOL, "needs_workload": _BOOL, "takes_workload": _BOOL,
    "profile_kinds": _strings, "headline_metrics": _strings,
    "metric_meanings": _metric_meanings,
    "uses": _strings, "capabilities": lambda v, f, w: frozenset(_strings(v, f, w)),
    "oracle_tolerance": _NUM, "kit_opt_out": _string_table, "fidelities": lambda v, f, w: _keyed_strings(v, FIDELITIES, f, w),
    "paper": _paper, "variants": _array_of(_variant), "parameters": _parameters,
    "smoke": _array_of(_spec), "validation": _array_of(_spec), "properties": _array_of(_property),
}


#: The Technique fields without a default, and what each holds (for ``FIELD: expected ..., got nothing``).
_REQUIRED: dict[str, str] = {
    "name": "a string", "title": "a string", "category": "a string", "paper": "a table [paper] (title, authors, ...)",
    "variants": "an array of tables [[variants]]", "fidelities": "a table [fidelities] (model, simulate, execute)",
}


#: the technique files as parsed by an earlier command, under the SHA-256 of their text (21 files
#: parsed with tomllib at every start: ~0.03 s of CPU); written by :func:`save_parsed`
_PARSED: list[Any] = []


def _parsed_files() -> Any:
    """This process's :class:`suite.hardware.parsed_cache.ParsedFiles` of technique files."""
    if not _PARSED:
        from suite.hardware.parsed_cache import ParsedFiles

        _PARSED.append(ParsedFiles(lambda f: {}, what="technique-toml"))
    return _PARSED[0]


def save_parsed() -> None:
    """Keep the technique files parsed since the last call for the next command (the registry
    calls it once its plugins are loaded; nothing is written when every file came from the cache)."""
    if _PARSED:
        _PARSED[0].save()


def read_technique_file(package: str, name: str = TECHNIQUE_FILE) -> dict[str, Any]:
    """The :class:`~suite.technique.Technique` fields declared in the data file *name* of the plugin
    package *package*, read and validated (the keyword arguments of the constructor).

    Raises
    ------
    TechniqueError
        The file is missing, is not valid TOML, or an entry is not what its field holds (one line:
        file, field, what was expected, what was given).
    """
    top = package.split(".")[0]
    where = _Where(f"{top}/{name}", package)
    text = cast(str, read_data(package, name))
    try:
        table = _parsed_files().read_text(text, tomllib.loads)
    except tomllib.TOMLDecodeError as e:
        raise TechniqueError(f"{where.path}: expected valid TOML, got a syntax error ({e})") from None
    _keys(table, _FIELDS, "", where)
    return {k: _FIELDS[k](v, k, where) for k, v in table.items()}


def declare_technique(package: str, *, file: str = TECHNIQUE_FILE, **fields: Any) -> "Technique":
    """The :class:`~suite.technique.Technique` declared by the plugin's ``technique.toml`` (its plain
    data) together with *fields* (what is Python: claims, properties, anything computed).

    Parameters
    ----------
    package : str
        ``__name__`` of a module of the plugin; the file is read from its top-level package folder
        with :func:`read_data`, so it is part of the technique's code fingerprint.
    file : str
        The data file's path inside that folder (default ``technique.toml``).
    **fields
        :class:`~suite.technique.Technique` fields given in Python (``claims=``, ``properties=``,
        ``smoke=``, ...); each must be absent from the file.

    Returns
    -------
    Technique
        Equal, field by field, to ``Technique(**file_fields, **fields)``.

    Raises
    ------
    TechniqueError
        The file is missing or malformed (one line naming the file, the field, what was expected
        and what was given), a field is given both in the file and in Python, or the technique
        itself is malformed (its own check, prefixed with the file).

    Example
    -------
    ``technique.toml`` holds ``name = "ring-demo"``, ``[paper]``, ``[[variants]]``, ...; then
    ``TECHNIQUE = declare_technique(__name__, claims=CLAIMS)`` (a ``[[properties]]`` entry's
    ``check = "check_bytes"`` names a function defined above the call).
    """
    from suite.technique import Technique

    declared = read_technique_file(package, file)
    both = sorted(set(declared) & set(fields))
    path = f"{package.split('.')[0]}/{file}"
    if both:
        raise TechniqueError(f"{path}: {both[0]}: expected in the file or in Python, got it in both")
    missing = [f for f in _REQUIRED if f not in declared and f not in fields]
    if missing:
        raise _Where(path).fail(missing[0], _REQUIRED[missing[0]], _NOTHING)
    try:
        tech = Technique(**declared, **fields)
    except TechniqueError as e:
        raise TechniqueError(f"{path}: {e}") from None
    except TypeError as e:  # a required field (name, title, ...) is in neither place
        raise TechniqueError(f"{path}: expected every required Technique field in the file or in Python, "
                             f"got {e}") from None
    _check_declared(tech, declared, _Where(path))
    if tech.package and tech.package != package.split(".")[0]:  # the file would not be in the case key
        raise _Where(path).fail("fidelities", f"functions of the package {package.split('.')[0]!r} (whose code "
                                "fingerprint, hence case key, holds this file)", tech.package)
    if "fidelities" in declared:  # a fidelity that fails to import later names this file and field
        tech.__dict__["_declared_in"] = path
    return tech


def _check_declared(tech: "Technique", declared: Mapping[str, Any], where: _Where) -> None:
    """What the file declares agrees with the technique: each ``[[smoke]]`` / ``[[validation]]``
    entry names one of its variants and parameters (with a valid value), and each fidelity's
    module exists (found, not imported: the evaluate functions import when a case first runs)."""
    import importlib.util

    for key in ("smoke", "validation"):
        for i, spec in enumerate(declared.get(key, ())):
            if spec.variant not in tech.variant_names:
                raise where.fail(f"{key}[{i}].variant", f"one of the variants {tech.variant_names}", spec.variant)
            for name, value in spec.params.items():
                if name not in tech.parameters:
                    raise where.fail(f"{key}[{i}].params.{name}", f"one of the parameters {sorted(tech.parameters)}",
                                     name)
                try:
                    tech.parameters[name].validate(name, value)
                except ParameterError as e:
                    raise TechniqueError(f"{where.path}: {key}[{i}].params.{name}: {str(e).split(': ', 1)[-1]}") \
                        from None
    for fid, ref in declared.get("fidelities", {}).items():
        module = ref.partition(":")[0]
        try:
            found = importlib.util.find_spec(module) is not None
        except (ImportError, ValueError) as e:  # a parent package that does not import
            raise where.fail(f"fidelities.{fid}", f"a reference whose module exists ({type(e).__name__}: {e})",
                             ref) from None
        if not found:
            raise where.fail(f"fidelities.{fid}", "a reference 'package.module:function' whose module exists", ref)
