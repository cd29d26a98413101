"""``suite reproduce``: the paper-claims scoreboard (the main job)."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from suite.cli import main
from suite.cli.common import echo, strict_json, warn_quarantined
from suite.cli.run import ExecutorOptionsCommand, check_executor, execution_options, executor_settings, open_store

if TYPE_CHECKING:
    from suite.report.scoreboard import ClaimInfo
    from suite.runner.verdicts import Scoreboard

#: (technique, claim id) -> what the renderer needs of the claim
Infos = Mapping[tuple[str, str], "ClaimInfo"]


@main.command("reproduce", cls=ExecutorOptionsCommand)
@click.argument("techniques", nargs=-1)
@click.option("--all", "all_", is_flag=True, help="Every installed technique (the default when none is named).")
@click.option("--verified-only", is_flag=True, help="Only claims whose number was read in the paper itself.")
@click.option("--format", "fmt", type=click.Choice(["table", "json", "markdown"]), default="table", show_default=True,
              help="Output format.")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write the scoreboard here.")
@click.option("--strict", is_flag=True, help="Exit 1 when any claim ends in error, else 2 when any claim is "
              "'reproduced (no null)' or a 'claim defect' (docs/verdicts.md).")
@click.option("--wide", is_flag=True, help="Every claim's note in full, its nulls and the assumptions its verdict rests "
                                           "on (the default shows one line of each).")
@execution_options
def reproduce_cmd(techniques: tuple[str, ...], all_: bool, verified_only: bool, fmt: str, output: Path | None,
                  strict: bool, wide: bool, jobs: int, executor: str, scheduler: str | None, store_path: Path | None,
                  rerun: bool, timeout: float | None, isolate: bool, profile_dirs: tuple[Path, ...], quiet: bool,
                  executor_options: tuple[str, ...] = ()) -> None:
    """Run every claim of TECHNIQUE(s) (all when none given) and print the paper's number beside ours.

    \b
    The table starts with a legend (band, gain, ratio, null, the verdicts, the reason classes);
    each claim shows what was compared with what, in the claim's unit, and one line of why
    (--wide: the full note and the assumptions). The rules: docs/verdicts.md.

    \b
    Verdicts (docs/verdicts.md): reproduced (ours inside the band, every null prediction
    outside, one of them computed and able to land inside) / reproduced (no null) (no null
    could have landed inside: counted apart) / not discriminating (a null, the baseline at the
    same scenario or a trivial predictor, is inside too) / not reproduced [reason class] /
    inconclusive (a measured claim whose bootstrap interval straddles the band's edge) / claim
    defect (a pass or a fail was impossible before any run) / error (a failing case or a value
    that could not be derived, with the reason).
    A verdict is information: the exit status is 0 even when claims are not reproduced; with
    --strict it is 1 when any claim ends in error, else 2 when any claim is "reproduced (no
    null)" or a "claim defect" (a pass that is not evidence, a claim that could not fail). A claim
    whose scenario does not resolve (its workload or profile is missing) exits 1 always.
    Cases are stored and cached like `suite run`, so a second reproduce computes nothing.
    """
    from suite.cli.common import get_context
    from suite.runner.executors import ExecOptions

    check_executor(executor, scheduler)
    context = get_context(tuple(profile_dirs))
    reg = context.registry
    techs = reg.techniques() if (all_ or not techniques) else [reg.technique(t) for t in techniques]
    warn_quarantined()
    options = ExecOptions(jobs=jobs, timeout=timeout, scheduler=scheduler, isolate=isolate,
                          executor_options=executor_settings(executor, executor_options, context))
    board = _run(techs, context, store_path, executor, options, verified_only=verified_only, rerun=rerun,
                 quiet=quiet or fmt != "table" or output is not None)
    for note in board.notes:  # a claim judged while a plugin's thread had changed the core
        echo(f"warning: {note}", err=True)
    text = _render(board, techs, store_path, fmt, wide=wide, tty=output is None and sys.stdout.isatty())
    if output is not None:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        click.echo(f"wrote the scoreboard of {len(board.outcomes)} claim(s) to {output}", err=True)
    else:
        echo(text, nl=not text.endswith("\n"))
    if not techs or not board.outcomes:
        click.echo("no claims to reproduce" + ("" if techs else " (no technique installed: see `suite plugins`)"),
                   err=True)
    _exit(board, strict)


def _run(techs: list[Any], context: Any, store_path: Path | None, executor: str, options: Any, *,
         verified_only: bool, rerun: bool, quiet: bool) -> Scoreboard:
    """Reproduce *techs* into the store; exit 130 on Ctrl-C (the finished cases are stored)."""
    import suite.report.scoreboard  # noqa: F401  (before judging: plugin code judged finds it in the guard's snapshot)
    from suite.runner.case import Resolver
    from suite.runner.progress import make_progress
    from suite.runner.reproduce import reproduce

    store = open_store(store_path)
    try:
        board = reproduce(techs, store, executor=executor, options=options, verified_only=verified_only, rerun=rerun,
                          progress=make_progress(quiet), command=shlex.join(["suite", *sys.argv[1:]]),
                          context=context, resolver=Resolver(context=context))
        lost = store.lost()
        if lost:  # the cases were written to a file no path names any more (as `suite run` says it)
            echo(f"error: {lost}; run the command again", err=True)
            sys.exit(1)
        return board
    except KeyboardInterrupt:
        from suite.cli.run import resume_command

        resume = resume_command(sys.argv[1:])
        how = f"resume with `{resume}`" if resume else "run the same command again to resume"
        click.echo(f"interrupted: finished cases are stored; {how}", err=True)
        sys.exit(130)
    finally:
        store.close()


def _render(board: Scoreboard, techs: list[Any], store_path: Path | None, fmt: str, *, wide: bool, tty: bool) -> str:
    """The scoreboard as JSON, Markdown or the terminal table."""
    from suite.report.scoreboard import render_markdown

    infos = _infos(board, techs, store_path)
    if fmt == "json":
        return strict_json(_with_units(board, infos), indent=2, default=str)
    if fmt == "markdown":
        return render_markdown(board, infos=infos)
    return _table(board, infos, wide=wide, tty=tty)


def _exit(board: Scoreboard, strict: bool) -> None:
    """Exit 1 when a claim does not resolve (always) or ends in error (--strict), 2 when a claim is
    reproduced (no null) or a claim defect (--strict); else return (exit 0)."""
    counts = board.counts()
    apart = counts["reproduced (no null)"] + counts["claim defect"]
    unresolved = [o for o in board.outcomes if str(getattr(o, "reason", "") or "").startswith("scenario does not resolve")]
    if unresolved:  # a broken installation (a workload or profile missing), not a verdict
        o = unresolved[0]
        echo(f"error: {len(unresolved)} claim(s) do not resolve, e.g. {o.technique}/{o.claim}: {o.reason} "
             "(see `suite plugins`)", err=True)
        sys.exit(1)
    if strict and counts["error"]:
        click.echo(f"error: {counts['error']} claim(s) ended in error (--strict)", err=True)
        sys.exit(1)
    if strict and apart:
        click.echo(f"error: {counts['reproduced (no null)']} claim(s) reproduced (no null) and "
                   f"{counts['claim defect']} claim defect(s), not counted as reproduced (--strict; docs/verdicts.md)",
                   err=True)
        sys.exit(2)


def _infos(board: Scoreboard, techs: list[Any], store_path: Path | None) -> Infos:
    """(technique, claim) -> ClaimInfo (acceptance and unit), units read through the store's API."""
    from suite.report.scoreboard import claim_info
    from suite.results import Store
    from suite.results.store import default_store_path

    with Store(store_path or default_store_path(), readonly=True) as st:
        return claim_info(techs, st, board)


def _with_units(board: Scoreboard, infos: Infos) -> dict[str, Any]:
    """Each claim's ``metric`` and the ``unit`` its value is in (the stored unit of that metric
    in the claim's case, or the claim's declared unit; null when unknown), its one-line ``why``
    and its reason class."""
    from suite.report.scoreboard import why

    doc = board.as_dict()
    by = {(o.technique, o.claim): o for o in board.outcomes}
    for row in doc.get("claims", []):
        info = infos.get((row.get("technique"), row.get("claim")))
        row["metric"] = info.metric if info else None
        row["unit"] = info.data_unit if info else None
        o = by.get((row.get("technique"), row.get("claim")))
        if o is not None:
            row["why"] = why(o)
    return doc


def _table(board: Scoreboard, infos: Infos, *, wide: bool, tty: bool) -> str:
    """The terminal scoreboard, as wide as the terminal (120 columns into a pipe or a file)."""
    import shutil

    from suite.report.scoreboard import render_text

    width = shutil.get_terminal_size((120, 24)).columns if tty else 120
    return render_text(board, infos, wide=wide, width=max(width - 1, 60))
