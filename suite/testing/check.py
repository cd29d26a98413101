"""``check_technique``: the public proof that a technique follows the contract.

Like scikit-learn's ``check_estimator``: one call runs every generic check and the family checks
the technique opts into through ``Technique.capabilities``; each check either passes, fails with
an ``AssertionError`` naming the technique, the check and the case, or is skipped with a reason.

Family checks and the metric conventions they read (a technique that declares the capability
must report these):

=====================  ================================================================  =========================================
capability             what is checked                                                   metrics / artifacts read
=====================  ================================================================  =========================================
``bytes-conserved``    bytes sent by all workers == bytes received (execute)             ``bytes_sent``, ``bytes_received``
``alpha-beta-bound``   communication time >= the bandwidth lower bound of the profile    ``comm_time`` (s), ``comm_bytes`` (B)
                       for moving ``comm_bytes`` over the outer network level             per worker
``memory-capacity``    peak device memory <= device capacity (when ``fits`` == 1)         ``peak_memory`` (B), ``fits``
``offload-balanced``   bytes offloaded == bytes prefetched back                           ``bytes_offloaded``, ``bytes_prefetched``
``recovery-exact``     state after recovery equals the fault-free state (execute)         ``recovery_error`` (== 0 within 1e-9)
``sgd-envelope``       final loss within an envelope of the synchronous baseline          ``final_loss``; baseline variant's
``oracle-exact``       output equals the oracle (execute)                                 ``oracle_error`` <= 1e-8
=====================  ================================================================  =========================================
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from suite.errors import ParameterError, SuiteError
from suite.technique import Result, Skip, Technique

__all__ = ["CheckReport", "check_technique", "FAMILY_CHECKS"]


@dataclass
class CheckReport:
    """Outcome of :func:`check_technique`: check name -> "passed" / "skipped: reason"."""

    technique: str
    outcomes: dict[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> list[str]:
        return [k for k, v in self.outcomes.items() if v == "passed"]

    @property
    def skipped(self) -> dict[str, str]:
        return {k: v[len("skipped: "):] for k, v in self.outcomes.items() if v.startswith("skipped")}


def _fail(tech: Technique, check: str, msg: str) -> AssertionError:
    return AssertionError(f"{tech.name}: check {check!r} failed: {msg}")


# ----------------------------------------------------------------------------- generic checks


def check_metadata(tech: Technique) -> None:
    if not tech.paper.title:
        raise _fail(tech, "metadata", "paper has no title")
    if not (tech.paper.year and (tech.paper.venue or tech.paper.arxiv)):
        raise _fail(tech, "metadata", "paper needs a year and a venue or arXiv id")
    if not tech.title:
        raise _fail(tech, "metadata", "technique has no title")
    for v in tech.variants:
        if not v.description:
            raise _fail(tech, "metadata", f"variant {v.name!r} has no description")
    if not tech.smoke:
        raise _fail(tech, "metadata", "declare at least one fast `smoke` ScenarioSpec")
    for c in tech.claims:
        if not c.source:
            raise _fail(tech, "metadata", f"claim {c.id!r} names no source")


def check_parameters(tech: Technique) -> None:
    tech.validate_params({})  # defaults are valid
    for name, p in tech.parameters.items():
        bad: list = []
        if p.minimum is not None:
            bad.append(p.minimum - (1 if p.type is int else max(1e-9, abs(p.minimum) * 1e-6 + 1e-9)))
        if p.maximum is not None:
            bad.append(p.maximum + (1 if p.type is int else max(1e-9, abs(p.maximum) * 1e-6 + 1e-9)))
        if p.choices:
            bad.append("__not_a_choice__")
        if p.type in (int, float):
            bad.append("not-a-number")
        for value in bad:
            try:
                tech.validate_params({name: value})
            except ParameterError as exc:
                msg = str(exc)
                if name not in msg or "\n" in msg:
                    raise _fail(tech, "parameters", f"error for {name}={value!r} must be one line naming it: {msg!r}")
            else:
                raise _fail(tech, "parameters", f"{name}={value!r} was accepted; expected a ParameterError")
    try:
        tech.validate_params({"__unknown__": 1})
    except ParameterError:
        pass
    else:
        raise _fail(tech, "parameters", "an unknown parameter was accepted")


def _smoke_cases(tech: Technique):
    from suite.runner.case import resolve_case

    out = []
    for spec in tech.smoke:
        for v in tech.variant_names:
            out.append(resolve_case(tech, replace(spec, variant=v)))
    return out


def _run(tech: Technique, case) -> Result | None:
    try:
        return tech.evaluate(case.scenario)
    except Skip:
        return None


def check_runs_and_metrics(tech: Technique) -> dict[str, Result]:
    results: dict[str, Result] = {}
    fids = {s.fidelity for s in tech.smoke}
    missing = set(tech.fidelities) - fids
    if missing:
        raise _fail(tech, "runs", f"no smoke scenario for fidelity {sorted(missing)}")
    for case in _smoke_cases(tech):
        r = _run(tech, case)
        if r is None:
            continue
        if not r.metrics:
            raise _fail(tech, "metrics", f"{case.describe()}: no metrics")
        for name, m in r.metrics.items():
            if not isinstance(m.value, float) or not math.isfinite(m.value):
                raise _fail(tech, "metrics", f"{case.describe()}: metric {name!r} is not finite: {m.value!r}")
            if not m.unit:
                raise _fail(tech, "metrics", f"{case.describe()}: metric {name!r} has no unit")
        results[case.key] = r
    if not results:
        raise _fail(tech, "runs", "every smoke case was skipped")
    return results


def check_determinism(tech: Technique, first: dict[str, Result]) -> None:
    for case in _smoke_cases(tech):
        if case.fidelity == "execute" or case.key not in first:
            continue  # measured timings are not deterministic
        again = _run(tech, case)
        a = {k: m.value for k, m in first[case.key].metrics.items()}
        b = {k: m.value for k, m in again.metrics.items()} if again else {}
        if a != b:
            diff = sorted(k for k in a if a.get(k) != b.get(k))
            raise _fail(tech, "determinism", f"{case.describe()}: metrics differ between two runs with one seed: {diff}")


def check_claims_resolve(tech: Technique) -> None:
    from suite.runner.case import resolve_case

    for c in tech.claims:
        for label, spec in c.specs().items():
            try:
                resolve_case(tech, spec)
            except SuiteError as exc:
                raise _fail(tech, "claims", f"claim {c.id!r} case {label!r} does not resolve: {exc}") from None


def check_properties(tech: Technique, max_examples: int = 10) -> str | None:
    if not tech.properties:
        return "no declared properties"
    fid = "model" if "model" in tech.fidelities else next(iter(tech.fidelities))

    for prop in tech.properties:
        _check_one_property(tech, prop, fid, max_examples)
    return None


def _check_one_property(tech: Technique, prop, fid: str, max_examples: int) -> None:
    from hypothesis import HealthCheck, assume, given, settings

    from suite.testing.strategies import scenarios

    @settings(max_examples=max_examples, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck), database=None)
    @given(scenarios(tech, fidelity=fid))
    def run(scenario):
        try:
            prop.check(tech, scenario)
        except Skip:
            assume(False)
        except AssertionError as exc:
            raise _fail(tech, f"property {prop.name}", f"{exc} (scenario {scenario.variant}, profile "
                                                      f"{scenario.profile_name})") from None

    run()


# ----------------------------------------------------------------------------- family checks


def _family_bytes_conserved(tech, results):
    seen = False
    for r in results.values():
        if "bytes_sent" in r and "bytes_received" in r:
            seen = True
            if r["bytes_sent"] != r["bytes_received"]:
                raise _fail(tech, "bytes-conserved", f"bytes_sent {r['bytes_sent']} != bytes_received {r['bytes_received']}")
    return None if seen else "no smoke result reports bytes_sent/bytes_received"


def _family_alpha_beta(tech, results, cases):
    seen = False
    for case in cases:
        r = results.get(case.key)
        if r is None or "comm_time" not in r or "comm_bytes" not in r or case.scenario.profile is None:
            continue
        net = case.scenario.profile.outer_network
        if net is None:
            continue
        seen = True
        bound = r["comm_bytes"] / net.bandwidth
        if r["comm_time"] < bound * (1 - 1e-9):
            raise _fail(tech, "alpha-beta-bound", f"{case.describe()}: comm_time {r['comm_time']:.3g} s is below "
                                                  f"the bandwidth bound {bound:.3g} s for {r['comm_bytes']:.3g} B")
    return None if seen else "no smoke result reports comm_time and comm_bytes on a profile with a network"


def _family_memory(tech, results, cases):
    seen = False
    for case in cases:
        r = results.get(case.key)
        if r is None or "peak_memory" not in r or case.scenario.profile is None or case.scenario.profile.device is None:
            continue
        if "fits" in r and r["fits"] != 1:
            continue
        seen = True
        cap = case.scenario.profile.device.memory
        if r["peak_memory"] > cap * (1 + 1e-9):
            raise _fail(tech, "memory-capacity", f"{case.describe()}: peak {r['peak_memory']:.4g} B > capacity {cap:.4g} B")
    return None if seen else "no smoke result reports peak_memory that fits"


def _family_offload(tech, results):
    seen = False
    for r in results.values():
        if "bytes_offloaded" in r and "bytes_prefetched" in r:
            seen = True
            if r["bytes_offloaded"] != r["bytes_prefetched"]:
                raise _fail(tech, "offload-balanced", f"offloaded {r['bytes_offloaded']} != prefetched {r['bytes_prefetched']}")
    return None if seen else "no smoke result reports bytes_offloaded/bytes_prefetched"


def _family_metric_zero(name, metric, tol):
    def check(tech, results):
        seen = False
        for r in results.values():
            if metric in r:
                seen = True
                if abs(r[metric]) > tol:
                    raise _fail(tech, name, f"{metric} = {r[metric]:.3g} > {tol:g}")
        return None if seen else f"no smoke result reports {metric}"
    return check


def _family_sgd(tech, results, cases, rel: float = 0.5):
    base = {v.name for v in tech.baselines}
    by_scen: dict[tuple, dict[str, float]] = {}
    for case in cases:
        r = results.get(case.key)
        if r is None or "final_loss" not in r:
            continue
        k = (case.profile, case.workload, case.fidelity, tuple(sorted(case.params.items())))
        by_scen.setdefault(k, {})[case.variant] = r["final_loss"]
    seen = False
    for losses in by_scen.values():
        ref = [losses[b] for b in base if b in losses]
        if not ref:
            continue
        seen = True
        envelope = max(ref) * (1 + rel) + 1e-12
        for v, loss in losses.items():
            if loss > envelope:
                raise _fail(tech, "sgd-envelope", f"variant {v!r} final loss {loss:.4g} > {1 + rel:g} x baseline {max(ref):.4g}")
    return None if seen else "no smoke scenario reports final_loss for a baseline variant"


FAMILY_CHECKS: dict[str, Callable] = {
    "bytes-conserved": lambda t, r, c: _family_bytes_conserved(t, r),
    "alpha-beta-bound": _family_alpha_beta,
    "memory-capacity": _family_memory,
    "offload-balanced": lambda t, r, c: _family_offload(t, r),
    "recovery-exact": lambda t, r, c: _family_metric_zero("recovery-exact", "recovery_error", 1e-9)(t, r),
    "sgd-envelope": _family_sgd,
    "oracle-exact": lambda t, r, c: _family_metric_zero("oracle-exact", "oracle_error", 1e-8)(t, r),
}


def check_technique(tech: Technique, *, max_examples: int = 10, properties: bool = True) -> CheckReport:
    """Run every conformance check on *tech*.

    Parameters
    ----------
    tech : Technique
    max_examples : int
        Hypothesis examples per declared property.
    properties : bool
        Whether to run the declared properties (the slowest part).

    Returns
    -------
    CheckReport
        Outcomes per check ("passed" or "skipped: reason").

    Raises
    ------
    AssertionError
        The first failing check, named, with the case that failed.
    """
    rep = CheckReport(tech.name)
    check_metadata(tech)
    rep.outcomes["metadata"] = "passed"
    check_parameters(tech)
    rep.outcomes["parameters"] = "passed"
    results = check_runs_and_metrics(tech)
    rep.outcomes["runs-and-metrics"] = "passed"
    check_determinism(tech, results)
    rep.outcomes["determinism"] = "passed"
    check_claims_resolve(tech)
    rep.outcomes["claims-resolve"] = "passed"
    if properties:
        why = check_properties(tech, max_examples)
        rep.outcomes["properties"] = f"skipped: {why}" if why else "passed"
    else:
        rep.outcomes["properties"] = "skipped: disabled by caller"
    cases = _smoke_cases(tech)
    for cap, fn in FAMILY_CHECKS.items():
        if cap not in tech.capabilities:
            rep.outcomes[f"family:{cap}"] = "skipped: capability not declared"
            continue
        why = fn(tech, results, cases)
        if why:
            raise _fail(tech, cap, f"capability declared but {why}")
        rep.outcomes[f"family:{cap}"] = "passed"
    unknown = set(tech.capabilities) - set(FAMILY_CHECKS)
    for cap in sorted(unknown):
        rep.outcomes[f"family:{cap}"] = "skipped: no family check of that name"
    return rep
