"""Evaluate a pickled batch of cases in a supervised child process (the remote executors' unit).

A remote executor (dask, slurm) hands its worker a batch of cases *as bytes*. The worker process
never unpickles them itself: :func:`run_sandboxed` forks a child that unpickles the batch (which
imports the batch's plugin, and only it) and evaluates it through the local pool
(:func:`suite.runner.pool.run_isolated`), so a remote case gets exactly the local pool's guarantees:

* a per-case time-out measured from the case's start, and the default hang guard;
* a case that aborts, segfaults or exhausts memory costs only itself (``crashed``), and never the
  remote worker, so a sweep with many crashing cases cannot use up a cluster's workers;
* the worker process stays free of plugin code: one plugin's import-time patches cannot reach
  another plugin's cases that the same remote worker runs later (a batch holds one package's
  cases: :func:`suite.runner.evaluate.package_of`).

The child is itself supervised: if it reports nothing for *guard* seconds (a plugin module whose
import hangs in C, say) it is killed, with every pool worker under it, and its unreported cases
come back ``timeout``; if it dies, they come back ``crashed``. The call therefore always returns.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import select
import signal
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from suite.runner.evaluate import Outcome, crashed_outcome, describe_exit

__all__ = ["run_sandboxed", "pack", "guard_seconds"]

#: seconds a sandbox may stay silent beyond the longest per-case limit before it is stopped
GUARD_SLACK = 60.0


def pack(cases: Sequence[Any]) -> bytes:
    """The batch *cases* (shippable: :func:`suite.execution.shippable`) as the bytes a remote
    worker receives."""
    return pickle.dumps(list(cases), protocol=pickle.HIGHEST_PROTOCOL)


def guard_seconds(options: Any) -> float | None:
    """How long a sandbox may report nothing before it is stopped: the longest per-case limit of
    *options* (the time-out, else the hang guard and the execute time-out) plus
    :data:`GUARD_SLACK`; None when every limit is off."""
    limits = [x for x in (options.timeout,) if x] or [x for x in (options.stall_timeout, options.execute_timeout) if x]
    return max(limits) + GUARD_SLACK if limits else None


def _child(blob: bytes, options: Any, wfd: int) -> None:  # pragma: no cover - runs in the forked child
    import multiprocessing.process as mpp

    from multiprocessing.connection import Connection

    code = 0
    conn = Connection(wfd, readable=False)
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's business
        try:  # die with the remote worker (kill -9 of it leaves no orphan sandbox)
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))
        except (OSError, AttributeError):
            pass
        # a dask worker is a daemonic process, which multiprocessing forbids to have children;
        # this child is ours, and its pool workers are killed with it
        mpp.current_process()._config["daemon"] = False  # type: ignore[attr-defined]
        from suite.runner.pool import run_isolated

        cases = pickle.loads(blob)  # imports this batch's plugin here, never in the remote worker
        for out in run_isolated(cases, options):
            conn.send(("out", out))
    except BaseException as exc:  # noqa: BLE001 - reported to the parent, which stores the cases
        code = 1
        try:
            msg = str(exc).strip().splitlines()
            conn.send(("error", f"{type(exc).__name__}: {msg[0]}" if msg else type(exc).__name__,
                       traceback.format_exc()))
        except BaseException:  # noqa: BLE001
            pass
    finally:
        os._exit(code)


def _lost(keys: Sequence[str], error: str, status: str = "crashed", tb: str | None = None) -> Iterator[Outcome]:
    for k in keys:
        out = crashed_outcome(k, error, status=status)
        out["traceback"] = tb
        yield out


@contextlib.contextmanager
def _exit_waiter(pid: int) -> Iterator[Callable[[float], None]]:
    """A wait of at most its argument's seconds for child *pid* to exit: on the child's pidfd
    (Linux 5.3+), so it ends as the child exits, else a 10 ms sleep. A sandbox exits 1-12 ms
    after its last outcome (its pool worker stopped and joined, its memory unmapped), and the
    sleeps made that 10-20 ms on every batch's path to its result."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):  # not Linux, an old kernel, or the child is gone
        yield lambda left: time.sleep(min(0.01, max(0.0, left)))
        return

    def wait(left: float) -> None:
        select.select([fd], [], [], max(0.0, left))

    try:
        yield wait
    finally:
        os.close(fd)


