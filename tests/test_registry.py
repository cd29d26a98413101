"""Registry: discovery, quarantine of a broken plugin, duplicate names, check_pending, strict mode."""

from __future__ import annotations

import json
import os
import re
import sys
import types
from importlib.metadata import EntryPoint

import pytest

from suite import Paper, Result, Technique, Variant, hookimpl
from suite.errors import PluginError, TechniqueError
from suite.registry import Registry


def _technique(name: str) -> Technique:
    return Technique(
        name=name, title="t", category="communication", paper=Paper("P"),
        variants=[Variant("base", "baseline", baseline=True)],
        fidelities={"model": lambda s: Result().add("x", 1.0)},
        needs_profile=False, needs_workload=False,
    )


def _module(name: str, *techs: str, **extra) -> types.ModuleType:
    mod = types.ModuleType(name)

    @hookimpl
    def suite_techniques():
        return [_technique(t) for t in techs]

    mod.suite_techniques = suite_techniques
    for k, v in extra.items():
        setattr(mod, k, v)
    return mod


def test_good_plugins_load_and_list_techniques():
    reg = Registry(entry_points_=[], modules=[("a", _module("a", "alpha")), ("b", _module("b", "beta", "gamma"))])
    assert [t.name for t in reg.techniques()] == ["alpha", "beta", "gamma"]
    assert reg.plugin_of("gamma").name == "b"
    assert not reg.quarantined()


def test_import_failure_is_quarantined_and_others_work():
    ep = EntryPoint(name="broken", value="suite_definitely_not_installed_xyz", group="suite.plugins")
    reg = Registry(entry_points_=[ep], modules=[("a", _module("a", "alpha"))])
    q = reg.quarantined()
    assert [p.name for p in q] == ["broken"]
    assert "import failed: ModuleNotFoundError" in q[0].reason
    assert reg.technique("alpha").name == "alpha"


def test_strict_mode_raises_on_quarantine():
    ep = EntryPoint(name="broken", value="suite_definitely_not_installed_xyz", group="suite.plugins")
    with pytest.raises(PluginError, match="plugin 'broken'.*import failed"):
        Registry(entry_points_=[ep], strict=True)


def test_strict_from_environment(monkeypatch):
    monkeypatch.setenv("SUITE_STRICT_PLUGINS", "1")
    ep = EntryPoint(name="broken", value="suite_definitely_not_installed_xyz", group="suite.plugins")
    with pytest.raises(PluginError):
        Registry(entry_points_=[ep])


def test_misspelled_hook_is_caught_by_check_pending():
    mod = _module("typo", "alpha")

    @hookimpl
    def suite_technique():  # missing the final "s"
        return []

    mod.suite_technique = suite_technique
    reg = Registry(entry_points_=[], modules=[("typo", mod), ("ok", _module("ok", "beta"))])
    (q,) = reg.quarantined()
    assert q.name == "typo" and "bad hook implementation" in q.reason and "suite_technique" in q.reason
    assert [t.name for t in reg.techniques()] == ["beta"]


@pytest.mark.parametrize("exc, reason", [
    (RuntimeError("kaput"), "suite_techniques() failed: RuntimeError: kaput"),
    # declare_technique's TechniqueError is already one line naming file and field: its type is not repeated
    (TechniqueError("suite_bad/technique.toml: title: expected a string, got nothing"),
     "suite_techniques() failed: suite_bad/technique.toml: title: expected a string, got nothing"),
])
def test_hook_that_raises_is_quarantined(exc, reason):
    mod = types.ModuleType("boom")

    @hookimpl
    def suite_techniques():
        raise exc

    mod.suite_techniques = suite_techniques
    reg = Registry(entry_points_=[], modules=[("boom", mod)])
    assert reg.quarantined()[0].reason == reason


def test_wrong_return_type_is_quarantined():
    mod = types.ModuleType("wrong")

    @hookimpl
    def suite_techniques():
        return ["not a technique"]

    mod.suite_techniques = suite_techniques
    reg = Registry(entry_points_=[], modules=[("wrong", mod)])
    assert "expected Technique" in reg.quarantined()[0].reason


