"""Test configuration: hypothesis profiles and isolation of the plugin registry.

Profiles (select with HYPOTHESIS_PROFILE, default ``dev``; CI sets ``ci``):

* ``ci``: derandomized, bounded examples, no deadline (2 shared cores);
* ``dev``: a few more examples, randomized.
"""

from __future__ import annotations

import os
import sys
import tempfile

import pytest


def _rewrite_only_test_files() -> None:
    """Let pytest rewrite the asserts of the test files and conftests only, not of the packages
    that provide pytest plugins (hypothesis, pytest_benchmark, platformdirs, and this project's
    ``suite``, whose kit is a plugin): pytest marks every top-level package of such a distribution
    for rewriting, so each of their modules imported from here on was parsed from source, walked
    and compiled again instead of loaded from its byte code (hypothesis alone: 73 modules), ~1.1 s
    CPU per session. Their asserts raise as before, with Python's plain message. The set is
    pytest's own (``AssertionRewritingHook._must_rewrite``); if a pytest release renames it, this
    does nothing and the session only costs what it did."""
    for hook in sys.meta_path:
        marked = getattr(hook, "_must_rewrite", None)
        if type(hook).__name__ == "AssertionRewritingHook" and isinstance(marked, set):
            marked.difference_update({"hypothesis", "_hypothesis_globals", "_hypothesis_ftz_detector",
                                      "pytest_benchmark", "platformdirs", "suite"})


_rewrite_only_test_files()


def _collector_off_while_collecting() -> bool:
    """Turn the cyclic garbage collector off until the tests are collected (see
    :func:`pytest_collection`); return whether it was on. Collecting imports every test module,
    plugin and library and rewrites the asserts of ~150 files into millions of short-lived AST
    nodes: each youngest-generation overflow then triggered collections whose oldest-generation
    passes walked the growing heap of everything imported so far (23 full passes), ~40% of the
    collection's CPU (`pytest --collect-only -m "not slow"`: 13.1 -> 7.3 s CPU, min of 3
    alternated, load 3-5). What it leaves is reference-counted (AST nodes hold no cycles); peak RSS
    283 -> 288 MB."""
    import gc

    was_on = gc.isenabled()
    gc.disable()
    return was_on


_COLLECTOR_WAS_ON = _collector_off_while_collecting()


def _youngest_collections_rarer(gen0: int = 10_000) -> None:
    """Collect the youngest generation every *gen0* allocations instead of every 700, for the
    whole session (set before any ``suite`` module reads the process's thresholds, so plugin code
    in a test still runs under the process's own: tests/runner/test_gc_threshold.py). The tests
    allocate millions of short-lived objects on a heap of ~1 GB (every library loaded): at 700,
    tests/plugins ran 4,222 youngest, 382 middle and 19 full collections, 2.85 s of its 52.5 s CPU;
    at 10,000, 224, 19 and 2, 1.10 s of 50.4 s (one run each, a gc.callbacks timer, load 5-6). The
    other thresholds, and so when a full collection may run, are Python's."""
    import gc

    gc.set_threshold(gen0, *gc.get_threshold()[1:])


_youngest_collections_rarer()


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    """The collector back on once the tests are collected (also after a collection error), with
    what collection loaded (modules, test functions, parameters) moved out of its walks
    (:func:`gc.freeze`): it lives for the whole session. A run of the runner unfreezes it again
    (suite.runner.engine's collector set-up), which only gives back the walks."""
    import gc

    try:
        yield
    finally:
        if _COLLECTOR_WAS_ON:
            gc.freeze()
            gc.enable()
        _one_blas_thread()


def pytest_collection_modifyitems(config, items):
    """tests/plugins last, every other test in its usual order before them: the plugin tests grow
    this process from ~400 MB to ~1 GB (workloads, results, models kept by module fixtures), and every
    test that forks (a run's worker, a kit check, tests/forkrun.py) pays for the pages it maps: a
    bare fork cost 5.7 ms at 308 MB and 24.5 ms at 1 GB, and tests/runner, run after tests/plugins,
    used 16.1 s CPU (10.0 s of it system time) against 10.6 s alone."""
    items.sort(key=lambda item: "tests/plugins/" in item.nodeid)  # stable: the order within each part kept


