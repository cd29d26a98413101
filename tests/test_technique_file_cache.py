"""technique.toml files go through the parsed-file cache (suite.hardware.parsed_cache), keyed by the
SHA-256 of their text: a later command parses none of them and reads the same tables; an edited
file is parsed again; a table handed out is the caller's own."""

from __future__ import annotations

import tomllib

import pytest

import suite.declaration.loader as L

POSEIDON = "suite_poseidon.technique"  # the declaring module (its property checks are looked up there)


@pytest.fixture
def parses(monkeypatch, tmp_path):
    pytest.importorskip(POSEIDON)
    monkeypatch.setenv("SUITE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(L, "_PARSED", [])  # a new process: its own cache object
    seen: list[str] = []
    real = tomllib.loads

    def loads(text: str, **kw):
        seen.append(text[:40])
        return real(text, **kw)

    monkeypatch.setattr(tomllib, "loads", loads)
    return seen


def test_a_later_command_parses_no_technique_file(parses, monkeypatch):
    first = L.read_technique_file(POSEIDON)
    assert len(parses) == 1
    L.save_parsed()
    monkeypatch.setattr(L, "_PARSED", [])  # the next command
    again = L.read_technique_file(POSEIDON)
    assert len(parses) == 1 and again == first
    again["variants"].clear()  # the caller's own table: the cache's is untouched
    assert L.read_technique_file(POSEIDON) == first and len(parses) == 1


def test_an_edited_file_is_parsed_again(parses, monkeypatch):
    text = L.read_data(POSEIDON, "technique.toml")
    L.read_technique_file(POSEIDON)
    L.save_parsed()
    monkeypatch.setattr(L, "_PARSED", [])
    edited = str(text).replace('title = "', 'title = "Edited: ', 1)
    monkeypatch.setattr(L, "read_data", lambda package, name: edited)
    got = L.read_technique_file(POSEIDON)
    assert got["title"].startswith("Edited: ") and len(parses) == 2
