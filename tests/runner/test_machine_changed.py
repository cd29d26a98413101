"""An execute case evaluated on another machine than the one that resolved it is stored failed.

An execute result is a timing of the machine that ran it, and its key holds the fingerprint of the
machine that *resolved* it (``machine:this``): on a remote executor (dask, slurm) a case resolved on
machine A and executed on machine B stored B's timing ``ok`` under A's key, served later on A as
A's. Here the remote machine is faked (its fingerprint monkeypatched after the cases resolved) and
the cases go through the loop a dask worker and a slurm task run: a supervised sandbox evaluating
them through the local pool (:func:`suite.runner.sandbox.run_sandboxed`).
"""

from __future__ import annotations

import pytest

from suite.context import Context
from suite.runner import dependencies

OTHER = "feedfacefeedface"  # machine B's fingerprint
OTHER_TEXT = "aarch64, Neoverse-V2, 72 CPUs, 480.0 GiB"


def _cases():
    from suite.runner import ExecOptions, expand_entry
    from suite.runner.dask_executor import _Batches

    exp = expand_entry({"technique": "fake", "variants": ["base"], "fidelities": ["model", "execute"]},
                       context=Context.build())
    return list(_Batches(None, exp.cases, ExecOptions()).by_key.values())


def _sandboxed(cases):
    from suite.runner import ExecOptions, sandbox

    outs = sandbox.run_sandboxed(sandbox.pack(cases), [c.key for c in cases], ExecOptions(jobs=1))
    return {o["key"]: o for o in outs}


def test_an_execute_case_run_on_another_machine_is_failed_and_a_model_case_is_not(monkeypatch, fake_registry):
    cases = _cases()
    here = dependencies.machine_fingerprint()
    monkeypatch.setattr(dependencies, "machine_fingerprint", lambda: OTHER)  # the sandbox and its pool: machine B
    monkeypatch.setattr(dependencies, "machine_description", lambda: OTHER_TEXT)
    outs = _sandboxed(cases)
    by_fid = {c.fidelity: outs[c.key] for c in cases}
    (ex,) = [c for c in cases if c.fidelity == "execute"]
    assert ex.inputs == {"machine:this": here}
    assert (by_fid["execute"]["status"], by_fid["execute"]["metrics"]) == ("failed", None)
    assert by_fid["execute"]["error"] == (
        f"MachineChanged: resolved on machine {here}, executed on machine {OTHER} ({OTHER_TEXT}) (key {ex.key}): an "
        "execute case is a timing of the machine its key names: run with an executor on the machine that resolves, or "
        "on workers of the same machine type (architecture, CPU model and count, memory)")
    # a model case depends on the profile only: y = x n * 10 Gbit/s (fake-cluster-a), x = n = 1 (fakeplugin.y_of)
    assert by_fid["model"]["status"] == "ok"
    assert dict((m[0], m[1]) for m in by_fid["model"]["metrics"])["y"] == pytest.approx(10.0)


def test_on_the_resolving_machine_the_execute_case_is_stored_ok(fake_registry):
    cases = _cases()
    outs = _sandboxed(cases)
    (ex,) = [c for c in cases if c.fidelity == "execute"]
    assert outs[ex.key]["status"] == "ok"
    assert dict((m[0], m[1]) for m in outs[ex.key]["metrics"])["t"] == pytest.approx(10.0)


def test_the_machine_is_described_by_what_its_fingerprint_hashes(monkeypatch):
    dependencies._machine.cache_clear()
    monkeypatch.setattr(dependencies, "_machine", lambda: ("aarch64", "Neoverse-V2", "72", str(480 * 2**30), "72"))
    assert dependencies.machine_description() == OTHER_TEXT


def test_a_process_limited_to_fewer_cpus_is_another_machine(monkeypatch):
    """An execute timing taken with 2 copy threads on 2 cores was served to `taskset -c 0 suite run`
    (one usable core, where the case skips: "2 copy threads > 1 usable cores"): the fingerprint held
    the logical CPU count only. The CPUs the process may run on are in it now."""
    import os

    if not hasattr(os, "sched_getaffinity"):
        pytest.skip("no CPU affinity on this platform")

    def fresh():
        dependencies._machine.cache_clear()
        dependencies.machine_fingerprint.cache_clear()
        return dependencies.machine_fingerprint(), dependencies.machine_description()

    try:
        full, _ = fresh()
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0})
        one, text = fresh()
        monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(os.cpu_count() or 1)))
        assert fresh()[0] == full  # every CPU usable: this machine's fingerprint as before the limit
        assert (one != full and "(1 usable)" in text) or (os.cpu_count() == 1 and one == full)
    finally:
        monkeypatch.undo()
        fresh()


def test_a_cgroup_cpu_quota_counts_as_fewer_usable_cpus(tmp_path, monkeypatch):
    """`docker --cpus=1` leaves the affinity at every CPU: the fingerprint did not see the quota (a
    second reader). cgroup v2's cpu.max: quota and period in microseconds, or "max" for none."""
    files = {"one": "100000 100000\n", "half": "50000 100000\n", "one-and-a-half": "150000 100000\n",
             "none": "max 100000\n", "bad": "oops\n"}
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    got = {name: dependencies.cgroup_cpus(str(tmp_path / name)) for name in files}
    assert got == {"one": 1, "half": 1, "one-and-a-half": 2, "none": None, "bad": None}
    assert dependencies.cgroup_cpus(str(tmp_path / "absent")) is None
    try:
        dependencies._machine.cache_clear()
        monkeypatch.setattr(dependencies, "cgroup_cpus", lambda: 1)
        assert dependencies._machine()[4] == "1"
    finally:
        monkeypatch.undo()
        dependencies._machine.cache_clear()
        dependencies.machine_fingerprint.cache_clear()
