"""Compare two runs case by case: per metric both values, the ratio, better or worse.

Cases are joined by **scenario**: technique, variant, fidelity, workload, parameters and seed,
plus every *swept* profile dimension, i.e. the profile name and each overridden profile field
(``suite run --set PATH=...``) whose value varies within either run. A dimension that is
constant within each run (one profile, one fixed override) is the *hardware* of the run, not
part of the scenario: comparing a run on profile X with one on profile Y pairs their cases and
is then refused as a cross-profile comparison unless allowed.

Refusal: a pair whose profile content hashes differ, whose technique versions differ, or whose
runs recorded different versions of the plugin distribution providing the technique, is not
compared silently; :func:`compare_runs` raises :class:`CompareRefused` (one line) unless
``allow_profile_change=True``, in which case the comparison is made and
:attr:`Comparison.profile_diffs` lists which profile fields differ (profiles re-resolved with
the caller's context (:meth:`suite.context.Context.profile`) and the stored overrides, and diffed on
:meth:`suite.hardware.Profile.normalized`, SI units).

Significance: when both cases carry raw samples of a metric (execute fidelity), a two-sided
Mann-Whitney U test (:func:`scipy.stats.mannwhitneyu`) is run; a difference with p >= alpha
(0.05) is reported as *not significant* and never counts as a regression.

A metric stored in B in another unit of the same dimension than in A is converted into A's unit
(:func:`suite.hardware.units.convert`; the row's ``unit_b`` and a note say so); across dimensions
its verdict is ``"unit changed"``. Swept override values are joined by value in base units
(``"37 us"`` and ``"37e-6 s"`` are one scenario: :mod:`suite.results.scenarios`); a case that
does not set a swept field takes the value of a case of the same profile content hash that does
(a run without ``--set`` pairs with a sweep's case at the profile's own value).

Cases that are not ok: a scenario both runs asked for is paired whatever its cases' statuses. A pair
whose case is failed, timeout, crashed or skipped in either run has no metric to compare: it is a
:class:`StatusDiff` (both statuses, each side's one-line error), never "only in run N". Ok in A and not
ok in B fails the gate under any threshold or *strict* (the metrics A measured are lost); not ok in
A and ok in B, or not ok in both, is shown and fails nothing.

Unfinished runs: a run still running, interrupted, or stopped on an error (:data:`UNFINISHED`)
may not have reached every scenario it planned; the other run's scenarios it lacks are "only in
run N". Under any threshold or *strict* a run that is unfinished and short of its plan
(:func:`short_of_plan`) fails the gate, whether or not it left scenarios of the other run unpaired
(:meth:`Comparison.unfinished`): a gate never passes on half a run.

References
----------
.. [1] H. B. Mann and D. R. Whitney, "On a test of whether one of two random variables is
   stochastically larger than the other", Ann. Math. Statist. 18(1), 1947.

"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from suite.errors import SuiteError, did_you_mean
from suite.results.codec import finite as _num, is_missing
from suite.results.profilediff import ProfileDiff, merge_diffs, profile_diff
from suite.results.runs import UNFINISHED
from suite.results.schema import OK, STATUSES
from suite.results.scenarios import (sort_key, _describe, _order, _own_values, _scenario_key, _set_values, _swept, _unpaired,
                                     _varying, _written)

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CompareError", "CompareRefused", "MetricDiff", "StatusDiff", "ProfileDiff", "Comparison", "compare_runs",
           "parse_threshold", "profile_diff", "tally", "UNFINISHED", "short_of_plan"]



class CompareError(SuiteError):
    """Two runs cannot be compared (nothing in common, bad threshold)."""


class CompareRefused(CompareError):
    """The runs differ in hardware profile or plugin/technique version (not allowed). ``diffs``: the
    :class:`~suite.results.profilediff.ProfileDiff` of each pair of profiles that differ (which fields)."""

    def __init__(self, message: str, diffs: list[ProfileDiff] | None = None) -> None:
        super().__init__(message)
        self.diffs = diffs or []


#: Two values closer than this (in the metric's stored unit: 1e-12 s, 1e-12 B) or than a relative
#: 1e-9 are "same": floating-point noise such as 0 against 5.55e-17 is no change (``--abs-tol``).
ABS_TOL = 1e-12
REL_TOL = 1e-9


def parse_threshold(text: str | float | None) -> float | None:
    """``"5%"`` -> 0.05, ``"0.05"`` -> 0.05, None -> None.

    Raises
    ------
    CompareError
        Not a percentage or a fraction in [0, 1] (names the value given).
    """
    if text is None:
        return None
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        val = float(text)
    else:
        s = str(text).strip()
        try:
            val = float(s[:-1]) / 100.0 if s.endswith("%") else float(s)
        except ValueError:
            raise CompareError(f"--threshold: expected a percentage like 5% or a fraction like 0.05, got {text!r}") from None
        if not s.endswith("%") and val > 1:
            raise CompareError(f"--threshold: expected a percentage like 5% or a fraction <= 1 like 0.05, got {text!r}")
    if not math.isfinite(val) or val < 0:
        raise CompareError(f"--threshold: expected a non-negative percentage, got {text!r}")
    return val


@dataclass
class MetricDiff:
    """One metric of one scenario in both runs. ``change = (b - a) / |a|``; ``ratio = b / a``."""

    technique: str
    variant: str
    scenario: str  # the swept dimensions and parameters that vary, e.g. "nodes=4 network.-1.bandwidth=10 Gbit/s"
    metric: str
    unit: str
    direction: str
    a: float | None
    b: float | None
    ratio: float | None
    change: float | None
    verdict: str  # better, worse, same, changed (direction none), missing (only one side), unit changed
    p_value: float | None = None  # Mann-Whitney U, when both sides have samples
    significant: bool | None = None
    regression: bool = False  # worse beyond the threshold (and not "not significant")
    key_a: str | None = None
    key_b: str | None = None
    #: B's stored unit when it differs from A's (``unit``): B's value was converted into ``unit``,
    #: or, when the dimensions differ, the verdict is "unit changed" and ``b`` is in this unit
    unit_b: str | None = None

    def label(self, threshold: float | None) -> str:
        """The verdict as printed: ``worse +12.3%, beyond 5.0%``, ``better -4.1%, not significant (p=0.41)``,
        ``worse +200.0%, beyond 5.0% (B converted from s)``, ``unit changed: ms -> B, a regression``."""
        if self.verdict in ("missing", "unit changed") or self.change is None:
            text = f"unit changed: {self.unit} -> {self.unit_b}" if self.verdict == "unit changed" else self.verdict
            return text + (", a regression" if self.regression else "")
        text = "same" if self.verdict == "same" else self._change_label(threshold)
        return text + (f" (B converted from {self.unit_b})" if self.unit_b else "")

    def _change_label(self, threshold: float | None) -> str:
        assert self.change is not None
        text = f"{self.verdict} {_pct(self.change)}" if math.isfinite(self.change) else self.verdict
        if self.significant is False:
            text += f", not significant (p={self.p_value:.2g})"
        elif self.significant:
            text += f" (p={self.p_value:.2g})"
        if self.regression and threshold is not None:
            text += f", beyond {threshold:.1%}"
        return text


def short_of_plan(info: Mapping[str, Any]) -> bool:
    """Run *info* (:func:`suite.results.runs.run_info`) is :data:`UNFINISHED` (running, interrupted,
    error) and did not store all it planned: fewer cases stored (``total``) than ``planned``, or its
    plan is not known (``planned`` 0: always for a run stopped on an error, which keeps none)."""
    planned = info.get("planned") or 0
    return info.get("status") in UNFINISHED and not (planned and int(info.get("total") or 0) >= planned)


#: the statuses of a case that holds no metric (:data:`suite.results.schema.STATUSES` but ok)
NOT_OK = tuple(s for s in STATUSES if s != OK)


@dataclass
class StatusDiff:
    """A scenario both runs asked for whose case is not ok (failed, timeout, crashed, skipped) in one
    or both: no metric to compare, both statuses and each side's error (its first line, or None).

    ``verdict``: ``"not ok in B"`` (ok in A: what A measured is lost), ``"not ok in A"`` (ok in B),
    ``"not ok in both"``. ``regression``: not ok in B after ok in A, under a threshold or *strict*."""

    technique: str
    variant: str
    scenario: str  # as MetricDiff.scenario
    status_a: str
    status_b: str
    error_a: str | None
    error_b: str | None
    verdict: str
    regression: bool = False
    key_a: str | None = None
    key_b: str | None = None

    def label(self, run_a: Any, run_b: Any) -> str:
        """The verdict as printed, the runs named by id: ``timeout in run 4: case exceeded --timeout 1 s,
        a regression``; ``failed in run 3: ValueError: x; ok in run 4``; ``failed in both runs: ValueError: x``."""
        def said(status: str, error: str | None, run: Any) -> str:
            return f"{status} in run {run}" + (f": {error}" if error else "")

        if self.verdict == "not ok in B":
            return said(self.status_b, self.error_b, run_b) + (", a regression" if self.regression else "")
        if self.verdict == "not ok in A":
            return f"{said(self.status_a, self.error_a, run_a)}; ok in run {run_b}"
        if (self.status_a, self.error_a) == (self.status_b, self.error_b):
            return f"{self.status_a} in both runs" + (f": {self.error_a}" if self.error_a else "")
        return f"{said(self.status_a, self.error_a, run_a)}; {said(self.status_b, self.error_b, run_b)}"


@dataclass
class Comparison:
    """The result of :func:`compare_runs`."""

    run_a: dict[str, Any]
    run_b: dict[str, Any]
    rows: list[MetricDiff]
    matched: int
    only_a: list[str]
    only_b: list[str]
    threshold: float | None
    alpha: float
    mismatches: list[str]  # why the comparison would be refused (empty: none)
    profile_diffs: list[ProfileDiff]
    notes: list[str]
    thresholds: dict[str, float | None] = field(default_factory=dict)  # per metric, over `threshold`
    abs_tol: float = ABS_TOL
    strict: bool = False  # every scenario of either run must have a partner
    #: the paired scenarios whose case is not ok in either run (in ``matched``, no metric in ``rows``)
    status_rows: list[StatusDiff] = field(default_factory=list)
    gate: bool = False  # a threshold or *strict* given: the exit status judges B (and any run short of its plan)

    def unfinished(self) -> list[tuple[dict[str, Any], int]]:
        """Each run (A, then B) that is unfinished and :func:`short_of_plan`, with how many scenarios of
        the other run have no partner in it (``only_b`` for run A, ``only_a`` for run B; 0 when the
        other run lacks them too): ``[(run_b, 2)]``. Under a gate (:attr:`gate`) any one makes
        :attr:`exit_code` 1, unpaired scenarios or not."""
        return [(info, len(lost)) for info, lost in ((self.run_a, self.only_b), (self.run_b, self.only_a))
                if short_of_plan(info)]

    def regressions(self) -> list[MetricDiff]:
        return [r for r in self.rows if r.regression]

    def failures(self) -> list[StatusDiff]:
        """The scenarios ok in A and not ok in B that fail the gate (a threshold or *strict* given)."""
        return [r for r in self.status_rows if r.regression]

    @property
    def unpaired(self) -> int:
        """Scenarios of either run with no partner in the other (``only_a`` + ``only_b``)."""
        return len(self.only_a) + len(self.only_b)

    @property
    def exit_code(self) -> int:
        """1 when some metric is a regression (worse beyond its threshold; or, under *strict* or named
        by ``--metric`` with a threshold, missing from B or of another dimension in B), when (under a
        threshold or *strict*) a scenario ok in A is not ok in B (:meth:`failures`) or a run is
        unfinished and short of its plan (:meth:`unfinished`), or (*strict*) when a scenario of
        either run has no partner; else 0."""
        if self.regressions() or self.failures() or (self.gate and self.unfinished()):
            return 1
        return 1 if self.strict and self.unpaired else 0

    def counts(self) -> dict[str, int]:
        c: dict[str, int] = {}
        for r in self.rows:
            c[r.verdict] = c.get(r.verdict, 0) + 1
        for s in self.status_rows:
            c[s.verdict] = c.get(s.verdict, 0) + 1
        c["regressions"] = len(self.regressions())
        c["failures"] = len(self.failures())
        c["not_significant"] = sum(1 for r in self.rows if r.significant is False)
        return c

    def as_dict(self) -> dict[str, Any]:
        return {"run_a": _jsonable(self.run_a), "run_b": _jsonable(self.run_b), "threshold": self.threshold,
                "thresholds": dict(self.thresholds), "abs_tol": self.abs_tol,
                "alpha": self.alpha, "matched_cases": self.matched, "only_a": self.only_a, "only_b": self.only_b,
                "counts": self.counts(), "unpaired": self.unpaired, "strict": self.strict, "exit_code": self.exit_code,
                "unfinished": [{"run": info["id"], "status": info["status"], "stored": info.get("total"),
                                "planned": info.get("planned"), "unpaired": n} for info, n in self.unfinished()],
                "mismatches": self.mismatches,
                "profile_diffs": [{**asdict(d), "fields": {k: list(v) for k, v in d.fields.items()}}
                                  for d in self.profile_diffs],
                "notes": self.notes, "rows": [_jsonable(asdict(r)) for r in self.rows],
                "status_rows": [asdict(r) for r in self.status_rows]}


def _jsonable(v: Any) -> Any:
    if isinstance(v, float):
        return v if math.isfinite(v) else str(v)
    if isinstance(v, dict):
        return {k: _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    if hasattr(v, "item"):
        return _jsonable(v.item())
    return v


def _pct(x: float) -> str:
    """A relative change as a percentage: 1 decimal, or 2 significant digits below 0.1%."""
    return f"{x:+.1%}" if abs(x) >= 1e-3 else f"{x * 100:+.2g}%"


_CASE_COLS = ["key", "technique", "technique_version", "variant", "fidelity", "profile", "profile_hash", "workload",
              "workload_hash", "seed", "params", "overrides"]


@dataclass
class _Side:
    """One run's side of a comparison: its provenance, its ok cases' metrics and raw samples, and its
    cases that are not ok (*others*: :data:`_CASE_COLS`, ``status`` and ``error``)."""

    name: str  # "run 3", "run 4 (second store)"
    info: dict[str, Any]
    long: pd.DataFrame  # the long form of :func:`suite.results.load`
    samples: dict[tuple[str, str], list[float]]
    #: (case key, metric) -> (value, unit, direction)
    metrics: dict[tuple[str, str], tuple[Any, Any, Any]] = field(default_factory=dict)
    names: dict[str, list[str]] = field(default_factory=dict)  # case key -> its metric names
    frame: pd.DataFrame | None = None  # one row per case, :data:`_CASE_COLS`
    cases_by_key: dict[str, dict[str, Any]] = field(default_factory=dict)
    cases: dict[str, dict[str, Any]] = field(default_factory=dict)  # scenario key -> case (set by _pair)
    codes: dict[str, Any] = field(default_factory=dict)  # case key -> the code fingerprint it was computed with
    others: pd.DataFrame | None = None
    not_ok: dict[str, tuple[str, str | None]] = field(default_factory=dict)  # case key -> (status, error line)

    def __post_init__(self) -> None:
        lg = self.long
        for k, n, v, u, d in zip(lg["key"], lg["name"], lg["value"], lg["unit"], lg["direction"]):
            self.metrics[(k, n)] = (v, u, d)
            self.names.setdefault(k, []).append(n)
        ok = lg.drop_duplicates("key")[_CASE_COLS] if len(lg) else lg.reindex(columns=_CASE_COLS)
        self.frame = ok
        if self.others is not None and len(self.others):
            import pandas as pd

            self.not_ok = {str(k): (str(st), _error_line(e)) for k, st, e in
                           zip(self.others["key"], self.others["status"], self.others["error"])}
            self.frame = pd.concat([ok, self.others[_CASE_COLS]], ignore_index=True) if len(ok) else \
                self.others[_CASE_COLS].reset_index(drop=True)
        self.cases_by_key = {str(r["key"]): {str(c): v for c, v in r.items()} for r in self.frame.to_dict("records")}

    def status(self, key: str) -> tuple[str, str | None]:
        """Case *key*'s (status, first line of its error): ``("ok", None)`` for an ok case."""
        return self.not_ok.get(key, (OK, None))

    def held(self) -> str:
        """What the run holds: ``"4 ok case(s)"``, ``"0 ok case(s), 4 not ok (2 failed, 2 timeout)"``."""
        n_ok = len(self.cases_by_key) - len(self.not_ok)
        by_status = tally(st for st, _e in self.not_ok.values())
        return f"{n_ok} ok case(s)" + (f", {len(self.not_ok)} not ok ({by_status})" if self.not_ok else "")


