"""The import-patch guard compares the contents of the shared modules' containers too (suite.tamper.Tables).

A tryout's plugin (finding F1) edited core tables in place when imported, rebinding no name:
``for k in list(collective._LINK_EFFICIENCY): collective._LINK_EFFICIENCY[k] = 0.25`` and
``nccl.BASE_LAT[k] = nccl.BASE_LAT[k] * 100 + 100``. It loaded ``ok``, and every plugin's comet and
megatron numbers moved (57.60 s -> 72.40 s), stored ``ok`` under the clean keys. The guard compared
only which object each name is bound to. It now compares each module-level dict, list, set and
numpy array of the shared modules: an entry changed or removed quarantines the plugin and is put
back; a container that only grows (a cache filling) is not a change.
"""

from __future__ import annotations

import contextlib
import importlib
import sys
import types
from collections.abc import Iterator
from importlib.metadata import EntryPoint

import numpy as np
import pytest

from suite.api import hookimpl
from suite.perf.network import collective, nccl  # held by the guard's snapshot before any plugin loads
from suite.registry import Registry
from suite.technique import Paper, Technique, Variant

PROBE = "suite_tamper_probe_tables"
_REASON_TAIL = " while loading (put back); expected a plugin that changes no shared module"


def _technique(name: str) -> Technique:
    return Technique(name=name, title="t", category="communication", paper=Paper("P"),
                     variants=[Variant("base", "baseline", baseline=True)],
                     fidelities={"model": lambda s: None}, needs_profile=False, needs_workload=False)


def _plugin(name: str, on_load) -> types.ModuleType:
    """An in-process plugin whose technique hook runs *on_load* (what a plugin does at import)."""
    mod = types.ModuleType(name)

    @hookimpl
    def suite_techniques():
        on_load()
        return [_technique(name)]

    mod.suite_techniques = suite_techniques
    return mod


def _reasons(reg: Registry) -> dict[str, str]:
    return {p.name: p.reason for p in reg.quarantined()}


def test_a_plugin_that_edits_core_tables_in_place_is_quarantined_and_the_tables_put_back():
    """The tryout's plugin, as a hook: both core tables are back to the values they were loaded with,
    the plugin is quarantined naming every entry it changed, and the plugin after it loads."""
    efficiency, tree_ll = dict(collective._LINK_EFFICIENCY), nccl.BASE_LAT["tree", "LL"]  # as loaded

    def calibrate():
        for k in list(collective._LINK_EFFICIENCY):
            collective._LINK_EFFICIENCY[k] = 0.25
        nccl.BASE_LAT["tree", "LL"] = nccl.BASE_LAT["tree", "LL"] * 100 + 100

    reg = Registry(entry_points_=[], modules=[("mut", _plugin("mut", calibrate)),
                                              ("good", _plugin("good", lambda: None))])
    assert collective._LINK_EFFICIENCY == efficiency and nccl.BASE_LAT["tree", "LL"] == tree_ll
    lines = "suite.perf.network.collective._LINK_EFFICIENCY"
    assert _reasons(reg) == {"mut": f"patched {lines}['net'], {lines}['nvlink'], {lines}['pcie'] ..." + _REASON_TAIL}
    assert [t.name for t in reg.techniques()] == ["good"]


def test_an_entry_of_a_table_of_tables_edited_in_place_is_tampering_and_put_back():
    """NCCL's per-hop latencies are a table of tables (nccl.py: net ring/Simple 14 us): an edit one
    level down (a second reader's case: ``HW_LAT["net"][("ring", "Simple")] *= 100``) left every
    top-level entry the same object, so the plugin loaded ``ok`` with a network 100x slower per hop."""
    loaded = nccl.HW_LAT["net"]["ring", "Simple"]

    def edit():
        nccl.HW_LAT["net"]["ring", "Simple"] *= 100

    reg = Registry(entry_points_=[], modules=[("deep", _plugin("deep", edit))])
    assert nccl.HW_LAT["net"]["ring", "Simple"] == loaded
    assert _reasons(reg) == {"deep": "patched suite.perf.network.nccl.HW_LAT['net'][('ring', 'Simple')]" + _REASON_TAIL}


