"""Every command that runs techniques says which plugins are quarantined (a hostile trial found
`suite run` and `suite reproduce` silent with four broken plugins installed: a technique vanished
and the run exited 0)."""

from __future__ import annotations

import types

from click.testing import CliRunner

from suite import hookimpl
from suite.cli import main
from suite.context import Context
from suite.registry import Registry


def _broken() -> types.ModuleType:
    @hookimpl
    def suite_techniques():
        raise RuntimeError("kaput")

    mod = types.ModuleType("brokenplugin")
    mod.suite_techniques = suite_techniques
    return mod


def test_run_and_reproduce_warn_about_a_quarantined_plugin(tmp_path):
    context = Context.build(registry=Registry(modules=[("brokenplugin", _broken())]))
    line = ("warning: plugin 'brokenplugin' (<in-process>) is quarantined: suite_techniques() failed: "
            "RuntimeError: kaput (see `suite plugins`)")
    for args in (["run", "-t", "poseidon", "--variant", "ps", "--param", "nodes=2", "--dry-run"],
                 ["reproduce", "poseidon", "--store", str(tmp_path / "s.sqlite"), "--format", "json"],
                 ["info", "poseidon"], ["techniques"]):
        result = CliRunner().invoke(main, args, obj={"context": context})
        assert result.exit_code == 0, (args, result.output)
        assert line in result.stderr.splitlines(), (args, result.stderr)
