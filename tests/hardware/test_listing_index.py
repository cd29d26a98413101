"""`suite hardware list` reads a cached index of the library (issue 19: start-up under 0.3 s);
the index is keyed by every profile file, so an edit shows at once and a cached listing equals a
computed one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

PROFILE = textwrap.dedent("""
    [profile]
    name = "idx-gpu"
    kind = "device"
    source = "test"
    [device]
    type = "gpu"
    name = "IdxGPU"
    vendor = "testco"
    memory = "{mem}"
    memory_bandwidth = "1 TB/s"
    peak_flops = {{ fp32 = "10 TFLOP/s" }}
""")


@pytest.fixture(scope="module")
def units_file(tmp_path_factory, shared_context):
    """A unit cache (:mod:`suite.hardware.units`: pint's answers by text and unit, a file of its own
    beside the listing index) holding every quantity the listings below format, as on any machine
    that has run a command before: each child then formats its rows without importing pint and
    building its registry (~0.5 s CPU a child; the tests compute 9 listings). The listing index,
    what these tests are about, is still absent when each test starts, and every listing is still
    computed or read by the child."""
    from suite.cli.hardware import _listing
    from suite.hardware import units

    _listing(shared_context)  # every shipped profile's row, formatted in this process
    for text, dim in ((PROFILE_MEMORY[0], "bytes"), (PROFILE_MEMORY[1], "bytes"), ("1 TB/s", "bandwidth"),
                      ("10 TFLOP/s", "flop_rate")):
        units.format_quantity(units.parse_quantity(text, dim), dim)  # idx-gpu's rows
    path = tmp_path_factory.mktemp("units") / units._cache_path().name
    path.write_text(json.dumps(units._cache()))
    return path


PROFILE_MEMORY = ("16 GiB", "32 GiB")  # the two sizes of idx-gpu the tests write


@pytest.fixture
def warm_units(tmp_path, units_file):
    """*tmp_path*/cache, the cache folder of the test's children, holding :func:`units_file`."""
    (tmp_path / "cache").mkdir()
    shutil.copy(units_file, tmp_path / "cache" / units_file.name)


