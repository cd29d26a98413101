"""``suite run``: expand a sweep (flags or an experiment file), execute it, store the results."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import click

from suite.cli import main
from suite.cli.common import echo, emit, format_option, strict_json, warn_quarantined
from suite.errors import ExperimentError

__all__ = ["run_cmd", "execution_options", "open_store", "parse_assignments"]


def execution_options(f: Any) -> Any:
    """Options shared by ``suite run`` and ``suite reproduce``."""
    opts = [
        click.option("-j", "--jobs", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Parallel workers (local: processes; dask: LocalCluster workers)."),
        click.option("--executor", default="local", show_default=True,
                     help="local, dask, or an executor a plugin provides."),
        click.option("--scheduler", metavar="ADDR", help="dask scheduler address (default: a LocalCluster)."),
        click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path),
                     help="SQLite store (default: $SUITE_STORE or results/suite.sqlite)."),
        click.option("--rerun", is_flag=True, help="Recompute cases already stored ok."),
        click.option("--timeout", type=click.FloatRange(min=0, min_open=True), metavar="S",
                     help="Per-case timeout in seconds (a case over it is stored as timeout); default: 600 s for "
                          "execute cases, and a 600 s hang guard (no progress) for the others."),
        click.option("--isolate/--in-process", "isolate", default=True, show_default=True,
                     help="Evaluate in worker processes, so a crashing or hanging plugin costs only its own case "
                          "(default); --in-process evaluates in this process, for debugging and profiling code you trust "
                          "(an abort or a hang in C stops the run; each finished case is committed: docs/security.md)."),
        click.option("--profiles", "profile_dirs", multiple=True, type=click.Path(exists=True, path_type=Path),
                     help="Extra hardware-profile folder (repeatable)."),
        click.option("-q", "--quiet", is_flag=True, help="No progress output."),
        click.option("-X", "--executor-option", "executor_options", multiple=True, metavar="NAME=VALUE",
                     help="An option of a plugin's executor (repeatable); also written --EXECUTOR-NAME VALUE, "
                          "e.g. --executor slurm --slurm-partition gpu --slurm-time 30 (`--executor slurm --help` "
                          "lists them)."),
    ]
    for o in reversed(opts):
        f = o(f)
    return f


def check_executor(executor: str, scheduler: str | None) -> None:
    if scheduler and executor == "local":
        raise ExperimentError("--scheduler is for --executor dask (the local executor has no scheduler)")


def _executor_named(args: list[str]) -> str | None:
    name = None
    for i, a in enumerate(args):
        if a == "--":
            break
        if a == "--executor" and i + 1 < len(args):
            name = args[i + 1]
        elif a.startswith("--executor="):
            name = a.split("=", 1)[1]
    return name


def rewrite_executor_args(args: list[str]) -> list[str]:
    """``--executor E --E-NAME VALUE`` (or ``--E-NAME=VALUE``) -> ``-X NAME=VALUE``.

    A plugin's executor gets its own options without the core knowing them: with
    ``--executor slurm``, ``--slurm-partition gpu`` is ``-X partition=gpu``; the executor validates
    the names and values (``parse_options``). The built-in executors take no such options.
    """
    name = _executor_named(args)
    if not name or name in ("local", "dask"):
        return args
    prefix, out, i = f"--{name}-", [], 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out.extend(args[i:])
            break
        if a.startswith(prefix) and len(a) > len(prefix):
            opt = a[len(prefix):]
            if "=" in opt:
                k, v = opt.split("=", 1)
            elif i + 1 < len(args):
                k, v = opt, args[i + 1]
                i += 1
            else:
                raise click.UsageError(f"{a}: expected a value")
            out += ["-X", f"{k}={v}"]
        else:
            out.append(a)
        i += 1
    return out


class ExecutorOptionsCommand(click.Command):
    """A command whose ``--EXECUTOR-NAME VALUE`` options go to the plugin executor it names."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        args = list(args)
        name = _executor_named(args)
        if name and name not in ("local", "dask") and ("--help" in args or "-h" in args):
            self._executor_help(name)
        return super().parse_args(ctx, rewrite_executor_args(args))

    def _executor_help(self, name: str) -> None:
        """``--executor E --help`` lists E's own options (its ``options_help()``, when it has one)."""
        try:
            from suite.context import Context
            from suite.runner.executors import get_executor

            described = getattr(get_executor(name, context=Context.build()), "options_help", None)
            rows = list(described()) if callable(described) else []
        except Exception:  # noqa: BLE001 - help must print even when the executor cannot be loaded
            return
        if rows:
            self.epilog = "\b\n" + "\n".join([f"Options of executor {name} (or -X NAME=VALUE):"] +
                                             [f"  --{name}-{k:<20} {h}" for k, h in rows])


