"""The layering rules, checked on the source (AST, every import including function-level ones):

* the core (``suite/``) imports no plugin package (``suite_*``): plugins enter only through the
  ``suite.plugins`` entry points (suite/registry.py);
* a plugin imports no other plugin, and from the suite only the plugin API, ``suite.api``
  (:data:`ALLOWED`; its tests ``suite.testing`` too): the 0.2 public modules (:data:`DEPRECATED`)
  are deprecated for third-party plugins and not used by the built-in ones;
* docs/plugin-authors.md lists exactly the same modules.
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "suite"
PLUGINS = ROOT / "plugins"

# the rules are the conformance kit's own (suite.testing.imports), so a third-party plugin's CI
# checks exactly what this test checks for the built-in plugins
from suite.testing.imports import ALLOWED, ALLOWED_IN_TESTS, DEPRECATED, FORBIDDEN  # noqa: E402,F401
from suite.testing.imports import allowed as _allowed  # noqa: E402
from suite.testing.imports import classify as _classify  # noqa: E402
from suite.testing.imports import imports_of as _imports_of  # noqa: E402
from suite.testing.imports import is_test_file as _is_test_file  # noqa: E402



# The rules below read each source file of the core and the plugins several times (a rule and its
# "known ... are still real" twin, the import rules and the walks below): the kit's imports_of keeps
# its answers per file text, and each file this module walks is parsed and walked once, memoised on
# its text, so a file that changes (the checker's own tests rewrite a temporary file) is read again.
@functools.lru_cache(maxsize=None)
def _nodes_memo(text: str) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(ast.parse(text)))


def _nodes(path: Path) -> tuple[ast.AST, ...]:
    """Every node of *path*'s syntax tree (``ast.walk`` order, the module first), memoised on the file's text."""
    return _nodes_memo(path.read_text(encoding="utf-8"))


def _imports(path: Path) -> list[tuple[int, str]]:
    """The kit's ``imports_of(path)`` (the rules a third-party plugin's CI checks); a core file, which
    the import graph below walks anyway, is parsed once for both (only walked files are kept: a
    parsed tree kept for every file made each garbage collection slower than a second parse)."""
    path = Path(path)
    return _imports_of(path, tree=_nodes(path)[0]) if CORE in path.parents else _imports_of(path)


@pytest.fixture(scope="module", autouse=True)
def _collector_off_while_parsing():
    """The cyclic garbage collector off for this module's tests, and the parsed trees dropped after
    them. The rules parse the core's and the plugins' ~300 files into ~10^6 AST nodes, and each
    youngest-generation overflow led to collections whose oldest-generation passes walk the test
    process's whole heap (unfrozen again by every run of the runner): in a full session more than
    half of the parse time. AST nodes hold no reference cycles, so reference counting frees them
    as before (tests/conftest.py's reason for collection); the memoised trees of the core files are
    dropped at the end so later tests' collections do not walk them."""
    import gc

    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        _nodes_memo.cache_clear()
        if was_on:
            gc.enable()


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
            in_test = _is_test_file(f.relative_to(pkg))
            for _line, mod in _imports(f):
                top = mod.split(".")[0]
                if top.startswith("suite_") and top != pkg.name:
                    found.setdefault(rel, set()).add(mod)  # another plugin
                elif top == "suite" and not _allowed(mod, in_test):
                    found.setdefault(rel, set()).add(mod)
    return found


def test_plugins_import_only_public_suite_modules_and_no_other_plugin():
    found = _plugin_violations()
    new = {f: sorted(m - KNOWN_VIOLATIONS.get(f, set())) for f, m in found.items()}
    new = {f: m for f, m in new.items() if m}
    assert not new, ("plugins may import only " + ", ".join(ALLOWED) + " from the suite (their tests "
                     + ", ".join(ALLOWED_IN_TESTS) + "), and no other plugin; "
                     "found:\n" + "\n".join(f"{f}: {', '.join(m)}" for f, m in sorted(new.items())))


def test_known_violations_are_still_real():
    """A fixed violation must leave KNOWN_VIOLATIONS (so the list can only shrink)."""
    found = _plugin_violations()
    stale = {f: sorted(m - found.get(f, set())) for f, m in KNOWN_VIOLATIONS.items()}
    assert not {f: m for f, m in stale.items() if m}, f"remove from KNOWN_VIOLATIONS: {stale}"


def test_forbidden_modules_are_not_allowed():
    for mod in FORBIDDEN:
        assert not _allowed(mod) and not _allowed(mod + ".x"), mod


@pytest.mark.parametrize("module, in_test, verdict", [
    ("suite.api", False, "allowed"), ("suite.testing", True, "allowed"), ("suite.testing.strategies", True, "allowed"),
    ("suite.testing", False, "forbidden"), ("suite", False, "deprecated"), ("suite.perf", False, "deprecated"),
    ("suite.perf.collective", False, "deprecated"), ("suite.workloads.cnn", True, "deprecated"),
    ("suite.hardware.units", False, "deprecated"), ("suite.hardware.calibrate", False, "forbidden"),
    ("suite.runner.case", True, "forbidden"), ("suite.results.store", False, "forbidden"), ("suite.cli.run", False, "forbidden"),
    ("suite.registry", False, "forbidden"), ("suite.context", False, "forbidden"), ("suite.hookspecs", False, "forbidden"),
])
def test_import_rule(module, in_test, verdict):
    assert _classify(module, in_test) == verdict
    assert _allowed(module, in_test) is (verdict == "allowed")


@pytest.mark.parametrize("path, is_test", [("tests/test_x.py", True), ("test_x.py", True), ("conftest.py", True),
                                           ("sub/x_test.py", True), ("model.py", False), ("testbed.py", False)])
def test_what_counts_as_a_plugins_test_file(path, is_test):
    assert _is_test_file(Path(path)) is is_test


def test_no_plugin_model_imports_its_technique_declaration():
    """A cost model does not depend on the claims it is judged by: a constant both need lives in a
    module both import (``constants.py``), not in ``technique.py`` (dflop's model read the claim's
    8 nodes from its technique module)."""
    bad = [f"{f.relative_to(ROOT)}:{line}: imports {mod}" for pkg in _plugin_packages()
           for f in sorted(pkg.glob("model*.py")) for line, mod in _imports(f) if mod == f"{pkg.name}.technique"]
    assert not bad, "a plugin's model imports its technique module:\n" + "\n".join(bad)


def test_every_plugin_uses_only_the_plugin_api():
    """The built-in plugins and the example plugin import from the suite only suite.api (and
    suite.testing in tests): none uses a deprecated 0.2 module, so none warns in the kit."""
    roots = _plugin_packages() + sorted(p for p in (ROOT / "examples").glob("*/suite_*") if p.is_dir())
    old = [f"{f.relative_to(ROOT)}:{line}: imports {mod}" for pkg in roots for f in sorted(pkg.rglob("*.py"))
           for line, mod in _imports(f)
           if mod.split(".")[0] == "suite" and _classify(mod, _is_test_file(f.relative_to(pkg))) != "allowed"]
    assert not old, "plugins import from the suite only suite.api:\n" + "\n".join(old)


def test_the_checker_sees_function_level_and_dynamic_imports(tmp_path):
    f = tmp_path / "m.py"
    f.write_text("import os\n\ndef f():\n    from suite.runner.case import resolve_case\n"
                 "    import importlib\n    importlib.import_module('suite_poseidon')\n"
                 "from suite import registry\n")
    mods = {m for _l, m in _imports(f)}
    assert {"suite.runner.case", "suite_poseidon", "suite.registry"} <= mods and "suite" not in mods
    # the kit parses the file itself when given no tree, with the same answer; a rewritten file is
    # read again (its answers are kept per text)
    assert _imports_of(f) == _imports(f)
    f.write_text("import os\nimport suite_other\n")
    assert _imports_of(f) == _imports(f) == [(1, "os"), (2, "suite_other")]


def test_from_suite_import_a_module_is_that_module():
    """``from suite import api`` imports suite.api (allowed), not the package's 0.2 names; a
    contract name imported from the package (``from suite import Result``) is the package."""
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        f = Path(d) / "m.py"
        f.write_text("from suite import api\nfrom suite import perf, Result\n")
        assert _imports(f) == [(1, "suite.api"), (2, "suite"), (2, "suite.perf")]


def test_plugin_authors_guide_lists_the_same_modules():
    text = (ROOT / "docs" / "plugin-authors.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- allowed-imports -->(.*?)<!-- /allowed-imports -->", text, re.S)
    assert m, "docs/plugin-authors.md: the allowed-imports list (between <!-- allowed-imports --> markers) is missing"
    listed = set(re.findall(r"^- `(suite[\w.*]*)`", m.group(1), re.M))
    assert listed == set(ALLOWED) | set(ALLOWED_IN_TESTS)
    d = re.search(r"<!-- deprecated-imports -->(.*?)<!-- /deprecated-imports -->", text, re.S)
    assert d and set(re.findall(r"`(suite[\w.*]*)`", d.group(1))) == set(DEPRECATED)
    f = re.search(r"<!-- forbidden-imports -->(.*?)<!-- /forbidden-imports -->", text, re.S)
    assert f and set(re.findall(r"`(suite\.\w+)`", f.group(1))) == set(FORBIDDEN)


# ----------------------------------------------------------------------------- the core's own layering

#: the layers below the runner: data and formulas, which never reach back up
LOW_LAYERS = ("hardware", "workloads", "perf")
UPPER = ("suite.registry", "suite.context", "suite.results", "suite.runner", "suite.cli", "suite.report")


def _core_imports(sub: str) -> list[tuple[str, int, str]]:
    return [(str(f.relative_to(ROOT)), line, mod) for f in sorted((CORE / sub).rglob("*.py"))
            for line, mod in _imports(f)]


@pytest.mark.parametrize("layer", LOW_LAYERS)
def test_low_layers_never_import_the_registry_context_results_or_runner(layer):
    bad = [f"{f}:{line}: imports {mod}" for f, line, mod in _core_imports(layer)
           if any(mod == u or mod.startswith(u + ".") for u in UPPER)]
    assert not bad, f"suite/{layer} is below the runner: it may not import {', '.join(UPPER)}:\n" + "\n".join(bad)


def test_results_never_import_the_context():
    """The store and its readers take what they need (a context, a profile lookup) from the caller."""
    bad = [f"{f}:{line}: imports {mod}" for f, line, mod in _core_imports("results")
           if mod == "suite.context" or mod.startswith(("suite.context.", "suite.registry"))]
    assert not bad, "suite/results may not import the context or the registry:\n" + "\n".join(bad)


#: the global lookups deprecated in 0.2.0 (removed in 0.4.0): the context is the only lookup
GLOBAL_LOOKUPS = {"suite.hardware": {"get_profile", "library"}, "suite.workloads": {"get_workload"}}

#: Plugin files still calling a global lookup, each with the reason; none of them is evaluated by the
#: runner (scripts run by hand, or a claim's null computed when the claims are listed). The list only
#: shrinks (the test below fails once one is fixed).
KNOWN_GLOBAL_LOOKUPS: dict[str, str] = {}


def _global_lookups(path: Path) -> list[str]:
    """``line: name`` of every deprecated global lookup *path* imports (any import of one counts)."""
    import ast

    out: list[str] = []
    if not any(name in path.read_text(encoding="utf-8") for name in ("get_profile", "library", "get_workload")):
        return out  # each hit below names one of these in the source text: nothing to parse
    for node in _nodes(path):
        if isinstance(node, ast.ImportFrom) and node.module in GLOBAL_LOOKUPS:
            out += [f"{node.lineno}: {node.module}.{a.name}" for a in node.names if a.name in GLOBAL_LOOKUPS[node.module]]
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in ("hardware", "W") \
                and node.attr in {"get_profile", "library", "get_workload"}:
            out.append(f"{node.lineno}: {node.value.id}.{node.attr}")
    return out


def _plugin_lookups() -> dict[str, list[str]]:
    found = {}
    for pkg in _plugin_packages():
        for f in sorted(pkg.rglob("*.py")):
            hits = _global_lookups(f)
            if hits:
                found[str(f.relative_to(ROOT))] = hits
    return found


def test_no_plugin_calls_a_global_lookup():
    """A model gets every input through its scenario (``Param(..., ref=...)``, ``Technique(uses=...)``):
    a profile looked up by name is in no case key, and misses the plugins' profiles."""
    new = {f: h for f, h in _plugin_lookups().items() if f not in KNOWN_GLOBAL_LOOKUPS}
    assert not new, "plugins may not call a global lookup (get_profile, library, get_workload):\n" + "\n".join(
        f"{f}: {', '.join(h)}" for f, h in sorted(new.items()))


def test_known_global_lookups_are_still_real():
    stale = sorted(set(KNOWN_GLOBAL_LOOKUPS) - set(_plugin_lookups()))
    assert not stale, f"remove from KNOWN_GLOBAL_LOOKUPS: {stale}"


def test_no_core_module_below_the_cli_uses_a_global_lookup():
    """Below the CLI the context is passed down: no global lookup, no context built on the quiet (the
    conformance kit and the plugin scaffold are user code: they build theirs)."""
    allowed = {"suite/hardware/__init__.py", "suite/workloads/__init__.py", "suite/context.py",
               "suite/testing/resolve.py", "suite/scaffold.py"}
    bad = []
    for f in sorted(CORE.rglob("*.py")):
        rel = str(f.relative_to(ROOT))
        if rel.startswith("suite/cli/") or rel in allowed:
            continue
        hits = _global_lookups(f)
        text = f.read_text(encoding="utf-8")
        hits += [f"Context.build() at offset {m.start()}" for m in re.finditer(r"Context\.build\(", text)
                 if not text[max(0, m.start() - 200):m.start()].rstrip().endswith(("``", ":meth:`", "context="))
                 and '"' not in text[text.rfind("\n", 0, m.start()):m.start()]]
        if hits:
            bad.append(f"{rel}: {', '.join(hits)}")
    assert not bad, "below the CLI, the context is passed down (never looked up globally or built quietly):\n" + \
        "\n".join(bad)


#: plugin packages whose asserts are being rewritten by their owner (the list only shrinks)
KNOWN_BARE_ASSERTS: set[str] = set()


def _bare_asserts() -> dict[str, list[int]]:
    import ast

    found = {}
    for pkg in _plugin_packages():
        for f in sorted(pkg.rglob("*.py")):
            if "tests" in f.relative_to(pkg).parts:
                continue
            # an assert statement needs the keyword in the text: a file without it is not parsed
            lines = [n.lineno for n in _nodes(f) if isinstance(n, ast.Assert)] \
                if "assert" in f.read_text(encoding="utf-8") else []
            if lines:
                found[str(f.relative_to(ROOT))] = lines
    return found


def test_plugin_code_has_no_bare_assert():
    """A property check (or any model code) that checks with ``assert`` checks nothing under
    ``python -O``: it raises AssertionError itself (``if not ...: raise AssertionError(...)``)."""
    new = {f: n for f, n in _bare_asserts().items() if f.split("/")[1] not in KNOWN_BARE_ASSERTS}
    assert not new, "bare assert in plugin code (stripped by python -O):\n" + "\n".join(
        f"{f}: lines {n}" for f, n in sorted(new.items()))


def test_known_bare_asserts_are_still_real():
    have = {f.split("/")[1] for f in _bare_asserts()}
    assert not KNOWN_BARE_ASSERTS - have, f"remove from KNOWN_BARE_ASSERTS: {sorted(KNOWN_BARE_ASSERTS - have)}"


# ----------------------------------------------------------------------------- the core's layers and circles

#: The core's layers, lowest first (docs/architecture.md, "Layers", lists the same): a module imports
#: only from its own layer or a lower one, function-level imports included. The longest matching
#: prefix decides a module's layer.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("leaf", ("suite._version", "suite._lazy", "suite.errors", "suite.outcome", "suite.frozen", "suite.deprecation",
              "suite.limits", "suite.cache", "suite.resources", "suite.tamper", "suite.tamper_attrs", "suite.tamper_fields", "suite.tamper_process", "suite.collector",
              "suite.distributions", "suite.textsafe")),
    ("data", ("suite.hardware", "suite.workloads")),
    ("contract", ("suite.declaration", "suite.technique", "suite.hookspecs")),
    ("models", ("suite.perf", "suite.collectives")),
    ("store", ("suite.results",)),
    ("plugins", ("suite.registry", "suite.context")),
    ("run", ("suite.runner", "suite.execution", "suite.testing")),
    ("use", ("suite.report", "suite.validate", "suite.model_validation", "suite.validate_collectives",
             "suite.scaffold")),
    ("cli", ("suite.cli", "suite.__main__")),
    ("api", ("suite.api",)),
)