def _list(tmp_path, *extra):
    env = {**os.environ, "SUITE_CACHE_DIR": str(tmp_path / "cache")}
    code = ("import sys; from suite.cli import main\n"
            "try:\n    main(['hardware', 'list', '--format', 'json', '--profiles', sys.argv[1]])\n"
            "except SystemExit as e:\n    assert not e.code, e.code\n"
            "print('PYDANTIC', 'pydantic' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "p")], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    body, _, flag = out.stdout.rpartition("PYDANTIC")
    return {r["name"]: r for r in json.loads(body)}, flag.strip() == "True", out.stderr


_STEPS = textwrap.dedent("""
    import contextlib, io, json, os, sys, time
    import suite.cli.hardware as H
    from suite.cli import main
    from suite.hardware import clear_cache

    computed = []  # one entry per listing computed (not read from the index)
    real = H._listing
    H._listing = lambda context: (computed.append(1), real(context))[1]
    out = []
    for step in json.loads(sys.argv[1]):
        if step[0] == "write":
            open(step[1], "w").write(step[2])
        elif step[0] == "replace-keeping-mtime":  # as cp -p / rsync -a / tar x leave it
            st = os.stat(step[1])
            time.sleep(0.05)
            open(step[1], "w").write(step[2])
            os.utime(step[1], ns=(st.st_atime_ns, st.st_mtime_ns))
        else:  # ["list", profiles folder], as a fresh process would: no library kept from before
            clear_cache()
            n, so, se = len(computed), io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
                try:
                    main(["hardware", "list", "--format", "json", "--profiles", step[1]])
                except SystemExit as e:
                    assert not e.code, e.code
            out.append([{r["name"]: r for r in json.loads(so.getvalue())}, len(computed) > n, se.getvalue()])
    print(json.dumps(out))
""")


def _listings(tmp_path, steps):
    """The listings of one child process taking *steps* in order (each listing is a fresh command:
    its own context; the index on disk is what carries over): per ``["list"]`` step, (rows by name,
    whether the listing was computed rather than read from the index, stderr). One process for a
    test's listings instead of one each (~1.5 s CPU per process); the first test above keeps a
    process per listing, since it checks that a cached listing imports no pydantic."""
    env = {**os.environ, "SUITE_CACHE_DIR": str(tmp_path / "cache")}
    steps = [["list", str(tmp_path / "p")] if s == ["list"] else s for s in steps]
    out = subprocess.run([sys.executable, "-c", _STEPS, json.dumps(steps)], capture_output=True, text=True,
                         env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    return [tuple(r) for r in json.loads(out.stdout.strip().splitlines()[-1])]


def test_cached_listing_equals_the_computed_one_and_an_edit_shows_at_once(tmp_path, warm_units):
    (tmp_path / "p").mkdir()
    f = tmp_path / "p" / "idx.toml"
    f.write_text(PROFILE.format(mem=PROFILE_MEMORY[0]))
    first, validated, _ = _list(tmp_path)
    assert validated  # nothing cached yet: every profile validated (pydantic)
    again, validated_again, _ = _list(tmp_path)
    assert not validated_again and again == first  # from the index, without pydantic
    assert first["idx-gpu"]["memory"] == "16 GiB" and first["idx-gpu"]["fp32"] == "10 TFLOP/s"
    assert len(first) > 50  # the shipped library is listed too
    f.write_text(PROFILE.format(mem="32 GiB"))  # a different size: a new key
    edited, validated_edit, _ = _list(tmp_path)
    assert validated_edit and edited["idx-gpu"]["memory"] == "32 GiB"
    assert {k: v for k, v in edited.items() if k != "idx-gpu"} == {k: v for k, v in first.items() if k != "idx-gpu"}


def test_a_broken_file_is_reported_on_every_listing_cached_or_not(tmp_path, warm_units):
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "bad.toml").write_text("[profile\nname = ")
    (_rows, computed1, err1), (_rows, computed2, err2) = _listings(tmp_path, [["list"], ["list"]])
    assert computed1 and not computed2
    line = [ln for ln in err1.splitlines() if "bad.toml" in ln]
    assert line and line == [ln for ln in err2.splitlines() if "bad.toml" in ln]
    assert line[0].startswith("warning: ") and line[0].endswith("; skipped")


def test_a_replacement_that_keeps_mtime_and_size_is_still_a_new_key(tmp_path, warm_units):
    # cp -p / rsync -a / tar x keep the old mtime; with the same size the listing must not be the
    # cached one (the file's ctime changes, which nothing sets back)
    (tmp_path / "p").mkdir()
    f = tmp_path / "p" / "idx.toml"
    f.write_text(PROFILE.format(mem="16 GiB"))
    st = f.stat()
    (first, _c, _), (edited, computed, _) = _listings(
        tmp_path, [["list"], ["replace-keeping-mtime", str(f), PROFILE.format(mem="32 GiB")], ["list"]])
    assert (f.stat().st_size, f.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)  # same size, the old mtime
    assert f.read_text() == PROFILE.format(mem="32 GiB")
    assert first["idx-gpu"]["memory"] == "16 GiB"
    assert computed and edited["idx-gpu"]["memory"] == "32 GiB"


def test_a_damaged_cache_file_is_recomputed_not_a_crash(tmp_path, warm_units):
    # valid JSON of the wrong shape (a hand edit, another version's file): the listing is computed
    (tmp_path / "p").mkdir()
    (tmp_path / "p" / "idx.toml").write_text(PROFILE.format(mem="16 GiB"))
    first, _c, _ = _listings(tmp_path, [["list"]])[0]
    [cached] = (tmp_path / "cache").glob("hardware-list-*.json")
    junk = ("[]", '{"what": "hardware-list"}', '{"what": "other", "rows": [], "warnings": [], "file_errors": []}')
    listings = _listings(tmp_path, [s for j in junk for s in (["write", str(cached), j], ["list"])])
    assert len(listings) == 3
    for again, computed, _ in listings:
        assert computed and again == first


def test_an_edit_to_a_module_a_plugin_schema_imports_is_a_new_key(tmp_path, monkeypatch):
    # a plugin's extension schema may take its limits from a sibling module; editing that module
    # changes what validates, so it must change the key too (not only the schema's own file)
    from suite.cache import listing_key

    pkg = tmp_path / "site" / "suite_rvk_extpkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "schema.py").write_text("from suite_rvk_extpkg.rules import MAXV\n")
    rules = pkg / "rules.py"
    rules.write_text("MAXV = 10\n")
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    exts = {"rvk": "suite_rvk_extpkg.schema:Ext"}
    before = listing_key([tmp_path], exts)
    assert listing_key([tmp_path], exts) == before
    rules.write_text("MAXV = 1\n")
    assert listing_key([tmp_path], exts) != before


def test_json_cache_files_read_and_merge(tmp_path):
    # the one loader and writer of the dict-shaped cache files (units, workload hashes): a damaged
    # or absent file reads as empty, a write keeps what another process added meanwhile
    from suite.cache import merge_json_dict, read_json_dict

    f = tmp_path / "sub" / "c.json"
    assert read_json_dict(f) == {}
    merge_json_dict(f, {"a": "1"})
    f.write_text(json.dumps({**json.loads(f.read_text()), "other": "x"}))  # another process's entry
    merge_json_dict(f, {"b": "2", "a": "3"})
    assert read_json_dict(f) == {"a": "3", "b": "2", "other": "x"}
    for bad in ("{not json", "[1, 2]", ""):
        f.write_text(bad)
        assert read_json_dict(f) == {}
    merge_json_dict(f, {"c": "4"})
    assert read_json_dict(f) == {"c": "4"} and not list(f.parent.glob("*.tmp"))
    blocked = tmp_path / "file"
    blocked.write_text("")
    merge_json_dict(blocked / "c.json", {"d": "5"})  # an unwritable folder is skipped, not an error


def test_package_files_finds_a_package_or_a_single_module_without_importing(tmp_path, monkeypatch):
    import sys as _sys

    from suite.cache import package_files

    (tmp_path / "rvk_pkg_x" / "sub").mkdir(parents=True)
    for f in ("rvk_pkg_x/__init__.py", "rvk_pkg_x/sub/m.py", "rvk_single_x.py"):
        (tmp_path / f).write_text("raise ImportError('not to be imported')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    got = package_files(["rvk_pkg_x.sub.m", "rvk_pkg_x", "rvk_single_x", "rvk_missing_x", ""])
    assert [p.relative_to(tmp_path).as_posix() for p in got] == [
        "rvk_pkg_x/__init__.py", "rvk_pkg_x/sub/m.py", "rvk_single_x.py"]
    assert "rvk_pkg_x" not in _sys.modules and "rvk_single_x" not in _sys.modules
