"""``suite compare RUN_A RUN_B``: per-scenario metric differences, a CI gate with --threshold."""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from suite.cli import main
from suite.cli.common import echo, emit, get_context, strict_json

if TYPE_CHECKING:
    from suite.results.compare import Comparison, MetricDiff
    from suite.results.profilediff import ProfileDiff


@main.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--threshold", "thresholds", multiple=True, metavar="[METRIC=]PCT",
              help="Exit 1 when a metric is worse than RUN_A by more than PCT (e.g. 5%), or a scenario ok in RUN_A "
                   "failed, timed out, crashed or was skipped in RUN_B, or either run is unfinished (interrupted, "
                   "running, error) short of its plan; METRIC=PCT sets one "
                   "metric's own threshold, METRIC a metric of the runs' ok cases (else exit 2) (repeatable: "
                   "--threshold 5% --threshold iteration_time=2%).")
@click.option("--abs-tol", type=float, default=None, metavar="X",
              help="Values closer than X in the metric's stored unit are 'same' (default 1e-12: floating-point "
                   "noise such as 0 against 5.55e-17 is no change).")
@click.option("--allow-profile-change", is_flag=True,
              help="Compare even when the cases were computed on different hardware profiles or plugin/technique "
                   "versions; the profile fields that differ are shown.")
@click.option("--metric", "metrics", multiple=True, help="Only this metric (repeatable).")
@click.option("--all", "show_all", is_flag=True, help="Also list metrics whose value did not change.")
@click.option("--alpha", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=0.05, show_default=True,
              help="Significance level of the Mann-Whitney U test on raw samples (execute fidelity).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Output format.")
@click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path),
              help="SQLite store (default: $SUITE_STORE or results/suite.sqlite).")
@click.option("--store-b", "store_b", type=click.Path(dir_okay=False, path_type=Path),
              help="Read RUN_B from this other store (e.g. a baseline store against a fresh one).")
@click.option("--profiles", "profile_dirs", multiple=True, type=click.Path(exists=True, path_type=Path),
              help="Extra hardware-profile folder (to show profile differences).")
@click.option("--strict", is_flag=True,
              help="Exit 1 when a scenario of either run has no partner in the other (each run is paired by the "
                   "scenarios it asked for), when a scenario ok in RUN_A is not ok in RUN_B, when either run is "
                   "unfinished short of its plan, when a metric of RUN_A is missing from RUN_B, or when its "
                   "unit changed to another dimension.")
def compare_cmd(run_a: str, run_b: str, thresholds: tuple[str, ...], abs_tol: float | None, allow_profile_change: bool,
                metrics: tuple[str, ...], show_all: bool, alpha: float, fmt: str, store_path: Path | None,
                store_b: Path | None, profile_dirs: tuple[Path, ...], strict: bool) -> None:
    """Compare RUN_B against RUN_A (the baseline), scenario by scenario.

    \b
    Cases are joined on technique, variant, fidelity, workload, parameters, seed and the
    profile fields swept within a run (--set with several values); per metric it prints both
    values, B/A and whether B is better or worse by the metric's direction. With raw samples
    on both sides (execute fidelity) a Mann-Whitney U test marks differences with p >= alpha
    "not significant"; those never fail the gate.
    Refuses (exit 2) to compare cases computed on different hardware profiles or plugin /
    technique versions unless --allow-profile-change, which then lists the differing fields.
    Each run's status (done, failed, interrupted, ...) heads the output. A scenario both runs
    asked for is paired whatever its cases' statuses: one not ok (failed, timeout, crashed,
    skipped) in either run is a row with both statuses and its error ("timeout in run 4: ...").
    Scenarios of one run with no partner in the other are counted ("only in run N").
    A metric stored in another unit of the same dimension in RUN_B (s instead of ms) is
    converted into RUN_A's unit, with a note; in a unit of another dimension its verdict is
    "unit changed".
    Exit status: 0; 1 when --threshold is given and some metric is worse beyond it; with
    --threshold or --strict when a scenario ok in RUN_A is not ok in RUN_B (not ok in RUN_A,
    or in both, fails nothing), or when a run is interrupted, running or stopped on an error
    short of its plan ("2 stored of 4 planned", "2 stored"), its scenarios paired or not; with
    --strict when some scenario has no partner, or a metric of
    RUN_A is missing from RUN_B or changed its unit's dimension (also without --strict for a
    --metric with a threshold); 2 on error.

    \b
    Example (CI gate):
      suite compare 12 13 --threshold 5%
    """
    from suite.results.compare import ABS_TOL, CompareRefused, compare_runs
    from suite.results.store import default_store_path

    threshold, per_metric = _split_thresholds(thresholds)
    try:
        cmp = compare_runs(store_path or default_store_path(), run_a, run_b, store_b=store_b, threshold=threshold,
                           thresholds=per_metric, abs_tol=ABS_TOL if abs_tol is None else abs_tol,
                           allow_profile_change=allow_profile_change, alpha=alpha, metrics=list(metrics) or None,
                           profile_dirs=tuple(profile_dirs), context=get_context(), strict=strict)
    except CompareRefused as exc:  # the one line names the fields that differ, in their files' units
        fields = [line.strip() for d in exc.diffs for line in profile_diff_lines(d, tuple(profile_dirs))[1:]
                  if not line.lstrip().startswith(("note:", "("))]
        msg = f"{exc}" + (f" (the profiles differ in {'; '.join(fields)})" if fields else "")
        if fmt == "json":  # the refusal as a document too, its differences machine-readable
            click.echo(strict_json({"refused": msg, "profile_diffs": [_diff_doc(d, tuple(profile_dirs))
                                                                      for d in exc.diffs]}, indent=2, default=str))
        raise CompareRefused(msg, exc.diffs) from None
    if fmt == "json":
        click.echo(strict_json(_json_doc(cmp, tuple(profile_dirs)), indent=2, default=str))
    else:
        _print(cmp, show_all, tuple(profile_dirs))
    _exit(cmp)


