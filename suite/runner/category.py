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

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from suite.declaration.params import ONE_DEVICE_UNITS
from suite.errors import ExperimentError, SuiteError

__all__ = ["expand_category", "SCALE_UNITS", "HEAD_TO_HEAD_EFFICIENCY", "scale_value", "CannotScale"]

#: the units of the parameters that set a technique's scale (what a head-to-head must share)
SCALE_UNITS = ONE_DEVICE_UNITS | {"nodes"}  # a parameter counted in these is a scale
#: The achieved fraction of peak every technique of a head-to-head is given when ``--param
#: efficiency=...`` is not: one stated assumption for all (their own defaults range 0.07 to 0.85,
#: which alone would decide a comparison of speed-ups).
HEAD_TO_HEAD_EFFICIENCY = 0.5


class CannotScale(Exception):
    """A technique cannot be put at the comparison's scale (the message says why)."""


def scale_value(tech: Any, gpus: int, devices_per_node: int,
                values: Mapping[str, Any] | None = None) -> tuple[str, int] | None:
    """(parameter, value) that puts *tech* on *gpus* GPUs, or None when it declares no scale and has
    no size parameter (a single-device technique).

    The parameter is the one declared ``Param(role="scale")``: one in GPUs, devices, workers or
    ranks takes *gpus*; one in nodes takes ``gpus / devices each node`` (``Param.devices_each``, else
    *devices_per_node*); one with ``devices_each = "tp*pp"`` takes ``gpus / (tp x pp)``, each factor
    its value in *values* (the sweep's ``--param`` values of *tech*: one value each) or its default.

    Raises
    ------
    CannotScale
        No scale declared although the technique has size parameters, a whole number of units
        does not give *gpus*, a factor of ``devices_each`` swept over several values, or the value
        is outside the parameter's range.
    """
    from suite.declaration.params import devices_each, scale_factors, scale_parameter
    from suite.errors import ParameterError

    declared = scale_parameter(tech.parameters)
    if declared is None:
        sized = sorted(k for k, p in tech.parameters.items() if p.unit in SCALE_UNITS)
        if sized:
            raise CannotScale(f"declares no scale parameter (Param(role='scale')) among {', '.join(sized)}")
        return None
    name, p = declared
    each = devices_each(tech.parameters, name, values, devices_per_node)
    what = f": {p.devices_each}" if isinstance(p.devices_each, str) else ""
    if each is None:
        raise CannotScale(f"its {name} counts {p.devices_each} GPUs each: expected one value of each, "
                          f"got {', '.join(f'{f}={values.get(f)}' for f in scale_factors(tech.parameters, name) if values and f in values)}")
    if gpus % each:
        raise CannotScale(f"{gpus} GPUs is not a whole number of its {name} ({each} GPU(s) each{what})")
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


def _profile_sizes(base: Mapping[str, Any], resolver: Any) -> list[tuple[str, int, int]] | None:
    """(name, devices, devices per node) of each profile the sweep names, in its order, or None when
    it names none (each technique's own default) or a pattern."""
    sizes = []
    for name in base.get("profiles") or ():
        try:
            prof = resolver.profile(str(name))[0]
        except Exception:  # noqa: BLE001 - a glob or kind:/tag: pattern: no single size
            return None
        sizes.append((prof.name, prof.num_devices, prof.devices_per_node))
    return sizes or None