def executor_settings(executor: str, values: tuple[str, ...], context: Any) -> dict[str, str]:
    """``("partition=gpu", ...)`` -> ``{"partition": "gpu"}``, checked by the executor itself
    (its ``parse_options``) before anything runs: one line naming the option on a bad one."""
    if not values:
        return {}
    opts: dict[str, str] = {}
    for v in values:
        k, sep, val = v.partition("=")
        if not sep or not k.strip():
            raise ExperimentError(f"--executor-option {v!r}: expected NAME=VALUE")
        opts[k.strip()] = val
    if executor in ("local", "dask"):
        raise ExperimentError(f"--executor-option: executor {executor!r} takes no options; given "
                              f"{', '.join(sorted(opts))}")
    from suite.runner.executors import get_executor

    ex = get_executor(executor, context=context)
    check = getattr(ex, "parse_options", None)
    if check is None:
        raise ExperimentError(f"--executor-option: executor {executor!r} takes no options; given "
                              f"{', '.join(sorted(opts))}")
    check(opts)
    return opts


def open_store(store_path: Path | None) -> Any:
    from suite.results import Store

    return Store(store_path)


def parse_assignments(values: tuple[str, ...], flag: str) -> dict[str, list[str]]:
    """``("nodes=1,2,4", ...)`` -> ``{"nodes": ["1", "2", "4"]}``; one-line error naming the flag."""
    out: dict[str, list[str]] = {}
    for v in values:
        if "=" not in v:
            raise ExperimentError(f"{flag} {v!r}: expected NAME=VALUE[,VALUE...]")
        k, vals = v.split("=", 1)
        k = k.strip()
        items = [x.strip() for x in vals.split(",")]
        if not k or items == [""]:
            raise ExperimentError(f"{flag} {v!r}: expected NAME=VALUE[,VALUE...]")
        if "" in items:  # "1,,2" or "1,2,": a value left out, not one to drop in silence
            raise ExperimentError(f"{flag} {v!r}: value {items.index('') + 1} of {k} is empty; "
                                  "expected NAME=VALUE[,VALUE...]")
        out.setdefault(k, []).extend(items)
    return out


#: the sweep flag of each list key (its click name)
_LIST_FLAGS = {"variants": "--variant", "profiles": "--profile", "workloads": "--workload",
               "fidelities": "--fidelity", "seeds": "--seed"}


def _split(values: tuple[str, ...], key: str) -> list[str]:
    """``("a,b", "c")`` -> ``["a", "b", "c"]``; an empty item (``a,,b``, ``a,``) is a one-line error
    naming the flag of *key* (:data:`_LIST_FLAGS`), not a value dropped in silence."""
    out = []
    for v in values:
        items = [x.strip() for x in v.split(",")]
        if "" in items:
            flag = _LIST_FLAGS[key]
            raise ExperimentError(f"{flag} {v!r}: value {items.index('') + 1} is empty; expected NAME[,NAME...]")
        out += items
    return out


def _summary_table(store: Any, summary: Any, limit: int = 40) -> None:
    """A small run's results: one row per case, its main metrics (direction first) with units."""
    if summary.total == 0 or summary.total > limit:
        return
    from suite.cli.results import compact_rows, wide_table

    rows = [{k: v for k, v in r.items() if k not in ("key", "fidelity")} for r in compact_rows(store, summary.run_id)]
    if rows:
        wide_table(rows, list(rows[0]), title=f"run {summary.run_id} (* = profile with overrides; every metric: "
                                                f"suite results show {summary.run_id} --format csv)")


def _skip_reasons(store: Any, summary: Any, most: int = 3) -> None:
    """Say why cases were skipped (the reasons are otherwise only in the store)."""
    if not getattr(summary, "skipped", 0):  # nothing skipped: no store query (and no pandas import, 0.35 s)
        return
    try:
        cases = store.cases(summary.run_id)
    except Exception:  # noqa: BLE001 - a summary line must not fail the run
        return
    if cases.empty or "status" not in cases:
        return
    skipped = cases[cases["status"] == "skipped"]
    if skipped.empty:
        return
    counts = skipped["error"].fillna("").value_counts()
    for reason, n in list(counts.items())[:most]:
        echo(f"  skipped {n} case(s): {reason}", err=True)
    if len(counts) > most:
        click.echo(f"  ... {len(counts) - most} more reason(s): `suite results show {summary.run_id}`", err=True)
    if len(skipped) == len(cases):
        click.echo(f"warning: every case of run {summary.run_id} was skipped: nothing was computed "
                   "(the reasons above say which parameter or profile does not apply)", err=True)


