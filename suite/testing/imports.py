"""The import rules of plugin code, checked on its source (AST): the conformance kit's ``imports``
check, so a third-party plugin's CI enforces what docs/plugin-authors.md section 8 states.

Plugin code imports from the suite only the public plugin API, :mod:`suite.api`
(:data:`ALLOWED`); its tests may import the conformance kit, :mod:`suite.testing`, too
(:data:`ALLOWED_IN_TESTS`). The modules plugins imported before 0.3.0 (:data:`DEPRECATED`:
``suite``, ``suite.technique``, ``suite.perf.*``, ...) still work, with a DeprecationWarning naming
``suite.api``, and fail from :data:`FAILS_FROM` (0.4.0). The runner, the store, the registry,
the context, the CLI, the report (:data:`FORBIDDEN`) were never allowed. Every ``import`` /
``from ... import`` of every module of the package that defines the technique's evaluate
functions is read, function-level ones and ``importlib.import_module("...")`` literals included.
"""

from __future__ import annotations

import ast
import importlib
import sys
from pathlib import Path
from typing import Literal

from suite.technique import Technique

__all__ = ["ALLOWED", "ALLOWED_IN_TESTS", "DEPRECATED", "FORBIDDEN", "FAILS_FROM", "imports_of", "allowed",
           "classify", "is_test_file", "import_problems", "import_deprecations", "plugin_package"]

#: What plugin code may import from the suite: the public plugin API.
ALLOWED = ("suite.api",)

#: What a plugin's tests may import from the suite (a file under a ``tests`` folder, ``test_*.py``,
#: ``*_test.py`` or ``conftest.py``).
ALLOWED_IN_TESTS = ("suite.api", "suite.testing.*")

#: The public modules of 0.2 (a module here, or a submodule of one ending in ".*"): deprecated for
#: plugin code in 0.3.0 (everything a plugin may use is in :mod:`suite.api`), removed in 0.4.0.
DEPRECATED = ("suite", "suite.technique", "suite.errors", "suite.frozen", "suite.perf.*", "suite.collectives.*",
              "suite.workloads.*", "suite.hardware", "suite.hardware.units", "suite.hardware.schema",
              "suite.hardware.extensions", "suite.execution")

#: The version from which a :data:`DEPRECATED` import fails the kit's ``imports`` check.
FAILS_FROM = "0.4.0"

#: Never from plugin code (the runner drives plugins, not the other way round).
FORBIDDEN = ("suite.runner", "suite.results", "suite.registry", "suite.context", "suite.cli", "suite.report",
             "suite.testing", "suite.validate", "suite.scaffold", "suite.hookspecs", "suite.resources")

Verdict = Literal["allowed", "deprecated", "forbidden"]


def _suite_submodules() -> frozenset[str]:
    """The names of the suite package's own modules and subpackages (``api``, ``runner``, ...)."""
    root = Path(__file__).resolve().parents[1]
    return frozenset(p.stem for p in root.iterdir() if (p.suffix == ".py" and p.stem != "__init__")
                     or (p.is_dir() and (p / "__init__.py").exists()))


#: the caches of this module (emptied when full or on a restore): the load-time tamper check leaves them be
__caches__ = ('_MEMO',)
#: imports_of's answers by (path, file text): a kit run reads each file of a package for its
#: problems and again for its deprecations, and a test session runs the kit of every plugin; a file
#: whose text changed is read again. Cleared past :data:`_MEMO_MAX` entries.
_MEMO: dict[tuple[str, str], tuple[tuple[int, str], ...]] = {}
_MEMO_MAX = 4096


def imports_of(path: Path, tree: ast.AST | None = None) -> list[tuple[int, str]]:
    """(line, absolute module name) of every import in *path*, plus string literals passed to
    ``importlib.import_module`` / ``__import__``.

    *tree* is the file's syntax tree (``ast.parse`` of its current text) when the caller has
    parsed it already (the file is then not parsed again); without it the file is parsed here.
    The answer is kept per (path, text) for the process.

    Raises
    ------
    OSError
        *path* cannot be read.
    SyntaxError
        Its text does not parse (no *tree* given).
    """
    text = Path(path).read_text(encoding="utf-8")
    key = (str(path), text)
    found = _MEMO.get(key)
    if found is None:
        if len(_MEMO) >= _MEMO_MAX:
            _MEMO.clear()
        found = _MEMO[key] = tuple(_imports_in(tree if tree is not None else ast.parse(text, filename=str(path))))
    return list(found)