@dataclass
class _Sweep:
    """One category sweep as it is built: the shared settings, and what each technique added."""

    category: str
    params: dict[str, list[str]]
    sizes: list[tuple[str, int, int]] | None  # (name, devices, devices per node) of each profile named
    scale: int | None  # the GPUs every technique runs on (None: each its own default scale)
    origin: str  # where the scale comes from (--gpus, or the smallest profile's size)
    efficiency: list[str]
    cases: list[Any] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    used: set[str] = field(default_factory=set)  # the --param names some technique declares
    applied: list[str] = field(default_factory=list)  # the techniques that run
    scales: dict[str, dict[str, str]] = field(default_factory=dict)  # technique -> profile -> its scale
    by_param: set[str] = field(default_factory=set)  # the techniques whose scale a --param set
    fitting: list[str] = field(default_factory=list)  # the profiles the techniques run on
    left: dict[tuple[bool, str, str], list[str]] = field(default_factory=dict)  # (warning?, technique,
    # what follows "left out") -> the profiles it is left out on

    def leave_out(self, tech: str, prof: tuple[str, int, int] | None, why: str, warning: bool = False) -> None:
        """Leave *tech* out on *prof* (every profile when None) with *why* (" (does not apply): ...")."""
        self.left.setdefault((warning, tech, why), []).append(prof[0] if prof else "")

    def left_out(self) -> None:
        """The notes and warnings saying who is left out where: "on P" only when not on every profile."""
        for (warning, tech, why), where in self.left.items():
            on = "" if len(self.fitting) < 2 or set(where) >= set(self.fitting) else f" on {', '.join(where)}"
            (self.warnings if warning else self.notes).append(
                f"--category {self.category}: {tech} left out{on}{why}" if warning else f"{tech} left out{on}{why}")


def expand_category(category: str, *, context: Any, resolver: Any, base: Mapping[str, Any],
                    params: Mapping[str, list[str]] | None = None, max_cases: int = 1_000_000,
                    gpus: int | None = None) -> tuple[list[Any], list[str], list[str]]:
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
        :func:`scale_value`, nodes counted with each profile's own devices per node); default the
        size of the smallest profile named in *base*. A profile with fewer GPUs is left out (a
        warning). Every ``role="efficiency"`` parameter is set to one value (``--param
        efficiency=...``, default :data:`HEAD_TO_HEAD_EFFICIENCY`). A technique that cannot run at
        that scale, or does not apply, on a profile is left out there and named (with "on PROFILE"
        when not on every profile); one that cannot run at that scale and declines the workload at
        its own default scale is named with the reason it declines it (a note), else the scale's (a
        warning). A scale parameter given in *params* wins; the note gives its GPUs.

    Returns
    -------
    (list of Case, list of str, list of str)
        The cases, notes (techniques left out and why, parameters not applied), warnings.

    Raises
    ------
    ExperimentError
        An unknown category, or no technique of it applies.
    """
    from suite.technique import CATEGORIES

    if category not in CATEGORIES:
        raise ExperimentError(f"--category: expected one of {', '.join(CATEGORIES)}, got {category!r}")
    techs = context.registry.techniques(category)
    if not techs:
        raise ExperimentError(f"--category {category}: no installed technique has this category")
    params = dict(params or {})
    sweep = _new_sweep(category, params, _profile_sizes(base, resolver), gpus)
    profiles: list[Any] = _fitting_profiles(sweep) if sweep.sizes else [None]
    sweep.fitting = [p[0] for p in profiles if p]
    for t in techs:
        for prof in profiles:
            try:
                got = _technique_params(t, sweep, resolver, prof)
            except CannotScale as exc:
                _cannot_scale(t, exc, sweep, base, resolver, max_cases, prof)
                continue
            _add_technique(t, *got, sweep, base, resolver, max_cases, prof)
    sweep.left_out()
    for k in sorted(set(params) - sweep.used):
        sweep.warnings.append(f"--param {k}: no technique of category {category} declares it")
    if not sweep.cases:
        raise ExperimentError(f"--category {category}: no technique of this category applies ("
                              + "; ".join(sweep.notes + sweep.warnings) + ")")
    _summarise(sweep)
    _scale_warnings(sweep, techs)
    return sweep.cases, sweep.notes, sweep.warnings


def _new_sweep(category: str, params: dict[str, list[str]], sizes: list[tuple[str, int, int]] | None,
               gpus: int | None) -> _Sweep:
    """The sweep's shared settings: its scale is *gpus*, else the smallest profile's size."""
    smallest = min(sizes, key=lambda x: (x[1], x[0])) if sizes else None
    origin = ("--gpus" if gpus is not None else f"the size of profile {smallest[0] if smallest else ''}"
              + (", the smallest named" if sizes and len(sizes) > 1 else "") + "; --gpus to change")
    return _Sweep(category, params, sizes, gpus if gpus is not None else (smallest[1] if smallest else None), origin,
                  params.get("efficiency") or [str(HEAD_TO_HEAD_EFFICIENCY)])


def _fitting_profiles(sweep: _Sweep) -> list[tuple[str, int, int]]:
    """The profiles named that hold the sweep's GPUs; a warning names each that does not."""
    fit = []
    for prof in sweep.sizes or ():
        if sweep.scale is not None and prof[1] < sweep.scale:
            sweep.warnings.append(f"--category {sweep.category}: profile {prof[0]} left out: it has {prof[1]} GPUs, "
                                  f"fewer than the {sweep.scale} every technique runs on ({sweep.origin})")
        else:
            fit.append(prof)
    return fit


