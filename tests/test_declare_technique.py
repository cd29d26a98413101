"""suite.api.declare_technique: a technique's plain data read from its technique.toml (issue 47)."""

from __future__ import annotations

import dataclasses
import importlib
import sys
import textwrap
from pathlib import Path

import pytest
from session_context import session_context

from suite.api import Paper, Param, Property, ScenarioSpec, Technique, TechniqueError, Variant, declare_technique

ROOT = Path(__file__).resolve().parents[1]

_TOML = """\
name = "toml-demo"
title = "A demo technique declared in TOML"
category = "communication"
version = "0.2.0"
oracle_tolerance = 1e-08
profile_kinds = ["node", "cluster"]
capabilities = ["oracle-exact", "bytes-conserved"]

[fidelities]
model = "{pkg}.model:evaluate"

[kit_opt_out]
network-sensitivity = "the demo prices no network"

[paper]
title = "A paper"
authors = ["A. Author", "B. Author"]
year = 2020

[[variants]]
name = "base"
description = "the baseline"
baseline = true

[[variants]]
name = "demo"
description = "the technique"

[parameters.workers]
type = "int"
default = 4
minimum = 1
unit = "workers"
role = "scale"

[parameters.efficiency]
type = "float"
default = {{ python = "{pkg}.constants:EFFICIENCY" }}

[parameters.algorithm]
type = "str"
default = "ring"
choices = ["ring", "tree"]

[[smoke]]
variant = "demo"
profile = "dgx-a100"
params = {{ workers = 8 }}

[[properties]]
name = "always"
description = "holds for every scenario"
check = "check_always"

[[properties]]
name = "elsewhere"
description = "a check by reference"
check = "{pkg}.checks:check_elsewhere"
"""


_TECHNIQUE_PY = """\
from suite.api import declare_technique


def check_always(technique, scenario):
    pass


TECHNIQUE = declare_technique(__name__, claims=[])
"""


def _package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, toml: str) -> str:
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "constants.py").write_text("EFFICIENCY = 0.375\n")
    (pkg / "model.py").write_text("def evaluate(scenario):\n    raise NotImplementedError\n")
    (pkg / "checks.py").write_text("def check_elsewhere(technique, scenario):\n    pass\n")
    (pkg / "boom.py").write_text("raise RuntimeError('boom at import')\n")
    (pkg / "badsyntax.py").write_text("def (:\n")
    (pkg / "technique.py").write_text(_TECHNIQUE_PY)
    (pkg / "technique.toml").write_text(toml.format(pkg=name))
    monkeypatch.syspath_prepend(str(tmp_path))
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        monkeypatch.delitem(sys.modules, mod)  # a previous case's package of the same name
    importlib.invalidate_caches()
    return name


def test_the_file_builds_the_technique_the_python_declaration_builds(tmp_path, monkeypatch):
    pkg = _package(tmp_path, monkeypatch, "toml_demo_equal", _TOML)
    module = importlib.import_module(pkg + ".technique")
    checks = importlib.import_module(pkg + ".checks")
    built = module.TECHNIQUE
    written = Technique(
        name="toml-demo", title="A demo technique declared in TOML", category="communication", version="0.2.0",
        oracle_tolerance=1e-8, profile_kinds=("node", "cluster"),
        capabilities=frozenset({"bytes-conserved", "oracle-exact"}),
        fidelities={"model": f"{pkg}.model:evaluate"},
        kit_opt_out={"network-sensitivity": "the demo prices no network"},
        paper=Paper(title="A paper", authors=("A. Author", "B. Author"), year=2020),
        variants=[Variant("base", "the baseline", baseline=True), Variant("demo", "the technique")],
        parameters={"workers": Param(int, default=4, minimum=1, unit="workers", role="scale"),
                    "efficiency": Param(float, default=0.375),
                    "algorithm": Param(str, default="ring", choices=("ring", "tree"))},
        smoke=[ScenarioSpec(variant="demo", profile="dgx-a100", params={"workers": 8})],
        properties=[Property("always", "holds for every scenario", module.check_always),
                    Property("elsewhere", "a check by reference", checks.check_elsewhere)],
        claims=[],
    )
    assert built == written
    # the reference form is the constant's value (0.375, constants.py), not a copy in the file
    assert built.parameters["efficiency"].default == 0.375
    assert list(built.parameters) == ["workers", "efficiency", "algorithm"]


