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

References
----------
.. [1] H. B. Mann and D. R. Whitney, "On a test of whether one of two random variables is
   stochastically larger than the other", Ann. Math. Statist. 18(1), 1947.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from suite.errors import SuiteError

__all__ = ["CompareError", "CompareRefused", "MetricDiff", "ProfileDiff", "Comparison", "compare_runs",
           "parse_threshold", "profile_diff"]

_IDENTITY = ("technique", "variant", "fidelity", "workload", "seed")


class CompareError(SuiteError):
    """Two runs cannot be compared (nothing in common, bad threshold)."""


class CompareRefused(CompareError):
    """The runs differ in hardware profile or plugin/technique version (not allowed)."""


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
    verdict: str  # better, worse, same, changed (direction none), missing (only one side)
    p_value: float | None = None  # Mann-Whitney U, when both sides have samples
    significant: bool | None = None
    regression: bool = False  # worse beyond the threshold (and not "not significant")
    key_a: str | None = None
    key_b: str | None = None

    def label(self, threshold: float | None) -> str:
        """The verdict as printed: ``worse +12.3%, beyond 5.0%``, ``better -4.1%, not significant (p=0.41)``."""
        if self.verdict == "missing" or self.change is None:
            return self.verdict
        if self.verdict == "same":
            return "same"
        text = f"{self.verdict} {_pct(self.change)}" if math.isfinite(self.change) else self.verdict
        if self.significant is False:
            text += f", not significant (p={self.p_value:.2g})"
        elif self.significant:
            text += f" (p={self.p_value:.2g})"
        if self.regression and threshold is not None:
            text += f", beyond {threshold:.1%}"
        return text


@dataclass
class ProfileDiff:
    """The fields that differ between the profiles of side A and side B of some pairs."""

    profile_a: str
    profile_b: str
    hash_a: str | None
    hash_b: str | None
    fields: dict[str, tuple[Any, Any]]  # dotted path -> (a, b), SI units
    notes: list[str] = field(default_factory=list)
    pairs: int = 0  # how many case pairs differ this way

    def lines(self) -> list[str]:
        out = [f"profile {self.profile_a} [{self.hash_a}] vs {self.profile_b} [{self.hash_b}] "
               f"({self.pairs} case pair(s)):"]
        for path, (a, b) in self.fields.items():
            out.append(f"  {path}: {_fmt(a)} -> {_fmt(b)}")
        if not self.fields:
            out.append("  (no field differs in the current profile files)")
        out += [f"  note: {n}" for n in self.notes]
        return out


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

    def regressions(self) -> list[MetricDiff]:
        return [r for r in self.rows if r.regression]

    @property
    def unpaired(self) -> int:
        """Scenarios of either run with no partner in the other (``only_a`` + ``only_b``)."""
        return len(self.only_a) + len(self.only_b)

    @property
    def exit_code(self) -> int:
        """1 when some metric is worse beyond its threshold, or (*strict*) when a scenario of either
        run has no partner; else 0."""
        if self.regressions():
            return 1
        return 1 if self.strict and self.unpaired else 0

    def counts(self) -> dict[str, int]:
        c: dict[str, int] = {}
        for r in self.rows:
            c[r.verdict] = c.get(r.verdict, 0) + 1
        c["regressions"] = len(self.regressions())
        c["not_significant"] = sum(1 for r in self.rows if r.significant is False)
        return c

    def as_dict(self) -> dict[str, Any]:
        return {"run_a": _jsonable(self.run_a), "run_b": _jsonable(self.run_b), "threshold": self.threshold,
                "thresholds": dict(self.thresholds), "abs_tol": self.abs_tol,
                "alpha": self.alpha, "matched_cases": self.matched, "only_a": self.only_a, "only_b": self.only_b,
                "counts": self.counts(), "unpaired": self.unpaired, "strict": self.strict, "exit_code": self.exit_code, "mismatches": self.mismatches,
                "profile_diffs": [{**asdict(d), "fields": {k: list(v) for k, v in d.fields.items()}}
                                  for d in self.profile_diffs],
                "notes": self.notes, "rows": [_jsonable(asdict(r)) for r in self.rows]}


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