def resume_command(args: list[str]) -> str | None:
    """The command that resumes an interrupted ``suite ARGS``: *args* less ``--rerun`` (it would
    recompute the stored cases; without it, a case the interrupted run did not reach keeps an
    earlier result if it has one); None when the same command resumes. A ``--name`` stays: the
    resuming run takes the name from the interrupted run."""
    rest = [a for a in args if a != "--rerun"]
    return None if len(rest) == len(args) else shlex.join(["suite", *rest])


def report_summary(store: Any, summary: Any, fmt: str, quiet: bool, show_table: bool = True,
                   resume: str | None = None, rerun: bool = False) -> None:
    """Print a run's outcome (and exit non-zero on failures / interrupt); *resume*: the command that
    resumes an interrupted run, when it is not the same command (:func:`resume_command`); *rerun*:
    the run was asked to recompute stored cases."""
    if fmt == "json":
        click.echo(strict_json(summary.as_dict(), indent=2, default=str))
    else:
        if show_table and not quiet and not summary.interrupted:
            _summary_table(store, summary)
        for f in summary.failures[:10]:
            echo(f"  {f['status']}: {f['case']} [{f['key']}]: {f['error']}", err=True)
        if len(summary.failures) > 10:
            click.echo(f"  ... (see `suite results show {summary.run_id}`)", err=True)
        click.echo(summary.message(resume), err=summary.interrupted)
        _skip_reasons(store, summary)
        for w in summary.warnings:
            echo(f"warning: {w}", err=True)
    lost = store.lost() if hasattr(store, "lost") else None
    if lost:  # the summary above counted what was handed to a file no path names any more
        click.echo(f"error: {lost} ({summary.computed} case(s) of run {summary.run_id}); run the command again", err=True)
        sys.exit(1)
    if summary.interrupted:
        if fmt == "json":
            click.echo(summary.message(resume), err=True)
        if resume and rerun:
            click.echo("  (a case the interrupted run did not reach keeps its earlier result, if it has one: "
                       "the same command with --rerun computes every case again)", err=True)
        sys.exit(130)
    if summary.failed:
        click.echo(f"error: {summary.failed} case(s) failed (stored with their tracebacks: "
                   f"`suite results show {summary.run_id}`)", err=True)
        sys.exit(1)


@main.command("run", cls=ExecutorOptionsCommand,
              short_help="Run a sweep (an experiment file or flags); each case is stored.")
@click.argument("experiment", required=False)
@click.option("--entry", "entries", multiple=True, help="With an experiment file: only this entry (repeatable).")
@click.option("-t", "--technique", help="Technique to sweep (instead of an experiment file).")
@click.option("--category", help="Every installed technique of this category that applies to the workload and "
                                 "profile, each with all its variants (a head-to-head comparison; `suite report`).")
@click.option("--gpus", type=click.IntRange(min=1), default=None,
              help="With --category: every technique on this many GPUs, on each --profile (default: the "
                   "--profile's size, the smallest one's when several; a profile with fewer GPUs is left out).")
@click.option("--name", "run_name", metavar="LABEL",
              help="Name the run, so `suite compare LABEL_A LABEL_B` and `suite results show LABEL` find it "
                   "(a new name, or the name of a run the same sweep began and that was interrupted: this run "
                   "resumes it and takes the name; the same options in any order, -j, --format, -q and the like free).")
@click.option("--variant", "variants", multiple=True, help="Variant(s), comma-separated (default: all).")
@click.option("--profile", "profiles", multiple=True,
              help="Profile(s): names, globs, kind:K, tag:T; comma-separated (default: the technique's).")
@click.option("--workload", "workloads", multiple=True, help="Workload(s), comma-separated (default: the technique's).")
@click.option("--param", "params", multiple=True, metavar="NAME=V1,V2", help="Technique parameter values (repeatable).")
@click.option("--set", "sets", multiple=True, metavar="FIELD=V1,V2",
              help='Profile field overrides, e.g. "network.-1.bandwidth=2 Gbit/s,10 Gbit/s" (repeatable).')
