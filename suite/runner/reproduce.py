"""Reproduce paper claims: run every scenario a claim and its nulls need, compute our value, judge.

A verdict is information, never forced (the rules, with examples: docs/verdicts.md):

``reproduced``
    our value is inside the claim's band, every null prediction is outside it, and at least one
    null is *computed and could have landed in the band* (a variant null: the baseline at the
    same scenario; or a value null, such as ideal scaling, that the acceptance does not exclude
    by its construction);
``reproduced (no null)``
    our value is inside and every null outside, but no null could have landed inside (none
    declared, only a written ``null_reason``, or only nulls the band excludes by construction,
    such as no gain = 1.0 under a gain band or a tie under an ordering, which is also what a
    variant null putting the baseline in the technique's place of a ratio or an ordering of
    the two gives): not evidence, counted apart;
``not discriminating``
    our value is inside, and so is a null (the baseline at the same scenario, or a trivial
    predictor such as no gain = 1.0x): the claim cannot tell the technique from its null;
``not reproduced``
    our value is outside the band; the outcome carries the claim's ``reason_class`` (missing
    mechanism, setup unknown, baseline not modelled, source imprecise) and reason;
``inconclusive``
    a measured claim (execute timings) whose bootstrap confidence interval straddles the band's
    edge, or one of whose measured nulls does;
``claim defect``
    a pass or a fail was impossible before any run: the band lies outside (or covers) every value
    the claim can take (``Claim.domain``), or the claim declares a ``defect``;
``error``
    a case (the claim's or a null's) failed, or a value could not be derived (with the reason).

One claim's error never stops the others. Every outcome lists the claim's deciding
assumptions (``ClaimOutcome.assumptions``), so a verdict resting on an unsourced one is marked.

A judged outcome is cached in the store (``Store.judgements``), keyed by everything the
judgement reads (:func:`_judgement_key`: the claim, the code, the case keys and the stored
results' content), so a reproduce whose cases are all stored re-derives nothing; error rows are
never cached and ``--rerun`` judges afresh.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from suite.errors import SuiteError
from suite.results.store import Store
from suite.runner.case import Case, Resolver
from suite.runner.engine import RunSummary, run_cases
from suite.runner.executors import ExecOptions
from suite.technique import Claim, Metric, Null, Result, Technique

__all__ = ["ClaimOutcome", "NullOutcome", "Scoreboard", "reproduce", "judge", "null_cases", "bootstrap_interval",
           "REPRODUCED", "REPRODUCED_NO_NULL", "NOT_DISCRIMINATING", "NOT_REPRODUCED", "INCONCLUSIVE",
           "CLAIM_DEFECT", "ERROR", "VERDICTS", "MEASURED_LABEL", "BOOTSTRAP_REPLICATES", "CONFIDENCE",
           "informative_nulls"]

REPRODUCED, REPRODUCED_NO_NULL, NOT_DISCRIMINATING, NOT_REPRODUCED, INCONCLUSIVE, CLAIM_DEFECT, ERROR = (
    "reproduced", "reproduced (no null)", "not discriminating", "not reproduced", "inconclusive", "claim defect",
    "error")
#: Every verdict class, in the order the scoreboard counts them.
VERDICTS = (REPRODUCED, REPRODUCED_NO_NULL, NOT_DISCRIMINATING, NOT_REPRODUCED, INCONCLUSIVE, CLAIM_DEFECT, ERROR)
#: The label of a claim judged on timings taken on this machine (``Claim.measured``).
MEASURED_LABEL = "measured on this machine"
#: Bootstrap replicates of a measured claim's value, and the two-sided confidence level.
BOOTSTRAP_REPLICATES = 2000
CONFIDENCE = 0.95
_INSIDE, _OUTSIDE, _STRADDLES = "inside", "outside", "straddles"


@dataclass
class NullOutcome:
    """One null prediction of a claim, judged against the claim's band.

    ``inside`` is True when the null's value is inside the band (the claim does not
    discriminate), False when outside, None when it could not be judged (``reason`` says why)
    or, for a measured null, when its interval straddles the band's edge (``straddles``).
    """

    label: str
    kind: str  # "variants" or "value"
    value: Any = None
    inside: bool | None = None
    straddles: bool = False
    interval: tuple[float, float] | None = None
    reason: str = ""
    substitutions: dict[str, str] = field(default_factory=dict)
    cases: dict[str, str] = field(default_factory=dict)  # label -> case key (variant nulls)

    def as_dict(self) -> dict[str, Any]:
        return {"label": self.label, "kind": self.kind, "value": _jsonable(self.value), "inside": self.inside,
                "straddles": self.straddles, "interval": list(self.interval) if self.interval else None,
                "reason": self.reason, "substitutions": dict(self.substitutions), "cases": dict(self.cases)}


@dataclass
class ClaimOutcome:
    """One row of the scoreboard: paper, ours, the nulls, the verdict."""

    technique: str
    claim: str
    statement: str
    source: str
    verified: bool
    paper: str  # expect.describe()
    ours: Any = None
    ratio: float | None = None
    verdict: str = ERROR
    reason: str = ""
    note: str = ""
    cases: dict[str, str] = field(default_factory=dict)  # label -> case key
    nulls: list[NullOutcome] = field(default_factory=list)
    null_reason: str = ""
    measured: bool = False
    label: str = ""  # "measured on this machine" for a measured claim
    interval: tuple[float, float] | None = None  # bootstrap CI of our value (measured)
    samples: int = 0  # fewest samples behind any timed metric of the claim (measured)
    #: on "not reproduced": one of suite.technique.REASON_CLASSES (None on other verdicts)
    reason_class: str | None = None
    #: the claim's deciding assumptions: dicts of name, value, flip_at, sourced (and source, note)
    assumptions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def unsourced(self) -> list[dict[str, Any]]:
        """The deciding assumptions that come from no stated source (the scoreboard marks them)."""
        return [a for a in self.assumptions if not a.get("sourced")]

    def as_dict(self) -> dict[str, Any]:
        return {"technique": self.technique, "claim": self.claim, "statement": self.statement, "source": self.source,
                "verified": self.verified, "paper": self.paper, "ours": _jsonable(self.ours), "ratio": self.ratio,
                "verdict": self.verdict, "reason": self.reason, "note": self.note, "cases": self.cases,
                "nulls": [n.as_dict() for n in self.nulls], "null_reason": self.null_reason,
                "measured": self.measured, "label": self.label,
                "interval": list(self.interval) if self.interval else None, "samples": self.samples,
                "reason_class": self.reason_class, "assumptions": [_jsonable(a) for a in self.assumptions]}


def _jsonable(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_jsonable(x) for x in v]
    if isinstance(v, Mapping):
        return {str(k): _jsonable(x) for k, x in v.items()}
    try:
        import numpy as np

        if isinstance(v, np.generic):
            return v.item()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    return v


@dataclass
class Scoreboard:
    """Every claim outcome, and the run that computed their cases."""

    outcomes: list[ClaimOutcome]
    run: RunSummary | None = None

    def counts(self, verified: bool | None = None) -> dict[str, int]:
        """Claims per verdict class (every class of :data:`VERDICTS`, zeros included) and ``total``."""
        rows = [o for o in self.outcomes if verified is None or o.verified == verified]
        c = {v: 0 for v in VERDICTS}
        for o in rows:
            c[o.verdict] += 1
        c["total"] = len(rows)
        return c

    def as_dict(self) -> dict[str, Any]:
        return {"claims": [o.as_dict() for o in self.outcomes],
                "counts": {"all": self.counts(), "verified": self.counts(True), "unverified": self.counts(False)},
                "run": self.run.as_dict() if self.run else None}


def _one_line(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()
    return msg[0] if msg and isinstance(exc, SuiteError) else (f"{type(exc).__name__}: {msg[0]}" if msg else type(exc).__name__)


def new_outcome(tech: Technique, claim: Claim) -> ClaimOutcome:
    """An empty outcome row for *claim* (verdict ``error`` until judged)."""
    return ClaimOutcome(technique=tech.name, claim=claim.id, statement=claim.statement, source=claim.source,
                        verified=claim.verified, paper=_safe(claim.expect.describe), note=claim.note,
                        null_reason=claim.null_reason, measured=bool(claim.measured),
                        label=MEASURED_LABEL if claim.measured else "",
                        assumptions=[a.as_dict() for a in claim.assumptions])


def null_cases(tech: Technique, claim: Claim, resolver: Resolver) -> list[tuple[Null, dict[str, Case] | None, str]]:
    """The resolved cases of every variant-substitution null of *claim*.

    Returns one ``(null, cases, reason)`` per null in declaration order: ``cases`` maps the claim's
    labels to the substituted, resolved cases (``None`` for a value null, or when the substituted
    scenario does not resolve, with ``reason`` saying why).
    """
    out: list[tuple[Null, dict[str, Case] | None, str]] = []
    for n in claim.nulls:
        if n.variants is None:
            out.append((n, None, ""))
            continue
        try:
            specs = n.substitute(claim.specs())
            out.append((n, {label: resolver.resolve(tech, spec) for label, spec in specs.items()}, ""))
        except Exception as exc:  # noqa: BLE001 - reported on the null, the claim still judged
            out.append((n, None, f"null scenario does not resolve: {_one_line(exc)}"))
    return out


def reproduce(techniques: Sequence[Technique], store: Store, *, executor: str = "local",
              options: ExecOptions | None = None, verified_only: bool = False, rerun: bool = False,
              progress: Any = None, command: str | None = None, registry: Any = None,
              resolver: Resolver | None = None, context: Any = None) -> Scoreboard:
    """Run the claims of *techniques* and their variant nulls through the runner (stored and
    cached) and judge them (:func:`judge`).

    Parameters
    ----------
    techniques : sequence of Technique
    store : Store
    verified_only : bool
        Only claims whose number was read in the paper (``verified=True``).
    executor, options, rerun, progress, command, context
        As :func:`suite.runner.engine.run_cases`.
    resolver : Resolver, optional
        A resolver of *context* whose caches to reuse (default: a new one); its context is used
        when no *context* is given.
    registry : Registry, optional
        Deprecated since 0.2.0 (``DeprecationWarning``), removed in 0.3.0: pass *context*.

    Returns
    -------
    Scoreboard
        One :class:`ClaimOutcome` per claim, in technique then declaration order.
    """
    from suite.context import Context

    if registry is not None:
        Context.warn_registry_argument("reproduce()")
    if context is None and resolver is not None:
        context = resolver.context
    context = Context.given(context, "reproduce()", registry=registry)
    if resolver is None:
        resolver = Resolver(context=context)
    pending: list[tuple[Technique, Claim, ClaimOutcome, dict[str, Case], list]] = []
    outcomes: list[ClaimOutcome] = []
    all_cases: list[Case] = []
    for tech in techniques:
        for claim in tech.claims:
            if verified_only and not claim.verified:
                continue
            o = new_outcome(tech, claim)
            outcomes.append(o)
            try:
                cases = {label: resolver.resolve(tech, spec) for label, spec in claim.specs().items()}
            except Exception as exc:  # noqa: BLE001 - a claim that does not resolve is an error row
                o.reason = f"scenario does not resolve: {_one_line(exc)}"
                continue
            o.cases = {label: c.key for label, c in cases.items()}
            all_cases.extend(cases.values())
            nc = null_cases(tech, claim, resolver)
            for _n, ncases, _r in nc:
                if ncases:
                    all_cases.extend(ncases.values())
            pending.append((tech, claim, o, cases, nc))
    summary = None
    if all_cases:
        # claims derive from stored results, artifacts included: reproduce stores them whole
        summary = run_cases(all_cases, store, executor=executor,
                            options=replace(options or ExecOptions(), artifacts="full"), rerun=rerun, progress=progress,
                            command=command, context=context)
        if summary.interrupted:
            raise KeyboardInterrupt
    status = store.statuses({c.key for c in all_cases})
    # judged outcomes are cached in the store, keyed by everything a judgement reads
    # (_judgement_key); --rerun judges afresh (and replaces the cached judgements)
    digests = store.content_digests({c.key for c in all_cases}) if pending else {}
    keys = [_judgement_key(tech, claim, cases, nc, digests) for tech, claim, _o, cases, nc in pending]
    cached = {} if rerun else store.judgements(k for k in keys if k)
    fresh: dict[str, str] = {}
    for (tech, claim, o, cases, nc), jkey in zip(pending, keys):
        hit = cached.get(jkey) if jkey else None
        if hit is not None:
            try:
                _restore_outcome(o, hit)
                continue
            except Exception:  # noqa: BLE001 - an unreadable entry is judged again (and replaced)
                pass
        judge(claim, o, cases, status, store, nc)
        if jkey and _cacheable(o):
            try:
                fresh[jkey] = _encode_outcome(o)
            except _Uncacheable:  # a value of a type the cache cannot round-trip: not cached
                pass
    if fresh and getattr(store, "conn", None) is not None:
        try:
            store.add_judgements(fresh)
        except Exception:  # noqa: BLE001 - a read-only store or a lock: the cache is an optimisation
            pass
    return Scoreboard(outcomes, summary)


# --------------------------------------------------------------------------- the judgement cache

#: bump when the meaning of a cached judgement changes in a way no fingerprint below sees
_JUDGEMENT_FORMAT = 2


def _package_fingerprint(module: str | None) -> str:
    """:func:`~suite.runner.case.package_fingerprint` of the top-level package of *module*."""
    from suite.runner.case import package_fingerprint

    return package_fingerprint((module or "").split(".")[0])


def _judgement_key(tech: Technique, claim: Claim, cases: Mapping[str, Case], nulls, digests: Mapping[str, str]) -> str:
    """The cache key of *claim*'s judgement: a SHA-256 of everything :func:`judge` reads.

    That is the claim's declaration (statement, source, band, scenarios, nulls, ...); the code
    that computes and judges it (the technique's version and code fingerprint, the packages that
    define its ``derive`` and acceptance, every source file of the ``suite`` package, the numpy
    and Python versions: the bootstrap's draws and quantiles); the case keys of the claim and of
    every null (or the reason a null does not resolve); and each case's stored status and
    content (:meth:`Store.content_digests`). Empty (not cached) when a case is not stored.
    """
    import hashlib
    import json
    import sys

    import numpy as np

    from suite.runner.case import code_fingerprint

    def digest(cs: Mapping[str, Case]):
        out = {}
        for label, c in cs.items():
            d = digests.get(c.key)
            if d is None:
                raise KeyError(c.key)
            out[label] = [c.key, d]
        return out

    try:
        ident = {
            "format": _JUDGEMENT_FORMAT, "python": sys.version, "numpy": np.__version__,
            "core": _package_fingerprint(__name__),
            "technique": [tech.name, tech.version, code_fingerprint(tech)],
            "claim": [claim.id, claim.statement, claim.source, claim.verified, claim.note, claim.null_reason,
                      bool(claim.measured), claim.metric, _safe(claim.expect.describe), repr(claim.expect),
                      repr(claim.specs()), [repr(n) for n in claim.nulls], claim.defect, claim.reason_class,
                      claim.reason, [repr(a) for a in claim.assumptions]],
            "code": sorted({_package_fingerprint(getattr(f, "__module__", None))
                            for f in (_unwrap(claim.derive), type(claim.expect), _unwrap(claim.domain))
                            if f is not None and callable(f)}),
            "derive": _function_identity(claim.derive),
            "domain": _function_identity(claim.domain) if callable(claim.domain) else repr(claim.domain),
            "cases": digest(cases),
            "nulls": [[n.label, digest(nc) if nc else None, why] for n, nc, why in nulls],
            "replicates": BOOTSTRAP_REPLICATES, "confidence": CONFIDENCE,
        }
        blob = json.dumps(ident, sort_keys=True, separators=(",", ":"), default=repr)
    except Exception:  # noqa: BLE001 - a case not stored, an identity that does not hash: not cached
        return ""
    return hashlib.sha256(blob.encode()).hexdigest()


def _unwrap(f: Any) -> Any:
    while isinstance(f, functools.partial):
        f = f.func
    return f


def _function_identity(f: Any, depth: int = 0) -> Any:
    """What a ``derive`` function computes with, beyond its package's source (two lambdas of one
    module differ here): its qualified name, byte code, constants, names, defaults and closure
    values (nested functions and ``functools.partial`` likewise). Anything else is its ``repr``
    (one that names an address never hits the cache: safe, only slower)."""
    if f is None:
        return None
    if isinstance(f, functools.partial):
        return ["partial", _function_identity(f.func, depth + 1), repr(f.args), repr(sorted(f.keywords.items()))]
    code = f if hasattr(f, "co_code") else getattr(f, "__code__", None)
    if code is None or depth > 3:
        return repr(f)

    def const(c: Any) -> Any:
        return _function_identity(c, depth + 1) if hasattr(c, "co_code") else repr(c)

    def cell(c: Any) -> Any:
        try:
            v = c.cell_contents
        except ValueError:
            return "<empty>"
        return _function_identity(v, depth + 1) if callable(v) and hasattr(v, "__code__") else repr(v)

    if not hasattr(f, "co_code"):  # a function: its code object and what it closes over
        return [getattr(f, "__module__", None), getattr(f, "__qualname__", None), _function_identity(code, depth),
                repr(getattr(f, "__defaults__", None)), [cell(c) for c in (getattr(f, "__closure__", None) or ())]]
    return [code.co_code.hex(), [const(c) for c in code.co_consts], list(code.co_names)]


def _cacheable(o: ClaimOutcome) -> bool:
    """Whether a judged outcome may be cached: not when an exception decided it (an error row,
    or a null whose value raised), which may be passing (a locked store, memory); errors are
    cheap to judge again."""
    return o.verdict != ERROR and not any(n.reason.startswith("null value could not be derived") for n in o.nulls)


class _Uncacheable(Exception):
    pass


def _enc(v: Any) -> Any:
    """*v* as JSON that :func:`_dec` turns back into an equal value of the same types (tuples,
    non-string keys, numpy scalars and non-finite floats included)."""
    t = type(v)
    if v is None or t is bool or t is str or t is int:
        return v
    if t is float:
        return v if math.isfinite(v) else {"~f": repr(v)}
    if t is list:
        return [_enc(x) for x in v]
    if t is tuple:
        return {"~t": [_enc(x) for x in v]}
    if t is dict:
        return {"~d": [[_enc(k), _enc(x)] for k, x in v.items()]}
    import numpy as np

    if isinstance(v, np.generic) and t in (np.float64, np.float32, np.int64, np.int32, np.bool_):
        return {"~n": np.dtype(t).str, "v": _enc(v.item())}
    raise _Uncacheable(t.__name__)


def _dec(v: Any) -> Any:
    if isinstance(v, list):
        return [_dec(x) for x in v]
    if isinstance(v, dict):
        if "~f" in v:
            return float(v["~f"])
        if "~t" in v:
            return tuple(_dec(x) for x in v["~t"])
        if "~d" in v:
            return {_dec(k): _dec(x) for k, x in v["~d"]}
        if "~n" in v:
            import numpy as np

            return np.dtype(v["~n"]).type(_dec(v["v"]))
        raise ValueError(f"unknown encoding {sorted(v)}")
    return v


def _encode_outcome(o: ClaimOutcome) -> str:
    import dataclasses
    import json

    d = {f.name: _enc(getattr(o, f.name)) for f in dataclasses.fields(o) if f.name != "nulls"}
    d["nulls"] = [{f.name: _enc(getattr(n, f.name)) for f in dataclasses.fields(n)} for n in o.nulls]
    return json.dumps(d, separators=(",", ":"))


def _restore_outcome(o: ClaimOutcome, text: str) -> None:
    """Fill *o* from :func:`_encode_outcome`'s text (every field: the cached judgement)."""
    import dataclasses
    import json

    d = json.loads(text)
    names = {f.name for f in dataclasses.fields(o)}
    if set(d) != names:
        raise ValueError("fields differ")
    values = {k: _dec(v) for k, v in d.items() if k != "nulls"}
    nulls = [NullOutcome(**{k: _dec(v) for k, v in n.items()}) for n in d["nulls"]]
    for k, v in values.items():
        setattr(o, k, v)
    o.nulls = nulls