def _sortable(v: Any) -> tuple:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return (0, float(v), "")
    from suite.results.load import override_value

    num, unit = override_value(v) if isinstance(v, str) else (None, "")
    return (1, num, unit) if num is not None else (2, 0.0, str(v))


def _order(ident: Mapping[str, Any]) -> tuple:
    return (ident["technique"], str(ident["variant"]), str(ident["workload"]), str(ident["fidelity"]),
            [(k, _sortable(v)) for k, v in sorted(ident["params"].items())],
            str(ident.get("profile", "")), [(k, _sortable(v)) for k, v in sorted(ident["set"].items())],
            ident["seed"] if ident["seed"] is not None else -1)


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return "(absent)" if v is None else str(v)


def _flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(d, Mapping):
        for k, v in d.items():
            out.update(_flatten(v, f"{prefix}{k}."))
    elif isinstance(d, (list, tuple)):
        for i, v in enumerate(d):
            out.update(_flatten(v, f"{prefix}{i}."))
    else:
        out[prefix[:-1]] = d
    return out


def profile_diff(name_a: str, overrides_a: Mapping[str, Any], name_b: str, overrides_b: Mapping[str, Any],
                 *, hash_a: str | None = None, hash_b: str | None = None, profile_dirs: tuple = (),
                 context: Any = None) -> ProfileDiff:
    """Which fields differ between two resolved profiles (name + overrides), in SI units.

    Parameters
    ----------
    name_a, name_b : str
        Profile names (or paths) as stored with the cases.
    overrides_a, overrides_b : mapping
        The stored overrides (field path -> value as given).
    hash_a, hash_b : str, optional
        The stored content hashes; when the current profile files give another hash, a note
        says the profile changed since the run.
    profile_dirs : tuple of path
        Extra profile folders.
    context : suite.context.Context
        Where the profiles are resolved now; without one, no profile is resolved (a note says
        so).

    Returns
    -------
    ProfileDiff
        ``fields``: dotted path -> (value in A, value in B), for every figure of
        :meth:`Profile.normalized` that differs (the ``overrides`` record itself is left out:
        its effect is in the figures).
    """
    lookup = context.with_profile_dirs(tuple(profile_dirs)).profile if context is not None else None
    notes: list[str] = []
    flat = []
    for side, name, ov, stored in (("A", name_a, overrides_a, hash_a), ("B", name_b, overrides_b, hash_b)):
        try:
            if lookup is None:
                raise SuiteError("no context given to resolve it (pass context=)")
            prof = lookup(name)
            if ov:
                prof = prof.with_overrides(dict(ov))
        except SuiteError as exc:
            notes.append(f"side {side}: profile {name!r} cannot be resolved now: {exc}")
            flat.append(None)
            continue
        now = prof.content_hash()
        if stored and now != stored:
            notes.append(f"side {side}: profile {name!r} now hashes to {now}, the run stored {stored}: the profile "
                         f"file changed since; the differences below are against the current file")
        d = prof.normalized()
        d.pop("overrides", None)
        flat.append(_flatten(d))
    fields: dict[str, tuple[Any, Any]] = {}
    if flat[0] is not None and flat[1] is not None:
        for k in sorted(set(flat[0]) | set(flat[1])):
            va, vb = flat[0].get(k), flat[1].get(k)
            if va != vb:
                fields[k] = (va, vb)
    return ProfileDiff(name_a, name_b, hash_a, hash_b, fields, notes)


def _side(store: Any, run: Any):
    from suite.results.load import load, open_store, samples

    st, opened = open_store(store)
    try:
        rid = st.resolve_run(run)
        if rid is None:
            raise CompareError("compare: give two run ids (or 'latest'), not None")
        info = st.run_info(rid)
        long = load(st, run=rid, wide=False)
        keys = list(long.loc[long["n_samples"] > 0, "key"].unique())
        samp = samples(st, keys) if keys else {}
    finally:
        if opened:
            st.close()
    return info, long, samp