def _error_line(error: Any) -> str | None:
    """A stored error's first non-empty line (None when there is none)."""
    if is_missing(error):
        return None
    lines = [ln.strip() for ln in str(error).splitlines() if ln.strip()]
    return lines[0] if lines else None


def tally(statuses: Iterable[str]) -> str:
    """``["failed", "timeout", "failed"]`` -> ``"2 failed, 1 timeout"``: how many of each, in the order
    each first appears (``""`` for none)."""
    counts: dict[str, int] = {}
    for st in statuses:
        counts[st] = counts.get(st, 0) + 1
    return ", ".join(f"{n} {st}" for st, n in counts.items())


def _side(store: Any, run: Any, metrics: Any, suffix: str) -> _Side:
    """Run *run* of *store*: its ok cases and those not ok (only *metrics*, when given: its cases are
    every case all the same, so a scenario whose metric vanished still pairs and shows the metric missing)."""
    from suite.results.load import load_run, reading, samples

    with reading(store) as st:
        _rid, info, long = load_run(st, run, wide=False,
                                    none_error=CompareError("compare: give two run ids (or 'latest'), not None"))
        keys = list(long.loc[long["n_samples"] > 0, "key"].unique())
        samp = samples(st, keys) if keys else {}
        codes = {k: code for k, (_t, code) in st.codes(info["id"]).items()}
        others = st.cases(info["id"], expand_params=False, status=list(NOT_OK))
    side = _Side(f"run {info['id']}{suffix}", info, long, samp, codes=codes, others=others)
    if metrics is not None:
        keep = set(_named(metrics))
        side.metrics = {k: v for k, v in side.metrics.items() if k[1] in keep}
        side.names = {k: [n for n in ns if n in keep] for k, ns in side.names.items()}
    return side