def _split_thresholds(thresholds: tuple[str, ...]) -> tuple[str | None, dict[str, str]]:
    """``--threshold`` values as (the one for every metric, metric -> its own)."""
    threshold: str | None = None
    per_metric: dict[str, str] = {}
    for t in thresholds:
        name, sep, pct = t.partition("=")
        if sep:
            per_metric[name.strip()] = pct.strip()
        else:
            threshold = t
    return threshold, per_metric


def _json_doc(cmp: Comparison, profile_dirs: tuple[Path, ...]) -> dict[str, Any]:
    """``--format json``: :meth:`Comparison.as_dict`, every metric's unit (also in each row's
    "unit"), and each differing profile field as its profile file writes it beside the SI value."""
    doc = cmp.as_dict()
    doc["units"] = {r.metric: r.unit for r in cmp.rows}
    for d, dd in zip(cmp.profile_diffs, doc["profile_diffs"]):
        dd["fields_written"] = _diff_doc(d, profile_dirs)["fields_written"]
    return doc


def _diff_doc(d: ProfileDiff, profile_dirs: tuple[Path, ...]) -> dict[str, Any]:
    """One profile difference as JSON: its fields (SI), and each as its profile file writes it."""
    import dataclasses

    return {**dataclasses.asdict(d),
            "fields_written": {k: [spelling(d.profile_a, k, a, profile_dirs=profile_dirs),
                                   spelling(d.profile_b, k, b, profile_dirs=profile_dirs)]
                               for k, (a, b) in d.fields.items()}}