def test_a_core_cache_emptied_while_a_plugin_loads_is_no_tampering():
    """A second reader's case: a core cache that empties itself when full (codec._PARTS past 4,096
    entries) emptied while a plugin loaded quarantined that innocent plugin, by what the process had
    run before. A module names such tables in ``__caches__``; real tables are still compared."""
    from suite.results import codec

    codec._parts(("t", 1.0, "s", "lower"))  # one entry, then the eviction as a plugin loads
    reg = Registry(entry_points_=[], modules=[("evicts", _plugin("evicts", codec._PARTS.clear)),
                                              ("edits", _plugin("edits", lambda: collective._LINK_EFFICIENCY.pop("net")))])
    assert _reasons(reg) == {"edits": "patched suite.perf.network.collective._LINK_EFFICIENCY['net']" + _REASON_TAIL}
    assert "__caches__" in vars(codec) and "_PARTS" in codec.__caches__


@pytest.fixture
def probe():
    """A shared module (``suite_*``) holding one table of each kind, in ``sys.modules`` while the test runs."""
    mod = types.ModuleType(PROBE)
    mod.TABLE, mod.ORDER, mod.NAMES = {"fp32": 4, "fp16": 2}, ["a", "b"], {"x", "y"}
    mod.COEF = np.array([1.0, 2.0, 3.0])
    mod.SCALE = {"k": np.float64(0.5)}
    sys.modules[PROBE] = mod
    try:
        yield mod
    finally:
        sys.modules.pop(PROBE, None)


def test_tables_that_only_grow_are_caches_filling_not_tampering(probe):
    """A dict that gains keys, a list appended to, a set added to, and an entry replaced by an equal
    object of the same type (a recomputed int or numpy float) quarantine nothing, and stay as the
    plugin left them."""
    def fill():
        probe.TABLE["bf16"] = 2
        probe.TABLE["fp32"] = int("4")  # equal, same type
        probe.SCALE["k"] = np.float64(1.0) / 2  # a numpy scalar recomputed: kept by its bytes
        probe.ORDER.append("c")
        probe.NAMES.add("z")

    reg = Registry(entry_points_=[], modules=[("filler", _plugin("filler", fill))])
    assert _reasons(reg) == {}
    assert probe.TABLE == {"fp32": 4, "fp16": 2, "bf16": 2} and probe.ORDER == ["a", "b", "c"]
    assert probe.NAMES == {"x", "y", "z"}


@pytest.mark.parametrize("edit, named, value", [
    (lambda m: m.TABLE.__setitem__("fp32", 2), "TABLE['fp32']", ("TABLE", {"fp32": 4, "fp16": 2})),
    (lambda m: m.TABLE.pop("fp16"), "TABLE['fp16']", ("TABLE", {"fp32": 4, "fp16": 2})),
    (lambda m: m.ORDER.__setitem__(0, "z"), "ORDER[0]", ("ORDER", ["a", "b"])),
    (lambda m: m.ORDER.remove("a"), f"ORDER[0], {PROBE}.ORDER[1]", ("ORDER", ["a", "b"])),
    # an insert shifts every element: the list is put back as it was (0.3.8's first form kept a copy
    # of the last element: [a, b, b])
    (lambda m: m.ORDER.insert(0, "z"), f"ORDER[0], {PROBE}.ORDER[1]", ("ORDER", ["a", "b"])),
    (lambda m: m.NAMES.discard("x"), "NAMES (lost 'x')", ("NAMES", {"x", "y"})),
    (lambda m: m.COEF.__setitem__(1, 20.0), "COEF", ("COEF", [1.0, 2.0, 3.0])),
])
def test_a_changed_or_removed_entry_of_a_table_is_tampering_and_put_back(probe, edit, named, value):
    """Each kind of in-place edit of another module's table: the plugin is quarantined naming the
    entry, and the table holds its values again before the next plugin loads."""
    seen = {}
    reg = Registry(entry_points_=[], modules=[("evil", _plugin("evil", lambda: edit(probe))),
                                              ("next", _plugin("next", lambda: seen.update(
                                                  now=getattr(sys.modules[PROBE], value[0]).copy())))])
    assert _reasons(reg) == {"evil": f"patched {PROBE}.{named}" + _REASON_TAIL}
    name, expected = value
    now = seen["now"]
    assert (now.tolist() if isinstance(now, np.ndarray) else now) == expected