def _technique_params(t: Any, sweep: _Sweep, resolver: Any,
                      prof: tuple[str, int, int] | None) -> tuple[dict[str, list[str]], str | None]:
    """(the ``--param`` values *t* declares, with its scale (on profile *prof*: that profile's devices
    per node) and efficiency parameters set to the sweep's, how its scale was set or None when the sweep
    sets none). A scale the user's ``--param`` gives wins, and is labelled with its GPUs.

    Raises
    ------
    CannotScale
        *t* cannot run at the sweep's scale there."""
    from suite.declaration.params import devices_each, scale_parameter

    mine = {k: v for k, v in sweep.params.items() if k in t.parameters}
    sweep.used |= set(mine)
    if sweep.scale is None:
        return mine, None
    per_node = prof[2] if prof else _own_devices_per_node(t, resolver)
    name = (scale_parameter(t.parameters) or (None,))[0]
    if name is not None and name in mine:  # the user's --param sets this technique's scale
        each = devices_each(t.parameters, name, mine, per_node)
        gpus = ",".join(str(int(v) * each) if each and str(v).isdigit() else "?" for v in mine[name])
        label = f"{name}={','.join(mine[name])} = {gpus} GPU{'' if gpus == '1' else 's'}"
        sweep.by_param.add(t.name)
    else:
        sv = scale_value(t, sweep.scale, per_node, mine)
        if sv:
            mine[sv[0]] = [str(sv[1])]
        label = f"{sv[0]}={sv[1]}" if sv else "no scale parameter (one device)"
    for k, p in t.parameters.items():
        if getattr(p, "role", None) == "efficiency" and k not in mine:
            mine[k] = list(sweep.efficiency)
    return mine, label


def _cannot_scale(t: Any, exc: CannotScale, sweep: _Sweep, base: Mapping[str, Any], resolver: Any, max_cases: int,
                  prof: tuple[str, int, int] | None) -> None:
    """Leave *t*, which cannot run at the sweep's scale on *prof*, out there: with the reason it does
    not apply to the workload when it declines its case at its own default scale (newuser14: "it cannot
    run on 8 GPUs" where the workload was not one it reads at any scale), else with *exc* (a warning)."""
    from suite.technique import Skip

    try:
        exp = _expand(t, {k: v for k, v in sweep.params.items() if k in t.parameters}, sweep, base, resolver,
                      max_cases, prof)
        why = _does_not_apply(t, exp.cases, Skip)
    except SuiteError:
        why = None
    if why:
        sweep.leave_out(t.name, prof, f" (does not apply): {why}")
    else:
        sweep.leave_out(t.name, prof, f": it cannot run on {sweep.scale} GPUs ({exc})", warning=True)


def _expand(t: Any, mine: dict[str, list[str]], sweep: _Sweep, base: Mapping[str, Any], resolver: Any,
            max_cases: int, prof: tuple[str, int, int] | None) -> Any:
    """*t*'s entry with the ``--param`` values *mine* (on profile *prof*, or every profile of *base*
    when None), expanded (an :class:`suite.runner.experiment.Expansion`).

    Raises
    ------
    SuiteError
        The entry does not expand (as :func:`suite.runner.experiment.expand_entry`)."""
    from suite.runner.experiment import Expansion, expand_entry

    entry: dict[str, Any] = {"technique": t.name, **{k: v for k, v in base.items() if v}}
    if prof:
        entry["profiles"] = [prof[0]]
    if mine:
        entry["params"] = mine
    return expand_entry(entry, where=f"--category {sweep.category} ({t.name})", resolver=resolver,
                        expansion=Expansion(max_cases=max_cases))


