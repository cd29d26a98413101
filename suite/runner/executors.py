"""Executors: where cases are evaluated. One interface, two built-in implementations.

An executor turns resolved :class:`~suite.runner.case.Case` objects into *outcomes*: plain,
pickle-able dicts (see :func:`run_case`) that the coordinating process writes to the store.
Workers never touch the store.

* ``local`` (default): a pool of ``jobs`` forked worker processes (one by default), each fed
  chunks of case indices over a pipe (guided sizes up to :data:`CHUNK_MAX`; a worker's next chunk
  is queued once it begins its last, so it never idles waiting for the coordinator; outcomes come
  back in batches); ``isolate=False`` with one job (``--in-process``)
  evaluates in this process instead (a per-case timeout then uses ``SIGALRM``). A worker that dies (``os.abort``, a segfault) or runs past
  the timeout is killed and replaced; its current case is stored as ``crashed`` / ``timeout`` and
  the rest of its chunk is re-queued, so the run goes on.
* ``dask``: :mod:`dask.distributed`, on ``--scheduler ADDRESS`` or a ``LocalCluster`` started for
  the run. Each batch (one plugin package's cases) is shipped as bytes and evaluated on its worker
  by the local pool inside a supervised sandbox (:mod:`suite.runner.sandbox`), so the same
  time-outs, hang guard and crash attribution hold there; a batch whose worker dies is re-run case
  by case, and a case that kills a worker twice is stored ``crashed``.

A plugin adds an executor with the ``suite_executor(name)`` hook, returning an object with the
:class:`Executor` interface; it can evaluate a case with :func:`run_case`.
"""

from __future__ import annotations

import abc
import contextlib
import multiprocessing as mp
import os
import signal
import sys
import time
import traceback
from collections import deque
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from suite.errors import SuiteError
from suite.frozen import guard, restore_changed
from suite.runner.case import Case
from suite.runner.oracle import oracle_problem
from suite.technique import Skip, Technique

__all__ = ["Executor", "ExecOptions", "LocalExecutor", "DaskExecutor", "get_executor", "run_case",
           "evaluate_outcome", "BUILTIN_EXECUTORS", "DEFAULT_EXECUTE_TIMEOUT", "metric_problem",
           "ARTIFACT_MODES", "summarize_artifacts"]


#: default time-out (s) of an execute-fidelity case, enforced from outside its worker process
DEFAULT_EXECUTE_TIMEOUT = 600.0
#: default hang guard (s) of model and simulate cases: a worker silent this long is stalled
DEFAULT_STALL_TIMEOUT = 600.0
#: what of a result's artifacts is stored (``--artifacts``): nothing, the small entries, everything
ARTIFACT_MODES = ("none", "summary", "full")
#: a top-level artifact entry that is a sequence longer than this is a table: left out by "summary"
SUMMARY_MAX_ITEMS = 16


@dataclass(frozen=True)
class ExecOptions:
    """How to execute.

    Attributes
    ----------
    jobs : int
        Worker processes.
    timeout : float or None
        Per-case time-out (s) for every case; None for none.
    scheduler : str or None
        A dask scheduler address.
    isolate : bool
        Evaluate in worker processes even with one job (the default), so a plugin that aborts,
        segfaults, exhausts memory or hangs costs only its own case. ``False`` is the in-process
        fast path (``--in-process``): for debugging and profiling a plugin you trust.
    execute_timeout : float or None
        Time-out (s) of an execute-fidelity case when ``timeout`` is not given
        (:data:`DEFAULT_EXECUTE_TIMEOUT`); enforced by killing the worker.
    stall_timeout : float or None
        The hang guard of the other cases when ``timeout`` is not given
        (:data:`DEFAULT_STALL_TIMEOUT`): a worker that reports nothing for this long is killed,
        its unreported cases are re-run one at a time, and the one that stalls again is stored as
        ``timeout``. Outcomes stay batched (no per-case messages), so model sweeps keep their speed.
    executor_options : mapping of str to str
        Options of a plugin's executor, by name, as given on the command line
        (``-X partition=gpu`` or ``--slurm-partition gpu`` for ``--executor slurm``); the executor
        parses and validates them. Empty for the built-in executors.
    artifacts : str
        What of each result's artifacts is stored (:data:`ARTIFACT_MODES`): ``"summary"``
        (default) keeps every top-level entry except tables (sequences of more than
        :data:`SUMMARY_MAX_ITEMS` items, e.g. a per-layer table) and lists the ones left out under
        ``"_omitted"``; ``"full"`` keeps everything (a later ``full`` run recomputes cases stored
        with a summary); ``"none"`` stores no artifacts.
    """

    jobs: int = 1
    timeout: float | None = None
    scheduler: str | None = None
    isolate: bool = True
    execute_timeout: float | None = DEFAULT_EXECUTE_TIMEOUT
    stall_timeout: float | None = DEFAULT_STALL_TIMEOUT
    executor_options: Mapping[str, str] = field(default_factory=dict)
    artifacts: str = "summary"

    def __post_init__(self):
        if self.artifacts not in ARTIFACT_MODES:
            raise SuiteError(f"--artifacts: expected one of {', '.join(ARTIFACT_MODES)}, got {self.artifacts!r}")


