"""The ``suite`` command.

Each command group lives in its own module of this package and registers itself on
:data:`main` (plugins/techniques/info here; hardware, workloads, run/results/compare/report,
reproduce, validate, plugin in their modules). Every command: ``--help``, a non-zero exit on
failure, errors as one line (traceback with ``--debug``), and a machine-readable output option.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from suite.cli.common import _NO_ARGS_IS_HELP, SuiteGroup, usage_error

__all__ = ["main", "entry"]


class _Commands(SuiteGroup):
    """The top-level group: a command's module is imported when that command is asked for
    (:data:`COMMANDS`), so a command's start-up imports only its own (~20-40 ms of click options
    and imports for the other ten); listing the commands (``suite --help``) imports them all."""

    def make_context(self, info_name: str | None, args: list[str], parent: click.Context | None = None,
                     **extra: Any) -> click.Context:
        """The top-level context; a bad option of ``suite`` itself is one line, as a subcommand's."""
        try:
            return super().make_context(info_name, args, parent, **extra)
        except _NO_ARGS_IS_HELP:
            raise
        except click.UsageError as exc:
            usage_error(exc, info_name or "suite")

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        _register_commands(COMMANDS.get(cmd_name, ()))
        return super().get_command(ctx, cmd_name)

    def list_commands(self, ctx: click.Context) -> list[str]:
        _register_commands()
        return super().list_commands(ctx)


@click.group(cls=_Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
@click.option("--debug", is_flag=True, help="Show full tracebacks on error.")
@click.option("--strict-plugins", is_flag=True,
              help="Fail if any plugin is quarantined (also SUITE_STRICT_PLUGINS=1).")
@click.version_option(package_name="dlsys-suite", prog_name="suite")
@click.pass_context
def main(ctx: click.Context, debug: bool, strict_plugins: bool) -> None:
    """dlsys-suite: re-implemented distributed-DL and HPC systems techniques, predicted on declared
    hardware and checked against their papers.

    \b
    Start here:
      suite techniques              what is installed
      suite reproduce               every paper claim: the paper's number beside ours
      suite run --technique poseidon --profile titan-x-maxwell-16n-10gbe --workload vgg19-22k
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug or os.environ.get("SUITE_DEBUG") == "1"
    # the command's one context (plugins, profiles, workloads) is built on first use by
    # suite.cli.common.get_context and passed down from there
    ctx.obj["strict"] = True if strict_plugins else None


#: each command -> the modules of this package that register it (and its subcommands) on :data:`main`
COMMANDS: dict[str, tuple[str, ...]] = {
    "plugins": ("plugins",), "techniques": ("plugins",), "info": ("plugins",), "hardware": ("hardware",),
    "workloads": ("workloads",), "run": ("run",), "results": ("results", "export"), "compare": ("compare",),
    "report": ("report",), "reproduce": ("reproduce",), "validate": ("validate",), "plugin": ("plugin_new",),
}


def _register_commands(modules: tuple[str, ...] | None = None) -> None:
    """Import *modules* of this package (default: every command's), each registering its commands."""
    import importlib

    for mod in sorted({m for ms in COMMANDS.values() for m in ms}) if modules is None else modules:
        try:
            importlib.import_module(f"suite.cli.{mod}")
        except ModuleNotFoundError as exc:
            if exc.name != f"suite.cli.{mod}":
                raise


def entry() -> None:
    """Console-script entry point: accepts ``--debug`` and ``--strict-plugins`` anywhere on the
    command line (``suite info x --debug`` as well as ``suite --debug info x``)."""
    from suite.deprecation import show_removals

    show_removals()
    args = sys.argv[1:]
    front = [a for a in args if a in ("--debug", "--strict-plugins")]
    rest = [a for a in args if a not in ("--debug", "--strict-plugins")]
    try:
        main.main(args=front + rest, prog_name="suite")
    except SystemExit as done:
        _exit_leaving_threads(done.code)
        raise


def _exit_leaving_threads(code: Any) -> None:
    """End the process at once with *code* (a :class:`SystemExit`'s) when threads that are not
    daemons are still running: plugin code run in this process (``--in-process``, or at import)
    left them, and Python would wait for each before exiting (a 30 s sleep held the prompt 30 s
    after the run's summary). They are named in a ``note:`` line; ``atexit`` handlers still run.
    Returns (nothing to do) when no such thread runs."""
    import threading

    left = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon and t.is_alive()]
    if not left:
        return
    import atexit

    if code is not None and not isinstance(code, int):  # SystemExit("message"): printed, status 1
        print(code, file=sys.stderr)
    names = ", ".join(repr(t.name) for t in left)
    print(f"note: exiting without waiting for {len(left)} thread{'s' if len(left) != 1 else ''} that plugin "
          f"code left running in this process: {names}", file=sys.stderr)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code if isinstance(code, int) else 0 if code is None else 1)


if __name__ == "__main__":  # pragma: no cover
    entry()
