"""A bad option or argument is one line, as every other error of the command (README: "every error
is one line"); click's own display was three ("Usage: ...", "Try ...", "Error: ..."), found by a
newcomer's `suite run -j 0`."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize("args, line", [
    (["run", "-j", "0"], "error: Invalid value for '-j' / '--jobs': 0 is not in the range x>=1. (`suite run --help`)"),
    (["hardware", "show"], "error: Missing argument 'NAME'. (`suite hardware show --help`)"),
    # an option missing its value carries no context of its own: the subcommand's help, not the group's
    (["results", "show", "--format"], "error: Option '--format' requires an argument. (`suite results show --help`)"),
    (["run", "--name"], "error: Option '--name' requires an argument. (`suite run --help`)"),
    (["--bogus"], "error: No such option '--bogus'. (`suite --help`)"),  # the top-level group's own option
])
def test_a_usage_error_is_one_line_naming_the_help(suite_cli, args, line):
    r = suite_cli(*args, prog_name="suite")
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [line]


def test_a_group_without_a_subcommand_shows_its_help(suite_cli):
    r = suite_cli("hardware", prog_name="suite")
    assert r.output.startswith("Usage: suite hardware [OPTIONS] COMMAND [ARGS]...")
    assert "error:" not in r.output