class Executor(abc.ABC):
    """The executor interface.

    ``map_cases(cases, options)`` yields one outcome dict per case, in any order, as cases
    finish. It must yield an outcome for every case (``crashed`` if it could not run it) unless
    the consumer stops early (Ctrl-C: ``close()`` of the generator), and release its workers when
    the generator is closed.
    """

    name: str = ""

    @abc.abstractmethod
    def map_cases(self, cases: Sequence[Case], options: ExecOptions) -> Iterator[dict]:
        raise NotImplementedError


# --------------------------------------------------------------------------- one case


class CaseTimeout(BaseException):
    """Raised inside an in-process evaluation when its timeout expires (not an Exception, so a
    plugin's ``except Exception`` cannot swallow it)."""


def _one_line(exc: BaseException) -> str:
    msg = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {msg[0]}" if msg else type(exc).__name__


from suite.runner.checks import BadMetric, metric_problem  # noqa: E402  (public here as before)


#: True in a pool worker process (set by _worker_main): a KeyboardInterrupt there is the plugin's
_IN_WORKER = False

#: cases of each (technique, variant, fidelity) per process whose profile reads are recorded
TRACK_CASES = 2
_TRACKED: dict[tuple, int] = {}


def summarize_artifacts(artifacts: dict) -> dict:
    """The ``"summary"`` of a result's artifacts: every top-level entry except tables.

    A table is a list, tuple or array of more than :data:`SUMMARY_MAX_ITEMS` items (a per-layer
    table, a trace); the names of those left out are listed, sorted, under ``"_omitted"``. Decided
    from lengths only, so a summary costs no encoding of what it leaves out.
    """
    omitted = [k for k, v in artifacts.items()
               if (isinstance(v, (list, tuple)) and len(v) > SUMMARY_MAX_ITEMS)
               or (getattr(v, "ndim", 0) and getattr(v, "size", 0) > SUMMARY_MAX_ITEMS)]
    if not omitted:
        return artifacts
    out = {k: v for k, v in artifacts.items() if k not in omitted}
    out["_omitted"] = sorted(omitted)
    return out


