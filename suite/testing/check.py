"""The conformance kit: the public proof that a technique follows the contract.

Like scikit-learn's ``check_estimator`` / ``parametrize_with_checks``: every generic check and
the family checks the technique opts into through ``Technique.capabilities``; each check either
passes, fails with an ``AssertionError`` naming the technique, the check and the case, or is
skipped with a reason. Three ways to run them:

* :func:`parametrize_with_checks` -- one pytest item per check (``poseidon:metadata``,
  ``poseidon:family:bytes-conserved``, ...), each in its own forked process with a time-out, so
  one failure, crash or hang does not hide the others (the recommended way in a test suite);
* :func:`run_checks` -- every check, each isolated with a time-out, outcomes collected in a
  :class:`CheckReport` (nothing raised);
* :func:`check_technique` -- every check in this process, in order, raising the first failure
  (the original interface, kept for existing callers).

Generic checks (ids): ``metadata``, ``parameters``, ``runs-and-metrics``, ``determinism``,
``claims-resolve``, ``claims-nulls``, ``property:NAME`` (one per declared property), then
``family:CAPABILITY`` for each declared capability.

Family checks and the metric conventions they read (a technique that declares the capability
must report these; an undeclared name is a :class:`~suite.errors.TechniqueError` when the
technique is built, see :data:`suite.technique.CAPABILITIES`):

=======================  ================================================================  =========================================
capability               what is checked                                                   metrics / artifacts read
=======================  ================================================================  =========================================
``bytes-conserved``      bytes sent by all workers == bytes received (execute)             ``bytes_sent``, ``bytes_received``
``alpha-beta-bound``     communication time >= the bandwidth lower bound of the profile    ``comm_time`` (s), ``comm_bytes`` (B)
                         for moving ``comm_bytes`` over the outer network level             per worker
``memory-capacity``      peak device memory <= device capacity (when ``fits`` == 1)         ``peak_memory`` (B), ``fits``
``offload-balanced``     bytes offloaded == bytes prefetched back                           ``bytes_offloaded``, ``bytes_prefetched``
``recovery-exact``       state after recovery equals the fault-free state (execute)         ``recovery_error`` (== 0 within 1e-9)
``sgd-envelope``         final loss within an envelope of the synchronous baseline          ``final_loss``; baseline variant's
``oracle-exact``         output equals the oracle (execute)                                 ``oracle_error`` <= 1e-8
``network-sensitivity``  a slower network level the traffic crosses raises the              what ``suite.perf.check_network_sensitivity``
                         communication time; a level it does not cross changes nothing     reads (issue 17), on each model smoke case
=======================  ================================================================  =========================================
"""

from __future__ import annotations

import math
import os
import signal
import threading
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from suite.errors import ParameterError, SuiteError
from suite.deprecation import FAILS_FROM, KitWarning, fails_now
from suite.technique import CAPABILITIES, KIT_OPT_OUTS, Result, Skip, Technique

__all__ = ["CheckReport", "Outcome", "check_technique", "run_checks", "run_check", "check_ids",
           "parametrize_with_checks", "FAMILY_CHECKS", "DEFAULT_CHECKS", "DEFAULT_CHECK_TIMEOUT", "check_claims_nulls",
           "comm_bandwidth_bound", "KitWarning"]

#: time-out (s) of one check when run isolated (:func:`run_check`, :func:`parametrize_with_checks`)
DEFAULT_CHECK_TIMEOUT = 300.0


