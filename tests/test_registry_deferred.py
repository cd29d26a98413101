"""A plugin whose technique hook is a lazy_hook and whose technique.toml names the technique is
imported when that technique is first asked for (issue 44: `suite run --technique T` imported
every plugin's technique module, ~0.1 s of its start-up)."""

from __future__ import annotations

import importlib
import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

from suite.errors import PluginError
from suite.hardware.name_scan import scan_top_name
from suite.registry import Registry

ROOT = Path(__file__).resolve().parents[1]

_TOML = """\
# a header comment
name = "{name}"
title = \"\"\"\\
    A technique, its title on two lines\"\"\"
category = "communication"

[fidelities]
model = "{pkg}.model:evaluate"

[paper]
title = "A paper"

[[variants]]
name = "base"
description = "the baseline"
baseline = true
"""

_TECHNIQUE_PY = "from suite.api import declare_technique\n{before}\nTECHNIQUE = declare_technique(__name__{file})\n"


def _plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, pkg: str, name: str, *, before: str = "",
            file: str = "") -> object:
    """The imported top-level package *pkg* of a plugin declaring technique *name* in its
    technique.toml, its hook ``lazy_hook("PKG.technique:TECHNIQUE", listed=True)``."""
    d = tmp_path / pkg
    d.mkdir()
    (d / "__init__.py").write_text(
        f"from suite.api import lazy_hook\nsuite_techniques = lazy_hook('{pkg}.technique:TECHNIQUE', listed=True)\n")
    (d / "model.py").write_text("def evaluate(scenario):\n    raise NotImplementedError\n")
    (d / "technique.py").write_text(_TECHNIQUE_PY.format(before=before, file=f", file={file!r}" if file else ""))
    (d / "technique.toml").write_text(_TOML.format(name=name, pkg=pkg))
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    return importlib.import_module(pkg)


def test_the_technique_module_is_imported_when_its_technique_is_asked_for(tmp_path, monkeypatch):
    reg = Registry(entry_points_=[], modules=[("la", _plugin(tmp_path, monkeypatch, "lazy_reg_a", "lazy-a"))])
    assert "lazy_reg_a.technique" not in sys.modules
    assert [(p.name, p.status, p.techniques) for p in reg.plugins] == [("la", "ok", ["lazy-a"])]
    tech = reg.technique("lazy-a")
    assert "lazy_reg_a.technique" in sys.modules
    assert (tech.name, tech.category, tech.variant_names) == ("lazy-a", "communication", ["base"])
    assert reg.plugin_of("lazy-a").name == "la"
    assert [t.name for t in reg.techniques()] == ["lazy-a"]


def test_a_deferred_technique_that_fails_to_import_quarantines_its_plugin_when_asked_for(tmp_path, monkeypatch):
    mod = _plugin(tmp_path, monkeypatch, "lazy_reg_b", "lazy-b", before="raise RuntimeError('boom')")
    reg = Registry(entry_points_=[], modules=[("lb", mod)])
    assert reg.quarantined() == []
    with pytest.raises(PluginError) as e:
        reg.technique("lazy-b")
    assert str(e.value) == ("technique 'lazy-b': plugin 'lb' (<in-process>) is quarantined: suite_techniques() "
                            "failed: RuntimeError: boom (see `suite plugins`)")
    assert [p.name for p in reg.quarantined()] == ["lb"]
    assert reg.techniques() == []
    with pytest.raises(PluginError, match=r"^plugin 'lb' \(<in-process>\): suite_techniques\(\) failed: "
                                          r"RuntimeError: boom$"):
        Registry(entry_points_=[], modules=[("lb", mod)], strict=True)  # strict: every hook at build


