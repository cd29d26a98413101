"""An interrupted run says how to resume it. "Run the same command again" is wrong for a command with
``--rerun`` (it would recompute every stored case) or ``--name`` (the interrupted run holds the name,
so the same command stops at once with "expected a new name"); found by a newcomer's Ctrl-C."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from suite.cli.run import report_summary, resume_command


@pytest.mark.parametrize("args, resume", [
    (["run", "smoke", "-j", "1"], None),  # the same command resumes
    (["run", "smoke", "-j", "1", "--rerun", "--name", "intr"], "suite run smoke -j 1"),
    (["run", "--name=my run", "--technique", "poseidon"], "suite run --technique poseidon"),
    (["run", "sweep.toml", "--rerun", "--set", "network.-1.bandwidth=7 Gbit/s"],
     "suite run sweep.toml --set 'network.-1.bandwidth=7 Gbit/s'"),
])
def test_the_resuming_command_drops_rerun_and_name(args, resume):
    assert resume_command(args) == resume


def test_an_interrupted_run_prints_the_resuming_command(capsys):
    summary = SimpleNamespace(interrupted=True, failures=[], warnings=[], failed=0, run_id=3,
                              message=lambda: "interrupted: run 3 stored 5 new case(s) in s.sqlite; run the same "
                                              "command again to resume (stored cases are not recomputed)")
    with pytest.raises(SystemExit) as ex:
        report_summary(None, summary, "table", quiet=True, resume="suite run smoke -j 1")
    assert ex.value.code == 130
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == ("to resume, without --rerun and --name (the interrupted run keeps its name): "
                                    "suite run smoke -j 1")
