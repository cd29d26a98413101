"""The ``slurm`` executor (plugins/suite_slurm) through submitit.

Runs use submitit's LocalExecutor (``--slurm-cluster local``): every array task is a real
subprocess (``python -m submitit.core._submit``), exactly the program a SLURM node runs, so no
SLURM is needed. The sbatch script is checked through submitit's real SlurmExecutor with a fake
``srun``/``sbatch`` on PATH that records what it is given.

The oracle of every run is a local run (``--executor local``) of the same sweep: the stores must
agree case for case (status, error, metrics, samples, artifacts).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from storetable import store_table
from suite.context import Context

pytest.importorskip("submitit", reason="the slurm executor needs submitit (extra [slurm])")

HERE = Path(__file__).resolve().parent
PROFILES = HERE / "profiles"


# --------------------------------------------------------------------------- helpers


def plugin_env(tmp_path: Path) -> dict[str, str]:
    """The environment of a user who installed the fake technique as a plugin: a dist-info with
    its entry point on PYTHONPATH (so the CLI, the array tasks and dask workers all find it)."""
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


def suite_cmd(*args: str) -> list[str]:
    """The ``suite`` command of this environment, as a user types it."""
    return [str(Path(sys.executable).parent / "suite"), *args]


def jobs_of(folder: Path) -> list[int]:
    """Process ids of the array tasks (and their controllers) working in *folder*."""
    out = []
    needle = str(folder).encode()
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            cmd = (d / "cmdline").read_bytes()
        except OSError:
            continue
        if needle in cmd and b"submitit" in cmd:
            out.append(int(d.name))
    return out


def kill_jobs(folder: Path) -> None:
    for pid in jobs_of(folder):
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def wait_for(pred, timeout: float, what: str, every: float = 0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = pred()
        if got:
            return got
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def outcome_lines(folder: Path) -> list[dict]:
    out = []
    for p in sorted((folder / "outcomes").glob("*.jsonl")):
        for line in p.read_text().splitlines():
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


class InProcessJob:
    """An array task that already ended, as SlurmExecutor reads a submitit Job: done, a state, an id
    and the folder of its logs (removed by the executor when the job reported every case)."""

    def __init__(self, job_id: str, folder: Path, state: str = "FINISHED"):
        self.job_id, self.state = job_id, state
        folder.mkdir(parents=True, exist_ok=True)
        self.paths = type("Paths", (), {"folder": folder, "stderr": folder / f"{job_id}_0_log.err",
                                        "stdout": folder / f"{job_id}_0_log.out"})()

    def done(self) -> bool:
        return True

    def cancel(self, check: bool = False) -> None:
        pass


class InProcessArray:
    """submitit's executor as SlurmExecutor uses it, with each array task run at once in this process
    by the executor's own task program (``run_task``: the sandbox fork, the local pool, one outcome
    line appended per finished case): the runs of the tests below without the seconds of starting
    ``python -m submitit.core._submit`` per task. ``stop_after[i] = n``: task i's job ends after its
    first n outcomes (a job killed mid-task leaves exactly those lines)."""

    def __init__(self, folder: Path, stop_after: dict[int, int] | None = None):
        self.folder, self.stop_after, self.tasks = folder, stop_after if stop_after is not None else {}, 0
        (folder / "outcomes").mkdir(parents=True, exist_ok=True)

    def update_parameters(self, **kwargs) -> None:
        pass

    def map_array(self, fn, paths, payloads, options) -> list[InProcessJob]:
        jobs = []
        for path, payload, opts in zip(paths, payloads, options):
            i, self.tasks = self.tasks, self.tasks + 1
            fn(path, payload, opts)
            if i in self.stop_after:
                lines = Path(path).read_text().splitlines(keepends=True)
                Path(path).write_text("".join(lines[:self.stop_after[i]]))
            jobs.append(InProcessJob(f"{1000 + i}", self.folder / "jobs" / f"{1000 + i}"))
        return jobs


def in_process_arrays(monkeypatch, **kwargs) -> list[InProcessArray]:
    """Make SlurmExecutor submit to :class:`InProcessArray` (one per executor it asks for)."""
    from suite_slurm.executor import SlurmExecutor

    made: list[InProcessArray] = []

    def make(self, opts, folder, gpus):
        made.append(InProcessArray(folder, **kwargs))
        return made[-1]

    monkeypatch.setattr(SlurmExecutor, "_make_executor", make)
    return made


# --------------------------------------------------------------------------- options, grouping


def test_options_are_parsed_and_bad_ones_named():
    from suite.errors import SuiteError
    from suite_slurm.executor import OPTIONS, SlurmOptions, parse_options

    o = parse_options({"partition": "gpu", "time": "30", "array_parallelism": "64", "tasks-size": "25",
                       "gpus-per-task": "1", "cluster": "local"})
    assert (o.partition, o.time, o.array_parallelism, o.tasks_size, o.gpus_per_task, o.cluster) == \
        ("gpu", 30, 64, 25, 1, "local")
    assert parse_options({}) == SlurmOptions()
    # every documented option is a field of SlurmOptions with the same default
    assert {k.replace("-", "_"): d for k, (_t, d, _h) in OPTIONS.items()} == \
        {f: getattr(SlurmOptions(), f) for f in SlurmOptions.__dataclass_fields__}
    for raw, msg in [({"partitio": "x"}, "--slurm-partitio: unknown option of executor slurm"),
                     ({"time": "half"}, "--slurm-time: expected an integer, got 'half'"),
                     ({"tasks-size": "0"}, "--slurm-tasks-size: expected an integer >= 1, got 0"),
                     ({"cluster": "pbs"}, "--slurm-cluster: expected one of slurm, local, got 'pbs'")]:
        with pytest.raises(SuiteError, match="^" + msg):
            parse_options(raw)


def test_executor_options_on_the_command_line():
    """``--executor E --E-NAME VALUE`` reaches executor E as ``-X NAME=VALUE``; nothing else moves."""
    import click

    from suite.cli.run import rewrite_executor_args

    args = ["-t", "fake", "--executor", "slurm", "--slurm-partition", "gpu", "--slurm-time=30", "-j", "2",
            "--param", "n=1"]
    assert rewrite_executor_args(args) == ["-t", "fake", "--executor", "slurm", "-X", "partition=gpu",
                                           "-X", "time=30", "-j", "2", "--param", "n=1"]
    assert rewrite_executor_args(["--executor=slurm", "--slurm-gpus-per-task", "1"]) == \
        ["--executor=slurm", "-X", "gpus-per-task=1"]
    # the built-in executors take no such options: a --dask-... flag stays an unknown option
    assert rewrite_executor_args(["--executor", "dask", "--dask-x", "1"]) == ["--executor", "dask", "--dask-x", "1"]
    with pytest.raises(click.UsageError, match="--slurm-time: expected a value"):
        rewrite_executor_args(["--executor", "slurm", "--slurm-time"])


def _help_in_a_new_process(args):
    return subprocess.run([str(Path(sys.executable).parent / "suite"), *args], capture_output=True, text=True,
                          timeout=120)


def _help_forked(args):
    """The same command in a child forked from this process (tests/forkrun.py): the epilog the
    help sets on the click command stays in the child, as in a process of its own."""
    import forkrun

    return forkrun.run(forkrun.suite_main, args, timeout=120)


@pytest.mark.parametrize("run", [pytest.param(_help_in_a_new_process, marks=pytest.mark.slow), _help_forked],
                         ids=["process", "fork"])
def test_executor_help_lists_the_plugin_executors_options(run):
    result = run(["run", "--executor", "slurm", "--help"])
    assert result.returncode == 0, result.stderr
    assert "Options of executor slurm (or -X NAME=VALUE):" in result.stdout
    for name in ("partition", "time", "array-parallelism", "tasks-size", "gpus-per-task", "cluster"):
        assert f"--slurm-{name} " in result.stdout


def test_executor_option_errors_are_one_line(fake_registry):
    from suite.cli.run import executor_settings
    from suite.errors import SuiteError
    import suite_slurm
    from plugin_context import plugin_context

    reg = plugin_context(("slurm", suite_slurm))
    assert executor_settings("slurm", ("partition=gpu", "time=30"), reg) == {"partition": "gpu", "time": "30"}
    with pytest.raises(SuiteError, match="executor 'local' takes no options; given partition"):
        executor_settings("local", ("partition=gpu",), reg)
    with pytest.raises(SuiteError, match="expected NAME=VALUE"):
        executor_settings("slurm", ("partition",), reg)
    with pytest.raises(SuiteError, match="--slurm-array-parallelism: expected an integer >= 1, got 0"):
        executor_settings("slurm", ("array-parallelism=0",), reg)


@pytest.fixture
def fake_cases(fake_registry):
    from suite.context import Context
    from suite.runner import expand_entry

    ctx = Context.build()

    def make(n: int, fidelity: str = "model", **params):
        entry = {"technique": "fake", "variants": ["base"], "fidelities": [fidelity],
                 "params": {"n": list(range(1, n + 1)), **{k: [v] for k, v in params.items()}}}
        return expand_entry(entry, context=ctx).cases

    return make


def test_tasks_group_cases_in_order_and_keep_execute_cases_apart(fake_cases):
    from suite_slurm.executor import group_tasks

    model, execute = fake_cases(23), fake_cases(5, fidelity="execute")
    mixed = model[:12] + execute + model[12:]
    tasks = group_tasks(mixed, 10)
    # 23 model cases in tasks of 10, 10, 3; the 5 execute cases in a task of their own
    assert [len(t) for t in tasks] == [10, 10, 3, 5]
    assert [c.key for t in tasks[:3] for c in t] == [c.key for c in model]
    assert [c.key for c in tasks[3]] == [c.key for c in execute]


# --------------------------------------------------------------------------- sbatch


def test_sbatch_script_asks_for_partition_time_array_and_gpus(tmp_path, monkeypatch, fake_cases):
    """Through submitit's real SlurmExecutor: a fake sbatch records the script it is given."""
    from suite.runner.executors import ExecOptions
    from suite_slurm.executor import SlurmExecutor, _Task, _Tail, parse_options

    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "srun").write_text("#!/bin/sh\nexit 0\n")
    (bin_ / "sbatch").write_text(f'#!/bin/sh\ncp "$1" "{tmp_path}/script.$$.sh"\necho "Submitted batch job 4242"\n')
    for f in ("srun", "sbatch"):
        (bin_ / f).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    opts = parse_options({"partition": "P", "time": "30", "array-parallelism": "64", "gpus-per-task": "1",
                          "tasks-size": "10", "cpus-per-task": "4", "folder": str(tmp_path / "f")})
    ex = SlurmExecutor()
    cases = fake_cases(23) + fake_cases(12, fidelity="execute")
    by_key = {c.key: c for c in cases}
    from suite_slurm.executor import group_tasks

    tasks = [_Task(i, [c.key for c in t], tmp_path / f"{i}.jsonl", _Tail(tmp_path / f"{i}.jsonl"))
             for i, t in enumerate(group_tasks(cases, opts.tasks_size))]
    payload = {t.index: [by_key[k] for k in t.keys] for t in tasks}
    active: list = []
    ex._submit(list(tasks), active, payload, {}, ExecOptions(), opts, tmp_path / "f", by_key)
    scripts = sorted(tmp_path.glob("script.*.sh"), key=lambda p: p.stat().st_mtime)
    assert len(scripts) == 2  # one array of 3 model tasks, one of 2 execute tasks
    model, execute = (p.read_text() for p in scripts)
    for text, n in ((model, 3), (execute, 2)):
        assert "#SBATCH --partition=P" in text
        assert "#SBATCH --time=30" in text
        assert f"#SBATCH --array=0-{n - 1}%{n}" in text  # min(tasks, array-parallelism 64)
        assert "#SBATCH --cpus-per-task=4" in text
        assert "submitit.core._submit" in text
    assert "--gpus-per-task" not in model
    assert "#SBATCH --gpus-per-task=1" in execute
    assert sorted(t.job.job_id for t in active) == ["4242_0", "4242_0", "4242_1", "4242_1", "4242_2"]