def _named(metrics: Any) -> list[str]:
    """``--metric`` values as a list (None: none named)."""
    return [] if metrics is None else [metrics] if isinstance(metrics, str) else [str(m) for m in metrics]


def _pair(a: _Side, b: _Side, named: bool = False) -> list[str]:
    """Key each side's cases (ok or not) by scenario; the scenarios both have, in a stable order.
    *named* (``--metric`` given): only the scenarios where either side has one of those metrics.

    Raises
    ------
    CompareError
        No scenario in common.
    """
    swept = _swept(a.frame, b.frame)
    own = _own_values(a.frame, b.frame)
    for side in (a, b):
        rows = [{**r, "set": _set_values(r, own)} for r in side.cases_by_key.values()]
        side.cases = {_scenario_key(r, swept[r["technique"]]): r for r in rows}
    if named:
        keep = {k for s in (a, b) for k, c in s.cases.items() if s.names.get(c["key"])}
        for side in (a, b):
            side.cases = {k: c for k, c in side.cases.items() if k in keep}
    common = sorted((k for k in a.cases if k in b.cases), key=lambda k: _order(json.loads(k)))
    if not common:
        raise CompareError(f"compare: {a.name} ({a.held()}) and {b.name} ({b.held()}) have no "
                           "scenario in common (technique, variant, fidelity, workload, params, seed and swept "
                           f"profile fields){_apart(a, b)}")
    return common


