"""Pinning BLAS and OpenMP thread pools while a measurement is taken; pausing the cyclic garbage
collector while a model builds many small acyclic objects (:func:`collector_paused`, defined in
:mod:`suite.collector`, which imports nothing of the suite: the runner uses it too).

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
from collections.abc import Callable
from typing import Any

from suite.collector import collector_paused  # noqa: F401 - public here too (suite.perf, suite.api)

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
