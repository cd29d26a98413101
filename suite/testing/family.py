"""The kit's family checks (one per capability a technique declares, :data:`FAMILY_CHECKS`) and
its default checks (every technique where they apply, :data:`DEFAULT_CHECKS`; warn-only until
the version :data:`suite.deprecation.FAILS_FROM` names).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from suite.errors import ParameterError
from suite.technique import CAPABILITIES, FIDELITIES, KIT_OPT_OUTS, Result, Skip, Technique
from suite.testing.generic import _fail, _scen

if TYPE_CHECKING:  # pragma: no cover
    from suite.hardware import Profile
    from suite.runner.case import Case

#: a family or default check: (technique, smoke results by case key, smoke cases) -> the reason it was
#: skipped, or None when it ran and passed (a failure raises AssertionError)
CheckFn = Callable[[Technique, "dict[str, Result]", "Sequence[Case]"], "str | None"]

# ----------------------------------------------------------------------------- family checks


def _results_by_case(results: dict[str, Result], cases: Sequence[Case]) -> list[tuple[Case, Result]]:
    """(case, result) for every smoke case that ran, in order (a case names itself in a failure)."""
    return [(c, results[c.key]) for c in cases if c.key in results]


def _family_metrics_equal(name: str, first: str, second: str, labels: tuple[str, str]) -> CheckFn:
    """The family check *name*: every smoke result reporting both metrics reports them equal
    (bytes sent == bytes received; bytes offloaded == bytes prefetched). *labels* name the two in
    the failure line."""
    def check(tech: Technique, results: dict[str, Result], cases: Sequence[Case]) -> str | None:
        seen = False
        for case, r in _results_by_case(results, cases):
            if first in r and second in r:
                seen = True
                if r[first] != r[second]:
                    raise _fail(tech, name, f"case {case.describe()}: {labels[0]} {r[first]} != {labels[1]} {r[second]}")
        return None if seen else f"no smoke result reports {first}/{second}"
    return check


def comm_bandwidth_bound(profile: Profile) -> float:
    """The fastest a worker can send, in B/s, over all the profile's network levels together: the
    sum of each level's per-endpoint bandwidth (an inter-node level through all the node's NICs).

    ``comm_bytes`` is defined once: the bytes one worker sends over ALL network levels together
    (intra-node links included; for a collective priced by :func:`suite.perf.collective_time`,
    ``sum(cost.bytes_per_level)``). Whatever levels carry them, and even when the levels work at
    once, moving them takes at least ``comm_bytes / comm_bandwidth_bound(profile)``: the bound the
    ``alpha-beta-bound`` check holds ``comm_time`` to. A group inside one node over NVLink passes.
    """
    levels = list(profile.network)
    intra = 1 if (len(levels) > 1 or profile.devices_per_node > 1) else 0
    nics = (profile.node.nics_per_node if profile.node is not None else None) or 1
    return float(sum(lvl.bandwidth * (1 if i < intra else nics) for i, lvl in enumerate(levels)))


def _family_alpha_beta(tech: Technique, results: dict[str, Result], cases: Sequence[Case]) -> str | None:
    seen = False
    for case, r in _results_by_case(results, cases):
        profile = _scen(case).profile
        if "comm_time" not in r or "comm_bytes" not in r or profile is None or not profile.network:
            continue
        seen = True
        bw = comm_bandwidth_bound(profile)
        bound = r["comm_bytes"] / bw
        if r["comm_time"] < bound * (1 - 1e-9):
            raise _fail(tech, "alpha-beta-bound", f"case {case.describe()}: comm_time {r['comm_time']:.3g} s is below "
                                                  f"the bandwidth bound {bound:.3g} s: comm_bytes {r['comm_bytes']:.3g} B "
                                                  f"(one worker, all levels) at most {bw:.3g} B/s (every level's "
                                                  f"bandwidth together)")
    return None if seen else "no smoke result reports comm_time and comm_bytes on a profile with a network"


def _family_memory(tech: Technique, results: dict[str, Result], cases: Sequence[Case]) -> str | None:
    seen = False
    for case in cases:
        r = results.get(case.key)
        profile = _scen(case).profile
        device = profile.device if profile is not None else None
        if r is None or "peak_memory" not in r or device is None:
            continue
        if "fits" in r and r["fits"] != 1:
            continue
        seen = True
        cap = device.memory
        if r["peak_memory"] > cap * (1 + 1e-9):
            raise _fail(tech, "memory-capacity", f"case {case.describe()}: peak {r['peak_memory']:.4g} B > capacity {cap:.4g} B")
    return None if seen else "no smoke result reports peak_memory that fits"


def _family_metric_zero(name: str, metric: str, tol: float) -> CheckFn:
    def check(tech: Technique, results: dict[str, Result], cases: Sequence[Case]) -> str | None:
        seen = False
        for case, r in _results_by_case(results, cases):
            if metric in r:
                seen = True
                if abs(r[metric]) > tol:
                    raise _fail(tech, name, f"case {case.describe()}: {metric} = {r[metric]:.3g} > {tol:g}")
        return None if seen else f"no smoke result reports {metric}"
    return check


def _family_sgd(tech: Technique, results: dict[str, Result], cases: Sequence[Case],
                rel: float = 0.5) -> str | None:
    base = {v.name for v in tech.baselines}
    by_scen: dict[tuple[Any, ...], dict[str, float]] = {}
    for case in cases:
        r = results.get(case.key)
        if r is None or "final_loss" not in r:
            continue
        k = (case.profile, case.workload, case.fidelity, tuple(sorted(case.params.items())))
        by_scen.setdefault(k, {})[case.variant] = r["final_loss"]
    seen = False
    for k, losses in by_scen.items():
        ref = [losses[b] for b in base if b in losses]
        if not ref:
            continue
        seen = True
        envelope = max(ref) * (1 + rel) + 1e-12
        for v, loss in losses.items():
            if loss > envelope:
                raise _fail(tech, "sgd-envelope", f"scenario {k[0]} {k[1] or ''} {dict(k[3])}: variant {v!r} final loss {loss:.4g} > {1 + rel:g} x baseline {max(ref):.4g}")
    return None if seen else "no smoke scenario reports final_loss for a baseline variant"


def _family_network(tech: Technique, results: dict[str, Result], cases: Sequence[Case]) -> str | None:
    """Issue 17's check on every model smoke case on a profile with a network:
    ``check_network_sensitivity(technique, scenario)`` returns one line per problem (a level the
    traffic crosses whose slow-down the technique does not pass on, a level it does not cross
    that changes a metric); the first problem fails the check."""
    from suite.perf.sensitivity import check_network_sensitivity as fn

    seen = False
    for case in cases:
        scen = _scen(case)
        if case.fidelity != "model" or case.key not in results or scen.profile is None or not scen.profile.network:
            continue
        try:
            problems = fn(tech, scen)
        except Skip:
            continue
        except AssertionError as exc:
            raise _fail(tech, "network-sensitivity", f"case {case.describe()}: {exc}") from None
        seen = True
        if isinstance(problems, str):
            problems = [problems]
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            raise _fail(tech, "network-sensitivity", f"case {case.describe()}: {problems[0]}{more}")
    return None if seen else "no model smoke case on a profile with a network"


FAMILY_CHECKS: dict[str, CheckFn] = {
    "bytes-conserved": _family_metrics_equal("bytes-conserved", "bytes_sent", "bytes_received",
                                             ("bytes_sent", "bytes_received")),
    "alpha-beta-bound": _family_alpha_beta,
    "memory-capacity": _family_memory,
    "offload-balanced": _family_metrics_equal("offload-balanced", "bytes_offloaded", "bytes_prefetched",
                                              ("offloaded", "prefetched")),
    "recovery-exact": _family_metric_zero("recovery-exact", "recovery_error", 1e-9),
    "sgd-envelope": _family_sgd,
    "oracle-exact": _family_metric_zero("oracle-exact", "oracle_error", 1e-8),
    "network-sensitivity": _family_network,
}
assert set(FAMILY_CHECKS) == set(CAPABILITIES), "suite.technique.CAPABILITIES and FAMILY_CHECKS disagree"


# ----------------------------------------------------------------------------- default checks
#
# Checks that run for every technique where they apply, new in 0.2.0: until the version
# suite.deprecation.FAILS_FROM names, a problem they find is a KitWarning, not a failure. A
# technique opts out of one with a written reason (Technique.kit_opt_out), shown by `suite plugins`.

#: the default checks, in the order they run (after the family checks)
DEFAULT_CHECKS = KIT_OPT_OUTS


def _comm_metric(r: Result) -> str | None:
    from suite.perf.sensitivity import COMM_METRICS

    return next((m for m in COMM_METRICS if m != "iteration_time" and m in r), None)


def _default_network(tech: Technique, results: dict[str, Result], cases: Sequence[Case]) -> str | None:
    """Network sensitivity (issue 17's check) on every model smoke case whose result reports a
    communication time (``comm_time``, ``allreduce_time``, ...)."""
    comm = [c for c, r in _results_by_case(results, cases) if c.fidelity == "model" and _comm_metric(r)]
    if not comm:
        return "no model smoke result reports a communication time"
    return _family_network(tech, results, comm)


def _default_oracle(tech: Technique, results: dict[str, Result], cases: Sequence[Case]) -> str | None:
    """Every execute smoke result's ``oracle_error`` is within the technique's declared
    ``oracle_tolerance`` (the runner fails such a case), else within the default tolerance."""
    from suite.runner.oracle import oracle_limit

    tol, declared = oracle_limit(tech)
    seen = False
    for case, r in _results_by_case(results, cases):
        if case.fidelity != "execute" or "oracle_error" not in r:
            continue
        seen = True
        if abs(r["oracle_error"]) > tol:
            what = "the declared oracle_tolerance" if declared else "the default tolerance (declare oracle_tolerance)"
            exc = _fail(tech, "oracle-agreement", f"case {case.describe()}: oracle_error = {r['oracle_error']:.3g} "
                                                  f"exceeds {what} {tol:g}")
            setattr(exc, "strict", declared)  # the runner already fails such a case: no grace period
            raise exc
    return None if seen else "no execute smoke result reports oracle_error"


class _InDeclaredUnit:
    """Mix-in of the tagged parameter values the ``units`` check feeds: a number that remembers
    the parameter and unit it was declared with (arithmetic gives a plain number back)."""

    param: str = ""
    unit: str = ""


def _tagged(value: float, name: str, unit: str) -> float:
    base = int if isinstance(value, int) and not isinstance(value, bool) else float
    cls = type(f"{base.__name__}_in_{name}", (base, _InDeclaredUnit), {"param": name, "unit": unit})
    tagged: float = cls(value)
    return tagged


def _physical_units(tech: Technique) -> dict[str, str]:
    """Parameters declared with a physical unit pint knows (a size, a time, a rate, ...): name -> unit."""
    from suite.hardware.units import ureg

    out = {}
    for name, p in tech.parameters.items():
        if not p.unit or p.type not in (int, float):
            continue
        try:
            u = ureg.Unit(p.unit)
        except Exception:  # noqa: BLE001 - counts ("workers", "nodes") are not pint units
            continue
        if not u.dimensionless:
            out[name] = p.unit
    return out


def _other_unit(value: float, unit: str) -> str:
    """*value* (in *unit*) written in another unit of the same dimension: its SI base units, or
    milli-*unit* when the unit is already a base unit."""
    from suite.hardware.units import ureg

    q = ureg.Quantity(value, unit)
    alt = q.to_base_units()
    if str(alt.units) == str(q.units):
        alt = q.to(f"milli{q.units}")
    return f"{alt.magnitude!r} {alt.units}"


def _default_units(tech: Technique, results: dict[str, Result], cases: Sequence[Case]) -> str | None:
    """Parameters with units reach the model in their declared unit: the kit feeds each smoke
    value written in another unit (``"6.4e10 bit"`` for 8 GB) and expects the same number; and
    it feeds the value tagged with its unit into every model smoke case, failing when it reaches
    :func:`suite.perf.collective_time` as a byte count unconverted (a size declared in GB read as
    bytes is off by 1e9)."""
    from suite.hardware.units import ureg
    from suite.perf.network import record_levels

    units = _physical_units(tech)
    if not units:
        return "no parameter is declared with a physical unit"
    model = [(c, r) for c, r in _results_by_case(results, cases) if c.fidelity == "model"]
    for name, unit in units.items():
        for case, _r in model or _results_by_case(results, cases)[:1]:
            value = _scen(case).params.get(name)
            if not isinstance(value, (int, float)) or isinstance(value, bool):
                continue
            text = _other_unit(value, unit)
            try:
                got = tech.validate_params({**dict(case.params), name: text})[name]
            except ParameterError as exc:
                raise _fail(tech, "units", f"case {case.describe()}: parameter {name!r} declared in {unit}: the same "
                                           f"value written as {text!r} was refused: {exc}") from None
            if not math.isclose(got, value, rel_tol=1e-9, abs_tol=0.0):
                raise _fail(tech, "units", f"case {case.describe()}: parameter {name!r} declared in {unit}: {text!r} "
                                           f"reached the model as {got!r}, expected {value!r}")
        to_bytes = float(ureg.Quantity(1, unit).to("B").magnitude) if ureg.Unit(unit).is_compatible_with("B") else None
        if to_bytes is None or to_bytes == 1.0:
            continue
        for case, _r in model:
            value = _scen(case).params.get(name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value == 0:
                continue
            scen = replace(_scen(case), params={**dict(_scen(case).params), name: _tagged(value, name, unit)})
            with record_levels() as rec:
                try:
                    tech.evaluate(scen)
                except Skip:
                    continue
            for op, nbytes, _group, _algo in rec.calls:
                if isinstance(nbytes, _InDeclaredUnit):
                    raise _fail(tech, "units", f"case {case.describe()}: parameter {name!r} is declared in {unit} but "
                                               f"reaches collective_time({op!r}) as a byte count unconverted (off by "
                                               f"{to_bytes:g}x): convert it (value * {to_bytes:g}) or declare it in B")
    return None


def _default_meanings(tech: Technique, results: dict[str, Result], cases: Sequence[Case]) -> str | None:
    """Each metric a smoke case reports that the technique declares a meaning for (at the case's
    fidelity: :meth:`suite.technique.Technique.meaning`) is reported in the declared unit and
    direction: `suite info` prints the declaration as what the results are (a plugin declared
    ``efficiency`` in s, lower is better, while its model reported it in 1, higher)."""
    if not tech.metric_meanings:
        return "the technique declares no metric meanings (suite info prints none)"
    fidelity = {c.key: c.fidelity for c in cases}
    for key, r in results.items():
        for name, m in r.metrics.items():
            declared = tech.meaning(name, fidelity.get(key))
            if declared is None:
                raise _fail(tech, "meanings", f"metric {name!r} ({fidelity.get(key)} fidelity): expected a meaning "
                                              f"(its vocabulary's or [metric_meanings]'), got none{_misspelt(tech, name)}")
            clash = _unit_clash(declared.unit, m.unit)
            if clash is not None or declared.direction != m.direction:
                raise _fail(tech, "meanings", f"metric {name!r} ({fidelity.get(key)} fidelity): declared unit "
                                              f"{declared.unit!r}, direction {declared.direction!r}; the results "
                                              f"give {m.unit!r}, {m.direction!r}{clash or ''}")
    return None


def _misspelt(tech: Technique, name: str) -> str:
    """``"; [metric_meanings] declares 'comm_tme': a typo?"`` when the technique declares a meaning
    under a name close to *name* (a misspelt entry meant for it), else ``""``."""
    from suite.errors import close_names

    declared: set[str] = set()
    for key, entry in tech.metric_meanings.items():
        declared |= set(entry) if isinstance(entry, Mapping) and key in FIDELITIES else {key}
    # a typo is one or two characters off (comm_tme, comm_tiem), not another metric (comm_bytes)
    close = close_names(name, sorted(declared - {"include", name}), n=1, cutoff=0.85)
    return f"; [metric_meanings] declares {close[0]!r}: a typo?" if close else ""


def _unit_clash(declared: str, given: str) -> str | None:
    """None when a result in unit *given* is what a meaning in unit *declared* says: the same unit
    or one of its dimension (``ms`` for ``s``, ``GB/s`` for ``gigabyte / second``: the results carry
    their unit and are converted where shown), compared through :func:`suite.hardware.units.dimension`
    (cached; equal strings need no registry); else why not, both units named (`` ('s' is [time],
    'GB/s' is [information] / [time])``)."""
    if declared == given:
        return None
    from suite.hardware.units import dimension

    try:
        a, b = dimension(declared), dimension(given)
    except ValueError as e:
        return f" (units that cannot be compared: {e})"
    return None if a == b else f" ({declared!r} is {a}, {given!r} is {b}: different dimensions)"


_DEFAULT_FNS: dict[str, CheckFn] = {
    "network-sensitivity": _default_network,
    "oracle-agreement": _default_oracle,
    "units": _default_units,
    "meanings": _default_meanings,
}


def _applies(tech: Technique, check: str) -> bool:
    """Whether default check *check* is listed for *tech* (it may still skip once the smoke cases ran)."""
    if check in tech.kit_opt_out:
        return True  # listed, and skipped with the written reason: visible, not silent
    if check == "network-sensitivity":
        return ("network-sensitivity" not in tech.capabilities and tech.needs_profile
                and bool({"model", "simulate"} & set(tech.fidelities)))
    if check == "oracle-agreement":
        return "execute" in tech.fidelities
    if check == "meanings":
        return bool(tech.metric_meanings)
    return any(p.unit for p in tech.parameters.values())
