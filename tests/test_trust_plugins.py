"""Issue 16, hostile plugins: each costs only its own cases, end to end through ``suite``.

Every plugin here is a real distribution (a package plus a ``*.dist-info`` folder with a
``suite.plugins`` entry point) put on ``PYTHONPATH`` of a ``python -m suite`` subprocess, exactly
as a third-party ``pip install`` would make it visible, and run at the default settings. The
stored outcomes are read back from the SQLite store (schema: suite/results/store.py).

Reference value: poseidon's model at 16 nodes on ``titanx-cluster-10gbe`` with ``vgg19-22k`` has a
compute time of 0.718 s per iteration (the figure issue 16 quotes; a clean run gives it), which a
plugin writing ``peak_flops["fp32"] = 1.0`` into the shared profile once turned into 4.4e12 s.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

POSEIDON_COMPUTE_S = 0.718  # issue 16: poseidon, 16 nodes, titanx-cluster-10gbe, vgg19-22k

HEADER = '''
import ctypes, os, signal, time
from suite import hookimpl, Paper, Param, Result, Technique, Variant

PAPER = Paper("A hostile plugin", year=2024, venue="tests")


def technique(name, evaluate, **kw):
    kw.setdefault("variants", [Variant("base", "the only variant", baseline=True)])
    kw.setdefault("needs_profile", False)
    kw.setdefault("needs_workload", False)
    return Technique(name=name, title=name, category="communication", paper=PAPER,
                     fidelities={"model": evaluate}, **kw)
'''


#: a plugin body's helper (needs ``sys`` and ``threading``): whether the main thread is inside the
#: function named *name* now (a thread that patches the core at a chosen moment of a run)
MAIN_IN = '''
def _main_in(name):
    f = sys._current_frames().get(threading.main_thread().ident)
    while f is not None:
        if f.f_code.co_name == name:
            return True
        f = f.f_back
    return False
'''


def install(site: Path, pkg: str, body: str, *, dist: str | None = None, header: bool = True) -> Path:
    """Make *pkg* an installed distribution under *site* with a ``suite.plugins`` entry point."""
    dist = dist or pkg.replace("_", "-")
    (site / pkg).mkdir(parents=True)
    (site / pkg / "__init__.py").write_text((HEADER if header else "") + textwrap.dedent(body))
    info = site / f"{pkg}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[suite.plugins]\n{pkg} = {pkg}\n")
    return site


def _env(site: Path, store: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env["SUITE_STORE"] = str(store)
    env.pop("SUITE_STRICT_PLUGINS", None)
    env["COLUMNS"] = "250"
    return env


def suite(site: Path, *args: str, store: Path, timeout: float = 90) -> subprocess.CompletedProcess:
    """``python -m suite ARGS`` with *site*'s distributions installed (on ``PYTHONPATH``)."""
    return subprocess.run([sys.executable, "-m", "suite", *args], env=_env(site, store), capture_output=True,
                          text=True, timeout=timeout)


def suite_forked(site: Path, *args: str, store: Path, timeout: float = 90) -> subprocess.CompletedProcess:
    """The command :func:`suite` runs, in a child forked from this test process instead of a new
    interpreter (:mod:`forkrun`): the same environment, *site*'s distributions installed. Whatever
    a plugin patches or breaks stays in the child."""
    import forkrun

    return forkrun.run(forkrun.suite_main, args, site, env=_env(site, store), timeout=timeout, argv=["suite", *args])


@pytest.fixture(params=["fork", pytest.param("process", marks=pytest.mark.slow)])
def run_suite(request):
    """``run_suite(site, *args, store=...)``: :func:`suite_forked` (fast) or :func:`suite` (a new
    interpreter, as a user runs it: slow). Both give a :class:`subprocess.CompletedProcess`."""
    return suite_forked if request.param == "fork" else suite


def stored(store: Path, technique: str) -> list[dict]:
    """Every stored case of *technique*: status, error, traceback, params and metrics."""
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT key, status, error, traceback, params FROM cases WHERE technique = ?",
                            (technique,)).fetchall()
        out = []
        for key, status, error, tb, params in rows:
            metrics = dict(conn.execute("SELECT name, value FROM metrics WHERE case_key = ?", (key,)).fetchall())
            out.append({"key": key, "status": status, "error": error, "traceback": tb,
                        "params": json.loads(params), "metrics": metrics})
        return out
    finally:
        conn.close()