@contextlib.contextmanager
def installed(tmp_path, monkeypatch, sources: dict[str, str]) -> Iterator[Registry]:
    """A registry of installed plugins ``NAME_mod`` (entry point NAME), each module *sources*' text
    followed by an empty technique hook; their modules forgotten afterwards."""
    hook = "from suite.api import hookimpl\n@hookimpl\ndef suite_techniques():\n    return []\n"
    for name, text in sources.items():
        (tmp_path / f"{name}_mod.py").write_text(text + hook)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        yield Registry(entry_points_=[EntryPoint(name=n, value=f"{n}_mod", group="suite.plugins") for n in sources])
    finally:
        for name in sources:
            sys.modules.pop(f"{name}_mod", None)


def test_an_installed_plugins_package_is_guarded_from_the_plugins_after_it(tmp_path, monkeypatch):
    """Another plugin's table (the tryout: ``suite_poseidon.model.DTYPE_BYTES["fp32"] = 2`` halved
    poseidon's comm bytes): an installed plugin whose package is not named ``suite_*`` was outside the
    guard, so a later plugin could edit its tables (or rebind its functions) unseen."""
    with installed(tmp_path, monkeypatch, {
            "tblowner": "DTYPE_BYTES = {'fp32': 4, 'fp16': 2}\n",
            "tblthief": "import tblowner_mod\ntblowner_mod.DTYPE_BYTES['fp32'] = 2\n"}) as reg:
        assert _reasons(reg) == {"tblthief": "patched tblowner_mod.DTYPE_BYTES['fp32']" + _REASON_TAIL}
        assert sys.modules["tblowner_mod"].DTYPE_BYTES == {"fp32": 4, "fp16": 2}


@pytest.mark.parametrize("owner, thief", [("tblowner2", "tblthief2"),  # the owner loads first
                                          ("tblzowner3", "tblathief3")])  # the thief loads first
def test_another_plugins_module_first_imported_and_edited_by_a_plugin_is_imported_anew_by_its_owner(
        tmp_path, monkeypatch, owner, thief):
    """The tryout's other case: ``import suite_poseidon.model as m; m.DTYPE_BYTES["fp32"] = 2`` at import,
    a module the owner had not imported yet (its technique loads lazily), so the guard held no earlier
    state of it; poseidon/ps was stored ``ok`` at 1.394 s instead of 2.094 s. Such a module is now
    forgotten after the plugin loads: its owner imports it anew (fp32 is 4 bytes again), while the
    plugin that edited it keeps its own copy. Also when the thief's entry point sorts first (a second
    reader's case, ``aaa`` before the victim: every entry point's package is guarded before any loads)."""
    pkg = tmp_path / f"{owner}_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from suite.api import hookimpl\n@hookimpl\ndef suite_techniques():\n    return []\n")
    (pkg / "model.py").write_text("DTYPE_BYTES = {'fp32': 4, 'fp16': 2}\n")
    (tmp_path / f"{thief}_mod.py").write_text(
        f"import {owner}_pkg.model as m\nm.DTYPE_BYTES['fp32'] = 2\nfrom suite.api import hookimpl\n"
        "@hookimpl\ndef suite_techniques():\n    return []\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = [EntryPoint(name=owner, value=f"{owner}_pkg", group="suite.plugins"),
           EntryPoint(name=thief, value=f"{thief}_mod", group="suite.plugins")]
    try:
        reg = Registry(entry_points_=eps)
        assert [p.name for p in reg.plugins] == sorted([owner, thief])
        assert sys.modules[f"{thief}_mod"].m.DTYPE_BYTES == {"fp32": 2, "fp16": 2}
        model = importlib.import_module(f"{owner}_pkg.model")  # the owner, importing its module when it needs it

        assert model.DTYPE_BYTES == {"fp32": 4, "fp16": 2}
    finally:
        for n in (f"{owner}_pkg", f"{owner}_pkg.model", f"{thief}_mod"):
            sys.modules.pop(n, None)


