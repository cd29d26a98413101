"""What a plugin's load leaves behind besides rebound names (suite.tamper_process).

Tryout hostile10, finding 1: a plugin started a thread at import that rebound ``suite.perf.collective_time``
and ``suite.api.collective_time`` (x3) 20 ms later, after the registry's load-time check: poseidon's
vgg19-22k speed-up went 16x -> 12.24x, stored ``ok`` under the clean keys, and the plugin showed "ok".
Finding 3: a plugin's import-time ``os.chdir`` or ``os.environ["SUITE_STORE"] = ...`` moved where
``suite run --store mine.sqlite`` and the default store wrote.
"""

from __future__ import annotations

import json
import os
import threading
import types

import pytest

import suite.perf
from suite import tamper_process
from suite.api import hookimpl
from suite.registry import Registry
from suite.technique import Paper, Technique, Variant
from test_trust_plugins import MAIN_IN, install, run_suite, stored  # noqa: F401  (run_suite: a fixture)

_TAIL = (" after loading (directory and variables put back); expected a plugin that starts no thread and "
         "changes no working directory or SUITE_* variable while loading")


@pytest.fixture(autouse=True)
def _unwatched():
    yield
    tamper_process.watch(None, [], set())
    tamper_process.drain_notes()


def _plugin(name: str, on_load) -> types.ModuleType:
    mod = types.ModuleType(name)

    @hookimpl
    def suite_techniques():
        on_load()
        return [Technique(name=name, title="t", category="communication", paper=Paper("P"),
                          variants=[Variant("base", "baseline", baseline=True)],
                          fidelities={"model": lambda s: None}, needs_profile=False, needs_workload=False)]

    mod.suite_techniques = suite_techniques
    return mod


