"""``suite reproduce``: the paper-claims scoreboard (the main job)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click

from suite.cli import main
from suite.cli.common import strict_json
from suite.cli.results import wide_table
from suite.cli.run import ExecutorOptionsCommand, check_executor, execution_options, executor_settings, open_store


@main.command("reproduce", cls=ExecutorOptionsCommand)
@click.argument("techniques", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Every installed technique (the default when none is named).")
@click.option("--verified-only", is_flag=True, help="Only claims whose number was read in the paper itself.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True,
              help="Output format.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the scoreboard here.")
@click.option("--strict", is_flag=True, help="Exit non-zero when any claim ends in error.")
@execution_options
def reproduce_cmd(techniques, all_, verified_only, fmt, output, strict, jobs, executor, scheduler, store_path, rerun,
                  timeout, isolate, profile_dirs, quiet, executor_options=()):
    """Run every claim of TECHNIQUE(s) (all when none given) and print the paper's number beside ours.

    \b
    Verdicts: reproduced (ours inside the band, every null prediction outside) / not
    discriminating (a null, the baseline at the same scenario or a trivial predictor, is inside
    too) / not reproduced / inconclusive (a measured claim whose bootstrap interval straddles the
    band's edge) / error (a failing case or a value that could not be derived, with the reason).
    A verdict is information: the exit status is 0 even when claims are not reproduced; with
    --strict it is 1 when any claim ends in error.
    Cases are stored and cached like `suite run`, so a second reproduce computes nothing.
    """
    from suite.cli.common import get_context
    from suite.runner.case import Resolver
    from suite.runner.executors import ExecOptions
    from suite.runner.progress import make_progress
    from suite.runner.reproduce import render_markdown, reproduce

    check_executor(executor, scheduler)
    context = get_context(tuple(profile_dirs))
    reg = context.registry
    techs = reg.techniques() if (all_ or not techniques) else [reg.technique(t) for t in techniques]
    store = open_store(store_path)
    try:
        board = reproduce(techs, store, executor=executor,
                          options=ExecOptions(jobs=jobs, timeout=timeout, scheduler=scheduler, isolate=isolate,
                                              executor_options=executor_settings(executor, executor_options, reg)),
                          verified_only=verified_only, rerun=rerun,
                          progress=make_progress(quiet or fmt != "table" or output is not None),
                          command=shlex.join(["suite", *sys.argv[1:]]), registry=reg,
                          resolver=Resolver(context=context))
    except KeyboardInterrupt:
        click.echo("interrupted: finished cases are stored; run the same command again to resume", err=True)
        sys.exit(130)
    finally:
        store.close()

    if fmt == "json":
        text = strict_json(_with_units(board.as_dict(), techs, store_path), indent=2, default=str)
    elif fmt == "markdown":
        text = render_markdown(board)
    else:
        text = None
    if output is not None:
        if text is None:
            import contextlib
            import io

            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                _print_table(board, plain=True)
            text = buf.getvalue()
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote the scoreboard of {len(board.outcomes)} claim(s) to {output}", err=True)
    elif text is not None:
        click.echo(text)
    else:
        _print_table(board)
    if not techs or not board.outcomes:
        click.echo("no claims to reproduce" + ("" if techs else " (no technique installed: see `suite plugins`)"),
                   err=True)
    if strict and board.counts()["error"]:
        click.echo(f"error: {board.counts()['error']} claim(s) ended in error (--strict)", err=True)
        sys.exit(1)


def _with_units(doc: dict, techs, store_path) -> dict:
    """Each claim's ``metric`` and the ``unit`` its value is in (the stored unit of that metric
    in the claim's case; null for a value a claim derives from several cases)."""
    from suite.results import Store
    from suite.results.store import StoreError, default_store_path

    claims = {(t.name, c.id): c for t in techs for c in t.claims}
    with Store(store_path or default_store_path(), readonly=True) as st:
        for row in doc.get("claims", []):
            c = claims.get((row.get("technique"), row.get("claim")))
            metric = getattr(c, "metric", None) if c is not None else None
            row["metric"], row["unit"] = metric, None
            key = (row.get("cases") or {}).get("main")
            if metric and key:
                try:  # through the store's API, not its SQL schema
                    m = st.result(key).metrics.get(metric)
                except StoreError:  # the claim's case failed: no unit to give
                    m = None
                row["unit"] = m.unit if m is not None else None
    return doc


def _print_table(board, plain: bool = False) -> None:
    from suite.runner.reproduce import counts_line, table_rows

    cols = ["claim", "statement", "source", "paper", "ours", "nulls", "ratio", "verdict"]
    for tech in dict.fromkeys(o.technique for o in board.outcomes):
        for verified in (True, False):
            rows = [r for r in table_rows(board, verified) if r["technique"] == tech]
            if rows:
                wide_table(rows, cols, title=f"{tech}: {'verified' if verified else 'unverified'} claims")
    for label, v in (("verified", True), ("unverified", False), ("all", None)):
        click.echo(f"{label}: {counts_line(board.counts(v))}")
