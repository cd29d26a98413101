"""The ``local`` executor: a pool of forked worker processes, or this process when asked.

A pool of ``jobs`` forked worker processes (one by default), each fed chunks of case indices over
a pipe (guided sizes up to :data:`CHUNK_MAX`; a worker's next chunk is queued once it begins its
last, so it never idles waiting for the coordinator; outcomes come back in batches).
``isolate=False`` with one job (``--in-process``) evaluates in this process instead (a per-case
timeout then uses ``SIGALRM``). A worker that dies (``os.abort``, a segfault) or runs past the
timeout is killed and replaced; its current case is stored as ``crashed`` / ``timeout`` and the
rest of its chunk is re-queued, so the run goes on.

No state reaches a worker through module globals: the cases and the artifacts mode are the
arguments of its forked ``Process`` (inherited in memory, never pickled), so two pools in one
process cannot see each other's cases.
"""

from __future__ import annotations

import gc
import os
import select
import signal
import sys
import time
import traceback
from collections import deque
from collections.abc import Iterator, Sequence
from typing import Any

from suite.runner.case import Case
from suite.runner.evaluate import (CaseTimeout, CodeCheck, InputSnapshots, Outcome, ReadSampler, crashed_outcome,
                                   describe_exit, evaluate_outcome, package_of, resolved_tech)
from suite.runner.options import ExecOptions, Executor, stop_signals
from suite.tamper_process import recheck

__all__ = ["LocalExecutor", "run_isolated", "CHUNK_MAX"]

_BATCH_CASES = 128  # a worker sends outcomes in batches of at most this many ...
_BATCH_SECONDS = 0.05  # ... or this old, unless a chunk is "immediate"
#: most cases in one task message of the local pool (a batched chunk; guided: a quarter of each
#: worker's share of what is left, so the last chunks are small and the workers finish together)
CHUNK_MAX = 512


