"""A library that collects errors (every command's) parses a profile file when one of its profiles is
first asked for, finding which file holds which name by a line scan that answers only when certain
(suite.hardware.name_scan): the same profiles as a library that parses everything, and a broken
file is still named, once, when it is found."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import suite.hardware.profile_library as PL
from suite.errors import ProfileError
from suite.hardware import profile_dirs
from suite.hardware.name_scan import scan_profile_name

GPU = ('[profile]\nname = "{name}"\nkind = "device"\nsource = "test"\n[device]\ntype = "gpu"\nname = "g"\n'
       'memory = "16 GiB"\nmemory_bandwidth = "900 GB/s"\npeak_flops = {{ fp32 = "10 TFLOP/s" }}\n')


def test_a_cluster_parses_its_own_files_only(counted):
    lib = PL.ProfileLibrary(profile_dirs(), collect_errors=True)
    assert counted == []  # every shipped file's name is found by the scan
    prof = lib.get("titanx-cluster-10gbe")
    assert prof.device is not None and prof.nodes == 32
    # the cluster's file, and the node and device files it names (extends / node.device)
    assert 1 < len(counted) <= 4 and len(set(counted)) == len(counted)


def test_the_same_profiles_as_a_library_that_parses_every_file(counted):
    lazy = PL.ProfileLibrary(profile_dirs(), collect_errors=True)
    eager = PL.ProfileLibrary(profile_dirs())
    names = eager.names()
    assert len(names) >= 70
    for name in reversed(names):  # (another order than the files': references parsed on the way)
        assert name in lazy
        assert lazy.get(name).content_hash() == eager.get(name).content_hash(), name
        assert lazy.raw(name) == eager.raw(name)
    assert lazy.names() == names


def test_a_broken_file_the_scan_names_is_its_own_error_when_asked_for(counted, tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    (d / "good.toml").write_text(GPU.format(name="lz-good"))
    (d / "bad.toml").write_text(GPU.format(name="lz-bad") + "memory = 1\n")  # a key twice: not TOML
    said: list[str] = []
    lib = PL.ProfileLibrary([d], collect_errors=True, warn=said.append)
    assert said == [] and "lz-bad" in lib
    with pytest.raises(ProfileError, match=r"bad\.toml: line 11, column 11: expected valid TOML"):
        lib.get("lz-bad")
    assert len(said) == 1 and said[0].startswith(f"{d / 'bad.toml'}: line 11")
    assert "lz-bad" not in lib and lib.names() == ["lz-good"]
    assert list(lib.file_errors) == [str(d / "bad.toml")] and len(said) == 1  # said once


def test_a_broken_file_does_not_hide_a_good_profile_of_the_same_name(counted, tmp_path):
    """A broken file scanned first must not take the name from a good file that declares it too:
    as when every file was parsed, the broken one is skipped and the good one serves the name."""
    d = tmp_path / "p"
    d.mkdir()
    (d / "a.toml").write_text(GPU.format(name="lz-dup") + "memory = 1\n")  # a key twice: not TOML
    (d / "b.toml").write_text(GPU.format(name="lz-dup"))
    said: list[str] = []
    lib = PL.ProfileLibrary([d], collect_errors=True, warn=said.append)
    assert lib.get("lz-dup").name == "lz-dup"
    assert lib.names() == ["lz-dup"] and list(lib.file_errors) == [str(d / "a.toml")]


def test_a_file_that_names_another_profile_since_the_scan_is_a_profile_error(counted, tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    (d / "a.toml").write_text(GPU.format(name="lz-old"))
    lib = PL.ProfileLibrary([d], collect_errors=True)
    (d / "a.toml").write_text(GPU.format(name="lz-new"))
    with pytest.raises(ProfileError, match=r"a\.toml: field profile\.name: expected 'lz-old'"):
        lib.get("lz-old")


def test_a_library_that_raises_still_parses_every_file_at_once(counted, tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    (d / "bad.toml").write_text(GPU.format(name="lz-bad") + "memory = 1\n")
    with pytest.raises(ProfileError, match="expected valid TOML"):
        PL.ProfileLibrary([d])


@pytest.mark.parametrize("text, name", [
    ('[profile]\nname = "a-1"\nkind = "device"\n[device]\nname = "dev"\n', "a-1"),
    ("# c\nnodes = 4\n  [ profile ]  # c\n  name='b.2+x' # c\n[profile.sources]\nname = \"x\"\n", "b.2+x"),
    ('[device]\nname = "dev"\n[profile]\nkind = "node"\nname = "c"\r\n', "c"),
    ('[profile]\nkind = "device"\n', None),  # no name: the parser says so
    ('profile.name = "a"\n', None),  # a dotted key at the top
    ('profile = { name = "a" }\n', None),  # an inline table
    ('[profile]\nname = "a"\n[profile]\nname = "b"\n', None),  # two [profile] tables: not TOML
    ('[[profile]]\nname = "a"\n', None),
    ('["profile"]\nname = "a"\n', None),  # quoted keys
    ('[profile]\n"name" = "a"\n', None),
    ('[profile]\nname.first = "a"\n', None),
    ('[profile]\nname = "a"\nname = "b"\n', None),
    ('[profile]\nname = "a b"\n', None),  # not a profile name
    ('[profile]\ndescription = """\n[profile]\nname = "x"\n"""\nname = "a"\n', None),  # multi-line string
    ('[profile]\nname = "a\\u0062"\n', None),  # an escape
])
def test_the_scan_answers_only_when_certain(text, name):
    assert scan_profile_name(text) == name
    try:
        parsed = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return
    if name is not None:
        assert parsed["profile"]["name"] == name


def test_the_scan_agrees_with_the_parser_on_every_shipped_file():
    root = Path(__file__).resolve().parents[2]
    files = sorted(root.glob("hardware_profiles/**/*.toml")) + sorted(root.glob("plugins/*/**/*.toml"))
    assert len(files) > 90
    found = 0
    for f in files:
        text = f.read_text(encoding="utf-8")
        got = scan_profile_name(text)
        if got is not None:
            found += 1
            assert tomllib.loads(text)["profile"]["name"] == got, f
    assert found >= 79
