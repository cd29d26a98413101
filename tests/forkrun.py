"""A command run in a child forked from the test process instead of a new interpreter, for the
fast twins of tests that start ``python -m suite`` or a script: a new interpreter imports the core,
numpy and the plugins again (~0.5 s CPU a command); a forked child starts with what this process
has imported. Nothing the child does (a plugin that patches shared modules, aborts, hangs, changes
``os.environ`` or ``sys.path``) reaches the test process.

:class:`Forked` has the part of :class:`subprocess.Popen`'s interface those tests use (``pid``,
``poll``, ``wait``, ``send_signal``, ``kill``, ``communicate``, ``returncode``); :func:`run` is
:func:`subprocess.run` with ``capture_output=True, text=True``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import threading
from typing import Any, Callable


def _single_threaded(wait: float = 5.0) -> None:
    """Return once this process runs its main thread alone: a thread an earlier test ended may still
    be finishing (a store's flusher after ``close``, on a loaded machine), so each other thread is
    joined for up to *wait* s in all; RuntimeError naming those still alive then (forking with another
    thread alive could leave a lock held in the child)."""
    import time

    deadline = time.monotonic() + wait
    for t in threading.enumerate():
        if t is not threading.main_thread():
            t.join(max(0.0, deadline - time.monotonic()))
    others = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
    if others:
        raise RuntimeError(f"Forked: threads alive besides the main one ({', '.join(others)}); "
                           "fork only a single-threaded process")


class Forked:
    """``target(*args)`` in a forked child, set up like a new process where that can be undone: environment
    *env* (the parent's when None), stdin empty, stdout and stderr its own (read back by
    :meth:`communicate`), SIGINT and SIGTERM at Python's defaults, no faulthandler, its own process
    group (:meth:`kill_group` ends it with its own children). The child's exit status is what
    *target* returns (0 for None), the code of the SystemExit it raises, 1 after any other
    exception (its traceback on stderr), or the signal that killed it (``returncode`` < 0).

    Not a new process: the child keeps the modules the test process loaded and their in-memory
    caches (a registry's distribution names, the click commands, ``suite.api`` exports already
    read) and runs no ``atexit`` handler. A behaviour that depends on those (an import-time check
    of a name first read in the child, a cache saved at exit) needs the new-interpreter variant.
    Forking with other threads alive could leave a lock held in the child: refused."""

    def __init__(self, target: Callable[..., Any], *args: Any, env: dict[str, str] | None = None,
                 argv: list[str] | None = None):
        self.args = argv or [getattr(target, "__name__", "target")]
        self._out, self._err = tempfile.TemporaryFile(), tempfile.TemporaryFile()
        self.returncode: int | None = None
        _single_threaded()
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child ends with os._exit)
            code = 1
            try:
                code = _child(target, args, env, self._out.fileno(), self._err.fileno())
            finally:
                os._exit(code)
        self.pid = pid
        try:
            os.setpgid(pid, pid)  # (the child does it too: whichever runs first)
        except OSError:
            pass

    def poll(self) -> int | None:
        if self.returncode is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if timeout is not None and not _ended(self.pid, timeout):
                raise subprocess.TimeoutExpired(self.args, timeout)
            self.returncode = os.waitstatus_to_exitcode(os.waitpid(self.pid, 0)[1])
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            os.kill(self.pid, sig)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def kill_group(self) -> None:
        """SIGKILL to the child and every process of its group (its workers), then reap it."""
        if self.poll() is None:
            os.killpg(self.pid, signal.SIGKILL)
            self.wait()

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        self.wait(timeout)
        texts = []
        for f in (self._out, self._err):
            f.seek(0)
            texts.append(f.read().decode(errors="replace"))
            f.close()
        return texts[0], texts[1]


def run(target: Callable[..., Any], *args: Any, env: dict[str, str] | None = None, timeout: float | None = None,
        argv: list[str] | None = None) -> subprocess.CompletedProcess:
    """:class:`Forked` to its end, as :func:`subprocess.run` with ``capture_output=True,
    text=True``: past *timeout* s the child and its group are killed and
    :class:`subprocess.TimeoutExpired` is raised."""
    p = Forked(target, *args, env=env, argv=argv)
    try:
        out, err = p.communicate(timeout)
    except subprocess.TimeoutExpired:
        p.kill_group()
        raise
    return subprocess.CompletedProcess(p.args, p.returncode, out, err)


def suite_main(args: list[str] | tuple[str, ...], site: str | os.PathLike[str] | None = None) -> None:
    """A *target* for :class:`Forked`: ``python -m suite ARGS`` (:func:`suite.cli.entry`), with
    the distributions of folder *site* installed: first on ``sys.path`` and the ``suite.plugins``
    entry points scanned again (:mod:`suite.registry` keeps one scan per process)."""
    if site is not None:
        import importlib

        sys.path.insert(0, os.fspath(site))
        importlib.invalidate_caches()
    from suite import registry
    from suite.cli import entry

    registry._DISCOVERED = None  # a new process scans the entry points on its sys.path
    sys.argv = ["suite", *args]
    entry()


def _ended(pid: int, timeout: float) -> bool:
    """Whether child *pid* ends within *timeout* s (it is not reaped)."""
    import select
    import time

    if hasattr(os, "pidfd_open"):  # Linux: sleep until the child ends
        fd = os.pidfd_open(pid)
        try:
            return bool(select.select([fd], [], [], timeout)[0])
        finally:
            os.close(fd)
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        time.sleep(0.02)
    return False


def _child(target: Callable[..., Any], args: tuple[Any, ...], env: dict[str, str] | None, out: int, err: int) -> int:
    """In the forked child: become what a new process starts as, call *target*, return its status."""
    import faulthandler
    import gc
    import io

    # what the test process holds is not the command's: out of the cyclic collector's walks, which
    # would write the header of every inherited object (a copy of each page on write)
    gc.freeze()
    os.setpgid(0, 0)  # its own group: a time-out kills the child and its workers together
    faulthandler.disable()  # pytest's, which would print the test process's stack on an abort
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    null = os.open(os.devnull, os.O_RDONLY)
    for src, fd in ((null, 0), (out, 1), (err, 2)):
        os.dup2(src, fd)
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), encoding="utf-8")
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), encoding="utf-8", errors="backslashreplace",
                                  line_buffering=True)
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    try:
        got = target(*args)
        code = 0 if got is None else int(got)
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            print(e.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001  (what an uncaught exception does to a process)
        import traceback

        traceback.print_exc()
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return code
