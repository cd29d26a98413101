"""A category sweep: every installed technique of one category that applies to a workload and a
profile, each with all its variants (its baselines included), so ``suite report`` can put them
side by side (``suite run --category communication --workload resnet-50 --profile dgx-a100``).

Whether a technique applies is asked of the technique itself: its baseline variant's first case
is evaluated once, in this process, at model fidelity; a :class:`~suite.technique.Skip` or a
:class:`~suite.errors.SuiteError` (a workload of the wrong kind, a profile it cannot model) leaves
the technique out with its reason as a note. A ``--param NAME=...`` applies to the techniques
that declare ``NAME``; the others run with their defaults (a note says which).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from suite.errors import ExperimentError, SuiteError

__all__ = ["expand_category", "SCALE_UNITS", "HEAD_TO_HEAD_EFFICIENCY", "scale_value", "CannotScale"]

#: the units of the parameters that set a technique's scale (what a head-to-head must share)
SCALE_UNITS = frozenset({"nodes", "workers", "ranks", "GPUs", "devices"})
#: scale units that count one device each (``nodes`` count the profile's devices per node)
_ONE_DEVICE = frozenset({"workers", "ranks", "GPUs", "devices"})
#: The achieved fraction of peak every technique of a head-to-head is given when ``--param
#: efficiency=...`` is not: one stated assumption for all (their own defaults range 0.07 to 0.85,
#: which alone would decide a comparison of speed-ups).
HEAD_TO_HEAD_EFFICIENCY = 0.5


class CannotScale(Exception):
    """A technique cannot be put at the comparison's scale (the message says why)."""


def scale_value(tech: Any, gpus: int, devices_per_node: int) -> tuple[str, int] | None:
    """(parameter, value) that puts *tech* on *gpus* GPUs, or None when it declares no scale and has
    no size parameter (a single-device technique).

    The parameter is the one declared ``Param(role="scale")``: one in GPUs, devices, workers or
    ranks takes *gpus*; one in nodes takes ``gpus / devices each node`` (``Param.devices_each``, else
    *devices_per_node*).

    Raises
    ------
    CannotScale
        No scale declared although the technique has size parameters, a whole number of nodes
        does not give *gpus*, or the value is outside the parameter's range.
    """
    from suite.errors import ParameterError

    declared = [(k, p) for k, p in tech.parameters.items() if getattr(p, "role", None) == "scale"]
    if not declared:
        sized = sorted(k for k, p in tech.parameters.items() if p.unit in SCALE_UNITS)
        if sized:
            raise CannotScale(f"declares no scale parameter (Param(role='scale')) among {', '.join(sized)}")
        return None
    name, p = declared[0]
    if p.unit in _ONE_DEVICE:
        value = gpus
    else:
        each = p.devices_each or devices_per_node
        if gpus % each:
            raise CannotScale(f"{gpus} GPUs is not a whole number of its {name} ({each} GPU(s) each)")
        value = gpus // each
    try:
        p.validate(name, value, technique=tech.name)
    except ParameterError as exc:
        raise CannotScale(str(exc)) from None
    return name, value


def _own_devices_per_node(tech: Any, resolver: Any) -> int:
    try:
        return resolver.profile(tech.default_profile)[0].devices_per_node if tech.default_profile else 1
    except Exception:  # noqa: BLE001 - no default profile to read: one device per node
        return 1


def _profile_size(base: Mapping[str, Any], resolver: Any) -> tuple[int, int, str] | None:
    """(devices, devices per node, name) of the smallest profile the sweep names, or None when it
    names none (each technique's own default) or a pattern."""
    sizes = []
    for name in base.get("profiles") or ():
        try:
            prof = resolver.profile(str(name))[0]
        except Exception:  # noqa: BLE001 - a glob or kind:/tag: pattern: no single size
            return None
        sizes.append((prof.num_devices, prof.devices_per_node, prof.name))
    return min(sizes) if sizes else None