def test_more_tasks_than_an_array_holds_go_in_several_arrays_sharing_the_parallelism(tmp_path, monkeypatch,
                                                                                      fake_cases):
    from suite.runner.executors import ExecOptions
    from suite_slurm.executor import SlurmExecutor, _Task, _Tail, group_tasks, parse_options

    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "srun").write_text("#!/bin/sh\nexit 0\n")
    (bin_ / "sbatch").write_text(f'#!/bin/sh\ncp "$1" "{tmp_path}/script.$$.sh"\necho "Submitted batch job 7"\n')
    for f in ("srun", "sbatch"):
        (bin_ / f).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    opts = parse_options({"array-parallelism": "4", "tasks-size": "1", "folder": str(tmp_path / "f")})
    ex = SlurmExecutor()
    ex.max_array_size = 2
    cases = fake_cases(5)
    by_key = {c.key: c for c in cases}
    tasks = [_Task(i, [c.key for c in t], tmp_path / f"{i}.jsonl", _Tail(tmp_path / f"{i}.jsonl"))
             for i, t in enumerate(group_tasks(cases, opts.tasks_size))]
    active: list = []
    ex._submit(list(tasks), active, {t.index: [by_key[k] for k in t.keys] for t in tasks}, {}, ExecOptions(), opts,
               tmp_path / "f", by_key)
    arrays = sorted(line for p in tmp_path.glob("script.*.sh") for line in p.read_text().splitlines()
                    if line.startswith("#SBATCH --array"))
    # 5 tasks in arrays of 2, 2 and 1 (a single task is a plain job); 4 // 3 arrays = 1 at a time each
    assert arrays == ["#SBATCH --array=0-1%1", "#SBATCH --array=0-1%1"]
    assert len(list(tmp_path.glob("script.*.sh"))) == 3 and len(active) == 5