# --------------------------------------------------------------------------- judging


def _point_stat(m: Metric):
    """The statistic a metric's value is of its samples: the median when the value is the samples'
    median, else the mean (the two estimators plugins report)."""
    import numpy as np

    s = np.asarray(m.samples, dtype=float)
    med = float(np.median(s))
    return np.median if math.isclose(m.value, med, rel_tol=1e-9, abs_tol=1e-300) else np.mean


def _timed(results: Mapping[str, Result]) -> dict[tuple[str, str], Metric]:
    return {(label, name): m for label, r in results.items() for name, m in r.metrics.items()
            if m.samples is not None and len(m.samples) >= 2 and all(math.isfinite(x) for x in m.samples)}


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

    timed = _timed(results)
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
    stats = [(label, name, m, _point_stat(m) is np.median, np.asarray(m.samples, dtype=float))
             for (label, name), m in timed.items()]
    sizes = {s.size for *_r, s in stats}
    if len(sizes) == 1:
        n = sizes.pop()
        draws = rng.integers(0, n, size=(replicates, len(stats), n))
        resamples = [s[draws[:, j, :]] for j, (*_r, s) in enumerate(stats)]
    else:
        rows = [[s[rng.integers(0, s.size, size=s.size)] for *_r, s in stats] for _ in range(replicates)]
        resamples = [np.array([row[j] for row in rows]) for j in range(len(stats))]
    values = [(np.median(x, axis=1) if median else np.mean(x, axis=1)).tolist()
              for x, (_l, _n, _m, median, _s) in zip(resamples, stats)]
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