def run_row(store: Path, run_id: int = -1) -> dict:
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    try:
        rows = [dict(r) for r in conn.execute("SELECT * FROM runs ORDER BY id")]
    finally:
        conn.close()
    return rows[run_id]


# --------------------------------------------------------------------------- mutating plugin

MUTATOR = '''
WHAT = ("flops", "params", "layers", "swallow")


def mutate(s):
    what = s.params["what"]
    if what == "flops":
        s.profile.device.peak_flops["fp32"] = 1.0
    elif what == "params":
        s.params["what"] = "something else"
    elif what == "layers":
        s.workload.layers[0].attrs["kernel"] = 99
    else:  # a plugin that hides the error from the suite must still not change later cases
        try:
            s.profile.device.peak_flops["fp32"] = 1.0
        except Exception:
            pass
    return Result().add("y", 1.0, "s", "lower")


T = technique("evil-mutator", mutate, parameters={"what": Param(str, "flops", choices=WHAT)},
              default_profile="titanx-cluster-10gbe", default_workload="vgg19-22k",
              profile_kinds=("cluster",), needs_profile=True, needs_workload=True)


@hookimpl
def suite_techniques():
    return [T]
'''


def test_mutating_plugin_raises_immutable_error_and_changes_no_later_case(tmp_path, run_suite):
    site = install(tmp_path / "site", "evil_mutator", MUTATOR)
    exp = tmp_path / "mutate.toml"
    exp.write_text('[evil]\ntechnique = "evil-mutator"\nparams = { what = ["flops", "params", "layers", "swallow"] }\n'
                   '[poseidon]\ntechnique = "poseidon"\nvariants = ["poseidon"]\nparams = { nodes = [16] }\n')
    # the clean case, resolved and evaluated here, in a process no plugin has touched
    from suite import ScenarioSpec
    from suite.context import Context
    from suite.runner.case import resolve_case
    from suite_poseidon.technique import TECHNIQUE as POSEIDON

    case = resolve_case(POSEIDON, ScenarioSpec("poseidon", params={"nodes": 16}), context=Context.build())
    ref = {"key": case.key, "metrics": {k: m.value for k, m in POSEIDON.evaluate(case.scenario).metrics.items()}}
    assert ref["metrics"]["compute_time"] == pytest.approx(POSEIDON_COMPUTE_S, abs=1e-3)

    for jobs in ("1", "2"):
        st = tmp_path / f"j{jobs}.sqlite"
        r = run_suite(site, "run", str(exp), "-j", jobs, "-q", store=st)
        assert r.returncode == 1, r.stderr  # three evil cases failed
        evil = {c["params"]["what"]: c for c in stored(st, "evil-mutator")}
        assert evil["swallow"]["status"] == "ok"
        for what, field in (("flops", "peak_flops['fp32']"), ("params", "scenario.params['what']"),
                            ("layers", "attrs['kernel']")):
            assert evil[what]["status"] == "failed", (jobs, what, evil[what])
            assert evil[what]["error"].startswith("ImmutableError: ") and field in evil[what]["error"], evil[what]
            assert "\n" not in evil[what]["error"]
        (pos,) = stored(st, "poseidon")
        assert pos["status"] == "ok"
        # the same case key as the clean run, and the same value: nothing leaked into it
        assert pos["key"] == ref["key"]
        assert pos["metrics"] == ref["metrics"], jobs


# --------------------------------------------------------------------------- crashing plugin

CRASHER = '''
def crash(s):
    mode = s.params["mode"]
    if mode == "abort":
        os.abort()
    if mode == "exit3":
        os._exit(3)
    return Result().add("y", float(s.params["i"]), "s", "lower")


T = technique("evil-crash", crash, parameters={"mode": Param(str, "ok", choices=("ok", "abort", "exit3")),
                                               "i": Param(int, 0)})


@hookimpl
def suite_techniques():
    return [T]
'''


