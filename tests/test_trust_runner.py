"""Issue 16, the runner and the store: results that cannot lie, runs that end in a known state,
sweeps and stores that refuse bad input with one line and touch nothing.

Each test names the defect of issue 16 it pins; each failed on the code before the trust work
(commit d821f04) and passes now.
"""

from __future__ import annotations

import functools
import json
import math
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from suite import Paper, Result, Technique, Variant
from suite.results import Store
from suite.runner.executors import evaluate_outcome
from suite.technique import Scenario


@pytest.fixture
def cli(suite_cli):
    """``cli(*args)``: ``suite ARGS`` on the session's one context (no plugin loading tested here)."""
    return functools.partial(suite_cli, catch_exceptions=False)


def _refuse_constants(name: str):
    raise AssertionError(f"JSON output contains {name}")


def strict_loads(text: str):
    """json.loads that fails on NaN / Infinity / -Infinity (what a strict parser does)."""
    return json.loads(text, parse_constant=_refuse_constants)


# --------------------------------------------------------------------------- metrics that cannot be true


def _tech(value: float, unit: str) -> Technique:
    return Technique(name="liar", title="returns one metric", category="communication",
                     paper=Paper("P", year=2024, venue="tests"), variants=[Variant("base", "b", baseline=True)],
                     fidelities={"model": lambda s: Result().add("m", value, unit, "lower")},
                     needs_profile=False, needs_workload=False)


def _outcome(value: float, unit: str) -> dict:
    scen = Scenario(technique="liar", variant="base", fidelity="model")
    return evaluate_outcome(_tech(value, unit), scen, "k" * 20)


@pytest.mark.parametrize("value, unit, reason", [
    (math.nan, "s", "metric 'm' is nan (s): expected a finite number"),
    (math.inf, "s", "metric 'm' is inf (s): expected a finite number"),
    (-math.inf, "1", "metric 'm' is -inf (1): expected a finite number"),
    (-0.5, "s", "metric 'm' is -0.5 s: expected >= 0 for a quantity in s"),
    (-3.0, "GiB", "metric 'm' is -3 GiB: expected >= 0 for a quantity in GiB"),
    (-1e9, "B/s", "metric 'm' is -1e+09 B/s: expected >= 0 for a quantity in B/s"),
    (-2.0, "samples/s", "metric 'm' is -2 samples/s: expected >= 0 for a quantity in samples/s"),
])
def test_impossible_metric_fails_the_case_with_one_line(value, unit, reason):
    out = _outcome(value, unit)
    assert out["status"] == "failed"
    assert out["error"] == f"BadMetric: liar: {reason}"
    assert out["metrics"] is None


@pytest.mark.parametrize("value, unit", [(-0.25, "1"), (-4.0, "%"), (0.0, "s"), (2.5e-3, "s")])
def test_possible_metric_is_stored_ok(value, unit):
    """A negative dimensionless value (a loss change, a relative error) is a real result."""
    out = _outcome(value, unit)
    assert out["status"] == "ok" and out["metrics"] == [["m", value, unit, "lower"]]


def test_json_output_never_contains_nan_or_infinity(tmp_path, cli):
    """A store written by an older suite may hold inf/NaN; every --format json prints strict JSON."""
    path = tmp_path / "s.sqlite"
    with Store(path) as st:
        run = st.begin_run(command="test")
        ident = {"technique": "old", "technique_version": "0", "variant": "base", "fidelity": "model",
                 "params": {}, "seed": 0, "key": "a" * 20}
        st.add_outcome(ident, {"key": "a" * 20, "status": "ok", "duration": math.inf,
                               "metrics": [["t", math.inf, "s", "lower"], ["r", math.nan, "1", "none"],
                                           ["ok", 2.0, "s", "lower"]]}, run)
        st.finish_run(run, "done", {"total": 1, "computed": 1, "ok": 1})
    r = cli("results", "show", "latest", "--format", "json", "--store", str(path))
    assert r.exit_code == 0, r.output
    (case,) = strict_loads(r.stdout)["cases"]
    assert (case["t"], case["ok"]) == (None, 2.0)
    r = cli("results", "list", "--format", "json", "--store", str(path))
    assert r.exit_code == 0 and strict_loads(r.stdout)[0]["run"] == 1


# --------------------------------------------------------------------------- sweep size