def _exit(cmp: Comparison) -> None:
    """Exit with :attr:`Comparison.exit_code` when it is not 0, saying each reason on stderr in one line."""
    from suite.results.compare import tally

    if not cmp.exit_code:
        return
    a_id, b_id = cmp.run_a["id"], cmp.run_b["id"]
    lost = cmp.failures()
    if lost:
        echo(f"error: {len(lost)} scenario(s) ok in run {a_id} are not ok in run {b_id} ("
             + tally(r.status_b for r in lost) + "): " + ", ".join(
                 f"{r.technique}/{r.variant} {r.scenario} {r.status_b}" + (f" ({r.error_b})" if r.error_b else "")
                 for r in lost[:3]) + (" ..." if len(lost) > 3 else ""), err=True)
    regs = cmp.regressions()
    if regs:
        limit, worse = _limits(cmp, a_id)
        if not worse or any(r.change is None for r in regs):
            worse = f"fail the gate against run {a_id}" + (f" (threshold {limit})" if limit else "")
        echo(f"error: {len(regs)} metric value(s) {worse}: " + ", ".join(
            f"{r.technique}/{r.variant} {r.scenario} {r.metric} " + _why(r, b_id) for r in regs[:3])
             + (" ..." if len(regs) > 3 else ""), err=True)
    for info, n in cmp.unfinished() if cmp.gate else ():
        other = a_id if info is cmp.run_b else b_id
        lacks = f": {n} scenario(s) of run {other} have no partner in it" if n else ""
        echo(f"error: {_how_far(info)}{lacks}; a gate does not pass an unfinished run (finish or resume it)",
             err=True)
    if cmp.strict and cmp.unpaired:
        echo(f"error: --strict: {cmp.unpaired} scenario(s) have no partner ({len(cmp.only_a)} only in run "
             f"{a_id}, {len(cmp.only_b)} only in run {b_id})", err=True)
    sys.exit(cmp.exit_code)


def _how_far(info: Mapping[str, Any]) -> str:
    """An unfinished run, its state and its cases in words (:func:`suite.results.runs.case_count`):
    ``"run 2 is interrupted (2 stored of 4 planned)"``, ``"run 3 stopped on an error (2 stored)"``
    (a run stopped on an error keeps no plan)."""
    from suite.results.runs import case_count

    state = "stopped on an error" if info["status"] == "error" else f"is {info['status']}"
    return f"run {info['id']} {state} ({case_count(info)})"


def _limits(cmp: Comparison, a_id: Any) -> tuple[str, str]:
    """(the gate's thresholds in brief: ``5.0%, iteration_time 50.0%``; the regressions' phrase:
    ``worse than run 1 by more than 5.0%``, ``iteration_time worse than run 1 by more than 50.0%``,
    each further metric's threshold then every other metric's after it; "" with no threshold)."""
    per = [(m, v) for m, v in cmp.thresholds.items() if v is not None]
    every = cmp.threshold
    limit = ", ".join(([f"{every:.1%}"] if every is not None else []) + [f"{m} {v:.1%}" for m, v in per])
    if not per:
        return limit, f"worse than run {a_id} by more than {every:.1%}" if every is not None else ""
    terms = [f"{m} by more than {v:.1%}" for m, v in per[1:]]
    terms += [f"any other metric by more than {every:.1%}"] if every is not None else []
    return limit, f"{per[0][0]} worse than run {a_id} by more than {per[0][1]:.1%}" + "".join(f", {t}" for t in terms)


def _why(r: MetricDiff, run_b: Any) -> str:
    """A regression's figure: ``+12.3%``, ``missing in run 4``, ``unit changed ms -> B``."""
    if r.verdict == "missing":
        return f"missing in run {run_b}"
    if r.verdict == "unit changed":
        return f"unit changed {r.unit} -> {r.unit_b}"
    return f"{r.change:+.1%}"


def _num(v: float | None) -> str:
    if v is None:
        return ""
    return f"{v:.4g}"


def _pair(a: float | None, b: float | None, unit: str) -> dict[str, str]:
    """A and B scaled for reading by one factor (both in ms, both in MiB), with that unit."""
    from suite.report.units import column_scale, format_number

    f, u = column_scale([a, b], unit)
    return {"unit": "" if u == "1" else u, "A": "" if a is None else format_number(a / f),
            "B": "" if b is None else format_number(b / f)}


