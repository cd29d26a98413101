"""Experiment files and sweeps: expand named entries into resolved cases.

An experiment file is TOML. Every top-level table is a named *entry* (``defaults`` is merged
into each entry, a ``smoke`` or ``claims`` entry taking no axis of it; a top-level ``description``
string is allowed)::

    description = "a technique's speed-up vs nodes and bandwidth"

    [defaults]
    fidelities = ["model"]

    [scaling]
    technique = "my-technique"
    profiles  = ["h100-ndr-fat-tree"]              # names, globs ("h100-*"), "kind:cluster", "tag:ethernet"
    workloads = ["resnet-50", "vgg19"]             # names or globs
    variants  = ["baseline", "fast"]               # default: every variant of the technique
    params    = { nodes = [1, 2, 4, 8, 16, 32] }   # scalar or list per parameter
    set       = { "network.-1.bandwidth" = ["2 Gbit/s", "10 Gbit/s", "40 Gbit/s"] }  # profile overrides
    seeds     = [0]
    exclude   = [{ variant = "baseline", params = { nodes = 1 } }]
    include   = [{ variant = "other", params = { nodes = 16 } }]

Each entry expands to the cartesian product profiles x workloads x variants x params x set x
seeds x fidelities. ``exclude`` rules remove the combinations that match every key of a rule
(a list value matches any of its items); ``include`` rules add combinations: each is the entry
with the rule's keys replacing the entry's (so ``include = [{variant = "other"}]`` adds that
variant for every other axis), and is not subject to ``exclude``.

Other entry keys: ``technique = "*"`` (every installed technique; one whose scenarios do not resolve is
skipped with a note instead of stopping the others), ``smoke = true`` (the
technique's own smoke scenarios; ``smoke = "first"``: only the first, one case per technique), ``claims = true`` or a list of claim ids (every scenario the
claims need), ``optional = true`` (skip the entry when its technique is not installed),
``description``. Singular key names (``profile``, ``variant``, ...) are accepted too.

Errors name the file, the entry and the key.
"""

from __future__ import annotations

import fnmatch
import itertools
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suite.declaration.results import built_as_dataclass
from suite.errors import ExperimentError, SuiteError
from suite.runner.case import Case, Resolver
from suite.runner.experiment_file import (_OTHER, AXIS_SPELLINGS, ENTRY_KEYS, NOT_WITH_GIVEN_SCENARIOS, find_experiment,
                                          load_experiment)
from suite.technique import ScenarioSpec, Technique

__all__ = ["expand_entry", "stream_entry", "streamable", "CaseStream", "load_experiment", "expand_experiment", "find_experiment", "Expansion", "ENTRY_KEYS"]

_AXES = {axis[0]: axis for axis in AXIS_SPELLINGS}  # canonical key -> accepted spellings
_RULE_KEYS = ("variant", "profile", "workload", "fidelity", "seed", "params", "set")
_ALIAS = {s: k for k, v in _AXES.items() for s in v}


#: the largest sweep expanded without ``--max-cases`` (a 10^9-case typo must not eat the memory)
DEFAULT_MAX_CASES = 1_000_000


@dataclass
class Expansion:
    """Resolved cases of an experiment, plus notes (skipped optional entries, techniques without
    smoke scenarios) and warnings (a technique of a ``technique = "*"`` entry whose scenarios do
    not resolve) for the user."""

    #: a list, except from ``expand_experiment(stream=True)`` (a :class:`CaseChain`) and ``suite run``'s
    #: streamed sweep (a :class:`CaseStream`): iterable with ``len()`` in every case
    cases: list[Case] | CaseChain | CaseStream = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # techniques skipped because their scenarios are broken
    entries: dict[str, int] = field(default_factory=dict)  # entry name -> number of cases
    max_cases: int = DEFAULT_MAX_CASES  # a sweep larger than this is refused before it is expanded



def _as_list(v: Any) -> list[Any]:
    if isinstance(v, (list, tuple)):
        return list(v)
    return [v]


def _eq(a: Any, b: Any) -> bool:
    return a == b or str(a) == str(b)


