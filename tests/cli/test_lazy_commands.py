"""The top-level group imports a command's module when the command is asked for (issue 44: every
command imported all eleven command modules, ~20-40 ms of its start-up); `suite --help` lists
them all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_PROBE = """
import json, sys
import click
from suite.cli import main, COMMANDS
before = sorted(m for m in sys.modules if m.startswith("suite.cli."))
run = main.get_command(click.Context(main), "run")
after_run = sorted(m for m in sys.modules if m.startswith("suite.cli."))
listed = main.list_commands(click.Context(main))
print(json.dumps([before, after_run, run.name, listed, sorted(COMMANDS)]))
"""


def test_a_command_imports_its_own_module_and_the_listing_every_one():
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, cwd=ROOT, check=True)
    before, after_run, name, listed, mapped = json.loads(out.stdout)
    assert before == ["suite.cli.common"]
    assert after_run == ["suite.cli.common", "suite.cli.run"] and name == "run"
    # every command a module registers is in the map (a command missing from it would be found
    # only by `suite --help`), and nothing else is
    assert listed == mapped == ["compare", "hardware", "info", "plugin", "plugins", "report", "reproduce", "results", "run",
                                "techniques", "validate", "workloads"]


def test_results_gets_its_export_subcommand_without_the_listing():
    probe = ("import json, click\nfrom suite.cli import main\n"
             "g = main.get_command(click.Context(main), 'results')\n"
             "print(json.dumps(sorted(g.list_commands(click.Context(g)))))\n")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    assert "export" in json.loads(out.stdout)