def _classify(claim: Claim, point: Any, reps: list[Any]) -> tuple[str, tuple[float, float] | None]:
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
        return (_INSIDE if check(point) else _OUTSIDE), None
    xs = [_scalar(r) for r in reps]
    if all(x is not None for x in xs) and _scalar(point) is not None:
        a = (1.0 - CONFIDENCE) / 2.0
        lo, hi = (float(q) for q in np.quantile(xs, [a, 1.0 - a]))
        lo, hi = min(lo, float(point)), max(hi, float(point))
        within = [x for x in xs if lo <= x <= hi] + [lo, hi, float(point)]
        passes = [bool(check(x)) for x in within]
        state = _INSIDE if all(passes) else (_OUTSIDE if not any(passes) else _STRADDLES)
        return state, (lo, hi)
    frac = sum(bool(check(r)) for r in reps) / len(reps)
    if frac >= (1.0 + CONFIDENCE) / 2.0 and check(point):
        return _INSIDE, None
    if frac <= (1.0 - CONFIDENCE) / 2.0 and not check(point):
        return _OUTSIDE, None
    return _STRADDLES, None


def _bad_case(cases: Mapping[str, Case], status) -> str:
    for label, c in cases.items():
        st, err = status.get(c.key, ("missing", "not computed"))
        if st != "ok":
            return f"case {label!r} {st}: {err or ''}".rstrip(": ")
    return ""