def _matches(rule: Mapping[str, Any], combo: Mapping[str, Any]) -> bool:
    for k, want in rule.items():
        if k in ("params", "set"):
            for pk, pv in want.items():
                have = combo[k].get(pk, _MISSING)
                if have is _MISSING or not any(_eq(have, w) for w in _as_list(pv)):
                    return False
        else:
            if not any(_eq(combo[k], w) for w in _as_list(want)):
                return False
    return True


_MISSING = object()
#: the validated axes of one entry for one technique (:func:`_axes`): profiles, workloads, variants,
#: fidelities, seeds, parameter names, their values, override names, their values
_Axes = tuple[list[Any], list[Any], list[Any], list[Any], list[Any], list[str], list[list[Any]], list[str],
              list[list[str]]]


def _normalize(entry: Mapping[str, Any], where: str, tech_params: Iterable[str] = ()) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in entry.items():
        if k in _OTHER:
            out[k] = v
        elif k in _ALIAS:
            canon = _ALIAS[k]
            if canon in out:
                raise ExperimentError(f"{where}: key {k!r}: given twice (as {k!r} and another spelling)")
            if canon in ("params", "set"):
                if not isinstance(v, Mapping):
                    raise ExperimentError(f"{where}: key {k!r}: expected a table (name = value or list), got {v!r}")
                out[canon] = dict(v)
            else:
                out[canon] = _as_list(v)
        else:
            raise ExperimentError(f"{where}: unknown key {k!r}; expected one of {list(ENTRY_KEYS)}")
    return out


def _normalize_rule(rule: Any, where: str, params: Iterable[str]) -> dict[str, Any]:
    if not isinstance(rule, Mapping):
        raise ExperimentError(f"{where}: expected a table like {{ variant = \"ps\" }}, got {rule!r}")
    out: dict[str, Any] = {}
    params = set(params)
    for k, v in rule.items():
        canon = {"variants": "variant", "profiles": "profile", "workloads": "workload", "fidelities": "fidelity",
                 "seeds": "seed"}.get(k, k)
        if canon in ("params", "set"):
            if not isinstance(v, Mapping):
                raise ExperimentError(f"{where}: key {k!r}: expected a table, got {v!r}")
            out.setdefault(canon, {}).update(v)
        elif canon in _RULE_KEYS:
            out[canon] = v
        elif k in params:  # a bare parameter name
            out.setdefault("params", {})[k] = v
        else:
            raise ExperimentError(f"{where}: unknown key {k!r}; expected one of {list(_RULE_KEYS)} or a parameter "
                                  f"name ({', '.join(sorted(params)) or 'none'})")
    return out


def _profile_names(patterns: list[Any], tech: Technique, resolver: Resolver, where: str) -> list[str | None]:
    out: list[str | None] = []
    lib = None
    for p in patterns:
        if p is None:
            out.append(None)
            continue
        if not isinstance(p, str):
            raise ExperimentError(f"{where}: key 'profiles': expected names, globs, 'kind:K' or 'tag:T', got {p!r}")
        if not (p.startswith(("kind:", "tag:")) or any(ch in p for ch in "*?[")):
            out.append(p)
            continue
        lib = lib or resolver.context.profiles  # the command's: plugin profiles and --profiles folders included
        found = []
        for name in lib.names():
            prof = lib.get(name)
            if prof.kind not in tech.profile_kinds:
                continue
            if p.startswith("kind:"):
                ok = prof.kind == p[5:]
            elif p.startswith("tag:"):
                ok = p[4:] in prof.tags
            else:
                ok = fnmatch.fnmatchcase(name, p)
            if ok:
                found.append(name)
        if not found:
            raise ExperimentError(f"{where}: key 'profiles': {p!r} matches no profile of kind "
                                  f"{'/'.join(tech.profile_kinds)} (see `suite hardware list`)")
        out.extend(found)
    return list(dict.fromkeys(out))


def _workload_names(patterns: list[Any], where: str, resolver: Resolver) -> list[str | None]:
    out: list[str | None] = []
    for p in patterns:
        if isinstance(p, str) and any(ch in p for ch in "*?["):
            found = [n for n in resolver.context.workloads.names() if fnmatch.fnmatchcase(n, p)]
            if not found:
                raise ExperimentError(f"{where}: key 'workloads': {p!r} matches no workload (see `suite workloads list`)")
            out.extend(found)
        elif p is None or isinstance(p, str):
            out.append(p)
        else:
            raise ExperimentError(f"{where}: key 'workloads': expected names or globs, got {p!r}")
    return list(dict.fromkeys(out))


