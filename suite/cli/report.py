"""``suite report RUN -o report.html``: one self-contained HTML report of a run."""

from __future__ import annotations

from pathlib import Path

import click

from suite.cli import main


@main.command("report")
@click.argument("run", default="latest")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=Path("report.html"),
              show_default=True, help="HTML file to write.")
@click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path),
              help="SQLite store (default: $SUITE_STORE or results/suite.sqlite).")
@click.option("--no-scoreboard", is_flag=True, help="Leave out the reproduction scoreboard section.")
@click.option("--title", help="Page title (default: 'dlsys-suite report: run N').")
@click.option("--force", is_flag=True, help="Overwrite OUTPUT if it exists (without it, an existing file is an error).")
def report_cmd(run: str, output: Path, store_path: Path | None, no_scoreboard: bool, title: str | None,
               force: bool) -> None:
    """Write one HTML file for RUN (an id, a name given with `suite run --name`, `latest` or
    `latest~N`): provenance, a table and plots per
    technique, and the reproduction scoreboard of the claims whose cases the store holds.

    \b
    The file is self-contained and works offline (images embedded as PNG, interactive figures
    drawn by one embedded script: hover, zoom, filter by variant; no network):
      suite report latest -o report.html
    An existing file is never overwritten silently: give --force.
    """
    from suite.report import write_report
    from suite.results.store import default_store_path

    from suite.cli.common import fail, get_context

    if output.exists() and not force:
        fail(f"report: {str(output)!r} exists; give --force to overwrite it, or another -o path")
    out = write_report(store_path or default_store_path(), run, output, scoreboard=not no_scoreboard, title=title,
                       context=get_context())
    click.echo(f"wrote {out} ({out.stat().st_size / 1024:.0f} KiB)")