def _judge_value(claim: Claim, results: Mapping[str, Result], statistics: bool):
    """(value, state, interval, samples) of *claim* on *results*; bootstrap when *statistics*."""
    value = claim.value(results)
    reps: list[Any] = []
    n = 0
    if statistics:
        timed = _timed(results)
        n = min((len(m.samples) for m in timed.values()), default=0)
        reps = bootstrap_interval(claim, results)
    state, interval = _classify(claim, value, reps)
    return value, state, interval, n


def judge(claim: Claim, o: ClaimOutcome, cases: Mapping[str, Case], status, store,
          nulls: Sequence[tuple[Null, Mapping[str, Case] | None, str]] | None = None) -> None:
    """Fill outcome *o* of *claim* from stored cases: our value, the ratio, every null and the verdict.

    Parameters
    ----------
    claim : Claim
    o : ClaimOutcome
        Filled in place.
    cases : mapping of label -> Case
        The claim's resolved cases.
    status : mapping of case key -> (status, error)
        As :meth:`suite.results.store.Store.statuses`, covering the claim's and the nulls' cases.
    store : Store
    nulls : sequence of (Null, cases or None, reason), optional
        As :func:`null_cases`. Default: value nulls are judged, variant nulls carry the reason
        "null cases not given to judge()" (so the verdict is never ``reproduced`` on evidence
        that was not evaluated).

    Notes
    -----
    The verdict: ``error`` when a claim case is not ok or a value cannot be derived or checked;
    ``claim defect`` when the claim declares a defect or its band cannot pass or cannot fail
    inside its ``domain`` (:func:`claim_defect`, checked before the band is read); else ``not
    reproduced`` when our value (or, measured, its whole interval) is outside the band, with the
    claim's reason class; ``inconclusive`` when a measured interval straddles the band's edge;
    ``not discriminating`` when ours is inside and a null is inside too; ``inconclusive`` when
    ours is inside and a measured null straddles; ``error`` when ours is inside but a null could
    not be evaluated (the evidence is missing); ``reproduced (no null)`` when no null could have
    landed in the band (:func:`informative_nulls`: none declared, only a ``null_reason``, or only
    nulls whose value the acceptance excludes by construction); else ``reproduced``.
    """
    if nulls is None:
        nulls = [(n, None, "" if n.variants is None else "null cases not given to judge()") for n in claim.nulls]
    statistics = bool(claim.measured) or any(c.fidelity == "execute" for c in cases.values())

    def unjudged(why: str) -> list:  # the declared nulls stay visible when ours cannot be judged
        return [NullOutcome(label=n.label, kind="value" if n.variants is None else "variants",
                            substitutions=dict(n.variants or {}), reason=why) for n, _c, _w in nulls]

    bad = _bad_case(cases, status)
    if bad:
        o.reason = bad
        o.nulls = unjudged("not judged: the claim's own case failed")
        return
    try:
        results = {label: store.result(c.key) for label, c in cases.items()}
        ours, state, o.interval, o.samples = _judge_value(claim, results, statistics)
    except Exception as exc:  # noqa: BLE001
        o.reason = f"value could not be derived: {_one_line(exc)}"
        o.nulls = unjudged("not judged: the claim's value could not be derived")
        return
    o.ours = ours
    try:
        o.ratio = claim.expect.ratio(ours)
    except Exception:  # noqa: BLE001 - a ratio is decoration
        o.ratio = None
    # the nulls
    o.nulls = []
    for n, ncases, why in nulls:
        no = NullOutcome(label=n.label, kind="value" if n.variants is None else "variants",
                         substitutions=dict(n.variants or {}))
        o.nulls.append(no)
        if why:
            no.reason = why
            continue
        try:
            if n.variants is None:
                no.value = n.value if n.derive is None else n.derive(results)
                nstate, no.interval = _classify(claim, no.value, [])
            else:
                no.cases = {label: c.key for label, c in ncases.items()}
                nbad = _bad_case(ncases, status)
                if nbad:
                    no.reason = "null " + nbad
                    continue
                nres = {label: store.result(c.key) for label, c in ncases.items()}
                no.value, nstate, no.interval, _n = _judge_value(claim, nres, statistics)
        except Exception as exc:  # noqa: BLE001
            no.reason = f"null value could not be derived: {_one_line(exc)}"
            continue
        no.straddles = nstate == _STRADDLES
        no.inside = None if no.straddles else nstate == _INSIDE
    _verdict(claim, o, state, results)