def _axes(tech: Technique, e: Mapping[str, Any], resolver: Resolver, where: str) -> _Axes:
    """The validated axes of one normalized entry for one technique."""
    variants = e.get("variants") or tech.variant_names
    for v in variants:
        if v not in tech.variant_names:
            raise ExperimentError(f"{where}: key 'variants': {tech.name} has no variant {v!r}; expected one of {tech.variant_names}")
    profiles = _profile_names(e.get("profiles") or [None], tech, resolver, where)
    workloads = _workload_names(e.get("workloads") or [None], where, resolver)
    default_fid = "model" if "model" in tech.fidelities else sorted(tech.fidelities)[0]
    fids = e.get("fidelities") or [default_fid]
    for f in fids:
        if f not in tech.fidelities:
            raise ExperimentError(f"{where}: key 'fidelities': {tech.name} has no fidelity {f!r}; expected one of {sorted(tech.fidelities)}")
    seeds = e.get("seeds") or [0]
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int) and not (isinstance(s, str) and s.strip().lstrip("-").isdigit()):
            raise ExperimentError(f"{where}: key 'seeds': expected integers, got {s!r}")
    params = e.get("params") or {}
    for pk in params:
        if pk not in tech.parameters:
            raise ExperimentError(f"{where}: key 'params': {tech.name} has no parameter {pk!r}; expected one of {sorted(tech.parameters)}")
    sets = e.get("set") or {}
    pnames, pvals = list(params), [_as_list(params[k]) for k in params]
    snames, svals = list(sets), [[str(x) for x in _as_list(sets[k])] for k in sets]
    return profiles, workloads, variants, fids, seeds, pnames, pvals, snames, svals


def _count(axes: _Axes) -> int:
    profiles, workloads, variants, fids, seeds, _pn, pvals, _sn, svals = axes
    count = len(profiles) * len(workloads) * len(variants) * len(fids) * len(seeds)
    for vals in pvals + svals:
        count *= len(vals)
    return count


def count_entry(entry: Mapping[str, Any], *, where: str = "command line", context: Any = None) -> int:
    """The number of cases a sweep entry's product gives (before ``exclude`` / ``include``),
    counted without building any case: ``suite run --dry-run`` prints it at once."""
    from suite.context import Context

    resolver = Resolver(context=Context.given(context, "count_entry()"))
    e = _normalize(entry, where)
    tname = e.get("technique")
    if e.get("smoke") or e.get("claims") or not isinstance(tname, str):
        return 0
    techs = resolver.context.techniques() if tname == "*" else [resolver.context.technique(tname)]
    return sum(_count(_axes(t, e, resolver, where)) for t in techs)


def _product(tech: Technique, e: Mapping[str, Any], resolver: Resolver, where: str,
             limit: int | None = None) -> list[dict[str, Any]]:
    """Combinations (as dicts of names) of one normalized entry for one technique.

    Raises ExperimentError, before building anything, when the product has more than *limit*
    combinations."""
    axes = _axes(tech, e, resolver, where)
    profiles, workloads, variants, fids, seeds, pnames, pvals, snames, svals = axes
    if limit is not None:
        count = _count(axes)
        if count > limit:
            raise ExperimentError(f"{where}: expected at most {limit:,} cases (--max-cases), got a sweep of "
                                  f"{count:,} cases for {tech.name}; narrow it or raise --max-cases")
    return list(_combos(axes))


def _combos(axes: _Axes) -> Iterator[dict[str, Any]]:
    """The product of *axes* (:func:`_axes`), one combination (a dict of names) at a time."""
    for spec in _spec_dicts(axes):
        spec["set"] = spec.pop("overrides")
        yield spec


def _spec_dicts(axes: _Axes) -> Iterator[dict[str, Any]]:
    """The product of *axes*, one :class:`ScenarioSpec`'s fields (a new dict) at a time."""
    profiles, workloads, variants, fids, seeds, pnames, pvals, snames, svals = axes
    for prof, wl, var, fid, seed, pcombo, scombo in itertools.product(
            profiles, workloads, variants, fids, seeds, itertools.product(*pvals), itertools.product(*svals)):
        yield {"variant": var, "profile": prof, "workload": wl, "params": dict(zip(pnames, pcombo)),
               "fidelity": fid, "seed": int(seed), "overrides": dict(zip(snames, scombo))}