def _chunk_size(left: int, workers: int) -> int:
    return max(1, min(CHUNK_MAX, left // (workers * 4) or 1))


# --------------------------------------------------------------------------- in this process


class _Alarm:
    """The ``SIGALRM`` handler of an in-process run: raises :class:`CaseTimeout` with its message."""

    def __init__(self) -> None:
        self.message = "timed out"

    def __call__(self, signum: int, frame: Any) -> None:  # pragma: no cover - through the timeout tests
        raise CaseTimeout(self.message)


def _in_process(cases: Sequence[Case], timeout: float | None, artifacts: str = "full") -> Iterator[Outcome]:
    import threading

    use_alarm = bool(timeout) and threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    alarm = _Alarm()
    old = signal.signal(signal.SIGALRM, alarm) if use_alarm else None
    sampler, snaps, code = ReadSampler(), InputSnapshots(), CodeCheck()
    try:
        for case in cases:
            recheck()  # a watched plugin thread's change put back (noted: the run's warnings drain it)
            tech = resolved_tech(case)
            rec = sampler.take((tech.name, case.variant, case.fidelity))
            if not use_alarm:
                yield code.apply(case, evaluate_outcome(tech, case.scenario, case.key, artifacts, record_reads=rec,
                                                        snapshots=snaps))
                continue
            alarm.message = f"timed out after {timeout:g} s"
            signal.setitimer(signal.ITIMER_REAL, float(timeout or 0))
            try:
                out = evaluate_outcome(tech, case.scenario, case.key, artifacts, record_reads=rec, snapshots=snaps)
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            yield code.apply(case, out)
    finally:
        if use_alarm:
            signal.signal(signal.SIGALRM, old)


# --------------------------------------------------------------------------- a worker process


def _die_with_parent(parent: int) -> None:
    """Make this worker exit when the coordinator dies (kill -9 leaves no orphan workers)."""
    try:  # Linux: the kernel sends SIGKILL when the parent dies
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # elsewhere: the receive loop polls os.getppid()
        pass
    if os.getppid() != parent:  # the parent died before prctl
        os._exit(1)


#: the cyclic collector's thresholds plugin code runs under in a worker: this process's when the
#: pool was first imported (the engine raises the coordinator's for the length of a run, for its
#: own acyclic allocations only; a plugin's evaluation, perhaps timed by a measured claim, keeps these)
_PLUGIN_GC_THRESHOLD = gc.get_threshold()


def _worker_setup(fault_fd: int, parent: int) -> None:  # pragma: no cover - runs in a child process
    import faulthandler
    import gc

    gc.set_threshold(*_PLUGIN_GC_THRESHOLD)

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
    # the coordinator's stop-signal handlers (SIGTERM: a run stopped by a batch scheduler; SIGHUP: a
    # closed ssh session) are not the worker's: the signal kills the worker, and its case is stored
    # crashed, as on every executor; one ignored (nohup) stays ignored, or a closed session would
    # crash the running cases of a run that goes on
    for sig in stop_signals():
        if signal.getsignal(sig) is not signal.SIG_IGN:
            signal.signal(sig, signal.SIG_DFL)
    # a fatal error (abort, segfault) writes the Python stack to a file the coordinator reads
    # back and stores as the crashed case's traceback
    faulthandler.enable(file=fault_fd, all_threads=False)
    # a forked child holds no other thread: what a watched plugin's thread changed in the
    # coordinator before the fork is put back here, and nothing can change it after
    recheck()


def _run_chunk(conn: Any, cases: Sequence[Case], indices: list[int], immediate: bool, artifacts: str,
               sampler: ReadSampler, snaps: InputSnapshots, code: CodeCheck) -> None:  # pragma: no cover - runs in a child process
    """Evaluate the cases at *indices*, sending outcomes back one by one (*immediate*: exact
    timeout and crash attribution) or batched (fewer messages for cheap cases); a case whose code
    changed since it was resolved fails (*code*, checked once per chunk and after an import)."""
    buf: list[Outcome] = []
    code.begin()
    last = time.monotonic()
    for i in indices:
        case = cases[i]
        tech = resolved_tech(case)
        out = evaluate_outcome(tech, case.scenario, case.key, artifacts, interrupt_fails=True,
                               record_reads=sampler.take((tech.name, case.variant, case.fidelity)), snapshots=snaps)
        code.apply(case, out)
        out["i"] = i
        buf.append(out)
        now = time.monotonic()
        if immediate or len(buf) >= _BATCH_CASES or now - last >= _BATCH_SECONDS:
            conn.send(buf)
            buf, last = [], now
    if buf:
        conn.send(buf)


def _worker_main(conn: Any, fault_fd: int, parent: int, cases: Sequence[Case],
                 artifacts: str) -> None:  # pragma: no cover - runs in a child process
    """A pool worker: chunks of indices into *cases* in, outcomes out, until told to stop."""
    _worker_setup(fault_fd, parent)
    sampler, snaps, check = ReadSampler(), InputSnapshots(), CodeCheck()
    code = 0
    try:
        while True:
            while not conn.poll(1.0):
                if os.getppid() != parent:  # orphaned: the coordinator was killed
                    raise EOFError
            msg = conn.recv()
            if msg is None:
                break
            _run_chunk(conn, cases, msg[0], msg[1], artifacts, sampler, snaps, check)
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        code = 1
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
        code = 1
    finally:
        # never run the parent's atexit handlers or close its inherited SQLite connection
        os._exit(code)


class _Worker:
    """One forked worker process of a pool, with the chunk of case indices it holds."""

    __slots__ = ("proc", "conn", "chunk", "since", "fault", "immediate", "owner", "tail")

    def __init__(self, ctx: Any, cases: Sequence[Case], artifacts: str) -> None:
        import tempfile

        parent, child = ctx.Pipe(duplex=True)
        self.fault = tempfile.TemporaryFile()
        self.proc = ctx.Process(target=_worker_main, daemon=True,
                                args=(child, self.fault.fileno(), os.getpid(), cases, artifacts))
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

    def send(self, chunk: list[int], now: float | None = None) -> None:
        """Hand *chunk* to the worker (``now``: it was idle, its progress clock restarts)."""
        self.chunk.extend(chunk)
        self.tail = len(chunk)
        if now is not None:
            self.since = now
        try:
            self.conn.send((chunk, self.immediate))
        except (BrokenPipeError, ConnectionResetError):
            # it died (a case aborted) since the last look: its sentinel says so on the next wait,
            # and the chunk, recorded above as its own, is re-run like the rest of its cases (a
            # loaded machine hit this window: the run raised BrokenPipeError instead)
            pass

    def stop(self) -> None:
        """Ask an idle worker to exit (a dead one is ignored)."""
        try:
            self.conn.send(None)
        except (OSError, BrokenPipeError):
            pass

    def kill(self) -> None:
        try:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(5)
        finally:
            self.conn.close()
            self.fault.close()


# --------------------------------------------------------------------------- the pool


def _ready(objs: list[Any], timeout: float) -> list[Any]:
    """The pipes and process sentinels among *objs* with something to read (or closed), waiting
    at most *timeout* seconds: :func:`multiprocessing.connection.wait`, less its cost.

    That function (and ``Connection.poll``, which calls it) builds and fills a selector on every
    call: three per batch of outcomes, 30-80 us each on a loaded 2-core machine, several
    microseconds per case of a cheap sweep (issue 44). A ``select.poll`` object, filled here,
    answers the same question with one system call; ``wait`` stays where ``poll`` is missing.
    """
    if not hasattr(select, "poll"):  # pragma: no cover - Windows has no fork pool anyway
        from multiprocessing.connection import wait

        return wait(objs, timeout)
    poller = select.poll()
    by_fd: dict[int, Any] = {}
    for o in objs:
        fd = o if isinstance(o, int) else o.fileno()
        by_fd[fd] = o
        poller.register(fd, select.POLLIN)
    # any event is an answer: data, or a closed pipe (POLLHUP), as multiprocessing's wait reads it
    return [by_fd[fd] for fd, _ev in poller.poll(max(0, int(timeout * 1000 + 0.999)))]


#: imported by the coordinator before a pool forks more than one worker over a run: what nearly
#: every plugin's evaluation imports (numpy, the public cost models), so each forked worker inherits
#: it instead of importing (and, without byte code, compiling) it again on its first case. Core code
#: only: no plugin code runs in the coordinator, so a worker's package isolation is unchanged.
PRELOAD = ("numpy", "suite.perf", "suite.collectives")


def _preload() -> None:
    import importlib

    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError:  # pragma: no cover - the worker reports it on its own case
            pass


def _owners(cases: Sequence[Case]) -> list[str]:
    """:func:`suite.runner.evaluate.package_of` of each case's technique, asked once per technique
    object (it sorts the technique's modules on every call: 3 us a case of a cheap sweep)."""
    memo: dict[int, str] = {}
    out = []
    for c in cases:
        owner = memo.get(id(c.tech))
        if owner is None:
            owner = memo[id(c.tech)] = package_of(c.tech)
        out.append(owner)
    return out


class _Pool:
    """One pool run over *cases*: the queues, the workers, and the steps of its loop.

    Each worker is bound to the package of the first case it runs and only ever runs that
    package's cases (:func:`suite.runner.evaluate.package_of`): pending cases are queued per
    package, and a worker whose package has nothing left is replaced by a fresh fork before it
    takes another package's. Cases that were in a batched chunk whose worker died are
    *suspects*: which one killed it is unknown, so each is re-run alone, in immediate mode, and
    the one that dies again is the crashed case.
    """

    def __init__(self, cases: Sequence[Case], jobs: int, timeout: float | None, stall: float | None,
                 artifacts: str) -> None:
        import multiprocessing as mp

        self.ctx = mp.get_context("fork")
        self.cases, self.timeout, self.stall, self.artifacts = cases, timeout, stall, artifacts
        self.owners = _owners(cases)
        self.pending: dict[str, deque[int]] = {}
        for i, o in enumerate(self.owners):
            self.pending.setdefault(o, deque()).append(i)
        self.suspects: deque[int] = deque()
        if len(self.pending) > 1 or jobs > 1:  # more than one worker over the run: import once, here
            _preload()
        self.workers = [self._fork() for _ in range(max(1, min(jobs, len(cases))))]

    def _fork(self) -> _Worker:
        return _Worker(self.ctx, self.cases, self.artifacts)

    def requeue(self, idx: list[int]) -> None:
        for i in reversed(idx):
            self.pending[self.owners[i]].appendleft(i)

    def _left(self) -> int:
        return sum(len(x) for x in self.pending.values())

    def take(self, w: _Worker) -> list[int] | None:
        """The next chunk for idle worker *w* (binding it), or None when nothing fits it."""
        for j, i in enumerate(self.suspects):
            if w.owner in (None, self.owners[i]):
                del self.suspects[j]
                w.owner, w.immediate = self.owners[i], True
                return [i]
        q = self.pending.get(w.owner) if w.owner is not None else None
        if not q:
            if w.owner is not None:
                return None
            q = next((q for q in self.pending.values() if q), None)
            if q is None:
                return None
            w.owner = self.owners[q[0]]
        size = _chunk_size(self._left(), len(self.workers))
        w.immediate = bool(self.timeout)  # timeouts need per-case progress messages
        return [q.popleft() for _ in range(min(size, len(q)))]

    def prefetch(self, w: _Worker) -> list[int] | None:
        """The next batched chunk of its own package for busy worker *w* once it has begun its
        last one, so it never waits for the coordinator between chunks (at most two outstanding;
        never with per-case messages or while suspects wait, whose attribution needs one chunk)."""
        if w.immediate or self.suspects or len(w.chunk) > w.tail:
            return None
        q = self.pending.get(w.owner) if w.owner is not None else None
        if not q:
            return None
        size = _chunk_size(self._left(), len(self.workers))
        return [q.popleft() for _ in range(min(size, len(q)))]

    def feed(self, now: float) -> None:
        """Give every worker its next chunk: a queued one behind a running chunk, a first one to an
        idle worker, or a fresh process to an idle worker whose package is done."""
        for idx, w in enumerate(self.workers):
            if w.chunk:
                more = self.prefetch(w)
                if more:  # queued behind the running chunk; its progress clock keeps running
                    w.send(more)
                continue
            chunk = self.take(w)
            if chunk is None and w.owner is not None and (self.suspects or any(self.pending.values())):
                # its package is done and another's cases wait: a fresh process takes them
                w.stop()
                w.kill()
                w = self.workers[idx] = self._fork()
                chunk = self.take(w)
            if chunk is not None:
                w.send(chunk, now)

    def wait_seconds(self, busy: list[_Worker], now: float) -> float:
        """How long to wait for a message: at most 1 s, and no later than the first time-out."""
        limit = self.timeout or self.stall
        if not limit:
            return 1.0
        return max(0.0, min(1.0, min(w.since + limit - now for w in busy)))

    def receive(self, w: _Worker) -> Iterator[Outcome]:
        """Every outcome *w* has sent so far.

        Raises
        ------
        EOFError, OSError
            Its pipe closed (the worker died).
        """
        while w.chunk and _ready([w.conn], 0.0):
            for out in w.conn.recv():
                i = out.pop("i")
                if w.chunk and w.chunk[0] == i:
                    w.chunk.popleft()
                yield out
            w.since = time.monotonic()  # progress: read once a batch is handed on (nothing reads it between)

    def replace_lost(self, idx: int, w: _Worker, error: str, status: str = "crashed") -> Outcome | None:
        """Worker *w* died or stalled: a fresh process takes its place. Batched, its cases become
        suspects (None returned); immediate, its current case gets outcome *status*/*error* and
        the rest of its chunk is re-queued."""
        w.kill()
        self.workers[idx] = self._fork()
        if not w.immediate:  # unknown culprit among the unreported cases
            self.suspects.extend(w.chunk)
            return None
        i = w.chunk.popleft()
        self.requeue(list(w.chunk))
        return crashed_outcome(self.cases[i].key, error, status=status)

    def check(self, idx: int, w: _Worker, ready: set[Any]) -> Iterator[Outcome]:
        """Collect what busy worker *w* reported; replace it if it died or ran past its limit."""
        dead = w.proc.sentinel in ready
        if w.conn in ready or dead:
            try:
                yield from self.receive(w)
            except (EOFError, OSError):
                dead = True
        limit = self.timeout or self.stall
        if w.chunk and (dead or not w.proc.is_alive()):
            w.proc.join(5)
            code, stack = w.proc.exitcode, w.fault_text()
            out = self.replace_lost(idx, w, describe_exit(code))
            if out is not None:
                out["traceback"] = stack
                yield out
        elif w.chunk and limit and time.monotonic() - w.since > limit:
            why = (f"timed out after {self.timeout:g} s" if self.timeout else
                   f"stalled: no progress for {self.stall:g} s (the default hang guard; --timeout S sets a limit)")
            out = self.replace_lost(idx, w, why, status="timeout")
            if out is not None:
                yield out

    def run(self) -> Iterator[Outcome]:
        """Outcomes as workers report them, until every case has one (or the consumer stops)."""
        try:
            while True:
                now = time.monotonic()
                self.feed(now)
                busy = [w for w in self.workers if w.chunk]
                if not busy:
                    return
                ready = set(_ready([w.conn for w in busy] + [w.proc.sentinel for w in busy],
                                   self.wait_seconds(busy, now)))
                for idx, w in enumerate(self.workers):
                    if w.chunk:
                        yield from self.check(idx, w, ready)
        finally:
            self.close()

    def close(self) -> None:
        """Stop the workers: an idle one is asked to exit (and joined for up to 2 s); one with cases
        in flight is killed at once, since the consumer stopped reading (an interrupted run): what
        it would send is not wanted, and waiting for it held every Ctrl-C / SIGTERM 2 s."""
        for w in self.workers:
            if w.chunk:
                w.kill()
            elif w.proc.is_alive():
                w.stop()
        deadline = time.monotonic() + 2
        for w in self.workers:
            w.proc.join(max(0.0, deadline - time.monotonic()))
            w.kill()


def _pool(cases: Sequence[Case], jobs: int, timeout: float | None, stall: float | None = None,
          artifacts: str = "full") -> Iterator[Outcome]:
    # a generator: the workers are forked when the consumer first asks, and closing it stops them
    yield from _Pool(cases, jobs, timeout, stall, artifacts).run()


class LocalExecutor(Executor):
    """This machine: a pool of forked workers; in this process only when asked (see module doc)."""

    name = "local"
    detaches_on_hangup = False  # SIGHUP stops a run as Ctrl-C does: its workers end with the session

    def map_cases(self, cases: Sequence[Case], options: ExecOptions) -> Iterator[Outcome]:
        if not cases:
            return iter(())
        if options.jobs <= 1 and not options.isolate:
            return _in_process(cases, options.timeout, options.artifacts)
        return _pool(cases, max(1, options.jobs), options.timeout,
                     stall=None if options.timeout else options.stall_timeout, artifacts=options.artifacts)


def run_isolated(cases: Sequence[Case], options: ExecOptions) -> Iterator[Outcome]:
    """Evaluate *cases* on this machine, each in a forked worker process.

    Parameters
    ----------
    cases : sequence of Case
        Resolved cases (``case.tech`` and ``case.scenario`` set).
    options : ExecOptions
        ``jobs`` worker processes, ``timeout`` per case (s), the hang guard; ``isolate`` is
        forced on, so a crashing case costs only itself.

    Yields
    ------
    dict
        One outcome per case, in completion order (see :func:`suite.runner.evaluate.evaluate_outcome`).
    """
    from dataclasses import replace

    return LocalExecutor().map_cases(cases, replace(options, isolate=True, scheduler=None, executor_options={}))