@pytest.mark.parametrize("edit, message", [
    (('category = "communication"', "category = 3"),
     "toml_demo_bad/technique.toml: category: expected a string, got 3"),
    (('type = "int"', 'type = "integer"'),
     "toml_demo_bad/technique.toml: parameters.workers.type: expected one of int, float, str, bool, got 'integer'"),
    (("baseline = true", 'baseline = "yes"'),
     "toml_demo_bad/technique.toml: variants[0].baseline: expected true or false, got 'yes'"),
    (("year = 2020", "years = 2020"),
     "toml_demo_bad/technique.toml: paper.years: expected a key among ['arxiv', 'authors', 'code', 'doi', 'title', "
     "'venue', 'year'], got 'years'"),
    (('profile = "dgx-a100"', 'profile = "dgx-a100"\nseed = 1.5'),
     "toml_demo_bad/technique.toml: smoke[0].seed: expected an integer, got 1.5"),
    (('default = {{ python = "{pkg}.constants:EFFICIENCY" }}', 'default = {{ python = "{pkg}.constants:NOPE" }}'),
     "toml_demo_bad/technique.toml: parameters.efficiency.default: expected a reference 'package.module:NAME' that "
     "imports (AttributeError"),
    (('category = "communication"', 'category = "telepathy"'),
     "toml_demo_bad/technique.toml: category: expected one of ['communication', "),
    (('title = "A paper"', 'title = "A paper'), "toml_demo_bad/technique.toml: expected valid TOML, got a syntax error"),
    # parameter declarations are checked when the file is read, not when a case first runs
    (("default = 4", 'default = "eight"'),
     "toml_demo_bad/technique.toml: parameters.workers.default: expected an integer (type = \"int\"), got 'eight'"),
    (("default = 4", "default = 8.5"),
     "toml_demo_bad/technique.toml: parameters.workers.default: expected an integer (type = \"int\"), got 8.5"),
    (("default = 4", "default = 0"),
     "toml_demo_bad/technique.toml: parameters.workers.default: expected a value >= minimum (1), got 0"),
    (("minimum = 1", "minimum = 5000\nmaximum = 4096"),
     "toml_demo_bad/technique.toml: parameters.workers.minimum: expected a number <= maximum (4096), got 5000"),
    (('choices = ["ring", "tree"]', 'choices = ["ring", 2]'),
     "toml_demo_bad/technique.toml: parameters.algorithm.choices[1]: expected a string (type = \"str\"), got 2"),
    (('choices = ["ring", "tree"]', 'choices = ["tree", "star"]'),
     "toml_demo_bad/technique.toml: parameters.algorithm.default: expected one of the choices ['tree', 'star'], "
     "got 'ring'"),
    (('type = "int"', 'type = ["int"]'),
     "toml_demo_bad/technique.toml: parameters.workers.type: expected one of int, float, str, bool, got ['int']"),
    # a reference table holds the one key python; its module failing to import names the field
    (('default = {{ python = "{pkg}.constants:EFFICIENCY" }}',
      'default = {{ python = "{pkg}.constants:EFFICIENCY", note = "x" }}'),
     "toml_demo_bad/technique.toml: parameters.efficiency.default.note: expected only the key 'python' in a "
     "reference { python = \"package.module:NAME\" }, got 'note'"),
    (('default = {{ python = "{pkg}.constants:EFFICIENCY" }}', 'default = {{ python = "{pkg}.boom:X" }}'),
     "toml_demo_bad/technique.toml: parameters.efficiency.default: expected a reference 'package.module:NAME' that "
     "imports (RuntimeError: boom at import), got 'toml_demo_bad.boom:X'"),
    (('default = {{ python = "{pkg}.constants:EFFICIENCY" }}', 'default = {{ python = "{pkg}.badsyntax:X" }}'),
     "toml_demo_bad/technique.toml: parameters.efficiency.default: expected a reference 'package.module:NAME' that "
     "imports (SyntaxError"),
    # a required field in neither the file nor Python is named
    (('title = "A demo technique declared in TOML"\n', ""),
     "toml_demo_bad/technique.toml: title: expected a string, got nothing"),
    (('name = "toml-demo"\n', ""), "toml_demo_bad/technique.toml: name: expected a string, got nothing"),
    (("[[variants]]", "[[variantz]]"), "toml_demo_bad/technique.toml: variantz: expected a key among"),
    # a misspelled key suggests the nearest
    (("oracle_tolerance", "oracle_tolerence"),
     "toml_demo_bad/technique.toml: oracle_tolerence: expected a key among ['capabilities', "),
    # [[smoke]] entries name the technique's own variants and parameters
    (('variant = "demo"', 'variant = "dmeo"'),
     "toml_demo_bad/technique.toml: smoke[0].variant: expected one of the variants ['base', 'demo'], got 'dmeo'"),
    (("params = {{ workers = 8 }}", "params = {{ wrokers = 8 }}"),
     "toml_demo_bad/technique.toml: smoke[0].params.wrokers: expected one of the parameters ['algorithm', "
     "'efficiency', 'workers'], got 'wrokers'"),
    (("params = {{ workers = 8 }}", "params = {{ workers = 0 }}"),
     "toml_demo_bad/technique.toml: smoke[0].params.workers: expected >= 1 workers, got 0"),
    # a fidelity whose module does not exist (found without importing it)
    (('model = "{pkg}.model:evaluate"', 'model = "{pkg}.modle:evaluate"'),
     "toml_demo_bad/technique.toml: fidelities.model: expected a reference 'package.module:function' whose module "
     "exists, got 'toml_demo_bad.modle:evaluate'"),
    (('model = "{pkg}.model:evaluate"', 'modle = "{pkg}.model:evaluate"'),
     "toml_demo_bad/technique.toml: fidelities.modle: expected a key among ['execute', 'model', 'simulate'], "
     "got 'modle'; did you mean 'model'?"),
    (('category = "communication"', 'category = "comunication"'),
     "toml_demo_bad/technique.toml: category: expected one of ['communication', "),
    (('check = "check_always"', 'check = "check_never"'),
     "toml_demo_bad/technique.toml: properties[0].check: expected a function defined in toml_demo_bad.technique "
     "before declare_technique(...) is called, or a reference 'package.module:function', got 'check_never'"),
    # [metric_meanings]: each metric a table of unit, direction and a one-line meaning
    (("[fidelities]", '[metric_meanings]\nbytes = {{ unit = "B", direction = "fewer", meaning = "x" }}\n\n[fidelities]'),
     "toml_demo_bad/technique.toml: metric_meanings.bytes.direction: expected one of ['lower', 'higher', 'none'], "
     "got 'fewer'"),
    (("[fidelities]", '[metric_meanings]\nbytes = {{ unit = "B", direction = "lower" }}\n\n[fidelities]'),
     "toml_demo_bad/technique.toml: metric_meanings.bytes.meaning: expected a string, got nothing"),
    (("[fidelities]", '[metric_meanings]\nbytes = {{ unit = "B", direction = "lower", meaning = "x", '
                      'baseline = "y" }}\n\n[fidelities]'),
     "toml_demo_bad/technique.toml: metric_meanings.bytes.baseline: expected a key among ['direction', 'meaning', "
     "'unit'], got 'baseline'"),
    (("[fidelities]", '[metric_meanings]\nbytes = "B"\n\n[fidelities]'),
     "toml_demo_bad/technique.toml: metric_meanings.bytes: expected a table { unit, direction, meaning }, got 'B'"),
    # a fidelity's sub-table and the include list are read the same way, one line naming the field
    (("[fidelities]", '[metric_meanings.model]\nbytes = "B"\n\n[fidelities]'),
     "toml_demo_bad/technique.toml: metric_meanings.model.bytes: expected a table { unit, direction, meaning }, "
     "got 'B'"),
    (("[fidelities]", '[metric_meanings]\ninclude = "suite.api:Workers.RESULT_MEANINGS"\n\n[fidelities]'),
     "toml_demo_bad/technique.toml: metric_meanings.include: expected an array of strings, got "
     "'suite.api:Workers.RESULT_MEANINGS'"),
    # an include is resolved when the file is read: a misspelt one is refused then, not at `suite report`
    (("[fidelities]", '[metric_meanings.model]\ninclude = ["suite.api:Workers.RESULT_MEANING"]\n\n[fidelities]'),
     "toml_demo_bad/technique.toml: metric_meanings.model.include: expected a reference 'package.module:NAME' that "
     "imports (AttributeError: type object 'Workers' has no attribute 'RESULT_MEANING'), got "
     "'suite.api:Workers.RESULT_MEANING'"),
    (("[fidelities]", '[metric_meanings]\ninclude = ["suite.api:Workers"]\n\n[fidelities]'),
     "toml_demo_bad/technique.toml: metric_meanings.include: expected a reference to a mapping of metric name -> "
     "MetricMeaning (it names a type), got 'suite.api:Workers'"),
    (("[fidelities]", '[metric_meanings.execute]\nbytes = {{ unit = "B", direction = "lower", meaning = "x" }}'
                      '\n\n[fidelities]'),
     "toml_demo_bad/technique.toml: technique 'toml-demo': metric_meanings['execute']: expected a table of a "
     "fidelity the technique has (model)"),
])
def test_a_bad_entry_is_one_line_naming_file_field_expected_and_given(tmp_path, monkeypatch, edit, message):
    old, new = edit
    assert old in _TOML
    pkg = _package(tmp_path, monkeypatch, "toml_demo_bad", _TOML.replace(old, new))
    with pytest.raises(TechniqueError) as err:
        importlib.import_module(pkg + ".technique")
    assert str(err.value).startswith(message)
    assert "\n" not in str(err.value)


