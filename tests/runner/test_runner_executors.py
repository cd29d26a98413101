"""Executors: results come back, and a case that raises, hangs, aborts or skips is stored with its
status while every other case completes."""

from __future__ import annotations

import pytest

from fakeplugin import y_of
from plugin_context import plugin_context
from session_context import session_context
from suite.context import Context
from suite.runner import ExecOptions, expand_entry, run_cases

GBIT_A = 10.0  # fake-cluster-a's network bandwidth, Gbit/s


def _modes_sweep(modes):
    return expand_entry({"technique": "fake", "variants": ["base"], "params": {"x": [1, 2, 3], "mode": modes}},
                        context=Context.build())


def _check_ok_values(store, run_id):
    m = store.metrics(run_id, wide=True)
    assert len(m) == 3
    for _, r in m.iterrows():
        assert r["y"] == pytest.approx(y_of(r["param.x"], 1, "base", GBIT_A))


def _hanging_only(cases, hanging):
    """*cases* without the `hang` cases whose x is not in *hanging* (each hanging case costs a
    time-out's wait)."""
    return [c for c in cases if c.params["mode"] != "hang" or c.params["x"] in hanging]


# the fast variants keep one hanging case among the others, the slow ones three (one per x)
HANGING = [pytest.param((1, 2, 3), marks=pytest.mark.slow), (2,)]


@pytest.mark.parametrize("hanging", HANGING)
def test_pool_isolates_raise_hang_abort_skip(fake_registry, store, hanging):
    cases = _hanging_only(_modes_sweep(["ok", "raise", "hang", "abort", "skip"]).cases, hanging)
    s = run_cases(cases, store, options=ExecOptions(jobs=2, timeout=1.0), context=Context.build())
    h = len(hanging)  # 3 cases per other mode; failed = raise + hang + abort
    assert (s.total, s.computed, s.ok, s.skipped, s.failed) == (12 + h, 12 + h, 3, 3, 6 + h)
    assert s.by_status == {"ok": 3, "skipped": 3, "failed": 3, "timeout": h, "crashed": 3}
    cases = store.cases(s.run_id)
    by_mode = {m: set(cases[cases["param.mode"] == m]["status"]) for m in ("ok", "raise", "hang", "abort", "skip")}
    assert by_mode == {"ok": {"ok"}, "raise": {"failed"}, "hang": {"timeout"}, "abort": {"crashed"}, "skip": {"skipped"}}
    failed = store.case(cases[cases["param.mode"] == "raise"]["key"].iloc[0])
    assert failed["error"] == "ValueError: boom from the fake plugin"
    assert "Traceback" in failed["traceback"] and "boom from the fake plugin" in failed["traceback"]
    crashed = store.case(cases[cases["param.mode"] == "abort"]["key"].iloc[0])
    assert crashed["error"] == "worker process died (SIGABRT) while running this case"
    # the worker's Python stack at the abort, written by faulthandler, is the stored traceback
    assert "Fatal Python error: Aborted" in crashed["traceback"]
    assert "fakeplugin.py" in crashed["traceback"] and "in evaluate" in crashed["traceback"]
    assert set(cases[cases["param.mode"] == "skip"]["error"]) == {"fake does not apply here"}
    _check_ok_values(store, s.run_id)
    run = store.run_info(s.run_id)
    assert (run["status"], run["failed"], run["ok"]) == ("failed", 6 + h, 3)


def test_pool_batched_outcomes_find_the_crashing_case(fake_registry, store):
    """Without --timeout, workers batch their outcomes; when one dies, the unreported cases of its
    chunk are re-run one by one and only the case that aborts again is stored as crashed."""
    exp = expand_entry({"technique": "fake", "variants": ["base"],
                        "params": {"x": list(range(1, 21)), "mode": ["ok", "abort", "raise"]},
                        "exclude": [{"mode": "abort", "x": list(range(3, 21))}]},  # 2 aborting cases
                       context=Context.build())
    s = run_cases(exp.cases, store, options=ExecOptions(jobs=2), context=Context.build())
    assert s.by_status == {"ok": 20, "failed": 20, "crashed": 2}
    cases = store.cases(s.run_id)
    assert set(cases[cases["status"] == "crashed"]["param.mode"]) == {"abort"}
    for key in cases[cases["status"] == "crashed"]["key"]:
        assert "Fatal Python error: Aborted" in store.case(key)["traceback"]
    m = store.metrics(s.run_id, wide=True)
    assert sorted(m["param.x"]) == [float(x) for x in range(1, 21)]
    assert all(m["y"] == m["param.x"] * GBIT_A)


