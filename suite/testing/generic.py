"""The kit's generic checks: every technique passes them (metadata, imports, parameters, runs and
metrics, determinism, claims, properties). Each raises an ``AssertionError`` naming the
technique, the check and the case, or returns the reason it was skipped (None when it ran).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from suite.errors import ParameterError, SuiteError
from suite.technique import Claim, Property, Result, Scenario, Skip, Technique
import suite.testing.resolve as _r

if TYPE_CHECKING:  # pragma: no cover
    from suite.runner.case import Case

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
    reg = _r._resolver().context.registry
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


def _first(lines: list[str], n: int = 5) -> str:
    return "; ".join(lines[:n]) + (f" (+{len(lines) - n} more)" if len(lines) > n else "")


def check_imports(tech: Technique, version: str | None = None) -> str | None:
    """The technique's package imports from the suite only the plugin API, :mod:`suite.api`
    (:mod:`suite.testing` in its tests; the rules are :mod:`suite.testing.imports`). An import of a
    0.2 public module (``suite.perf``, ``suite.technique``, ...) warns (DeprecationWarning naming
    ``suite.api``) before *version* 0.4.0 and fails from it; a private module (the runner, the
    store, ...) always fails. Skipped (with the reason) for a technique defined in a single
    module, such as a test file."""
    import warnings

    from suite._version import __version__
    from suite.deprecation import version_tuple
    from suite.testing.imports import FAILS_FROM, import_deprecations, import_problems, plugin_package

    if plugin_package(tech) is None:
        return "the technique is defined in a single module (a test or a notebook), not a plugin package"
    bad = import_problems(tech)
    if bad:
        raise _fail(tech, "imports", _first(bad))
    old = import_deprecations(tech)
    if not old:
        return None
    msg = (f"{_first(old)}: plugin code imports from the suite only suite.api (every name a plugin may use is "
           "there; the global lookups get_profile / library / get_workload have no replacement: a model reads its "
           "scenario's profile and workload, and names others with Param(ref=...) or Technique(uses=...)); "
           f"the other suite modules are deprecated for plugins since 0.3.0 and removed in {FAILS_FROM}")
    if version_tuple(version or __version__) >= version_tuple(FAILS_FROM):
        raise _fail(tech, "imports", msg)
    warnings.warn(f"{tech.name}: {msg}", DeprecationWarning, stacklevel=2)
    return None


def check_parameters(tech: Technique) -> None:
    tech.validate_params({})  # defaults are valid
    for name, p in tech.parameters.items():
        bad: list[object] = []
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


def _scen(case: Case) -> Scenario:
    """The scenario of a resolved smoke case (the kit resolves every one it runs)."""
    if case.scenario is None:
        raise _fail_unresolved(case)
    return case.scenario


def _fail_unresolved(case: Case) -> AssertionError:
    return AssertionError(f"case {case.key}: not resolved (the kit resolves its smoke cases before checking them)")


def _run(tech: Technique, case: Case) -> Result | None:
    """Evaluate *case* as the runner does on the input side: a change to its inputs by any route
    (``vars()``, ``object.__setattr__``, ``__dict__``, ``dict.__setitem__``) fails the check,
    as the runner fails the case with ``InputMutated``, and is put back."""
    from suite.frozen import guard, restore_changed

    sc = _scen(case)
    snap = guard(("profile", sc.profile), ("scenario.params", sc.params))
    snap += guard(("workload", sc.workload), limit=1)
    try:
        r = tech.evaluate(sc)
    except Skip:
        r = None
    changed = restore_changed(snap)
    if changed is not None:
        raise _fail(tech, "runs", f"case {case.describe()}: the case changed its input {changed} (inputs are "
                    "read-only; copy them to change them): `suite run` fails it with InputMutated")
    return r


def check_runs_and_metrics(tech: Technique, cases: Sequence[Case] | None = None) -> dict[str, Result]:
    """Every variant x smoke scenario runs; every metric is finite, has a unit, and is not
    negative where its unit, or the unit the technique declares for it, cannot be (the runner's
    rule, :func:`suite.runner.executors.metric_problem`)."""
    from suite.runner.checks import declared_units
    from suite.runner.executors import metric_problem

    results: dict[str, Result] = {}
    fids = {s.fidelity for s in tech.smoke}
    missing = set(tech.fidelities) - fids
    if missing:
        raise _fail(tech, "runs", f"no smoke scenario for fidelity {sorted(missing)}")
    for case in (cases if cases is not None else _r.smoke_cases(tech)):
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
            bad = metric_problem(m, declared_units(tech, case.fidelity))
            if bad:
                raise _fail(tech, "metrics", f"case {case.describe()}: {bad}")
        results[case.key] = r
    if not results:
        raise _fail(tech, "runs", "every smoke case was skipped")
    return results


def check_determinism(tech: Technique, first: dict[str, Result], cases: Sequence[Case] | None = None) -> None:
    for case in (cases if cases is not None else _r.smoke_cases(tech)):
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
    ``suite reproduce`` could not derive the value). A claim whose ``reason_class`` is
    ``setup unknown`` declares the assumption it names (:func:`warn_setup_unknown_without_assumption`)."""
    warn_setup_unknown_without_assumption(tech)
    for c in tech.claims:
        resolved = {}
        for label, spec in c.specs().items():
            try:
                resolved[label] = _r.resolve_case(tech, spec)
            except SuiteError as exc:
                raise _fail(tech, "claims", f"claim {c.id!r} case {label!r} does not resolve: {exc}") from None
        main = resolved.get("main")
        if c.derive is None and c.metric and main is not None and main.fidelity == "model":
            res = _run(tech, main)
            if res is not None and c.metric not in res:
                raise _fail(tech, "claims", f"claim {c.id!r}: metric {c.metric!r} is not among the metrics its "
                                            f"case reports ({', '.join(sorted(res.metrics)) or 'none'})")