def _spec(c: Mapping[str, Any]) -> ScenarioSpec:
    return ScenarioSpec(variant=c["variant"], profile=c["profile"], workload=c["workload"], params=c["params"],
                        fidelity=c["fidelity"], seed=c["seed"], overrides=c["set"])


def _resolve(resolver: Resolver, tech: Technique, spec: ScenarioSpec, where: str) -> Case:
    try:
        return resolver.resolve(tech, spec)
    except SuiteError as exc:
        label = ", ".join(f"{k}={v}" for k, v in (("variant", spec.variant), ("profile", spec.profile),
                                                   ("workload", spec.workload)) if v)
        raise ExperimentError(f"{where}: {tech.name} ({label}): {exc}") from None


class CaseStream:
    """A sweep expanded lazily: each iteration resolves its cases one at a time, so a sweep of a
    million cases costs memory for one case, not a million (:func:`stream_entry`).

    ``len()`` is the number of combinations (duplicate values of an axis included; the runner
    runs a duplicate key once). Iterating raises :class:`~suite.errors.ExperimentError` at a
    combination that does not resolve, with the same one-line reason as :func:`expand_entry`.
    """

    def __init__(self, tech: Technique, axes: _Axes, resolver: Resolver, where: str, count: int):
        self.tech, self.axes, self.resolver, self.where, self.count = tech, axes, resolver, where, count

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[Case]:
        for values in _spec_dicts(self.axes):  # each spec built without the frozen dataclass's __init__
            yield _resolve(self.resolver, self.tech, built_as_dataclass(ScenarioSpec, values), self.where)


def _still_registered(resolver: Resolver, tech: Technique, where: str) -> None:
    """Raise if *tech*'s plugin was quarantined while its cases were being resolved (a deferred
    ``suite_workloads`` hook or extension reference found faulty then, :mod:`suite.registry`):
    a quarantined plugin's cases are not run."""
    try:
        resolver.context.technique(tech.name)
    except SuiteError as exc:
        raise ExperimentError(f"{where}: {exc}") from None


def streamable(entry: Mapping[str, Any]) -> bool:
    """Whether :func:`stream_entry` can expand *entry* lazily: one named technique, a plain product
    (no ``include`` / ``exclude`` / ``smoke`` / ``claims``)."""
    e = {_ALIAS.get(k, k): v for k, v in entry.items()}
    t = e.get("technique")
    return (isinstance(t, str) and t not in ("", "*") and not any(e.get(k) for k in ("include", "exclude", "smoke", "claims")))


def stream_entry(entry: Mapping[str, Any], *, where: str = "command line", resolver: Resolver,
                 max_cases: int = DEFAULT_MAX_CASES) -> CaseStream:
    """Expand a plain sweep entry (:func:`streamable`) lazily.

    Every axis is checked before anything runs: each value of each axis is resolved once, in the
    first combination with only that value changed, so a bad parameter, profile override or
    workload is one clear line before the first case, as with :func:`expand_entry`. What can
    fail only in a particular combination of values fails when the runner reaches it.

    Raises
    ------
    ExperimentError
        A malformed entry, an unknown name, a value that does not resolve, or more than
        *max_cases* combinations (checked from the axes' lengths, before anything is built).
    """
    e = _normalize(entry, where)
    if not streamable(e):
        raise ExperimentError(f"{where}: stream_entry expands a plain sweep of one technique "
                              "(no include, exclude, smoke or claims); use expand_entry")
    try:
        tech = resolver.context.technique(e["technique"])
    except SuiteError as exc:
        raise ExperimentError(f"{where}: key 'technique': {exc}") from None
    axes = _axes(tech, e, resolver, where)
    count = _count(axes)
    if count > max_cases:
        raise ExperimentError(f"{where}: expected at most {max_cases:,} cases (--max-cases), got a sweep of "
                              f"{count:,} cases for {tech.name}; narrow it or raise --max-cases")
    if count:
        first = [a[0] for a in axes[:5]]
        pfirst = [v[0] for v in axes[6]]
        sfirst = [v[0] for v in axes[8]]
        probes: list[tuple[list[Any], list[Any], list[Any]]] = [(first, pfirst, sfirst)]
        for i in range(5):
            probes += [([*first[:i], v, *first[i + 1:]], pfirst, sfirst) for v in axes[i][1:]]
        for i, vals in enumerate(axes[6]):
            probes += [(first, [*pfirst[:i], v, *pfirst[i + 1:]], sfirst) for v in vals[1:]]
        for i, vals in enumerate(axes[8]):
            probes += [(first, pfirst, [*sfirst[:i], v, *sfirst[i + 1:]]) for v in vals[1:]]
        for (prof, wl, var, fid, seed), pv, sv in probes:
            _resolve(resolver, tech, ScenarioSpec(variant=var, profile=prof, workload=wl, fidelity=fid,
                                                  seed=int(seed), params=dict(zip(axes[5], pv)),
                                                  overrides=dict(zip(axes[7], sv))), where)
    _still_registered(resolver, tech, where)
    return CaseStream(tech, axes, resolver, where, count)


