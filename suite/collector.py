"""Pausing Python's cyclic garbage collector around work that makes no cyclic garbage
(:func:`collector_paused`; public as ``suite.perf.collector_paused`` and ``suite.api.collector_paused``).

A module of its own, importing nothing of the suite, so that the runner can pause the collector
without importing :mod:`suite.perf` into a command that needs none of it (a cached ``suite
reproduce`` imports no cost model).
"""

from __future__ import annotations

import contextlib
import gc

__all__ = ["collector_paused"]


class collector_paused(contextlib.ContextDecorator):  # noqa: N801 - used like a function, as blas_threads
    """Pause Python's cyclic garbage collector (:func:`gc.disable`) for a ``with`` block, or for each
    call of a function it decorates (``@collector_paused()``); the collector's state is put back
    on exit, also on an error, so nested and recursive uses are safe.

    When to use it: around a block that makes no cyclic garbage worth freeing before the block
    ends, e.g. a model that builds hundreds of thousands of small lists, tuples, dicts and arrays,
    none in a reference cycle (reference counting frees them as usual; only cycles wait). It
    then pays for the collector's walks and frees nothing with them: with a 15,000-layer table
    alive, 25-45% of a memory trace or max-depth search over it was the collector (issue 19);
    in one ``suite reproduce``, a design-space search 2.17-2.28 -> 1.76-1.90 s CPU (two
    runs) and a federated simulation 6.29 -> 6.03 s (docs/performance-history.md, "Reproduce, 0.3.5"). Cyclic garbage made inside, and the memory it holds, is freed by the
    first collection after the block. Not around a loop that makes cycles by the thousand.

    The collector's state before the block is put back when it ends, also when an exception
    passes through, and each nested block or recursive call of a decorated function puts back
    its own (an inner block leaves the collector off for the outer one; a collector that was off
    stays off), also when one object is entered nested (``p = collector_paused()``, ``with p: with
    p:``). The collector is one per process: a thread leaving its block turns it back on for
    another thread still inside one, and a decorated generator function's body runs after the
    call returns, with the collector as it is then (only timings change either way).

    A class, not a generator: :func:`contextlib.contextmanager` sets ``__traceback__`` on an
    exception passing through, which a frozen-dataclass exception (:class:`suite.api.Skip`) refuses.
    """

    def __init__(self) -> None:
        self._was: list[bool] = []  # one state per entry: the same object may be entered nested

    def _recreate_cm(self) -> "collector_paused":
        return type(self)()  # one state per call of a decorated function (recursion)

    def __enter__(self) -> "collector_paused":
        self._was.append(gc.isenabled())
        gc.disable()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._was.pop():
            gc.enable()