def _values(n: int) -> str:
    return ",".join(str(i) for i in range(1, n + 1))


def test_huge_sweep_is_refused_before_it_is_expanded(cli):
    """4 variants x 2000 x 2000 = 16,000,000 cases: counted and refused at once (a --dry-run too)."""
    r = cli("run", "--technique", "poseidon", "--param", f"nodes={_values(2000)}",
            "--param", f"batch_per_node={_values(2000)}", "--dry-run")
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [  # --dry-run: the count first, then the refusal
        "16,000,000 case(s) in this sweep",
        "error: command line: expected at most 1,000,000 cases (--max-cases), got a sweep of 16,000,000 cases; "
        "narrow it or raise --max-cases"]


def test_max_cases_limit_and_dry_run_count(cli):
    args = ["run", "--technique", "poseidon", "--param", "nodes=1,2,4", "--dry-run"]  # 4 variants x 3
    r = cli(*args, "--max-cases", "11")
    assert r.exit_code == 2 and "expected at most 11 cases (--max-cases), got a sweep of 12 cases" in r.output
    r = cli(*args, "--max-cases", "12")
    assert r.exit_code == 0, r.output
    assert "12 case(s) (dry run)" in r.output
    r = cli(*args, "--format", "json")
    assert len(strict_loads(r.stdout)) == 12


# --------------------------------------------------------------------------- the store


def test_store_refuses_another_applications_database_and_leaves_it_untouched(tmp_path, cli):
    db = tmp_path / "contacts.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE contacts (name TEXT)")
    conn.execute("INSERT INTO contacts VALUES ('ada')")
    conn.commit()
    conn.close()
    before = db.read_bytes()
    for args in (["run", "--technique", "poseidon", "--variant", "poseidon", "--param", "nodes=2", "-q"],
                 ["results", "list"]):
        r = cli(*args, "--store", str(db))
        assert r.exit_code == 2, r.output
        (line,) = r.output.strip().splitlines()
        assert line.startswith(f"error: store {str(db)!r}: ") and "dlsys-suite store" in line
    assert db.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["contacts.db"]  # no -wal, no -shm


def test_store_in_a_missing_folder_is_refused_not_created(tmp_path, cli):
    where = tmp_path / "no" / "such" / "s.sqlite"
    r = cli("run", "--technique", "poseidon", "--variant", "poseidon", "--param", "nodes=2", "-q",
            "--store", str(where))
    assert r.exit_code == 2
    assert r.output.strip().splitlines() == [
        f"error: store {str(where)!r}: expected an existing folder, got no folder {str(where.parent)!r} "
        f"(create it first)"]
    assert not (tmp_path / "no").exists()


def _without_write_rights() -> list[str]:
    """A command prefix under which this user cannot write what its mode bits forbid (root can:
    it then runs without the capabilities that override file permissions)."""
    if os.geteuid() != 0:
        return []
    import shutil

    if shutil.which("setpriv") is None:
        pytest.skip("running as root without setpriv: cannot make a folder read-only")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]