#: the session's limit of every BLAS / OpenMP pool loaded (held for the whole session)
_SESSION_POOLS: list[object] = []


def _one_blas_thread() -> None:
    """Every BLAS and OpenMP pool of this process at one thread for the whole session, as on the
    one-core machine the suite's time bound is set for (:func:`suite.perf.blas_threads`: numpy's
    and scipy's OpenBLAS, each loaded pool; the environment is left alone, so the commands and
    probes the tests start keep the machine's default). On two cores OpenBLAS's second thread
    spun after each call (sched_yield) waiting for the next one: tests/plugins' three heaviest
    files took 16.8 s CPU with the default 2 threads and 13.4 s with 1 (two runs each, load 2-3), and
    a CPU quota of one core (docker --cpus=1), which OpenBLAS does not see, pays that spin too.
    A forked worker inherits the limit. Tests about pinning start from unpinned pools
    (:func:`blas_unpinned`)."""
    from suite.perf import blas_threads

    if not _SESSION_POOLS:
        _SESSION_POOLS.append(blas_threads(1))


@pytest.fixture
def blas_unpinned():
    """Every BLAS and OpenMP pool at 2 threads for the test (what a two-core machine gives
    unpinned; the session holds them at one, :func:`_one_blas_thread`), so a test that checks code
    pins them to one can fail; back at one afterwards."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=2):
        yield

from hypothesis import HealthCheck, settings  # noqa: E402  (after the rewrite marks are narrowed)

settings.register_profile(
    "ci",
    derandomize=True,
    max_examples=25,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors],
)
settings.register_profile(
    "dev",
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.differing_executors],
)
# Tests never see this machine's per-user profiles (a calibrated `local` written by
# `suite hardware calibrate`) nor write to the repository's default store, nor to the store and
# cache a user's shell names (SUITE_STORE / SUITE_CACHE_DIR / SUITE_CONFIG_DIR / SUITE_PROFILES are
# replaced, not defaulted: a user with SUITE_STORE set had tests write into, and read, their results).


def _session_dir(prefix: str) -> str:
    """A new temporary folder, removed with everything in it when this process exits (a test
    session's config, store, cache and byte-code folders were left behind: 971 sessions on one
    machine had kept 5.8 GB of byte code under /tmp)."""
    import atexit
    import shutil

    path, creator = tempfile.mkdtemp(prefix=prefix), os.getpid()

    def remove() -> None:  # by the session's process only, not by a forked child that exits normally
        if os.getpid() == creator:
            shutil.rmtree(path, ignore_errors=True)

    atexit.register(remove)
    return path


os.environ["XDG_CONFIG_HOME"] = _session_dir("suite-test-config-")
os.environ.pop("SUITE_CONFIG_DIR", None)
os.environ.pop("SUITE_PROFILES", None)
os.environ["SUITE_STORE"] = os.path.join(_session_dir("suite-test-store-"), "suite.sqlite")
# nor write to this machine's cache (the unit conversions, the `hardware list` index)
os.environ["SUITE_CACHE_DIR"] = _session_dir("suite-test-cache-")

# The command-line processes tests start (`python -m suite ...`, a plugin's venv) keep their byte code
# in a temporary folder where the environment forbids writing it (PYTHONDONTWRITEBYTECODE, as on CI
# machines): else each one compiles the core and the plugins from source again (~0.25 s CPU a process).
if os.environ.pop("PYTHONDONTWRITEBYTECODE", None) is not None:
    if "PYTHONPYCACHEPREFIX" not in os.environ:
        os.environ["PYTHONPYCACHEPREFIX"] = _session_dir("suite-test-pyc-")

settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))


@pytest.fixture
def isolated_registry():
    """Yield a function making every context built during the test load an in-process registry of
    the given plugin modules (through ``suite.context.default_registry``); undone afterwards."""
    from suite.registry import Registry

    mp = pytest.MonkeyPatch()

    def install(*modules, strict=False):
        reg = Registry(entry_points_=[], modules=list(modules), strict=strict)
        mp.setattr("suite.context.default_registry", lambda strict=None: reg)
        return reg

    yield install
    mp.undo()


@pytest.fixture(scope="session")
def shared_context():
    """One :class:`suite.context.Context` of the installed plugins and the shipped profiles, built
    once per session, for tests that run commands but do not test plugin loading (each ``suite``
    command through CliRunner would otherwise load every plugin again: ~0.3 s CPU). Tests that
    change the environment a context reads (SUITE_PROFILES, a substituted registry, profile files)
    build their own. It is :func:`session_context.session_context`'s, which module helpers read at
    collection (one context for the process, not one more for the fixture)."""
    from session_context import session_context

    return session_context()


@pytest.fixture(scope="session")
def suite_cli(shared_context):
    """``invoke(*args)`` or ``invoke([args])``: the ``suite`` command through CliRunner with :func:`shared_context` as its
    context (the CLI's own injection point: :func:`suite.cli.common.get_context` takes the context
    from the root click object when one is there); returns click's Result."""
    from click.testing import CliRunner

    from suite.cli import main

    def invoke(*args, **kwargs):
        if len(args) == 1 and isinstance(args[0], (list, tuple)):  # invoke([...]) as CliRunner().invoke takes it
            args = tuple(args[0])
        return CliRunner().invoke(main, [str(a) for a in args], obj={"context": shared_context}, **kwargs)

    return invoke


