"""A real dask cluster, started the way a user starts one: ``dask scheduler`` and two ``dask
worker`` processes on loopback, then ``suite run ... --executor dask --scheduler tcp://...``.

One worker is killed (SIGKILL to its whole process group: nanny and worker) while it holds a
chunk of cases; the scheduler moves its work to the other worker, and the store must equal a
local run of the same sweep case for case. Every wait is on an explicit condition (the
scheduler file, the workers registered, a task in flight, a case stored), never a fixed sleep.
Starting the cluster and its three processes takes 10-30 s of waiting on a loaded machine, so
that test is ``slow``; its fast twin (first below) runs the executor's own code against a client
that loses one batch as a killed worker does (``distributed.KilledWorker``), in this process.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakedask import LostBatchClient, run_on_fake_dask
from storetable import store_table
from suite.context import Context

pytest.importorskip("distributed", reason="the dask executor needs dask.distributed (extra [dask])")

HERE = Path(__file__).resolve().parent
PROFILES = HERE / "profiles"
BIN = Path(sys.executable).parent


def stored_count(path: Path) -> int:
    if not path.exists():
        return 0
    conn = sqlite3.connect(path, timeout=5)
    try:
        return conn.execute("SELECT count(*) FROM cases").fetchone()[0]
    except sqlite3.OperationalError:  # schema not created yet
        return 0
    finally:
        conn.close()


def plugin_env(tmp_path: Path) -> dict[str, str]:
    """A user who installed the fake technique as a plugin on every machine: its dist-info (entry
    point) and module on PYTHONPATH, for the CLI, the scheduler and the workers alike."""
    site = tmp_path / "site"
    dist = site / "fake_suite_plugin-0.1.dist-info"
    dist.mkdir(parents=True, exist_ok=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-suite-plugin\nVersion: 0.1\n")
    (dist / "entry_points.txt").write_text("[suite.plugins]\nfake = fakeplugin\n")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(site)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["SUITE_PROFILES"] = str(PROFILES)
    env.pop("SUITE_STORE", None)
    return env


def wait_for(pred, timeout: float, what: str, every: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def _kill_group(p: subprocess.Popen) -> None:
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:  # pragma: no cover
        pass


@pytest.fixture
def dask_cluster(tmp_path, request):
    """``dask scheduler`` + two ``dask worker`` processes on 127.0.0.1; yields (address, workers, env).
    Parametrized indirectly with N: the workers run with ``FAKE_GATE=tmp_path/gate:N`` (fakeplugin)."""
    env = plugin_env(tmp_path)
    if getattr(request, "param", None) is not None:
        env["FAKE_GATE"] = f"{tmp_path / 'gate'}:{request.param}"
    sched_file = tmp_path / "scheduler.json"
    procs: list[subprocess.Popen] = []
    logs = []

    def start(*args: str) -> subprocess.Popen:
        log = open(tmp_path / f"dask-{len(procs)}.log", "w")
        logs.append(log)
        # a session of its own, so the whole `dask worker` (nanny and worker) can be killed at once
        p = subprocess.Popen([str(BIN / "dask"), *args], env=env, stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
        procs.append(p)
        return p

    try:
        # port 0: the scheduler picks a free port and writes its address to the scheduler file
        sched = start("scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard",
                      "--scheduler-file", str(sched_file))

        def address():
            assert sched.poll() is None, (tmp_path / "dask-0.log").read_text()
            try:
                return json.loads(sched_file.read_text())["address"]
            except (OSError, ValueError, KeyError):
                return None

        addr = wait_for(address, 120, "the dask scheduler's address file")
        assert addr.startswith("tcp://127.0.0.1:")
        workers = [start("worker", addr, "--nthreads", "1", "--nworkers", "1", "--no-dashboard", "--name", f"w{i}")
                   for i in range(2)]
        from distributed import Client

        with Client(addr, timeout="60s") as client:
            client.wait_for_workers(2, timeout=120)
        yield addr, workers, env
    finally:
        for p in reversed(procs):
            _kill_group(p)
        for log in logs:
            log.close()


def test_a_batch_lost_with_its_dask_worker_is_rerun_case_by_case_and_equals_a_local_run(tmp_path, monkeypatch,
                                                                                        fake_registry):
    """The fast twin of the killed-worker test below: the batch whose worker dies is re-run case by
    case (DaskExecutor._worker_died) and the store equals a local run's, case for case; a case that
    is running each time a worker dies (max_worker_deaths = 2) is stored crashed, alone."""
    from suite.results import Store
    from suite.runner import ExecOptions, expand_entry, run_cases

    n = 16
    exp = expand_entry({"technique": "fake", "variants": ["base", "fast"], "params": {"n": list(range(1, n // 2 + 1))}},
                       context=Context.build())
    client = LostBatchClient()
    s = run_on_fake_dask(tmp_path, monkeypatch, client, exp.cases, "dask")
    assert (s.total, s.computed, s.ok) == (n, n, n)
    (lost,) = client.lost
    assert len(lost) > 1 and [[k] for k in lost] == [b for b in client.submitted if len(b) == 1]
    with Store(tmp_path / "local.sqlite") as local:
        assert run_cases(exp.cases, local, options=ExecOptions(jobs=2), context=Context.build()).ok == n
    ours, theirs = store_table(tmp_path / "dask.sqlite"), store_table(tmp_path / "local.sqlite")
    assert len(ours) == n and ours == theirs
    # y = x * n * factor (1 base, 2 fast) * 10 (fake-cluster-a's 10 Gbit/s), from fakeplugin.y_of
    for key, (status, _err, metrics, _samples, _art) in ours.items():
        case = next(c for c in exp.cases if c.key == key)
        y = dict((m[0], m[1]) for m in metrics)["y"]
        assert status == "ok" and y == pytest.approx(case.params["n"] * (2 if case.variant == "fast" else 1) * 10)
    # the case on the worker each time one dies: crashed after the second death, the others ok
    victim = exp.cases[3].key
    killer = LostBatchClient(kill_on=victim)
    s = run_on_fake_dask(tmp_path, monkeypatch, killer, exp.cases, "dask-twice")
    assert (s.ok, s.by_status.get("crashed")) == (n - 1, 1)
    assert [b for b in killer.lost if len(b) == 1] == [[victim], [victim]]
    err = store_table(tmp_path / "dask-twice.sqlite")[victim][1]
    assert err.startswith("dask worker lost while running this case (2 times; not tried again): KilledWorker")


@pytest.mark.slow
def test_a_sweep_on_a_real_dask_cluster_survives_a_killed_worker(tmp_path, dask_cluster, fake_registry):
    from distributed import Client

    addr, workers, env = dask_cluster
    n = 160
    sweep = ["run", "-t", "fake", "--variant", "base,fast", "--param", f"n={','.join(map(str, range(1, n // 2 + 1)))}",
             "--param", "delay=0.03", "-q"]
    store = tmp_path / "dask.sqlite"
    run = subprocess.Popen([str(BIN / "suite"), *sweep, "--executor", "dask", "--scheduler", addr,
                            "--store", str(store)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    killed = None
    try:
        with Client(addr, timeout="60s") as client:
            pids = client.run(os.getpid)  # worker address -> its process id
            sessions = {os.getsid(pid): a for a, pid in pids.items()}

            def busy_worker():  # mid-run: cases stored, and a worker holding a chunk in flight
                assert run.poll() is None, run.communicate()
                if stored_count(store) == 0:
                    return None
                busy = [a for a, keys in client.processing().items() if keys]
                return busy[0] if busy else None

            victim = wait_for(busy_worker, 300, "a stored case and a worker with cases in flight")
            killed = next(p for p in workers if sessions.get(p.pid) == victim)
            os.killpg(killed.pid, signal.SIGKILL)  # the nanny and its worker, as if the machine died
            killed.wait(30)
            out, err = run.communicate(timeout=600)
            # the scheduler dropped the killed worker; the survivor is the one left
            wait_for(lambda: list(client.scheduler_info()["workers"]) == [a for a in pids if a != victim], 60,
                     "the scheduler to drop the killed worker")
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
    assert run.returncode == 0, err
    assert f"{n} case(s), 0 already stored, {n} computed; {n} ok" in out + err
    # the oracle: the same sweep run locally (in this process's registry of the fake plugin)
    from suite.context import Context
    from suite.results import Store
    from suite.runner import ExecOptions, expand_entry, run_cases

    exp = expand_entry({"technique": "fake", "variants": ["base", "fast"],
                        "params": {"n": list(range(1, n // 2 + 1)), "delay": [0.03]}}, context=Context.build())
    local = Store(tmp_path / "local.sqlite")
    summary = run_cases(exp.cases, local, options=ExecOptions(jobs=2), context=Context.build())
    local.close()
    assert summary.ok == n
    ours, theirs = store_table(store), store_table(tmp_path / "local.sqlite")
    assert len(ours) == n and ours == theirs
    # and the values are the fake technique's closed form (fakeplugin.y_of): y = x * n * factor,
    # factor 1 (base) or 2 (fast), times 10 for fake-cluster-a's 10 Gbit/s network
    conn = sqlite3.connect(store)
    rows = conn.execute("SELECT c.variant, c.params, m.value FROM cases c JOIN metrics m ON m.case_key = c.key "
                        "WHERE m.name = 'y'").fetchall()
    conn.close()
    assert len(rows) == n
    for variant, params, y in rows:
        assert y == pytest.approx(1.0 * json.loads(params)["n"] * (2 if variant == "fast" else 1) * 10, rel=1e-12)


@pytest.mark.slow
@pytest.mark.parametrize("dask_cluster", [8], indirect=True)
def test_ctrl_c_on_a_real_dask_cluster_stores_the_cases_its_batches_finished(tmp_path, dask_cluster, fake_registry):
    """16 cases in 4 striped batches of 4 (n = i+1, i+5, i+9, i+13), one running on each of the 2
    workers at a time; n <= 8 finish at once, n > 8 wait for the gate (the workers' FAKE_GATE), so
    no batch can end: Ctrl-C once the workers hold the 4 cases their 2 batches finished stores
    those 4 (0.3.11: none), and the resume computes only the other 12
    (test_dask_interrupt.py is the fast twin)."""
    from distributed import Client

    addr, _workers, env = dask_cluster
    store = tmp_path / "dask.sqlite"
    cmd = [str(BIN / "suite"), "run", "-t", "fake", "--variant", "base", "--param",
           f"n={','.join(map(str, range(1, 17)))}", "-q", "--executor", "dask", "--scheduler", addr, "--store", str(store)]
    run = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finished_on_workers():  # runs on each worker (client.run)
        from suite.runner.dask_executor import _FINISHED

        return sum(len(v) for v in list(_FINISHED.values()))

    try:
        with Client(addr, timeout="60s") as client:
            def all_open_cases_done():
                assert run.poll() is None, run.communicate()
                return sum(client.run(finished_on_workers).values()) == 4

            wait_for(all_open_cases_done, 120, "the workers to finish 4 open cases", every=0.1)
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=120)
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
        (tmp_path / "gate").touch()
    assert run.returncode == 130, err
    conn = sqlite3.connect(store)
    rows = conn.execute("SELECT c.params, c.status, m.value FROM cases c JOIN metrics m ON m.case_key = c.key "
                        "WHERE m.name = 'y'").fetchall()
    conn.close()
    # y = x * n * 10 (x = 1, base, fake-cluster-a's 10 Gbit/s: fakeplugin.y_of)
    got = sorted((json.loads(p)["n"], st, y) for p, st, y in rows)
    assert len(got) == 4 and got == [(n, "ok", 10.0 * n) for n, _st, _y in got] and got[-1][0] <= 8
    again = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert "16 case(s), 4 already stored, 12 computed; 12 ok" in again.stdout + again.stderr


def test_one_connection_serves_every_chunk_of_a_run_and_closes_with_it(tmp_path, monkeypatch, fake_registry):
    """run_cases calls map_cases once per chunk: the executor connects once (a LocalCluster
    started per chunk took seconds each), and the connection is closed when the run ends, or at
    once when the run is stopped early. Closed by the run even while something else still holds the
    executor it made: a dask time-out's traceback cycle held the frame of its run, so a real
    LocalCluster (its worker processes, its threads) lived on until the next full collection."""
    import suite.runner.engine as engine
    from suite.results import Store
    from suite.runner import ExecOptions, expand_entry, run_cases
    from suite.runner.dask_executor import DaskExecutor

    made = []  # what the traceback cycle did: a reference to the executor run_cases makes
    monkeypatch.setattr(engine, "get_executor", lambda name, context=None: made.append(DaskExecutor()) or made[-1])

    class Counted(LostBatchClient):
        closed = 0

        def close(self):
            self.closed += 1

    opened: list[Counted] = []

    def connect(self, options):
        opened.append(Counted(lose_first=False))
        return opened[-1], None

    monkeypatch.setattr(DaskExecutor, "_connect", connect)
    monkeypatch.setattr("dask.distributed.wait", lambda futs, timeout=None, return_when=None: (set(futs), set()))
    exp = expand_entry({"technique": "fake", "variants": ["base", "fast"], "params": {"n": list(range(1, 9))}},
                       context=Context.build())
    with Store(tmp_path / "chunks.sqlite") as st:
        s = run_cases(exp.cases, st, executor="dask", options=ExecOptions(scheduler="tcp://127.0.0.1:0"),
                      context=Context.build(), chunk_size=5)  # 16 cases: chunks of 5, 10 (a chunk doubles) and 1
    assert s.ok == 16 and len(made) == 1 and len(opened) == 1 and opened[0].closed == 1
    # the chunk of 5 in stripes of at most ceil(5 / (2 workers x 2)) = 2 cases: 2, 2, 1; the chunk of
    # 10 in stripes of at most ceil(10 / 4) = 3: 3, 3, 2, 2; the last chunk 1
    assert sorted(len(b) for b in opened[0].submitted) == [1, 1, 2, 2, 2, 2, 3, 3]
    # stopped after its first outcome: closed then, not at the end of the consumer
    ex = DaskExecutor()
    gen = ex.map_cases(exp.cases, ExecOptions(scheduler="tcp://127.0.0.1:0"))
    next(gen)
    gen.close()
    assert len(opened) == 2 and opened[1].closed == 1 and ex._held == {}


def test_a_run_with_execute_cases_keeps_one_connection_per_phase(tmp_path, monkeypatch, fake_registry):
    """The execute phase runs with one job (one case at a time, clean timings): its LocalCluster is
    its own, kept for the whole run like the parallel phase's, not started again for each chunk
    (the second read found 2 + 1 connections per chunk: [2, 1, 2, 1, 2, 1] for three chunks)."""
    from suite.results import Store
    from suite.runner import ExecOptions, expand_entry, run_cases
    from suite.runner.dask_executor import DaskExecutor

    class Cluster:
        closed = 0

        def close(self):
            self.closed += 1

    jobs: list[int] = []
    clusters: list[Cluster] = []

    def connect(self, options):
        jobs.append(options.jobs)
        clusters.append(Cluster())
        return LostBatchClient(lose_first=False), clusters[-1]

    monkeypatch.setattr(DaskExecutor, "_connect", connect)
    monkeypatch.setattr("dask.distributed.wait", lambda futs, timeout=None, return_when=None: (set(futs), set()))
    # per variant its 4 model cases, then its 4 execute cases: the chunks of 5 and 10 hold both phases
    exp = expand_entry({"technique": "fake", "variants": ["base", "fast"], "fidelities": ["model", "execute"],
                        "params": {"n": list(range(1, 5))}}, context=Context.build())
    with Store(tmp_path / "phases.sqlite") as st:
        s = run_cases(exp.cases, st, executor="dask", options=ExecOptions(jobs=2), context=Context.build(),
                      chunk_size=5)  # 16 cases in chunks of 5, 10 and 1, each with model and execute cases
    assert s.ok == 16
    assert jobs == [2, 1]  # one LocalCluster of 2 workers, one of 1: each opened once for the run
    assert [c.closed for c in clusters] == [1, 1]  # both closed when the run ended