def test_no_srun_is_one_clear_line(tmp_path, monkeypatch, fake_cases):
    from suite.errors import SuiteError
    from suite.runner.executors import ExecOptions
    from suite_slurm.executor import SlurmExecutor

    monkeypatch.setenv("PATH", str(tmp_path))  # no srun
    with pytest.raises(SuiteError, match="no SLURM here: --slurm-cluster local"):
        SlurmExecutor().map_cases(fake_cases(2), ExecOptions(executor_options={"folder": str(tmp_path / "f")}))


# --------------------------------------------------------------------------- real task subprocesses


def _local_opts(folder: Path, **kw) -> dict[str, str]:
    return {"cluster": "local", "folder": str(folder), "array-parallelism": "2", **{k: str(v) for k, v in kw.items()}}


#: the array tasks as submitit's LocalExecutor runs them (a subprocess each: slow) or in this process
TASKS = [pytest.param("submitit", marks=pytest.mark.slow), "in-process"]


@pytest.mark.parametrize("tasks", TASKS)
def test_submitit_local_run_equals_local_run_with_a_crashing_case(tmp_path, monkeypatch, fake_cases, tasks):
    from suite.results import Store
    from suite.runner import ExecOptions, run_cases
    from suite_slurm.executor import SlurmExecutor

    monkeypatch.setenv("PYTHONPATH", str(HERE))  # the array tasks import the fake plugin
    if tasks == "in-process":
        in_process_arrays(monkeypatch)
    # 30 model cases, one that aborts its worker, one that raises, and 3 execute-fidelity cases
    # (their own phase and tasks; their raw samples travel back too)
    cases = fake_cases(30) + fake_cases(1, mode="abort") + fake_cases(1, mode="raise") + \
        fake_cases(3, fidelity="execute")
    stores = {}
    for name, executor, opts in [("local", "local", ExecOptions(jobs=2)),
                                 ("slurm", SlurmExecutor(), ExecOptions(executor_options=_local_opts(tmp_path / "f",
                                                                                             **{"tasks-size": 16})))]:
        st = Store(tmp_path / f"{name}.sqlite")
        s = run_cases(cases, st, executor=executor, options=opts, context=Context.build())
        st.close()
        assert (s.computed, s.ok, s.by_status.get("crashed"), s.by_status.get("failed")) == (35, 33, 1, 1), name
        stores[name] = store_table(tmp_path / f"{name}.sqlite")
    assert stores["slurm"] == stores["local"]
    samples = [v[3] for v in stores["slurm"].values() if v[3]]
    assert len(samples) == 3 and all(len(x) == 3 for x in samples)  # t: [y, 1.01 y, 0.99 y] per execute case
    crashed = [v for v in stores["slurm"].values() if v[0] == "crashed"]
    assert crashed[0][1] == "worker process died (SIGABRT) while running this case"
    # a complete run leaves no outcome files and no job folders of finished jobs behind
    assert list((tmp_path / "f" / "outcomes").iterdir()) == []
    # nor the empty folder named by the template itself ("%j": submitit's local controller makes it)
    assert list((tmp_path / "f" / "jobs").iterdir()) == []
    assert jobs_of(tmp_path / "f") == []


