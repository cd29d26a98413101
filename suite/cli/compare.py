"""``suite compare RUN_A RUN_B``: per-scenario metric differences, a CI gate with --threshold."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from suite.cli import main
from suite.cli.common import emit, strict_json


@main.command("compare")
@click.argument("run_a")
@click.argument("run_b")
@click.option("--threshold", metavar="PCT", help="Exit 1 when any metric is worse than RUN_A by more than this "
                                                 "(e.g. 5% or 0.05), by the metric's direction.")
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
def compare_cmd(run_a, run_b, threshold, allow_profile_change, metrics, show_all, alpha, fmt, store_path, store_b,
                profile_dirs) -> None:
    """Compare RUN_B against RUN_A (the baseline), scenario by scenario.

    \b
    Cases are joined on technique, variant, fidelity, workload, parameters, seed and the
    profile fields swept within a run (--set with several values); per metric it prints both
    values, B/A and whether B is better or worse by the metric's direction. With raw samples
    on both sides (execute fidelity) a Mann-Whitney U test marks differences with p >= alpha
    "not significant"; those never fail the gate.
    Refuses (exit 2) to compare cases computed on different hardware profiles or plugin /
    technique versions unless --allow-profile-change, which then lists the differing fields.
    Exit status: 0; 1 when --threshold is given and some metric is worse beyond it; 2 on error.

    \b
    Example (CI gate):
      suite compare 12 13 --threshold 5%
    """
    from suite.results.compare import compare_runs
    from suite.results.store import default_store_path

    cmp = compare_runs(store_path or default_store_path(), run_a, run_b, store_b=store_b, threshold=threshold,
                       allow_profile_change=allow_profile_change, alpha=alpha, metrics=list(metrics) or None,
                       profile_dirs=tuple(profile_dirs))
    if fmt == "json":
        click.echo(strict_json(cmp.as_dict(), indent=2, default=str))
    else:
        _print(cmp, show_all)
    if cmp.exit_code:
        regs = cmp.regressions()
        click.echo(f"error: {len(regs)} metric value(s) worse than run {cmp.run_a['id']} by more than "
                   f"{cmp.threshold:.1%}: " + ", ".join(f"{r.technique}/{r.variant} {r.scenario} {r.metric} "
                                                        f"{r.change:+.1%}" for r in regs[:3])
                   + (" ..." if len(regs) > 3 else ""), err=True)
        sys.exit(cmp.exit_code)


def _num(v) -> str:
    if v is None:
        return ""
    return f"{v:.4g}"


def _print(cmp, show_all: bool) -> None:
    a, b = cmp.run_a, cmp.run_b
    click.echo(f"A = run {a['id']} ({a['started']}): {a['command']}")
    click.echo(f"B = run {b['id']} ({b['started']}): {b['command']}")
    for m in cmp.mismatches:
        click.echo(f"warning (allowed by --allow-profile-change): {m}")
    for d in cmp.profile_diffs:
        for line in d.lines():
            click.echo(line)
    for n in cmp.notes:
        click.echo(f"note: {n}")
    rows = [r for r in cmp.rows if show_all or r.verdict != "same"]
    table = [{"technique": r.technique, "variant": r.variant, "scenario": r.scenario, "metric": r.metric,
              "unit": "" if r.unit == "1" else r.unit, "A": _num(r.a), "B": _num(r.b),
              "B/A": "" if r.ratio is None else f"{r.ratio:.4g}", "verdict": r.label(cmp.threshold)} for r in rows]
    if table:
        emit(table, "table", list(table[0]), title=f"run {b['id']} vs run {a['id']}: {cmp.matched} scenario(s) matched")
    hidden = len(cmp.rows) - len(rows)
    c = cmp.counts()
    parts = [f"{c.get(k, 0)} {k}" for k in ("better", "worse", "same", "changed", "missing") if c.get(k)]
    click.echo(f"{cmp.matched} scenario(s), {len(cmp.rows)} metric value(s): " + ", ".join(parts)
               + (f"; {c['not_significant']} not significant" if c["not_significant"] else "")
               + (f" ({hidden} unchanged hidden; --all shows them)" if hidden else ""))
    if cmp.only_a:
        click.echo(f"only in run {a['id']}: {len(cmp.only_a)} scenario(s), e.g. {cmp.only_a[0]}")
    if cmp.only_b:
        click.echo(f"only in run {b['id']}: {len(cmp.only_b)} scenario(s), e.g. {cmp.only_b[0]}")
