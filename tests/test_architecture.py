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

#: What plugin code may import from the suite: a module here, or a submodule of one ending in ".*".
ALLOWED = (
    "suite",
    "suite.technique",
    "suite.errors",
    "suite.frozen",
    "suite.perf.*",
    "suite.collectives.*",
    "suite.workloads.*",
    "suite.hardware",
    "suite.hardware.units",
    "suite.hardware.schema",
    "suite.hardware.extensions",
)

#: Never from plugin code (the runner drives plugins, not the other way round).
FORBIDDEN = ("suite.runner", "suite.results", "suite.registry", "suite.context", "suite.cli", "suite.report",
             "suite.testing", "suite.validate", "suite.scaffold", "suite.hookspecs", "suite.resources")

#: Known violations, each to be removed by its owner (the test below fails once one is fixed, so the
#: list only shrinks): path -> the forbidden module it imports.
KNOWN_VIOLATIONS: dict[str, set[str]] = {}


def _imports(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in *path*, plus string literals passed to
    ``importlib.import_module`` / ``__import__``."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
            # `from suite import runner` imports the module suite.runner
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names
                    if node.module == "suite" and a.name in {m.split(".")[1] for m in FORBIDDEN}]
        elif isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                out.append((node.lineno, node.args[0].value))
    return out


def _allowed(module: str) -> bool:
    for a in ALLOWED:
        if a.endswith(".*"):
            base = a[:-2]
            if module == base or module.startswith(base + "."):
                return True
        elif module == a:
            return True
    return False


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