def test_a_misspelt_include_quarantines_only_its_plugin_when_it_loads(tmp_path, monkeypatch):
    """`include = ["suite.api:Workers.RESULT_MEANING"]` loaded `ok`; `suite report` and `suite info`
    then failed on it. It is one line naming the file and field when the plugin loads, and costs
    that plugin only."""
    import types

    from suite.api import hookimpl
    from suite.registry import Registry

    bad = _package(tmp_path, monkeypatch, "toml_demo_inc", _TOML.replace(
        "[fidelities]", '[metric_meanings]\ninclude = ["suite.api:Workers.RESULT_MEANING"]\n\n[fidelities]'))
    plugin = types.ModuleType("bad_include")
    plugin.suite_techniques = hookimpl(lambda: [importlib.import_module(bad + ".technique").TECHNIQUE])
    good = types.ModuleType("good_one")
    good.suite_techniques = hookimpl(lambda: [dataclasses.replace(
        session_context().technique("poseidon"), name="poseidon-copy")])
    reg = Registry(entry_points_=[], modules=[("bad_include", plugin), ("good_one", good)])
    (info,) = reg.quarantined()
    assert info.name == "bad_include" and info.reason == (
        "suite_techniques() failed: toml_demo_inc/technique.toml: metric_meanings.include: expected "
        "a reference 'package.module:NAME' that imports (AttributeError: type object 'Workers' has no attribute "
        "'RESULT_MEANING'), got 'suite.api:Workers.RESULT_MEANING'")
    assert reg.technique("poseidon-copy").meaning("speedup").unit == "1"