#: Upward imports still in the tree, each with its reason (the list only shrinks): path -> module.
KNOWN_UPWARD: dict[str, str] = {
    # the renderers' old import path (suite.runner.reproduce.render_markdown, ...), a deprecated
    # re-export by module __getattr__ of what moved to suite.report.scoreboard
    "suite/runner/reproduce.py": "suite.report.scoreboard",
}

#: Import circles still in the core, by owner (the list only shrinks).
KNOWN_CYCLES: list[frozenset[str]] = [
]


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for i, (_name, prefixes) in enumerate(LAYERS):
        for p in prefixes:
            if (module == p or module.startswith(p + ".")) and (best is None or len(p) > best[1]):
                best = (i, len(p))
    return best[0] if best else None


def _core_modules() -> dict[str, Path]:
    return {_module_name(f): f for f in sorted(CORE.rglob("*.py"))}


def test_every_core_module_has_a_layer():
    missing = sorted(m for m in _core_modules() if m != "suite" and _layer(m) is None)
    assert not missing, "add these modules to a layer (tests/test_architecture.py LAYERS, docs/architecture.md): " \
        + ", ".join(missing)


def _upward() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for mod, f in _core_modules().items():
        here = _layer(mod)
        for _line, target in _imports(f):
            there = _layer(target) if target.split(".")[0] == "suite" else None
            if here is not None and there is not None and there > here:
                found.setdefault(str(f.relative_to(ROOT)), set()).add(target)
    return found


