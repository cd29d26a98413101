"""The statistics of a measured claim: a bootstrap of its value from its timings' raw samples,
and where a value and its interval lie with respect to the claim's band.

A claim judged on execute timings (``Claim.measured``) is a statistic of noisy samples; its
verdict is ``inconclusive`` when the central :data:`~suite.runner.verdicts.CONFIDENCE` interval
of its bootstrap replicates straddles the band's edge (docs/verdicts.md, Measured claims).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from suite.runner.verdicts import BOOTSTRAP_REPLICATES, CONFIDENCE, INSIDE, OUTSIDE, STRADDLES

if TYPE_CHECKING:
    from suite.technique import Claim, Metric, Result

__all__ = ["bootstrap_interval", "classify", "timed_metrics", "point_statistic"]


def point_statistic(m: Metric) -> Callable[..., Any]:
    """The statistic a metric's value is of its samples: ``np.median`` when the value is the
    samples' median, else ``np.mean`` (the two estimators plugins report)."""
    import numpy as np

    s = np.asarray(m.samples, dtype=float)
    med = float(np.median(s))
    return np.median if math.isclose(m.value, med, rel_tol=1e-9, abs_tol=1e-300) else np.mean


def timed_metrics(results: Mapping[str, Result]) -> dict[tuple[str, str], Metric]:
    """(label, metric name) -> metric, for every metric of *results* with at least two finite samples."""
    return {(label, name): m for label, r in results.items() for name, m in r.metrics.items()
            if m.samples is not None and len(m.samples) >= 2 and all(math.isfinite(x) for x in m.samples)}


def _resample_statistics(stats: list[tuple[Any, ...]], rng: Any, replicates: int) -> list[list[float]]:
    """Per timed metric, its statistic on each of *replicates* resamples (see bootstrap_interval)."""
    import numpy as np

    sizes = {s.size for *_r, s in stats}
    if len(sizes) == 1:
        n = sizes.pop()
        draws = rng.integers(0, n, size=(replicates, len(stats), n))
        resamples = [s[draws[:, j, :]] for j, (*_r, s) in enumerate(stats)]
    else:
        rows = [[s[rng.integers(0, s.size, size=s.size)] for *_r, s in stats] for _ in range(replicates)]
        resamples = [np.array([row[j] for row in rows]) for j in range(len(stats))]
    return [(np.median(x, axis=1) if median else np.mean(x, axis=1)).tolist()
            for x, (_l, _n, _m, median, _s) in zip(resamples, stats)]


def bootstrap_interval(claim: Claim, results: Mapping[str, Result], *, replicates: int = BOOTSTRAP_REPLICATES,
                       seed: int = 0) -> list[Any]:
    """Bootstrap replicates of *claim*'s value from the raw samples of its results.

    Each replicate resamples, with replacement and independently per metric, the samples of every
    metric that has at least two (a percentile bootstrap, Efron & Tibshirani, *An Introduction
    to the Bootstrap*, 1993, ch. 13), recomputes the metric's statistic on the resample (median or
    mean, whichever the stored value is) and derives the claim's value from the resampled results.
    Deterministic for a given *seed* and samples. Returns the replicate values (empty when no
    metric has samples).
    """
    import numpy as np

    from suite.technique import Result

    timed = timed_metrics(results)
    if not timed or replicates <= 0:
        return []
    rng = np.random.default_rng(seed)
    # The draws are those of rng.integers(0, n, size=n), per replicate and then per timed metric
    # in order (rng.integers(0, n, n) draws exactly what rng.choice(s, n, replace=True) does).
    # When every timed metric has the same n they are taken in one call of size (replicates,
    # metrics, n): the same numbers in the same order (a bounded integer below 2**32 is one
    # 32-bit output of the bit generator, whatever the call's size; tested against the
    # call-by-call loop). Each resample's statistic is np.median or np.mean along the last
    # axis (the same floats as per resample), and a replicate rebuilds only the results that
    # hold a timed metric, each metric a copy with the resampled value, not a validated
    # construction (issue 19: 168,000 draws and 191,000 Metric constructions were 2.2 s of a
    # cached `suite reproduce`).
    stats = [(label, name, m, point_statistic(m) is np.median, np.asarray(m.samples, dtype=float))
             for (label, name), m in timed.items()]
    values = _resample_statistics(stats, rng, replicates)
    labels = {label for label, *_r in stats}
    out = []
    for i in range(replicates):
        res = {label: Result(dict(r.metrics), r.artifacts) if label in labels else r for label, r in results.items()}
        for (label, name, m, _median, _s), v in zip(stats, values):
            res[label].metrics[name] = _with_value(m, v[i])
        out.append(claim.value(res))
    return out


def _with_value(m: Metric, value: float) -> Metric:
    """*m* with another value: a copy of its fields (validated when *m* was made), not a new
    construction."""
    new = object.__new__(type(m))
    new.__dict__.update(m.__dict__)
    new.__dict__["value"] = value
    return new


def _scalar(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def classify(claim: Claim, point: Any, reps: list[Any]) -> tuple[str, tuple[float, float] | None]:
    """inside / outside / straddles for a value and its bootstrap replicates (none: the point).

    A scalar value: the central :data:`CONFIDENCE` percentile interval of the replicates (plus
    the point) is inside when every replicate in it passes the acceptance, outside when none
    does, else it straddles the band's edge. A non-scalar value (an ordering's mapping): the
    fraction of replicates that pass, inside above ``(1 + CONFIDENCE) / 2``, outside below
    ``(1 - CONFIDENCE) / 2``.
    """
    import numpy as np

    check = claim.expect.check
    if not reps:
        return (INSIDE if check(point) else OUTSIDE), None
    xs = [x for x in (_scalar(r) for r in reps) if x is not None]
    if len(xs) == len(reps) and _scalar(point) is not None:
        a = (1.0 - CONFIDENCE) / 2.0
        lo, hi = (float(q) for q in np.quantile(xs, [a, 1.0 - a]))
        lo, hi = min(lo, float(point)), max(hi, float(point))
        within = [x for x in xs if lo <= x <= hi] + [lo, hi, float(point)]
        passes = [bool(check(x)) for x in within]
        state = INSIDE if all(passes) else (OUTSIDE if not any(passes) else STRADDLES)
        return state, (lo, hi)
    frac = sum(bool(check(r)) for r in reps) / len(reps)
    if frac >= (1.0 + CONFIDENCE) / 2.0 and check(point):
        return INSIDE, None
    if frac <= (1.0 - CONFIDENCE) / 2.0 and not check(point):
        return OUTSIDE, None
    return STRADDLES, None