def test_a_fidelity_naming_a_missing_function_names_the_file_when_it_first_runs(tmp_path, monkeypatch):
    """The model module is not imported to list the technique; the function's typo is found when a
    case first asks for it, and the error names the file and the field."""
    toml = _TOML.replace('model = "{pkg}.model:evaluate"', 'model = "{pkg}.model:evaluat"')
    pkg = _package(tmp_path, monkeypatch, "toml_demo_fid", toml)
    tech = importlib.import_module(pkg + ".technique").TECHNIQUE
    assert pkg + ".model" not in sys.modules
    with pytest.raises(TechniqueError, match=r"^toml_demo_fid/technique.toml: fidelities.model: expected a reference "
                                             r"'package.module:function' that imports \(AttributeError: .*\), "
                                             r"got 'toml_demo_fid.model:evaluat'$"):
        tech.fidelity("model")


def test_a_misspelled_key_suggests_the_nearest(tmp_path, monkeypatch):
    pkg = _package(tmp_path, monkeypatch, "toml_demo_typo", _TOML.replace("oracle_tolerance", "oracle_tolerence"))
    with pytest.raises(TechniqueError) as err:
        importlib.import_module(pkg + ".technique")
    assert str(err.value).endswith("got 'oracle_tolerence'; did you mean 'oracle_tolerance'?")


