"""`validate_paths` takes the library folders' figures keys from a per-process memo
(suite.hardware.file_check._library_keys): the warnings must be the ones resolving every
profile gives, and an edited folder file must be seen on the next call."""

from __future__ import annotations

from pathlib import Path

from suite.hardware import file_check, profile_dirs
from suite.hardware.file_check import identical_profiles, validate_paths
from suite.hardware.profile_library import ProfileLibrary
from suite.resources import builtin_dir

SHIPPED = builtin_dir("hardware_profiles") / "devices" / "amd-epyc-7763.toml"


def _copy(src: Path, dst: Path, name: str, memory: str = "4 TB") -> Path:
    text = src.read_text(encoding="utf-8").replace('name = "amd-epyc-7763"', f'name = "{name}"', 1)
    dst.write_text(text.replace('memory = "4 TB"', f'memory = "{memory}"', 1), encoding="utf-8")
    return dst


def _identical(report: dict, a: str, b: str) -> bool:
    return any(f"profiles {a!r} and {b!r}" in w or f"profiles {b!r} and {a!r}" in w for w in report["warnings"])


def test_memoised_keys_give_the_warnings_of_a_full_resolution_and_see_an_edit(tmp_path, monkeypatch):
    monkeypatch.setattr(file_check, "_KEYS", {})
    folder = tmp_path / "lib"
    folder.mkdir()
    given = _copy(SHIPPED, tmp_path / "given.toml", "given-copy")
    _copy(SHIPPED, folder / "lib-copy.toml", "lib-copy")
    first = validate_paths([given], extra=[folder])
    assert [o["name"] for o in first["ok"]] == ["given-copy"] and not first["errors"]
    # the given copy is identical to the shipped profile and to the folder's copy
    assert _identical(first, "given-copy", "amd-epyc-7763") and _identical(first, "given-copy", "lib-copy")
    dirs = [Path(d) for d in profile_dirs((folder,))]
    lib = ProfileLibrary([*dirs, given], collect_errors=True)
    full = identical_profiles(lib, ["given-copy"])  # every profile resolved
    assert full == identical_profiles(lib, ["given-copy"], file_check._library_keys(dirs, None))
    assert ("amd-epyc-7763", "given-copy") in full and ("given-copy", "lib-copy") in full
    assert validate_paths([given], extra=[folder]) == first  # the memo's answer on a second call
    _copy(SHIPPED, folder / "lib-copy.toml", "lib-copy", memory="2 TB")  # the folder's copy edited
    edited = validate_paths([given], extra=[folder])
    assert _identical(edited, "given-copy", "amd-epyc-7763") and not _identical(edited, "given-copy", "lib-copy")


def test_nothing_resolved_when_no_given_file_is_valid(tmp_path, monkeypatch):
    monkeypatch.setattr(file_check, "_KEYS", {})
    bad = tmp_path / "bad.toml"
    bad.write_text("[profile]\nname = 'bad'\n", encoding="utf-8")
    report = validate_paths([bad])
    assert report["errors"] and not report["ok"] and file_check._KEYS == {}
