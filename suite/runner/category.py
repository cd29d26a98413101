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

__all__ = ["expand_category", "SCALE_UNITS"]

#: the units of the parameters that set a technique's scale (what a head-to-head must share)
SCALE_UNITS = frozenset({"nodes", "workers", "ranks", "GPUs"})


def expand_category(category: str, *, context: Any, resolver: Any, base: Mapping[str, Any],
                    params: Mapping[str, list[str]] | None = None, max_cases: int = 1_000_000):
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
    for t in techs:
        entry: dict[str, Any] = {"technique": t.name, **{k: v for k, v in base.items() if v}}
        mine = {k: v for k, v in params.items() if k in t.parameters}
        used |= set(mine)
        if mine:
            entry["params"] = mine
        try:
            exp = expand_entry(entry, where=f"--category {category} ({t.name})", registry=registry, resolver=resolver,
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
    if len(applied) == 1:
        warnings.append(f"--category {category}: only {applied[0]} applies here, so there is no head-to-head "
                        f"comparison (the others' reasons are in the notes)")
    else:
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
                              "for a like-for-like comparison")
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