def _swept(cases_a, cases_b) -> dict[str, tuple[bool, list[str]]]:
    """technique -> (profile name swept?, override paths swept), within either side."""
    out: dict[str, tuple[bool, list[str]]] = {}
    for tech in set(cases_a["technique"]) | set(cases_b["technique"]):
        prof_swept = False
        paths: set[str] = set()
        for cases in (cases_a, cases_b):
            c = cases[cases["technique"] == tech]
            if c.empty:
                continue
            prof_swept |= c["profile"].nunique(dropna=False) > 1
            all_paths = {p for ov in c["overrides"] for p in (ov or {})}
            for p in all_paths:
                if len({(ov or {}).get(p) for ov in c["overrides"]}) > 1:
                    paths.add(p)
        out[tech] = (prof_swept, sorted(paths))
    return out


def _scenario_key(row: Mapping[str, Any], swept: tuple[bool, list[str]]) -> str:
    prof_swept, paths = swept
    ov = row["overrides"] or {}
    ident = {k: row[k] for k in _IDENTITY}
    ident["seed"] = int(ident["seed"]) if ident["seed"] is not None else None
    ident["params"] = row["params"]
    if prof_swept:
        ident["profile"] = row["profile"]
    ident["set"] = {p: ov.get(p) for p in paths}
    return json.dumps(ident, sort_keys=True, default=str)


def _describe(ident: Mapping[str, Any], varying: set[str]) -> str:
    bits = []
    for k, v in sorted(ident["params"].items()):
        if k in varying:
            bits.append(f"{k}={v}")
    if "profile" in ident:
        bits.append(f"profile={ident['profile']}")
    short = [p.rsplit(".", 1)[-1] for p in ident["set"]]
    for (p, v), sp in zip(ident["set"].items(), short):
        bits.append(f"{sp if short.count(sp) == 1 else p}={v}")
    for k in ("workload", "fidelity", "seed"):
        if k in varying:
            bits.append(f"{k}={ident[k]}")
    return " ".join(bits) or "-"


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


