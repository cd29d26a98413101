"""suite.perf.blas_threads: every BLAS pool, scipy's own OpenBLAS included, at the limit."""

from __future__ import annotations

import pytest


def test_every_blas_pool_is_limited_including_scipys(blas_unpinned):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from suite.perf import blas_threads

    blas = [p for p in threadpoolctl.threadpool_info() if p.get("user_api") == "blas"]
    assert blas and all(p["num_threads"] == 2 for p in blas)  # unpinned: the limit below is what sets 1
    with blas_threads(1):
        import scipy.linalg.blas  # noqa: F401  (loaded by blas_threads already)

        pools = [p for p in threadpoolctl.threadpool_info() if p.get("user_api") == "blas"]
        assert pools and all(p["num_threads"] == 1 for p in pools)
        assert any("scipy" in p["filepath"] for p in pools)  # scipy's OpenBLAS, not only numpy's


def test_zero_leaves_the_pools_alone():
    import contextlib

    from suite.perf import blas_threads

    assert isinstance(blas_threads(0), contextlib.nullcontext)


def test_measurement_clock_at_one_thread_does_not_count_waiting():
    # one thread: the calling thread's CPU time, so a wait (here a sleep: what being descheduled
    # by other processes looks like to the measured code) adds nothing; otherwise wall time
    import time

    from suite.perf import measurement_clock

    assert measurement_clock(1) is time.thread_time
    assert measurement_clock(0) is time.perf_counter and measurement_clock(4) is time.perf_counter
    for threads, waited in ((1, False), (2, True)):
        clock = measurement_clock(threads)
        t0 = clock()
        time.sleep(0.05)
        dt = clock() - t0
        assert (dt >= 0.05) if waited else (dt < 0.02), (threads, dt)


def test_scipys_blas_first_loaded_inside_the_limit_is_limited_and_loaded_once():
    # a fresh interpreter, where nothing imported scipy.linalg yet: blas_threads loads scipy's
    # OpenBLAS without importing scipy.linalg, and the scipy.linalg imported inside the limit
    # uses that very library (one copy), at one thread; numpy's pool is restored on exit
    import json
    import subprocess
    import sys

    pytest.importorskip("threadpoolctl")
    code = """
import json, sys, threadpoolctl
from suite.perf import blas_threads
def pools():
    return [[p["filepath"], p["num_threads"]] for p in threadpoolctl.threadpool_info() if p.get("user_api") == "blas"]
before = pools()
with blas_threads(1):
    cheap = "scipy.linalg" not in sys.modules
    import scipy.linalg.blas
    scipy.linalg.blas.dgemm(1.0, [[1.0]], [[2.0]])
    inside = pools()
print(json.dumps({"cheap": cheap, "before": before, "inside": inside, "after": pools()}))
"""
    got = json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)
    inside = got["inside"]
    assert inside and all(n == 1 for _, n in inside)
    assert any("scipy" in f for f, _ in inside)
    assert len({f for f, _ in inside}) == len(inside)  # no library loaded twice
    after = dict(got["after"])
    assert all(after[f] == n for f, n in got["before"])  # restored on exit
    if sys.platform.startswith("linux"):
        assert got["cheap"]  # a manylinux wheel: the library file, not scipy.linalg


def test_one_collector_paused_object_entered_nested_puts_back_each_state():
    """A module-level pause entered again inside its own block (a recursive helper): the inner
    exit leaves it off for the outer block, the outer exit turns it back on."""
    import gc

    from suite.perf import collector_paused

    p = collector_paused()
    assert gc.isenabled()
    try:
        with p:
            with p:
                assert not gc.isenabled()
            assert not gc.isenabled()
        assert gc.isenabled()
    finally:
        gc.enable()


def test_collector_paused_pauses_and_puts_the_state_back():
    """Inside: the cyclic collector is off (a reference cycle is not collected until it runs again);
    after: as it was, nested, after an error, as a decorator, and left off when it was off."""
    import gc

    from suite.perf import collector_paused

    class Node:
        pass

    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block restores the outer block's state
    assert gc.isenabled()
    with pytest.raises(ValueError), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()

    @collector_paused()
    def state() -> bool:
        return gc.isenabled()

    assert state() is False and gc.isenabled()

    @collector_paused()
    def deep(n: int) -> bool:
        return deep(n - 1) if n else gc.isenabled()

    assert deep(3) is False and gc.isenabled()  # recursion: each call its own saved state

    class Frozen(Exception):  # a frozen exception (suite.api.Skip is one) passes through unchanged
        def __setattr__(self, name, value):
            raise AttributeError(name)

    with pytest.raises(Frozen), collector_paused():
        raise Frozen()
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # not switched on by the pause's end
    finally:
        gc.enable()
    # what it means: a cycle made inside stays until a collection, which frees it
    import weakref

    with collector_paused():
        a = Node()
        a.self = a
        gone = weakref.ref(a)
        del a
        assert gone() is not None  # no automatic collection in between
    gc.collect()
    assert gone() is None
