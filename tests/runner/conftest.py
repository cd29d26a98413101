"""Fixtures for the runner tests: fake techniques, fixture profiles, a temporary store."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
PROFILES = HERE / "profiles"
sys.path.insert(0, str(HERE))

import fakeplugin  # noqa: E402


@pytest.fixture(scope="session")
def _fake_plugin_registry():
    """The registry of the fake plugin, built once: it holds the plugin's two techniques and
    nothing a test changes (building one checks every shared module for patches, ~10-20 ms: ~150
    tests use it)."""
    from suite.registry import Registry

    return Registry(entry_points_=[], modules=[("fake", fakeplugin)])


@pytest.fixture
def fake_registry(monkeypatch, _fake_plugin_registry):
    """A registry holding only the fake techniques: what every context built during the test loads
    (``suite.context.default_registry`` is the factory :meth:`Context.build` calls)."""
    reg = _fake_plugin_registry
    monkeypatch.setenv("SUITE_PROFILES", str(PROFILES))
    monkeypatch.setattr("suite.context.default_registry", lambda strict=None: reg)
    yield reg


@pytest.fixture
def store(tmp_path):
    from suite.results import Store

    s = Store(tmp_path / "suite.sqlite")
    yield s
    s.close()