def _imports_in(tree: ast.AST) -> list[tuple[int, str]]:
    """:func:`imports_of`'s walk of one syntax tree."""
    out: list[tuple[int, str]] = []
    subs = _suite_submodules()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # `from suite import runner` imports the module suite.runner (and `from suite import api`
            # only suite.api: the package itself counts when a name that is not a module is imported)
            mods = [a.name for a in node.names if node.module == "suite" and a.name in subs]
            if len(mods) < len(node.names):
                out.append((node.lineno, node.module))
            out += [(node.lineno, f"suite.{m}") for m in mods]
        elif isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name in ("import_module", "__import__") and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                out.append((node.lineno, node.args[0].value))
    return out


def _matches(module: str, patterns: tuple[str, ...]) -> bool:
    for a in patterns:
        if a.endswith(".*"):
            base = a[:-2]
            if module == base or module.startswith(base + "."):
                return True
        elif module == a:
            return True
    return False


def classify(module: str, in_test: bool = False) -> Verdict:
    """Whether plugin code (a plugin's test file when *in_test*) may import the suite module
    *module*: ``allowed`` (:data:`ALLOWED`, :data:`ALLOWED_IN_TESTS`), ``deprecated`` (a 0.2 public
    module, :data:`DEPRECATED`: warns in 0.3.x, fails from :data:`FAILS_FROM`) or ``forbidden``."""
    if _matches(module, ALLOWED_IN_TESTS if in_test else ALLOWED):
        return "allowed"
    if _matches(module, DEPRECATED) and not _matches(module, FORBIDDEN):
        return "deprecated"
    return "forbidden"


def allowed(module: str, in_test: bool = False) -> bool:
    """True when plugin code may import the suite module *module* with no warning (:func:`classify`)."""
    return classify(module, in_test) == "allowed"


def is_test_file(path: Path) -> bool:
    """A plugin's test file: under a ``tests`` (or ``test``) folder, or ``test_*.py``, ``*_test.py``,
    ``conftest.py``."""
    p = Path(path)
    return bool({"tests", "test"} & set(p.parts[:-1])) or p.name.startswith("test_") \
        or p.name.endswith("_test.py") or p.name == "conftest.py"


def plugin_package(tech: Technique) -> str | None:
    """The top-level package that defines *tech*'s evaluate functions, or None when they live in a
    single module (a test file, a notebook): only a package is a plugin."""
    top = tech.package
    if top and top not in sys.modules:
        try:
            importlib.import_module(top)
        except Exception:  # noqa: BLE001 - an unimportable package is reported by the kit's own checks
            return None
    mod = sys.modules.get(top) if top else None
    return top if mod is not None and getattr(mod, "__path__", None) else None


def _package_files(top: str) -> list[tuple[Path, Path]]:
    """(file, its path inside the package) of every module of the package *top*."""
    mod = sys.modules[top]
    return sorted((f, f.relative_to(root)) for root in map(Path, mod.__path__) for f in root.rglob("*.py"))


def _suite_imports(tech: Technique, verdict: Verdict) -> list[str]:
    """``file:line: imports MODULE`` for each suite import of *tech*'s package judged *verdict*."""
    top = plugin_package(tech)
    if top is None or top == "suite":  # a single module or the core itself: not a plugin package
        return []
    out = []
    for f, rel in _package_files(top):
        try:
            found = imports_of(f)
        except (OSError, SyntaxError, UnicodeDecodeError) as exc:
            if verdict == "forbidden":
                out.append(f"{f}: cannot be read: {exc}")
            continue
        in_test = is_test_file(rel)
        for line, modname in found:
            if modname.split(".")[0] == "suite" and classify(modname, in_test) == verdict:
                out.append(f"{f.name}:{line}: imports {modname}")
    return out


def import_problems(tech: Technique) -> list[str]:
    """One line per import, in the package that defines *tech*'s evaluate functions, of a suite
    module plugin code may never use (``file:line: imports suite.runner.case (plugin code may
    import only suite.api)``)."""
    return [f"{line} (plugin code may import only {', '.join(ALLOWED)})"
            for line in _suite_imports(tech, "forbidden")]


def import_deprecations(tech: Technique) -> list[str]:
    """One line per import of a deprecated 0.2 public module (:data:`DEPRECATED`) in *tech*'s
    package: ``file:line: imports suite.perf``."""
    return _suite_imports(tech, "deprecated")