def _given_specs(tech: Technique, e: Mapping[str, Any], where: str) -> list[ScenarioSpec]:
    """The scenarios a ``smoke`` or ``claims`` entry runs (given by the technique, no axes)."""
    axes = [k for k in e if k in NOT_WITH_GIVEN_SCENARIOS]
    if axes:
        kind = "smoke" if e.get("smoke") else "claims"
        raise ExperimentError(f"{where}: key {axes[0]!r} cannot be combined with {kind!r}")
    specs: list[ScenarioSpec] = []
    if e.get("smoke"):
        smoke = e.get("smoke")
        if smoke not in (True, "first"):
            raise ExperimentError(f"{where}: key 'smoke': expected true (every smoke scenario) or \"first\" "
                                  f"(one case per technique), got {smoke!r}")
        specs.extend(tech.smoke[:1] if smoke == "first" else tech.smoke)
    claims = e.get("claims")
    if claims:
        ids = [c.id for c in tech.claims]
        want = ids if claims is True else _as_list(claims)
        for cid in want:
            if cid not in ids:
                raise ExperimentError(f"{where}: key 'claims': {tech.name} has no claim {cid!r}; expected one of {ids}")
        for c in tech.claims:
            if c.id in want:
                specs.extend(c.specs().values())
    return specs


def _rule_entry(e: Mapping[str, Any], r: Mapping[str, Any]) -> dict[str, Any]:
    """Entry *e* with the axes of rule *r* (normalized) in place of its own: the sweep an
    ``include`` rule adds, and what an ``exclude`` rule's values are checked against."""
    sub = {k: v for k, v in e.items() if k not in ("include", "exclude")}
    for k, v in r.items():
        if k == "params":
            sub["params"] = {**(sub.get("params") or {}), **v}
        elif k == "set":
            sub["set"] = {**(sub.get("set") or {}), **v}
        else:
            sub[_ALIAS.get(k + "s", k) if k != "fidelity" else "fidelities"] = _as_list(v)
    return sub


def _check_exclude(tech: Technique, e: Mapping[str, Any], r: Mapping[str, Any], resolver: Resolver,
                   where: str) -> None:
    """Refuse an ``exclude`` rule whose values name nothing (a misspelt variant, profile,
    workload, fidelity or parameter), as the same values in ``include`` are refused.

    Raises
    ------
    ExperimentError
        One line: *where* (file, entry, ``exclude[i]``), the key, what was expected and given.
    """
    sub = _rule_entry(e, r)
    _axes(tech, sub, resolver, where)  # variants, fidelities, seeds, parameter names, profile/workload globs
    for key, check in (("profile", resolver.context.profile), ("workload", resolver.workload_hash)):
        for name in _as_list(r.get(key)):
            if isinstance(name, str) and not (name.startswith(("kind:", "tag:")) or any(ch in name for ch in "*?[")):
                try:
                    check(name)
                except SuiteError as exc:
                    raise ExperimentError(f"{where}: key {key!r}: {exc}") from None