@pytest.mark.parametrize("tasks", TASKS)
def test_a_killed_task_costs_only_its_unfinished_cases_and_the_next_run_reruns_them(tmp_path, monkeypatch,
                                                                                     fake_cases, tasks):
    import threading

    from suite.results import Store
    from suite.runner import ExecOptions, run_cases
    from suite_slurm.executor import SlurmExecutor

    monkeypatch.setenv("PYTHONPATH", str(HERE))
    folder = tmp_path / "f"
    # one task of 12 cases of 0.3 s: still running when killed (in this process: its job ends after 2)
    cases = fake_cases(12, delay=0.3 if tasks == "submitit" else 0.0)
    killed: list[int] = []

    def kill_task_after_two_outcomes():
        wait_for(lambda: len(outcome_lines(folder)) >= 2, 120, "two outcomes of the array task")
        for pid in jobs_of(folder):  # the task, not its controller: SLURM killing the job step
            if b"submitit.core._submit" in Path(f"/proc/{pid}/cmdline").read_bytes():
                os.kill(pid, signal.SIGKILL)
                killed.append(pid)

    killer = threading.Thread(target=kill_task_after_two_outcomes, daemon=True)
    if tasks == "submitit":
        killer.start()
    else:
        stop = {0: 2}  # every array made reads this one dict
        in_process_arrays(monkeypatch, stop_after=stop)
        killed.append(0)
    st = Store(tmp_path / "slurm.sqlite")
    try:
        s1 = run_cases(cases, st, executor=SlurmExecutor(),
                       options=ExecOptions(executor_options=_local_opts(folder, **{"tasks-size": 12})),
                       context=Context.build())
        if tasks == "submitit":
            killer.join(30)
        else:  # the second run's task is not stopped
            stop.clear()
        assert killed, "the array task was not found running"
        unfinished = s1.by_status.get("crashed", 0)
        assert 1 <= unfinished <= 10 and s1.ok == 12 - unfinished  # >= 2 were reported before the kill
        errors = {f["error"] for f in s1.failures}
        assert len(errors) == 1 and "ended before this case finished; `suite run` again reruns it" in errors.pop()
        kept_log = [p for p in (folder / "jobs").iterdir() if p.name != "%j"]
        assert len(kept_log) == 1  # the killed job's folder (its logs) is kept
        s2 = run_cases(cases, st, executor=SlurmExecutor(),
                       options=ExecOptions(executor_options=_local_opts(folder, **{"tasks-size": 12})),
                       context=Context.build())
        assert (s2.cached, s2.computed, s2.ok) == (12 - unfinished, unfinished, unfinished)
    finally:
        st.close()
        kill_jobs(folder)
    local = Store(tmp_path / "local.sqlite")
    run_cases(cases, local, options=ExecOptions(jobs=2), context=Context.build())
    local.close()
    assert store_table(tmp_path / "slurm.sqlite") == store_table(tmp_path / "local.sqlite")


