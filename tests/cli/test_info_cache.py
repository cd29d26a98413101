"""`suite info NAME` caches its profile-fields probe (issue 19: start-up under 0.3 s): the
cached answer equals the probed one, and the probe runs again when a source file changes.

Each `suite info` runs in a fresh process (slow: ~1 s CPU each, six per test), where "probed"
means suite.runner.fields was imported at all, or in this process through CliRunner, where it
means the probe function was called."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


@pytest.fixture(params=[pytest.param("process", marks=pytest.mark.slow), "in-process"])
def info(request, monkeypatch, suite_cli, spy):
    """``info(cache, name)`` -> (the JSON of `suite info NAME`, whether it probed)."""
    if request.param == "process":
        return _info
    import suite.runner.fields as fields

    calls = spy(fields, "probe_fields_read", lambda t, *a, **k: t.name)

    def run(cache, name="mg-wfbp"):
        monkeypatch.setenv("SUITE_CACHE_DIR", str(cache))
        before = len(calls)
        r = suite_cli("info", name, "--format", "json")
        assert r.exit_code == 0, r.output
        return json.loads(r.stdout), len(calls) > before

    return run


def _info(cache, name="mg-wfbp"):
    code = ("import sys; from suite.cli import main\n"
            "try:\n    main(['info', sys.argv[1], '--format', 'json'])\n"
            "except SystemExit as e:\n    assert not e.code, e.code\n"
            "print('PROBED', 'suite.runner.fields' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, name], capture_output=True, text=True, timeout=180,
                         env={**os.environ, "SUITE_CACHE_DIR": str(cache)})
    assert out.returncode == 0, out.stderr
    body, _, flag = out.stdout.rpartition("PROBED")
    return json.loads(body), flag.strip() == "True"


def test_info_probe_is_cached_and_keyed_by_the_sources(tmp_path, info):
    first, probed = info(tmp_path / "c")
    assert probed
    # MG-WFBP's model prices its all-reduces on the profile's network (alpha, beta of each level)
    assert any(f.startswith("network.") for f in first["profile_fields_read"]["all"])
    again, probed_again = info(tmp_path / "c")
    assert not probed_again and again == first
    (f,) = list((tmp_path / "c").glob("fields-read-mg-wfbp-*.json"))
    stale = json.loads(f.read_text())
    stale["reads"] = []
    f.write_text(json.dumps(stale))  # a tampered entry is what is read while the key matches...
    assert info(tmp_path / "c")[0]["profile_fields_read"]["all"] == []
    import suite.cli.plugins as mod

    os.utime(mod.__file__)  # ...and any source file change is a new key: probed again
    fresh, probed_fresh = info(tmp_path / "c")
    assert probed_fresh and fresh == first


def test_a_damaged_info_cache_file_is_probed_again_not_a_crash(tmp_path, info):
    first, _ = info(tmp_path / "c")
    (f,) = list((tmp_path / "c").glob("fields-read-mg-wfbp-*.json"))
    f.write_text('{"what": "fields-read-mg-wfbp"}')  # valid JSON without the fields
    again, probed = info(tmp_path / "c")
    assert probed and again == first


def test_saving_one_techniques_probe_keeps_another_whose_name_extends_it(tmp_path, monkeypatch):
    # "fields-read-foo-*.json" also matches technique foo-bar's file: only foo's own older
    # entries are removed
    from suite.cache import load_listing, save_listing

    monkeypatch.setenv("SUITE_CACHE_DIR", str(tmp_path))
    k1, k2, k3 = "a" * 24, "b" * 24, "c" * 24
    save_listing(k1, {"what": "fields-read-foo-bar", "reads": [], "problems": []}, what="fields-read-foo-bar")
    save_listing(k2, {"what": "fields-read-foo", "reads": [], "problems": []}, what="fields-read-foo")
    save_listing(k3, {"what": "fields-read-foo", "reads": [], "problems": []}, what="fields-read-foo")
    assert load_listing(k1, what="fields-read-foo-bar") is not None
    assert load_listing(k2, what="fields-read-foo") is None and load_listing(k3, what="fields-read-foo")
