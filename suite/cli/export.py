"""``suite results export``: a whole store (or one run) to Parquet, provenance in the metadata."""

from __future__ import annotations

from pathlib import Path

import click

from suite.cli.common import strict_json
from suite.cli.results import _store_option, results_group


@results_group.command("export")
@click.argument("run_arg", metavar="[RUN]", required=False, default=None)
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), default=Path("suite-results.parquet"),
              show_default=True, help="Parquet file to write.")
@click.option("--run", "run", default=None,
              help="Only this run (an id, a name given with `suite run --name`, `latest` or `latest~N`); "
                   "default: the whole store.")
@_store_option
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="What to print about the export.")
def export_cmd(run_arg: str | None, output: Path, run: str | None, store_path: Path | None, fmt: str) -> None:
    """Export every ok case's metrics (long form) to a Parquet file readable by pandas: of RUN
    (as `show` and `report` take it; `--run RUN` the same), else of the whole store.

    \b
    Columns: those of suite.results.load (long form), plus `runs` (run ids that asked for the
    case) and `samples` (raw repeated measurements). `run` is the --run asked for; over the
    whole store, the run that computed the case's stored result (as `run_id`; a case several
    runs asked for lists them all in `runs`). The file's metadata key `dlsys_suite`
    holds the provenance of every run (host, packages, plugins, git commit, command):
      pandas.read_parquet(FILE)
      suite.results.export.read_provenance(FILE)
    """
    from suite.errors import StoreError
    from suite.results.export import export_parquet
    from suite.results.store import default_store_path

    if run_arg is not None and run is not None and run_arg != run:
        raise click.UsageError(f"RUN {run_arg!r} and --run {run!r}: expected one run, got two (give RUN or --run)")
    run = run if run is not None else run_arg
    if output.suffix.lower() not in (".parquet", ".pq"):
        raise StoreError(f"-o {str(output)!r}: expected a .parquet file (for CSV: suite results show RUN --format csv "
                         f"-o FILE.csv)")

    info = export_parquet(store_path or default_store_path(), output, run=run)
    if fmt == "json":
        click.echo(strict_json({k: info[k] for k in ("path", "rows", "run", "exported")} |
                              {"runs": [r["id"] for r in info["runs"]]}, indent=2))
    else:
        click.echo(f"wrote {info['rows']} metric row(s) of {len(info['runs'])} run(s) to {info['path']} "
                   f"(provenance in the Parquet metadata key 'dlsys_suite')")