def test_a_missing_variants_array_is_named(tmp_path, monkeypatch):
    start, end = _TOML.index("[[variants]]"), _TOML.index("[parameters.workers]")
    pkg = _package(tmp_path, monkeypatch, "toml_demo_novariants", _TOML[:start] + _TOML[end:])
    with pytest.raises(TechniqueError, match=r"^toml_demo_novariants/technique.toml: variants: expected an array of "
                                             r"tables \[\[variants\]\], got nothing$"):
        importlib.import_module(pkg + ".technique")


def test_a_field_in_the_file_and_in_python_is_refused(tmp_path, monkeypatch):
    pkg = _package(tmp_path, monkeypatch, "toml_demo_both", _TOML)
    importlib.import_module(pkg + ".technique")  # the declaring module, where the checks are
    with pytest.raises(TechniqueError, match=r"toml_demo_both/technique.toml: version: expected in the file or in "
                                             r"Python, got it in both"):
        declare_technique(pkg + ".technique", claims=[], version="9.9.9")


def test_a_missing_file_names_it(tmp_path, monkeypatch):
    pkg = _package(tmp_path, monkeypatch, "toml_demo_missing", _TOML)
    (tmp_path / pkg / "technique.toml").unlink()
    with pytest.raises(TechniqueError, match=r"toml_demo_missing: data file 'technique.toml': expected a file"):
        declare_technique(pkg)


def test_the_file_is_part_of_the_code_fingerprint(tmp_path, monkeypatch):
    """Editing technique.toml (a parameter's default, say) makes new case keys, as editing
    technique.py did."""
    from suite.runner.case import code_fingerprint

    pkg = _package(tmp_path, monkeypatch, "toml_demo_fingerprint", _TOML)
    tech = importlib.import_module(f"{pkg}.technique").TECHNIQUE  # its key takes its package's fingerprint
    before = code_fingerprint(tech, refresh=True)
    path = tmp_path / pkg / "technique.toml"
    path.write_text(path.read_text().replace("default = 4", "default = 5"))
    assert code_fingerprint(tech, refresh=True) != before