def test_a_chunk_sent_to_a_worker_that_just_died_is_kept_for_its_death_to_rerun():
    """The loaded-machine flake of the test above: the pool queued a worker's next chunk (prefetch)
    after the worker had aborted but before its death was seen, and the run raised BrokenPipeError.
    The chunk stays the worker's, so the death (its sentinel) re-runs it with the rest."""
    import multiprocessing as mp
    from collections import deque

    from suite.runner.pool import _Worker

    parent, child = mp.get_context("fork").Pipe(duplex=True)
    child.close()  # the worker's end: gone with the worker
    w = object.__new__(_Worker)
    w.conn, w.chunk, w.immediate, w.tail, w.since = parent, deque([4]), False, 1, 0.0
    w.send([5, 6])  # raised BrokenPipeError
    assert list(w.chunk) == [4, 5, 6] and w.tail == 2
    parent.close()


@pytest.mark.parametrize("hanging", HANGING)
def test_in_process_raise_hang_skip(fake_registry, store, hanging):
    cases = _hanging_only(_modes_sweep(["ok", "raise", "hang", "skip"]).cases, hanging)
    s = run_cases(cases, store, options=ExecOptions(jobs=1, timeout=0.5), context=Context.build())
    assert s.by_status == {"ok": 3, "failed": 3, "timeout": len(hanging), "skipped": 3}
    _check_ok_values(store, s.run_id)


def test_failed_cases_are_retried_ok_ones_cached(fake_registry, store):
    exp = _modes_sweep(["ok", "raise"])
    s1 = run_cases(exp.cases, store, context=Context.build())
    s2 = run_cases(exp.cases, store, context=Context.build())
    assert (s1.computed, s2.computed, s2.cached, s2.failed) == (6, 3, 3, 3)


def test_execute_cases_run_serially_in_a_worker(fake_registry, store):
    exp = expand_entry({"technique": "fake", "variants": ["base"], "fidelities": ["model", "execute"],
                        "params": {"x": [1, 2]}}, context=Context.build())
    s = run_cases(exp.cases, store, options=ExecOptions(jobs=2), context=Context.build())
    assert s.ok == 4
    res = store.result(store.cases(s.run_id, fidelity="execute")["key"].iloc[0])
    assert res.metrics["t"].samples is not None and len(res.metrics["t"].samples) == 3


def test_pool_and_in_process_agree(fake_registry, tmp_path):
    from suite.results import Store

    exp = expand_entry({"technique": "fake", "params": {"x": [1, 2, 3], "n": [1, 2, 3]},
                        "set": {"network.-1.bandwidth": ["1 Gbit/s", "25 Gbit/s"]}}, context=Context.build())
    vals = []
    for jobs in (1, 2):
        with Store(tmp_path / f"s{jobs}.sqlite") as st:
            s = run_cases(exp.cases, st, options=ExecOptions(jobs=jobs), context=Context.build())
            assert s.ok == 36
            m = st.metrics(s.run_id)
            vals.append(dict(zip(m["key"] + "/" + m["name"], m["value"])))
    assert vals[0] == vals[1]


def test_unknown_executor(fake_registry, store):
    from suite.errors import SuiteError

    exp = _modes_sweep(["ok"])
    with pytest.raises(SuiteError, match="unknown executor 'nope'"):
        run_cases(exp.cases, store, executor="nope", context=Context.build())


def test_plugin_executor_through_the_hook(fake_registry, store):
    import types

    from suite import hookimpl
    from suite.registry import Registry
    from suite.runner.executors import Executor, run_case

    class Serial(Executor):
        name = "serial"

        def map_cases(self, cases, options):
            for c in cases:
                yield run_case(c)

    mod = types.ModuleType("serial_exec")
    mod.suite_executor = hookimpl(lambda name: Serial() if name == "serial" else None)
    import fakeplugin

    reg = Registry(entry_points_=[], modules=[("fake", fakeplugin), ("serial", mod)])
    exp = _modes_sweep(["ok"])
    s = run_cases(exp.cases, store, executor="serial", context=Context.build(registry=reg))
    assert s.ok == 3
    # 0.2's `registry=` (deprecated, announced for removal in 0.3.0) is gone: the context carries it
    with pytest.raises(TypeError, match="registry"):
        run_cases(exp.cases, store, executor="serial", registry=reg, rerun=True)


