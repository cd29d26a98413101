"""A hostile technique for the fault-injection tests (tests/runner/test_faults.py).

``faulty`` returns ``y = x * bandwidth_gbit`` (the profile's outer network bandwidth in Gbit/s,
10 on ``fake-cluster-a``) unless its ``attack`` parameter makes the case misbehave:

========== ===========================================================================
ok         a healthy case
abort      ``os.abort()`` (SIGABRT)
segfault   reads address 0 through ctypes (SIGSEGV)
hang_c     a catastrophic regular expression: C code that never checks for signals (it spins: CPU
           until it is killed)
block_c    a C call that holds the GIL (``ctypes.PyDLL``) and sleeps with SIGALRM, SIGINT and
           SIGTERM blocked: stopped only from outside, like ``hang_c``, without spending CPU
huge       asks for 20 TiB at once (``bytearray``): no machine holds it
nan        returns NaN seconds
negative   returns -1 J (an energy: negative by no unit list, only by dimension)
mutate     writes the shared profile through ``network[-1].__dict__`` and returns ``ok``
patch      switches off the worker's result check (``metric_problem``) and returns NaN
sigterm    SIGTERM to its own process
kill9      SIGKILL to its own process (what ``kill -9`` of a worker does)
bigerror   raises a ValueError whose message is 20 MB long
hugestr    returns a 20 MB string as a metric's value
========== ===========================================================================
"""

from __future__ import annotations

import ctypes
import os
import re
import signal

from suite import hookimpl
from suite.technique import Paper, Param, Result, Technique, Variant

ATTACKS = ("ok", "abort", "segfault", "hang_c", "block_c", "huge", "nan", "negative", "mutate", "patch", "sigterm", "kill9",
           "bigerror", "hugestr")


def _gbit(scenario) -> float:
    return scenario.profile.network[-1].bandwidth * 8 / 1e9


def evaluate(scenario) -> Result:
    a = scenario.params["attack"]
    x = scenario.params["x"]
    if a == "abort":
        os.abort()
    elif a == "segfault":
        ctypes.string_at(0)
    elif a == "hang_c":
        re.match(r"(a+)+$", "a" * 64 + "b")
    elif a == "block_c":
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGINT, signal.SIGTERM})
        ctypes.PyDLL(None).sleep(30)  # PyDLL: the GIL stays held, no other thread of the worker runs
    elif a == "huge":
        bytearray(20 * 2**40)
    elif a == "nan":
        return Result().add("y", float("nan"), "s", "lower")
    elif a == "negative":
        return Result().add("y", -1.0, "J", "lower")
    elif a == "mutate":
        scenario.profile.network[-1].__dict__["bandwidth"] = 1.0  # 8e-9 Gbit/s for every later case
    elif a == "patch":
        import suite.runner.evaluate as ex

        ex.metric_problem = lambda m: None
        return Result().add("y", float("nan"), "s", "lower")
    elif a == "sigterm":
        os.kill(os.getpid(), signal.SIGTERM)
    elif a == "kill9":
        os.kill(os.getpid(), signal.SIGKILL)
    elif a == "bigerror":
        raise ValueError("x" * 20_000_000)
    elif a == "hugestr":
        return Result().add("label", "x" * 20_000_000, "1")
    return Result().add("y", x * _gbit(scenario), "s", "lower")


TECHNIQUE = Technique(
    name="faulty", title="A hostile technique", category="communication", paper=Paper(title="Faults", year=2026),
    variants=[Variant("base", "the only variant", baseline=True)], fidelities={"model": evaluate},
    parameters={"x": Param(int, 1, minimum=0), "attack": Param(str, "ok", choices=ATTACKS)},
    needs_workload=False, default_profile="fake-cluster-a", profile_kinds=("cluster",),
)


@hookimpl
def suite_techniques():
    return [TECHNIQUE]