def _add_technique(t: Any, mine: dict[str, list[str]], label: str | None, sweep: _Sweep, base: Mapping[str, Any],
                   resolver: Any, max_cases: int, prof: tuple[str, int, int] | None) -> None:
    """Expand *t*'s entry (on profile *prof*, or every profile of *base* when None) into the sweep,
    with the *label* of its scale there, or note why it is left out there (no case, or it does not apply)."""
    from suite.technique import Skip

    try:
        exp = _expand(t, mine, sweep, base, resolver, max_cases, prof)
    except SuiteError as exc:
        sweep.leave_out(t.name, prof, f": {exc}")
        return
    if not exp.cases:
        sweep.leave_out(t.name, prof, ": no case")
        return
    why = _does_not_apply(t, exp.cases, Skip)
    if why:
        sweep.leave_out(t.name, prof, f" (does not apply): {why}")
        return
    if label is not None:
        sweep.scales.setdefault(t.name, {})[prof[0] if prof else ""] = label
    sweep.cases += exp.cases
    sweep.notes += [n for n in exp.notes if n not in sweep.notes]
    sweep.warnings += exp.warnings
    if t.name not in sweep.applied:
        sweep.applied.append(t.name)


def _summarise(sweep: _Sweep) -> None:
    """The notes at the top: which techniques run, and at which scale (per profile where the
    techniques' scale parameters differ between profiles) and efficiency."""
    category, applied = sweep.category, sweep.applied
    sweep.notes.insert(0, f"category {category}: running {', '.join(applied)} ({len(sweep.cases)} case(s))")
    if sweep.scale is None:
        return
    profiles = list(dict.fromkeys(p for n in applied for p in sweep.scales.get(n, {})))
    each = {p: "; ".join(f"{n} {sweep.scales[n][p]}" for n in applied if p in sweep.scales.get(n, {}))
            for p in profiles}
    body = (next(iter(each.values())) if len(set(each.values())) == 1
            else " | ".join(f"on {p}: {text}" for p, text in each.items()))
    user = [n for n in applied if n in sweep.by_param]
    if user:
        others = [n for n in applied if n not in sweep.by_param]
        head = (f"the scale of {', '.join(user)} set by your --param (its GPUs below)"
                + (f", every other technique on {sweep.scale} GPUs ({sweep.origin})" if others else ""))
    else:
        head = f"every technique on {sweep.scale} GPUs ({sweep.origin})"
    sweep.notes.insert(1, f"category {category}: {head} with efficiency {','.join(sweep.efficiency)} "
                       f"(--param efficiency=...): {body}")


def _scale_warnings(sweep: _Sweep, techs: Sequence[Any]) -> None:
    """A warning when there is no head-to-head (one technique), or when each runs at its own scale."""
    category, applied = sweep.category, sweep.applied
    if len(applied) == 1:
        sweep.warnings.append(f"--category {category}: only {applied[0]} applies here, so there is no head-to-head "
                              f"comparison (the others' reasons are in the notes)")
        return
    if sweep.scale is not None:
        return
    # a technique's scale: its parameters counted in nodes, workers, ranks or GPUs (read from
    # the declarations, so no technique's parameter is named here), each left at its default
    by_name = {t.name: t for t in techs}
    unset = {n: [f"{k}={p.default}" for k, p in by_name[n].parameters.items()
                 if p.unit in SCALE_UNITS and p.default is not None and k not in sweep.params] for n in applied}
    unset = {n: v for n, v in unset.items() if v}
    if unset:
        sweep.warnings.append(f"--category {category}: these run at their own default scale ("
                              + "; ".join(f"{n}: {', '.join(v)}" for n, v in unset.items())
                              + "); set it with --param (applied to the techniques that declare the parameter) "
                                "for a like-for-like comparison, or name one --profile (or --gpus N) to put every "
                                "technique on the same number of GPUs")


def _does_not_apply(tech: Any, cases: Iterable[Any], skip_type: type[BaseException]) -> str | None:
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