def evaluate_outcome(tech: Technique, scenario: Any, key: str, artifacts: str = "full") -> dict:
    """Evaluate one scenario and return its outcome as a plain dict.

    *artifacts* is what of the result's artifacts the outcome carries (:data:`ARTIFACT_MODES`;
    see :class:`ExecOptions`).

    Returns
    -------
    dict
        ``key``, ``status`` (``ok``, ``skipped``, ``failed``, ``timeout``), ``metrics`` (list of
        ``[name, value, unit, direction]``), ``samples`` (metric -> list of float), ``artifacts``
        (JSON text or None), ``error`` (one line or None), ``traceback`` (or None), ``duration``
        (s of evaluation).
    """
    from suite.results.store import dumps

    t0 = time.perf_counter()
    out: dict[str, Any] = {"key": key, "metrics": None, "samples": None, "artifacts": None,
                           "error": None, "traceback": None}
    reads = None
    # the inputs' state before the case: a change by any route (vars(), object.__setattr__,
    # __dict__, dict.__setitem__) fails this case and is undone before the next one
    snap = guard(("profile", getattr(scenario, "profile", None)), ("scenario.params", getattr(scenario, "params", None)))
    snap += guard(("workload", getattr(scenario, "workload", None)), limit=1)
    group = (tech.name, getattr(scenario, "variant", None), getattr(scenario, "fidelity", None))
    if getattr(scenario, "profile", None) is not None and _TRACKED.get(group, 0) < TRACK_CASES:
        # the first cases of each (technique, variant, fidelity) in this process read their
        # profile through a recording view: which fields the technique depends on
        import dataclasses

        from suite.hardware.tracking import tracked

        _TRACKED[group] = _TRACKED.get(group, 0) + 1
        view, reads = tracked(scenario.profile)
        scenario = dataclasses.replace(scenario, profile=view)
    try:
        # what a plugin prints goes to stderr: stdout is the command's output (--format json)
        with contextlib.redirect_stdout(sys.stderr):
            res = tech.evaluate(scenario)
        out["duration"] = time.perf_counter() - t0  # evaluation only, not the serialisation below
        metrics, samples = [], {}
        for m in res.metrics.values():
            bad = metric_problem(m)
            if bad:
                raise BadMetric(f"{tech.name}: {bad}")
            metrics.append([m.name, m.value, m.unit, m.direction])
            if m.samples is not None:
                samples[m.name] = list(m.samples)
        bad = oracle_problem(tech, res)
        if bad:
            raise BadMetric(f"{tech.name}: {bad}")
        out["metrics"], out["samples"] = metrics, samples or None
        art = res.artifacts if artifacts != "none" else None
        if art and artifacts == "summary":
            art = summarize_artifacts(art)
        if art:
            try:
                out["artifacts"] = dumps(art)
            except (TypeError, ValueError) as exc:
                raise SuiteError(f"{tech.name}: artifacts are not JSON-serialisable: {exc}") from None
        out["status"] = "ok"
    except Skip as exc:
        out["status"], out["error"] = "skipped", str(exc)
    except CaseTimeout as exc:
        out["status"], out["error"] = "timeout", str(exc)
    except KeyboardInterrupt as exc:
        if not _IN_WORKER:  # Ctrl-C of an in-process run: the run stops (and resumes later)
            raise
        # a worker ignores SIGINT, so this one was raised by the plugin itself: its case fails
        out["status"], out["error"], out["traceback"] = ("failed", f"KeyboardInterrupt raised by the plugin: "
                                                         f"{_one_line(exc)}", traceback.format_exc())
    except BaseException as exc:  # noqa: BLE001 - any failure of plugin code is a stored failed case
        out["status"], out["error"], out["traceback"] = "failed", _one_line(exc), traceback.format_exc()
    changed = restore_changed(snap)
    if changed is not None:
        out.update(status="failed", metrics=None, samples=None, artifacts=None, traceback=None,
                   error=f"InputMutated: {tech.name}: the case changed its input {changed} (inputs are "
                         "read-only; copy them to change them); put back for the next case")
    if out.get("duration") is None or out["status"] != "ok":
        out["duration"] = time.perf_counter() - t0
    if reads is not None and out["status"] == "ok":
        out["fields_read"] = sorted(reads)
    return out


def _tech(case: Case) -> Technique:
    if case.tech is None:
        raise SuiteError(f"case {case.key}: not resolved (no technique attached; resolve it with suite.runner.resolve_case)")
    return case.tech


def package_of(tech: Technique | None) -> str:
    """The top-level package that implements *tech* (the module of its fidelity functions), the
    unit a pool worker is bound to: a worker never runs another package's cases, so a plugin
    that corrupts its process (patches a core function, writes a shared profile through
    ``object.__setattr__``) can only lie about its own cases."""
    if tech is None:
        return ""
    return tech.package or tech.name


