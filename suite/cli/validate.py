"""``suite validate``: the cost model against measurement on this machine."""

from __future__ import annotations


import click

from suite.cli import main
from suite.cli.common import console, emit, strict_json


@main.command("validate")
@click.argument("technique")
@click.option("--profile", default="local", show_default=True,
              help="Profile the model runs on (the calibrated 'local' one from `suite hardware calibrate`).")
@click.option("--profiles", "profile_dirs", multiple=True, type=click.Path(exists=True, file_okay=False),
              help="Extra folder of hardware profiles (repeatable).")
@click.option("--metric", "metrics", multiple=True, help="Compare only this metric (repeatable).")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True,
              help="Output format.")
@click.option("-q", "--quiet", is_flag=True, help="No progress lines.")
def validate_cmd(technique: str, profile: str, profile_dirs: tuple, metrics: tuple, fmt: str, quiet: bool) -> None:
    """Run TECHNIQUE's scenarios for real (execute) and with its cost model (model, on --profile),
    and print per case the measured and predicted value of every metric both report, the error,
    and the mean absolute percentage error (MAPE).

    \b
    Scenarios: the technique's declared validation set, else its smoke scenarios.
    Error = (predicted - measured) / measured.
    """
    from suite.validate import validate

    def progress(done: int, total: int, what: str) -> None:
        if not quiet and fmt == "table" and done < total:
            click.echo(f"[{done + 1}/{total}] {what}", err=True)

    from suite.cli.common import get_context

    report = validate(technique, profile, metrics=metrics or None, profile_dirs=tuple(profile_dirs),
                      context=get_context(),
                      progress=progress)
    if fmt == "json":
        click.echo(strict_json(report.as_dict(), indent=2, default=str))
        return
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
    c.print(f"overall MAPE: {'undefined' if overall is None else f'{overall:.1f} %'} over {len(report.rows)} values")
    for case, reason in report.skipped:
        c.print(f"skipped: {case}: {reason}")
    if not report.rows:
        from suite.errors import SuiteError

        raise SuiteError(f"validate {technique}: nothing was compared on profile {profile!r} "
                         f"({len(report.skipped)} scenario(s) skipped)")