def _apart(a: _Side, b: _Side, most: int = 3) -> str:
    """``": params.efficiency: A 0.5, B 0.8; ..."``: the identity fields whose values the two runs'
    cases share none of (what keeps every scenario apart), else ``""``."""
    def values(side: _Side) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for k, case in side.cases.items():
            ident = json.loads(k)
            flat = {f: v for f, v in ident.items() if f not in ("params", "set")}
            flat.update({f"params.{n}": v for n, v in (ident.get("params") or {}).items()})
            flat.update({f"--set {n}": _written(case["set"], n, v) for n, v in (ident.get("set") or {}).items()})
            for f, v in flat.items():
                out.setdefault(f, set()).add(v if isinstance(v, str) else json.dumps(v, sort_keys=True, default=str))
        return out

    va, vb = values(a), values(b)
    apart = [f for f in sorted(set(va) | set(vb)) if not va.get(f, set()) & vb.get(f, set())]

    def shown(vs: set[str]) -> str:
        return ", ".join(sorted(vs, key=sort_key)[:most]) + (" ..." if len(vs) > most else "") if vs else "(none)"

    return ("; apart on " + "; ".join(f"{f}: {a.name} {shown(va.get(f, set()))}, {b.name} {shown(vb.get(f, set()))}"
                                      for f in apart[:most])) if apart else ""