def test_an_executor_made_from_a_name_is_closed_when_its_run_ends(fake_registry, store):
    """run_cases closes the executor it made from a name (the dask executor's LocalCluster and
    client lived on until the executor was collected); one the caller hands it stays open, the
    caller's; a failure to close is a warning of the run, whose results are stored."""
    import types

    import fakeplugin

    from suite import hookimpl
    from suite.runner.executors import Executor, run_case

    made = []

    class Closing(Executor):
        name = "closing"
        closed = 0

        def map_cases(self, cases, options):
            for c in cases:
                yield run_case(c)

        def close(self):
            self.closed += 1
            if self.fail:
                raise OSError("scheduler gone")

    def executor(name):
        made.append(Closing())
        made[-1].fail = name == "closing-broken"
        return made[-1] if name.startswith("closing") else None

    mod = types.ModuleType("closing_exec")
    mod.suite_executor = hookimpl(executor)
    ctx = plugin_context(("fake", fakeplugin), ("closing", mod))
    s = run_cases(_modes_sweep(["ok"]).cases, store, executor="closing", context=ctx)
    assert (s.ok, len(made), made[0].closed, s.warnings) == (3, 1, 1, [])
    given = Closing()
    given.fail = False
    s = run_cases(_modes_sweep(["ok"]).cases, store, executor=given, rerun=True, context=ctx)
    assert (s.ok, given.closed) == (3, 0)
    s = run_cases(_modes_sweep(["ok"]).cases, store, executor="closing-broken", rerun=True, context=ctx)
    assert (s.ok, made[1].closed) == (3, 1)
    assert s.warnings == ["could not close executor 'closing': scheduler gone"]


def test_dask_executor_statuses_and_values_match_local(fake_registry, tmp_path, monkeypatch):
    """The fast twin of the LocalCluster test below: the dask executor's batches, shipped and run by
    its worker function in this process (tests/runner/fakedask.py), store the statuses and values a
    local run stores."""
    pytest.importorskip("distributed")
    from fakedask import LostBatchClient, run_on_fake_dask

    from suite.results import Store

    exp = expand_entry({"technique": "fake", "variants": ["base"],
                        "params": {"x": [1, 2, 3, 4], "mode": ["ok", "raise", "skip"]}}, context=Context.build())
    client = LostBatchClient(lose_first=False)
    s = run_on_fake_dask(tmp_path, monkeypatch, client, exp.cases, "dask")
    assert s.by_status == {"ok": 4, "failed": 4, "skipped": 4} and not client.lost
    assert sorted(k for b in client.submitted for k in b) == sorted(c.key for c in exp.cases)
    with Store(tmp_path / "dask.sqlite") as st:
        d = st.metrics(s.run_id)
        wide = st.metrics(s.run_id, wide=True)
    assert sorted(wide["param.x"]) == [1, 2, 3, 4]
    assert all(wide["y"] == [y_of(x, 1, "base", GBIT_A) for x in wide["param.x"]])
    with Store(tmp_path / "local.sqlite") as st:
        s = run_cases(exp.cases, st, options=ExecOptions(jobs=2), context=Context.build())
        loc = st.metrics(s.run_id)
    assert dict(zip(d["key"] + d["name"], d["value"])) == dict(zip(loc["key"] + loc["name"], loc["value"]))