def _drop_write_rights_here() -> None:
    """In a forked child: what :func:`_without_write_rights`'s prefix gives a new process, for this
    one (root loses the capabilities that override file permissions: CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH, out of its effective and permitted sets through capset(2))."""
    if os.geteuid() != 0:
        return
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # two {effective, permitted, inheritable}: capabilities 0-31, 32-63
    if libc.capget(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capget")
    keep = ~((1 << 1) | (1 << 2)) & 0xFFFFFFFF  # CAP_DAC_OVERRIDE = 1, CAP_DAC_READ_SEARCH = 2
    data[0] &= keep
    data[1] &= keep
    if libc.capset(header, data) != 0:
        raise OSError(ctypes.get_errno(), "capset")


def _list_without_write_rights(path: Path) -> None:
    """A :mod:`forkrun` target: ``suite results list`` of *path* without the rights to write its folder
    (checked first: a store root could still write would prove nothing)."""
    import forkrun

    _drop_write_rights_here()
    try:
        (path.parent / "probe").touch(exist_ok=False)
    except PermissionError:
        pass
    else:
        raise SystemExit("the store's folder is still writable")
    forkrun.suite_main(["results", "list", "--format", "json", "--store", str(path)])


@pytest.mark.parametrize("how", ["fork", pytest.param("process", marks=pytest.mark.slow)])
def test_read_only_store_can_be_listed(tmp_path, cli, how):
    """A store on read-only media (here: a folder and file this user may not write) is readable:
    listed by a new interpreter started without write rights (slow), or by a child forked from
    this process that gave them up (fast)."""
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "s.sqlite"
    r = cli("run", "--technique", "poseidon", "--variant", "poseidon", "--param", "nodes=2", "-q",
            "--store", str(path))
    assert r.exit_code == 0, r.output
    if how == "fork" and os.geteuid() == 0 and not sys.platform.startswith("linux"):
        pytest.skip("running as root off Linux: no capset(2) to give up the rights that override file modes")
    prefix = _without_write_rights() if how == "process" else []
    path.chmod(0o444)
    folder.chmod(0o555)
    try:
        env = {k: v for k, v in os.environ.items() if k != "SUITE_STORE"}
        if how == "process":
            res = subprocess.run([*prefix, sys.executable, "-m", "suite", "results", "list", "--format", "json",
                                  "--store", str(path)], capture_output=True, text=True, env=env, timeout=60)
        else:
            import forkrun

            res = forkrun.run(_list_without_write_rights, path, env=env, timeout=60)
        assert res.returncode == 0, res.stderr
        (run,) = strict_loads(res.stdout)
        assert (run["run"], run["status"], run["ok"]) == (1, "done", 1)
        assert sorted(p.name for p in folder.iterdir()) == ["s.sqlite"]
    finally:
        folder.chmod(0o755)
        path.chmod(0o644)


# --------------------------------------------------------------------------- runs end in a known state


def test_running_run_whose_process_is_gone_reads_as_interrupted(tmp_path):
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    with Store(tmp_path / "s.sqlite") as st:
        mine = st.begin_run(command="still running")
        dead = st.begin_run(command="killed with -9")
        st.conn.execute("UPDATE runs SET pid = ? WHERE id = ?", (gone.pid, dead))
        assert st.run_info(mine)["status"] == "running"  # this process is alive
        assert st.run_info(dead)["status"] == "interrupted"
        assert list(st.runs()["status"]) == ["running", "interrupted"]


SLOW = '''
import time
from suite import hookimpl, Paper, Param, Result, Technique, Variant


def slow(s):
    time.sleep(s.params["delay"])
    return Result().add("y", float(s.params["i"]), "s", "lower")


T = Technique(name="evil-slow", title="slow", category="communication", paper=Paper("P", year=2024, venue="t"),
              variants=[Variant("base", "b", baseline=True)], fidelities={"model": slow},
              parameters={"i": Param(int, 0), "delay": Param(float, 0.0)},
              needs_profile=False, needs_workload=False)


@hookimpl
def suite_techniques():
    return [T]
'''


def _install(site: Path, pkg: str, body: str) -> None:
    (site / pkg).mkdir(parents=True)
    (site / pkg / "__init__.py").write_text(textwrap.dedent(body))
    info = site / f"{pkg}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {pkg.replace('_', '-')}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(f"[suite.plugins]\n{pkg} = {pkg}\n")


def _ok_count(store: Path) -> int:
    try:
        conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
        try:
            return conn.execute("SELECT count(*) FROM cases WHERE status = 'ok'").fetchone()[0]
        finally:
            conn.close()
    except sqlite3.DatabaseError:  # not created yet
        return 0


def _suite_process(site: Path, args: list[str], env: dict[str, str]):
    return subprocess.Popen([sys.executable, "-m", "suite", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def _suite_forked(site: Path, args: list[str], env: dict[str, str]):
    """The same command in a child forked from this process (tests/forkrun.py: a Popen's interface),
    its store committing every 0.1 s instead of every 2 s (the writer's default, which the
    new-interpreter variant keeps): the test waits for two committed cases before the signal."""
    import forkrun

    return forkrun.Forked(_suite_main_quick_commits, args, site, env=env, argv=["suite", *args])


def _suite_main_quick_commits(args: list[str], site: Path) -> None:
    import forkrun
    from suite.cli import run as run_cmd
    from suite.results import Store

    if not callable(getattr(run_cmd, "open_store", None)):
        raise RuntimeError("suite.cli.run.open_store is gone: update this test's quick-commit store")
    run_cmd.open_store = lambda path: Store(path, batch_seconds=0.1)  # in the forked child only
    forkrun.suite_main(args, site)


# SIGHUP's path is SIGTERM's (one handler); its fast twins: the handler tests below
@pytest.mark.parametrize("sig", [signal.SIGTERM, pytest.param(signal.SIGHUP, marks=pytest.mark.slow)],
                         ids=["SIGTERM", "SIGHUP"])
@pytest.mark.parametrize("start", [pytest.param(_suite_process, marks=pytest.mark.slow), _suite_forked],
                         ids=["process", "fork"])
def test_sigterm_marks_the_run_interrupted_and_keeps_finished_cases(tmp_path, start, sig):
    """SIGTERM (a batch scheduler) and SIGHUP (a closed ssh session: ops14 saw exit 129, no
    message, the run left ``running`` and 10 of 22 evaluated cases lost) stop a run as Ctrl-C does."""
    site = tmp_path / "site"
    _install(site, "evil_slow", SLOW)
    store = tmp_path / "s.sqlite"
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(site)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    proc = start(site, ["run", "--technique", "evil-slow", "--param", f"i={_values(60)}", "--param", "delay=0.2",
                        "-q", "--store", str(store)], env)
    try:
        deadline = time.monotonic() + 60
        while _ok_count(store) < 2 and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert proc.poll() is None, "the sweep ended before the signal"
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    assert "interrupted: run 1 stored" in err
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        status, finished, computed = conn.execute("SELECT status, finished, computed FROM runs").fetchone()
        n_ok = conn.execute("SELECT count(*) FROM cases WHERE status = 'ok'").fetchone()[0]
    finally:
        conn.close()
    assert status == "interrupted" and finished is not None
    assert 2 <= n_ok == computed < 60


def test_a_pool_worker_dies_of_sighup_as_of_sigterm_not_of_the_coordinators_handler():
    """The coordinator turns SIGTERM and SIGHUP into an interrupt (suite.runner.engine); a worker it
    forks puts both back to their default (dying: its case is stored crashed), so a SIGHUP sent to
    the whole process group (a closed ssh session) does not raise the interrupt in plugin code."""
    from suite.runner.engine import _restore_sigterm, _trap_sigterm

    old = _trap_sigterm()
    try:
        assert signal.getsignal(signal.SIGHUP) is not signal.SIG_DFL  # trapped here, in the coordinator
        assert _worker_signals() == (signal.SIG_DFL, signal.SIG_DFL)  # SIGTERM and SIGHUP both at their default
    finally:
        _restore_sigterm(old)


def _worker_signals() -> tuple:
    """(SIGTERM, SIGHUP) handlers of a pool worker forked now, as its set-up leaves them (each
    SIG_DFL, SIG_IGN or another: 'handler')."""
    from suite.runner.pool import _worker_setup

    names = {0: signal.SIG_DFL, 1: signal.SIG_IGN, 2: "handler"}
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 99
        try:
            _worker_setup(os.open(os.devnull, os.O_WRONLY), os.getppid())
            kind = {signal.SIG_DFL: 0, signal.SIG_IGN: 1}
            code = 10 * kind.get(signal.getsignal(signal.SIGTERM), 2) + kind.get(signal.getsignal(signal.SIGHUP), 2)
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return names[code // 10], names[code % 10]


def _run_without_write_rights(path: Path) -> None:
    """A :mod:`forkrun` target: ``suite run`` into a new store at *path*, without the rights to write its folder."""
    import forkrun

    _drop_write_rights_here()
    forkrun.suite_main(["run", "--technique", "poseidon", "--variant", "poseidon", "--param", "nodes=2", "-q",
                        "--store", str(path)])


def test_a_new_store_in_a_read_only_folder_says_the_folder_is_not_writable(tmp_path):
    """ops14: `--store rod/s.sqlite` in a read-only folder gave SQLite's "cannot open: unable to
    open database file", which does not say why."""
    import forkrun

    if os.geteuid() == 0 and not sys.platform.startswith("linux"):
        pytest.skip("running as root off Linux: no capset(2) to give up the rights that override file modes")
    folder = tmp_path / "rod"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        env = {k: v for k, v in os.environ.items() if k != "SUITE_STORE"}
        res = forkrun.run(_run_without_write_rights, folder / "s.sqlite", env=env, timeout=60)
    finally:
        folder.chmod(0o755)
    assert res.returncode == 2, res.stderr
    assert res.stderr.strip().splitlines() == [
        f"error: store {str(folder / 's.sqlite')!r}: cannot create it: the folder {str(folder)!r} is not writable"]


def test_a_sighup_ignored_by_nohup_stays_ignored_through_a_run():
    """``nohup suite run ...`` (SIGHUP ignored: the run is to outlive the ssh session) is not turned
    into an interrupt by the run's SIGHUP handler; SIGTERM still is."""
    from suite.runner.engine import _on_sigterm, _restore_sigterm, _trap_sigterm

    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        old = _trap_sigterm()
        try:
            assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
            assert signal.getsignal(signal.SIGTERM) is _on_sigterm
        finally:
            _restore_sigterm(old)
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)


@pytest.mark.parametrize("detaches", [False, True, None], ids=["pool-like", "jobs-outlive", "undeclared"])
def test_an_executor_whose_jobs_outlive_the_session_leaves_sighup_be(tmp_path, shared_context, detaches):
    """SIGHUP (a closed ssh session) stops a run like Ctrl-C, which cancels a batch executor's jobs
    (the slurm plugin's): an executor that declares ``detaches_on_hangup`` keeps SIGHUP's default
    for the run, so the coordinator ends and the jobs go on for the next run to collect; SIGTERM is
    trapped either way. An executor that declares nothing (every one before 0.3.12) keeps 0.3.11's
    behaviour (SIGHUP at its default) rather than have its jobs cancelled by an upgrade (review14)."""
    from suite.results import Store
    from suite.runner import expand_entry, run_cases
    from suite.runner.engine import _on_sigterm
    from suite.runner.evaluate import evaluate_outcome
    from suite.runner.options import Executor

    seen = []

    class Jobs(Executor):
        name = "jobs"
        detaches_on_hangup = detaches

        def map_cases(self, cases, options):
            seen.append((signal.getsignal(signal.SIGHUP), signal.getsignal(signal.SIGTERM)))
            for c in cases:
                yield evaluate_outcome(c.tech, c.scenario, c.key, "summary")

    cases = expand_entry({"technique": "poseidon", "variants": ["poseidon"], "params": {"nodes": [2]}},
                         context=shared_context).cases
    before = signal.getsignal(signal.SIGHUP)
    with Store(tmp_path / "s.sqlite") as st:
        s = run_cases(cases, st, executor=Jobs(), context=shared_context)
    assert s.ok == 1 and seen[0][1] is _on_sigterm
    assert (seen[0][0] is _on_sigterm) if detaches is False else (seen[0][0] is before)
    assert signal.getsignal(signal.SIGHUP) is before


def test_a_pool_worker_under_nohup_keeps_sighup_ignored():
    """review14: under ``nohup`` (SIGHUP ignored) the run goes on after the session closes, but its
    workers put SIGHUP back to its default and died of it: 2 of 40 cases of a --timeout run crashed."""
    before = signal.signal(signal.SIGHUP, signal.SIG_IGN)
    try:
        assert _worker_signals() == (signal.SIG_DFL, signal.SIG_IGN)  # SIGTERM at its default, SIGHUP still ignored
    finally:
        signal.signal(signal.SIGHUP, before)


def test_sighup_moves_a_terminal_s_output_to_devnull_so_the_teardown_cannot_fail():
    """review14: with the terminal gone, the progress display's teardown wrote to it (EIO): exit 1 and
    the run row left 'running'. The handler points a tty's stdout/stderr at /dev/null; a pipe stays."""
    import pty

    from suite.runner.engine import Terminated, _on_sigterm

    main_fd, tty_fd = pty.openpty()
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            os.dup2(tty_fd, 2)
            os.dup2(w, 1)
            try:
                _on_sigterm(signal.SIGHUP, None)
            except Terminated:
                code = 10 * (not os.isatty(2)) + (os.fstat(1).st_ino == os.fstat(w).st_ino)
        finally:
            os._exit(code)
    os.close(tty_fd)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    os.close(main_fd)
    os.close(r)
    assert os.waitstatus_to_exitcode(status) == 11  # stderr (a tty) now /dev/null, stdout (a pipe) kept