def _print(cmp: Comparison, show_all: bool, profile_dirs: tuple[Path, ...] = ()) -> None:
    from suite.results.compare import UNFINISHED, short_of_plan

    a, b = cmp.run_a, cmp.run_b
    for side, info in (("A", a), ("B", b)):
        echo(f"{side} = run {info['id']} ({info.get('status')}, started {info['started']}): {info['command']}")
    for info, other in ((a, b), (b, a)):
        if short_of_plan(info):
            echo(f"warning: {_how_far(info)}: the scenarios it did not reach are counted 'only in run "
                 f"{other['id']}', and --threshold or --strict fails the gate on it")
        elif info.get("status") in UNFINISHED:
            echo(f"warning: {_how_far(info)}: it stored every case it planned (a gate judges it as finished)")
    for m in cmp.mismatches:
        echo(f"warning (allowed by --allow-profile-change): {m}")
    for d in cmp.profile_diffs:
        for line in profile_diff_lines(d, profile_dirs):
            echo(line)
    for n in cmp.notes:
        echo(f"note: {n}")
    rows = [r for r in cmp.rows if show_all or r.verdict != "same"]
    statuses = [s for s in cmp.status_rows if show_all or (s.status_a, s.status_b) != ("skipped", "skipped")]
    table = [{"technique": r.technique, "variant": r.variant, "scenario": r.scenario, "metric": r.metric,
              **_pair(r.a, r.b, r.unit),
              "B/A": "" if r.ratio is None else f"{r.ratio:.4g}", "verdict": r.label(cmp.threshold)} for r in rows]
    table += [{"technique": s.technique, "variant": s.variant, "scenario": s.scenario, "metric": "-", "unit": "",
               "A": s.status_a, "B": s.status_b, "B/A": "", "verdict": s.label(a["id"], b["id"])} for s in statuses]
    if table:
        emit(table, "table", list(table[0]), title=f"run {b['id']} vs run {a['id']}: {cmp.matched} scenario(s) matched")
    _summary(cmp, len(cmp.rows) - len(rows) + len(cmp.status_rows) - len(statuses))


def _summary(cmp: Comparison, hidden: int) -> None:
    """The lines under the table: the counts of each verdict, the scenarios not ok, those unpaired."""
    from suite.results.compare import tally

    a, b = cmp.run_a, cmp.run_b
    c = cmp.counts()
    parts = [f"{c.get(k, 0)} {k}" for k in ("better", "worse", "same", "changed", "unit changed", "missing") if c.get(k)]
    for verdict, where in (("not ok in B", f"in run {b['id']}"), ("not ok in A", f"in run {a['id']}"),
                           ("not ok in both", "in both runs")):
        these = [s for s in cmp.status_rows if s.verdict == verdict]
        if these:  # each case's status where it is not ok ("failed", or "failed/timeout" in both runs)
            parts.append(f"{len(these)} not ok {where} (" + tally(
                "/".join(dict.fromkeys(x for x in (s.status_a, s.status_b) if x != "ok")) for s in these) + ")")
    echo(f"{cmp.matched} scenario(s), {len(cmp.rows)} metric value(s)" + (": " + ", ".join(parts) if parts else "")
         + (f"; {c['not_significant']} not significant" if c["not_significant"] else "")
         + (f" ({hidden} unchanged hidden; --all shows them)" if hidden else ""))
    for info, attr in ((b, "status_b"), (a, "status_a")):
        if cmp.status_rows and not cmp.rows and all(getattr(s, attr) != "ok" for s in cmp.status_rows):
            echo(f"run {info['id']}: none of the {cmp.matched} scenario(s) paired is ok ("
                 + tally(getattr(s, attr) for s in cmp.status_rows) + "): no metric to compare")
    if cmp.only_a:
        echo(f"only in run {a['id']}: {len(cmp.only_a)} scenario(s), e.g. {cmp.only_a[0]}")
    if cmp.only_b:
        echo(f"only in run {b['id']}: {len(cmp.only_b)} scenario(s), e.g. {cmp.only_b[0]}")


def _dimension_at(parts: list[str]) -> str | None:
    """The quantity dimension the profile schema declares at *parts* (``network.0.bandwidth`` ->
    ``"bandwidth"``; ``ext.NAME....`` through the core extension schema NAME), or None: a count,
    a name, or a field no schema declares. Read from the schema (as ``suite hardware show`` and
    the TOML export do), never guessed from the field's name."""
    from suite.hardware.derived import _dimension
    from suite.hardware.field_errors import _field_at, _unwrap
    from suite.hardware.profile import _registry_extensions
    from suite.hardware.units import dimension_of

    if parts[0] != "ext":
        return _dimension(tuple(parts))
    schema = _registry_extensions().get(parts[1]) if len(parts) > 2 else None
    walked = _field_at(schema, tuple(parts[2:])) if schema is not None else None
    if walked is None:
        return None
    _parent, ann, meta = walked
    return dimension_of(meta) or next((dimension_of(list(a.__metadata__)) for a in _unwrap(ann)
                                        if dimension_of(list(getattr(a, "__metadata__", ())))), None)


