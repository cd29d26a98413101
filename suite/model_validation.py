"""Validation of a technique's cost model against measurement on this machine (docs/validation.md).

For a technique with both an ``execute`` and a ``model`` fidelity, :func:`validate` runs the same
scenarios at both fidelities -- the real computation here, the cost model on a hardware profile
(by default ``local``, the calibrated profile ``suite hardware calibrate`` writes) -- and compares
every metric both report under the same name and unit:

    error_i = (predicted_i - measured_i) / measured_i
    MAPE    = 100 / n * sum_i |error_i|              (per metric, and over all compared values)

Which scenarios: those given, else the technique's declared validation set (a ``validation``
attribute holding :class:`~suite.technique.ScenarioSpec` objects), else its ``smoke`` scenarios.
Each spec's fidelity and profile are replaced (execute / model, on the chosen profile); its
variant, workload, params and seed are kept. A scenario that declines (``Skip``) or does not fit
the profile (a :class:`~suite.errors.SuiteError`, e.g. a cluster-only model on a one-device
profile) is listed as skipped with its reason; any other exception propagates.

This module knows no technique by name.

References
----------
.. [Hyndman06] R. J. Hyndman, A. B. Koehler, "Another look at measures of forecast accuracy",
   International Journal of Forecasting 22(4), 2006 (MAPE; undefined when the actual value is 0).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from suite.errors import ProfileError, SuiteError
from suite.technique import Result, ScenarioSpec, Skip, Technique

if TYPE_CHECKING:  # pragma: no cover
    from suite.context import Context
    from suite.runner.case import Resolver

__all__ = ["ValidationRow", "ValidationReport", "validate", "validation_specs", "compare_results", "DEFAULT_PROFILE"]

DEFAULT_PROFILE = "local"


@dataclass(frozen=True)
class ValidationRow:
    """One metric of one scenario, measured and predicted.

    ``error`` is ``(predicted - measured) / measured`` (a fraction; ``None`` when measured is 0,
    where the relative error is undefined).
    """

    case: str
    variant: str
    metric: str
    unit: str
    measured: float
    predicted: float
    error: float | None

    @property
    def error_pct(self) -> float | None:
        return None if self.error is None else 100.0 * self.error

    def as_dict(self) -> dict[str, Any]:
        return {"case": self.case, "variant": self.variant, "metric": self.metric, "unit": self.unit,
                "measured": self.measured, "predicted": self.predicted, "error_pct": self.error_pct}


@dataclass
class ValidationReport:
    """What :func:`validate` returns: rows, MAPE per metric and overall, skipped scenarios."""

    technique: str
    profile: str
    rows: list[ValidationRow] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (case, reason)

    def mape(self, metric: str | None = None) -> float | None:
        """Mean absolute percentage error (%) over rows of *metric* (all rows when None) whose
        error is defined; None when there is none."""
        errs = [abs(r.error) for r in self.rows if r.error is not None and (metric is None or r.metric == metric)]
        return 100.0 * sum(errs) / len(errs) if errs else None

    @property
    def metrics(self) -> list[str]:
        seen: dict[str, None] = {}
        for r in self.rows:
            seen.setdefault(r.metric, None)
        return list(seen)

    def summary(self) -> list[dict[str, Any]]:
        """One row per metric: unit, number of compared cases, MAPE (%)."""
        out = []
        for m in self.metrics:
            rows = [r for r in self.rows if r.metric == m]
            out.append({"metric": m, "unit": rows[0].unit, "cases": len(rows), "mape_pct": self.mape(m)})
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"technique": self.technique, "profile": self.profile,
                "rows": [r.as_dict() for r in self.rows], "mape_pct": self.summary(),
                "overall_mape_pct": self.mape(), "skipped": [{"case": c, "reason": r} for c, r in self.skipped]}


def validation_specs(tech: Technique) -> list[ScenarioSpec]:
    """The technique's declared validation set (attribute ``validation``), else its smoke scenarios.

    Raises
    ------
    SuiteError
        Neither is declared.
    """
    specs = list(tech.validation or tech.smoke or ())
    if not specs:
        raise SuiteError(f"validate: technique {tech.name!r} declares no validation set and no smoke scenarios")
    return specs


def _describe(spec: ScenarioSpec, tech: Technique | None = None) -> str:
    """``variant [workload] k=v,...`` listing only parameters that differ from their defaults."""
    bits = [spec.variant]
    if spec.workload:
        bits.append(spec.workload)
    defaults = {k: p.default for k, p in tech.parameters.items()} if tech is not None else {}
    params = {k: v for k, v in spec.params.items() if k not in defaults or defaults[k] != v}
    if params:
        bits.append(",".join(f"{k}={v}" for k, v in sorted(params.items())))
    if spec.seed:
        bits.append(f"seed={spec.seed}")
    return " ".join(bits)


def compare_results(measured: Result, predicted: Result, metrics: Iterable[str] | None = None
                    ) -> list[tuple[str, str, float, float, float | None]]:
    """Metrics present in both results with the same unit: (name, unit, measured, predicted, error).

    Non-finite values are left out. ``error`` is None when measured is 0 (the relative error is
    undefined [Hyndman06]; such rows are shown but not averaged).
    """
    wanted = set(metrics) if metrics else None
    out = []
    for name, m in measured.metrics.items():
        p = predicted.metrics.get(name)
        if p is None or p.unit != m.unit or (wanted is not None and name not in wanted):
            continue
        if not (math.isfinite(m.value) and math.isfinite(p.value)):
            continue
        if m.value == 0:
            err = None
        else:
            err = (p.value - m.value) / m.value
        out.append((name, m.unit, m.value, p.value, err))
    return out


def _check_validatable(ctx: Context, tech: Technique, profile: str) -> None:
    """*tech* has both fidelities and *profile* exists and loads (the ``local`` one's absence
    suggests ``suite hardware calibrate``)."""
    missing = [f for f in ("execute", "model") if f not in tech.fidelities]
    if missing:
        raise SuiteError(f"validate: technique {tech.name!r} has no {missing[0]!r} fidelity (has "
                         f"{sorted(tech.fidelities)}); validate compares execute with model")
    if not profile.endswith(".toml") and profile not in ctx.profiles:
        hint = ("run `suite hardware calibrate` to measure this machine and write it"
                if profile == DEFAULT_PROFILE else
                "see `suite hardware list`, or run `suite hardware calibrate` for the calibrated 'local' profile")
        raise ProfileError(f"validate: hardware profile {profile!r} not found; {hint}")
    ctx.profile(profile)  # a malformed profile raises its own one-line error


def _both_fidelities(resolver: Resolver, tech: Technique, spec: ScenarioSpec, profile: str) -> dict[str, Result] | str:
    """*spec* evaluated at execute and at model fidelity on *profile*, or the reason it was skipped
    (it declined, or the profile's kind or size does not fit it)."""
    results: dict[str, Result] = {}
    try:
        for fid in ("execute", "model"):
            case = resolver.resolve(tech, replace(spec, fidelity=fid, profile=profile))
            assert case.scenario is not None  # resolve() builds it
            results[fid] = tech.evaluate(case.scenario)
    except Skip as exc:
        return str(exc)
    except SuiteError as exc:  # e.g. the profile's kind or size does not fit this scenario
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return results


def validate(technique: str | Technique, profile: str = DEFAULT_PROFILE, *,
             scenarios: Sequence[ScenarioSpec] | None = None, metrics: Iterable[str] | None = None,
             profile_dirs: tuple[str | Path, ...] = (), progress: Callable[[int, int, str], None] | None = None,
             context: Any = None) -> ValidationReport:
    """Run a technique's scenarios at execute and model fidelity and compare them.

    Parameters
    ----------
    technique : str or Technique
        A registered technique name, or the object.
    profile : str
        Hardware profile of the model (and recorded with the execute case); default ``local``.
    scenarios : sequence of ScenarioSpec, optional
        Default: :func:`validation_specs`.
    metrics : iterable of str, optional
        Compare only these metrics (default: every metric both fidelities report with the same
        name and unit).
    profile_dirs : tuple of path
        Extra profile folders.
    progress : callable (done, total, description), optional

    Returns
    -------
    ValidationReport

    Raises
    ------
    SuiteError
        The technique lacks the execute or the model fidelity, or declares no scenarios.
    ProfileError
        The profile does not exist (the message suggests ``suite hardware calibrate`` for
        ``local``).
    """
    from suite.context import Context
    from suite.runner.case import Resolver

    ctx = Context.given(context, "validate()").with_profile_dirs(tuple(profile_dirs))
    tech = ctx.technique(technique) if isinstance(technique, str) else technique
    _check_validatable(ctx, tech, profile)
    resolver = Resolver(context=ctx)
    specs = list(scenarios) if scenarios is not None else validation_specs(tech)
    report = ValidationReport(tech.name, profile)
    for i, spec in enumerate(specs):
        label = _describe(spec, tech)
        if progress is not None:
            progress(i, len(specs), label)
        results = _both_fidelities(resolver, tech, spec, profile)
        if isinstance(results, str):
            report.skipped.append((label, results))
            continue
        for name, unit, meas, pred, err in compare_results(results["execute"], results["model"], metrics):
            report.rows.append(ValidationRow(label, spec.variant, name, unit, meas, pred, err))
    if progress is not None:
        progress(len(specs), len(specs), "done")
    return report