def warn_setup_unknown_without_assumption(tech: Technique) -> None:
    """Warn for each claim of *tech* whose ``reason_class`` is ``setup unknown`` and that declares no
    :class:`~suite.api.Assumption`: the class names an unstated setting the verdict depends on, so
    the claim lists it with the value at which the verdict flips (docs/verdicts.md, Reason classes).

    Warns ``DeprecationWarning`` naming the technique and the claims; the kit fails such a claim
    from dlsys-suite 0.4.0. Raises nothing.
    """
    import warnings

    bare = [c.id for c in tech.claims if c.reason_class == "setup unknown" and not c.assumptions]
    if bare:
        warnings.warn(f"{tech.name}: claims: claim(s) {', '.join(map(repr, bare))} give reason class 'setup unknown' "
                      "but declare no Assumption: expected the unstated setting the reason names, with the value at "
                      "which the verdict flips (Claim(assumptions=(Assumption(name, value, flip_at=...),)); "
                      "docs/verdicts.md, Reason classes); refused from dlsys-suite 0.4.0", DeprecationWarning,
                      stacklevel=2)


def check_claims_nulls(tech: Technique) -> None:
    """Every claim declares its null predictions or a written reason why it has none (issue 18,
    docs/verdicts.md "Nulls"); a variant null substitutes a variant the claim uses by another
    variant of the technique, and its scenarios resolve.

    The rule ``suite reproduce`` applies (issue 42): a claim is ``reproduced`` only with a
    computed null that could have landed in its band (a variant null, or a value null the
    acceptance does not exclude by construction, inside the claim's declared ``domain``). A claim
    without one (only a ``null_reason``, or only ``no gain`` under a gain band, a tie under an
    ordering) can at best be ``reproduced (no null)``, a verdict counted apart: the kit warns
    (``FutureWarning``, naming the claims) and passes (0.2 said it would fail from 0.3; it does
    not: the rules keep "reproduced (no null)" as an honest verdict of its own).

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
                      "by construction): `suite reproduce` reports them 'reproduced (no null)' at best, counted "
                      "apart (docs/verdicts.md, Nulls)", FutureWarning, stacklevel=2)
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
            if n.changes_nothing(c.specs()):
                raise _fail(tech, "claims-nulls", f"claim {c.id!r}: null {n.label!r} changes no scenario of the claim")
            subst = n.substitute(c.specs())
            for label, spec in subst.items():
                try:
                    _r.resolve_case(tech, spec)
                except SuiteError as exc:
                    raise _fail(tech, "claims-nulls", f"claim {c.id!r}: null {n.label!r} case {label!r} does not "
                                                      f"resolve: {exc}") from None


def check_claims_assumptions(tech: Technique) -> None:
    """Each claim's assumptions are stated so that the scoreboard's "assumes" lines and its ``†``
    can be read (hostile15: ``nic-bandwidth =  (... flips at 0)``, ``nic-eff = nan (... flips at
    nan)`` and one name twice passed every check): a name given once within its claim, a value
    that is set (not None, not empty text) and not NaN, a ``flip_at`` that is not NaN (None: no
    flip found). A default check since 0.3.13: it warns (:class:`~suite.deprecation.KitWarning`)
    and fails from 0.4.0 (:data:`suite.deprecation.FAILS_FROM`).

    Raises
    ------
    AssertionError
        Naming the technique, the claim, the assumption, what was expected and what was given.
    """
    for c in tech.claims:
        seen: set[str] = set()
        for a in c.assumptions:
            bad = _assumption_problem(a, seen)
            if bad:
                raise _fail(tech, "claims-assumptions", f"claim {c.id!r}: assumption {a.name!r}: {bad}")
            seen.add(a.name)


def _assumption_problem(a: Any, seen: set[str]) -> str | None:
    """What is wrong with assumption *a* of a claim whose earlier assumptions are named *seen*, or None."""
    if not isinstance(a.name, str) or not a.name.strip():
        return "expected a name (what is assumed), got an empty one"
    if a.name in seen:
        return "expected each assumption named once within its claim, got this name twice"
    if a.value is None or (isinstance(a.value, str) and not a.value.strip()):
        return f"expected the value the model uses, got {a.value!r} (the scoreboard printed it empty)"
    if _is_nan(a.value):
        return "expected the value the model uses, got nan"
    if _is_nan(a.flip_at):
        return "flip_at: expected the value at which the verdict flips, or None (no flip found), got nan"
    if isinstance(a.flip_at, str) and not a.flip_at.strip():
        return f"flip_at: expected the value at which the verdict flips, or None (no flip found), got {a.flip_at!r}"
    return None


def _is_nan(x: Any) -> bool:
    """Whether *x* is a real number that is NaN (a float, a numpy scalar); anything else is not."""
    import numbers

    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isnan(x)


def _computed_null(claim: Claim) -> bool:
    """Whether *claim* declares a null that could land in its band: a variant null that does not
    compare a result with itself (:meth:`~suite.declaration.claims.Null.compares_with_itself`), a
    ``derive`` null, or a value null that :func:`suite.runner.verdicts.could_land` (the rule ``suite reproduce``
    applies) admits inside the claim's declared ``domain`` (before any run: a ``domain`` function
    and the domain a metric's unit implies are only known from results)."""
    from suite.runner.verdicts import could_land

    domain = None if callable(claim.domain) else claim.domain
    specs = claim.specs()
    return any((n.variants is not None and not n.compares_with_itself(specs)) or n.derive is not None
               or (n.variants is None and could_land(claim, n.value, domain)) for n in claim.nulls)


def check_properties(tech: Technique, max_examples: int = 10) -> str | None:
    if not tech.properties:
        return "no declared properties"
    fid = _property_fidelity(tech)
    for prop in tech.properties:
        _check_one_property(tech, prop, fid, max_examples)
    return None


def _property_fidelity(tech: Technique) -> str:
    return "model" if "model" in tech.fidelities else next(iter(tech.fidelities))


def _check_one_property(tech: Technique, prop: Property, fid: str, max_examples: int) -> None:
    from hypothesis import HealthCheck, assume, given, settings

    from suite.testing.strategies import scenarios

    @settings(max_examples=max_examples, deadline=None, derandomize=True,
              suppress_health_check=list(HealthCheck), database=None)
    @given(scenarios(tech, fidelity=fid))
    def run(scenario: Scenario) -> None:
        try:
            prop.check(tech, scenario)
        except Skip:
            assume(False)
        except AssertionError as exc:
            raise _fail(tech, f"property {prop.name}", f"{exc} (scenario {scenario.variant} {scenario.fidelity}, "
                                                      f"profile {scenario.profile_name}, params "
                                                      f"{dict(scenario.params)})") from None

    run()