def _walk(raw: Any, parts: list[str]) -> Any:
    cur = raw
    for part in parts:
        if isinstance(cur, list):
            try:
                cur = cur[int(part)]
            except (ValueError, IndexError):
                return None
        elif isinstance(cur, dict):
            if part not in cur:
                return None
            cur = cur[part]
        else:
            return None
    return cur


def spelling(profile: str, path: str, si_value: Any, overrides: Mapping[str, Any] | None = None,
             profile_dirs: tuple[Path, ...] = ()) -> str:
    """How the profile itself writes the figure at *path* (``network.1.bandwidth`` ->
    ``"10 Gbit/s"``): the ``--set`` override that set it, else the value in the profile's TOML
    (``extends`` and the node's device reference followed), else the SI value with its SI unit
    (:func:`suite.hardware.units.format_quantity`) when the field's dimension is known."""
    from suite.hardware.units import format_quantity

    parts = path.split(".")
    for k, v in (overrides or {}).items():  # an override path may count levels from the end (-1)
        kp = str(k).split(".")
        if len(kp) == len(parts) and all(a == b or (a.lstrip("-").isdigit() and a.startswith("-")) for a, b in
                                         zip(kp, parts)):
            return str(v)
    try:
        lib = get_context(tuple(profile_dirs)).profiles
        raw = lib._merged_raw(profile) if profile in lib else None
        got = _walk(raw, parts) if raw is not None else None
        if got is None and raw is not None and parts[0] == "device":
            dev = (raw.get("node") or {}).get("device")
            if isinstance(dev, str) and dev in lib:
                got = _walk(lib._merged_raw(dev), parts)
        if isinstance(got, str):
            return in_unit_of(got, si_value)
    except Exception:  # noqa: BLE001 - the spelling is a courtesy; the SI value is still right
        pass
    if isinstance(si_value, (int, float)) and not isinstance(si_value, bool):
        try:
            dim = _dimension_at(parts)
            if dim is not None:
                return format_quantity(float(si_value), dim)
        except Exception:  # noqa: BLE001 - unknown dimension: plain number below
            pass
    return "-" if si_value is None else str(si_value)


def in_unit_of(written: str, si_value: Any) -> str:
    """*si_value* in the unit *written* uses: the text itself when it is that value
    (``"400 Gbit/s"``), else the value converted to its unit (1.25e9 B/s with ``"400 Gbit/s"``
    written -> ``"10 Gbit/s"``: a ``--set`` override changed it); *written* unchanged when it is no
    quantity (a name)."""
    from suite.hardware.units import DIMENSIONS, parse_quantity, ureg

    if not isinstance(si_value, (int, float)) or isinstance(si_value, bool):
        return written if si_value is None or str(si_value) == written else str(si_value)
    for dim, (si_unit, _d, _e) in DIMENSIONS.items():
        try:
            v = parse_quantity(written, dim, strict=True, positive=False)
        except Exception:  # noqa: BLE001 - not this dimension
            continue
        if v == si_value or (v and abs(v - si_value) <= 1e-9 * abs(v)):
            return written
        unit = ureg.Quantity(written).units
        mag = ureg.Quantity(float(si_value), si_unit).to(unit).magnitude
        return f"{mag:.6g} {written.split(None, 1)[1] if ' ' in written.strip() else unit}"
    return written


def profile_diff_lines(d: ProfileDiff, profile_dirs: tuple[Path, ...] = ()) -> list[str]:
    """The lines of one profile difference (:class:`suite.results.profilediff.ProfileDiff`), each
    value in the unit its profile file writes it in (an overridden value converted to it)."""
    out = [f"profile {d.profile_a} [{d.hash_a}] vs {d.profile_b} [{d.hash_b}] ({d.pairs} case pair(s)):"]
    for path, (a, b) in d.fields.items():
        out.append(f"  {path}: {spelling(d.profile_a, path, a, profile_dirs=profile_dirs)} -> "
                   f"{spelling(d.profile_b, path, b, profile_dirs=profile_dirs)}")
    if not d.fields:
        out.append(d.no_fields_line())
    out += [f"  note: {n}" for n in d.notes]
    return out