def _mwu(xa: list[float], xb: list[float]) -> float | None:
    if len(xa) < 2 or len(xb) < 2:
        return None
    from scipy.stats import mannwhitneyu

    try:
        p = float(mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
    except ValueError:
        return None
    return 1.0 if math.isnan(p) else p


def _verdict(a: float | None, b: float | None, direction: str,
             abs_tol: float = ABS_TOL) -> tuple[float | None, float | None, str]:
    if a is None or b is None or (isinstance(a, float) and math.isnan(a)) or (isinstance(b, float) and math.isnan(b)):
        return None, None, "missing"
    if a == b or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=abs_tol):
        return (b / a if a else 1.0), (b - a) / abs(a) if a else 0.0, "same"
    if a == 0:
        ratio = math.copysign(math.inf, b)
        change = math.copysign(math.inf, b)
    else:
        ratio = b / a
        change = (b - a) / abs(a)
    if direction == "lower":
        verdict = "better" if b < a else "worse"
    elif direction == "higher":
        verdict = "better" if b > a else "worse"
    else:
        verdict = "changed"  # no direction: neither better nor worse
    return ratio, change, verdict


def _plugin_versions(techniques: set[str], info_a: Mapping[str, Any], info_b: Mapping[str, Any], reg: Any) -> list[str]:
    out: list[str] = []
    if reg is None:  # no context given: nothing to map techniques to distributions
        return out
    seen = set()
    for t in sorted(techniques):
        try:
            dist = reg.plugin_of(t).distribution
        except Exception:  # noqa: BLE001 - technique not installed now
            continue
        va, vb = (info_a.get("plugins") or {}).get(dist), (info_b.get("plugins") or {}).get(dist)
        if dist not in seen and va and vb and va != vb:
            seen.add(dist)
            out.append(f"plugin distribution {dist} (technique {t}): version {va} in run {info_a['id']}, "
                       f"{vb} in run {info_b['id']}")
    return out


