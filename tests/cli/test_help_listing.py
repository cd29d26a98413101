"""`suite --help` lists each command with a summary a reader can finish."""

from __future__ import annotations

import click

from suite.cli import main


def _commands(group: click.Group, ctx: click.Context) -> list[tuple[str, click.Command]]:
    return [(name, group.get_command(ctx, name)) for name in group.list_commands(ctx)]  # type: ignore[misc]


def test_no_command_summary_is_cut_inside_parentheses() -> None:
    # click cuts a docstring's summary at its first period: "... (path or shipped name, e.g." was
    # what `suite --help` showed for `run` before it got its own short help
    ctx = click.Context(main)
    for name, cmd in _commands(main, ctx):
        short = cmd.get_short_help_str(limit=1000)  # the first sentence, as a wide terminal shows it
        assert short.count("(") == short.count(")") or short.endswith("..."), (name, short)
        assert not short.rstrip(".").endswith(("e.g", "i.e")), (name, short)
