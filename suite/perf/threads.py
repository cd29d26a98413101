"""Pinning BLAS and OpenMP thread pools while a measurement is taken; pausing the cyclic garbage
collector while a model builds many small acyclic objects (:func:`collector_paused`).

Multi-threaded BLAS on a shared machine makes repeated timings swing several-fold, so measured
claims time with one thread (docs/verdicts.md, measured claims).
``threadpoolctl`` (a scikit-learn dependency) limits only the libraries already loaded, and
scipy ships its own OpenBLAS, which the suite's plugins import lazily: it is loaded here first
(the library file itself, not ``scipy.linalg``), so a gemm that first runs inside the limit is
limited too.
"""

from __future__ import annotations

import contextlib
import functools
import gc
from collections.abc import Callable
from typing import Any

__all__ = ["blas_threads", "collector_paused", "measurement_clock"]


def blas_threads(n: int = 1) -> contextlib.AbstractContextManager[Any]:
    """A context manager limiting every BLAS and OpenMP pool to *n* threads.

    Parameters
    ----------
    n : int
        Threads; 0 or less leaves the pools as they are.

    Returns
    -------
    context manager
        ``threadpoolctl.threadpool_limits(limits=n)`` with numpy's and scipy's BLAS loaded
        beforehand, or a null context when *n* <= 0 or threadpoolctl is missing.
    """
    if n <= 0:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]
    except ImportError:  # pragma: no cover - threadpoolctl ships with scikit-learn
        return contextlib.nullcontext()
    import numpy  # noqa: F401  (its BLAS)

    _load_scipy_blas()
    limits: contextlib.AbstractContextManager[Any] = threadpool_limits(limits=n)
    return limits


@functools.cache  # the glob and the load once per process
def _load_scipy_blas() -> None:
    """Load scipy's own OpenBLAS into this process, so that :func:`threadpoolctl.threadpool_limits`
    sees it (a no-op once ``scipy.linalg`` is imported).

    A scipy wheel bundles it in ``scipy.libs/`` (auditwheel's layout), and ``scipy.linalg``'s
    extensions link to it by its soname, so loading the file itself is enough: a later
    ``import scipy.linalg`` reuses the very library, already limited. That costs a few
    milliseconds where importing ``scipy.linalg`` costs about 0.3 s of CPU (once per worker
    process that times something). Any other layout (a scipy linked to a system BLAS, a
    macOS wheel) imports ``scipy.linalg.blas`` as before.
    """
    import sys

    if "scipy.linalg" in sys.modules:
        return
    import glob
    import importlib.util
    import os

    spec = importlib.util.find_spec("scipy")
    if spec is None or not spec.origin:  # pragma: no cover - scipy is a dependency
        return
    libs = sorted(glob.glob(os.path.join(os.path.dirname(os.path.dirname(spec.origin)), "scipy.libs",
                                         "libscipy_openblas*.so*")))
    if libs:
        import ctypes

        try:
            for lib in libs:
                ctypes.CDLL(lib)
            return
        except OSError:  # pragma: no cover - fall back to importing it
            pass
    try:  # pragma: no cover - not a manylinux wheel
        import scipy.linalg.blas  # noqa: F401  (scipy's own OpenBLAS)
    except ImportError:  # pragma: no cover - scipy is a dependency
        pass


def measurement_clock(threads: int) -> Callable[[], float]:
    """The clock a timed measurement on *threads* BLAS/OpenMP threads reads (seconds).

    With one thread (``threads == 1``: the pools pinned by :func:`blas_threads`, the work on the
    calling thread), :func:`time.thread_time`: the calling thread's CPU time, page faults
    included, so time spent waiting for a core while other processes load a shared machine is
    not counted (two cases of one measured claim may run minutes apart, under different load;
    with wall time their ratio swung from 3.4 to 6.0 between runs of the same code). With more
    threads, or the pools as they are (``threads <= 0``), :func:`time.perf_counter` (wall time:
    the work is on other threads too).
    """
    import time

    return time.thread_time if int(threads) == 1 else time.perf_counter


class collector_paused(contextlib.ContextDecorator):  # noqa: N801 - used like a function, as blas_threads
    """Pause Python's cyclic garbage collector (:func:`gc.disable`) for a ``with`` block, or for each
    call of a function it decorates (``@collector_paused()``); the collector's state is put back
    on exit, also on an error, so nested and recursive uses are safe.

    When to use it: around a block that makes no cyclic garbage worth freeing before the block
    ends, e.g. a model that builds hundreds of thousands of small lists, tuples, dicts and arrays,
    none in a reference cycle (reference counting frees them as usual; only cycles wait). It
    then pays for the collector's walks and frees nothing with them: with a 15,000-layer table
    alive, 25-45% of a SuperNeurons ResNet-7502 trace or max-depth search was the collector
    (issue 19); in one ``suite reproduce``, Mixed-TD's searches 2.28 -> 1.90 s CPU and PFedDST's
    runs 6.29 -> 6.03 s. Cyclic garbage made inside, and the memory it holds, is freed by the
    first collection after the block. Not around a loop that makes cycles by the thousand.

    The collector's state before the block is put back when it ends, also when an exception
    passes through, and each nested block or recursive call of a decorated function puts back
    its own (an inner block leaves the collector off for the outer one; a collector that was off
    stays off).

    A class, not a generator: :func:`contextlib.contextmanager` sets ``__traceback__`` on an
    exception passing through, which a frozen-dataclass exception (:class:`suite.api.Skip`) refuses.
    """

    def __init__(self) -> None:
        self._was: bool | None = None

    def _recreate_cm(self) -> "collector_paused":
        return type(self)()  # one state per call of a decorated function (recursion, threads)

    def __enter__(self) -> "collector_paused":
        self._was = gc.isenabled()
        gc.disable()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._was:
            gc.enable()
