"""Experiment files: find one by path or shipped name, and parse its TOML into named entries
(``defaults`` merged into each). The format is described in :mod:`suite.runner.experiment`,
which expands the entries into cases."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from suite.errors import ExperimentError, did_you_mean

__all__ = ["find_experiment", "load_experiment"]


def find_experiment(name_or_path: str | Path) -> Path:
    """A path to an experiment file: the path itself, or ``experiments/NAME.toml`` shipped with
    the suite (``suite run smoke``).

    Raises
    ------
    ExperimentError
        Neither exists (the shipped names are listed).
    """
    p = Path(name_or_path)
    if p.is_file():
        return p
    from suite.resources import builtin_dir

    try:
        d = builtin_dir("experiments")
    except FileNotFoundError:
        d = None
    if d is not None:
        stem = p.name[:-5] if p.name.endswith(".toml") else p.name
        cand = d / f"{stem}.toml"
        if cand.is_file():
            return cand
    shipped = sorted(f.stem for f in d.glob("*.toml")) if d is not None else []
    raise ExperimentError(f"experiment {str(name_or_path)!r}: no such file, and no shipped experiment of that name "
                          f"(shipped: {', '.join(shipped) or 'none'})")


#: each axis key of an entry, its canonical spelling first (suite.runner.experiment expands them)
AXIS_SPELLINGS = (("variants", "variant"), ("profiles", "profile"), ("workloads", "workload"), ("seeds", "seed"),
                  ("fidelities", "fidelity"), ("params",), ("set",))
#: the keys (any spelling) an entry of given scenarios (``smoke`` or ``claims``) cannot take: one
#: written in such an entry is an error, one of ``[defaults]`` passes it by
NOT_WITH_GIVEN_SCENARIOS = frozenset({s for axis in AXIS_SPELLINGS for s in axis} | {"include", "exclude"})
#: the keys of an entry that are not axes
_OTHER = ("technique", "exclude", "include", "smoke", "claims", "optional", "description")
#: every key an entry (or ``[defaults]``) may hold, each spelling
ENTRY_KEYS = tuple(sorted({s for axis in AXIS_SPELLINGS for s in axis} | set(_OTHER)))


def _with_defaults(entry: Mapping[str, Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """*entry* with the ``[defaults]`` it can take: a smoke or claims entry runs given scenarios,
    so an axis of the defaults (``fidelities = ["model"]``) passes it by, where the same key written
    in the entry itself is an error (it would be ignored)."""
    merged = {**defaults, **entry}
    if merged.get("smoke") or merged.get("claims"):
        merged = {k: v for k, v in merged.items() if k in entry or k not in NOT_WITH_GIVEN_SCENARIOS}
    return merged


def load_experiment(path: str | Path) -> tuple[Path, dict[str, Any], dict[str, dict[str, Any]]]:
    """Parse an experiment file: (path, top-level metadata, entries by name with defaults merged:
    each takes the keys of ``[defaults]`` it can, see :func:`_with_defaults`). The metadata holds
    ``description`` when the file has one, and ``unused_defaults``: the keys of ``[defaults]`` no
    entry takes (every entry runs given scenarios), when there are any."""
    path = find_experiment(path)
    from suite.limits import TooDeep, loads_toml

    try:
        raw = loads_toml(path.read_text(encoding="utf-8"), str(path))
    except tomllib.TOMLDecodeError as exc:
        raise ExperimentError(f"{path}: invalid TOML: {exc}") from None
    except TooDeep as exc:
        raise ExperimentError(str(exc)) from None
    meta: dict[str, Any] = {}
    defaults = raw.pop("defaults", {}) or {}
    if not isinstance(defaults, Mapping):
        raise ExperimentError(f"{path}: key 'defaults': expected a table")
    for k in defaults:  # here, not in each entry it is merged into (which did not write it)
        if k not in ENTRY_KEYS:
            raise ExperimentError(f"{path}: [defaults]: unknown key {k!r}{did_you_mean(k, ENTRY_KEYS)}; "
                                  f"expected one of {list(ENTRY_KEYS)}")
    entries: dict[str, dict[str, Any]] = {}
    for k, v in raw.items():
        if k == "description":
            meta[k] = v
        elif isinstance(v, Mapping):
            entries[k] = _with_defaults(v, defaults)
        else:
            raise ExperimentError(f"{path}: top-level key {k!r}: expected an entry table like [{k}] with "
                                  f"technique = \"...\" (only 'description' may be a plain value)")
    if not entries:
        raise ExperimentError(f"{path}: no entries (add a table like [my-sweep] with technique = \"...\")")
    unused = [k for k in defaults if not any(k in e for e in entries.values())]
    if unused:  # every entry runs given scenarios (smoke or claims): the axes of [defaults] reach none
        meta["unused_defaults"] = unused
    return path, meta, entries