def test_a_property_added_to_a_core_class_at_import_is_tampering_and_removed():
    """The tryout's class patch (F7), made while the plugin loads: ``Device.memory = property(...)``
    made every device's memory 1.0 (a data descriptor on the class wins over the pydantic field).
    A name added to a core class was a change only when bound to the plugin's own function."""
    from suite.hardware.schema import Device

    def patch():
        Device.memory = property(lambda self: 1.0)

    reg = Registry(entry_points_=[], modules=[("clsp", _plugin("clsp", patch))])
    assert _reasons(reg) == {"clsp": "patched suite.hardware.schema.Device.memory" + _REASON_TAIL}
    assert "memory" not in Device.__dict__


def test_a_core_cache_edited_at_import_is_cleared_not_trusted():
    """The guard left a module's `__caches__` out entirely: a plugin that wrote a wrong parse into the
    unit cache at import (`units._cache()["...3 mebibyte"] = 1.0`) made `parse_quantity("3 mebibyte")`
    1.0 instead of 3,145,728 for every plugin after it, and the cache is saved to disk (a second reader).
    A cache may grow or empty itself; one with an entry changed is cleared (no plugin blamed: a memo is
    always safe to rebuild), so the next parse is right."""
    from suite.hardware.units import _cache, parse_quantity
    from suite.tamper import checked, snapshot

    assert parse_quantity("3 mebibyte", "bytes") == 3 * 2**20
    snap = snapshot()
    cache = _cache()
    key = next(k for k in cache if "3 mebibyte" in k)
    cache[key] = 1.0
    cache["a new entry"] = 2.0  # growing is what a cache does
    assert checked(snap, "evil")[0] == []
    assert parse_quantity("3 mebibyte", "bytes") == 3 * 2**20
    snap = snapshot()
    before = dict(_cache())
    parse_quantity("5 mebibyte", "bytes")  # filled while plugin code ran: dropped, parsed again when asked
    assert checked(snap, "fine")[0] == [] and dict(_cache()) == before
    assert parse_quantity("5 mebibyte", "bytes") == 5 * 2**20