def test_aborting_plugin_costs_only_its_case_at_default_settings(tmp_path, run_suite):
    site = install(tmp_path / "site", "evil_crash", CRASHER)
    exp = tmp_path / "crash.toml"
    exp.write_text('[before]\ntechnique = "evil-crash"\nparams = { mode = "ok", i = [1, 2] }\n'
                   '[abort]\ntechnique = "evil-crash"\nparams = { mode = "abort", i = 10 }\n'
                   '[exit]\ntechnique = "evil-crash"\nparams = { mode = "exit3", i = 11 }\n'
                   '[after]\ntechnique = "evil-crash"\nparams = { mode = "ok", i = 3 }\n')
    st = tmp_path / "s.sqlite"
    r = run_suite(site, "run", str(exp), "-q", "--format", "json", store=st)  # default: -j 1, isolated
    assert r.returncode == 1, r.stderr
    summary = json.loads(r.stdout)
    assert (summary["total"], summary["computed"], summary["ok"], summary["status"]) == (5, 5, 3, "failed")
    assert summary["by_status"] == {"ok": 3, "crashed": 2}
    cases = {c["params"]["i"]: c for c in stored(st, "evil-crash")}
    assert {i: c["metrics"].get("y") for i, c in cases.items() if c["status"] == "ok"} == {1: 1.0, 2: 2.0, 3: 3.0}
    assert cases[10]["status"] == "crashed" and "SIGABRT" in cases[10]["error"]
    assert "in crash" in (cases[10]["traceback"] or "")  # the Python stack faulthandler wrote
    assert cases[11]["status"] == "crashed" and "status 3" in cases[11]["error"]
    run = run_row(st)
    assert run["status"] == "failed" and run["finished"] is not None
    # the rerun keeps the three ok cases, retries only the two crashed ones, and ends again
    r = run_suite(site, "run", str(exp), "-q", "--format", "json", store=st)
    assert r.returncode == 1, r.stderr
    again = json.loads(r.stdout)
    assert (again["cached"], again["computed"], again["by_status"]) == (3, 2, {"crashed": 2})


# --------------------------------------------------------------------------- hanging plugin

HANGER = '''
def hang(s):
    if s.params["i"] == s.params["blocked"]:
        # a C call that never returns to the interpreter, with the signals a time-out could use
        # blocked: nothing inside this process can stop it
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGINT, signal.SIGTERM})
        ctypes.CDLL(None).sleep(30)
    if s.params["i"] == s.params["busy"]:
        # a C loop that holds the GIL and never checks signals (hours): no Python handler, no
        # other thread of this process (a commit thread) runs until it ends
        sum(range(10**13))
    if s.params["i"] == s.params["held"]:
        # both at once without spending CPU: the signals blocked, and a C call that keeps the GIL
        # (ctypes.PyDLL) while it sleeps: neither a handler nor another thread of this process runs
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGINT, signal.SIGTERM})
        ctypes.PyDLL(None).sleep(30)
    return Result().add("y", float(s.params["i"]), "s", "lower")


T = technique("evil-hang", hang, parameters={"i": Param(int, 0), "blocked": Param(int, -1),
                                             "busy": Param(int, -1), "held": Param(int, -1)})


@hookimpl
def suite_techniques():
    return [T]
'''


def test_plugin_hanging_in_c_is_stopped_from_outside(tmp_path, run_suite):
    """A plugin's case that no signal handler and no thread of its process can stop ends at its
    time-out. As a new interpreter (slow): one case sleeping in C with the signals blocked, one spinning
    in C with the GIL held (a second of CPU). Forked (fast): one case doing both at once, without CPU."""
    site = install(tmp_path / "site", "evil_hang", HANGER)
    st = tmp_path / "s.sqlite"
    if run_suite is suite_forked:
        hang, want = ["--param", "i=1,2,3", "--param", "held=2"], {1: "ok", 2: "timeout", 3: "ok"}
    else:
        hang = ["--param", "i=1,2,3,4,5", "--param", "blocked=2", "--param", "busy=4"]
        want = {1: "ok", 2: "timeout", 3: "ok", 4: "timeout", 5: "ok"}
    r = run_suite(site, "run", "--technique", "evil-hang", *hang, "--timeout", "1", "-q", store=st, timeout=40)
    assert r.returncode == 1, r.stderr
    cases = {c["params"]["i"]: c for c in stored(st, "evil-hang")}
    assert {i: c["status"] for i, c in cases.items()} == want
    assert {cases[i]["error"] for i in want if want[i] == "timeout"} == {"timed out after 1 s"}
    last = max(want)
    assert cases[last]["metrics"] == {"y": float(last)}