@click.option("--fidelity", "fidelities", multiple=True, help="model, simulate, execute; comma-separated (default: model).")
@click.option("--seed", "seeds", multiple=True, help="Seed(s), comma-separated (default: 0).")
@click.option("--allow-parallel-execute", is_flag=True, help="Let execute-fidelity cases run concurrently.")
@click.option("--dry-run", is_flag=True, help="Expand and list the cases; run nothing.")
@click.option("--max-cases", type=click.IntRange(min=1), default=1_000_000, show_default=True,
              help="Refuse a sweep with more cases than this (counted before anything is built).")
@click.option("--artifacts", "artifacts", type=click.Choice(["none", "summary", "full"]), default="summary",
              show_default=True,
              help="What of each result's artifacts to store: summary leaves out tables (e.g. per-layer, "
                   "listed under _omitted), none only lists them, full keeps everything (and recomputes cases "
                   "stored with summary or none).")
@execution_options
@format_option("table", "json")
@click.pass_context
def run_cmd(ctx: Any, experiment: str | None, entries: tuple[str, ...], technique: str | None, category: str | None,
            gpus: int | None, run_name: str | None, variants: tuple[str, ...], profiles: tuple[str, ...],
            workloads: tuple[str, ...], params: tuple[str, ...], sets: tuple[str, ...], fidelities: tuple[str, ...],
            seeds: tuple[str, ...], allow_parallel_execute: bool, dry_run: bool, max_cases: int, jobs: int,
            executor: str, scheduler: str | None, store_path: Path | None, rerun: bool, timeout: float | None,
            isolate: bool, profile_dirs: tuple[str, ...], quiet: bool, fmt: str, executor_options: tuple[str, ...] = (),
            artifacts: str = "summary") -> None:
    """Run a sweep: an experiment file (path or shipped name, e.g. `smoke`) or a one-off sweep
    from flags; every combination is a case, stored in the results store.

    \b
    Examples:
      suite run smoke -j 2
      suite run --technique poseidon --variant ps,poseidon --param nodes=1,2,4,8,16 \\
                --set "network.-1.bandwidth=2 Gbit/s,10 Gbit/s"

    A case already stored ok is not computed again (--rerun forces); an interrupted run resumes
    when the same command is run again (with --name too: the new run takes the name). Exit status:
    0, 1 if any case failed, 130 if interrupted.
    """
    from suite.cli.common import get_context

    check_executor(executor, scheduler)
    if run_name is not None:
        from suite.results.store import check_run_name

        check_run_name(run_name)
    context = get_context(tuple(profile_dirs))
    sweep = dict(technique=technique, category=category, gpus=gpus, variants=variants, profiles=profiles,
                 workloads=workloads, params=params, sets=sets, fidelities=fidelities, seeds=seeds, entries=entries)
    exp = _expansion(context, experiment, sweep, max_cases, dry_run, fmt)
    for note in exp.notes:
        click.echo(f"note: {note}", err=True)
    for warning in exp.warnings:
        click.echo(f"warning: {warning}", err=True)
    warn_quarantined()
    if dry_run:
        _show_dry_run(exp.cases, fmt)
        return
    from suite.runner.executors import ExecOptions

    options = ExecOptions(jobs=jobs, timeout=timeout, scheduler=scheduler, isolate=isolate, artifacts=artifacts,
                          executor_options=executor_settings(executor, executor_options, context))
    _run_into_store(context, exp.cases, store_path, run_name, executor, options, rerun=rerun,
                    allow_parallel_execute=allow_parallel_execute, quiet=quiet, fmt=fmt, warnings=exp.warnings)


def _show_dry_run(cases: Any, fmt: str) -> None:
    """The cases the run would store: duplicates (nodes=5,5) are one case, as in the run."""
    seen: set[str] = set()
    rows = []
    for c in cases:
        if c.key not in seen:
            seen.add(c.key)
            rows.append({"key": c.key, "case": c.describe(), "seed": c.seed, "overrides": c.overrides or ""})
    emit(rows, fmt, ["key", "case", "seed", "overrides"], title=f"{len(rows)} case(s) (dry run)")


