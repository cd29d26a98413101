"""Issue 42: a third-party plugin whose claims declare no null is not "reproduced".

Before, its five claims (each inside its band) counted 5/5 reproduced with exit 0 while the kit
failed the same claims; now each is "reproduced (no null)", counted apart, and ``--strict``
exits 2.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from suite.cli import main


PROFILES = Path(__file__).parent / "profiles"  # tests/runner/conftest.py's folder, by path: `conftest`
# by module name is whichever conftest another test folder imported first


@pytest.fixture
def nonull_registry(monkeypatch):
    import nonullplugin
    from suite.registry import Registry

    monkeypatch.setenv("SUITE_PROFILES", str(PROFILES))
    reg = Registry(entry_points_=[], modules=[("nonull", nonullplugin)])
    monkeypatch.setattr("suite.context.default_registry", lambda strict=None: reg)
    return reg


def _invoke(*args, store):
    return CliRunner().invoke(main, [*args, "--store", str(store)], catch_exceptions=False)


def test_claims_without_nulls_are_counted_apart_and_strict_exits_2(nonull_registry, tmp_path):
    st = tmp_path / "s.sqlite"
    r = _invoke("reproduce", "nonull", "--format", "json", store=st)
    assert r.exit_code == 0  # a verdict is information
    d = json.loads(r.stdout)
    assert [c["verdict"] for c in d["claims"]] == ["reproduced (no null)"] * 5
    assert [c["ours"] for c in d["claims"]] == [2.0, 10.0, 20.0, 10.0, 2.0]  # y = x n factor Gbit/s, by hand
    assert d["counts"]["all"]["reproduced"] == 0 and d["counts"]["all"]["reproduced (no null)"] == 5
    r = _invoke("reproduce", "nonull", "--strict", "-q", store=st)
    assert r.exit_code == 2
    assert "5 claim(s) reproduced (no null) and 0 claim defect(s), not counted as reproduced (--strict" in r.output


def test_the_kit_fails_the_same_claims(nonull_registry):
    from suite.testing import run_checks

    rep = run_checks(nonull_registry.technique("nonull"), properties=False, isolate=False)
    assert rep.outcomes["claims-nulls"].startswith("failed")
    assert "claim 'gain-2x' declares neither `nulls`" in rep.outcomes["claims-nulls"]