class _Sandbox:
    """A forked child evaluating one batch, and what the parent learned from it: the keys it has
    not reported (``left``), an error it reported, whether it went silent, its exit status."""

    def __init__(self, blob: bytes, keys: Sequence[str], options: Any) -> None:
        from multiprocessing.connection import Connection

        rfd, wfd = os.pipe()
        self.pid = os.fork()
        if self.pid == 0:  # pragma: no cover - the child
            os.close(rfd)
            _child(blob, options, wfd)
        os.close(wfd)
        self.conn = Connection(rfd, writable=False)
        self.left = dict.fromkeys(keys)
        self.error: tuple[str, str | None] | None = None
        self.stalled = False
        self.status: int | None = None

    def outcomes(self, guard: float | None) -> Iterator[Outcome]:
        """What the child reports, until every key has an outcome, it dies, or it stays silent
        for *guard* seconds."""
        while self.left:
            if not self.conn.poll(guard):
                self.stalled = True
                return
            try:
                msg = self.conn.recv()
            except (EOFError, OSError):
                return
            if msg[0] == "out":
                self.left.pop(msg[1].get("key"), None)
                yield msg[1]
            else:
                self.error = (msg[1], msg[2])

    def reap(self) -> None:
        """Kill the child if it still owes outcomes; collect its exit status (5 s at most)."""
        if self.left:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except OSError:
                pass
        self.conn.close()
        deadline = time.monotonic() + 5
        with _exit_waiter(self.pid) as wait_exit:
            while True:
                try:
                    done, self.status = os.waitpid(self.pid, os.WNOHANG)
                except ChildProcessError:
                    break
                if done or time.monotonic() > deadline:
                    break
                wait_exit(deadline - time.monotonic())

    def unreported(self, guard: float | None) -> Iterator[Outcome]:
        """An outcome for every key the child never reported, saying why."""
        left = list(self.left)
        if not left:
            return
        if self.stalled:
            yield from _lost(left, f"timed out: the case's sandbox reported nothing for {guard:g} s "
                                   "(a plugin import or a worker that hangs)", status="timeout")
        elif self.error is not None:
            yield from _lost(left, f"could not evaluate this batch: {self.error[0]}", tb=self.error[1])
        else:
            code = None
            if self.status is not None:
                code = -os.WTERMSIG(self.status) if os.WIFSIGNALED(self.status) else os.WEXITSTATUS(self.status)
            yield from _lost(left, describe_exit(code).replace("worker process", "sandbox process"))


def run_sandboxed(blob: bytes, keys: Sequence[str], options: Any, guard: float | None = None) -> Iterator[Outcome]:
    """Evaluate the pickled batch *blob* (whose case keys are *keys*, in order) in a forked,
    supervised child; yield one outcome per key as each case finishes.

    Parameters
    ----------
    blob : bytes
        :func:`pack` of resolved, shippable cases.
    keys : sequence of str
        Their keys (the outcome of a case the child never reported is made from it).
    options : ExecOptions
        Of the local pool the child runs (``jobs`` workers, ``timeout``, hang guard).
    guard : float or None
        Seconds of silence after which the child is killed (default :func:`guard_seconds`).

    Yields
    ------
    dict
        One outcome per key (``crashed`` / ``timeout`` for those the child never reported).
    """
    guard = guard_seconds(options) if guard is None else guard
    box = _Sandbox(blob, keys, options)
    try:
        yield from box.outcomes(guard)
    finally:
        box.reap()
    yield from box.unreported(guard)