def _run_into_store(context: Any, cases: Any, store_path: Any, run_name: str | None, executor: str, options: Any, *,
                    rerun: bool, allow_parallel_execute: bool, quiet: bool, fmt: str,
                    warnings: Sequence[str] = ()) -> None:
    """Run *cases* into the store (named *run_name*, if given) and report the summary; *warnings*:
    the sweep's, printed as it was expanded, head the summary's ``warnings`` in ``--format json``.

    Raises
    ------
    ExperimentError
        *run_name* already names a run of the store that was not interrupted.
    """
    from suite.runner.engine import run_cases
    from suite.runner.progress import make_progress

    store = open_store(store_path)
    try:
        command = shlex.join(["suite", *sys.argv[1:]])
        resumes = _interrupted_run_named(store, run_name, command, rerun)
        summary = run_cases(cases, store, executor=executor, options=options, rerun=rerun,
                            allow_parallel_execute=allow_parallel_execute,
                            progress=make_progress(quiet or fmt == "json"), command=command,
                            context=context, name=run_name, resumes=resumes)
        if fmt == "json":  # the text output printed them before the run
            summary.warnings[:0] = warnings
        report_summary(store, summary, fmt, quiet, resume=resume_command(sys.argv[1:]), rerun=rerun)
    finally:
        store.close()


def _interrupted_run_named(store: Any, run_name: str | None, command: str, rerun: bool = False) -> int | None:
    """The run *run_name* names when it was interrupted while running this *command* (the run to
    resume: the new run takes its name; with *rerun* it computes every case again), else None when
    the name is new.

    Raises
    ------
    ExperimentError
        *run_name* names a run that was not interrupted (done, failed or still running), or one
        interrupted while running another command (another sweep would take its name).
    """
    held = None if run_name is None else store.run_named(run_name)
    if held is None:
        return None
    info = store.run_info(held)
    if info["status"] != "interrupted":
        raise ExperimentError(f"--name {run_name!r}: expected a new name, got one that already names run "
                              f"{held} (`suite results list`)")
    if info.get("command") and _sweep_of(info["command"]) != _sweep_of(command):
        raise ExperimentError(f"--name {run_name!r}: expected a new name or the command of interrupted run {held} "
                              f"(`{info['command']}`, which resumes it), got another command")
    how = ("--rerun: every case is computed again" if rerun else "stored cases are not computed again")
    click.echo(f"note: --name {run_name!r}: run {held} was interrupted; this run resumes it ({how}) and takes its "
               "name", err=True)
    return int(held)


#: the options of ``suite run`` that decide which cases a run holds and what it stores of them; the
#: others (``--rerun``, ``-j``, ``--executor``, ``--store``, ``--format``, ``-q``, ...) only decide how
#: it runs and reports, so a run resumed with another of those is still the same sweep
_SWEEP_OPTIONS = ("experiment", "entries", "technique", "category", "gpus", "run_name", "variants", "profiles",
                  "workloads", "params", "sets", "fidelities", "seeds", "max_cases", "artifacts", "profile_dirs")


def _sweep_of(command: str) -> Any:
    """What *command* (``suite run ...`` as a run stores it) sweeps: its :data:`_SWEEP_OPTIONS` as
    ``suite run`` parses them, a repeated option's values in any order (``--param a=1 --param b=2``
    is ``--param b=2 --param a=1``); its words as written when they do not parse."""
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes in a stored command: compared as written
        return [command]
    if words[:2] != ["suite", "run"]:
        return words
    run = main.get_command(click.Context(main), "run")
    try:
        got = run.make_context("run", words[2:], resilient_parsing=True).params if run is not None else None
    except click.ClickException:
        got = None
    if got is None:
        return words
    return {k: _values(k, v) for k, v in got.items() if k in _SWEEP_OPTIONS}


def _values(key: str, value: Any) -> Any:
    """One sweep option's value in a form that does not depend on how it was written: a list flag's
    names as a sorted tuple (``--variant x,y`` is ``--variant y --variant x``), a ``--param`` or
    ``--set``'s values per name, sorted (``a=1,2`` is ``a=2 --param a=1``), each once (``x,x`` is
    ``x``: the same cases); a value that does not parse, as written (sorted words)."""
    if not isinstance(value, tuple):
        return value
    try:
        if key in _LIST_FLAGS:
            return tuple(sorted(set(_split(value, key))))
        if key in ("params", "sets"):
            return tuple(sorted((k, tuple(sorted(set(v)))) for k, v in parse_assignments(value, key).items()))
    except ExperimentError:
        pass
    return tuple(sorted(map(str, value)))


