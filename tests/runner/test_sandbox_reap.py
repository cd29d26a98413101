"""The sandbox of a remote batch (:func:`suite.runner.sandbox.run_sandboxed`, what a dask worker and a
slurm task run) is reaped before the call returns (its exit is waited for on its pidfd, not in
10 ms sleeps), never left behind as a zombie; one that owes outcomes is killed first
(tests/runner/test_faults.py and the dask tests cover what those cases store)."""

from __future__ import annotations

import os

import pytest
from suite.context import Context

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc/self"), reason="reads a process's state in /proc")


def _state(pid: int) -> str | None:
    """The process's state letter ('Z': exited, not reaped), None once it is reaped."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return None


def test_a_sandbox_that_reported_every_case_is_reaped_before_the_call_returns(monkeypatch, fake_registry):
    from suite.runner import ExecOptions, expand_entry, sandbox
    from suite.runner.dask_executor import _Batches

    exp = expand_entry({"technique": "fake", "variants": ["base"], "params": {"n": [1, 2, 3]}}, context=Context.build())
    cases = list(_Batches(None, exp.cases, ExecOptions()).by_key.values())
    boxes: list = []

    class Seen(sandbox._Sandbox):
        def __init__(self, *a):
            super().__init__(*a)
            boxes.append(self)

    monkeypatch.setattr(sandbox, "_Sandbox", Seen)
    outs = list(sandbox.run_sandboxed(sandbox.pack(cases), [c.key for c in cases], ExecOptions(jobs=1)))
    # y = x * n * 1 (base) * 10 (fake-cluster-a's 10 Gbit/s), x = 1: fakeplugin.y_of
    got = {o["key"]: (o["status"], dict((m[0], m[1]) for m in o["metrics"])["y"]) for o in outs}
    assert got == {c.key: ("ok", pytest.approx(10.0 * c.params["n"])) for c in cases}
    (box,) = boxes
    assert os.WIFEXITED(box.status) and os.WEXITSTATUS(box.status) == 0  # its exit status was collected
    assert _state(box.pid) is None, "the sandbox was left a zombie"