@pytest.mark.slow
def test_a_time_limited_task_costs_only_its_unfinished_cases(tmp_path, monkeypatch, fake_cases):
    """--slurm-time 1 on the local cluster: submitit signals the task 30 s before its 60 s limit
    (its signal_delay_s), the task stops, its unfinished cases are stored crashed and the next run
    computes exactly them."""
    from suite.results import Store
    from suite.runner import ExecOptions, run_cases
    from suite_slurm.executor import SlurmExecutor

    monkeypatch.setenv("PYTHONPATH", str(HERE))
    folder = tmp_path / "f"
    cases = fake_cases(45, delay=1.0)  # 45 s of work in one task: past the signal at 30 s
    st = Store(tmp_path / "slurm.sqlite")
    try:
        s1 = run_cases(cases, st, executor=SlurmExecutor(),
                       options=ExecOptions(executor_options=_local_opts(folder, **{"tasks-size": 45, "time": 1})),
                       context=Context.build())
        unfinished = s1.by_status.get("crashed", 0)
        assert 1 <= unfinished < 45 and s1.ok == 45 - unfinished
        assert all("ended before this case finished" in f["error"] for f in s1.failures)
        s2 = run_cases(cases, st, executor=SlurmExecutor(),
                       options=ExecOptions(executor_options=_local_opts(folder, **{"tasks-size": 45})),
                       context=Context.build())
        assert (s2.computed, s2.ok) == (unfinished, unfinished)
    finally:
        st.close()
        kill_jobs(folder)