@pytest.fixture
def spy(monkeypatch):
    """``spy(module, name, label)``: ``module.name`` wrapped for the test; returns the list to which
    each call appends ``label(*args, **kwargs)`` before the real function runs."""
    def install(module, name, label):
        calls = []
        real = getattr(module, name)

        def wrapper(*args, **kwargs):
            calls.append(label(*args, **kwargs))
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)
        return calls

    return install


@pytest.fixture(autouse=True)
def _signal_dispositions_restored():
    """Every test leaves SIGINT, SIGTERM and SIGHUP as it found them. A test that ran an executor's worker
    set-up in this process (SIGINT ignored: Ctrl-C is the coordinator's business) left SIGINT
    ignored, and every later subprocess inherited it: the Ctrl-C tests' runs then ignored the
    signal and finished with exit 0 in a full run, while passing alone."""
    import signal

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    yield
    for s, handler in before.items():
        if signal.getsignal(s) is not handler and handler is not None:
            signal.signal(s, handler)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(item, nextitem):
    """After a test and the fixtures it leaves (a module's LocalCluster included): the thread dask
    started in this process for its scheduler's offloaded work ended with it (see
    :func:`_end_dask_offload_thread`)."""
    yield
    _end_dask_offload_thread()


def _end_dask_offload_thread() -> None:
    """dask.distributed runs part of an in-process scheduler's work (a graph's materialization) on a
    process-wide pool of one thread (``distributed.utils._offload_executor``, "Dask-Offload_0"),
    which once started lives until the interpreter exits. A test that ran a LocalCluster here
    (``--executor dask``) left it to every later test, and tests/forkrun.py then refused to fork
    ("Forked: 2 threads alive"), rightly: a child that used dask would queue work for a thread it
    does not have. The pool is shut down (its thread joined) and a fresh one, with no thread until
    used, put in its place: ``offload`` reads the module's name at each call (an in-process dask
    Worker keeps the pool it started with; no test starts one: their workers are processes)."""
    utils = sys.modules.get("distributed.utils")
    pool = getattr(utils, "_offload_executor", None)
    if pool is None or not getattr(pool, "_threads", None):
        return
    from concurrent.futures import ThreadPoolExecutor

    pool.shutdown(wait=True)
    utils._offload_executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="Dask-Offload")  # type: ignore[union-attr]
