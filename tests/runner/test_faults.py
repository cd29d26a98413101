"""Fault injection (issue 43): the same attacks against every executor, the same outcome on each.

The hostile technique ``faulty`` (tests/runner/faultplugin.py) runs one sweep of healthy and
attacking cases on the local pool, ``--in-process`` (the attacks its docs promise to contain:
docs/security.md), dask (a loopback LocalCluster) and slurm (submitit's local mode). What must
hold on each: every attack is stored with the status of the table below and its one-line error,
and every healthy case is stored ``ok`` with its exact value ``y = x * 10`` (fake-cluster-a's
outer network is 10 Gbit/s), whatever case ran before it in the same process.

The local pool and ``--in-process`` run in the fast suite; dask and slurm start processes that
take seconds each on a loaded machine, so they are ``slow`` (CI runs them).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from suite.runner import ExecOptions, expand_entry, run_cases

HERE = Path(__file__).resolve().parent
GBIT = 10.0  # fake-cluster-a: outer network 10 Gbit/s

#: attack -> (status, the start of its stored error)
EXPECTED = {
    "abort": ("crashed", "worker process died (SIGABRT)"),
    "segfault": ("crashed", "worker process died (SIGSEGV)"),
    "hang_c": ("timeout", "timed out after"),
    "huge": ("failed", "MemoryError"),
    "nan": ("failed", "BadMetric: faulty: metric 'y' is nan (s): expected a finite number"),
    "negative": ("failed", "BadMetric: faulty: metric 'y' is -1 J: expected >= 0 for a quantity in J"),
    "mutate": ("failed", "InputMutated: faulty: the case changed its input profile.network[0].bandwidth"),
    "patch": ("failed", "BadMetric: faulty: metric 'y' is nan (s): expected a finite number (checked by the coordinator)"),
    "sigterm": ("crashed", "worker process died (SIGTERM)"),
    "kill9": ("crashed", "worker process died (SIGKILL)"),
}
#: what --in-process promises to contain (docs/security.md): faults raised in Python
IN_PROCESS = ("huge", "nan", "negative", "mutate", "patch")


@pytest.fixture
def faulty(monkeypatch):
    """A registry with only ``faulty``, importable by fresh processes (dask workers, submitit tasks)."""
    import faultplugin

    from suite.registry import Registry

    monkeypatch.setenv("SUITE_PROFILES", str(HERE / "profiles"))
    monkeypatch.setenv("PYTHONPATH", str(HERE) + ":" + __import__("os").environ.get("PYTHONPATH", ""))
    reg = Registry(entry_points_=[], modules=[("faulty", faultplugin)])
    monkeypatch.setattr("suite.context.default_registry", lambda strict=None: reg)
    return reg


def _sweep(attacks):
    """Each attack between healthy cases (x = 1..3 before, 4..6 after): a leak shows in a later case."""
    entries = [{"technique": "faulty", "params": {"x": [1, 2, 3], "attack": ["ok"]}}]
    for i, a in enumerate(attacks):
        entries.append({"technique": "faulty", "params": {"x": [100 + i], "attack": [a]}})
    entries.append({"technique": "faulty", "params": {"x": [4, 5, 6], "attack": ["ok"]}})
    cases = []
    for e in entries:
        cases += expand_entry(e).cases
    return cases


def _check(store, run_id, attacks):
    cases = store.cases(run_id)
    got = {}
    for _, r in cases.iterrows():
        got.setdefault(r["param.attack"], []).append((r["status"], r["error"], r["key"]))
    for a in attacks:
        (status, error, _key), = got[a]
        want_status, want_error = EXPECTED[a]
        assert (a, status) == (a, want_status), error
        assert error.startswith(want_error), (a, error)
        assert "\n" not in error
    m = store.metrics(run_id, wide=True)
    ok = m[m["param.attack"] == "ok"]
    assert sorted(ok["param.x"]) == [1, 2, 3, 4, 5, 6]
    assert list(ok["y"]) == [x * GBIT for x in ok["param.x"]]  # exact: no leak from an attack
    assert {s for s, _e, _k in got["ok"]} == {"ok"}


def _run(cases, tmp_path, name, executor="local", **opts):
    from suite.results import Store

    st = Store(tmp_path / f"{name}.sqlite")
    s = run_cases(cases, st, executor=executor, options=ExecOptions(**opts))
    return st, s


def test_local_pool_contains_every_attack(faulty, tmp_path):
    attacks = list(EXPECTED)
    st, s = _run(_sweep(attacks), tmp_path, "local", timeout=3.0)
    try:
        _check(st, s.run_id, attacks)
    finally:
        st.close()


def test_local_pool_hang_guard_without_timeout(faulty, tmp_path):
    """No --timeout: the default hang guard (here 2 s) stops a case hanging in C."""
    st, s = _run(_sweep(["hang_c"]), tmp_path, "guard", stall_timeout=2.0)
    try:
        (err,) = st.cases(s.run_id, status="timeout")["error"]
        assert err.startswith("stalled: no progress for 2 s")
        assert s.ok == 6
    finally:
        st.close()


def test_in_process_contains_what_its_docs_promise(faulty, tmp_path):
    attacks = list(IN_PROCESS)
    st, s = _run(_sweep(attacks), tmp_path, "inproc", isolate=False, timeout=3.0)
    try:
        _check(st, s.run_id, attacks)
    finally:
        st.close()


@pytest.mark.slow
def test_dask_contains_every_attack_like_the_local_pool(faulty, tmp_path):
    pytest.importorskip("distributed")
    attacks = list(EXPECTED)
    st, s = _run(_sweep(attacks), tmp_path, "dask", executor="dask", jobs=2, timeout=3.0)
    try:
        _check(st, s.run_id, attacks)
    finally:
        st.close()


@pytest.mark.slow
def test_slurm_contains_every_attack_like_the_local_pool(faulty, tmp_path):
    pytest.importorskip("submitit")
    import sys

    sys.path.insert(0, str(HERE.parents[1] / "plugins"))
    from suite_slurm.executor import SlurmExecutor

    attacks = list(EXPECTED)
    st, s = _run(_sweep(attacks), tmp_path, "slurm", executor=SlurmExecutor(), timeout=3.0,
                 executor_options={"cluster": "local", "folder": str(tmp_path / "slurm"), "tasks-size": "8"})
    try:
        _check(st, s.run_id, attacks)
    finally:
        st.close()