def test_a_name_two_files_declare_quarantines_the_later_plugin_without_importing_either(tmp_path, monkeypatch):
    first = _plugin(tmp_path, monkeypatch, "lazy_reg_c1", "lazy-c")
    second = _plugin(tmp_path, monkeypatch, "lazy_reg_c2", "lazy-c")
    reg = Registry(entry_points_=[], modules=[("c1", first), ("c2", second)])
    [q] = reg.quarantined()
    assert (q.name, q.reason) == ("c2", "suite_techniques(): technique 'lazy-c' is already provided by <in-process> "
                                        "(plugin 'c1'); expected a unique name, got a duplicate from <in-process>")
    assert "lazy_reg_c1.technique" not in sys.modules and "lazy_reg_c2.technique" not in sys.modules
    assert reg.plugin_of("lazy-c").name == "c1"


def test_a_technique_built_from_another_file_is_found_under_the_name_its_hook_returns(tmp_path, monkeypatch):
    mod = _plugin(tmp_path, monkeypatch, "lazy_reg_d", "lazy-d", file="other.toml")
    (tmp_path / "lazy_reg_d" / "other.toml").write_text(_TOML.format(name="lazy-other", pkg="lazy_reg_d"))
    reg = Registry(entry_points_=[], modules=[("ld", mod)])
    assert reg.technique("lazy-other").name == "lazy-other"
    with pytest.raises(PluginError, match=r"^unknown technique 'lazy-d'.*installed: lazy-other$"):
        reg.technique("lazy-d")
    assert reg.plugins[0].techniques == ["lazy-other"]


def test_a_deferred_import_that_patches_a_shared_module_is_put_back_and_quarantined(tmp_path, monkeypatch):
    mod = _plugin(tmp_path, monkeypatch, "lazy_reg_e", "lazy-e", before="import math\nmath.pi = 3.0")
    reg = Registry(entry_points_=[], modules=[("le", mod)])
    with pytest.raises(PluginError, match=r"is quarantined: patched math.pi while loading \(put back\)"):
        reg.technique("lazy-e")
    assert math.pi == 3.141592653589793


