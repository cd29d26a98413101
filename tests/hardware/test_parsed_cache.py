"""The parsed profile files cached on disk (suite.hardware.parsed_cache): a warm library parses no
file and resolves every profile to the same content; an edit, or a file the cache cannot hold
exactly (a TOML date), is parsed."""

from __future__ import annotations

import suite.hardware.profile_library as PL
from suite.hardware import profile_dirs

GPU = ('[profile]\nname = "pc-gpu"\nkind = "device"\nsource = "test"\n[device]\ntype = "gpu"\nname = "g"\n'
       'memory = "{mem}"\nmemory_bandwidth = "900 GB/s"\npeak_flops = {{ fp32 = "10 TFLOP/s" }}\n')


def test_a_warm_library_parses_nothing_and_resolves_the_same_profiles(counted, tmp_path):
    dirs = profile_dirs()
    cold = PL.ProfileLibrary(dirs, collect_errors=True)
    size = len(cold)  # the whole library asked for: every file parsed (and the parses cached)
    assert len(counted) == size >= 70
    counted.clear()
    warm = PL.ProfileLibrary(dirs, collect_errors=True)
    assert warm.names() == cold.names() and counted == []
    for name in cold.names():
        a, b = cold.get(name), warm.get(name)
        assert a.content_hash() == b.content_hash() and a == b, name
        assert warm.raw(name) == cold.raw(name)
        assert list(warm.raw(name)) == list(cold.raw(name))  # table order too


def test_an_edit_is_parsed_again_and_a_date_is_never_cached(counted, tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    f = d / "gpu.toml"
    f.write_text(GPU.format(mem="16 GiB"))
    (d / "dated.toml").write_text(GPU.format(mem="8 GiB").replace("pc-gpu", "pc-dated")
                                  + "[profile.dates]\nchecked = 2024-05-01\n")
    assert PL.ProfileLibrary([d]).get("pc-gpu").device.memory == 16 * 2**30
    assert sorted(counted) == ["dated.toml", "gpu.toml"]
    counted.clear()
    lib = PL.ProfileLibrary([d])
    assert counted == ["dated.toml"]  # a date has no JSON form: parsed every time
    assert str(lib.raw("pc-dated")["profile"]["dates"]["checked"]) == "2024-05-01"
    counted.clear()
    f.write_text(GPU.format(mem="32 GiB"))
    assert PL.ProfileLibrary([d]).get("pc-gpu").device.memory == 32 * 2**30
    assert sorted(counted) == ["dated.toml", "gpu.toml"]


def test_a_damaged_cache_is_ignored(counted, tmp_path):
    d = tmp_path / "p"
    d.mkdir()
    (d / "gpu.toml").write_text(GPU.format(mem="16 GiB"))
    PL.ProfileLibrary([d])
    for doc in (tmp_path / "cache").glob("profile-toml-*.json"):
        doc.write_text('{"what": "profile-toml", "files": {"x": 1}')  # truncated
    counted.clear()
    assert PL.ProfileLibrary([d]).get("pc-gpu").device.memory == 16 * 2**30
    assert counted == ["gpu.toml"]