def compare_runs(store: Any, run_a: Any, run_b: Any, *, store_b: Any = None, threshold: Any = None,
                 allow_profile_change: bool = False, alpha: float = 0.05, metrics: Any = None,
                 profile_dirs: tuple[Any, ...] = (), thresholds: Any = None, abs_tol: float = ABS_TOL,
                 context: Any = None, strict: bool = False) -> Comparison:
    """Compare run B against run A (A is the baseline) metric by metric: a :class:`Comparison`.

    Parameters
    ----------
    store, store_b : Store, str, Path or None
        The store holding run A (and run B), and another one holding run B (e.g. a CI baseline
        store against a fresh one).
    run_a, run_b : int or str
        Run ids, names or ``"latest"``.
    threshold : str or float, optional
        ``"5%"`` or ``0.05``: a metric worse than A by more than this fraction of ``|A|`` is a
        regression (:attr:`Comparison.exit_code` becomes 1); so is, under any threshold, a scenario
        ok in A whose case is not ok in B (:meth:`Comparison.failures`), and a run running,
        interrupted or stopped on an error short of its plan (:meth:`Comparison.unfinished`),
        scenarios of the other left unpaired or not. None: report only.
    thresholds : mapping of str -> str or float, optional
        Per-metric thresholds (``{"iteration_time": "2%"}``), overriding *threshold* for those
        metrics; a metric in neither is reported only. Each must be a metric of an ok case of
        either run (CompareError otherwise).
    abs_tol : float
        Values closer than this (or within a relative :data:`REL_TOL`) are ``same``.
    allow_profile_change : bool
        Compare even when profiles or plugin/technique versions differ (the differences listed).
    alpha : float
        Significance level of the Mann-Whitney U test on raw samples.
    metrics : str or list of str, optional
        Only these metrics (a named one that vanished from B is ``missing``).
    profile_dirs : tuple of path
        Extra profile folders (to recompute profile differences).
    context : suite.context.Context
        The command's context: the plugins (to name their distributions) and profiles (required
        from 0.3.0; without one, a DeprecationWarning, and neither is looked at).
    strict : bool
        :attr:`Comparison.exit_code` is 1 when a scenario of either run has no partner or is ok in
        A and not ok in B, or a run is unfinished short of its plan, and a metric of A missing from B or of another dimension in B is a
        regression (so is one *metrics* names that a threshold applies to, without *strict*).

    Returns
    -------
    Comparison
        ``rows``: one :class:`MetricDiff` per metric of each scenario ok in both runs;
        ``status_rows``: one :class:`StatusDiff` per scenario both runs hold whose case is not ok
        in either (failed, timeout, crashed, skipped); ``matched`` counts both kinds.

    Raises
    ------
    CompareRefused
        Profiles or versions differ and *allow_profile_change* is False (one line naming both).
    CompareError
        No scenario in common (its cases, ok or not, counted by status), a bad threshold, or a
        *metrics* or *thresholds* name no ok case of either run has.
    StoreError
        Unknown store or run.
    """
    rules = _Rules.parse(threshold, thresholds, alpha, abs_tol, context, strict, metrics)
    a = _side(store, run_a, metrics, "")
    b = _side(store if store_b is None else store_b, run_b, metrics, " (second store)" if store_b is not None else "")
    _known_metrics(metrics, a, b, thresholds)
    common = _pair(a, b, bool(_named(metrics)))
    checks = _checks(a, b, common, context.registry if context is not None else None)
    diffs = merge_diffs(_profile_diffs(checks.profile_pairs, profile_dirs, context))
    checks.refuse_unless(allow_profile_change, diffs)
    varying = _varying([json.loads(k) for k in common])
    both_ok = {k for k in common if a.cases[k]["key"] not in a.not_ok and b.cases[k]["key"] not in b.not_ok}
    rows = [row for k in common if k in both_ok for row in _scenario_rows(a, b, k, varying, rules)]
    statuses = [_status_diff(a, b, k, varying, rules) for k in common if k not in both_ok]
    every = _varying([json.loads(k) for side in (a, b) for k in side.cases])  # an unpaired label shows all it needs
    return Comparison(run_a=a.info, run_b=b.info, rows=rows, matched=len(common), only_a=_unpaired(a, b, every),
                      only_b=_unpaired(b, a, every), threshold=rules.threshold, alpha=alpha,
                      mismatches=checks.mismatches, profile_diffs=diffs, notes=checks.notes + _unit_notes(rows, a, b),
                      thresholds=rules.per_metric, abs_tol=abs_tol, strict=bool(strict), status_rows=statuses,
                      gate=rules.gates_cases())


@dataclass
class _Checks:
    """What differs between the paired cases beyond their metrics."""

    mismatches: list[str]  # why the comparison is refused unless allowed
    notes: list[str]
    #: (profile, overrides JSON, hash) of A + the same of B -> pairs computed on them
    profile_pairs: dict[tuple[str, str, str, str, str, str], int]

    def refuse_unless(self, allowed: bool, diffs: list[ProfileDiff]) -> None:
        """CompareRefused naming the first mismatch (and carrying the profiles' *diffs*), unless there is
        none or they are *allowed*."""
        if self.mismatches and not allowed:
            more = f" (+{len(self.mismatches) - 1} more)" if len(self.mismatches) > 1 else ""
            raise CompareRefused(f"compare refused: {self.mismatches[0]}{more}"
                                 "; pass --allow-profile-change to compare anyway and see the differences", diffs)