def test_duplicate_technique_name_quarantines_the_second_plugin_only():
    reg = Registry(entry_points_=[], modules=[("a", _module("a", "alpha")), ("b", _module("b", "alpha"))])
    assert reg.technique("alpha") is not None and [p.name for p in reg.quarantined()] == ["b"]
    assert re.search(r"technique 'alpha' is already provided by .*plugin 'a'.*expected a unique name",
                     reg.quarantined()[0].reason)
    with pytest.raises(PluginError, match="technique 'alpha' is already provided"):
        Registry(entry_points_=[], modules=[("a", _module("a", "alpha")), ("b", _module("b", "alpha"))],
                 strict=True)


def test_unknown_technique_lists_installed():
    reg = Registry(entry_points_=[], modules=[("a", _module("a", "alpha"))])
    with pytest.raises(PluginError, match="unknown technique 'nope'; installed: alpha"):
        reg.technique("nope")
    with pytest.raises(PluginError, match="unknown technique 'alhpa'; did you mean 'alpha'\\?; installed: alpha"):
        reg.technique("alhpa")


def test_builtin_plugins_are_registered_by_entry_point():
    from importlib.metadata import entry_points

    names = {ep.name for ep in entry_points(group="suite.plugins")}
    assert "poseidon" in names


def test_what_a_plugin_prints_while_loading_goes_to_stderr(capsys):
    """A plugin's print() at load time broke every --format json output (fresh-user trial)."""
    mod = types.ModuleType("chatty")

    @hookimpl
    def suite_techniques():
        print("hello from a chatty plugin")
        return [_technique("chatty-t")]

    mod.suite_techniques = suite_techniques
    reg = Registry(entry_points_=[], modules=[("chatty", mod)])
    out, err = capsys.readouterr()
    assert out == "" and "hello from a chatty plugin" in err
    assert reg.technique("chatty-t").name == "chatty-t"


def test_a_multi_line_hook_error_is_one_quarantine_line():
    mod = types.ModuleType("multi")

    @hookimpl
    def suite_techniques():
        raise RuntimeError("boom\nsecond line\nthird line")

    mod.suite_techniques = suite_techniques
    reg = Registry(entry_points_=[], modules=[("multi", mod)])
    assert reg.quarantined()[0].reason == "suite_techniques() failed: RuntimeError: boom second line third line"


def test_extension_reference_imports_on_first_use_and_a_broken_one_costs_its_plugin():
    # "module:Class" references: nothing is imported while the registry is built; the good one
    # resolves to its pydantic class, the broken one quarantines only its own plugin, then.
    from suite.hardware.extensions import FpgaExt

    good = _module("good", "alpha", suite_profile_extensions=hookimpl(
        lambda: {"fpga2": "suite.hardware.extensions:FpgaExt"}))
    bad = _module("bad", "beta", suite_profile_extensions=hookimpl(
        lambda: {"nope": "suite_no_such_module_xyz.ext:Nope"}))
    wrong = _module("wrong", "gamma", suite_profile_extensions=hookimpl(lambda: {"odd": "math:pi"}))
    reg = Registry(entry_points_=[], modules=[("good", good), ("bad", bad), ("wrong", wrong)])
    assert [t.name for t in reg.techniques()] == ["alpha", "beta", "gamma"] and not reg.quarantined()
    assert reg.profile_extensions() == {"fpga2": FpgaExt}
    q = {p.name: p.reason for p in reg.quarantined()}
    assert set(q) == {"bad", "wrong"}
    assert q["bad"].startswith("suite_profile_extensions(): 'nope': 'suite_no_such_module_xyz.ext:Nope': "
                               "ModuleNotFoundError")
    assert "'odd': 'math:pi': TypeError: float, expected a pydantic model class" in q["wrong"]
    assert [t.name for t in reg.techniques()] == ["alpha"]


def test_extension_hook_refuses_a_value_that_is_neither_class_nor_reference():
    mod = _module("m", "alpha", suite_profile_extensions=hookimpl(lambda: {"x": "not a reference"}))
    reg = Registry(entry_points_=[], modules=[("m", mod)])
    [q] = reg.quarantined()
    assert "expected a name -> pydantic model class or a reference 'package.module:Class' to one" in q.reason


def test_core_extension_names_agree_with_the_schemas():
    from suite.hardware.extensions import CORE_EXTENSIONS
    from suite.registry import CORE_EXTENSION_NAMES

    assert set(CORE_EXTENSIONS) == CORE_EXTENSION_NAMES == {"fpga", "mix"}