def _expansion(context: Any, experiment: str | None, sw: dict[str, Any], max_cases: int, dry_run: bool,
               fmt: str) -> Any:
    """The cases of the command: an experiment file, a --category comparison or a sweep from flags
    (an object with ``cases``, ``notes``, ``warnings``).

    Raises
    ------
    ExperimentError
        Flags that do not go together (one line naming them).
    """
    from suite.runner.case import Resolver
    from suite.runner.experiment import expand_experiment

    resolver = Resolver(context=context)
    flags = any(sw[k] for k in ("technique", "category", "variants", "profiles", "workloads", "params", "sets",
                                "fidelities", "seeds"))
    if experiment and flags:
        raise ExperimentError("give an experiment file or sweep flags (--technique ...), not both")
    if sw["technique"] and sw["category"]:
        raise ExperimentError("give --technique or --category, not both")
    if sw["gpus"] is not None and not sw["category"]:
        raise ExperimentError("--gpus sets the scale of a --category comparison; give --category NAME")
    if sw["category"]:
        return _category_expansion(context, resolver, sw, max_cases)
    if experiment:
        return expand_experiment(experiment, context=context, resolver=resolver, only=sw["entries"] or None,
                                 max_cases=max_cases, stream=True)
    return _flags_expansion(context, resolver, _flags_entry(sw), max_cases, dry_run, fmt)


def _category_expansion(context: Any, resolver: Any, sw: dict[str, Any], max_cases: int) -> Any:
    from types import SimpleNamespace

    from suite.runner.category import expand_category

    if sw["variants"] or sw["entries"]:
        raise ExperimentError("--category runs every variant of each technique; --variant/--entry do not apply")
    base: dict[str, Any] = {k: _split(sw[k], k) for k in ("profiles", "workloads", "fidelities") if sw[k]}
    if sw["seeds"]:
        base["seeds"] = [int(s) for s in _split(sw["seeds"], "seeds")]
    if sw["sets"]:
        base["set"] = parse_assignments(sw["sets"], "--set")
    cases, notes, warns = expand_category(sw["category"], context=context, resolver=resolver, base=base,
                                          params=parse_assignments(sw["params"], "--param") if sw["params"] else None,
                                          max_cases=max_cases, gpus=sw["gpus"])
    return SimpleNamespace(cases=cases, notes=notes, warnings=warns)


def _flags_entry(sw: dict[str, Any]) -> dict[str, Any]:
    """The experiment entry the sweep flags describe (--technique, --variant, --param, --set, ...)."""
    if not sw["technique"]:
        raise ExperimentError("give an experiment file (e.g. `suite run smoke`), --technique NAME or "
                              "--category NAME")
    if sw["entries"]:
        raise ExperimentError("--entry needs an experiment file")
    entry: dict[str, Any] = {"technique": sw["technique"]}
    for key in ("variants", "profiles", "workloads", "fidelities", "seeds"):
        if sw[key]:
            entry[key] = _split(sw[key], key)
    if sw["seeds"]:
        try:
            entry["seeds"] = [int(s) for s in entry["seeds"]]
        except ValueError:
            raise ExperimentError(f"--seed: expected integers, got {','.join(sw['seeds'])!r}") from None
    if sw["params"]:
        entry["params"] = parse_assignments(sw["params"], "--param")
    if sw["sets"]:
        entry["set"] = parse_assignments(sw["sets"], "--set")
    return entry


def _flags_expansion(context: Any, resolver: Any, entry: dict[str, Any], max_cases: int, dry_run: bool,
                     fmt: str) -> Any:
    """The cases of a sweep from flags: streamed (resolved as the run goes, any size, flat memory)
    when it can be, else expanded; a dry run counts first (expanding a large sweep takes a while)."""
    from suite.runner.experiment import Expansion, count_entry, expand_entry, stream_entry, streamable

    if dry_run:
        n = count_entry(entry, context=context)
        if fmt != "json" and n > 10_000:  # a small sweep's count is the table's title
            click.echo(f"{n:,} case(s) in this sweep", err=True)
        if n > max_cases:
            raise ExperimentError(f"command line: expected at most {max_cases:,} cases (--max-cases), got a "
                                  f"sweep of {n:,} cases; narrow it or raise --max-cases")
    if streamable(entry):
        exp = Expansion(max_cases=max_cases)
        exp.cases = stream_entry(entry, where="command line", resolver=resolver, max_cases=max_cases)
        return exp
    return expand_entry(entry, where="command line", context=context, resolver=resolver,
                        expansion=Expansion(max_cases=max_cases))