def run_case(case: Case, technique: Technique | None = None, artifacts: str = "full") -> dict:
    """Evaluate a resolved case (with the technique it was resolved against, unless one is given);
    *artifacts* as :attr:`ExecOptions.artifacts`."""
    technique = technique if technique is not None else _tech(case)
    if case.scenario is None:
        raise SuiteError(f"case {case.key}: not resolved")
    return evaluate_outcome(technique, case.scenario, case.key, artifacts)


def crashed_outcome(key: str, error: str, status: str = "crashed") -> dict:
    return {"key": key, "status": status, "metrics": None, "samples": None, "artifacts": None,
            "error": error, "traceback": None, "duration": None}


# --------------------------------------------------------------------------- local


def _alarm(signum, frame):  # pragma: no cover - exercised through the timeout tests
    raise CaseTimeout(_alarm.message)


_alarm.message = "timed out"


def _in_process(cases: Sequence[Case], timeout: float | None, artifacts: str = "full") -> Iterator[dict]:
    import threading

    use_alarm = bool(timeout) and threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    old = signal.signal(signal.SIGALRM, _alarm) if use_alarm else None
    try:
        for case in cases:
            tech = _tech(case)
            if use_alarm:
                _alarm.message = f"timed out after {timeout:g} s"
                signal.setitimer(signal.ITIMER_REAL, float(timeout))
                try:
                    out = evaluate_outcome(tech, case.scenario, case.key, artifacts)
                finally:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            else:
                out = evaluate_outcome(tech, case.scenario, case.key, artifacts)
            yield out
    finally:
        if use_alarm:
            signal.signal(signal.SIGALRM, old)


# Cases of the current pool run. Set by the coordinator before it forks a worker; a forked
# worker reads its cases from here by index, so a task message is a list of small integers.
_TASKS: Sequence[Case] = ()
_ARTIFACTS = "full"  # the artifacts mode of the current pool run (read by forked workers)


def _die_with_parent(parent: int) -> None:
    """Make this worker exit when the coordinator dies (kill -9 leaves no orphan workers)."""
    try:  # Linux: the kernel sends SIGKILL when the parent dies
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # elsewhere: the receive loop polls os.getppid()
        pass
    if os.getppid() != parent:  # the parent died before prctl
        os._exit(1)


def _worker_main(conn, fault_fd: int, parent: int) -> None:  # pragma: no cover - runs in a child process
    import faulthandler

    import gc

    global _IN_WORKER
    _IN_WORKER = True
    # Everything inherited from the coordinator (the resolved cases, profiles, workloads) lives
    # as long as the worker: moved to the permanent generation, the cyclic collector never walks
    # it again, and never writes its headers (which would copy every inherited page on write).
    gc.freeze()
    _die_with_parent(parent)
    try:  # C-level writes to fd 1 too: a worker's stdout is the coordinator's stderr
        sys.stdout.flush()
        os.dup2(2, 1)
    except OSError:
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's business
    # the coordinator's SIGTERM handler (a run stopped by a batch scheduler) is not the worker's:
    # a SIGTERM kills the worker, and its case is stored crashed, as on every executor
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    # a fatal error (abort, segfault) writes the Python stack to a file the coordinator reads
    # back and stores as the crashed case's traceback
    faulthandler.enable(file=fault_fd, all_threads=False)
    code = 0
    try:
        while True:
            while not conn.poll(1.0):
                if os.getppid() != parent:  # orphaned: the coordinator was killed
                    raise EOFError
            msg = conn.recv()
            if msg is None:
                break
            indices, immediate = msg
            buf: list[dict] = []
            last = time.monotonic()
            for i in indices:
                case = _TASKS[i]
                tech = _tech(case)
                out = evaluate_outcome(tech, case.scenario, case.key, _ARTIFACTS)
                out["i"] = i
                buf.append(out)
                now = time.monotonic()
                # immediate: one message per case (exact timeout and crash attribution);
                # otherwise outcomes are batched (fewer messages for cheap cases)
                if immediate or len(buf) >= _BATCH_CASES or now - last >= _BATCH_SECONDS:
                    conn.send(buf)
                    buf, last = [], now
            if buf:
                conn.send(buf)
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        code = 1
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        code = 1
    finally:
        # never run the parent's atexit handlers or close its inherited SQLite connection
        os._exit(code)


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "worker process vanished"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"worker process died ({name}) while running this case"
    return f"worker process exited with status {code} while running this case"