def expand_category(category: str, *, context: Any, resolver: Any, base: Mapping[str, Any],
                    params: Mapping[str, list[str]] | None = None, max_cases: int = 1_000_000,
                    gpus: int | None = None):
    """The cases of a category sweep and the notes about techniques left out.

    Parameters
    ----------
    category : str
        One of :data:`suite.technique.CATEGORIES`.
    context : suite.context.Context
    resolver : suite.runner.case.Resolver
    base : mapping
        The entry every technique shares (``profiles``, ``workloads``, ``fidelities``,
        ``seeds``, ``set``), as :func:`suite.runner.experiment.expand_entry` reads it.
    params : mapping of str -> list of str
        ``--param`` values; each goes to the techniques that declare that parameter.
    max_cases : int
    gpus : int, optional
        The number of GPUs every technique runs on (its ``role="scale"`` parameter set to match,
        :func:`scale_value`); default the size of the (smallest) profile named in *base*. Every
        ``role="efficiency"`` parameter is set to one value (``--param efficiency=...``, default
        :data:`HEAD_TO_HEAD_EFFICIENCY`). A technique that cannot run at that scale is left out
        and named in the warnings.

    Returns
    -------
    (list of Case, list of str, list of str)
        The cases, notes (techniques left out and why, parameters not applied), warnings.

    Raises
    ------
    ExperimentError
        An unknown category, or no technique of it applies.
    """
    from suite.runner.experiment import Expansion, expand_entry
    from suite.technique import CATEGORIES, Skip

    if category not in CATEGORIES:
        raise ExperimentError(f"--category: expected one of {', '.join(CATEGORIES)}, got {category!r}")
    registry = context.registry
    techs = registry.techniques(category)
    if not techs:
        raise ExperimentError(f"--category {category}: no installed technique has this category")
    params = dict(params or {})
    cases: list = []
    notes: list[str] = []
    warnings: list[str] = []
    used: set[str] = set()
    applied: list[str] = []
    size = _profile_size(base, resolver)
    scale = gpus if gpus is not None else (size[0] if size else None)
    dpn = size[1] if size else 1
    eff = params.get("efficiency") or [str(HEAD_TO_HEAD_EFFICIENCY)]
    scales: dict[str, str] = {}
    for t in techs:
        entry: dict[str, Any] = {"technique": t.name, **{k: v for k, v in base.items() if v}}
        mine = {k: v for k, v in params.items() if k in t.parameters}
        used |= set(mine)
        if scale is not None:
            try:
                sv = scale_value(t, scale, dpn if size else _own_devices_per_node(t, resolver))
            except CannotScale as exc:
                warnings.append(f"--category {category}: {t.name} left out: it cannot run on {scale} GPUs ({exc})")
                continue
            if sv and sv[0] not in mine:
                mine[sv[0]] = [str(sv[1])]
            scales[t.name] = (f"{sv[0]}={','.join(mine[sv[0]])}" if sv else "no scale parameter (one device)")
            for k, p in t.parameters.items():
                if getattr(p, "role", None) == "efficiency" and k not in mine:
                    mine[k] = list(eff)
        if mine:
            entry["params"] = mine
        try:
            exp = expand_entry(entry, where=f"--category {category} ({t.name})", resolver=resolver,
                               expansion=Expansion(max_cases=max_cases))
        except SuiteError as exc:
            notes.append(f"{t.name} left out: {exc}")
            continue
        if not exp.cases:
            notes.append(f"{t.name} left out: no case")
            continue
        why = _does_not_apply(t, exp.cases, Skip)
        if why:
            notes.append(f"{t.name} left out (does not apply): {why}")
            continue
        cases += exp.cases
        notes += exp.notes
        warnings += exp.warnings
        applied.append(t.name)
    for k in sorted(set(params) - used):
        warnings.append(f"--param {k}: no technique of category {category} declares it")
    if not cases:
        raise ExperimentError(f"--category {category}: no technique of this category applies ("
                              + "; ".join(notes) + ")")
    notes.insert(0, f"category {category}: running {', '.join(applied)} ({len(cases)} case(s))")
    if scale is not None:
        notes.insert(1, f"category {category}: every technique on {scale} GPUs ("
                     + ("--gpus" if gpus is not None else f"the size of profile {size[2]}; --gpus to change")
                     + f") with efficiency {','.join(eff)} (--param efficiency=...): "
                     + "; ".join(f"{n} {scales[n]}" for n in applied if n in scales))
    if len(applied) == 1:
        warnings.append(f"--category {category}: only {applied[0]} applies here, so there is no head-to-head "
                        f"comparison (the others' reasons are in the notes)")
    elif scale is None:
        # a technique's scale: its parameters counted in nodes, workers, ranks or GPUs (read from
        # the declarations, so no technique's parameter is named here), each left at its default
        by_name = {t.name: t for t in techs}
        unset = {n: [f"{k}={p.default}" for k, p in by_name[n].parameters.items()
                     if p.unit in SCALE_UNITS and p.default is not None and k not in params] for n in applied}
        unset = {n: v for n, v in unset.items() if v}
        if unset:
            warnings.append(f"--category {category}: these run at their own default scale ("
                            + "; ".join(f"{n}: {', '.join(v)}" for n, v in unset.items())
                            + "); set it with --param (applied to the techniques that declare the parameter) "
                              "for a like-for-like comparison, or name one --profile (or --gpus N) to put every "
                              "technique on the same number of GPUs")
    return cases, notes, warnings


def _does_not_apply(tech: Any, cases: Sequence, skip_type: type) -> str | None:
    """The reason the technique declines its first baseline model case, or None when it runs it."""
    base = {v.name for v in tech.baselines}
    probe = next((c for c in cases if c.variant in base and c.fidelity == "model"), None)
    if probe is None:
        probe = next((c for c in cases if c.fidelity == "model"), None)
    if probe is None:
        return None  # execute/simulate only: the run decides, case by case
    try:
        tech.evaluate(probe.scenario)
    except skip_type as exc:
        return str(exc)
    except SuiteError as exc:
        return f"{type(exc).__name__}: {exc}"
    except Exception:  # noqa: BLE001 - a plugin bug is the run's to store, with its traceback
        return None
    return None
