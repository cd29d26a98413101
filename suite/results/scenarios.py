"""How `suite compare` keys and labels a case's scenario: what identifies it across two runs
(technique, variant, fidelity, workload, seed, parameters, and the profile and override values that
vary, joined by value in base units), its sort order and its short label.

The scenario of a case is what it was asked to compute, read from its stored row; two runs pair a
case of each by this key (:func:`suite.results.compare.compare_runs`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


__all__ = ["sort_key"]

#: the identity columns a scenario key holds besides the parameters and the swept profile fields
_IDENTITY = ("technique", "variant", "fidelity", "workload", "seed")


def sort_key(v: Any) -> tuple[Any, ...]:
    """A sort key that orders numbers and quantities with a unit (``"10 Gbit/s"``) numerically
    (2 < 10 < 20, never as text) and by value across the units of one dimension (``"4 Gbit/s"`` <
    ``"1 GB/s"`` (8 Gbit/s) < ``"20 Gbit/s"``), booleans and None apart, and other text
    alphabetically; a unit the registry does not know orders by its spelling, then the number.
    Used by every table, plot and message that lists swept values (one order everywhere)."""
    from suite.hardware.units import base_factor
    from suite.results.codec import is_missing
    from suite.results.load import override_value

    if is_missing(v):
        return (3, "", 0.0, "")
    if isinstance(v, bool):
        return (2, "", float(v), "")
    num, unit = override_value(v) if isinstance(v, (int, float, str)) else (None, str(v))
    if num is None:
        return (1, "", 0.0, str(v))
    if unit:
        try:
            factor, unit = base_factor(unit)
            num *= factor
        except ValueError:
            pass
    return (0, unit, num, str(v))


def _order(ident: Mapping[str, Any]) -> tuple[Any, ...]:
    return (ident["technique"], str(ident["variant"]), str(ident["workload"]), str(ident["fidelity"]),
            [(k, sort_key(v)) for k, v in sorted(ident["params"].items())],
            str(ident.get("profile", "")), [(k, sort_key(v)) for k, v in sorted(ident["set"].items())],
            ident["seed"] if ident["seed"] is not None else -1)

def _canon(v: Any) -> Any:
    """An override value as the scenario key holds it: a quantity in base units with 12 significant
    digits (``"37 us"``, ``"37e-6 s"`` -> ``"3.7e-05 second"``; ``"10 Gbit/s"``, ``"1.25 GB/s"`` ->
    ``"1e+10 bit / second"``: the same profile, so the same case key), other text as given."""
    from suite.hardware.units import to_base
    from suite.results.load import override_value

    if isinstance(v, bool) or not isinstance(v, (str, int, float)):
        return v
    num, unit = override_value(v)
    if num is None:
        return v
    try:
        mag, base = to_base(num, unit)
    except ValueError:
        return v
    return f"{mag:.12g} {base}".strip()

def _swept(cases_a: pd.DataFrame | None, cases_b: pd.DataFrame | None) -> dict[str, tuple[bool, list[str]]]:
    """technique -> (profile name swept?, override paths swept), within either side."""
    out: dict[str, tuple[bool, list[str]]] = {}
    sides = [c for c in (cases_a, cases_b) if c is not None]
    for tech in {str(t) for c in sides for t in c["technique"]}:
        prof_swept = False
        paths: set[str] = set()
        for cases in sides:
            c = cases[cases["technique"] == tech]
            if c.empty:
                continue
            prof_swept |= c["profile"].nunique(dropna=False) > 1
            all_paths = {p for ov in c["overrides"] for p in (ov or {})}
            for p in all_paths:
                raw = {(ov or {}).get(p) for ov in c["overrides"]}
                if len(raw) > 1 and len({_canon(v) for v in raw}) > 1:
                    paths.add(p)
        out[tech] = (prof_swept, sorted(paths))
    return out


def _own_values(*frames: pd.DataFrame | None) -> dict[tuple[str, str], dict[str, Any]]:
    """(profile, content hash) -> {override path: a value some case of that profile and hash set
    there}. A case of the same profile and hash that does not set the path computed on the same
    figure (its profile's own, e.g. ``37 us``): the same scenario, as ``suite run`` stored it under
    the same case key. A profile whose fits an override sets aside hashes otherwise (no pair)."""
    from suite.results.codec import is_missing

    own: dict[tuple[str, str], dict[str, Any]] = {}
    for cases in frames:
        if cases is None:
            continue
        for prof, h, ov in zip(cases["profile"], cases["profile_hash"], cases["overrides"]):
            if not is_missing(h):
                values = own.setdefault((str(prof), str(h)), {})
                for p, v in (ov or {}).items():
                    values.setdefault(p, v)
    return own


def _set_values(row: Mapping[str, Any], own: Mapping[tuple[str, str], Mapping[str, Any]]) -> dict[str, Any]:
    """The case's overrides as written, each path that another case of its profile and content hash
    overrides (:func:`_own_values`) and it does not filled in with that case's value."""
    return {**own.get((str(row["profile"]), str(row["profile_hash"])), {}), **(row["overrides"] or {})}


def _written(overrides: Mapping[str, Any] | None, path: str, canon: Any) -> str:
    """Override *path* as a case's *overrides* (filled by :func:`_set_values`) write it (``"37 us"``),
    else its key value *canon*; ``"not set (the profile's own value)"`` when the case neither sets it
    nor shares its profile's content with a case that does (never ``None`` or ``null``)."""
    if overrides and path in overrides:
        return str(overrides[path])
    return "not set (the profile's own value)" if canon is None else str(canon)


def _scenario_key(row: Mapping[str, Any], swept: tuple[bool, list[str]]) -> str:
    """The scenario of a case as JSON: its identity, parameters, profile (when swept) and each swept
    override path's value in base units (:func:`_canon`), read from ``row["set"]`` (the values
    :func:`_set_values` filled in) when given, else from its overrides."""
    prof_swept, paths = swept
    ov = row.get("set", row["overrides"]) or {}
    ident = {k: row[k] for k in _IDENTITY}
    ident["seed"] = int(ident["seed"]) if ident["seed"] is not None else None
    ident["params"] = row["params"]
    if prof_swept:
        ident["profile"] = row["profile"]
    ident["set"] = {p: _canon(ov.get(p)) for p in paths}
    return json.dumps(ident, sort_keys=True, default=str)


def _describe(ident: Mapping[str, Any], varying: set[str], overrides: Mapping[str, Any] | None = None,
              metrics: Sequence[str] = ()) -> str:
    """The scenario label: what varies (a parameter as ``param.NAME`` where its name is a case column
    or one of *metrics*), each swept override as *overrides* (a case's own) write it."""
    from suite.declaration.results import param_column

    ident = {**ident, "set": {p: _written(overrides, p, v) for p, v in ident["set"].items()}}
    bits = []
    for k, v in sorted(ident["params"].items()):
        if k in varying:
            bits.append(f"{param_column(k, metrics)}={v}")
    if "profile" in ident:
        bits.append(f"profile={ident['profile']}")
    short = [p.rsplit(".", 1)[-1] for p in ident["set"]]
    for (p, v), sp in zip(ident["set"].items(), short):
        bits.append(f"{sp if short.count(sp) == 1 else p}={v}")
    for k in ("workload", "fidelity", "seed"):
        if k in varying:
            bits.append(f"{k}={ident[k]}")
    return " ".join(bits) or "-"

def _varying(idents: list[dict[str, Any]]) -> dict[str, set[str]]:
    """technique -> what varies among its matched scenarios (for short scenario labels)."""
    varying: dict[str, set[str]] = {}
    for t in {i["technique"] for i in idents}:
        its = [i for i in idents if i["technique"] == t]
        v = {p for p in {p for i in its for p in i["params"]}
             if len({json.dumps(i["params"].get(p), default=str) for i in its}) > 1}
        v |= {k for k in ("workload", "fidelity", "seed") if len({i[k] for i in its}) > 1}
        varying[t] = v
    return varying

def _unpaired(side: Any, other: Any, varying: Mapping[str, set[str]]) -> list[str]:
    """The scenarios of *side* with no partner in *other*, labelled as the rows are (a parameter named
    like one of the case's metrics as ``param.NAME``), sorted."""
    return sorted(_describe(json.loads(k), varying.get(c["technique"], set()), c.get("set", c["overrides"]),
                            sorted(side.names.get(c["key"], ())))
                  + f" [{c['technique']}/{c['variant']}]"
                  for k, c in side.cases.items() if k not in other.cases)
