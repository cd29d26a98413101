"""Hostile-plugin tryout 15, finding 3: a third-party plugin whose profile folder declares a
shipped profile's name (a copy of ``hardware_profiles/clusters``) refused the name to everyone:
``suite run smoke`` ran 9 cases of 22 and exited 0, ``suite reproduce poseidon`` turned all 6
claims into errors, and ``suite plugins`` listed the plugin ``ok``. As for a workload that takes a
zoo name (test_plugin_workload_clash.py), the plugin is quarantined and the shipped profile keeps
its name and content."""

from __future__ import annotations

import json
from pathlib import Path

from test_trust_plugins import install, run_suite, stored, suite_forked  # noqa: F401  (run_suite: a fixture)

SHIPPED = Path(__file__).resolve().parents[2] / "hardware_profiles" / "clusters" / "titan-x-maxwell-16n-10gbe.toml"

SHIPS_PROFILES = '''
from pathlib import Path


@hookimpl
def suite_hardware_profiles():
    return [Path(__file__).parent / "profiles"]


@hookimpl
def suite_techniques():
    return [technique("{tech}", lambda s: Result().add("y", 1.0, "s", "lower"))]
'''



def _plugin(site: Path, pkg: str, profiles: dict[str, str]) -> None:
    install(site, pkg, SHIPS_PROFILES.replace("{tech}", pkg.replace("_", "-")))
    (site / pkg / "profiles").mkdir()
    for name, text in profiles.items():
        (site / pkg / "profiles" / name).write_text(text)


def _poseidon_8n(site: Path, store: Path, run_suite, profile: str = "titan-x-maxwell-16n-10gbe") -> tuple[str, float]:
    """poseidon's variant poseidon, 8 of the 16 nodes, vgg19-22k, on *profile*: (stderr, iteration s)."""
    r = run_suite(site, "run", "-t", "poseidon", "--variant", "poseidon", "--profile", profile,
                  "--workload", "vgg19-22k", "--param", "nodes=8", "-j", "1", store=store)
    assert r.returncode == 0, r.stderr
    (case,) = stored(store, "poseidon")
    assert case["status"] == "ok", case["error"]
    return r.stderr, case["metrics"]["iteration_time"]


def _plugins(site: Path, store: Path, run_suite) -> dict[str, dict]:
    r = run_suite(site, "plugins", "--format", "json", store=store)
    assert r.returncode == 0, r.stderr
    return {p["plugin"]: p for p in json.loads(r.stdout)}


def test_a_plugin_profile_with_a_shipped_name_quarantines_the_plugin_and_the_shipped_one_serves(tmp_path, run_suite):
    # the copy's Ethernet is 1000x slower: were it served, poseidon's iteration time would change
    copy = SHIPPED.read_text().replace('bandwidth = "10 Gbit/s"', 'bandwidth = "10 Mbit/s"')
    assert copy != SHIPPED.read_text() and 'name = "titan-x-maxwell-16n-10gbe"' in copy
    site = tmp_path / "site"
    _plugin(site, "takes_titan", {"titan.toml": copy})
    store = tmp_path / "s.sqlite"
    shown = _plugins(site, store, run_suite)["takes_titan"]
    assert shown["status"] == "quarantined"
    assert shown["reason"] == (f"suite_hardware_profiles(): profile 'titan-x-maxwell-16n-10gbe' "
                               f"({site / 'takes_titan' / 'profiles' / 'titan.toml'}) is a shipped profile "
                               f"(`suite hardware show titan-x-maxwell-16n-10gbe`); expected a unique name")
    err, served = _poseidon_8n(site, store, run_suite)
    assert "expected one file declaring it" not in err
    assert "warning: plugin 'takes_titan' (takes-titan) is quarantined: suite_hardware_profiles()" in err
    # the same case without the plugin (a second site and store; forked, fast): the shipped profile's value
    (tmp_path / "clean").mkdir()
    assert served == _poseidon_8n(tmp_path / "clean", tmp_path / "clean.sqlite", suite_forked)[1]
    # and the copy, served under a name of its own, changes it
    _plugin(tmp_path / "own", "own_titan",
            {"t.toml": copy.replace('name = "titan-x-maxwell-16n-10gbe"', 'name = "plugin-titan"')})
    assert _poseidon_8n(tmp_path / "own", tmp_path / "own.sqlite", suite_forked, "plugin-titan")[1] > served * 1.5


def test_a_profile_name_an_earlier_plugin_ships_quarantines_the_later_plugin(tmp_path, run_suite):
    mine = SHIPPED.read_text().replace('name = "titan-x-maxwell-16n-10gbe"', 'name = "plugin-titan"')
    site = tmp_path / "site"
    _plugin(site, "a_first", {"t.toml": mine})
    _plugin(site, "b_second", {"t.toml": mine})  # entry points of other distributions load by name
    shown = _plugins(site, tmp_path / "s.sqlite", run_suite)
    assert shown["a_first"]["status"] == "ok"
    assert shown["b_second"]["status"] == "quarantined"
    assert "profile 'plugin-titan'" in shown["b_second"]["reason"]
    assert "is already provided by a-first (plugin 'a_first')" in shown["b_second"]["reason"]


def test_a_plugin_returning_a_shipped_folder_itself_is_no_clash():
    # the library reads a file reached twice once (by its resolved path): no name is taken from anyone
    from test_trust_plugins import _module

    from suite.registry import Registry

    mod = _module("reuses_shipped", f"""
        @hookimpl
        def suite_hardware_profiles():
            return [{str(SHIPPED.parent)!r}]
    """)
    reg = Registry(entry_points_=[], modules=[("reuses_shipped", mod)])
    (info,) = [p for p in reg.plugins if p.name == "reuses_shipped"]
    assert (info.status, info.reason) == ("ok", "")
    assert reg.hardware_profile_paths() == [SHIPPED.parent]


def test_two_plugins_returning_one_profile_file_are_no_clash(tmp_path):
    # review of 0.3.13: the second plugin was quarantined ("already provided by ..."), losing its
    # techniques, though the library reads a file reached twice once
    from test_trust_plugins import _module

    from suite.registry import Registry

    (tmp_path / "t.toml").write_text(SHIPPED.read_text().replace('name = "titan-x-maxwell-16n-10gbe"',
                                                                 'name = "plugin-titan"'))
    mods = [(n, _module(n, f"""
        @hookimpl
        def suite_hardware_profiles():
            return [{str(tmp_path)!r}]
    """)) for n in ("first_p", "second_p")]
    reg = Registry(entry_points_=[], modules=mods)
    assert {p.name: (p.status, p.reason) for p in reg.plugins if p.name in ("first_p", "second_p")} == {
        "first_p": ("ok", ""), "second_p": ("ok", "")}