# --------------------------------------------------------------------------- duplicate name

IMPOSTOR = '''
def fake(s):
    return Result().add("compute_time", 1.0, "s", "lower")


@hookimpl
def suite_techniques():
    return [technique("poseidon", fake), technique("impostor-extra", fake)]
'''


def test_duplicate_builtin_name_quarantines_only_the_third_party_plugin(tmp_path, run_suite):
    site = install(tmp_path / "site", "impostor", IMPOSTOR, dist="impostor-plugin")
    st = tmp_path / "s.sqlite"
    r = run_suite(site, "plugins", "--format", "json", store=st)
    assert r.returncode == 0, r.stderr
    plugins = {p["plugin"]: p for p in json.loads(r.stdout)}
    assert plugins["impostor"]["status"] == "quarantined"
    assert "technique 'poseidon' is already provided by dlsys-suite" in plugins["impostor"]["reason"]
    assert plugins["poseidon"]["status"] == "ok"
    # (a built-in plugin still being written may be quarantined for its own reason, never for this one)
    assert not [p for n, p in plugins.items() if n != "impostor" and "impostor" in p["reason"]]
    assert plugins["poseidon"]["techniques"] == ["poseidon"] and plugins["impostor"]["techniques"] == []
    r = run_suite(site, "run", "--technique", "poseidon", "--variant", "poseidon", "--param", "nodes=16", "-q",
              store=st)
    assert r.returncode == 0, r.stderr
    (pos,) = stored(st, "poseidon")
    assert pos["metrics"]["compute_time"] == pytest.approx(POSEIDON_COMPUTE_S, abs=1e-3)  # the built-in's


# --------------------------------------------------------------------------- hooks of the wrong type

GOOD = '''
from pathlib import Path
from suite.workloads import Workload

HERE = Path(__file__).resolve().parent


def ev(s):
    return Result().add("y", s.profile.device.memory / 2**30, "GiB", "none")


T = technique("good-tech", ev, default_profile="good-device", default_workload="good-wl",
              needs_profile=True, needs_workload=True, profile_kinds=("device",))


@hookimpl
def suite_techniques():
    return [T]


@hookimpl
def suite_workloads():
    return [Workload(name="good-wl", kind="synthetic", source="test fixture")]


@hookimpl
def suite_hardware_profiles():
    return [HERE / "profiles"]
'''

GOOD_PROFILE = '''[profile]
name = "good-device"
kind = "device"
source = "test fixture"

[device]
type = "gpu"
name = "good-gpu"
memory = "24 GiB"
memory_bandwidth = "900 GB/s"
peak_flops = { fp32 = "10 TFLOP/s" }
'''

BAD_HOOKS = {  # plugin -> (hook body, the reason it is quarantined with)
    "aa_string": ('@hookimpl\ndef suite_hardware_profiles():\n    return "/"\n',
                  "suite_hardware_profiles() returned str '/', expected a list of paths"),
    "ab_ints": ('@hookimpl\ndef suite_workloads():\n    return [42, "x"]\n',
                "suite_workloads() returned int 42 in its list, expected a Workload"),
    "ac_raises": ('@hookimpl\ndef suite_workloads():\n    raise RuntimeError("kaput")\n',
                  "suite_workloads() failed: RuntimeError: kaput"),
    # a workload named like a zoo one: the newcomer is quarantined, the zoo's resnet-50 stays
    "ad_zoo_name": ('from suite.workloads import Workload\n\n\n@hookimpl\ndef suite_workloads():\n'
                    '    return [Workload(name="resnet-50", kind="synthetic", source="x")]\n',
                    "suite_workloads(): workload 'resnet-50' is a workload of the zoo "
                    "(`suite workloads show resnet-50`); expected a unique name"),
}