# --------------------------------------------------------------------------- a killed coordinator


def _run_killed_coordinator_sweep(tmp_path: Path, n: int, size: int, delay: float) -> None:
    env = plugin_env(tmp_path)
    folder = tmp_path / "slurm"
    exp = tmp_path / "sweep.toml"
    # n - 1 ordinary cases and one that aborts its worker (a crashing case)
    exp.write_text(f"""
[sweep]
technique = "fake"
variants = ["base"]
params = {{ n = {list(range(1, n))}, delay = [{delay}] }}

[crash]
technique = "fake"
variants = ["base"]
params = {{ n = [{n}], mode = ["abort"] }}
""")
    slurm = ["--executor", "slurm", "--slurm-cluster", "local", "--slurm-folder", str(folder),
             "--slurm-tasks-size", str(size), "--slurm-array-parallelism", "2", "--slurm-time", "30", "-q"]
    store = tmp_path / "slurm.sqlite"
    coordinator = subprocess.Popen(suite_cmd("run", str(exp), "--store", str(store), *slurm), env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # mid-run: the tasks have written outcomes (some are stored, most are not yet)
        wait_for(lambda: coordinator.poll() is not None or len(outcome_lines(folder)) >= size + 1, 300,
                 "the first array task's outcomes")
        assert coordinator.poll() is None, f"the run ended before it could be killed: {coordinator.communicate()}"
        coordinator.kill()  # SIGKILL: no finally, no cancel; its tasks run on as orphans (as on a cluster)
        coordinator.wait(30)
        # the orphaned tasks finish and leave their outcomes in the folder
        wait_for(lambda: not jobs_of(folder), 300, "the orphaned array tasks to finish")
        left = {o["key"] for o in outcome_lines(folder) if o["status"] == "ok"}
        stored = {k for k, v in store_table(store).items() if v[0] == "ok"} if store.exists() else set()
        assert left - stored, "nothing was left for the next run to reuse"
        second = subprocess.run(suite_cmd("run", str(exp), "--store", str(store), *slurm), env=env,
                                capture_output=True, text=True, timeout=600)
        assert second.returncode == 1, second.stderr  # 1: the aborting case is stored as crashed
        said = second.stdout + second.stderr
        assert f"slurm: reused {len(left - stored)} outcome(s)" in said
        assert f"{n} case(s), {len(stored)} already stored, {n - len(stored)} computed; {n - 1 - len(stored)} ok, " \
               f"1 failed (1 crashed)" in said
    finally:
        if coordinator.poll() is None:
            coordinator.kill()
        coordinator.communicate()
        kill_jobs(folder)
    local = subprocess.run(suite_cmd("run", str(exp), "--store", str(tmp_path / "local.sqlite"), "-j", "2", "-q"),
                           env=env, capture_output=True, text=True, timeout=600)
    assert local.returncode == 1, local.stderr
    ours, theirs = store_table(store), store_table(tmp_path / "local.sqlite")
    assert len(ours) == n and ours == theirs
    assert sorted(v[0] for v in ours.values()).count("crashed") == 1
    assert list((folder / "outcomes").iterdir()) == []  # the reused outcome files were removed


def _sixteen_slow_cases(tmp_path, env, folder, **popen):
    """``suite run`` of 16 one-second fake cases on submitit's local cluster, in two tasks of 8,
    started in the background (its output piped)."""
    return subprocess.Popen(suite_cmd("run", "-t", "fake", "--variant", "base", "--param",
                                      f"n={','.join(map(str, range(1, 17)))}", "--param", "delay=1.0",
                                      "--store", str(tmp_path / "s.sqlite"), "--executor", "slurm",
                                      "--slurm-cluster", "local", "--slurm-folder", str(folder),
                                      "--slurm-tasks-size", "8", "-q"),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **popen)


@pytest.mark.slow  # passes alone and with tests/runner + tests/results, exits 0 instead of 130 after
# the whole suite (order-dependent, cause not found in 0.2.0: see CHANGELOG); run with -m slow
def test_ctrl_c_of_the_coordinator_cancels_its_jobs(tmp_path):
    env = plugin_env(tmp_path)
    folder = tmp_path / "slurm"
    run = _sixteen_slow_cases(tmp_path, env, folder)
    try:
        wait_for(lambda: run.poll() is not None or outcome_lines(folder), 300, "the first outcome")
        assert run.poll() is None, run.communicate()
        run.send_signal(signal.SIGINT)
        out, err = run.communicate(timeout=120)
        assert run.returncode == 130, err
        assert "interrupted: run 1 stored" in err
        wait_for(lambda: not jobs_of(folder), 60, "the cancelled array tasks to exit")
        # cancelled, not run to the end: 2 tasks of 8 cases of 1 s each, stopped after the first outcome
        assert 1 <= len(outcome_lines(folder)) < 16
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
        kill_jobs(folder)


#: what each of submitit's local controllers printed to the terminal on Ctrl-C (its KeyboardInterrupt,
#: raised in Controller.wait, then again in kill_tasks), in the middle of the run's own lines
CONTROLLER_TRACEBACK = ("Traceback (most recent call last):\n  File \"submitit/local/local.py\", line 366, in wait\n"
                        "KeyboardInterrupt\n")


def test_local_controllers_print_into_the_runs_log_not_the_terminal(tmp_path, monkeypatch, fake_cases, capfd):
    """Each array task's controller is a process started by submission (submitit's start_controller: it
    inherits this process's stderr). One started here as submission starts it prints what a controller
    prints on Ctrl-C: before, that reached the terminal (two tracebacks a task around the one
    `interrupted` line); now the run's log under FOLDER/jobs, removed once the run completes."""
    from suite.results import Store
    from suite.runner import ExecOptions, run_cases
    from suite_slurm.executor import SlurmExecutor

    folder = tmp_path / "f"
    logs: list[str] = []

    class NoisyArray(InProcessArray):
        def map_array(self, fn, paths, payloads, options):
            subprocess.run([sys.executable, "-c", f"import sys; sys.stderr.write({CONTROLLER_TRACEBACK!r})"], check=True)
            logs.extend(p.read_text() for p in (folder / "jobs").glob("local-*.log"))
            return super().map_array(fn, paths, payloads, options)

    monkeypatch.setattr(SlurmExecutor, "_make_executor", lambda self, opts, f, gpus: NoisyArray(f))
    capfd.readouterr()
    with Store(tmp_path / "s.sqlite") as st:
        s = run_cases(fake_cases(4), st, executor=SlurmExecutor(), context=Context.build(),
                      options=ExecOptions(executor_options=_local_opts(folder, **{"tasks-size": 1})))
    assert s.ok == 4
    err = capfd.readouterr().err
    assert "KeyboardInterrupt" not in err and "Traceback" not in err, err
    # 4 tasks of 1 case, array-parallelism 2: two submissions, the log appended to
    assert logs == [CONTROLLER_TRACEBACK, CONTROLLER_TRACEBACK * 2]
    assert list((folder / "jobs").iterdir()) == []  # a complete run removes its log


@pytest.mark.slow  # real submitit local jobs: ~6 s
def test_ctrl_c_at_the_terminal_ends_a_local_cluster_run_with_one_line(tmp_path):
    """Ctrl-C at a terminal signals the whole foreground process group: the coordinator and every
    submitit controller. Before, each controller printed two KeyboardInterrupt tracebacks to the
    terminal; now stderr is the one `interrupted` line, exit 130, the jobs cancelled, and the
    tracebacks in the run's log."""
    env = plugin_env(tmp_path)
    folder = tmp_path / "slurm"
    run = _sixteen_slow_cases(tmp_path, env, folder, start_new_session=True)
    try:
        wait_for(lambda: run.poll() is not None or outcome_lines(folder), 300, "the first outcome")
        assert run.poll() is None, run.communicate()
        os.killpg(run.pid, signal.SIGINT)  # as the terminal sends it: to the whole process group
        out, err = run.communicate(timeout=120)
        assert run.returncode == 130, err
        assert len(err.splitlines()) == 1 and err.startswith("interrupted: run 1 stored "), err
        wait_for(lambda: not jobs_of(folder), 60, "the cancelled array tasks to exit")
        assert 1 <= len(outcome_lines(folder)) < 16
        (log,) = (folder / "jobs").glob("local-*.log")
        # the log names no job: each controller is a process that dies of one KeyboardInterrupt, its
        # chain (wait's, then kill_tasks') printed once and ending in its outermost frame, _local.py's
        # module; so one such frame a controller, and 2 for the 2 tasks (not one controller's chain)
        text = log.read_text()
        assert len(re.findall(r'submitit/local/_local\.py", line \d+, in <module>', text)) == 2, text
        assert text.count("KeyboardInterrupt") >= 2, text
    finally:
        if run.poll() is None:
            run.kill()
            run.communicate()
        kill_jobs(folder)


def test_a_lost_coordinators_outcomes_are_reused_and_the_run_ends_with_the_local_store(tmp_path, monkeypatch,
                                                                                      fake_cases, capfd):
    """The fast twin of the killed-coordinator sweeps below, in this process: the outcome files of a
    coordinator killed mid-run (its first two array tasks, written by the task program run_task,
    under a run whose lock no process holds) with 5 of their cases stored before the kill; the next
    run stores the others from the files, computes only the rest, removes the files, and its store
    equals a local run's."""
    from suite.results import Store
    from suite.runner import ExecOptions, run_cases
    from suite_slurm.executor import SlurmExecutor, run_task

    n, size = 24, 8
    cases = fake_cases(n - 1) + fake_cases(1, mode="abort")  # n - 1 ordinary cases and one crashing
    folder = tmp_path / "slurm"
    (folder / "outcomes").mkdir(parents=True)
    lost = "0123456789ab"  # the killed coordinator's run: its lock file is left, held by no process
    (folder / "outcomes" / f"{lost}.lock").touch()
    for i in range(2):  # array-parallelism 2: the two tasks running when it was killed, finished as orphans
        run_task(str(folder / "outcomes" / f"{lost}_{i:05d}.jsonl"), cases[i * size:(i + 1) * size],
                 ExecOptions(jobs=1, isolate=True))
    in_process_arrays(monkeypatch)
    store = tmp_path / "slurm.sqlite"
    with Store(store) as st:
        assert run_cases(cases[:5], st, context=Context.build()).ok == 5  # what it stored before the kill
        capfd.readouterr()
        s = run_cases(cases, st, executor=SlurmExecutor(), context=Context.build(),
                      options=ExecOptions(executor_options=_local_opts(folder, **{"tasks-size": size})))
    assert f"slurm: reused {2 * size - 5} outcome(s)" in capfd.readouterr().err
    assert (s.total, s.cached, s.computed, s.ok, s.by_status.get("crashed")) == (n, 5, n - 5, n - 1 - 5, 1)
    with Store(tmp_path / "local.sqlite") as local:
        run_cases(cases, local, options=ExecOptions(jobs=2), context=Context.build())
    ours, theirs = store_table(store), store_table(tmp_path / "local.sqlite")
    assert len(ours) == n and ours == theirs
    assert sorted(v[0] for v in ours.values()).count("crashed") == 1
    assert list((folder / "outcomes").iterdir()) == []  # the reused outcome files and the dead lock removed


@pytest.mark.slow
def test_killed_coordinator_small_sweep_ends_with_the_local_store(tmp_path):
    _run_killed_coordinator_sweep(tmp_path, n=24, size=8, delay=0.05)


@pytest.mark.slow
def test_killed_coordinator_2000_case_sweep_ends_with_the_local_store(tmp_path):
    """The issue's acceptance run: 2,000 cases, one crashing, the coordinator killed mid-run."""
    _run_killed_coordinator_sweep(tmp_path, n=2000, size=100, delay=0.0)


def test_no_slurm_leaves_no_folder_behind(tmp_path, monkeypatch):
    """Without ``srun`` the run is refused before anything is made: the folder (results/slurm under
    the working directory by default) is not created (it was, with its outcomes/, before)."""
    from suite.errors import SuiteError
    from suite_slurm.executor import SlurmExecutor, parse_options

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))
    opts = parse_options({})
    with pytest.raises(SuiteError, match="no SLURM here"):
        SlurmExecutor()._make_executor(opts, (tmp_path / opts.folder).resolve(), gpus=False)
    assert list(tmp_path.iterdir()) == []
