"""An interrupted run says how to resume it. "Run the same command again" is wrong for a command with
``--rerun`` (it would recompute every stored case); found by a newcomer's Ctrl-C. A ``--name`` stays in
the command: the resuming run takes the name from the interrupted run (a later tryout)."""

from __future__ import annotations

import pytest

from suite.cli.run import report_summary, resume_command
from suite.runner.engine import RunSummary


@pytest.mark.parametrize("args, resume", [
    (["run", "smoke", "-j", "1"], None),  # the same command resumes
    (["run", "smoke", "-j", "1", "--rerun", "--name", "intr"], "suite run smoke -j 1 --name intr"),
    (["run", "--name=p2", "--technique", "poseidon"], None),
    (["run", "sweep.toml", "--rerun", "--set", "network.-1.bandwidth=7 Gbit/s"],
     "suite run sweep.toml --set 'network.-1.bandwidth=7 Gbit/s'"),
])
def test_the_resuming_command_drops_rerun(args, resume):
    assert resume_command(args) == resume


def test_an_interrupted_run_prints_the_resuming_command(capsys):
    summary = RunSummary(run_id=3, store="s.sqlite", computed=5, interrupted=True)
    with pytest.raises(SystemExit) as ex:
        report_summary(None, summary, "table", quiet=True, resume="suite run smoke -j 1", rerun=True)
    assert ex.value.code == 130
    assert capsys.readouterr().err.splitlines() == [
        "interrupted: run 3 stored 5 new case(s) in s.sqlite; resume with `suite run smoke -j 1` (stored cases "
        "are not recomputed)",
        "  (a case the interrupted run did not reach keeps its earlier result, if it has one: the same command "
        "with --rerun computes every case again)"]