def test_hooks_of_the_wrong_type_quarantine_only_their_plugin(tmp_path, run_suite):
    site = tmp_path / "site"
    for name, (body, _reason) in BAD_HOOKS.items():
        install(site, name, body)
    install(site, "zz_good", GOOD)  # loaded after the bad ones (entry points load by name)
    (site / "zz_good" / "profiles").mkdir()
    (site / "zz_good" / "profiles" / "good.toml").write_text(GOOD_PROFILE)
    st = tmp_path / "s.sqlite"
    r = run_suite(site, "plugins", "--format", "json", store=st, timeout=60)
    assert r.returncode == 0, r.stderr
    plugins = {p["plugin"]: p for p in json.loads(r.stdout)}
    for name, (_body, reason) in BAD_HOOKS.items():
        assert plugins[name]["status"] == "quarantined", plugins[name]
        assert reason in plugins[name]["reason"], plugins[name]["reason"]
    assert plugins["zz_good"]["status"] == "ok" and plugins["poseidon"]["status"] == "ok"
    # the good plugin's technique, workload and profile all work
    r = run_suite(site, "run", "--technique", "good-tech", "-q", store=st, timeout=60)
    assert r.returncode == 0, r.stderr
    (case,) = stored(st, "good-tech")
    assert case["metrics"] == {"y": 24.0}


def _module(name: str, body: str):
    import types

    mod = types.ModuleType(name)
    exec(compile(HEADER + textwrap.dedent(body), f"<{name}>", "exec"), mod.__dict__)
    return mod


@pytest.mark.parametrize("name", sorted(BAD_HOOKS))
def test_strict_mode_turns_a_bad_hook_into_an_error(name):
    from suite.errors import PluginError
    from suite.registry import Registry

    body, reason = BAD_HOOKS[name]
    with pytest.raises(PluginError) as err:  # workload hooks are called on first use: load_all forces them
        Registry(entry_points_=[], modules=[(name, _module(name, body))], strict=True).load_all()
    assert str(err.value) == f"plugin {name!r} (<in-process>): {reason}"


def test_every_hook_is_called_once_when_the_registry_is_built(tmp_path):
    from suite.registry import Registry

    (tmp_path / "p").mkdir()
    mod = _module("counting", f"""
        CALLS = []

        @hookimpl
        def suite_hardware_profiles():
            CALLS.append(1)
            return [{str(tmp_path / "p")!r}]
    """)
    reg = Registry(entry_points_=[], modules=[("counting", mod)])
    for _ in range(3):
        assert reg.hardware_profile_paths() == [tmp_path / "p"]
    assert mod.CALLS == [1]


def test_workload_hook_is_called_once_on_first_use_and_its_fault_costs_its_techniques():
    # suite_workloads is deferred (listing techniques must not build layer tables or datasets):
    # not called while the registry is built, called once when workloads are first asked for; a
    # hook that fails then quarantines its plugin and takes its techniques out of the registry.
    from suite.registry import Registry

    counting = _module("counting", """
        CALLS = []

        @hookimpl
        def suite_workloads():
            CALLS.append(1)
            return []
    """)
    broken = _module("broken", """
        @hookimpl
        def suite_techniques():
            from suite import Paper, Result, Technique, Variant
            return [Technique(name="doomed", title="t", category="sgd", paper=Paper("P"),
                              variants=[Variant("b", "b", baseline=True)],
                              fidelities={"model": lambda s: Result().add("x", 1.0)},
                              needs_profile=False, needs_workload=False)]

        @hookimpl
        def suite_workloads():
            raise RuntimeError("kaput")
    """)
    reg = Registry(entry_points_=[], modules=[("counting", counting), ("broken", broken)])
    assert counting.CALLS == [] and [t.name for t in reg.techniques()] == ["doomed"] and not reg.quarantined()
    for _ in range(3):
        assert reg.plugin_workloads() == []
    assert counting.CALLS == [1]
    [q] = reg.quarantined()
    assert (q.name, q.reason) == ("broken", "suite_workloads() failed: RuntimeError: kaput")
    assert reg.techniques() == []