def informative_nulls(claim: Claim, nulls: Sequence[NullOutcome]) -> list[NullOutcome]:
    """The judged nulls that are evidence: those whose value the claim's acceptance does not
    exclude by its construction (:meth:`Acceptance.excludes`), i.e. that could have landed in
    the band. Excluded: ``no gain`` = 1.0 under a gain band, and likewise a variant null that
    puts the baseline in the technique's place of a ratio of the two (exactly 1.0), or of an
    ordering (a tie)."""
    return [n for n in nulls
            if not n.reason and (n.inside is not None or n.straddles) and not claim.expect.excludes(n.value)]


def claim_defect(claim: Claim, ours: Any, results: Mapping[str, Result]) -> str:
    """Why *claim* could not both pass and fail before any run (a declared ``defect``, or a band
    unreachable inside the claim's ``domain``), or ``""`` (docs/verdicts.md, Claim defects)."""
    if claim.defect:
        return claim.defect
    try:
        domain = claim.value_domain(results)
    except Exception as exc:  # noqa: BLE001 - a domain that cannot be computed is reported, not raised
        return f"the claim's domain could not be computed: {_one_line(exc)}"
    return claim.expect.unreachable(domain, ours)


def _why_not(claim: Claim, o: ClaimOutcome) -> None:
    """The reason class and reason of a "not reproduced": the claim's declaration, else derived
    from an unsourced deciding assumption that flips (setup unknown)."""
    if claim.reason_class:
        o.reason_class, o.reason = claim.reason_class, claim.reason
        return
    from suite.report.scoreboard import format_value

    flips = [a for a in claim.assumptions if not a.sourced and a.flip_at is not None]
    if flips:
        a = flips[0]
        o.reason_class = "setup unknown"
        o.reason = claim.reason or f"{a.name} = {format_value(a.value)} is assumed; the verdict flips at {format_value(a.flip_at)}"
    else:
        o.reason = claim.reason or "no reason class declared"