def test_the_file_and_the_fidelities_belong_to_one_package(tmp_path, monkeypatch):
    """The case key holds the code fingerprint of the package of the fidelities
    (Technique.package): a technique.toml whose fidelities live in another package would not
    be in the key, so it is refused."""
    other = _package(tmp_path, monkeypatch, "toml_demo_other", _TOML)
    pkg = _package(tmp_path, monkeypatch, "toml_demo_home", _TOML)
    path = tmp_path / pkg / "technique.toml"
    path.write_text(path.read_text().replace(f'model = "{pkg}.model:evaluate"', f'model = "{other}.model:evaluate"'))
    with pytest.raises(TechniqueError, match=r"toml_demo_home/technique.toml: fidelities: expected functions of "
                                             r"the package 'toml_demo_home'.*got 'toml_demo_other'"):
        importlib.import_module(f"{pkg}.technique")


def test_every_built_in_technique_file_ships_as_package_data():
    """setup.py's package_data ships every plugin's *.toml in the wheel (a built install reads
    technique.toml through importlib, not the checkout)."""
    setup = (ROOT / "setup.py").read_text()
    assert '"": ["*.toml"' in setup
    files = sorted(ROOT.glob("plugins/suite_*/technique.toml"))
    assert files, "no built-in plugin declares its plain data in technique.toml"
    for f in files:
        assert "declare_technique(" in (f.parent / "technique.py").read_text(), f


@pytest.mark.slow
def test_a_built_wheel_holds_the_technique_files(tmp_path):
    """The wheel `pip install` builds (not an editable install) holds each technique.toml."""
    import subprocess
    import zipfile

    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True, timeout=600)
    wheel = next(tmp_path.glob("dlsys_suite-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for f in ROOT.glob("plugins/suite_*/technique.toml"):
        assert f"{f.parent.name}/technique.toml" in names, f


def test_lazy_hook_imports_on_the_call_and_returns_the_object_called_and_listed(tmp_path, monkeypatch):
    """The one-line hook returns what the function form returned: [TECHNIQUE], all_workloads(),
    [one_workload()]; it imports nothing until the hook is called."""
    from suite.api import lazy_hook

    pkg = tmp_path / "lazy_hook_demo"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "things.py").write_text("THING = 'thing'\n\ndef build():\n    return ['a', 'b']\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    importlib.invalidate_caches()
    listed = lazy_hook("lazy_hook_demo.things:THING", listed=True)
    assert "lazy_hook_demo.things" not in sys.modules
    assert listed() == ["thing"]
    assert lazy_hook("lazy_hook_demo.things:build", call=True)() == ["a", "b"]
    assert lazy_hook("lazy_hook_demo.things:build", call=True, listed=True)() == [["a", "b"]]
    assert listed.suite_impl == {"wrapper": False, "hookwrapper": False, "optionalhook": False, "tryfirst": False,
                                 "trylast": False, "specname": None}  # pluggy's marker: a hook implementation


def test_lazy_hook_refuses_a_malformed_reference():
    from suite.api import lazy_hook
    from suite.errors import PluginError

    with pytest.raises(PluginError, match=r"^lazy_hook: reference: expected 'package.module:attribute', "
                                          r"got 'suite_demo.technique.TECHNIQUE'$"):
        lazy_hook("suite_demo.technique.TECHNIQUE")


def test_a_paper_of_two_authors_names_both():
    """`suite info` and the report cited Aji and Heafield's paper as "A. F. Aji et al.": "et al." is
    for three or more authors."""
    from suite.technique import Paper

    two = Paper("Sparse Communication for Distributed Gradient Descent", authors=("A. F. Aji", "K. Heafield"),
                venue="EMNLP", year=2017)
    assert two.cite() == "Sparse Communication for Distributed Gradient Descent (A. F. Aji and K. Heafield, EMNLP, 2017)"
    assert two.who(surnames=True) == "Aji and Heafield"
    three = Paper("P", authors=("S. Shi", "X. Chu", "B. Li"))
    assert (three.who(), three.who(surnames=True), Paper("P").who()) == ("S. Shi et al.", "Shi et al.", "")
