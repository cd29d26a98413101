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
        (tmp_path / name).mkdir()
        (tmp_path / name / "cpu.max").write_text(text)
    got = {name: dependencies.cgroup_cpus(str(tmp_path / name), "0::/\n") for name in files}
    assert got == {"one": 1, "half": 1, "one-and-a-half": 2, "none": None, "bad": None}
    assert dependencies.cgroup_cpus(str(tmp_path / "absent"), "0::/\n") is None
    try:
        dependencies._machine.cache_clear()
        monkeypatch.setattr(dependencies, "cgroup_cpus", lambda: 1)
        assert dependencies._machine()[4] == "1"
    finally:
        monkeypatch.undo()
        dependencies._machine.cache_clear()
        dependencies.machine_fingerprint.cache_clear()


def _cgroups(root, quotas):
    """A fake cgroup v2 mount under *root*: ``{"a/b": "cpu.max text"}`` (``""``: the root's own)."""
    for where, text in quotas.items():
        (root / where).mkdir(parents=True, exist_ok=True)
        (root / where / "cpu.max").write_text(text)
    return str(root)


# /proc/self/cgroup of a hybrid host (v1 controllers, then the v2 line) and of a pure v2 one
_HYBRID = "4:memory:/x\n1:cpu:/\n0::/system.slice/job.scope\n"
_V2 = "0::/system.slice/job.scope\n"


@pytest.mark.parametrize("quotas, cpus", [
    # only the top of the hierarchy limits (a container with its own cgroup namespace, as before)
    ({"": "200000 100000\n"}, 2),
    # the process's own cgroup is tighter than its slice and the top: 1.5 CPUs -> 2
    ({"": "400000 100000\n", "system.slice": "300000 100000\n",
      "system.slice/job.scope": "150000 100000\n"}, 2),
    # the slice (1 CPU) binds though the process's own cgroup allows 4; the root has no cpu.max
    ({"system.slice": "100000 100000\n", "system.slice/job.scope": "400000 100000\n"}, 1),
    # periods differ: 25000/50000 = 0.5 CPU beats 300000/100000 = 3 -> 1 (rounded up)
    ({"system.slice": "25000 50000\n", "system.slice/job.scope": "300000 100000\n"}, 1),
    # no quota anywhere on the path
    ({"": "max 100000\n", "system.slice": "max 100000\n", "system.slice/job.scope": "max 100000\n"}, None),
    # a quota on a sibling cgroup is not this process's
    ({"system.slice/other.scope": "100000 100000\n", "system.slice/job.scope": "max 100000\n"}, None),
])
def test_the_tightest_cpu_quota_on_the_process_cgroup_path_binds(tmp_path, quotas, cpus):
    """cgroup_cpus read /sys/fs/cgroup/cpu.max only: a systemd slice or nested container limited to
    1 CPU (its cgroup is named in /proc/self/cgroup) counted as unlimited, and its timings shared the
    key of the unlimited machine. The kernel applies every quota from the root to the process's cgroup."""
    root = _cgroups(tmp_path, quotas)
    assert dependencies.cgroup_cpus(root, _V2) == cpus
    assert dependencies.cgroup_cpus(root, _HYBRID) == cpus


@pytest.mark.parametrize("text", ["", "garbage\n", "1:cpu:/system.slice/job.scope\n", "0:/system.slice\n",
                                  "\x00\xff::/\n"])
def test_no_cgroup_v2_line_means_no_quota(tmp_path, text):
    """Without a ``0::/PATH`` line (cgroup v1 only, or unreadable text) no quota is known: None, even
    with a 1-CPU cpu.max on every level of the fake mount."""
    root = _cgroups(tmp_path, {"": "100000 100000\n", "system.slice": "100000 100000\n"})
    assert dependencies.cgroup_cpus(root, text) is None


def test_a_cgroup_path_outside_the_mount_counts_the_top_only(tmp_path):
    """``0::/../x`` (a cgroup outside this namespace's view) never reads a file above the mount."""
    (tmp_path / "cpu.max").write_text("100000 100000\n")  # above the mount: must not be read
    root = _cgroups(tmp_path / "mnt", {"": "300000 100000\n"})
    assert dependencies.cgroup_cpus(root, "0::/../\n") == 3
    assert dependencies.cgroup_cpus(root, "0::/../x\n") == 3