@pytest.mark.slow
def test_dask_local_cluster_matches_local(fake_registry, tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    from pathlib import Path

    from suite.results import Store

    # dask workers are fresh processes: let them import the fake plugin module by reference
    here = str(Path(__file__).resolve().parent)
    monkeypatch.setenv("PYTHONPATH", here + ":" + __import__("os").environ.get("PYTHONPATH", ""))
    exp = expand_entry({"technique": "fake", "variants": ["base"],
                        "params": {"x": [1, 2, 3, 4], "mode": ["ok", "raise", "skip"]}}, context=Context.build())
    with Store(tmp_path / "dask.sqlite") as st:
        s = run_cases(exp.cases, st, executor="dask", options=ExecOptions(jobs=2), context=Context.build())
        assert s.by_status == {"ok": 4, "failed": 4, "skipped": 4}
        d = st.metrics(s.run_id)
    with Store(tmp_path / "local.sqlite") as st:
        s = run_cases(exp.cases, st, options=ExecOptions(jobs=2), context=Context.build())
        loc = st.metrics(s.run_id)
    assert dict(zip(d["key"] + d["name"], d["value"])) == dict(zip(loc["key"] + loc["name"], loc["value"]))


@pytest.mark.slow
def test_dask_existing_scheduler_and_crash(fake_registry, tmp_path, monkeypatch):
    pytest.importorskip("distributed")
    import logging
    import os
    from pathlib import Path

    from distributed import LocalCluster

    from suite.results import Store

    monkeypatch.setenv("PYTHONPATH", str(Path(__file__).resolve().parent) + ":" + os.environ.get("PYTHONPATH", ""))
    exp = expand_entry({"technique": "fake", "variants": ["base"], "params": {"x": [1, 2, 3], "mode": ["ok", "abort"]}},
                       context=Context.build())
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, Store(tmp_path / "s.sqlite") as st:
        s = run_cases(exp.cases, st, executor="dask", options=ExecOptions(scheduler=cluster.scheduler_address),
                      context=Context.build())
        assert s.by_status == {"ok": 3, "crashed": 3}
        errs = set(st.cases(s.run_id, status="crashed")["error"])
        # as on the local pool: the abort kills the case's sandboxed pool worker, never the dask worker
        assert errs == {"worker process died (SIGABRT) while running this case"}


@pytest.mark.slow
@pytest.mark.parametrize("hanging", HANGING)
def test_default_hang_guard_stops_a_stalled_model_case_without_a_timeout(fake_registry, store, hanging):
    """No --timeout: a model case that hangs is found by the hang guard (a worker silent for
    stall_timeout s is killed, its unreported batched cases are re-run one at a time) and stored
    as `timeout`; the others finish (a fresh-user trial saw `suite reproduce` freeze for ever).
    Every hanging case costs a wait of stall_timeout when it is re-run alone, on top of its batch's:
    one between ok cases (2 waits), three (4 waits). Slow: the fast suite's equivalent is
    tests/runner/test_faults.py::test_local_pool_hang_guard_without_timeout[1.0-block_c] (the same
    guard, statuses, message and healthy values, the case hanging in C instead of in time.sleep)."""
    cases = _hanging_only(_modes_sweep(["ok", "hang"]).cases, hanging)
    s = run_cases(cases, store, options=ExecOptions(jobs=1, stall_timeout=1.0), context=Context.build())
    cases = store.cases(s.run_id)
    by_mode = {m: set(cases[cases["param.mode"] == m]["status"]) for m in ("ok", "hang")}
    assert by_mode == {"ok": {"ok"}, "hang": {"timeout"}}
    err = set(cases[cases["param.mode"] == "hang"]["error"])
    assert err == {"stalled: no progress for 1 s (the default hang guard; --timeout S sets a limit)"}
    _check_ok_values(store, s.run_id)


def _raise_keyboard_interrupt(scenario):
    raise KeyboardInterrupt("from the plugin")


def test_a_keyboard_interrupt_raised_by_a_plugin_fails_only_its_case(fake_registry, store):
    """In a worker (which ignores SIGINT) a KeyboardInterrupt can only come from plugin code: the case
    fails with a reason (it was stored as 'crashed: worker process exited with status 1')."""
    import dataclasses

    from suite.runner.case import Resolver

    tech = dataclasses.replace(fake_registry.technique("fake"), fidelities={"model": _raise_keyboard_interrupt})
    (case,) = [Resolver(context=Context.build()).resolve(tech, __import__("suite").ScenarioSpec("base"))]
    s = run_cases([case], store, options=ExecOptions(jobs=1), context=Context.build())
    row = store.case(case.key)
    assert (s.failed, row["status"]) == (1, "failed")
    assert row["error"] == "KeyboardInterrupt raised by the plugin: KeyboardInterrupt: from the plugin"


def _two_package_techniques():
    """Two techniques whose evaluate functions live in two top-level packages ('pkga', 'pkgb'),
    each reporting the pid of the process that ran it."""
    import types

    from suite import Paper, Param, Technique, Variant

    techs = []
    for pkg in ("pkga", "pkgb"):
        mod = types.ModuleType(pkg)
        exec("import os\nfrom suite import Result\n"
             "def ev(s):\n    return Result().add('pid', os.getpid(), '1', 'none')\n", mod.__dict__)
        techs.append(Technique(name=f"t-{pkg}", title=pkg, category="communication",
                               paper=Paper("p", year=2024, venue="tests"),
                               variants=[Variant("base", "b", baseline=True)], fidelities={"model": mod.ev},
                               parameters={"i": Param(int, 0)}, needs_profile=False, needs_workload=False))
    return techs


def test_a_pool_worker_never_runs_two_packages_cases():
    """Cases of two plugin packages, interleaved, on one worker slot: each package's cases run in
    processes of their own (a plugin that corrupts its process cannot touch another's numbers;
    a hostile plugin's patched collective_time once made Poseidon store a wrong number as ok)."""
    from suite import ScenarioSpec
    from suite.runner import resolve_case
    from suite.runner.executors import LocalExecutor, package_of

    a, b = _two_package_techniques()
    assert (package_of(a), package_of(b)) == ("pkga", "pkgb")
    ctx = session_context()
    cases = [resolve_case(t, ScenarioSpec(variant="base", params={"i": i}), context=ctx)
             for i in range(6) for t in (a, b)]
    outs = list(LocalExecutor().map_cases(cases, ExecOptions(jobs=1, isolate=True)))
    assert len(outs) == 12 and all(o["status"] == "ok" for o in outs)
    by_key = {c.key: c.technique for c in cases}
    pids = {"t-pkga": set(), "t-pkgb": set()}
    for o in outs:
        ((name, pid, _unit, _direction),) = o["metrics"]  # outcome metrics: [name, value, unit, direction]
        pids[by_key[o["key"]]].add(pid)
    assert pids["t-pkga"] and pids["t-pkgb"] and not (pids["t-pkga"] & pids["t-pkgb"])


def test_what_a_plugin_prints_goes_to_stderr_not_the_commands_stdout(capfd):
    """A plugin's print() and C-level writes to fd 1 must not corrupt `--format json` output:
    in a pool worker both go to stderr, in-process print() does."""
    import types

    from suite import Paper, Technique, Variant
    from suite import ScenarioSpec
    from suite.runner import resolve_case
    from suite.runner.executors import LocalExecutor

    mod = types.ModuleType("pkgnoisy")
    exec("import os\nfrom suite import Result\n"
         "def ev(s):\n    print('PY-NOISE')\n    os.write(1, b'FD-NOISE\\n')\n"
         "    return Result().add('y', 1.0, 's', 'lower')\n", mod.__dict__)
    t = Technique(name="t-noisy", title="noisy", category="communication", paper=Paper("p", year=2024, venue="tests"),
                  variants=[Variant("base", "b", baseline=True)], fidelities={"model": mod.ev},
                  needs_profile=False, needs_workload=False)
    case = resolve_case(t, ScenarioSpec(variant="base"), context=session_context())
    outs = list(LocalExecutor().map_cases([case], ExecOptions(jobs=1, isolate=True)))
    assert outs[0]["status"] == "ok"
    got = capfd.readouterr()
    assert "PY-NOISE" not in got.out and "FD-NOISE" not in got.out
    assert "PY-NOISE" in got.err and "FD-NOISE" in got.err


def test_a_case_the_executor_never_reports_is_stored_crashed(fake_registry, store):
    """The Executor contract is one outcome per case: a plugin executor that drops one (a lost
    SLURM array task, say) must not leave a ``done`` run with that case unstored."""
    from suite.runner.executors import Executor, run_case

    class Lossy(Executor):
        name = "lossy"

        def map_cases(self, cases, options):
            for c in cases[1:]:  # the first case is lost; the second is reported twice
                yield run_case(c)
            yield run_case(cases[1])

    exp = _modes_sweep(["ok"])
    s = run_cases(exp.cases, store, executor=Lossy(), context=Context.build())
    assert (s.computed, s.ok, s.failed, s.status) == (3, 2, 1, "failed")
    lost = store.case(exp.cases[0].key)
    assert (lost["status"], lost["error"]) == ("crashed", "executor 'lossy' returned no outcome for this case")


def test_an_outcome_for_a_case_not_given_is_an_error(fake_registry, store):
    from suite.errors import SuiteError
    from suite.runner.executors import Executor, crashed_outcome

    class Wrong(Executor):
        name = "wrong"

        def map_cases(self, cases, options):
            yield crashed_outcome("not-a-key", "x")

    with pytest.raises(SuiteError, match="executor 'wrong': returned an outcome for case 'not-a-key'"):
        run_cases(_modes_sweep(["ok"]).cases, store, executor=Wrong(), context=Context.build())


def test_an_executors_generator_is_closed_when_the_run_ends_on_an_error(fake_registry, store):
    """Review of 0.3.13: only a Ctrl-C closed the executor's generator, so a run ended by an error
    (here an outcome for a key it was not given) left it open, with whatever it had installed
    (the dask executor's Ctrl-C holder and stop-signal handlers), for as long as the traceback lived."""
    from suite.errors import SuiteError
    from suite.runner.executors import Executor

    state = {"closed": False}

    class Stray(Executor):
        name = "stray"

        def map_cases(self, cases, options):
            try:
                yield {"key": "not-a-case-key", "status": "ok", "metrics": []}
            finally:
                state["closed"] = True

    with pytest.raises(SuiteError, match="not one of the cases it was given") as err:
        run_cases(_modes_sweep(["ok"]).cases, store, executor=Stray(), context=Context.build())
    assert err.value.__traceback__ is not None  # the traceback, which holds the generator, still lives
    assert state["closed"]