def test_the_installed_plugins_import_only_the_technique_asked_for():
    """In a fresh process: looking up poseidon imports one technique module; listing imports them
    all and gives the names the strict (every hook at build) registry gives."""
    code = (
        "import json, sys\n"
        "from suite.registry import Registry\n"
        "reg = Registry(strict=False)\n"
        "reg.technique('poseidon')\n"
        "mods = sorted(m for m in sys.modules if m.startswith('suite_') and m.endswith('.technique'))\n"
        "names = [t.name for t in reg.techniques()]\n"
        "strict = [t.name for t in Registry(strict=True).techniques()]\n"
        "print(json.dumps([mods, names == strict, len(names), reg.quarantined()]))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    mods, same, count, quarantined = json.loads(out.stdout)
    assert mods == ["suite_poseidon.technique"]
    assert same and count == 21 and quarantined == []  # 22 plugins; suite_slurm provides an executor only


@pytest.mark.parametrize("text, name", [
    ('name = "poseidon"\ntitle = """\\\n  two lines"""\n', "poseidon"),
    ("# comment\nname = 'mg-wfbp'  # a comment\n[paper]\nname = \"other\"\n", "mg-wfbp"),
    ('title = """x"""\nname = "late"\n', None),  # after a multi-line string: parse to know
    ('[paper]\nname = "in-a-table"\n', None),
    ('name = "a"\nname = "b"\n', None),
    ('name = "tab\\tname"\n', None),
    ("name.first = 'x'\n", None),
    ('version = "1"\n', None),
])
def test_scan_top_name_answers_only_when_a_plain_line_says_it(text, name):
    assert scan_top_name(text) == name


def test_name_and_version_read_from_the_header_lines_agree_with_importlib_metadata():
    """The registry (each plugin's distribution) and the case key (the libraries the suite declares) read Name and
    Version from the metadata's header lines; importlib.metadata parses the whole file."""
    from importlib.metadata import distributions, version

    from suite.registry import name_and_version
    from suite.runner.fingerprint import _library_versions

    seen = [(name_and_version(d), (d.metadata["Name"] or "<unknown>", d.version or "")) for d in distributions()]
    assert len(seen) > 20 and all(a == b for a, b in seen)
    libs = dict(item.split("=", 1) for item in _library_versions().split(";"))
    assert libs["numpy"] == version("numpy") and libs["scipy"] == version("scipy")
    assert all(v == version(n) for n, v in libs.items() if v != "none")  # every declared library


def _patching_module(name: str, technique: str, action) -> object:
    """An in-process plugin whose suite_techniques hook (called at load) runs *action* first."""
    import types

    from suite import Paper, Result, Technique, Variant, hookimpl

    @hookimpl
    def suite_techniques():
        action()
        return [Technique(name=technique, title="t", category="communication", paper=Paper("P"),
                          variants=[Variant("base", "baseline", baseline=True)],
                          fidelities={"model": lambda s: Result().add("x", 1.0)},
                          needs_profile=False, needs_workload=False)]

    mod = types.ModuleType(name)
    mod.suite_techniques = suite_techniques
    return mod


def test_each_plugin_is_checked_against_the_snapshot_the_previous_check_left():
    """The guard keeps one snapshot across plugins (suite.tamper.checked): a clean first plugin, then a
    second that rebinds math.pi, a name the first added to math, and a name of a shared module the
    first imported: all three put back and the second (only) quarantined."""
    import types

    fresh = "suite_tamper_probe_incremental"

    def clean_first():
        math.suite_probe_added = "first"  # an addition: not a change
        probe = types.ModuleType(fresh)
        probe.value = "first"
        sys.modules[fresh] = probe

    def patching_second():
        math.pi = 3.0
        math.suite_probe_added = "second"
        sys.modules[fresh].value = "second"

    try:
        reg = Registry(entry_points_=[], modules=[("first", _patching_module("first", "one", clean_first)),
                                                 ("second", _patching_module("second", "two", patching_second)),
                                                 ("third", _patching_module("third", "three", lambda: None))])
        assert math.pi == 3.141592653589793 and math.suite_probe_added == "first"
        assert sys.modules[fresh].value == "first"
        [q] = reg.quarantined()
        assert q.name == "second"
        assert q.reason == (f"patched math.pi, math.suite_probe_added, {fresh}.value while loading (put back); "
                            "expected a plugin that changes no shared module")
        assert [t.name for t in reg.techniques()] == ["one", "three"]
    finally:
        sys.modules.pop(fresh, None)
        if hasattr(math, "suite_probe_added"):
            del math.suite_probe_added


def test_a_hook_returning_another_name_than_its_technique_file_is_said_once_it_is_known(tmp_path, monkeypatch):
    """A trial plugin's technique.toml named 'ghost-tech' and its hook returned 'other-tech': the
    plugin kept working, silently. The registry now says so, in a line the CLI prints."""
    mod = _plugin(tmp_path, monkeypatch, "lazy_reg_g", "ghost-tech", file="other.toml")
    (tmp_path / "lazy_reg_g" / "other.toml").write_text(_TOML.format(name="other-tech", pkg="lazy_reg_g"))
    reg = Registry(entry_points_=[], modules=[("lazyg", mod)])
    assert reg.notes == []  # not known before the hook runs
    assert [t.name for t in reg.techniques()] == ["other-tech"]
    assert reg.notes == ["plugin 'lazyg' (<in-process>): its technique.toml names 'ghost-tech' but suite_techniques() "
                         "returned 'other-tech'; expected the same name (the registry reserves the technique.toml's "
                         "name, checked against other plugins' names, until it imports the technique)"]


def test_a_fidelity_resolved_on_first_use_does_not_quarantine_the_next_plugin_loaded(tmp_path, monkeypatch):
    """`Technique.fidelity` imports a fidelity declared as a reference on first use and keeps the
    function in place of the reference. The guard on other plugins' built techniques (0.3.10) took
    that for the next plugin's tampering: evaluating poseidon, then asking for mg-wfbp, quarantined
    mg-wfbp ("patched technique 'poseidon'.fidelities.model") and put the reference back."""
    reg = Registry(entry_points_=[], modules=[("ra", _plugin(tmp_path, monkeypatch, "lazy_res_a", "lazy-ra")),
                                              ("rb", _plugin(tmp_path, monkeypatch, "lazy_res_b", "lazy-rb"))])
    first = reg.technique("lazy-ra")
    model = first.fidelity("model")
    assert model is sys.modules["lazy_res_a.model"].evaluate
    second = reg.technique("lazy-rb")  # raised PluginError: plugin 'rb' is quarantined
    assert reg.quarantined() == [] and second.name == "lazy-rb"
    assert first.fidelities["model"] is model and first.implementation_modules == ["lazy_res_a.model"]

    # what is not the core's own resolution is still put back and blamed: a rewrite of the resolved
    # function, and a callable in place of a reference not yet resolved
    # ... or a module recorded for a fidelity not resolved (it would leave the technique's module out of its case keys)
    reg1 = Registry(entry_points_=[], modules=[("rf", _plugin(tmp_path, monkeypatch, "lazy_res_f", "lazy-rf")), ("re", _plugin(
        tmp_path, monkeypatch, "lazy_res_e", "lazy-re", before="import sys\nsys.modules['lazy_res_f.technique']"
        ".TECHNIQUE.__dict__.setdefault('_reference_modules', {})['model'] = 'os'\n"))])
    victim = reg1.technique("lazy-rf")
    with pytest.raises(PluginError, match=r"patched technique 'lazy-rf'._reference_modules"):
        reg1.technique("lazy-re")
    assert victim.implementation_modules == ["lazy_res_f.model"]
    # ... or a module of the attacker's that re-exports the function the reference names (hostile tryout):
    # the victim's package, code fingerprint and worker would have become the attacker's
    swap = ("import importlib, sys\nevaluate = importlib.import_module('lazy_res_h.model').evaluate\n"
            "v = sys.modules['lazy_res_h.technique'].TECHNIQUE\ndict.__setitem__(v.fidelities, 'model', evaluate)\n"
            "v.__dict__.setdefault('_reference_modules', {})['model'] = __name__\n")
    reg3 = Registry(entry_points_=[], modules=[("rh", _plugin(tmp_path, monkeypatch, "lazy_res_h", "lazy-rh")),
                                               ("ri", _plugin(tmp_path, monkeypatch, "lazy_res_i", "lazy-ri", before=swap))])
    victim = reg3.technique("lazy-rh")
    with pytest.raises(PluginError, match=r"patched technique 'lazy-rh'._reference_modules"):
        reg3.technique("lazy-ri")
    assert victim.implementation_modules == ["lazy_res_h.model"] and victim.package == "lazy_res_h"
    forge = "import sys\nfrom suite.api import Result\n" + "".join(
        f"dict.__setitem__(sys.modules['{m}.technique'].TECHNIQUE.fidelities, 'model', lambda s: Result())\n"
        for m in ("lazy_res_a", "lazy_res_d"))
    reg2 = Registry(entry_points_=[], modules=[("ra", sys.modules["lazy_res_a"]),
                                               ("rd", _plugin(tmp_path, monkeypatch, "lazy_res_d", "lazy-rd")),
                                               ("rc", _plugin(tmp_path, monkeypatch, "lazy_res_c", "lazy-rc", before=forge))])
    reg2.technique("lazy-ra"), reg2.technique("lazy-rd")
    with pytest.raises(PluginError, match=r"patched technique 'lazy-ra'.fidelities.model, technique 'lazy-rd'.fidelities.model"):
        reg2.technique("lazy-rc")
    assert first.fidelities["model"] is model
    assert reg2.technique("lazy-rd").fidelities["model"] == "lazy_res_d.model:evaluate"
