"""Shared CLI helpers: one-line errors, output formats, the console."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import click

from suite.errors import SuiteError
from suite.frozen import loaded_numpy

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["SuiteGroup", "format_option", "emit", "console", "fail", "markdown_table"]


#: click >= 8.2 raises this UsageError for a group given no subcommand, to show the group's help
_NO_ARGS_IS_HELP: Any = getattr(click.exceptions, "NoArgsIsHelpError", ())


def usage_error(exc: click.UsageError, where: str) -> NoReturn:
    """Print a bad option or argument as one line naming the command's help (*where*: its command
    path, when the error carries no context of its own) and exit with click's status (2)."""
    path = exc.ctx.command_path if exc.ctx is not None else where
    click.echo(f"error: {exc.format_message()} (`{path} --help`)", err=True)
    sys.exit(exc.exit_code)


class SuiteGroup(click.Group):
    """A click group whose commands print :class:`SuiteError` (and any other error) as one line."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _NO_ARGS_IS_HELP:  # a group run with no subcommand: its help, as click shows it
            raise
        except click.UsageError as exc:  # a bad option or argument: one line, as every other error
            sub = ctx.invoked_subcommand
            usage_error(exc, f"{ctx.command_path} {sub}" if exc.ctx is None and sub else ctx.command_path)
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException, SystemExit):
            raise
        except KeyboardInterrupt:
            click.echo("interrupted", err=True)
            sys.exit(130)
        except BrokenPipeError:  # `suite ... | head`: the reader left; not an error of ours
            import os

            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            sys.exit(0)
        except Exception as exc:  # noqa: BLE001 - the one place errors become exit codes
            debug = bool((ctx.obj or {}).get("debug"))
            if debug:
                raise
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            if not isinstance(exc, SuiteError):
                msg = f"{type(exc).__name__}: {msg} (add --debug for the traceback)"
            click.echo(f"error: {msg}", err=True)
            sys.exit(2 if isinstance(exc, SuiteError) else 1)


F = TypeVar("F", bound=Callable[..., Any])


def format_option(*choices: str, default: str = "table") -> Callable[[F], F]:
    return click.option("--format", "fmt", type=click.Choice(list(choices)), default=default,
                        show_default=True, help="Output format.")


def console(width: int | None = None) -> "Console":
    """A rich console; when output is not a terminal (a pipe, a file, CI logs) it is 160 columns
    wide unless COLUMNS says otherwise (or *width* when given), so tables are not squeezed to 80 and
    cut. Every string it renders (a table cell, a header, a printed line) passes through
    :func:`suite.textsafe.visible`: a plugin's control characters show as ``\\x1b``, never act."""
    import os

    from rich.console import Console
    from rich.text import Text

    from suite.textsafe import visible

    class _VisibleConsole(Console):
        def render_str(self, text: str, **kwargs: Any) -> Text:
            return super().render_str(visible(text), **kwargs)

    if width is None and not sys.stdout.isatty() and "COLUMNS" not in os.environ:
        width = 160
    return _VisibleConsole(highlight=False, soft_wrap=False, width=width)


def echo(text: str, err: bool = False, nl: bool = True) -> None:
    """``click.echo`` of text that holds a plugin's (a scenario, an error, a note, the scoreboard):
    its control characters are shown by :func:`suite.textsafe.visible`, as :func:`console` shows
    them (click strips ANSI sequences only when the output is not a terminal)."""
    from suite.textsafe import visible

    click.echo(visible(text), err=err, nl=nl)


def get_context(profile_dirs: tuple[str | Path, ...] = ()) -> Any:
    """This command's :class:`suite.context.Context`: built once (the plugins are loaded and their
    hooks called then), kept on the click context, and passed down explicitly from here.
    *profile_dirs* (``--profiles DIR``) gives a view with more profile folders, same plugins."""
    from suite.context import Context

    cctx = click.get_current_context(silent=True)
    root = cctx.find_root() if cctx is not None else None
    obj = root.obj if root is not None and isinstance(root.obj, dict) else None
    ctx = obj.get("context") if obj is not None else None
    if ctx is None:
        ctx = Context.build(strict=obj.get("strict") if obj is not None else None,
                            debug=bool(obj.get("debug")) if obj is not None else False)
        if obj is not None:
            obj["context"] = ctx
    return ctx.with_profile_dirs(tuple(profile_dirs))


def warn_quarantined() -> None:
    """One line on stderr per quarantined plugin, so a technique never vanishes silently, and per
    plugin problem that does not quarantine it yet (:attr:`suite.registry.Registry.notes`). A
    plugin whose technique module is imported on first use (``lazy_hook``) is quarantined then:
    commands call this after asking for their techniques."""
    reg = get_context().registry
    for p in reg.quarantined():
        echo(f"warning: plugin {p.name!r} ({p.distribution}) is quarantined: {p.reason} "
             f"(see `suite plugins`)", err=True)
    for note in reg.notes:
        echo(f"warning: {note}", err=True)


def _finite_json(obj: Any) -> Any:
    import math

    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite_json(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite_json(v) for v in obj]
    np = loaded_numpy()
    if np is not None and isinstance(obj, np.generic):
        return _finite_json(obj.item())
    return obj


def strict_json(obj: Any, **kwargs: Any) -> str:
    """JSON that any parser reads: NaN and infinities become null (never ``NaN``/``Infinity``)."""
    kwargs.setdefault("default", str)
    return json.dumps(_finite_json(obj), allow_nan=False, **kwargs)


def emit(rows: list[dict[str, Any]], fmt: str, columns: list[str] | None = None, title: str | None = None) -> None:
    """Print rows as a rich table, JSON or CSV."""
    columns = columns or (list(rows[0]) if rows else [])
    if fmt == "json":
        click.echo(strict_json(rows, indent=2))
        return
    if fmt == "csv":
        import csv

        from suite.textsafe import csv_cell

        w = csv.DictWriter(sys.stdout, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: csv_cell(v) for k, v in r.items()})
        return
    from rich.table import Table

    t = Table(title=title, show_lines=False)
    for i, c in enumerate(columns):
        # the first column is the name people copy: never cut it; others wrap rather than truncate
        t.add_column(c, no_wrap=(i == 0), overflow="fold")
    for r in rows:
        t.add_row(*[_cell(r.get(c)) for c in columns])
    console().print(t)


def markdown_table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    """A GitHub-flavoured Markdown table of *rows* (one line each) under *columns*, cells as ``str``."""
    out = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
    out += ["| " + " | ".join(str(r[c]) for c in columns) + " |" for r in rows]
    return "\n".join(out)


def _cell(v: Any) -> str:
    from rich.markup import escape

    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}"
    if isinstance(v, (list, tuple)):
        return escape(", ".join(map(str, v)))
    return escape(str(v))


def fail(msg: str, code: int = 2) -> NoReturn:
    from suite.errors import SuiteError

    raise SuiteError(msg)
