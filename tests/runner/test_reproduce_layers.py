"""The layers of reproduction (issue 47): verdicts at the bottom, then the bootstrap, judging
and the judgement cache, then the orchestration; the report renders verdicts without importing
the orchestration, so no import circle joins suite.report and suite.runner.reproduce."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import suite

ROOT = Path(suite.__file__).resolve().parent


def _imports(path: Path) -> set[str]:
    """Every suite module *path* imports, at module level or in a function, except under
    ``if TYPE_CHECKING:`` (annotations only)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = {id(n) for node in ast.walk(tree) if isinstance(node, ast.If)
            and getattr(node.test, "id", None) == "TYPE_CHECKING" for n in ast.walk(node)}
    out: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            out |= {node.module} | {f"{node.module}.{a.name}" for a in node.names}
    return {m for m in out if m == "suite" or m.startswith("suite.")}


def _reaches(imported: set[str], prefix: str) -> list[str]:
    return sorted(m for m in imported if m == prefix or m.startswith(prefix + "."))


def test_verdicts_is_the_bottom_layer():
    imported = _imports(ROOT / "runner" / "verdicts.py")
    # suite.runner.checks (the unit rule metrics are stored by) imports only suite.errors itself
    assert imported <= {"suite.errors", "suite.errors.SuiteError", "suite.runner.checks",
                        "suite.runner.checks.nonnegative_unit"}, imported


@pytest.mark.parametrize("module", ["bootstrap", "judging", "judgement_cache"])
def test_the_judging_layer_runs_nothing_and_renders_nothing(module):
    imported = _imports(ROOT / "runner" / f"{module}.py")
    for banned in ("suite.runner.engine", "suite.runner.executors", "suite.runner.reproduce", "suite.results",
                   "suite.report", "suite.cli"):
        assert not _reaches(imported, banned), (module, banned)


def test_the_report_renders_without_the_orchestration():
    for path in sorted((ROOT / "report").glob("*.py")):
        assert not _reaches(_imports(path), "suite.runner.reproduce"), path.name