def test_the_core_imports_only_downward():
    """A module imports from its own layer or a lower one: the store never reaches for the
    registry, the runner never for the report, nothing in the core for suite.api."""
    new = {f: sorted(m - {KNOWN_UPWARD.get(f)}) for f, m in _upward().items()}
    new = {f: m for f, m in new.items() if m}
    names = {i: n for i, (n, _p) in enumerate(LAYERS)}
    assert not new, "upward imports (layers, lowest first: " + " < ".join(names.values()) + "):\n" + "\n".join(
        f"{f} ({names[_layer(_module_name(ROOT / f))]}): {', '.join(f'{m} ({names[_layer(m)]})' for m in ms)}"
        for f, ms in sorted(new.items()))


def test_known_upward_imports_are_still_real():
    found = _upward()
    stale = sorted(f for f, m in KNOWN_UPWARD.items() if m not in found.get(f, set()))
    assert not stale, f"remove from KNOWN_UPWARD: {stale}"


def _graph() -> dict[str, set[str]]:
    """Module -> the core modules it imports (function-level imports, ``from pkg import module``
    and a package's ``__init__`` included), as house_metrics and ``farm-studio look`` count them."""
    mods = _core_modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for mod, f in mods.items():
        pkg = mod if f.name == "__init__.py" else mod.rpartition(".")[0]
        for node in _nodes(f):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = pkg.split(".")
                    base = ".".join(parts[:len(parts) - (node.level - 1)] + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            graph[mod] |= {t for t in targets if t in mods and t != mod}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[frozenset[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.append(frozenset(comp))
    return out


def test_the_cycle_finder_finds_a_circle_and_a_clean_tree():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset({"a", "b", "c"})]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_the_core_has_no_import_circle():
    """No two core modules import each other, directly or round a circle (function-level
    imports count: a circle is a circle whenever it closes)."""
    new = [sorted(c) for c in _cycles(_graph()) if c not in KNOWN_CYCLES]
    assert not new, "import circles in suite/:\n" + "\n".join(" -> ".join(c) for c in new)


def test_known_cycles_are_still_real():
    found = _cycles(_graph())
    stale = [sorted(c) for c in KNOWN_CYCLES if c not in found]
    assert not stale, f"remove from KNOWN_CYCLES: {stale}"


def test_the_architecture_page_lists_the_layers():
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    m = re.search(r"<!-- layers -->(.*?)<!-- /layers -->", text, re.S)
    assert m, "docs/architecture.md: the layer table (between <!-- layers --> markers) is missing"
    rows = re.findall(r"^\| `?(\w+)`? \| (.*?) \|", m.group(1), re.M)
    listed = [(name, tuple(re.findall(r"`(suite[\w.]*)`", mods))) for name, mods in rows if name != "layer"]
    assert listed == [(n, tuple(p)) for n, p in LAYERS], listed
