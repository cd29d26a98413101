"""``suite validate``: the cost model against measurement on this machine."""

from __future__ import annotations


import click

from suite.cli import main
from suite.cli.common import console, emit, markdown_table, strict_json


def _calibration_warnings(profile: str, profile_dirs: tuple[str, ...]) -> list[str]:
    """Why the errors against a measured profile may mean little (spread, age, --quick)."""
    from suite.cli.common import get_context
    from suite.hardware.calibrate import calibration_warnings

    try:
        return calibration_warnings(get_context(profile_dirs).profile(profile))
    except Exception:  # noqa: BLE001 - validate() already reported an unknown profile
        return []


@main.command("validate")
@click.argument("technique", required=False)
@click.option("--training", is_flag=True,
              help="Validate the shared training model (suite.perf.training) against the published runs in "
                   "validation/training/ instead of a technique.")
@click.option("--collectives", is_flag=True,
              help="Instead of a technique: price every published collective measurement of "
                   "validation/collectives/ with the collective model and print the errors.")
@click.option("--plots", "plot_dir", type=click.Path(file_okay=False), default=None,
              help="With --collectives: also write one measured-vs-predicted bus bandwidth plot per system here.")
@click.option("--profile", default="local", show_default=True,
              help="Profile the model runs on (the calibrated 'local' one from `suite hardware calibrate`).")
@click.option("--profiles", "profile_dirs", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="Extra folder of hardware profiles (repeatable).")
@click.option("--metric", "metrics", multiple=True, help="Compare only this metric (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True,
              help="Output format (markdown: --collectives and --training).")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
def validate_cmd(technique: str | None, training: bool, collectives: bool, plot_dir: str | None, profile: str,
                 profile_dirs: tuple[str, ...], metrics: tuple[str, ...], fmt: str, quiet: bool) -> None:
    """Run TECHNIQUE's scenarios for real (execute) and with its cost model (model, on --profile),
    and print per case the measured and predicted value of every metric both report, the error,
    and the mean absolute percentage error (MAPE).

    \b
    Scenarios: the technique's declared validation set, else its smoke scenarios.
    Error = (predicted - measured) / measured.

    \b
    With --collectives (and no TECHNIQUE): every published nccl-tests row of
    validation/collectives/ priced by suite.perf.collective_time on its profile; per row the
    error, and the geometric mean, median, mean and largest |time error| per group (1 node of
    2 / 4 / 8 GPUs, 2-16 nodes) and per source table, below and from 1 MiB. Rows that informed a
    constant (calibration) are shown, not counted.
    """
    if training and collectives:
        raise click.UsageError("give one of --training and --collectives")
    if training:
        if plot_dir:
            raise click.UsageError("--plots goes with --collectives")
        return _validate_training(fmt)
    if collectives:
        if technique:
            raise click.UsageError("give either TECHNIQUE or --collectives, not both")
        from suite.cli.validate_collectives import run_collectives

        run_collectives(fmt, plot_dir)
        return
    if not technique:
        raise click.UsageError("give a TECHNIQUE, or --training, or --collectives")
    if fmt == "markdown" or plot_dir:
        raise click.UsageError("--format markdown and --plots go with --collectives or --training")
    _validate_technique(technique, profile, tuple(profile_dirs), tuple(metrics), fmt, quiet)


def _validate_technique(technique: str, profile: str, profile_dirs: tuple[str, ...], metrics: tuple[str, ...],
                        fmt: str, quiet: bool) -> None:
    """``suite validate TECHNIQUE``: execute vs model per case and metric, the MAPE per metric and
    overall, the scenarios skipped; exits non-zero when nothing could be compared."""
    from suite.model_validation import validate

    def progress(done: int, total: int, what: str) -> None:
        if not quiet and fmt == "table" and done < total:
            click.echo(f"[{done + 1}/{total}] {what}", err=True)

    from suite.cli.common import get_context

    report = validate(technique, profile, metrics=metrics or None, profile_dirs=profile_dirs,
                      context=get_context(),
                      progress=progress)
    warns = _calibration_warnings(profile, profile_dirs)
    if fmt == "json":
        click.echo(strict_json({**report.as_dict(), "calibration_warnings": warns}, indent=2, default=str))
        return
    for w in warns:
        click.echo(f"warning: {w}", err=True)
    rows = [{"case": r.case, "metric": r.metric, "unit": r.unit, "measured": r.measured, "predicted": r.predicted,
             "error %": ("exact" if r.predicted == r.measured else "undefined") if r.error_pct is None
             else f"{r.error_pct:+.1f}"} for r in report.rows]
    emit(rows, "table", ["case", "metric", "unit", "measured", "predicted", "error %"],
         title=f"{report.technique}: execute (this machine) vs model on {report.profile}")
    summary = [{"metric": s["metric"], "unit": s["unit"], "cases": s["cases"],
                "MAPE %": "undefined" if s["mape_pct"] is None else f"{s['mape_pct']:.1f}"} for s in report.summary()]
    emit(summary, "table", ["metric", "unit", "cases", "MAPE %"], title="mean absolute percentage error")
    overall = report.mape()
    c = console()
    if not report.rows:
        c.print("no values compared: no scenario reported a metric with the same name and unit at both fidelities")
    per = [s for s in report.summary() if s["mape_pct"] is not None]
    worst = max(per, key=lambda s: s["mape_pct"], default=None)
    spread = (f" (mixes metrics of every unit; worst: {worst['metric']} {worst['mape_pct']:.1f} % over {worst['cases']} values)"
              if worst is not None and len(per) > 1 and worst["mape_pct"] > 1.5 * (overall or 0.0) else "")
    c.print(f"overall MAPE: {'undefined' if overall is None else f'{overall:.1f} %'} over {len(report.rows)} values{spread}")
    for case, reason in report.skipped:
        c.print(f"skipped: {case}: {reason}")
    if not report.rows:
        from suite.errors import SuiteError

        raise SuiteError(f"validate {technique}: nothing was compared on profile {profile!r} "
                         f"({len(report.skipped)} scenario(s) skipped)")


def _validate_training(fmt: str) -> None:
    """``suite validate --training``: per published row, the configuration, the measured and
    predicted iteration time and memory and their errors; the summary over validation rows."""
    from suite.cli.common import get_context
    from suite.errors import SuiteError
    from suite.perf.training_validation import TABLE_COLUMNS, validate_training

    rep = validate_training(get_context())
    summ = rep.summary()
    if fmt == "json":
        click.echo(strict_json({"rows": rep.json_rows(), "summary": summ}, indent=2, default=str))
    elif fmt == "markdown":
        click.echo(markdown_table(rep.table_rows(), list(TABLE_COLUMNS)) + "\n\n" + rep.summary_text())
    else:
        emit(rep.table_rows(), "table", list(TABLE_COLUMNS),
             title="training model (suite.perf.training) vs published runs")
        console().print(rep.summary_text())
    if summ["refused"]:
        raise SuiteError(f"validate --training: {summ['refused']} published configuration(s) not priced")