def test_a_plugin_that_moves_the_working_directory_or_a_suite_variable_is_quarantined_and_both_put_back(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SUITE_STORE", raising=False)
    monkeypatch.setenv("SUITE_PROFILE_DIRS", "/mine")
    (tmp_path / "elsewhere").mkdir()

    def move():
        os.chdir(tmp_path / "elsewhere")
        os.environ["SUITE_STORE"] = "/tmp/plugin.sqlite"
        os.environ["SUITE_PROFILE_DIRS"] = "/theirs"

    reg = Registry(entry_points_=[], strict=False, modules=[("mover", _plugin("mover", move)),
                                                            ("after", _plugin("after", lambda: None))])
    reasons = {p.name: p.reason for p in reg.quarantined()}
    assert reasons == {"mover": (f"left the working directory changed ({str(tmp_path)!r} -> "
                                 f"{str(tmp_path / 'elsewhere')!r}), SUITE_PROFILE_DIRS changed ('/mine' -> "
                                 f"'/theirs'), SUITE_STORE changed ('<unset>' -> '/tmp/plugin.sqlite')" + _TAIL)}
    assert os.getcwd() == str(tmp_path)
    assert "SUITE_STORE" not in os.environ and os.environ["SUITE_PROFILE_DIRS"] == "/mine"
    assert reg.technique("after").name == "after"  # the plugin after it loads


def test_a_thread_left_running_is_watched_and_its_later_patch_is_put_back(tmp_path):
    """The thread waits until the registry is built (what the tryout's 20 ms sleep did), then rebinds
    a core function; the plugin is noted at load (quarantined from 0.4.0: a library a plugin imports
    may start a helper thread), the plugin after it loads, and recheck (where workers start, cases run
    in process and outcomes are stored) puts the original back."""
    real = suite.perf.roofline_time
    go, done = threading.Event(), threading.Event()

    def later():
        go.wait(5)
        suite.perf.roofline_time = lambda *a, **k: 3 * real(*a, **k)
        done.set()

    reg = Registry(entry_points_=[], strict=False, modules=[
        ("threader", _plugin("threader", lambda: threading.Thread(target=later, name="patcher", daemon=True).start())),
        ("after", _plugin("after", lambda: None))])
    assert reg.quarantined() == []
    assert reg.notes == ["plugin 'threader' left a thread still running ('patcher') after loading: what it changes in "
                         "the core is put back before cases run and results are stored; a plugin that starts no "
                         "thread while loading is expected (quarantined from dlsys-suite 0.4.0)"]
    assert tamper_process.recheck() == ""  # nothing changed yet
    go.set()
    assert done.wait(5)
    assert suite.perf.roofline_time is not real
    assert tamper_process.recheck() == ("the core was changed after plugin 'threader' loaded (a thread it started): "
                                        "suite.perf.roofline_time put back")
    assert suite.perf.roofline_time is real


def test_from_0_4_0_a_thread_left_running_quarantines_its_plugin(monkeypatch):
    from suite import deprecation

    monkeypatch.setitem(deprecation.FAILS_FROM, "thread-at-load", "0.0.1")
    stop = threading.Event()
    reg = Registry(entry_points_=[], strict=False, modules=[
        ("threader", _plugin("threader", lambda: threading.Thread(target=stop.wait, name="idle", daemon=True).start()))])
    stop.set()
    assert {p.name: p.reason for p in reg.quarantined()} == {"threader": "left a thread still running ('idle')" + _TAIL}


THREADER = '''
import dataclasses, sys, threading, time
import suite.api, suite.perf

_real = suite.perf.collective_time


def _tripled(*a, **k):
    c = _real(*a, **k)
    return dataclasses.replace(c, time=3 * c.time)


''' + MAIN_IN + '''

def _later():  # once the run starts (every plugin loaded and checked), before it forks: every collective x3
    while not _main_in("run_cases"):
        time.sleep(0.0002)
    suite.perf.collective_time = suite.api.collective_time = _tripled


threading.Thread(target=_later, daemon=True).start()


@hookimpl
def suite_techniques():
    return []
'''


@pytest.mark.parametrize("where", [(), ("--in-process",)], ids=["workers", "in-process"])
def test_a_thread_that_patches_the_core_once_the_run_starts_changes_no_stored_number(tmp_path, run_suite, where):
    """In workers, the patch made before the fork is put back as each starts; in process, before each
    case (and the core's own recorder, which rebinds a name of its module during a case, is no patch)."""
    site = install(tmp_path / "site", "evil_thread", THREADER)
    st = tmp_path / "s.sqlite"
    r = run_suite(site, "run", "--technique", "poseidon", "--variant", "poseidon", "--param", "nodes=16", "-q",
                  *where, store=st)
    assert r.returncode == 0, r.stderr
    assert "plugin 'evil_thread' left a thread still running" in r.stderr
    (pos,) = stored(st, "poseidon")
    assert pos["status"] == "ok"
    # the clean speed-up (16 nodes, vgg19-22k, 10 GbE: 15.998x; the tryout's thread made it 12.24x)
    assert pos["metrics"]["speedup"] == pytest.approx(15.998, abs=1e-3)


def test_every_name_a_core_module_rebinds_itself_is_in_its_caches():
    """A watched thread's patches are put back against the load checks' snapshot while a run runs,
    so a module-level name the core itself rebinds then (``global _DUMPS``: built on first use) must be
    in its module's ``__caches__``, or the guard would put the core's own value back (an --in-process
    case was stored failed for ``suite.runner.evaluate._DUMPS``)."""
    import ast
    from pathlib import Path

    import suite as pkg

    missing = []
    for path in sorted(Path(pkg.__file__).parent.rglob("*.py")):
        tree = ast.parse(path.read_text())
        caches = next((ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                       and any(isinstance(t, ast.Name) and t.id == "__caches__" for t in n.targets)), ())
        names = {name for node in ast.walk(tree) if isinstance(node, ast.Global) for name in node.names}
        missing += [f"{path.name}: {name}" for name in sorted(names - set(caches))]
    assert missing == []


def test_what_a_watched_thread_changes_while_a_later_plugin_loads_is_put_back_without_blaming_that_plugin(
        tmp_path, monkeypatch):
    """The tryout's thread patched while poseidon's deferred hook ran: poseidon was quarantined (every
    built-in poseidon claim lost). The change is put back with a note, and poseidon is not blamed."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "elsewhere").mkdir()
    real = suite.perf.roofline_time
    go, done = threading.Event(), threading.Event()

    def later():
        go.wait(5)
        suite.perf.roofline_time = lambda *a, **k: 3 * real(*a, **k)
        os.chdir(tmp_path / "elsewhere")
        done.set()

    def innocent():  # the thread acts while this plugin loads
        go.set()
        assert done.wait(5)

    reg = Registry(entry_points_=[], strict=False, modules=[
        ("threader", _plugin("threader", lambda: threading.Thread(target=later, name="patcher", daemon=True).start())),
        ("innocent", _plugin("innocent", innocent))])
    assert reg.quarantined() == []  # the thread's plugin is noted (quarantined from 0.4.0), the other not blamed
    assert suite.perf.roofline_time is real and os.getcwd() == str(tmp_path)
    assert reg.notes[1:] == ["suite.perf.roofline_time changed while plugin 'innocent' loaded, while a thread of "
                             "plugin 'threader' runs: put back",
                             f"the working directory changed ({str(tmp_path)!r} -> {str(tmp_path / 'elsewhere')!r}) "
                             "while plugin 'innocent' loaded, while a thread of plugin 'threader' runs: put back"]
    assert reg.notes[0].startswith("plugin 'threader' left a thread still running ('patcher') after loading")


def test_the_watch_ends_with_its_thread_and_leaves_the_programs_own_directory_alone(tmp_path, monkeypatch):
    """Once a plugin left a thread, every recheck put the working directory and SUITE_* variables back
    to their state at load, undoing the host program's own later os.chdir (an API or notebook user),
    and the watch never ended (a second reader). The directory is compared at loads only; the watch
    stops when the watched threads have ended, after putting back what they changed."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine").mkdir()
    real = suite.perf.roofline_time
    go = threading.Event()

    def later():
        go.wait(5)
        suite.perf.roofline_time = lambda *a, **k: 2 * real(*a, **k)

    t = threading.Thread(target=later, name="once", daemon=True)
    Registry(entry_points_=[], strict=False, modules=[("threader", _plugin("threader", t.start))])
    assert tamper_process.watching() == ["threader"]
    os.chdir(tmp_path / "mine")  # the program's own move, after the plugins loaded
    assert tamper_process.recheck() == "" and os.getcwd() == str(tmp_path / "mine")
    go.set()
    t.join(5)
    note = tamper_process.recheck()  # the ended thread's patch is still put back, then the watch ends
    assert note.endswith("suite.perf.roofline_time put back") and suite.perf.roofline_time is real
    assert tamper_process.watching() == []
    assert tamper_process.drain_notes() == [note] and tamper_process.drain_notes() == []