def _specs_for(tech: Technique, e: Mapping[str, Any], resolver: Resolver, where: str,
               limit: int | None = None, warnings: list[str] | None = None) -> list[ScenarioSpec]:
    """The scenarios of normalized entry *e* for *tech*: its product less its ``exclude`` rules,
    plus its ``include`` rules' products. With *warnings* (an entry of one technique; None for
    ``technique = "*"``, whose rules may name another technique's values) each exclude rule's
    values are checked (:func:`_check_exclude`) and one that matches no case of the product adds
    a line to *warnings*."""
    if e.get("smoke") or e.get("claims"):
        return _given_specs(tech, e, where)
    params_known = list(tech.parameters)
    product = combos = _product(tech, e, resolver, where, limit)
    for i, rule in enumerate(_as_list(e.get("exclude") or [])):
        r = _normalize_rule(rule, f"{where}: exclude[{i}]", params_known)
        combos = [c for c in combos if not _matches(r, c)]
        if warnings is not None:  # an entry of one technique (one of technique = "*" may name another's)
            try:
                _check_exclude(tech, e, r, resolver, f"{where}: exclude[{i}]")
            except ExperimentError as exc:  # a tightened check: a warning through 0.3.x (a shared file may
                warnings.append(f"{exc}; it removes nothing (refused from dlsys-suite 0.4.0)")  # name another site's profile)
                continue
            if not any(_matches(r, c) for c in product):
                warnings.append(f"{where}: exclude[{i}] matched no case of {tech.name} ({_rule_text(r)}); "
                                "it removes nothing")
    for i, rule in enumerate(_as_list(e.get("include") or [])):
        r = _normalize_rule(rule, f"{where}: include[{i}]", params_known)
        combos.extend(_product(tech, _rule_entry(e, r), resolver, f"{where}: include[{i}]",
                               None if limit is None else max(0, limit - len(combos))))
    return [_spec(c) for c in combos]


def _rule_text(r: Mapping[str, Any]) -> str:
    """Rule *r* (normalized) as written in a file: ``variant = "ps", params.world = 8``."""
    parts = []
    for k, v in r.items():
        items = v.items() if k in ("params", "set") else [(None, v)]
        parts += [f"{k}.{pk} = {pv!r}" if pk is not None else f"{k} = {pv!r}" for pk, pv in items]
    return ", ".join(parts)


def expand_entry(entry: Mapping[str, Any], *, where: str = "command line", resolver: Resolver | None = None,
                 expansion: Expansion | None = None, name: str = "", context: Any = None) -> Expansion:
    """Expand one entry (a dict with the keys of an experiment-file entry) into resolved cases.

    The techniques, profiles and workloads come from the resolver's context, else *context* (the
    command's; one of the two is required). ``registry=``, deprecated since 0.2.0, is gone in
    0.3.0: a context carries the registry.

    Raises
    ------
    ExperimentError
        A malformed entry, unknown technique/variant/parameter/fidelity, a pattern that matches
        nothing, or a case that does not resolve (the underlying one-line reason is kept).
    """
    from suite.context import Context

    if resolver is None:
        resolver = Resolver(context=Context.given(context, "expand_entry()"))
    registry = resolver.context.registry
    exp = expansion or Expansion()
    eager = exp.cases
    if not isinstance(eager, list):
        raise TypeError("expand_entry(): expansion.cases is streamed (not a list) and cannot be extended")
    e = _normalize(entry, where)
    tname = e.get("technique")
    if not isinstance(tname, str) or not tname:
        raise ExperimentError(f"{where}: key 'technique': required (a technique name or '*')")
    if tname == "*":
        techs = registry.techniques()
    else:
        try:
            techs = [registry.technique(tname)]
        except SuiteError as exc:
            if e.get("optional"):
                exp.notes.append(f"{where}: skipped: {exc}")
                return exp
            raise ExperimentError(f"{where}: key 'technique': {exc}") from None
    before = len(eager)
    for tech in techs:
        try:
            specs = _specs_for(tech, e, resolver, where, max(0, exp.max_cases - len(eager)),
                               exp.warnings if tname != "*" else None)
            if not specs and e.get("smoke"):
                exp.notes.append(f"{where}: {tech.name} declares no smoke scenario; skipped")
            cases = [_resolve(resolver, tech, spec, where) for spec in specs]
            _still_registered(resolver, tech, where)
        except ExperimentError as exc:
            if tname != "*":
                raise
            # `technique = "*"`: one technique's broken scenario must not stop every other one
            # (like a quarantined plugin); it is reported and skipped
            exp.warnings.append(f"{exc}; {tech.name} skipped")
            continue
        eager.extend(cases)
    exp.entries[name or where] = len(eager) - before
    return exp


