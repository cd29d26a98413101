"""Fixtures for the runner tests: fake techniques, fixture profiles, a temporary store."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROFILES = HERE / "profiles"
sys.path.insert(0, str(HERE))

import fakeplugin  # noqa: E402


@pytest.fixture
def fake_registry(monkeypatch):
    """A registry holding only the fake techniques: what every context built during the test loads
    (``suite.context.default_registry`` is the factory :meth:`Context.build` calls)."""
    from suite.registry import Registry

    monkeypatch.setenv("SUITE_PROFILES", str(PROFILES))
    reg = Registry(entry_points_=[], modules=[("fake", fakeplugin)])
    monkeypatch.setattr("suite.context.default_registry", lambda strict=None: reg)
    yield reg


@pytest.fixture
def store(tmp_path):
    from suite.results import Store

    s = Store(tmp_path / "suite.sqlite")
    yield s
    s.close()