def _checks(a: _Side, b: _Side, common: list[str], reg: Any) -> _Checks:
    """The profiles, technique versions, plugin versions, workloads and (at one version) the code
    fingerprints that differ between pairs."""
    prof_pairs: dict[tuple[str, str, str, str, str, str], int] = {}
    versions: set[tuple[str, str, str]] = set()
    workloads: set[tuple[str, str, str]] = set()
    codes: set[tuple[str, str, str]] = set()  # the same version computed by other code (an unbumped edit)
    for k in common:
        ca, cb = a.cases[k], b.cases[k]
        if _differ(ca["profile_hash"], cb["profile_hash"]):
            pk = (ca["profile"], json.dumps(ca["overrides"] or {}, sort_keys=True), ca["profile_hash"],
                  cb["profile"], json.dumps(cb["overrides"] or {}, sort_keys=True), cb["profile_hash"])
            prof_pairs[pk] = prof_pairs.get(pk, 0) + 1
        if _differ(ca["technique_version"], cb["technique_version"]):
            versions.add((ca["technique"], ca["technique_version"], cb["technique_version"]))
        if _differ(ca["workload_hash"], cb["workload_hash"]):
            workloads.add((ca["workload"], ca["workload_hash"], cb["workload_hash"]))
        code_a, code_b = a.codes.get(ca["key"]), b.codes.get(cb["key"])
        if code_a and code_b and code_a != code_b and not _differ(ca["technique_version"], cb["technique_version"]):
            codes.add((ca["technique"], code_a, code_b))
    mismatches: list[str] = []
    if prof_pairs:
        names = sorted({f"{p[0]} [{p[2]}] vs {p[3]} [{p[5]}]" for p in prof_pairs})
        mismatches.append(f"{sum(prof_pairs.values())} case pair(s) were computed on different hardware profiles: "
                          + "; ".join(names[:3]) + (" ..." if len(names) > 3 else ""))
    for t, va, vb in sorted(versions):
        mismatches.append(f"technique {t}: version {va} in {a.name}, {vb} in {b.name}")
    mismatches += _plugin_versions({a.cases[k]["technique"] for k in common}, a.info, b.info, reg)
    notes = [f"workload {w}: content hash {ha} in {a.name}, {hb} in {b.name} (its definition changed)"
             for w, ha, hb in sorted(workloads, key=str)]
    notes += [f"technique {t}: computed by other code in {b.name} than in {a.name} (code {ca_} vs {cb_}, the same "
              "version): its plugin changed between the runs, and the differences may be its doing"
              for t, ca_, cb_ in sorted(codes)]
    return _Checks(mismatches, notes, prof_pairs)


def _differ(a: Any, b: Any) -> bool:
    """Two cases' identity values differ; missing on both sides (None, or the NaN a frame holds for a
    case without a workload or profile among cases with one) is no difference."""
    return a != b and not (is_missing(a) and is_missing(b))


def _profile_diffs(prof_pairs: Mapping[tuple[str, str, str, str, str, str], int], profile_dirs: tuple[Any, ...],
                   context: Any) -> list[ProfileDiff]:
    """One :class:`ProfileDiff` per (profile A, profile B) of the pairs computed on different profiles."""
    diffs = []
    for (pa, oa, hsa, pb, ob, hsb), n in sorted(prof_pairs.items()):
        d = profile_diff(pa, json.loads(oa), pb, json.loads(ob), hash_a=hsa, hash_b=hsb, profile_dirs=profile_dirs,
                         context=context)
        d.pairs = n
        diffs.append(d)
    return diffs


@dataclass
class _Rules:
    """When a difference is a regression: thresholds, the test's alpha, the tolerance of "same"."""

    threshold: float | None
    per_metric: dict[str, float | None]
    alpha: float
    abs_tol: float
    strict: bool = False  # a metric of A that B lacks, or whose unit B changed, is a regression
    named: frozenset[str] = frozenset()  # the metrics --metric named

    def gates_cases(self) -> bool:
        """A scenario ok in A and not ok in B, or a run unfinished and short of its plan, fails the
        gate: under any threshold or --strict."""
        return self.strict or self.threshold is not None or any(v is not None for v in self.per_metric.values())

    def gated(self, metric: str) -> bool:
        """A metric of A missing from B (or of another dimension in B) fails the gate: under --strict,
        or when --metric names it and a threshold applies to it."""
        return self.strict or (metric in self.named and self.per_metric.get(metric, self.threshold) is not None)

    @staticmethod
    def parse(threshold: Any, thresholds: Any, alpha: float, abs_tol: float, context: Any, strict: bool = False,
              metrics: Any = None) -> _Rules:
        """The rules from :func:`compare_runs`'s arguments (CompareError on a bad threshold or
        tolerance; a DeprecationWarning without a context)."""
        if context is None:  # the results layer never builds a context: the caller passes its own
            import warnings

            warnings.warn("compare_runs() without a context is deprecated and will be an error in dlsys-suite "
                          "0.4.0: pass context=Context.build() (profile differences and plugin versions need it)",
                          DeprecationWarning, stacklevel=3)
        thr = parse_threshold(threshold)
        per_metric = {str(k): parse_threshold(v) for k, v in (thresholds or {}).items()}
        if not math.isfinite(abs_tol) or abs_tol < 0:
            raise CompareError(f"--abs-tol: expected a non-negative number (in each metric's unit), got {abs_tol!r}")
        return _Rules(thr, per_metric, alpha, abs_tol, bool(strict), frozenset(_named(metrics)))


def _scenario_rows(a: _Side, b: _Side, k: str, varying: Mapping[str, set[str]], rules: _Rules) -> list[MetricDiff]:
    """One :class:`MetricDiff` per metric of either side of the scenario *k*."""
    ka, kb = a.cases[k]["key"], b.cases[k]["key"]
    names, label = _label(a, b, k, varying)
    return [_metric_diff(a, b, ka, kb, n, label, rules) for n in names]