class CaseChain:
    """The cases of several entries in order, each a list or a lazily resolved :class:`CaseStream`,
    so an experiment file streams like the same sweep given as flags. ``len()`` is what the run
    will compute at most: the distinct keys of the listed cases (entries and claims share cases,
    and the runner runs a key once) plus each stream's combinations."""

    def __init__(self, parts: list[list[Case] | CaseStream]):
        self.parts = parts

    def __len__(self) -> int:
        listed = {c.key for p in self.parts if isinstance(p, list) for c in p}
        return len(listed) + sum(len(p) for p in self.parts if not isinstance(p, list))

    def __iter__(self) -> Iterator[Case]:
        for p in self.parts:
            yield from p


def expand_experiment(path: str | Path, *, resolver: Resolver | None = None,
                      only: Iterable[str] | None = None, max_cases: int = DEFAULT_MAX_CASES,
                      context: Any = None, stream: bool = False) -> Expansion:
    """Every case of an experiment file (optionally only the named entries); at most *max_cases*.

    With *stream*, each plain entry (:func:`streamable`) is resolved lazily as the run goes
    (:func:`stream_entry`), so memory does not grow with the sweep, and ``cases`` is a
    :class:`CaseChain` (iterable, with ``len()``) instead of a list. The techniques, profiles
    and workloads come from *resolver*'s context, else *context* (one of the two is required;
    ``registry=``, deprecated since 0.2.0, is gone in 0.3.0)."""
    path, meta, entries = load_experiment(path)
    if only:
        only = list(only)
        for wanted in only:
            if wanted not in entries:
                raise ExperimentError(f"{path}: no entry {wanted!r}; entries: {', '.join(entries)}")
        entries = {k: v for k, v in entries.items() if k in only}
    from suite.context import Context

    if resolver is None:
        resolver = Resolver(context=Context.given(context, "expand_experiment()"))
    exp = Expansion(max_cases=max_cases)
    if meta.get("unused_defaults"):
        exp.warnings.append(f"{path}: [defaults] {', '.join(meta['unused_defaults'])}: taken by no entry (each entry runs "
                            "given scenarios, smoke or claims, which take no axis); they change nothing")
    parts: list[CaseStream | range] = []
    streamed = 0
    for name, entry in entries.items():
        where = f"{path}: entry [{name}]"
        if stream and streamable(entry):
            part = stream_entry(entry, where=where, resolver=resolver, max_cases=max_cases - streamed - len(exp.cases))
            streamed += len(part)
            exp.entries[name] = len(part)
            parts.append(part)
            continue
        exp.max_cases = max_cases - streamed
        before = len(exp.cases)
        expand_entry(entry, where=where, resolver=resolver, expansion=exp, name=name)
        parts.append(range(before, len(exp.cases)))  # a slice of exp.cases, filled in below
    exp.max_cases = max_cases
    if streamed:
        eager = exp.cases
        assert isinstance(eager, list)  # expand_entry fills a list
        exp.cases = CaseChain([p if isinstance(p, CaseStream) else eager[p.start:p.stop] for p in parts])
        return exp
    # a later entry may have quarantined an earlier entry's plugin (a deferred hook found faulty
    # while its workloads were built): that plugin's cases are dropped, with one warning each
    gone: dict[str, str] = {}
    for tname in dict.fromkeys(c.technique for c in exp.cases):
        try:
            resolver.context.technique(tname)
        except SuiteError as exc:
            gone[tname] = str(exc)
    for tname, why in gone.items():
        n = sum(c.technique == tname for c in exp.cases)
        exp.warnings.append(f"{path}: {why}; its {n} case(s) skipped")
    if gone:
        exp.cases = [c for c in exp.cases if c.technique not in gone]
    return exp