@dataclass
class CheckReport:
    """Outcome per check id: ``"passed"``, ``"skipped: reason"``, ``"warned: message"`` (a new
    default check, :mod:`suite.deprecation`) or ``"failed: message"``."""

    technique: str
    outcomes: dict[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> list[str]:
        return [k for k, v in self.outcomes.items() if v == "passed"]

    @property
    def skipped(self) -> dict[str, str]:
        return {k: v[len("skipped: "):] for k, v in self.outcomes.items() if v.startswith("skipped")}

    @property
    def failed(self) -> dict[str, str]:
        return {k: v[len("failed: "):] for k, v in self.outcomes.items() if v.startswith("failed")}

    @property
    def warned(self) -> dict[str, str]:
        """Default checks that found a problem they only warn about in this version."""
        return {k: v[len("warned: "):] for k, v in self.outcomes.items() if v.startswith("warned")}


def _fail(tech: Technique, check: str, msg: str) -> AssertionError:
    """The kit's failure: one line naming the technique, the check and (in *msg*) the case, its
    parameters and its profile."""
    return AssertionError(" ".join(f"{tech.name}: check {check!r} failed: {msg}".split()))


# ----------------------------------------------------------------------------- generic checks


def _quarantine_reason(tech: Technique) -> str | None:
    """Why the installed plugin that provides *tech*'s package is quarantined (a misspelt hook, a
    hook that raises, a bad return), or None: the kit says so first, instead of the profile or
    workload it then cannot find."""
    from suite.testing.imports import plugin_package

    pkg = plugin_package(tech)
    if pkg is None:
        return None
    reg = _resolver().context.registry
    for info in getattr(reg, "plugins", ()):
        if info.status != "ok" and info.module.split(":")[0].split(".")[0] == pkg:
            return f"plugin {info.name!r} ({info.distribution}) is quarantined: {info.reason}"
    return None


def check_metadata(tech: Technique) -> None:
    why = _quarantine_reason(tech)
    if why:
        raise _fail(tech, "metadata", why)
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
    for fid in list(tech.fidelities):
        try:
            tech.fidelity(fid)  # a "module:function" reference must import
        except Exception as e:  # noqa: BLE001
            raise _fail(tech, "metadata", str(e)) from e
    for c in tech.claims:
        if not c.source:
            raise _fail(tech, "metadata", f"claim {c.id!r} names no source")


def check_imports(tech: Technique) -> str | None:
    """The technique's package imports only the public suite modules (suite.testing.imports);
    skipped (with the reason) for a technique defined in a single module, such as a test file."""
    from suite.testing.imports import import_problems, plugin_package

    if plugin_package(tech) is None:
        return "the technique is defined in a single module (a test or a notebook), not a plugin package"
    bad = import_problems(tech)
    if bad:
        raise _fail(tech, "imports", "; ".join(bad[:5]) + (f" (+{len(bad) - 5} more)" if len(bad) > 5 else ""))


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


_RESOLVER: dict = {}


def _resolver_key() -> tuple:
    """What the resolver's profiles and workloads depend on: the profile folders named by the
    environment and the registry a test may have substituted."""
    import sys

    ctx_mod, reg_mod = sys.modules.get("suite.context"), sys.modules.get("suite.registry")
    return (os.environ.get("SUITE_PROFILES", ""), os.environ.get("XDG_CONFIG_HOME", ""),
            id(getattr(ctx_mod, "default_registry", None)), id(getattr(reg_mod, "_REGISTRY", None)))


def _resolver():
    """One resolver (one context: the installed plugins' profiles and workloads) for the checks
    of this process, rebuilt when the profile folders or the registry change; built before an
    isolated check forks, so each child inherits it loaded."""
    key = _resolver_key()
    if key not in _RESOLVER:
        from suite.context import Context
        from suite.runner.case import Resolver

        _RESOLVER.clear()
        _RESOLVER[key] = Resolver(context=Context.build())  # the kit is user code: it builds its context
    return _RESOLVER[key]


def _resolve(tech: Technique, spec):
    from suite.runner.case import resolve_case

    return resolve_case(tech, spec, resolver=_resolver())


def _smoke_cases(tech: Technique):
    out = []
    for spec in tech.smoke:
        for v in tech.variant_names:
            out.append(_resolve(tech, replace(spec, variant=v)))
    return out


def _run(tech: Technique, case) -> Result | None:
    try:
        return tech.evaluate(case.scenario)
    except Skip:
        return None


def check_runs_and_metrics(tech: Technique, cases: Sequence | None = None) -> dict[str, Result]:
    """Every variant x smoke scenario runs; every metric is finite, has a unit, and is not
    negative where its unit cannot be (the runner's rule, :func:`suite.runner.executors.metric_problem`)."""
    from suite.runner.executors import metric_problem

    results: dict[str, Result] = {}
    fids = {s.fidelity for s in tech.smoke}
    missing = set(tech.fidelities) - fids
    if missing:
        raise _fail(tech, "runs", f"no smoke scenario for fidelity {sorted(missing)}")
    for case in (cases if cases is not None else _smoke_cases(tech)):
        r = _run(tech, case)
        if r is None:
            continue
        if not r.metrics:
            raise _fail(tech, "metrics", f"case {case.describe()}: no metrics")
        for name, m in r.metrics.items():
            if not isinstance(m.value, float) or not math.isfinite(m.value):
                raise _fail(tech, "metrics", f"case {case.describe()}: metric {name!r} is not finite: {m.value!r}")
            if not m.unit:
                raise _fail(tech, "metrics", f"case {case.describe()}: metric {name!r} has no unit")
            bad = metric_problem(m)
            if bad:
                raise _fail(tech, "metrics", f"case {case.describe()}: {bad}")
        results[case.key] = r
    if not results:
        raise _fail(tech, "runs", "every smoke case was skipped")
    return results


def check_determinism(tech: Technique, first: dict[str, Result], cases: Sequence | None = None) -> None:
    for case in (cases if cases is not None else _smoke_cases(tech)):
        if case.fidelity == "execute" or case.key not in first:
            continue  # measured timings are not deterministic
        again = _run(tech, case)
        a = {k: m.value for k, m in first[case.key].metrics.items()}
        b = {k: m.value for k, m in again.metrics.items()} if again else {}
        if a != b:
            diff = sorted(k for k in a.keys() | b.keys() if a.get(k) != b.get(k))  # a metric only one run has too
            raise _fail(tech, "determinism", f"case {case.describe()}: metrics differ between two runs with one seed: {diff}")


def check_claims_resolve(tech: Technique) -> None:
    """Every claim's scenarios resolve; a claim judged on one metric of a model case (no
    ``derive``) names a metric that case reports (a misspelt metric was only found when
    ``suite reproduce`` could not derive the value)."""
    for c in tech.claims:
        resolved = {}
        for label, spec in c.specs().items():
            try:
                resolved[label] = _resolve(tech, spec)
            except SuiteError as exc:
                raise _fail(tech, "claims", f"claim {c.id!r} case {label!r} does not resolve: {exc}") from None
        main = resolved.get("main")
        if c.derive is None and c.metric and main is not None and main.fidelity == "model":
            res = _run(tech, main)
            if res is not None and c.metric not in res:
                raise _fail(tech, "claims", f"claim {c.id!r}: metric {c.metric!r} is not among the metrics its "
                                            f"case reports ({', '.join(sorted(res.metrics)) or 'none'})")


def check_claims_nulls(tech: Technique) -> None:
    """Every claim declares its null predictions or a written reason why it has none (issue 18,
    docs/verdicts.md "Nulls"); a variant null substitutes a variant the claim uses by another
    variant of the technique, and its scenarios resolve.

    The rule ``suite reproduce`` applies (issue 42): a claim is ``reproduced`` only with a
    computed null that could have landed in its band (a variant null, or a value null the
    acceptance does not exclude by construction). A claim without one (only a ``null_reason``, or
    only ``no gain`` under a gain band, a tie under an ordering) can at best be ``reproduced (no
    null)``: in 0.2 the kit warns (``FutureWarning``, naming the claims); from 0.3 it fails.

    Raises
    ------
    AssertionError
        Naming the technique, the claim and what is missing or wrong.
    """
    import warnings

    known = tech.variant_names
    uncomputed = [c.id for c in tech.claims if (c.nulls or (c.null_reason or "").strip()) and not _computed_null(c)]
    if uncomputed:
        warnings.warn(f"{tech.name}: claims-nulls: claim(s) {', '.join(map(repr, uncomputed))} declare no computed "
                      "null that could land in the band (a variant null, or a value null the band does not exclude "
                      "by construction): `suite reproduce` reports them 'reproduced (no null)' at best; from 0.3 "
                      "this check fails (docs/verdicts.md, Nulls)", FutureWarning, stacklevel=2)
    for c in tech.claims:
        if not c.nulls and not (c.null_reason or "").strip():
            raise _fail(tech, "claims-nulls", f"claim {c.id!r} declares neither `nulls` (the null predictions "
                                              f"that must fall outside its band, e.g. Null('baseline', variants="
                                              f"{{...}}) or Null('no gain', value=1.0)) nor a written `null_reason`")
        used = {s.variant for s in c.specs().values()}
        for n in c.nulls:
            if n.variants is None:
                continue
            for src, dst in n.variants.items():
                if dst not in known:
                    raise _fail(tech, "claims-nulls", f"claim {c.id!r}: null {n.label!r}: expected a variant of "
                                                      f"{tech.name} ({', '.join(known)}) to substitute, got {dst!r}")
                if src not in used:
                    raise _fail(tech, "claims-nulls", f"claim {c.id!r}: null {n.label!r}: expected to replace a "
                                                      f"variant the claim uses ({', '.join(sorted(used))}), got {src!r}")
            subst = n.substitute(c.specs())
            if subst == c.specs():
                raise _fail(tech, "claims-nulls", f"claim {c.id!r}: null {n.label!r} changes no scenario of the claim")
            for label, spec in subst.items():
                try:
                    _resolve(tech, spec)
                except SuiteError as exc:
                    raise _fail(tech, "claims-nulls", f"claim {c.id!r}: null {n.label!r} case {label!r} does not "
                                                      f"resolve: {exc}") from None


def _computed_null(claim) -> bool:
    """Whether *claim* declares a null that could land in its band: a variant null, or a value
    null its acceptance does not exclude by construction (the rule of
    :func:`suite.runner.reproduce.informative_nulls`, before any run)."""
    return any(n.variants is not None or n.derive is not None or not claim.expect.excludes(n.value)
               for n in claim.nulls)


def check_properties(tech: Technique, max_examples: int = 10) -> str | None:
    if not tech.properties:
        return "no declared properties"
    fid = _property_fidelity(tech)
    for prop in tech.properties:
        _check_one_property(tech, prop, fid, max_examples)
    return None


def _property_fidelity(tech: Technique) -> str:
    return "model" if "model" in tech.fidelities else next(iter(tech.fidelities))


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
            raise _fail(tech, f"property {prop.name}", f"{exc} (scenario {scenario.variant} {scenario.fidelity}, "
                                                      f"profile {scenario.profile_name}, params "
                                                      f"{dict(scenario.params)})") from None

    run()


# ----------------------------------------------------------------------------- family checks


def _results_by_case(results, cases):
    """(case, result) for every smoke case that ran, in order (a case names itself in a failure)."""
    return [(c, results[c.key]) for c in cases if c.key in results]


def _family_bytes_conserved(tech, results, cases):
    seen = False
    for case, r in _results_by_case(results, cases):
        if "bytes_sent" in r and "bytes_received" in r:
            seen = True
            if r["bytes_sent"] != r["bytes_received"]:
                raise _fail(tech, "bytes-conserved", f"case {case.describe()}: bytes_sent {r['bytes_sent']} != "
                                                     f"bytes_received {r['bytes_received']}")
    return None if seen else "no smoke result reports bytes_sent/bytes_received"


def comm_bandwidth_bound(profile) -> float:
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
    return sum(lvl.bandwidth * (1 if i < intra else nics) for i, lvl in enumerate(levels))


def _family_alpha_beta(tech, results, cases):
    seen = False
    for case, r in _results_by_case(results, cases):
        if "comm_time" not in r or "comm_bytes" not in r or case.scenario.profile is None:
            continue
        if not case.scenario.profile.network:
            continue
        seen = True
        bw = comm_bandwidth_bound(case.scenario.profile)
        bound = r["comm_bytes"] / bw
        if r["comm_time"] < bound * (1 - 1e-9):
            raise _fail(tech, "alpha-beta-bound", f"case {case.describe()}: comm_time {r['comm_time']:.3g} s is below "
                                                  f"the bandwidth bound {bound:.3g} s: comm_bytes {r['comm_bytes']:.3g} B "
                                                  f"(one worker, all levels) at most {bw:.3g} B/s (every level's "
                                                  f"bandwidth together)")
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
            raise _fail(tech, "memory-capacity", f"case {case.describe()}: peak {r['peak_memory']:.4g} B > capacity {cap:.4g} B")
    return None if seen else "no smoke result reports peak_memory that fits"


def _family_offload(tech, results, cases):
    seen = False
    for case, r in _results_by_case(results, cases):
        if "bytes_offloaded" in r and "bytes_prefetched" in r:
            seen = True
            if r["bytes_offloaded"] != r["bytes_prefetched"]:
                raise _fail(tech, "offload-balanced", f"case {case.describe()}: offloaded {r['bytes_offloaded']} != "
                                                      f"prefetched {r['bytes_prefetched']}")
    return None if seen else "no smoke result reports bytes_offloaded/bytes_prefetched"


def _family_metric_zero(name, metric, tol):
    def check(tech, results, cases):
        seen = False
        for case, r in _results_by_case(results, cases):
            if metric in r:
                seen = True
                if abs(r[metric]) > tol:
                    raise _fail(tech, name, f"case {case.describe()}: {metric} = {r[metric]:.3g} > {tol:g}")
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
                raise _fail(tech, "sgd-envelope", f"scenario {k[0]} {k[1] or ''} {dict(k[3])}: variant {v!r} final loss {loss:.4g} > {1 + rel:g} x baseline {max(ref):.4g}")
    return None if seen else "no smoke scenario reports final_loss for a baseline variant"


def _family_network(tech, results, cases):
    """Issue 17's check on every model smoke case on a profile with a network:
    ``check_network_sensitivity(technique, scenario)`` returns one line per problem (a level the
    traffic crosses whose slow-down the technique does not pass on, a level it does not cross
    that changes a metric); the first problem fails the check."""
    from suite.perf.sensitivity import check_network_sensitivity as fn

    seen = False
    for case in cases:
        scen = case.scenario
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


FAMILY_CHECKS: dict[str, Callable] = {
    "bytes-conserved": _family_bytes_conserved,
    "alpha-beta-bound": _family_alpha_beta,
    "memory-capacity": _family_memory,
    "offload-balanced": _family_offload,
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


def _default_network(tech, results, cases):
    """Network sensitivity (issue 17's check) on every model smoke case whose result reports a
    communication time (``comm_time``, ``allreduce_time``, ...)."""
    comm = [c for c, r in _results_by_case(results, cases) if c.fidelity == "model" and _comm_metric(r)]
    if not comm:
        return "no model smoke result reports a communication time"
    return _family_network(tech, results, comm)


def _default_oracle(tech, results, cases):
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
            exc.strict = declared  # the runner already fails such a case: no grace period
            raise exc
    return None if seen else "no execute smoke result reports oracle_error"


class _InDeclaredUnit:
    """Mix-in of the tagged parameter values the ``units`` check feeds: a number that remembers
    the parameter and unit it was declared with (arithmetic gives a plain number back)."""

    param: str = ""
    unit: str = ""


def _tagged(value, name: str, unit: str):
    base = int if isinstance(value, int) and not isinstance(value, bool) else float
    cls = type(f"{base.__name__}_in_{name}", (base, _InDeclaredUnit), {"param": name, "unit": unit})
    return cls(value)


def _physical_units(tech) -> dict[str, str]:
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


def _default_units(tech, results, cases):
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
            value = case.scenario.params.get(name)
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
            value = case.scenario.params.get(name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value == 0:
                continue
            scen = replace(case.scenario, params={**dict(case.scenario.params), name: _tagged(value, name, unit)})
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


_DEFAULT_FNS: dict[str, Callable] = {
    "network-sensitivity": _default_network,
    "oracle-agreement": _default_oracle,
    "units": _default_units,
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
    return any(p.unit for p in tech.parameters.values())


# ----------------------------------------------------------------------------- one check by id


class _State:
    """What several checks share for one technique: the smoke cases and their results (computed
    on first use; in an isolated check, in that check's own process)."""

    def __init__(self, tech: Technique, max_examples: int):
        self.tech = tech
        self.max_examples = max_examples
        self._cases: list | None = None
        self._results: dict[str, Result] | None = None

    @property
    def cases(self) -> list:
        if self._cases is None:
            self._cases = _smoke_cases(self.tech)
        return self._cases

    @property
    def results(self) -> dict[str, Result]:
        if self._results is None:
            self._results = check_runs_and_metrics(self.tech, self.cases)
        return self._results


def check_ids(tech: Technique, *, properties: bool = True, require_nulls: bool = True) -> list[str]:
    """The ids of every check that applies to *tech*, in the order :func:`check_technique` runs them."""
    ids = ["metadata", "imports", "parameters", "runs-and-metrics", "determinism", "claims-resolve"]
    if require_nulls:
        ids.append("claims-nulls")
    if properties:
        ids += [f"property:{p.name}" for p in tech.properties]
    ids += [f"family:{cap}" for cap in FAMILY_CHECKS if cap in tech.capabilities]
    ids += [c for c in DEFAULT_CHECKS if _applies(tech, c)]
    if getattr(tech, "vocabulary", None):
        ids.append("vocabulary")
    return ids


def check_vocabulary(tech: Technique, results: dict[str, Result], cases: Sequence = ()) -> str | None:
    """A technique declaring ``vocabulary`` reports each of the vocabulary's metrics in every
    ok model-fidelity smoke result (every result when *cases* is not given), in the vocabulary's unit and direction (:data:`suite.technique.VOCABULARIES`),
    so the category comparison puts like beside like."""
    from suite.technique import VOCABULARIES

    voc = VOCABULARIES[tech.vocabulary]
    model = {c.key for c in cases if c.fidelity == "model"} if cases else set(results)
    results = {k: r for k, r in results.items() if k in model}
    if not results:
        return "no model-fidelity smoke case ran"
    for key, r in results.items():
        for name, (unit, direction) in voc.metrics.items():
            m = r.metrics.get(name)
            if m is None:
                raise _fail(tech, "vocabulary", f"vocabulary {voc.name!r}: metric {name!r} missing in case {key} "
                                                f"(has {sorted(r.metrics)})")
            if m.unit != unit or m.direction != direction:
                raise _fail(tech, "vocabulary", f"vocabulary {voc.name!r}: metric {name!r}: expected unit {unit!r}, "
                                                f"direction {direction!r}, got {m.unit!r}, {m.direction!r}")
    return None


def _check_fn(check_id: str) -> Callable[[_State], str | None]:
    """The function running check *check_id* on a state: returns None (passed) or a skip reason,
    raises AssertionError (failed)."""
    simple = {
        "metadata": lambda s: check_metadata(s.tech),
        "imports": lambda s: check_imports(s.tech),
        "parameters": lambda s: check_parameters(s.tech),
        "runs-and-metrics": lambda s: (s.results, None)[1],
        "determinism": lambda s: check_determinism(s.tech, s.results, s.cases),
        "claims-resolve": lambda s: check_claims_resolve(s.tech),
        "claims-nulls": lambda s: check_claims_nulls(s.tech),
        "vocabulary": lambda s: check_vocabulary(s.tech, s.results, s.cases),
    }
    if check_id in simple:
        return simple[check_id]
    if check_id.startswith("property:"):
        name = check_id[len("property:"):]

        def prop(s: _State) -> None:
            for p in s.tech.properties:
                if p.name == name:
                    return _check_one_property(s.tech, p, _property_fidelity(s.tech), s.max_examples)
            raise _fail(s.tech, check_id, f"no declared property {name!r}")

        return prop
    if check_id in _DEFAULT_FNS:
        def default(s: _State) -> str | None:
            why = s.tech.kit_opt_out.get(check_id)
            if why:
                return f"opted out: {why}"
            return _DEFAULT_FNS[check_id](s.tech, s.results, s.cases)

        return default
    if check_id.startswith("family:") and check_id[len("family:"):] in FAMILY_CHECKS:
        cap = check_id[len("family:"):]

        def family(s: _State) -> str | None:
            why = FAMILY_CHECKS[cap](s.tech, s.results, s.cases)
            if why:
                raise _fail(s.tech, cap, f"capability declared but {why}")
            return None

        return family
    raise ValueError(f"unknown check id {check_id!r}; expected one of the ids check_ids() lists")


@dataclass(frozen=True)
class Outcome:
    """What one isolated check gave: ``status`` (passed, skipped, failed), a one-paragraph
    ``message`` (the skip reason or the failure) and the child's ``traceback`` when it failed."""

    check: str
    status: str
    message: str = ""
    traceback: str = ""


def _warn_only(check_id: str, exc: AssertionError) -> bool:
    """A new default check's problem is a warning until the version it fails from."""
    return check_id in FAILS_FROM and not getattr(exc, "strict", False) and not fails_now(check_id)


def _warning_text(check_id: str, exc: AssertionError) -> str:
    from suite import __version__

    return (f"{exc} [a default check since 0.2.0: it warns in {__version__} and fails from "
            f"{FAILS_FROM[check_id]}; fix it, or opt out with kit_opt_out={{{check_id!r}: 'why it does not apply'}}]")


def _outcome_of(tech: Technique, check_id: str, max_examples: int, state: _State | None = None) -> Outcome:
    try:
        why = _check_fn(check_id)(state or _State(tech, max_examples))
    except AssertionError as exc:
        if _warn_only(check_id, exc):
            return Outcome(check_id, "warned", _warning_text(check_id, exc))
        return Outcome(check_id, "failed", str(exc), traceback.format_exc())
    except Exception as exc:  # noqa: BLE001 - a check that errors is a failed check, named
        return Outcome(check_id, "failed", f"{tech.name}: check {check_id!r} raised {type(exc).__name__}: {exc}",
                       traceback.format_exc())
    return Outcome(check_id, "skipped", why) if why else Outcome(check_id, "passed")


class _CheckTimeout(BaseException):
    pass


def _in_process(tech: Technique, check_id: str, max_examples: int, timeout: float | None) -> Outcome:
    use_alarm = bool(timeout) and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not use_alarm:
        return _outcome_of(tech, check_id, max_examples)

    fired: list[bool] = []

    def on_alarm(signum, frame):
        fired.append(True)
        raise _CheckTimeout()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, float(timeout))
    try:
        out = _outcome_of(tech, check_id, max_examples)
        if fired:  # the time-out was raised but swallowed by code that catches BaseException (hypothesis'
            raise _CheckTimeout()  # generation phase, a plugin): still a time-out, never a pass
        return out
    except _CheckTimeout:
        return Outcome(check_id, "failed", f"{tech.name}: check {check_id!r} timed out after {timeout:g} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _child(conn, tech: Technique, check_id: str, max_examples: int) -> None:  # pragma: no cover - child process
    code = 0
    try:
        import faulthandler

        faulthandler.disable()  # a check that aborts is reported by the parent, without a stack dump
        out = _outcome_of(tech, check_id, max_examples)
        conn.send((out.status, out.message, out.traceback))
    except BaseException:  # noqa: BLE001
        code = 1
    finally:
        os._exit(code)  # never run the parent's atexit handlers (pytest's, a store's)


def run_check(tech: Technique, check_id: str, *, max_examples: int = 10,
              timeout: float | None = DEFAULT_CHECK_TIMEOUT, isolate: bool = True) -> Outcome:
    """Run one check of *tech* (an id from :func:`check_ids`) and return its :class:`Outcome`.

    Parameters
    ----------
    tech : Technique
    check_id : str
    max_examples : int
        Hypothesis examples of a property check.
    timeout : float or None
        Seconds before the check is stopped and failed (None: no limit).
    isolate : bool
        Run it in a forked child process (POSIX), killed at the time-out, so a check that hangs in
        C code or kills its process fails alone. Without fork (or ``isolate=False``) it runs in
        this process with a ``SIGALRM`` time-out.

    Returns
    -------
    Outcome
        Never raises for a failing check (``status == "failed"``).
    """
    _check_fn(check_id)  # an unknown id is the caller's error, raised here
    _resolver()  # load the plugins' profiles and workloads once, here, not in every child
    if not isolate or not hasattr(os, "fork"):
        return _in_process(tech, check_id, max_examples, timeout)
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, tech, check_id, max_examples), daemon=True)
    proc.start()
    send.close()
    try:
        if recv.poll(timeout):
            try:
                status, message, tb = recv.recv()
                return Outcome(check_id, status, message, tb)
            except (EOFError, OSError):
                pass
        else:
            return Outcome(check_id, "failed", f"{tech.name}: check {check_id!r} timed out after {timeout:g} s")
        proc.join(5)
        code = proc.exitcode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        try:
            how = signal.Signals(-code).name if code is not None and code < 0 else how
        except ValueError:
            pass
        return Outcome(check_id, "failed", f"{tech.name}: check {check_id!r} crashed its process ({how})")
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        recv.close()


def run_checks(tech: Technique, *, max_examples: int = 10, properties: bool = True, require_nulls: bool = True,
               timeout: float | None = DEFAULT_CHECK_TIMEOUT, isolate: bool = True) -> CheckReport:
    """Run every check of *tech*, each on its own (:func:`run_check`), and collect the outcomes:
    a failing or hanging check is recorded and the next one runs. Nothing is raised."""
    rep = CheckReport(tech.name)
    for cid in check_ids(tech, properties=properties, require_nulls=require_nulls):
        out = run_check(tech, cid, max_examples=max_examples, timeout=timeout, isolate=isolate)
        rep.outcomes[cid] = out.status if out.status == "passed" else f"{out.status}: {out.message}"
    return rep


# ----------------------------------------------------------------------------- pytest


class _Check:
    """The callable a :func:`parametrize_with_checks` item receives: ``check(technique)``."""

    def __init__(self, check_id: str, max_examples: int, timeout: float | None, isolate: bool):
        self.check_id = check_id
        self.max_examples = max_examples
        self.timeout = timeout
        self.isolate = isolate

    def __repr__(self) -> str:
        return self.check_id

    def __call__(self, technique: Technique) -> None:
        import pytest

        out = run_check(technique, self.check_id, max_examples=self.max_examples, timeout=self.timeout,
                        isolate=self.isolate)
        if out.status == "skipped":
            pytest.skip(out.message)
        if out.status == "warned":
            import warnings

            warnings.warn(KitWarning(out.message), stacklevel=2)
            return
        if out.status == "failed":
            detail = f"\n\n{out.traceback}" if out.traceback else ""
            raise AssertionError(out.message + detail)


def parametrize_with_checks(techniques: Iterable[Technique], *, max_examples: int = 10,
                            timeout: float | None = DEFAULT_CHECK_TIMEOUT, properties: bool = True,
                            require_nulls: bool = True, isolate: bool = True):
    """A ``pytest.mark.parametrize`` of one item per (technique, check), like scikit-learn's.

    Examples
    --------
    ::

        from suite.testing import parametrize_with_checks
        from suite_mytech.technique import TECHNIQUE

        @parametrize_with_checks([TECHNIQUE], timeout=120)
        def test_conformance(technique, check):
            check(technique)

    gives items ``test_conformance[mytech:metadata]``, ``...[mytech:runs-and-metrics]``,
    ``...[mytech:family:bytes-conserved]``, ... Each runs in a forked process killed after
    *timeout* seconds (see :func:`run_check`); a check that does not apply is skipped with its
    reason. ``pytest -k "mytech and not property"`` selects as usual.

    Parameters
    ----------
    techniques : iterable of Technique
    max_examples : int
        Hypothesis examples per property check.
    timeout : float or None
        Per-check time-out in seconds (:data:`DEFAULT_CHECK_TIMEOUT`).
    properties, require_nulls : bool
        Include the property checks / the ``claims-nulls`` check.
    isolate : bool
        Fork a process per check (default); False runs in the test process with SIGALRM.
    """
    import pytest

    params = []
    for tech in techniques:
        if not isinstance(tech, Technique):
            raise TypeError(f"parametrize_with_checks: expected Technique objects, got {type(tech).__name__}")
        for cid in check_ids(tech, properties=properties, require_nulls=require_nulls):
            params.append(pytest.param(tech, _Check(cid, max_examples, timeout, isolate), id=f"{tech.name}:{cid}"))
    return pytest.mark.parametrize("technique, check", params)


# ----------------------------------------------------------------------------- everything, in order


def check_technique(tech: Technique, *, max_examples: int = 10, properties: bool = True,
                    require_nulls: bool = True) -> CheckReport:
    """Run every conformance check on *tech* in this process, raising the first failure.

    Parameters
    ----------
    tech : Technique
    max_examples : int
        Hypothesis examples per declared property.
    properties : bool
        Whether to run the declared properties (the slowest part).
    require_nulls : bool
        Whether to run ``claims-nulls`` (every claim declares null predictions or a
        ``null_reason``).

    Returns
    -------
    CheckReport
        Outcomes per check ("passed" or "skipped: reason"); ``properties`` summarises the
        ``property:NAME`` checks, and undeclared capabilities are listed as skipped.

    Raises
    ------
    AssertionError
        The first failing check, named, with the case that failed.
    """
    rep = CheckReport(tech.name)
    state = _State(tech, max_examples)
    for cid in check_ids(tech, properties=False, require_nulls=require_nulls):
        if cid.startswith("family:") or cid in DEFAULT_CHECKS:
            continue  # after the properties, below
        why = _check_fn(cid)(state)
        rep.outcomes[cid] = f"skipped: {why}" if why else "passed"
    if not require_nulls:
        rep.outcomes["claims-nulls"] = "skipped: disabled by caller"
    if properties:
        why = check_properties(tech, max_examples)
        rep.outcomes["properties"] = f"skipped: {why}" if why else "passed"
    else:
        rep.outcomes["properties"] = "skipped: disabled by caller"
    for cap in FAMILY_CHECKS:
        if cap not in tech.capabilities:
            rep.outcomes[f"family:{cap}"] = "skipped: capability not declared"
            continue
        why = _check_fn(f"family:{cap}")(state)
        rep.outcomes[f"family:{cap}"] = f"skipped: {why}" if why else "passed"
    for cid in DEFAULT_CHECKS:
        if not _applies(tech, cid):
            continue
        out = _outcome_of(tech, cid, max_examples, state)
        if out.status == "failed":
            raise AssertionError(out.message)
        if out.status == "warned":
            import warnings

            warnings.warn(KitWarning(out.message), stacklevel=2)
        rep.outcomes[cid] = out.status if out.status == "passed" else f"{out.status}: {out.message}"
    return rep