def _label(a: _Side, b: _Side, k: str, varying: Mapping[str, set[str]]) -> tuple[list[str], str]:
    """The metric names either side's case of scenario *k* holds, and the scenario's label."""
    names = sorted(set(a.names.get(a.cases[k]["key"], ())) | set(b.names.get(b.cases[k]["key"], ())))
    return names, _describe(json.loads(k), varying.get(a.cases[k]["technique"], set()), a.cases[k]["set"], names)


def _status_diff(a: _Side, b: _Side, k: str, varying: Mapping[str, set[str]], rules: _Rules) -> StatusDiff:
    """Scenario *k*, whose case is not ok in A or in B: both statuses and errors; a regression when
    it was ok in A and a threshold or --strict is given (what A measured, B lost)."""
    ca, cb = a.cases[k], b.cases[k]
    (sa, ea), (sb, eb) = a.status(ca["key"]), b.status(cb["key"])
    verdict = "not ok in B" if sa == OK else "not ok in A" if sb == OK else "not ok in both"
    return StatusDiff(ca["technique"], ca["variant"], _label(a, b, k, varying)[1], sa, sb, ea, eb, verdict,
                      verdict == "not ok in B" and rules.gates_cases(), ca["key"], cb["key"])


def _metric_diff(a: _Side, b: _Side, ka: str, kb: str, n: str, label: str, rules: _Rules) -> MetricDiff:
    """Metric *n* of case *ka* (run A) against case *kb* (run B): verdict, test, regression."""
    va, ua, da = a.metrics.get((ka, n), (None, None, None))
    vb, ub, db = b.metrics.get((kb, n), (None, None, None))
    direction = da or db or "none"
    unit = ua or ub or "1"
    xa, xb = a.samples.get((ka, n)), b.samples.get((kb, n))
    vb, xb, unit_b, convertible = _in_unit_of_a(_num(vb), xb, ua, ub)
    ratio, change, verdict = _verdict(_num(va), vb, direction, rules.abs_tol)
    if not convertible and verdict != "missing":
        ratio, change, verdict = None, None, "unit changed"
    limit = rules.per_metric.get(n, rules.threshold)
    p = _mwu(xa, xb) if xa and xb and change is not None else None
    sig = None if p is None else bool(p < rules.alpha)
    regression = (limit is not None and verdict == "worse" and sig is not False and change is not None
                  and (change if direction == "lower" else -change) > limit)
    lost = verdict == "unit changed" or (verdict == "missing" and _num(va) is not None and vb is None)
    case = a.cases_by_key[ka]
    return MetricDiff(case["technique"], case["variant"], label, n, unit, direction, _num(va), vb, ratio,
                      change, verdict, p, sig, bool(regression or (lost and rules.gated(n))), ka, kb, unit_b)


def _in_unit_of_a(vb: float | None, xb: list[float] | None, ua: Any, ub: Any
                  ) -> tuple[float | None, list[float] | None, str | None, bool]:
    """B's value and samples in A's unit: ``(value, samples, B's unit when it differs, convertible)``.
    Units of one dimension are converted (:func:`suite.hardware.units.convert`: 0.1547 s -> 154.7 ms);
    units of different dimensions, or one the registry does not know, are not (convertible False)."""
    if ua is None or ub is None or ua == ub:  # "" is a unit (a pure number), converted like any other
        return vb, xb, None, True
    from suite.hardware.units import convert

    try:
        return (None if vb is None else convert(vb, ub, ua)), (
            None if xb is None else [convert(x, ub, ua) for x in xb]), str(ub), True
    except ValueError:
        return vb, xb, str(ub), False


def _known_metrics(metrics: Any, a: _Side, b: _Side, thresholds: Mapping[str, Any] | None = None) -> None:
    """CompareError naming a ``--metric``, or the metric of a ``--threshold METRIC=PCT``, that no ok
    case of either run has (a typo never passes a gate: ``iteratoin_time=1%`` gated nothing, exit 0)."""
    held = {n for side in (a, b) for ns in side.names.values() for n in ns}
    unknown = [m for m in _named(metrics) if m not in held]
    if unknown:
        raise CompareError(f"compare: --metric {unknown[0]}: no ok case of {a.name} or {b.name} has this metric")
    every = {str(n) for side in (a, b) for n in side.long["name"]}  # --metric narrows what is shown, not this
    for m, pct in (thresholds or {}).items():
        if str(m) not in every:
            raise CompareError(f"compare: --threshold {m}={pct}: expected a metric of an ok case of {a.name} or "
                               f"{b.name} ({', '.join(sorted(every)) or 'none'}), got {str(m)!r}"
                               + did_you_mean(str(m), every))


def _unit_notes(rows: list[MetricDiff], a: _Side, b: _Side) -> list[str]:
    """One note per (technique, metric, unit A, unit B) whose unit differs between the runs."""
    seen = {(r.technique, r.metric, r.unit, r.unit_b, r.verdict == "unit changed") for r in rows if r.unit_b}
    return [f"{m} ({t}): unit {ua} in {a.name}, {ub} in {b.name}: "
            + ("different dimensions, not compared (verdict 'unit changed')" if bad else f"B's values converted to {ua}")
            for t, m, ua, ub, bad in sorted(seen)]
