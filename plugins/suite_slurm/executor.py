"""The ``slurm`` executor: cases in job-array tasks submitted through submitit.

How a run goes
--------------
1. Outcomes that an earlier, lost coordinator never stored are reused: every task appends each
   finished case's outcome to ``FOLDER/outcomes/<run>_<task>.jsonl`` as it finishes, so a
   coordinator killed mid-run (a closed ssh session on the login node) loses nothing its jobs
   computed; the next ``suite run`` stores those outcomes (same case key, so same code, profile,
   parameters) and computes only the rest.
2. The remaining cases are grouped, in order, into tasks of ``tasks-size`` cases, submitted as
   one SLURM job array (``--array=0-N%array-parallelism``; several sharing the parallelism when
   there are more than 1,000 tasks). Execute-fidelity cases go in tasks of their own that ask for
   ``gpus-per-task`` GPUs; the others ask for none.
3. A task receives its cases as bytes and evaluates them with :func:`suite.execution.run_sandboxed`
   (a supervised child that unpickles them and runs the local pool: the task's own process never
   imports the plugin, a case that aborts, segfaults or hangs is stored ``crashed`` / ``timeout``
   with the local pool's time-outs, and the task goes on) and appends each outcome
   to its file. The coordinator polls the files and the jobs' states and yields outcomes as they
   arrive; it alone writes the store.
4. A job that ends before all its cases were reported (time limit, ``scancel``, a node failure,
   out of memory) costs only its unfinished cases: they are yielded ``crashed`` with the job's
   state and log path, and the next ``suite run`` reruns exactly them (only ``ok`` cases are
   skipped by a run).
5. Ctrl-C or SIGTERM of the coordinator cancels its jobs still in the queue or running; SIGHUP (the
   ssh session closed) ends the coordinator and leaves them running, as a lost coordinator does: the
   next run of the same command reuses what they write (item 1).

``cluster = local`` runs the same tasks as subprocesses of this machine through submitit's
``LocalExecutor`` (no SLURM needed; what the tests use); the array is then throttled by the
coordinator to ``array-parallelism`` tasks at a time. Each task's controller process (submitit's)
writes its stderr to ``FOLDER/jobs/local-<run>.log``, not the terminal: on Ctrl-C each printed a
KeyboardInterrupt traceback there (the terminal's and the cancel's SIGINT both reach it); the run
ends with its one ``interrupted`` line. The log is removed when the run completes.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import sys
import time
import uuid
from collections.abc import Generator, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from suite.api import SuiteError
from suite.api import (DONE_STATUSES, Case, ExecOptions, Executor, crashed_outcome, pack, package_of,
                       run_isolated, run_sandboxed, shippable)

__all__ = ["SlurmExecutor", "SlurmOptions", "OPTIONS", "run_task", "parse_options", "group_tasks",
           "submitit_parameters"]

#: the executor's options: name -> (type, default, help). Given as ``--slurm-NAME VALUE`` or
#: ``-X NAME=VALUE`` on the command line, ``executor_options={"NAME": "VALUE"}`` in Python.
OPTIONS: dict[str, tuple[type, Any, str]] = {
    "partition": (str, None, "SLURM partition (sbatch --partition); default: the cluster's"),
    "time": (int, 60, "time limit of one array task, minutes (sbatch --time)"),
    "array-parallelism": (int, 64, "array tasks running at once (sbatch --array=0-N%P)"),
    "tasks-size": (int, 100, "cases per array task"),
    "cpus-per-task": (int, 1, "CPUs per array task; the task evaluates that many cases at once"),
    "gpus-per-task": (int, 0, "GPUs per array task holding execute-fidelity cases (sbatch --gpus-per-task)"),
    "mem-gb": (int, None, "memory per array task, GB (sbatch --mem)"),
    "account": (str, None, "account to charge (sbatch --account)"),
    "qos": (str, None, "quality of service (sbatch --qos)"),
    "folder": (str, "results/slurm", "shared folder for job files, logs and outcomes (visible from the nodes)"),
    "cluster": (str, "slurm", "slurm, or local: the same tasks as subprocesses of this machine (testing)"),
}


@dataclass(frozen=True)
class SlurmOptions:
    """The parsed options (see :data:`OPTIONS`); times in minutes, memory in GB."""

    partition: str | None = None
    time: int = 60
    array_parallelism: int = 64
    tasks_size: int = 100
    cpus_per_task: int = 1
    gpus_per_task: int = 0
    mem_gb: int | None = None
    account: str | None = None
    qos: str | None = None
    folder: str = "results/slurm"
    cluster: str = "slurm"


_MINIMUM = {"time": 1, "array-parallelism": 1, "tasks-size": 1, "cpus-per-task": 1, "gpus-per-task": 0,
            "mem-gb": 1}
_CLUSTERS = ("slurm", "local")
#: each job's folder under the jobs folder, as submitit names it: "%j", its job id
JOB_FOLDER = "%j"


def parse_options(raw: Mapping[str, Any]) -> SlurmOptions:
    """Parse and validate the executor's options.

    Parameters
    ----------
    raw : mapping
        Option name (``tasks-size`` or ``tasks_size``) -> value (a string from the command line,
        or already typed).

    Raises
    ------
    suite.errors.SuiteError
        An unknown name, a value of the wrong type or below its minimum, an unknown cluster: one
        line naming the option, what was expected and what was given.
    """
    out: dict[str, Any] = {}
    for name, value in raw.items():
        key = str(name).strip().replace("_", "-")
        if key not in OPTIONS:
            raise SuiteError(f"--slurm-{key}: unknown option of executor slurm; expected one of "
                             f"{', '.join('--slurm-' + k for k in OPTIONS)}")
        typ = OPTIONS[key][0]
        if typ is int:
            try:
                v: Any = int(str(value).strip())
            except ValueError:
                raise SuiteError(f"--slurm-{key}: expected an integer, got {value!r}") from None
            if v < _MINIMUM[key]:
                raise SuiteError(f"--slurm-{key}: expected an integer >= {_MINIMUM[key]}, got {v}")
        else:
            v = str(value).strip()
            if not v:
                raise SuiteError(f"--slurm-{key}: expected a non-empty value, got {value!r}")
        if key == "cluster" and v not in _CLUSTERS:
            raise SuiteError(f"--slurm-cluster: expected one of {', '.join(_CLUSTERS)}, got {v!r}")
        out[key.replace("-", "_")] = v
    return SlurmOptions(**out)


def group_tasks(cases: Sequence[Case], size: int) -> list[list[Case]]:
    """Cases in order, in tasks of at most *size* holding one plugin package's cases each;
    execute-fidelity cases in tasks of their own (they are the ones that may ask for a GPU)."""
    tasks: list[list[Case]] = []
    for group in ([c for c in cases if c.fidelity != "execute"], [c for c in cases if c.fidelity == "execute"]):
        by_package: dict[str, list[Case]] = {}  # a task holds one plugin package's cases
        for c in group:
            by_package.setdefault(package_of(c.tech), []).append(c)
        for g in by_package.values():
            tasks += [list(g[i:i + size]) for i in range(0, len(g), size)]
    return tasks


def submitit_parameters(opts: SlurmOptions, gpus: bool) -> dict[str, Any]:
    """The parameters given to submitit's ``update_parameters`` for one kind of task.

    For ``cluster = slurm`` these are sbatch's (submitit's ``SlurmExecutor`` writes them as
    ``#SBATCH --partition=...`` lines); for ``local`` the time limit and the visible GPUs.
    """
    if opts.cluster == "local":
        p: dict[str, Any] = {"timeout_min": opts.time}
        if gpus and opts.gpus_per_task:
            p["gpus_per_node"] = opts.gpus_per_task
        return p
    p = {"job_name": "suite", "time": opts.time, "array_parallelism": opts.array_parallelism,
         "cpus_per_task": opts.cpus_per_task, "ntasks_per_node": 1, "nodes": 1}
    for name in ("partition", "account", "qos"):
        if getattr(opts, name):
            p[name] = getattr(opts, name)
    if opts.mem_gb:
        p["mem"] = f"{opts.mem_gb}GB"
    if gpus and opts.gpus_per_task:
        p["gpus_per_task"] = opts.gpus_per_task
    return p


# --------------------------------------------------------------------------- in the job


def _plain(x: Any) -> Any:
    """JSON fallback for numpy scalars and the like in an outcome."""
    item = getattr(x, "item", None)
    if callable(item):
        return item()
    raise TypeError(f"not JSON-serialisable: {type(x).__name__}")


def run_task(path: str, cases: list[Case] | tuple[list[str], bytes], options: ExecOptions) -> int:
    """Evaluate one array task's *cases* and append each outcome to *path* (JSON lines).

    Runs inside the SLURM job. *cases* is ``(keys, pack(cases))`` as the coordinator submits it:
    unpickled and evaluated in a supervised sandbox (:func:`suite.execution.run_sandboxed`), so the
    task's process never imports the plugin and always ends; a plain list of cases is evaluated
    by :func:`suite.execution.run_isolated`. Each line is flushed as its case finishes, so a job
    killed at any moment leaves the outcomes of every case it finished (a torn last line is
    ignored by the reader). Returns the number of outcomes written.
    """
    n = 0
    outs = run_sandboxed(cases[1], cases[0], options) if isinstance(cases, tuple) else run_isolated(cases, options)
    with open(path, "a", encoding="utf-8") as f:
        for out in outs:
            f.write(json.dumps(out, default=_plain, separators=(",", ":")) + "\n")
            f.flush()
            n += 1
    return n


# --------------------------------------------------------------------------- the coordinator


class _Tail:
    """Reads the complete lines appended to a file since the last read."""

    __slots__ = ("path", "offset", "rest")

    def __init__(self, path: Path):
        self.path, self.offset, self.rest = path, 0, b""

    def read(self) -> list[dict]:
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except FileNotFoundError:
            return []
        if not data:
            return []
        self.offset += len(data)
        lines = (self.rest + data).split(b"\n")
        self.rest = lines.pop()  # an incomplete last line (a job killed while writing it)
        out = []
        for line in lines:
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError:  # a torn line in the middle (a requeued job appending again)
                    continue
        return out


@dataclass
class _Task:
    index: int
    keys: list[str]
    path: Path
    tail: _Tail
    job: Any = None

    def __post_init__(self):
        self.keyset = frozenset(self.keys)


def _job_state(job: Any) -> str:
    try:
        return str(job.state)
    except Exception:  # noqa: BLE001 - a state is only for the message
        return "UNKNOWN"


def _log_tail(job: Any, lines: int = 40) -> str | None:
    for attr in ("stderr", "stdout"):
        try:
            p = getattr(job.paths, attr)
            text = Path(p).read_text(errors="replace").strip()
        except (OSError, AttributeError, ValueError):
            continue
        if text:
            return "\n".join(text.splitlines()[-lines:])
    return None


def _run_alive(folder: Path, token: str) -> bool:
    """Whether the coordinator of run *token* still holds its lock (a dead process holds none)."""
    import fcntl

    try:
        fd = os.open(folder / "outcomes" / f"{token}.lock", os.O_RDWR)
    except OSError:  # no lock file: a run that ended, or one from before locks
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return True
    finally:
        os.close(fd)  # closing releases a lock taken just now
    return False


def _hold_lock(folder: Path, token: str) -> int:
    """Take this run's lock (released by the kernel if the coordinator dies). On a file system
    without locks, other runs cannot take it either, so they read this run as alive and never
    remove its files."""
    import fcntl

    fd = os.open(folder / "outcomes" / f"{token}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        pass
    return fd


@contextlib.contextmanager
def _stderr_into(path: Path | None) -> Iterator[None]:
    """This process's fd 2 appended to *path* while processes are started (they inherit it), then put
    back; None: left as it is. What the started processes print to stderr goes to *path*."""
    if path is None:
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stderr.flush()
    saved = os.dup(2)
    log = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.dup2(log, 2)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(log)


class SlurmExecutor(Executor):
    """Cases as SLURM job-array tasks through submitit (see the module doc for the whole run).

    Options (``options.executor_options``, see :data:`OPTIONS`): ``partition``, ``time``
    (minutes), ``array-parallelism``, ``tasks-size``, ``cpus-per-task``, ``gpus-per-task``,
    ``mem-gb``, ``account``, ``qos``, ``folder``, ``cluster`` (``slurm`` or ``local``).
    """

    name = "slurm"
    detaches_on_hangup = True  # a closed ssh session leaves the jobs running; the next run collects them

    #: seconds between two looks at the outcome files and job states
    poll_seconds = {"slurm": 2.0, "local": 0.1}
    #: the most tasks in one job array (SLURM's default MaxArraySize is 1001: indices 0-1000)
    max_array_size = 1000

    def parse_options(self, raw: Mapping[str, Any]) -> SlurmOptions:
        """Validate *raw* options early (the CLI calls this before the run starts)."""
        return parse_options(raw)

    @staticmethod
    def options_help() -> list[tuple[str, str]]:
        """(name, one line) per option, for ``suite run --executor slurm --help``."""
        return [(k, h + ("" if d is None else f" [default: {d}]")) for k, (_t, d, h) in OPTIONS.items()]

    def map_cases(self, cases: Sequence[Case], options: ExecOptions) -> Iterator[dict]:
        opts = parse_options(getattr(options, "executor_options", None) or {})
        try:
            import submitit  # noqa: F401
        except ImportError:
            raise SuiteError("executor 'slurm' needs submitit: pip install 'dlsys-suite[slurm]'") from None
        if not cases:
            return iter(())
        folder = Path(opts.folder).expanduser().resolve()
        self._make_executor(opts, folder, gpus=False)  # fails now (no srun, bad folder), before any job
        return self._run(list(cases), options, opts, folder)

    # -- submitit

    def _make_executor(self, opts: SlurmOptions, folder: Path, gpus: bool):
        import submitit

        jobs = folder / "jobs" / JOB_FOLDER
        try:
            if opts.cluster == "local":
                ex = submitit.LocalExecutor(folder=jobs)
            else:
                ex = submitit.SlurmExecutor(folder=jobs)
            # only once SLURM is found: a refused run leaves no folder behind in the working directory
            (folder / "outcomes").mkdir(parents=True, exist_ok=True)
        except RuntimeError as exc:  # submitit: 'Could not detect "srun"'
            raise SuiteError(f"--executor slurm: {exc} (no SLURM here: --slurm-cluster local runs the tasks "
                             "on this machine)") from None
        except OSError as exc:
            raise SuiteError(f"--slurm-folder {opts.folder}: cannot create it: {exc}") from None
        ex.update_parameters(**submitit_parameters(opts, gpus))
        return ex

    def _task_options(self, options: ExecOptions, opts: SlurmOptions, execute: bool) -> ExecOptions:
        return replace(options, jobs=1 if execute else opts.cpus_per_task, isolate=True, scheduler=None,
                       executor_options={})

    # -- the run

    def _harvest(self, folder: Path, wanted: set[str]) -> tuple[list[dict], list[Path]]:
        """Outcomes (status ok) of *wanted* cases left in the folder by earlier coordinators, and
        the files to remove once this run completes.

        Files are ``<run>_<task>.jsonl``. A run whose coordinator is alive holds the lock
        ``<run>.lock``; its files are only read, never removed. Every file of a finished or lost
        run that shares a case with this run is removed at the end: that run was this sweep (or
        one overlapping it), and its tasks whose cases it had already stored are the ones this run
        found stored. A lost run sharing no case with this one is left for the run that wants it.
        """
        found: dict[str, dict] = {}
        by_run: dict[str, list[Path]] = {}
        overlap: set[str] = set()
        for path in sorted((folder / "outcomes").glob("*.jsonl")):
            token = path.stem.split("_")[0]
            by_run.setdefault(token, []).append(path)
            for out in _Tail(path).read():
                k = out.get("key")
                if k in wanted:
                    overlap.add(token)
                    if k not in found and out.get("status") in DONE_STATUSES:
                        found[k] = out
        files = [p for t in sorted(overlap) if not _run_alive(folder, t) for p in by_run[t]]
        files += [folder / "outcomes" / f"{t}.lock" for t in sorted(overlap) if not _run_alive(folder, t)]
        return list(found.values()), files

    def _run(self, cases: list[Case], options: ExecOptions, opts: SlurmOptions, folder: Path) -> Iterator[dict]:
        by_key = {c.key: c for c in cases}
        reported: set[str] = set()
        old_files = yield from self._reuse(folder, by_key, reported)
        run = uuid.uuid4().hex[:12]
        tasks = [_Task(i, [c.key for c in t], folder / "outcomes" / f"{run}_{i:05d}.jsonl",
                       _Tail(folder / "outcomes" / f"{run}_{i:05d}.jsonl"))
                 for i, t in enumerate(group_tasks([c for c in cases if c.key not in reported], opts.tasks_size))]
        payload = self._payload(tasks, by_key)
        waiting = list(tasks)
        active: list[_Task] = []
        finished_jobs: list[Any] = []  # their folders are removed at the end; those of jobs that ended early are kept
        executors: dict[bool, Any] = {}
        poll = self.poll_seconds.get(opts.cluster, 1.0)
        complete = False
        lock = _hold_lock(folder, run)  # while held, no other run removes this run's files
        # submitit's local controllers print to the stderr they inherit (a traceback each on Ctrl-C)
        log = folder / "jobs" / f"local-{run}.log" if opts.cluster == "local" else None
        try:
            while waiting or active:
                if waiting:
                    with _stderr_into(log):
                        self._submit(waiting, active, payload, executors, options, opts, folder, by_key)
                time.sleep(poll if active else 0)
                for t in list(active):
                    yield from self._collect(t, active, reported, finished_jobs)
            complete = True
        finally:
            for t in active:  # Ctrl-C / SIGTERM of the coordinator: stop what it submitted
                try:
                    t.job.cancel(check=False)
                except Exception:  # noqa: BLE001 - a job already gone
                    pass
            if complete:
                self._clean(folder, tasks, old_files + [folder / "outcomes" / f"{run}.lock"] + ([log] if log else []),
                            finished_jobs)
            os.close(lock)

    def _reuse(self, folder: Path, by_key: dict[str, Case], reported: set[str]) -> Generator[dict, None, list[Path]]:
        """The outcomes an earlier coordinator's jobs left for these cases (added to *reported*);
        returns the files to remove once this run completes."""
        harvested, old_files = self._harvest(folder, set(by_key))
        if harvested:
            print(f"slurm: reused {len(harvested)} outcome(s) that an earlier coordinator's jobs left in "
                  f"{folder / 'outcomes'}", file=sys.stderr)
        for out in harvested:
            reported.add(out["key"])
            yield out
        return old_files

    @staticmethod
    def _payload(tasks: list[_Task], by_key: dict[str, Case]) -> dict[int, tuple[list[str], bytes]]:
        """Each task's keys and its cases as bytes (one technique without claims per technique,
        not one per case)."""
        stripped: dict[int, Any] = {}

        def ship(c: Case) -> Case:
            if id(c.tech) not in stripped:
                stripped[id(c.tech)] = shippable(c).tech
            return replace(c, tech=stripped[id(c.tech)])

        return {t.index: (list(t.keys), pack([ship(by_key[k]) for k in t.keys])) for t in tasks}

    def _collect(self, t: _Task, active: list[_Task], reported: set[str], finished_jobs: list[Any]) -> Iterator[dict]:
        """What task *t* wrote since the last look; once its job ended, every case it never
        reported is ``crashed`` (with the job log's tail) and *t* leaves *active*."""
        done = self._done(t.job)  # before reading: every line written before the end is read
        for out in t.tail.read():
            k = out.get("key")
            if k in t.keyset and k not in reported:
                reported.add(k)
                yield out
        if not done:
            return
        active.remove(t)
        missing = [k for k in t.keys if k not in reported]
        if not missing:
            finished_jobs.append(t.job)
            return
        log = _log_tail(t.job)
        state = _job_state(t.job)
        state = "" if state in ("FINISHED", "COMPLETED", "UNKNOWN") else f" ({state})"
        why = (f"slurm job {t.job.job_id} ended{state} before this case finished; "
               f"`suite run` again reruns it (job log: {t.job.paths.stderr})")
        for k in missing:
            reported.add(k)
            out = crashed_outcome(k, why)
            out["traceback"] = log
            yield out

    def _submit(self, waiting: list[_Task], active: list[_Task], payload: dict, executors: dict,
                options: ExecOptions, opts: SlurmOptions, folder: Path, by_key: dict) -> None:
        """Submit waiting tasks: on SLURM all of them, as job arrays of at most
        :attr:`max_array_size` tasks (SLURM's default MaxArraySize is 1001) sharing
        array-parallelism between them; on the local cluster at most array-parallelism at a time."""
        local = opts.cluster == "local"
        room = opts.array_parallelism - len(active) if local else len(waiting)
        if room <= 0:
            return
        batch, waiting[:] = waiting[:room], waiting[room:]
        for execute in (False, True):
            group = [t for t in batch if (by_key[t.keys[0]].fidelity == "execute") == execute]
            if not group:
                continue
            if execute not in executors:
                executors[execute] = self._make_executor(opts, folder, gpus=execute)
            ex = executors[execute]
            topts = self._task_options(options, opts, execute)
            size = len(group) if local else self.max_array_size
            arrays = [group[i:i + size] for i in range(0, len(group), size)]
            if len(arrays) > 1:
                ex.update_parameters(array_parallelism=max(1, opts.array_parallelism // len(arrays)))
            for part in arrays:
                try:
                    jobs = ex.map_array(run_task, [str(t.path) for t in part], [payload.pop(t.index) for t in part],
                                        [topts] * len(part))
                except Exception as exc:  # noqa: BLE001 - sbatch refused (bad partition, account, ...)
                    first = str(exc).strip().splitlines()
                    raise SuiteError(f"--executor slurm: submitting {len(part)} task(s) failed: "
                                     f"{first[0] if first else type(exc).__name__}") from None
                for t, job in zip(part, jobs):
                    t.job = job
                    active.append(t)

    @staticmethod
    def _done(job: Any) -> bool:
        try:
            return bool(job.done())
        except Exception:  # noqa: BLE001 - sacct hiccup: look again at the next poll
            return False

    @staticmethod
    def _clean(folder: Path, tasks: list[_Task], old_files: list[Path], jobs: list[Any]) -> None:
        """After a complete run: its outcome files, the earlier ones it reused, and the folders of
        jobs that reported every case (those of jobs that ended early are kept for their logs)."""
        for p in [t.path for t in tasks] + old_files:
            try:
                p.unlink()
            except OSError:
                pass
        for job in jobs:
            try:
                shutil.rmtree(job.paths.folder, ignore_errors=True)
            except Exception:  # noqa: BLE001
                pass
        try:  # submitit's local controller makes the folder template itself ("%j", literally), empty
            (folder / "jobs" / JOB_FOLDER).rmdir()
        except OSError:  # not there (SLURM), or holding another run's files
            pass

