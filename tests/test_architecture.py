"""The layering rules, checked on the source (AST, every import including function-level ones):

* the core (``suite/``) imports no plugin package (``suite_*``): plugins enter only through the
  ``suite.plugins`` entry points (suite/registry.py);
* a plugin imports no other plugin, and from the suite only the public modules listed in
  :data:`ALLOWED` (never the runner, the store, the registry, the context or the CLI);
* docs/plugin-authors.md lists exactly the same public modules.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "suite"
PLUGINS = ROOT / "plugins"

# the rules are the conformance kit's own (suite.testing.imports), so a third-party plugin's CI
# checks exactly what this test checks for the built-in plugins
from suite.testing.imports import ALLOWED, FORBIDDEN  # noqa: E402,F401
from suite.testing.imports import allowed as _allowed  # noqa: E402
from suite.testing.imports import imports_of as _imports  # noqa: E402

#: Known violations, each to be removed by its owner (the test below fails once one is fixed, so the
#: list only shrinks): path -> the forbidden module it imports.
KNOWN_VIOLATIONS: dict[str, set[str]] = {}


def _plugin_packages() -> list[Path]:
    return sorted(p for p in PLUGINS.iterdir() if p.is_dir() and p.name.startswith("suite_"))


def test_core_imports_no_plugin():
    bad = [f"{f.relative_to(ROOT)}:{line}: imports {mod}"
           for f in sorted(CORE.rglob("*.py")) for line, mod in _imports(f) if mod.split(".")[0].startswith("suite_")]
    assert not bad, "the core must not import a plugin (plugins enter through entry points):\n" + "\n".join(bad)


def _plugin_violations() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for pkg in _plugin_packages():
        for f in sorted(pkg.rglob("*.py")):
            rel = str(f.relative_to(ROOT))
            for _line, mod in _imports(f):
                top = mod.split(".")[0]
                if top.startswith("suite_") and top != pkg.name:
                    found.setdefault(rel, set()).add(mod)  # another plugin
                elif top == "suite" and not _allowed(mod):
                    found.setdefault(rel, set()).add(mod)
    return found


def test_plugins_import_only_public_suite_modules_and_no_other_plugin():
    found = _plugin_violations()
    new = {f: sorted(m - KNOWN_VIOLATIONS.get(f, set())) for f, m in found.items()}
    new = {f: m for f, m in new.items() if m}
    assert not new, ("plugins may import only " + ", ".join(ALLOWED) + " from the suite, and no other plugin; "
                     "found:\n" + "\n".join(f"{f}: {', '.join(m)}" for f, m in sorted(new.items())))


def test_known_violations_are_still_real():
    """A fixed violation must leave KNOWN_VIOLATIONS (so the list can only shrink)."""
    found = _plugin_violations()
    stale = {f: sorted(m - found.get(f, set())) for f, m in KNOWN_VIOLATIONS.items()}
    assert not {f: m for f, m in stale.items() if m}, f"remove from KNOWN_VIOLATIONS: {stale}"


def test_forbidden_modules_are_not_allowed():
    for mod in FORBIDDEN:
        assert not _allowed(mod) and not _allowed(mod + ".x"), mod


@pytest.mark.parametrize("module, ok", [
    ("suite", True), ("suite.perf", True), ("suite.perf.collective", True), ("suite.workloads.cnn", True),
    ("suite.hardware.units", True), ("suite.hardware.calibrate", False), ("suite.runner.case", False),
    ("suite.results.store", False), ("suite.cli.run", False), ("suite.registry", False), ("suite.context", False),
])
def test_allowed_rule(module, ok):
    assert _allowed(module) is ok


def test_the_checker_sees_function_level_and_dynamic_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import os\n\ndef f():\n    from suite.runner.case import resolve_case\n"
                 "    import importlib\n    importlib.import_module('suite_poseidon')\n"
                 "from suite import registry\n")
    mods = {m for _l, m in _imports(f)}
    assert {"suite.runner.case", "suite_poseidon", "suite.registry"} <= mods


def test_plugin_authors_guide_lists_the_same_modules():
    text = (ROOT / "docs" / "plugin-authors.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- allowed-imports -->(.*?)<!-- /allowed-imports -->", text, re.S)
    assert m, "docs/plugin-authors.md: the allowed-imports list (between <!-- allowed-imports --> markers) is missing"
    listed = set(re.findall(r"^- `(suite[\w.*]*)`", m.group(1), re.M))
    assert listed == set(ALLOWED)
    f = re.search(r"<!-- forbidden-imports -->(.*?)<!-- /forbidden-imports -->", text, re.S)
    assert f and set(re.findall(r"`(suite\.\w+)`", f.group(1))) == set(FORBIDDEN)
