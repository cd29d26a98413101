"""Fixtures for the profile-library tests."""

from __future__ import annotations

import os

import pytest

import suite.hardware.profile_library as PL


@pytest.fixture
def counted(monkeypatch, tmp_path):
    """The base names of the profile files the library parses (read_toml), in order, with an
    empty cache folder of the test's own."""
    monkeypatch.setenv("SUITE_CACHE_DIR", str(tmp_path / "cache"))
    parsed: list[str] = []
    real = PL.read_toml

    def read(path):
        parsed.append(os.path.basename(str(path)))
        return real(path)

    monkeypatch.setattr(PL, "read_toml", read)
    return parsed