def _verdict(claim: Claim, o: ClaimOutcome, state: str, results: Mapping[str, Result]) -> None:
    """The verdict of a judged outcome (ours and the nulls filled in), in the order of
    :func:`judge`'s notes."""
    defect = claim_defect(claim, o.ours, results)
    if defect:
        o.verdict = CLAIM_DEFECT
        o.reason = defect
        return
    if state == _OUTSIDE:
        o.verdict = NOT_REPRODUCED
        _why_not(claim, o)
        return
    if state == _STRADDLES:
        o.verdict = INCONCLUSIVE
        o.reason = f"the {CONFIDENCE:.0%} interval of our value straddles the band's edge"
        return
    inside = [n.label for n in o.nulls if n.inside]
    if inside:
        o.verdict = NOT_DISCRIMINATING
        o.reason = "null inside the band: " + ", ".join(inside)
        return
    straddling = [n.label for n in o.nulls if n.straddles]
    if straddling:
        o.verdict = INCONCLUSIVE
        o.reason = f"the {CONFIDENCE:.0%} interval of a null straddles the band's edge: " + ", ".join(straddling)
        return
    unevaluated = [n for n in o.nulls if n.reason]
    if unevaluated:
        o.verdict = ERROR
        o.reason = f"null {unevaluated[0].label!r}: {unevaluated[0].reason}"
        return
    if not informative_nulls(claim, o.nulls):
        o.verdict = REPRODUCED_NO_NULL
        if not o.nulls:
            o.reason = "none declared: " + (claim.null_reason or "no null prediction")
        else:
            o.reason = ("every null is excluded by the band's construction: "
                        + ", ".join(n.label for n in o.nulls))
        return
    o.verdict = REPRODUCED


def _safe(f) -> str:
    try:
        return str(f())
    except Exception as exc:  # noqa: BLE001
        return f"<{type(exc).__name__}>"


# --------------------------------------------------------------------------- rendering

#: the renderers moved to suite.report.scoreboard; these names stay importable from here
_RENDERERS = ("format_value", "format_nulls", "format_ours", "format_verdict", "counts_line", "render_markdown",
              "table_rows")


def __getattr__(name: str) -> Any:
    if name in _RENDERERS:
        from suite.report import scoreboard

        return getattr(scoreboard, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
