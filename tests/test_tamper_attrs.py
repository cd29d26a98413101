"""The import-patch guard compares the core's functions' code and defaults, and its frozen values' fields.

A tryout's plugin (hostile13, findings 1 and 5) changed the core in place while it loaded, rebinding
no name and editing no table entry, and stayed ``ok``:

* ``Result.add.__code__ = _add.__code__`` (an ``add`` that doubles ``iteration_time``): poseidon's
  ``iteration_time`` was stored 4.188 s instead of 2.094 s, and served from the store after the
  plugin was uninstalled; ``__defaults__`` and ``__kwdefaults__`` can be swapped the same way;
* ``object.__setattr__(WORKERS_RESULT_MEANINGS["sim_time"], "unit", "ms")``: the frozen meanings
  three built-ins include said ``sim_time`` is in ms and a higher ``final_accuracy`` is worse.

Each is now put back and the plugin quarantined, naming what it changed.
"""

from __future__ import annotations

import sys
import warnings

import pytest

from suite.collectives.dataparallel.batches import proportional_batches
from suite.declaration.results import Metric, Result
from suite.declaration.vocabulary import WORKERS_RESULT_MEANINGS
from suite.registry import Registry
from tests.test_tamper_tables import _REASON_TAIL, _plugin, _reasons, installed

ADD = "suite.declaration.results.Result.add"


@pytest.fixture(autouse=True)
def _core_put_back():
    """What these tests change in the core, put back whatever the guard under test does: a broken
    guard must fail its own test, not leave iteration_time doubled for every later test."""
    add, meanings = Result.add, {k: (m.unit, m.direction) for k, m in WORKERS_RESULT_MEANINGS.items()}
    code, defaults, kw = add.__code__, add.__defaults__, proportional_batches.__kwdefaults__
    kw_items = dict(kw)
    yield
    add.__code__, add.__defaults__ = code, defaults  # the same objects: the guard compares identity
    proportional_batches.__kwdefaults__ = kw
    kw.clear()
    kw.update(kw_items)
    for k, (unit, direction) in meanings.items():
        object.__setattr__(WORKERS_RESULT_MEANINGS[k], "unit", unit)
        object.__setattr__(WORKERS_RESULT_MEANINGS[k], "direction", direction)


def _doubling_add(self, name, value, unit="1", direction="none", samples=None):
    """The tryout's ``add``: ``iteration_time`` doubled, every other metric as given."""
    if name == "iteration_time":
        value = float(value) * 2
    self.metrics[name] = Metric(name, float(value), unit, direction, samples)
    return self


def _iteration_time() -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Result().add("iteration_time", 2.094, "s", "lower").metrics["iteration_time"].value


def test_a_core_methods_code_swapped_at_load_is_put_back_and_the_plugin_quarantined():
    """The tryout's plugin: ``Result.add`` ran its code (2.094 s stored as 4.188 s) and it loaded
    ``ok``. Now ``add`` runs the core's code again before the next plugin loads (which sees 2.094),
    and the plugin is quarantined naming the method's code."""
    seen = {}

    def swap():
        Result.add.__code__ = _doubling_add.__code__
        seen["during"] = _iteration_time()

    after = _plugin("after", lambda: seen.update(after=_iteration_time()))
    reg = Registry(entry_points_=[], modules=[("codeswap", _plugin("codeswap", swap)), ("after", after)])
    assert seen == {"during": 4.188, "after": 2.094}
    assert _iteration_time() == 2.094
    assert _reasons(reg) == {"codeswap": f"patched {ADD}.__code__" + _REASON_TAIL}
    assert [t.name for t in reg.techniques()] == ["after"]


def test_a_core_functions_defaults_swapped_or_edited_at_load_are_put_back():
    """``Result.add.__defaults__`` (unit "1" when none is given) and ``proportional_batches``'s
    keyword default ``minimum=1`` (CoCoD-SGD's batches: 10 samples over workers of 99 and 1 s a
    sample give [1, 9]; with minimum 0, [0, 10], a dummy batch), rebound and edited in place."""
    def swap():
        Result.add.__defaults__ = ("ms", "lower", None)
        proportional_batches.__kwdefaults__["minimum"] = 0

    def rebind():
        proportional_batches.__kwdefaults__ = {"minimum": 0, "caps": None}

    reg = Registry(entry_points_=[], modules=[("defaults", _plugin("defaults", swap)),
                                              ("kwdefaults", _plugin("kwdefaults", rebind))])
    assert _reasons(reg) == {
        "defaults": "patched suite.collectives.dataparallel.batches.proportional_batches.__kwdefaults__, "
                    f"{ADD}.__defaults__" + _REASON_TAIL,
        "kwdefaults": "patched suite.collectives.dataparallel.batches.proportional_batches.__kwdefaults__"
                      + _REASON_TAIL}
    assert Result.add.__defaults__ == ("1", "none", None)
    assert proportional_batches(10, [99, 1]).tolist() == [1, 9]


def test_the_shared_metric_meanings_rewritten_past_their_freeze_are_put_back():
    """The tryout's plugin rewrote the frozen meanings of ``WORKERS_RESULT_MEANINGS`` (included by
    cocod-sgd, palsgd and hetseq) with ``object.__setattr__``: ``suite info cocod-sgd`` said
    ``sim_time`` is in ms and a lower final accuracy is better, and the plugin was ``ok``."""
    def rewrite():
        object.__setattr__(WORKERS_RESULT_MEANINGS["sim_time"], "unit", "ms")
        object.__setattr__(WORKERS_RESULT_MEANINGS["final_accuracy"], "direction", "lower")

    reg = Registry(entry_points_=[], modules=[("meaning", _plugin("meaning", rewrite))])
    table = "suite.declaration.vocabulary.WORKERS_RESULT_MEANINGS"
    assert _reasons(reg) == {"meaning": f"patched {table}['final_accuracy'].direction, {table}['sim_time'].unit"
                                        + _REASON_TAIL}
    assert (WORKERS_RESULT_MEANINGS["sim_time"].unit, WORKERS_RESULT_MEANINGS["final_accuracy"].direction) == \
        ("s", "higher")


def test_another_installed_plugins_function_and_method_code_swapped_at_load_is_put_back(tmp_path, monkeypatch):
    """A plugin that swaps the code of an installed plugin's model (a function, and a method of a
    class its module defines) changes that plugin's numbers as surely as the core's: blamed, and
    the owner's model returns its own 4 samples/s and 2 s again."""
    with installed(tmp_path, monkeypatch, {
            "codeowner": "def rate():\n    return 4\nclass Model:\n    def step(self):\n        return 2.0\n",
            "codethief": "import codeowner_mod\ndef _fast():\n    return 40\ndef _step(self):\n    return 0.5\n"
                         "codeowner_mod.rate.__code__ = _fast.__code__\n"
                         "codeowner_mod.Model.step.__code__ = _step.__code__\n"}) as reg:
        swapped = "codeowner_mod.Model.step.__code__, codeowner_mod.rate.__code__"
        assert _reasons(reg) == {"codethief": f"patched {swapped}" + _REASON_TAIL}
        owner = sys.modules["codeowner_mod"]
        assert (owner.rate(), owner.Model().step()) == (4, 2.0)