_BATCH_CASES = 128  # a worker sends outcomes in batches of at most this many ...
_BATCH_SECONDS = 0.05  # ... or this old, unless a chunk is "immediate"
#: most cases in one task message of the local pool (a batched chunk; guided: a quarter of each
#: worker's share of what is left, so the last chunks are small and the workers finish together)
CHUNK_MAX = 512


def _chunk_size(left: int, workers: int) -> int:
    return max(1, min(CHUNK_MAX, left // (workers * 4) or 1))


class _Worker:
    __slots__ = ("proc", "conn", "chunk", "since", "fault", "immediate", "owner", "tail")

    def __init__(self, ctx):
        import tempfile

        parent, child = ctx.Pipe(duplex=True)
        self.fault = tempfile.TemporaryFile()
        self.proc = ctx.Process(target=_worker_main, args=(child, self.fault.fileno(), os.getpid()), daemon=True)
        self.proc.start()
        child.close()
        self.conn = parent
        self.chunk: deque[int] = deque()
        self.since = time.monotonic()
        self.immediate = True
        self.owner: str | None = None  # the package whose cases this worker runs (package_of)
        self.tail = 0  # cases in the last chunk sent: fewer than that outstanding means it has begun

    def fault_text(self) -> str | None:
        """What faulthandler wrote when the worker died (the Python stack), if anything."""
        try:
            self.fault.seek(0)
            text = self.fault.read().decode("utf-8", "replace").strip()
        except (OSError, ValueError):
            return None
        return text or None

    def kill(self) -> None:
        try:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(5)
        finally:
            self.conn.close()
            self.fault.close()


def _pool(cases: Sequence[Case], jobs: int, timeout: float | None, stall: float | None = None,
          artifacts: str = "full") -> Iterator[dict]:
    from multiprocessing.connection import wait

    global _TASKS, _ARTIFACTS
    ctx = mp.get_context("fork")
    _TASKS, _ARTIFACTS = cases, artifacts
    # Each worker is bound to the package of the first case it runs and only ever runs that
    # package's cases (package_of): pending cases are queued per package, and a worker whose
    # package has nothing left is replaced by a fresh fork before it takes another package's.
    owners = [package_of(c.tech) for c in cases]
    pending: dict[str, deque[int]] = {}
    for i, o in enumerate(owners):
        pending.setdefault(o, deque()).append(i)
    # Cases that were in a batched chunk whose worker died: which one killed it is unknown, so
    # each is re-run alone, in immediate mode; the one that dies again is the crashed case.
    suspects: deque[int] = deque()
    workers = [_Worker(ctx) for _ in range(max(1, min(jobs, len(cases))))]

    def requeue(idx: list[int]) -> None:
        for i in reversed(idx):
            pending[owners[i]].appendleft(i)

    def take(w: _Worker) -> list[int] | None:
        """The next chunk for idle worker *w* (binding it), or None when nothing fits it."""
        for j, i in enumerate(suspects):
            if w.owner in (None, owners[i]):
                del suspects[j]
                w.owner, w.immediate = owners[i], True
                return [i]
        q = pending.get(w.owner) if w.owner is not None else None
        if not q:
            if w.owner is not None:
                return None
            q = next((q for q in pending.values() if q), None)
            if q is None:
                return None
            w.owner = owners[q[0]]
        size = _chunk_size(sum(len(x) for x in pending.values()), len(workers))
        w.immediate = bool(timeout)  # timeouts need per-case progress messages
        return [q.popleft() for _ in range(min(size, len(q)))]

    def prefetch(w: _Worker) -> list[int] | None:
        """The next batched chunk of its own package for busy worker *w* once it has begun its
        last one, so it never waits for the coordinator between chunks (at most two outstanding;
        never with per-case messages or while suspects wait, whose attribution needs one chunk)."""
        if w.immediate or suspects or len(w.chunk) > w.tail:
            return None
        q = pending.get(w.owner)
        if not q:
            return None
        size = _chunk_size(sum(len(x) for x in pending.values()), len(workers))
        return [q.popleft() for _ in range(min(size, len(q)))]

    try:
        while True:
            now = time.monotonic()
            for idx, w in enumerate(workers):
                if w.chunk:
                    more = prefetch(w)
                    if more:  # queued behind the running chunk; its progress clock keeps running
                        w.chunk.extend(more)
                        w.tail = len(more)
                        w.conn.send((more, False))
                    continue
                chunk = take(w)
                if chunk is None and w.owner is not None and (suspects or any(pending.values())):
                    # its package is done and another's cases wait: a fresh process takes them
                    try:
                        w.conn.send(None)
                    except (OSError, BrokenPipeError):
                        pass
                    w.kill()
                    w = workers[idx] = _Worker(ctx)
                    chunk = take(w)
                if chunk is None:
                    continue
                w.chunk.extend(chunk)
                w.tail = len(chunk)
                w.since = now
                w.conn.send((chunk, w.immediate))
            busy = [w for w in workers if w.chunk]
            if not busy:
                return
            wait_for = 1.0
            limit = timeout or stall
            if limit:
                wait_for = max(0.0, min(wait_for, min(w.since + limit - now for w in busy)))
            ready = set(wait([w.conn for w in busy] + [w.proc.sentinel for w in busy], timeout=wait_for))
            for idx, w in enumerate(workers):
                if not w.chunk:
                    continue
                dead = w.proc.sentinel in ready
                if w.conn in ready or dead:
                    try:
                        while w.chunk and w.conn.poll():
                            for out in w.conn.recv():
                                i = out.pop("i")
                                if w.chunk and w.chunk[0] == i:
                                    w.chunk.popleft()
                                w.since = time.monotonic()
                                yield out
                    except (EOFError, OSError):
                        dead = True
                if w.chunk and (dead or not w.proc.is_alive()):
                    w.proc.join(5)
                    code = w.proc.exitcode
                    stack = w.fault_text()
                    w.kill()
                    workers[idx] = _Worker(ctx)
                    if not w.immediate:  # unknown culprit among the unreported cases
                        suspects.extend(w.chunk)
                        continue
                    i = w.chunk.popleft()
                    requeue(list(w.chunk))
                    out = crashed_outcome(cases[i].key, _describe_exit(code))
                    out["traceback"] = stack
                    yield out
                elif w.chunk and limit and time.monotonic() - w.since > limit:
                    w.kill()
                    workers[idx] = _Worker(ctx)
                    if not w.immediate:  # the hang guard of a batched chunk: which case stalled is unknown
                        suspects.extend(w.chunk)
                        continue
                    i = w.chunk.popleft()
                    requeue(list(w.chunk))
                    why = (f"timed out after {timeout:g} s" if timeout else
                           f"stalled: no progress for {stall:g} s (the default hang guard; --timeout S sets a limit)")
                    yield crashed_outcome(cases[i].key, why, status="timeout")
    finally:
        for w in workers:
            try:
                if not w.chunk and w.proc.is_alive():
                    w.conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        deadline = time.monotonic() + 2
        for w in workers:
            w.proc.join(max(0.0, deadline - time.monotonic()))
            w.kill()
        _TASKS = ()


class LocalExecutor(Executor):
    """This machine: a pool of forked workers; in this process only when asked (see module doc)."""

    name = "local"

    def map_cases(self, cases: Sequence[Case], options: ExecOptions) -> Iterator[dict]:
        if not cases:
            return iter(())
        if options.jobs <= 1 and not options.isolate:
            return _in_process(cases, options.timeout, options.artifacts)
        return _pool(cases, max(1, options.jobs), options.timeout,
                     stall=None if options.timeout else options.stall_timeout, artifacts=options.artifacts)


# --------------------------------------------------------------------------- dask


def _dask_batch(blob: bytes, keys: list, options: ExecOptions) -> list[dict]:  # runs on a dask worker
    """One batch on a dask worker: evaluated in a supervised sandbox (:mod:`suite.runner.sandbox`),
    so the worker never imports the plugin nor dies with a case."""
    from suite.runner.sandbox import run_sandboxed

    return list(run_sandboxed(blob, keys, options))


def _shippable(tech: Technique) -> Technique:
    """The technique without claims and properties (closures a worker does not need)."""
    return replace(tech, claims=[], properties=[])


def _dask_setup_worker() -> None:  # pragma: no cover - runs in each dask worker of a LocalCluster
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's business


@contextlib.contextmanager
def _sigint_ignored():
    """SIGINT ignored while processes are started (they inherit it): Ctrl-C stops the coordinator
    only, which then closes the cluster (no traceback from every worker)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


class DaskExecutor(Executor):
    """dask.distributed: ``options.scheduler`` or a LocalCluster of ``options.jobs`` workers.

    The local pool's guarantees on every worker: each batch (the cases of one plugin package) is
    shipped as bytes and evaluated by :func:`suite.runner.sandbox.run_sandboxed` in a forked child
    of the dask worker, through the local pool. So a per-case ``--timeout`` counts from the case's
    start, the default hang guard applies, a case that aborts or segfaults is stored ``crashed``
    without costing its dask worker, and a dask worker never imports a plugin. A worker that dies
    anyway (kill -9, the OOM killer) costs only what it ran: its batch is re-run case by case on
    the remaining workers, and a case that kills a worker twice is stored ``crashed``. A run whose
    scheduler has had no worker for :attr:`no_worker_seconds` stores what is left ``crashed``, so
    a run always ends.
    """

    name = "dask"

    #: seconds without any worker before the cases still waiting are given up
    no_worker_seconds = 60.0
    #: how many times a case may be running on a worker that died before it is stored ``crashed``
    max_worker_deaths = 2

    def map_cases(self, cases: Sequence[Case], options: ExecOptions) -> Iterator[dict]:
        try:
            import dask.distributed  # noqa: F401  (only to fail early with a clear message)
        except ImportError:
            raise SuiteError("executor 'dask' needs dask.distributed: pip install 'dlsys-suite[dask]'") from None
        return self._run(cases, options)

    def _connect(self, options: ExecOptions):
        import logging

        import dask
        from dask.distributed import Client, LocalCluster

        if options.scheduler:
            try:
                return Client(options.scheduler, timeout="20s"), None
            except OSError as exc:
                raise SuiteError(f"--scheduler {options.scheduler}: cannot connect: {exc}") from None
        # a worker death costs its running batch at once (no silent re-runs by the scheduler: this
        # executor re-runs the batch's cases one by one and stores the one that kills twice)
        import warnings

        with dask.config.set({"distributed.scheduler.allowed-failures": 0}), _sigint_ignored(), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a dashboard port in use: no run needs a dashboard
            cluster = LocalCluster(n_workers=max(1, options.jobs), threads_per_worker=1, processes=True,
                                   dashboard_address=":0", silence_logs=logging.CRITICAL)
            client = Client(cluster)
        try:
            client.run(_dask_setup_worker)
        except Exception:  # noqa: BLE001 - only a nicer Ctrl-C
            pass
        return client, cluster

    def _batches(self, cases: Sequence[Case], nworkers: int) -> list[list[Case]]:
        """The cases in batches of one package each (a worker never unpickles two packages)."""
        groups: dict[str, list[Case]] = {}
        for c in cases:
            groups.setdefault(package_of(_tech(c)), []).append(c)
        size = max(1, min(256, len(cases) // (nworkers * 4) or 1))
        return [g[i:i + size] for g in groups.values() for i in range(0, len(g), size)]

    def _run(self, cases: Sequence[Case], options: ExecOptions) -> Iterator[dict]:
        from dask.distributed import wait
        from distributed.client import FIRST_COMPLETED

        from suite.runner.sandbox import pack

        if not cases:
            return
        client, cluster = self._connect(options)
        # each batch runs a local pool of one worker in its sandbox: one case at a time per dask thread
        inner = replace(options, jobs=1, isolate=True, scheduler=None, executor_options={})
        running: dict[Any, list[str]] = {}
        try:
            techs: dict[int, Technique] = {}
            by_key: dict[str, Case] = {}
            for c in cases:  # one stripped technique per technique, not one per case
                t = _tech(c)
                if id(t) not in techs:
                    techs[id(t)] = _shippable(t)
                by_key[c.key] = replace(c, tech=techs[id(t)])
            deaths: dict[str, int] = {}

            def submit(keys: list[str]) -> None:
                blob = pack([by_key[k] for k in keys])
                fut = client.submit(_dask_batch, blob, keys, inner, pure=False)
                running[fut] = keys

            nworkers = max(1, len(client.scheduler_info().get("workers", {})) or options.jobs)
            for batch in self._batches(list(by_key.values()), nworkers):
                submit([c.key for c in batch])
            alone = time.monotonic()  # since when no worker is known (checked while cases wait)
            while running:
                try:
                    done, _ = wait(list(running), timeout=1.0, return_when=FIRST_COMPLETED)
                except Exception:  # noqa: BLE001 - dask raises its own TimeoutError class
                    done = set()
                for fut in done:
                    keys = running.pop(fut)
                    try:
                        outs = fut.result()
                    except Exception as exc:  # noqa: BLE001 - KilledWorker, a lost worker, ...
                        yield from self._worker_died(keys, exc, deaths, submit)
                        continue
                    yield from outs
                if not done and running:
                    if client.scheduler_info().get("workers"):
                        alone = time.monotonic()
                    elif time.monotonic() - alone > self.no_worker_seconds:
                        for fut, keys in list(running.items()):
                            fut.cancel()
                            for k in keys:
                                yield crashed_outcome(k, f"no dask worker for {self.no_worker_seconds:g} s: "
                                                         "this case was never run (`suite run` again reruns it)")
                        running.clear()
        finally:
            for fut in running:
                fut.cancel()
            with _sigint_ignored():
                try:
                    client.close()
                finally:
                    if cluster is not None:
                        cluster.close()

    def _worker_died(self, keys: list[str], exc: BaseException, deaths: dict[str, int], submit) -> Iterator[dict]:
        """A batch whose dask worker died: its cases re-run one by one (on a fresh worker); a case
        that was running on a dying worker :attr:`max_worker_deaths` times is stored ``crashed``."""
        if len(keys) > 1:
            for k in keys:  # which case killed it is unknown: each alone
                submit([k])
            return
        k = keys[0]
        deaths[k] = deaths.get(k, 0) + 1
        if deaths[k] < self.max_worker_deaths:
            submit([k])
            return
        yield crashed_outcome(k, f"dask worker lost while running this case ({deaths[k]} times; not tried "
                                 f"again): {_one_line(exc)}")


# --------------------------------------------------------------------------- lookup

BUILTIN_EXECUTORS = {"local": LocalExecutor, "dask": DaskExecutor}


def get_executor(name: str, registry: Any = None, *, context: Any = None) -> Executor:
    """The executor called *name*: a built-in one, or one a plugin provides (``suite_executor``).

    Parameters
    ----------
    name : str
    registry : Registry, optional
        Deprecated since 0.2.0 (``DeprecationWarning``), removed in 0.3.0: pass *context*.
    context : suite.context.Context
        Where plugin executors come from (the command's). Needed for a plugin's executor only;
        given none, a new one is built with a ``DeprecationWarning``.

    Raises
    ------
    SuiteError
        Unknown name (the known ones are listed).
    """
    if registry is not None or context is not None or name not in BUILTIN_EXECUTORS:
        from suite.context import Context

        if registry is not None:
            Context.warn_registry_argument("get_executor()")
    if name in BUILTIN_EXECUTORS:
        return BUILTIN_EXECUTORS[name]()
    ex = Context.given(context, "get_executor()", registry=registry).registry.executor(name)
    if ex is None:
        raise SuiteError(f"--executor: unknown executor {name!r}; expected one of {sorted(BUILTIN_EXECUTORS)} "
                         "or one a plugin provides")
    if isinstance(ex, type):
        ex = ex()
    if not hasattr(ex, "map_cases"):
        raise SuiteError(f"--executor {name}: the plugin's executor has no map_cases method")
    return ex