def _plugin_versions(techniques: set[str], info_a: Mapping, info_b: Mapping, reg: Any) -> list[str]:
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
                 profile_dirs: tuple = (), thresholds: Any = None, abs_tol: float = ABS_TOL,
                 context: Any = None, strict: bool = False) -> Comparison:
    """Compare run B against run A (A is the baseline).

    Parameters
    ----------
    store : Store, str, Path or None
        The store holding run A (and run B unless *store_b* is given).
    run_a, run_b : int or ``"latest"``
        Run ids.
    store_b : Store, str, Path, optional
        Another store holding run B (e.g. a CI baseline store against a fresh one).
    threshold : str or float, optional
        ``"5%"`` or ``0.05``: a metric worse than A by more than this fraction of ``|A|`` is a
        regression (:attr:`Comparison.exit_code` becomes 1). None: report only.
    thresholds : mapping of str -> str or float, optional
        Per-metric thresholds (``{"iteration_time": "2%"}``), overriding *threshold* for those
        metrics; a metric in neither is reported only.
    abs_tol : float
        Values closer than this, in the metric's stored unit (or within a relative
        :data:`REL_TOL`), are ``same``: 0 against 5.55e-17 is no change. Default :data:`ABS_TOL`.
    allow_profile_change : bool
        Compare even when profiles or plugin/technique versions differ; the profile
        differences are listed.
    alpha : float
        Significance level of the Mann-Whitney U test on raw samples.
    metrics : str or list of str, optional
        Only these metrics.
    profile_dirs : tuple of path
        Extra profile folders (to recompute profile differences).
    context : suite.context.Context
        The command's context: the plugins (to name their distributions) and profiles (required
        from 0.3.0; without one, a DeprecationWarning, and neither is looked at).
    strict : bool
        :attr:`Comparison.exit_code` is 1 when a scenario of either run has no partner (each run
        is paired by the scenarios *it* asked for: its own overrides, not those of the run that
        first computed a shared case).

    Returns
    -------
    Comparison

    Raises
    ------
    CompareRefused
        Profiles or versions differ and *allow_profile_change* is False (one line naming what
        differs and the flag that allows it).
    CompareError
        No scenario in common, or a bad threshold.
    StoreError
        Unknown store or run.
    """
    if context is None:  # the results layer never builds a context: the caller passes its own
        import warnings

        warnings.warn("compare_runs() without a context is deprecated and will be an error in dlsys-suite 0.3.0: "
                      "pass context=Context.build() (profile differences and plugin versions need it)",
                      DeprecationWarning, stacklevel=2)
    thr = parse_threshold(threshold)
    per_metric = {str(k): parse_threshold(v) for k, v in (thresholds or {}).items()}
    if not math.isfinite(abs_tol) or abs_tol < 0:
        raise CompareError(f"--abs-tol: expected a non-negative number (in each metric's unit), got {abs_tol!r}")
    info_a, la, sa = _side(store, run_a)
    info_b, lb, sb = _side(store if store_b is None else store_b, run_b)
    if metrics is not None:
        names = [metrics] if isinstance(metrics, str) else list(metrics)
        la, lb = la[la["name"].isin(names)], lb[lb["name"].isin(names)]
    cols = ["key", "technique", "technique_version", "variant", "fidelity", "profile", "profile_hash", "workload",
            "workload_hash", "seed", "params", "overrides"]
    ca = la.drop_duplicates("key")[cols] if len(la) else la.reindex(columns=cols)
    cb = lb.drop_duplicates("key")[cols] if len(lb) else lb.reindex(columns=cols)
    swept = _swept(ca, cb)
    ida = {_scenario_key(r, swept[r["technique"]]): r for r in ca.to_dict("records")}
    idb = {_scenario_key(r, swept[r["technique"]]): r for r in cb.to_dict("records")}
    common = sorted((k for k in ida if k in idb), key=lambda k: _order(json.loads(k)))
    la_name = f"run {info_a['id']}"
    lb_name = f"run {info_b['id']}" + (" (second store)" if store_b is not None else "")
    if not common:
        raise CompareError(f"compare: {la_name} ({len(ida)} ok case(s)) and {lb_name} ({len(idb)}) have no scenario "
                           f"in common (technique, variant, fidelity, workload, params, seed and swept profile fields)")

    # what varies among the matched scenarios (for short scenario labels)
    idents = [json.loads(k) for k in common]
    varying: dict[str, set[str]] = {}
    for t in {i["technique"] for i in idents}:
        its = [i for i in idents if i["technique"] == t]
        v = {p for p in {p for i in its for p in i["params"]}
             if len({json.dumps(i["params"].get(p), default=str) for i in its}) > 1}
        v |= {k for k in ("workload", "fidelity", "seed") if len({i[k] for i in its}) > 1}
        varying[t] = v

    mismatches: list[str] = []
    notes: list[str] = []
    prof_pairs: dict[tuple, int] = {}
    versions: set[tuple] = set()
    workloads: set[tuple] = set()
    for k in common:
        a, b = ida[k], idb[k]
        if a["profile_hash"] != b["profile_hash"]:
            pk = (a["profile"], json.dumps(a["overrides"] or {}, sort_keys=True), a["profile_hash"],
                  b["profile"], json.dumps(b["overrides"] or {}, sort_keys=True), b["profile_hash"])
            prof_pairs[pk] = prof_pairs.get(pk, 0) + 1
        if a["technique_version"] != b["technique_version"]:
            versions.add((a["technique"], a["technique_version"], b["technique_version"]))
        if a["workload_hash"] != b["workload_hash"]:
            workloads.add((a["workload"], a["workload_hash"], b["workload_hash"]))
    if prof_pairs:
        names = sorted({f"{p[0]} [{p[2]}] vs {p[3]} [{p[5]}]" for p in prof_pairs})
        mismatches.append(f"{sum(prof_pairs.values())} case pair(s) were computed on different hardware profiles: "
                          + "; ".join(names[:3]) + (" ..." if len(names) > 3 else ""))
    for t, va, vb in sorted(versions):
        mismatches.append(f"technique {t}: version {va} in {la_name}, {vb} in {lb_name}")
    mismatches += _plugin_versions({ida[k]["technique"] for k in common}, info_a, info_b,
                                   context.registry if context is not None else None)
    for w, ha, hb in sorted(workloads, key=str):
        notes.append(f"workload {w}: content hash {ha} in {la_name}, {hb} in {lb_name} (its definition changed)")
    if mismatches and not allow_profile_change:
        raise CompareRefused(f"compare refused: {mismatches[0]}" + (f" (+{len(mismatches) - 1} more)" if len(mismatches) > 1 else "")
                             + "; pass --allow-profile-change to compare anyway and see the differences")
    diffs = []
    for (pa, oa, hsa, pb, ob, hsb), n in sorted(prof_pairs.items()):
        d = profile_diff(pa, json.loads(oa), pb, json.loads(ob), hash_a=hsa, hash_b=hsb, profile_dirs=profile_dirs,
                          context=context)
        d.pairs = n
        diffs.append(d)
    # pairs that differ the same way (e.g. the same latency change at every swept bandwidth) merge
    merged: dict[str, ProfileDiff] = {}
    for d in diffs:
        sig = json.dumps([d.profile_a, d.profile_b, {k: [_fmt(x) for x in v] for k, v in d.fields.items()}],
                         sort_keys=True)
        if sig in merged:
            merged[sig].pairs += d.pairs
            merged[sig].notes = sorted(set(merged[sig].notes) | set(d.notes))
            if merged[sig].hash_a != d.hash_a:
                merged[sig].hash_a = "several"
            if merged[sig].hash_b != d.hash_b:
                merged[sig].hash_b = "several"
        else:
            merged[sig] = d
    diffs = list(merged.values())

    rows: list[MetricDiff] = []
    ma = {(k, n): (v, u, d) for k, n, v, u, d in zip(la["key"], la["name"], la["value"], la["unit"], la["direction"])}
    mb = {(k, n): (v, u, d) for k, n, v, u, d in zip(lb["key"], lb["name"], lb["value"], lb["unit"], lb["direction"])}
    for k in common:
        a, b = ida[k], idb[k]
        names = sorted({n for (kk, n) in ma if kk == a["key"]} | {n for (kk, n) in mb if kk == b["key"]})
        label = _describe(json.loads(k), varying.get(a["technique"], set()))
        for n in names:
            va, ua, da = ma.get((a["key"], n), (None, None, None))
            vb, ub, db = mb.get((b["key"], n), (None, None, None))
            direction = da or db or "none"
            unit = ua or ub or "1"
            ratio, change, verdict = _verdict(_num(va), _num(vb), direction, abs_tol)
            limit = per_metric.get(n, thr)
            p = None
            xa, xb = sa.get((a["key"], n)), sb.get((b["key"], n))
            if xa and xb and verdict not in ("missing",):
                p = _mwu(xa, xb)
            sig = None if p is None else bool(p < alpha)
            regression = (limit is not None and verdict == "worse" and sig is not False and change is not None
                          and (change if direction == "lower" else -change) > limit)
            rows.append(MetricDiff(a["technique"], a["variant"], label, n, unit, direction, _num(va), _num(vb), ratio,
                                   change, verdict, p, sig, bool(regression), a["key"], b["key"]))
    only_a = sorted(_describe(json.loads(k), varying.get(ida[k]["technique"], set())) + f" [{ida[k]['technique']}/"
                    f"{ida[k]['variant']}]" for k in ida if k not in idb)
    only_b = sorted(_describe(json.loads(k), varying.get(idb[k]["technique"], set())) + f" [{idb[k]['technique']}/"
                    f"{idb[k]['variant']}]" for k in idb if k not in ida)
    return Comparison(run_a=info_a, run_b=info_b, rows=rows, matched=len(common), only_a=only_a, only_b=only_b,
                      threshold=thr, alpha=alpha, mismatches=mismatches, profile_diffs=diffs, notes=notes,
                      thresholds=per_metric, abs_tol=abs_tol, strict=bool(strict))


def _num(v: Any) -> float | None:
    if v is None:
        return None
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f
