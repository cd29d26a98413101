"""A plugin edited while a run goes on (an editable install, then an edit or a ``git stash``)
must not have its new code's numbers stored under the key of the code the run resolved
(tryout hostile10, finding 2): the worker imports the fidelity module after the sweep hashed it."""

from __future__ import annotations

import sys
import textwrap

import pytest

from suite import Paper, ScenarioSpec, Technique, Variant
from suite.runner.options import ExecOptions

MODEL = """\
from suite.api import Result

MARK = {mark}


def evaluate(scenario):
    return Result().add("t", 2.0 * MARK, "s", "lower")
"""


def _technique(pkg: str) -> Technique:
    return Technique(name="stale-demo", title="t", category="communication",
                     paper=Paper("P", year=2024, venue="tests"), variants=[Variant("b", "b", baseline=True)],
                     fidelities={"model": f"{pkg}.model:evaluate"}, needs_profile=False, needs_workload=False,
                     version="1.0")


@pytest.fixture
def package(tmp_path, monkeypatch):
    """(name, model file) of a plugin package on sys.path whose model is not imported yet."""
    import suite.runner.fingerprint as fp

    name = f"stale_demo_{tmp_path.name.replace('-', '_')}"
    (tmp_path / name).mkdir()
    (tmp_path / name / "__init__.py").write_text("")
    model = tmp_path / name / "model.py"
    model.write_text(MODEL.format(mark=1.0))
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(fp, "_FINGERPRINTS", {})
    yield name, model
    for mod in [m for m in sys.modules if m == name or m.startswith(name + ".")]:
        del sys.modules[mod]


def _outcomes(case, isolate: bool) -> list[dict]:
    from suite.runner.pool import LocalExecutor

    return list(LocalExecutor().map_cases([case], ExecOptions(jobs=1, isolate=isolate, timeout=None)))


@pytest.mark.parametrize("isolate", [True, False], ids=["worker", "in-process"])
def test_a_model_edited_after_its_cases_were_resolved_fails_them_and_stores_nothing_ok(package, isolate):
    from session_context import session_context
    from suite.runner.case import resolve_case

    name, model = package
    case = resolve_case(_technique(name), ScenarioSpec("b"), context=session_context())
    model.write_text(MODEL.format(mark=1000.0))  # edited before the fidelity module is imported
    [out] = _outcomes(case, isolate)
    assert out["status"] == "failed" and out["metrics"] is None
    assert out["error"] == (f"CodeChanged: {name}: its code changed since the run resolved its cases "
                            f"(key {case.key}): run again (on a cluster: every worker needs the files the run "
                            "was started from)")
    model.write_text(MODEL.format(mark=1.0))  # reverted: the code the key hashes again
    if not isolate:  # this process imported the edited model: a next run is a new process
        del sys.modules[f"{name}.model"]
    again = resolve_case(_technique(name), ScenarioSpec("b"), context=session_context())
    assert again.key == case.key
    [out] = _outcomes(again, isolate)
    assert out["status"] == "ok" and out["metrics"] == [["t", 2.0, "s", "lower"]]  # 2.0 * MARK 1.0


def test_a_run_over_unchanged_code_is_ok(package):
    from session_context import session_context
    from suite.runner.case import resolve_case

    name, _model = package
    case = resolve_case(_technique(name), ScenarioSpec("b"), context=session_context())
    [out] = _outcomes(case, True)
    assert out["status"] == "ok" and out["metrics"] == [["t", 2.0, "s", "lower"]]


def test_a_core_changed_since_the_cases_were_resolved_fails_them(package):
    """The key also hashes the core's source (environment_fingerprint): a case resolved against
    another core (here: a fingerprint no source has) fails the same way."""
    from dataclasses import replace

    from session_context import session_context
    from suite.runner.case import resolve_case

    name, _model = package
    case = replace(resolve_case(_technique(name), ScenarioSpec("b"), context=session_context()), env="0" * 16)
    [out] = _outcomes(case, False)
    assert out["status"] == "failed" and out["error"] == (
        f"CodeChanged: the suite's core (suite/, its libraries): its code changed since the run resolved its "
        f"cases (key {case.key}): run again (on a cluster: every worker needs the files the run was started from)")