def test_a_wrong_parse_added_to_the_unit_cache_or_its_registry_at_import_is_dropped():
    """A hostile plugin's load wrote a NEW wrong entry into the unit cache (`_remember(...)`), or
    redefined a prefix in pint's registry (`_registry().define("giga- = 1e8 = G-")`): a built-in's
    `--set "network.0.bandwidth=100 gigabyte/s"` was read as 1e9 (or 1e10) B/s, comm_time 1.146 s
    where 11.55 ms is right, and the cache, written to disk at exit, kept serving it after the plugin
    was gone (`--rerun` computed it again). What plugin code added to a core cache is dropped and a
    memoised registry emptied: 100 gigabytes/s is 1e11 B/s."""
    import os
    import subprocess

    from suite.hardware.units import _remember, parse_quantity
    from suite.tamper import checked, snapshot

    snap = snapshot()
    _remember("p|byte / second|False|100 gigabyte/s", 1e9)
    assert checked(snap, "evil")[0] == []
    assert parse_quantity("100 gigabyte/s", "bandwidth") == 1e11
    # the registry built and redefined by the plugin's own code: a fresh process, as a command is
    code = ("from suite.tamper import checked, snapshot\n"
            "from suite.hardware.units import _registry, parse_quantity\n"
            "snap = snapshot()\n"
            "_registry().define('giga- = 1e8 = G-')\n"
            "assert checked(snap, 'evil')[0] == []\n"
            "print(parse_quantity('150 gigabyte/s', 'bandwidth'))\n")
    env = {**os.environ, "SUITE_NO_UNIT_CACHE": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    assert float(out) == 1.5e11


def test_a_core_module_first_imported_by_plugin_code_and_bound_to_a_partial_is_forgotten():
    """A claim's derive imported a core module the command had not imported yet and rebound a name
    to ``functools.partial(its_function, the_original)``: only names bound to the plugin's plain
    functions were caught, so the scoreboard's renderer printed a forged row. A partial, a bound
    method or a callable object of the plugin's package counts as its code."""
    import functools
    import types

    from suite.tamper import checked, snapshot

    def forge(original, *a, **k):
        return "forged"

    forge.__module__ = "evilpkg.claims"

    class Forger:
        __module__ = "evilpkg.claims"

        def __call__(self, *a):
            return "forged"

    snap = snapshot()
    fresh = types.ModuleType("suite.fresh_for_test")
    fresh.render_text = functools.partial(forge, print)
    fresh.render_json = Forger()
    fresh.plain = len  # not the plugin's: left alone
    sys.modules["suite.fresh_for_test"] = fresh
    try:
        changed = checked(snap, "evilpkg")[0]
        assert "suite.fresh_for_test.render_text" in changed and "suite.fresh_for_test.render_json" in changed
        assert "suite.fresh_for_test.plain" not in changed
        assert "suite.fresh_for_test" not in sys.modules  # forgotten: imported anew, clean
    finally:
        sys.modules.pop("suite.fresh_for_test", None)


def test_a_plugin_that_rewrites_another_plugins_technique_is_quarantined_and_it_put_back():
    """Another plugin's Technique object, already built, rewritten past its freeze while a plugin
    loaded (`object.__setattr__(victim, "fidelities", {...})`, a parameter's unit): no name was
    rebound, so the guard saw nothing, and every case of the victim ran the plugin's code under
    the victim's key. Its fields, its tables' items and their fields are compared and put back."""
    victim = _technique("victim")
    original_model = victim.fidelities["model"]
    vmod = types.ModuleType("victim")
    vmod.suite_techniques = hookimpl(lambda: [victim])

    def rewrite():
        object.__setattr__(victim, "fidelities", {"model": lambda s: "forged"})
        object.__setattr__(victim.variants[0], "description", "forged")

    reg = Registry(entry_points_=[], modules=[("victim", vmod), ("rewriter", _plugin("rewriter", rewrite))])
    reason = _reasons(reg)["rewriter"]
    assert reason.startswith("patched technique 'victim'.fidelities, technique 'victim'.variants.0.description")
    assert victim.fidelities["model"] is original_model and victim.variants[0].description == "baseline"
    assert reg.technique("victim") is victim


def test_a_core_cache_table_replaced_at_import_is_put_back():
    """`units._CACHE = {...forged...}` (the whole table rebound, not an entry written): only a table
    first built during the load was reset, so the forged one stayed, and was written to disk."""
    from suite.hardware import units
    from suite.tamper import checked, snapshot

    units._cache()
    held = units._CACHE
    snap = snapshot()
    units._CACHE = {"p|second|False|3 weeks": 1.0}
    assert checked(snap, "evil")[0] == []
    assert units._CACHE is held and units.parse_quantity("3 weeks", "time") == 3 * 7 * 86400


def test_an_lru_cache_or_staticmethod_of_the_plugins_function_counts_as_its_code():
    import functools

    from suite.tamper import _of_package

    def forge(*a):
        return "forged"

    forge.__module__ = "evilpkg.claims"
    assert _of_package(functools.lru_cache(forge), "evilpkg") and _of_package(staticmethod(forge), "evilpkg")
    assert _of_package(functools.partial(functools.lru_cache(forge), 1), "evilpkg")
    assert not _of_package(functools.lru_cache(len), "evilpkg")


def test_a_recheck_keeps_the_registry_and_cache_the_core_built_meanwhile():
    """A watched thread's recheck (`undo_changes`) ran the plugin-load rules: the unit registry the
    core built during the run was emptied before each case, and a quantity made before then could no
    longer be added to one made after ("Cannot operate with Quantity and Quantity of different
    registries"). Only a plugin load's check (`checked`) empties what was built since its snapshot."""
    code = ("from suite.tamper import snapshot, undo_changes\n"
            "from suite.hardware.units import _registry\n"
            "snap = snapshot()\n"
            "a = _registry().Quantity(1, 's')\n"
            "undo_changes(snap)\n"
            "print((a + _registry().Quantity(2, 's')).magnitude)\n")
    import os
    import subprocess

    env = {**os.environ, "SUITE_NO_UNIT_CACHE": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0 and float(out.stdout) == 3.0, out.stderr[-300:]


def test_a_plugin_that_widens_another_techniques_claim_band_is_caught():
    """A second reader: `object.__setattr__(tech.claims[0].expect, "rel", 100.0)` (a failing claim made
    to pass) was one level below what the comparison of another plugin's technique reached."""
    from suite.technique import Approx, Claim, ScenarioSpec

    victim = _technique("victim2")
    object.__setattr__(victim, "claims", (Claim("c", "y is 1", "Table 1", True, Approx(1.0, rel=0.1),
                                                scenario=ScenarioSpec("base", params={"x": 1}), metric="y"),))
    vmod = types.ModuleType("victim2")
    vmod.suite_techniques = hookimpl(lambda: [victim])

    def widen():
        object.__setattr__(victim.claims[0].expect, "rel", 100.0)
        victim.claims[0].scenario.params["x"] = 2

    reg = Registry(entry_points_=[], modules=[("victim2", vmod), ("widener", _plugin("widener", widen))])
    reason = _reasons(reg)["widener"]
    assert "technique 'victim2'.claims.0.expect.rel" in reason and "claims.0.scenario.params.x" in reason
    assert victim.claims[0].expect.rel == 0.1 and victim.claims[0].scenario.params == {"x": 1}


def test_a_plugin_that_rewrites_another_techniques_resolved_meanings_is_caught():
    """A technique's includes are resolved once, when it is built, into lookups held as one of its
    fields: another plugin's `dict.__setitem__` on them (past their read-only mapping), or a rebinding
    of them, would make `suite info` and the report say what the metric does not mean."""
    from suite.technique import MetricMeaning

    victim = Technique(name="victim3", title="t", category="communication", paper=Paper("P"),
                       variants=[Variant("base", "baseline", baseline=True)], fidelities={"model": lambda s: None},
                       needs_profile=False, needs_workload=False,
                       metric_meanings={"include": ["suite.api:Workers.RESULT_MEANINGS"]})
    loss = victim.meaning("final_loss")
    vmod = types.ModuleType("victim3")
    vmod.suite_techniques = hookimpl(lambda: [victim])
    forged = MetricMeaning("1", "higher", "forged")

    def rewrite():
        dict.__setitem__(victim.__dict__["_meaning_lookups"][2][None].names, "final_loss", forged)

    def rebind():
        built, vocabulary, lookups = victim.__dict__["_meaning_lookups"]
        victim.__dict__["_meaning_lookups"] = (built, vocabulary, {None: lookups[None]._replace(names={})})

    reg = Registry(entry_points_=[], modules=[("victim3", vmod), ("rewriter3", _plugin("rewriter3", rewrite)),
                                              ("rebinder3", _plugin("rebinder3", rebind))])
    reasons = _reasons(reg)
    assert reasons["rewriter3"].startswith("patched technique 'victim3'._meaning_lookups.2.None.1.final_loss")
    assert reasons["rebinder3"].startswith("patched technique 'victim3'._meaning_lookups")
    assert victim.meaning("final_loss") is loss and loss.direction == "lower"