def test_what_a_deferred_hook_or_reference_prints_goes_to_stderr(capsys, tmp_path, monkeypatch):
    # suite_workloads and extension references run after the plugin loaded (outside _load's
    # redirect); their prints must not reach stdout either (--format json must stay parseable)
    (tmp_path / "suite_rvk_loud_ext.py").write_text(
        "print('LOUD IMPORT')\nfrom suite.hardware.extensions import FpgaExt as Ext\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    def loud_workloads():
        print("LOUD HOOK")
        return []

    mod = _module("loud", "alpha", suite_workloads=hookimpl(loud_workloads),
                  suite_profile_extensions=hookimpl(lambda: {"loud": "suite_rvk_loud_ext:Ext"}))
    reg = Registry(entry_points_=[], modules=[("loud", mod)])
    capsys.readouterr()
    reg.load_all()
    out, err = capsys.readouterr()
    assert out == "" and "LOUD HOOK" in err and "LOUD IMPORT" in err
    assert not reg.quarantined()


def test_a_plugin_dropped_for_one_broken_reference_keeps_none_of_its_others():
    # two references of one plugin, the first broken: the plugin is quarantined once, with the
    # first reason, and its second (good) extension is not registered afterwards
    mod = _module("two", "alpha", suite_profile_extensions=hookimpl(
        lambda: {"a1": "suite_no_such_module_xyz.ext:A", "a2": "suite.hardware.extensions:FpgaExt"}))
    reg = Registry(entry_points_=[], modules=[("two", mod)])
    assert reg.profile_extensions() == {}
    [q] = reg.quarantined()
    assert q.reason.startswith("suite_profile_extensions(): 'a1'")
    assert reg.techniques() == []


def test_a_workload_of_a_plugin_quarantined_when_its_workloads_were_built_names_the_plugin():
    # the technique's default workload comes from its own (broken) suite_workloads: the error
    # says why the workload is missing, not only "unknown workload"
    from suite.context import Context
    from suite.errors import WorkloadError

    def broken():
        raise RuntimeError("no tables today")

    mod = _module("wl", "alpha", suite_workloads=hookimpl(broken))
    ctx = Context.build(registry=Registry(entry_points_=[], modules=[("wl", mod)]))
    with pytest.raises(WorkloadError) as e:
        ctx.workload("wl-table")
    assert str(e.value).startswith("unknown workload 'wl-table'")
    assert str(e.value).endswith("; plugin 'wl' (<in-process>), which may provide it, is quarantined: "
                                 "suite_workloads() failed: RuntimeError: no tables today")
    assert ctx.workload("alexnet").name == "alexnet"  # the zoo still answers


def test_a_technique_removed_by_a_deferred_quarantine_says_why_and_its_cases_are_not_run():
    # plugin b's workloads reuse a zoo name: found only when workloads are first built (here by
    # resolving a's workload), after b's technique was looked up; its cases must not run then
    from suite.context import Context
    from suite.errors import ExperimentError
    from suite.runner.case import Resolver
    from suite.runner.experiment import expand_entry, stream_entry
    from suite.workloads.types import Workload

    def tech(name):
        t = _technique(name)
        t.needs_workload = True
        return t

    def build():
        a = _module("a", suite_workloads=hookimpl(lambda: [Workload(name="rvk-wl", kind="cnn")]))
        b = types.ModuleType("b")
        b.suite_techniques = hookimpl(lambda: [tech("beta")])
        b.suite_workloads = hookimpl(lambda: [Workload(name="alexnet", kind="cnn")])
        return Context.build(registry=Registry(entry_points_=[], modules=[("a", a), ("b", b)]))

    why = ("technique 'beta': plugin 'b' (<in-process>) is quarantined: suite_workloads(): workload 'alexnet' "
           "is a workload of the zoo")
    ctx = build()
    with pytest.raises(ExperimentError, match=re.escape(why)):
        stream_entry({"technique": "beta", "workloads": ["rvk-wl"]}, resolver=Resolver(context=ctx))
    with pytest.raises(PluginError, match=re.escape(why)):
        ctx.registry.technique("beta")
    ctx = build()
    with pytest.raises(ExperimentError, match=re.escape(why)):
        expand_entry({"technique": "beta", "workloads": ["rvk-wl"]}, resolver=Resolver(context=ctx))


def test_a_workload_returned_twice_by_one_plugin_is_not_blamed_on_another():
    from suite.workloads.types import Workload

    twice = _module("twice", "alpha", suite_workloads=hookimpl(
        lambda: [Workload(name="rvk-w", kind="cnn"), Workload(name="rvk-w", kind="cnn")]))
    first = _module("first", "beta", suite_workloads=hookimpl(lambda: [Workload(name="rvk-x", kind="cnn")]))
    again = _module("again", "gamma", suite_workloads=hookimpl(lambda: [Workload(name="rvk-x", kind="cnn")]))
    reg = Registry(entry_points_=[], modules=[("twice", twice), ("first", first), ("again", again)])
    reg.load_all()
    q = {p.name: p.reason for p in reg.quarantined()}
    assert q == {"twice": "suite_workloads(): workload 'rvk-w' is in the returned list twice; expected unique names",
                 "again": "suite_workloads(): workload 'rvk-x' is already provided by <in-process> (plugin 'first'); "
                          "expected a unique name"}
    assert [t.name for t in reg.techniques()] == ["beta"]


def test_a_deferred_quarantine_removes_all_the_plugin_gave():
    # quarantined by its workloads hook, a plugin's extension schemas go too; quarantined by an
    # extension reference, its workloads go too (as for a plugin quarantined while loading)
    from suite.workloads.types import Workload

    def broken():
        raise RuntimeError("no tables today")

    wl = _module("wl", "alpha", suite_workloads=hookimpl(broken),
                 suite_profile_extensions=hookimpl(lambda: {"wlext": "suite.hardware.extensions:FpgaExt"}))
    ext = _module("ext", "beta", suite_workloads=hookimpl(lambda: [Workload(name="rvk-ext-wl", kind="cnn")]),
                  suite_profile_extensions=hookimpl(lambda: {"bad": "suite_no_such_module_xyz.ext:A"}))
    reg = Registry(entry_points_=[], modules=[("wl", wl), ("ext", ext)])
    assert [w.name for _p, w in reg.plugin_workloads()] == ["rvk-ext-wl"]
    assert [p.name for p in reg.quarantined()] == ["wl"]
    assert reg.profile_extensions() == {} and "wlext" not in reg.declared_extensions()
    assert {p.name for p in reg.quarantined()} == {"wl", "ext"}
    assert reg.plugin_workloads() == [] and reg.techniques() == []


def test_executor_hook_that_raises_is_quarantined_and_others_are_still_asked():
    """issue 39 probe 8: a raising ``suite_executor`` hook took the whole command down (0.1.0)."""
    good = object()
    boom = _module("boom", "alpha", suite_executor=hookimpl(lambda name: (_ for _ in ()).throw(RuntimeError("kaput"))))
    ok = _module("ok", "beta", suite_executor=hookimpl(lambda name: good if name == "remote" else None))
    reg = Registry(entry_points_=[], modules=[("boom", boom), ("ok", ok)])
    assert reg.executor("remote") is good
    (q,) = reg.quarantined()
    assert q.name == "boom" and "suite_executor(name='remote') failed: RuntimeError: kaput" in q.reason
    assert [t.name for t in reg.techniques()] == ["beta"]  # its techniques leave with it
    strict = Registry(entry_points_=[], modules=[("boom", _module("boom2", "gamma", suite_executor=boom.suite_executor))],
                      strict=True)
    with pytest.raises(PluginError, match="suite_executor"):
        strict.executor("remote")


def test_an_unknown_executor_names_the_plugin_whose_hook_raised_on_it():
    """The trial's hostile plugin: `--executor nosuch` said only "unknown executor" while the plugin
    whose hook raised on that name was quarantined out of sight."""
    from suite.context import Context
    from suite.errors import SuiteError
    from suite.runner.executors import get_executor

    boom = _module("boom", "alpha", suite_executor=hookimpl(lambda name: (_ for _ in ()).throw(RuntimeError("kaput"))))
    ctx = Context.build(registry=Registry(entry_points_=[], modules=[("boom", boom)]))
    with pytest.raises(SuiteError, match=r"unknown executor 'nosuch'.*\(plugin 'boom' failed on it: "
                                         r"suite_executor\(name='nosuch'\) failed: RuntimeError: kaput\)"):
        get_executor("nosuch", context=ctx)


def test_an_unknown_executor_names_the_plugins_with_executors_and_the_closest_name():
    """A tryout's `--executor dsk` listed ['dask', 'local'] and not the shipped plugin's slurm."""
    from suite.context import Context
    from suite.errors import SuiteError
    from suite.runner.executors import get_executor

    remote = _module("remote", "alpha", suite_executor=hookimpl(lambda name: None))
    plain = _module("plain", "beta")
    ctx = Context.build(registry=Registry(entry_points_=[], modules=[("remote", remote), ("plain", plain)]))
    with pytest.raises(SuiteError) as err:
        get_executor("dsk", context=ctx)
    assert str(err.value) == ("--executor: unknown executor 'dsk'; did you mean 'dask'?; expected one of "
                              "['dask', 'local'] or one a plugin provides (plugins with executors: remote)")


def test_a_shared_module_first_imported_while_a_plugin_loads_and_bound_to_its_code_quarantines_it():
    """suite.tamper's second check: a shared module (here a ``suite_*`` one) that appears while a
    plugin loads and holds a function of that plugin is reported, and the other plugins load."""
    import sys

    fresh = "suite_tamper_probe_fresh"

    @hookimpl
    def suite_techniques():
        def hijack():
            return 0

        hijack.__module__ = "evilfresh.impl"
        probe = types.ModuleType(fresh)
        probe.hijack = hijack
        sys.modules[fresh] = probe
        return [_technique("evil-fresh")]

    evil = types.ModuleType("evilfresh")
    evil.suite_techniques = suite_techniques
    try:
        reg = Registry(entry_points_=[], modules=[("evilfresh", evil), ("good", _module("good", "fine"))])
    finally:
        sys.modules.pop(fresh, None)
    bad = {p.name: p for p in reg.quarantined()}
    assert list(bad) == ["evilfresh"]
    assert bad["evilfresh"].reason.startswith(f"patched {fresh}.hijack (could not be put back) while loading")
    assert [t.name for t in reg.techniques()] == ["fine"]


def test_a_third_party_workload_taking_a_zoo_name_quarantines_its_plugin_as_the_registry_loads(monkeypatch):
    """Trial report item 5: such a plugin was quarantined only by commands that read workloads;
    `suite techniques` listed it and its cases ran. Now the registry builds the workloads at once
    when a third-party (entry-point) plugin implements suite_workloads; the zoo keeps the name."""
    import sys

    from importlib.metadata import EntryPoint

    from suite.workloads.types import Dataset

    @hookimpl
    def suite_workloads():
        return [Dataset(name="vgg19-22k", kind="dataset", source="fake", n=1, d=1, classes=2)]

    mod = _module("wlclash_plugin_mod", "wl-clash", suite_workloads=suite_workloads)
    monkeypatch.setitem(sys.modules, "wlclash_plugin_mod", mod)
    ep = EntryPoint(name="wl-clash", value="wlclash_plugin_mod", group="suite.plugins")
    reg = Registry(entry_points_=[ep], modules=[("good", _module("good", "fine"))])
    (bad,) = reg.quarantined()
    assert bad.name == "wl-clash" and bad.reason.startswith(
        "suite_workloads(): workload 'vgg19-22k' is a workload of the zoo")
    assert [t.name for t in reg.techniques()] == ["fine"]
    with pytest.raises(PluginError, match="plugin 'wl-clash' .* is quarantined"):
        reg.technique("wl-clash")


def test_in_process_plugins_keep_their_workloads_deferred():
    calls = []

    @hookimpl
    def suite_workloads():
        calls.append(1)
        return []

    reg = Registry(entry_points_=[], modules=[("lazywl", _module("lazywl", "lazy-one", suite_workloads=suite_workloads))])
    assert calls == [] and [t.name for t in reg.techniques()] == ["lazy-one"]
    reg.plugin_workloads()
    assert calls == [1]


def test_asking_for_the_technique_of_a_quarantined_plugin_says_why():
    """`suite run --technique my-technique` when my-technique's plugin failed to load: its reason,
    not "unknown technique; installed: <every other name>"."""
    ep = EntryPoint(name="my-technique", value="suite_my_technique_not_installed_xyz.plugin", group="suite.plugins")
    reg = Registry(entry_points_=[ep], modules=[("a", _module("a", "alpha"))])
    with pytest.raises(PluginError) as e:
        reg.technique("my-technique")
    assert str(e.value).startswith("technique 'my-technique': plugin 'my-technique' (")
    assert "is quarantined: import failed: ModuleNotFoundError: No module named 'suite_my_technique_not_installed_xyz'" \
        in str(e.value)
    with pytest.raises(PluginError, match="unknown technique 'nope'; installed: alpha"):
        reg.technique("nope")



def test_a_plugin_that_rebinds_a_lazily_exported_api_name_is_quarantined_and_the_name_put_back():
    """A hostile trial plugin read ``suite.api.collective_time`` (a PEP 562 lazy export: reading it
    adds the name to the module) and rebound it at import to halve every collective's time: it
    loaded ``ok`` and poseidon's speed-up read 28.77x instead of 26.14x. A name added while a plugin
    loads is now compared with what the module's ``__getattr__`` resolves it to."""
    import suite.api as api
    from suite.perf.network import collective_time

    api.__dict__.pop("collective_time", None)  # as before any plugin read it

    @hookimpl
    def suite_techniques():
        real = api.collective_time  # the lazy export, now in suite.api's namespace

        def halved(*a, **k):
            return real(*a, **k)

        api.collective_time = halved
        return [_technique("evil-api")]

    evil = types.ModuleType("evilapi")
    evil.suite_techniques = suite_techniques
    reg = Registry(entry_points_=[], modules=[("evilapi", evil), ("good", _module("good", "fine"))])
    bad = {p.name: p for p in reg.quarantined()}
    assert list(bad) == ["evilapi"]
    assert bad["evilapi"].reason.startswith("patched suite.api.collective_time while loading")
    assert api.collective_time is collective_time
    assert [t.name for t in reg.techniques()] == ["fine"]


def test_a_plugin_that_only_reads_lazily_exported_api_names_loads():
    import suite.api as api

    api.__dict__.pop("collective_time", None)

    @hookimpl
    def suite_techniques():
        assert callable(api.collective_time)
        return [_technique("reader")]

    mod = types.ModuleType("readerapi")
    mod.suite_techniques = suite_techniques
    reg = Registry(entry_points_=[], modules=[("readerapi", mod)])
    assert reg.quarantined() == []
    assert [t.name for t in reg.techniques()] == ["reader"]


def test_a_plugin_that_patches_a_core_function_and_numpy_is_quarantined_and_both_are_put_back():
    """Issue 43's patcher: a plugin rebinds ``suite.perf.roofline_time`` (x3) and ``numpy.isfinite``
    while it loads. The end-to-end test (tests/test_trust_names.py) checks the quarantine and a
    poseidon metric, but poseidon's compute time does not call ``suite.perf.roofline_time``, so it
    passes even when nothing is put back; here both names must be the originals again, and a
    kernel of 1e12 FLOP and 1e9 B on a 1e12 FLOP/s, 1e12 B/s roof takes max(1.0, 0.001) = 1.0 s."""
    import numpy

    import suite.perf

    real_roof, real_isfinite = suite.perf.roofline_time, numpy.isfinite

    @hookimpl
    def suite_techniques():
        suite.perf.roofline_time = lambda *a, **k: 3 * real_roof(*a, **k)
        numpy.isfinite = lambda x: True
        return [_technique("patcher")]

    evil = types.ModuleType("evilpatch")
    evil.suite_techniques = suite_techniques
    try:
        reg = Registry(entry_points_=[], modules=[("evilpatch", evil), ("good", _module("good", "fine"))])
        bad = {p.name: p for p in reg.quarantined()}
        assert list(bad) == ["evilpatch"]
        assert bad["evilpatch"].reason.startswith("patched numpy.isfinite, suite.perf.roofline_time while loading")
        assert suite.perf.roofline_time is real_roof
        assert numpy.isfinite is real_isfinite
        assert suite.perf.roofline_time(1e12, 1e9, 1e12, 1e12) == 1.0
        assert not numpy.isfinite(float("nan"))
    finally:  # never leave the process patched when the guard is broken
        suite.perf.roofline_time, numpy.isfinite = real_roof, real_isfinite


_PARTIAL_PATCHER = '''
import functools

import suite.api
import suite.perf

suite.perf.roofline_time = functools.partial(suite.perf.roofline_time)  # not the plugin's own function
suite.api.collective_time = functools.partial(suite.api.collective_time)

from suite import hookimpl


@hookimpl
def suite_techniques():
    return []
'''

_PROBE = '''
import functools, json, sys
from importlib.metadata import EntryPoint
from suite.registry import Registry

assert "suite.api" not in sys.modules and "suite.perf" not in sys.modules, sorted(sys.modules)
reg = Registry(entry_points_=[EntryPoint(name="partialpatch", value="partialpatch_mod", group="suite.plugins")])
import suite.api, suite.perf
print(json.dumps({"bad": {p.name: p.reason for p in reg.quarantined()},
                  "roof": isinstance(suite.perf.roofline_time, functools.partial),
                  "coll": isinstance(suite.api.collective_time, functools.partial)}))
'''


def test_a_third_party_plugin_rebinding_core_functions_before_the_core_loaded_them_is_caught(tmp_path):
    """A third-party plugin that is the first to import ``suite.api`` / ``suite.perf`` (a fresh
    process: the built-in plugins import their techniques lazily) and rebinds their functions to
    objects of no plugin (a ``functools.partial``) was neither quarantined nor undone: the guard
    treated the two modules as new. The registry now imports them before a third-party plugin."""
    import subprocess

    (tmp_path / "partialpatch_mod.py").write_text(_PARTIAL_PATCHER)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    r = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert list(got["bad"]) == ["partialpatch"]
    assert got["bad"]["partialpatch"].startswith("patched suite.api.collective_time, suite.perf.roofline_time while loading")
    assert got["roof"] is False and got["coll"] is False


def test_a_patch_to_a_module_an_earlier_plugin_swapped_into_sys_modules_is_still_caught():
    """A plugin that replaces ``sys.modules["suite.perf"]`` loaded ``ok`` and the next plugin's patch
    of the module it put there went unseen (the snapshot held the replaced one). The replacement is
    now quarantined and the original module put back, so the next plugin's patch is caught too."""
    import functools

    import suite.perf

    real = sys.modules["suite.perf"]

    @hookimpl
    def swap():
        fake = types.ModuleType("suite.perf")
        fake.roofline_time = real.roofline_time
        sys.modules["suite.perf"] = fake
        return [_technique("swapper")]

    @hookimpl
    def patch():
        sys.modules["suite.perf"].roofline_time = functools.partial(real.roofline_time)
        return [_technique("patcher2")]

    a, b = types.ModuleType("aswap"), types.ModuleType("bpatch")
    a.suite_techniques, b.suite_techniques = swap, patch
    try:
        reg = Registry(entry_points_=[], modules=[("aswap", a), ("bpatch", b), ("good", _module("good", "fine"))])
        bad = {p.name: p.reason for p in reg.quarantined()}
        assert sorted(bad) == ["aswap", "bpatch"], bad
        assert bad["aswap"].startswith("patched sys.modules['suite.perf'] while loading")
        assert "suite.perf.roofline_time" in bad["bpatch"]
        assert sys.modules["suite.perf"] is real
        assert not isinstance(sys.modules["suite.perf"].roofline_time, functools.partial)
    finally:
        sys.modules["suite.perf"] = real
        suite.perf.roofline_time = real.roofline_time if not isinstance(real.roofline_time, functools.partial) \
            else real.roofline_time.func


def test_the_import_patch_check_keeps_its_snapshot_while_nothing_changes_and_still_sees_an_equal_rebinding():
    """suite.tamper.checked gives back the very snapshot it was given when nothing changed (so the
    all-at-once form it built is used by the next plugin's check), and a name rebound to an equal
    but different object (1 -> 1.0) or a module replaced in sys.modules is still found and put back
    with that kept snapshot."""
    import sys

    from suite import tamper

    name = "suite_tamper_probe_equal"
    probe, other = types.ModuleType(name), types.ModuleType(name)
    probe.value = 1
    sys.modules[name] = probe
    try:
        snap = tamper.snapshot()
        changed, kept = tamper.checked(snap, "evil")
        assert changed == [] and kept is snap
        probe.value = 1.0
        changed, kept = tamper.checked(kept, "evil")
        assert changed == [f"{name}.value"] and type(probe.value) is int
        assert tamper.checked(kept, "evil") == ([], kept)
        sys.modules[name] = other
        assert tamper.checked(kept, "evil")[0] == [f"sys.modules[{name!r}]"] and sys.modules[name] is probe
    finally:
        sys.modules.pop(name, None)
