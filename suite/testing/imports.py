"""The import rules of plugin code, checked on its source (AST): the conformance kit's ``imports``
check, so a third-party plugin's CI enforces what docs/plugin-authors.md section 8 states.

Plugin code may import from the suite only the public modules in :data:`ALLOWED`; never the
runner, the store, the registry, the context, the CLI, the report, the kit itself
(:data:`FORBIDDEN`). Every ``import`` / ``from ... import`` of every module of the package that
defines the technique's evaluate functions is read, function-level ones and
``importlib.import_module("...")`` literals included.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

__all__ = ["ALLOWED", "FORBIDDEN", "imports_of", "allowed", "import_problems", "plugin_package"]

#: What plugin code may import from the suite: a module here, or a submodule of one ending in ".*".
ALLOWED = ("suite", "suite.technique", "suite.errors", "suite.frozen", "suite.perf.*", "suite.collectives.*",
           "suite.workloads.*", "suite.hardware", "suite.hardware.units", "suite.hardware.schema",
           "suite.hardware.extensions", "suite.execution")

#: Never from plugin code (the runner drives plugins, not the other way round).
FORBIDDEN = ("suite.runner", "suite.results", "suite.registry", "suite.context", "suite.cli", "suite.report",
             "suite.testing", "suite.validate", "suite.scaffold", "suite.hookspecs", "suite.resources")


def imports_of(path: Path) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in *path*, plus string literals passed to
    ``importlib.import_module`` / ``__import__``."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"), filename=str(path))
    out = []
    subs = {m.split(".")[1] for m in FORBIDDEN}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.lineno, node.module))
            # `from suite import runner` imports the module suite.runner
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names
                    if node.module == "suite" and a.name in subs]
        elif isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                out.append((node.lineno, node.args[0].value))
    return out


def allowed(module: str) -> bool:
    """True when plugin code may import *module* (a suite module) by :data:`ALLOWED`."""
    for a in ALLOWED:
        if a.endswith(".*"):
            base = a[:-2]
            if module == base or module.startswith(base + "."):
                return True
        elif module == a:
            return True
    return False


def plugin_package(tech) -> str | None:
    """The top-level package that defines *tech*'s evaluate functions, or None when they live in a
    single module (a test file, a notebook): only a package is a plugin."""
    top = tech.package
    if top and top not in sys.modules:
        import importlib

        try:
            importlib.import_module(top)
        except Exception:  # noqa: BLE001 - an unimportable package is reported by the kit's own checks
            return None
    mod = sys.modules.get(top)
    return top if mod is not None and getattr(mod, "__path__", None) else None


def _package_files(top: str) -> list[Path]:
    mod = sys.modules[top]
    return sorted(f for root in mod.__path__ for f in Path(root).rglob("*.py"))


def import_problems(tech) -> list[str]:
    """One line per import of a suite module plugin code may not use, in the package that defines
    *tech*'s evaluate functions (``file:line: imports suite.runner.case``)."""
    top = plugin_package(tech)
    if top is None or top == "suite":  # a single module or the core itself: not a plugin package
        return []
    out = []
    for f in _package_files(top):
        try:
            found = imports_of(f)
        except (OSError, SyntaxError, UnicodeDecodeError) as exc:
            out.append(f"{f}: cannot be read: {exc}")
            continue
        for line, modname in found:
            if modname.split(".")[0] == "suite" and not allowed(modname):
                out.append(f"{f.name}:{line}: imports {modname} (plugin code may import only "
                           f"{', '.join(ALLOWED)})")
    return out
