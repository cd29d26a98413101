"""The ``dask`` executor: :mod:`dask.distributed`, on ``--scheduler ADDRESS`` or a ``LocalCluster``
started for the run.

Each batch (one plugin package's cases) is shipped as bytes and evaluated on its worker by the
local pool inside a supervised sandbox (:mod:`suite.runner.sandbox`), so the same time-outs, hang
guard and crash attribution hold there. A batch's finished cases do not wait for the batch: the
coordinator collects them from the workers every :data:`POLL_SECONDS` and once more on Ctrl-C or
SIGTERM, so an interrupted run stores them. The unfinished cases of a batch whose worker dies are
re-run case by case, and a case that kills a worker twice is stored ``crashed``.
"""

from __future__ import annotations

import contextlib
import itertools
import signal
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from suite.errors import SuiteError
from suite.runner.case import Case
from suite.runner.evaluate import Outcome, crashed_outcome, error_line, package_of, resolved_tech
from suite.runner.options import ExecOptions, Executor, stop_signals
from suite.technique import Technique

__all__ = ["DaskExecutor", "BATCH_MAX", "BATCHES_PER_WORKER", "POLL_SECONDS", "QUIET"]

#: batches per dask worker thread a run is cut into (when it has the cases): a worker with n threads
#: runs n batches at once, each in its own sandbox; see DaskExecutor._batches
BATCHES_PER_WORKER = 2
#: most cases in one batch (one task; its finished cases are collected while it runs: POLL_SECONDS)
BATCH_MAX = 4096
#: seconds between two collections of the cases the running batches have finished (one
#: ``client.run`` on every worker, which hands back only what the coordinator lacks): a worker that
#: dies costs the cases it finished since, besides the one it was running. Ctrl-C and SIGTERM
#: collect once more before the run stops, so they cost only the cases that were running.
POLL_SECONDS = 1.0
#: seconds the coordinator waits for the workers' finished cases after Ctrl-C or SIGTERM
SALVAGE_SECONDS = 10.0
#: dask settings of the processes this executor starts (a LocalCluster's scheduler, nannies and
#: workers): no statistical profiler in the workers (it samples the running thread's stack every
#: 10 ms for the dashboard's profile page), the event loops' health tick every second instead of
#: every 20 ms (it only times the loop, for "event loop unresponsive" warnings), the memory monitor
#: of each nanny and worker every second instead of every 100 ms (it reads the worker process's
#: RSS, to pause, spill or restart it; a batch's sandbox and pool are other processes it never
#: measured), and the system monitor (CPU, memory and network figures for the dashboard) every 2 s
#: instead of every 0.5 s. With dask's defaults an idle 2-worker LocalCluster burnt 0.13 s of CPU
#: per second; with the first two settings 0.032 s/s, and with all four 0.015 s/s (a user-style
#: cluster of a scheduler and 2 workers over 5 s, 3 alternated rounds, load 5: 0.16 against
#: 0.06-0.08 s): on a 2-core machine that burn is a large part of what a dask run costs beyond
#: the local pool (docs/performance-history.md, "runner and dask, 0.3.3"; docs/performance-history.md, "dask, 0.3.6").
#: A cluster given by ``--scheduler`` is the user's and left as it is (its processes take these settings from the
#: environment: ``DASK_DISTRIBUTED__WORKER__PROFILE__ENABLED=False``,
#: ``DASK_DISTRIBUTED__ADMIN__TICK__INTERVAL=1s``, ``DASK_DISTRIBUTED__WORKER__MEMORY__MONITOR_INTERVAL=1s``,
#: ``DASK_DISTRIBUTED__ADMIN__SYSTEM_MONITOR__INTERVAL=2s``).
QUIET = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
         "distributed.worker.memory.monitor-interval": "1s", "distributed.admin.system-monitor.interval": "2s"}


#: on a dask worker: batch token -> the outcomes its running batch has finished so far (in order,
#: only appended to), read by :func:`_finished_so_far` while the batch runs
_FINISHED: dict[str, list[Outcome]] = {}
#: on a dask worker: batch token -> how many of its outcomes the coordinator said it holds (a
#: poll's ``have``): the batch's result leaves them out, so no outcome is pickled and sent twice
_HELD: dict[str, int] = {}


def _dask_batch(blob: bytes, keys: list[str], options: ExecOptions, token: str) -> list[Outcome]:  # on a worker
    """One batch on a dask worker: evaluated in a supervised sandbox (:mod:`suite.runner.sandbox`),
    so the worker never imports the plugin nor dies with a case. Each outcome is kept under
    *token* as it comes, for :func:`_finished_so_far`; at the end, those the coordinator has not
    said it holds are returned."""
    from suite.runner.sandbox import run_sandboxed

    _import_core()
    outs = _FINISHED.setdefault(token, [])
    try:
        for out in run_sandboxed(blob, keys, options):
            outs.append(out)
        return outs[_HELD.get(token, 0):]
    finally:
        _FINISHED.pop(token, None)
        _HELD.pop(token, None)


def _finished_so_far(have: dict[str, int]) -> dict[str, list[Outcome]]:  # runs on a dask worker (client.run)
    """For each batch token of *have* running on this worker: the outcomes it finished beyond the
    first ``have[token]`` (those the coordinator already holds, noted in :data:`_HELD`)."""
    out = {}
    for t, n in have.items():
        got = _FINISHED.get(t)
        if got is not None:
            _HELD[t] = max(_HELD.get(t, 0), n)
            out[t] = got[n:]
    return out


#: core modules every sandbox would otherwise import again: the local pool, what unpickling a case
#: needs (profiles and workloads: pydantic), what evaluating one needs (the plugin API, the cost
#: models). Imported once per dask worker, they are inherited by each batch's forked sandbox (the
#: worker still never imports a plugin): a batch of the benchmark's sweep spent ~0.12 s importing
#: the pool and ~0.16 s unpickling its cases, mostly these.
_CORE_MODULES = ("suite.runner.pool", "suite.hardware.profile", "suite.hardware.units", "suite.workloads.types",
                 "suite.hardware.tracking", "suite.api", "suite.perf", "suite.perf.network")


def _import_core() -> None:
    import importlib

    for name in _CORE_MODULES:
        importlib.import_module(name)


def _threads(client: Any, options: ExecOptions) -> int:
    """The threads of the cluster's workers (each runs one batch at a time), else ``options.jobs``.

    A plain ``dask worker ADDRESS`` runs one thread per core: counted as one worker, a run on a
    16-core worker was cut into 2 batches and ran 2 cases at a time."""
    workers = client.scheduler_info().get("workers", {})
    return max(1, sum(max(1, int(w.get("nthreads") or 1)) for w in workers.values()) or options.jobs)


def _shippable(tech: Technique) -> Technique:
    """The technique without claims and properties (closures a worker does not need)."""
    return replace(tech, claims=[], properties=[])


def _close(client: Any, cluster: Any) -> None:
    """Close *client*, then *cluster* (None: a scheduler of the user's, left running)."""
    with _sigint_ignored():
        try:
            client.close()
        finally:
            if cluster is not None:
                cluster.close()


def _dask_setup_worker() -> None:  # pragma: no cover - runs in each dask worker of a LocalCluster
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's business


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while processes are started (they inherit it): Ctrl-C stops the coordinator
    only, which then closes the cluster (no traceback from every worker)."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


class DaskExecutor(Executor):
    """dask.distributed: ``options.scheduler`` or a LocalCluster of ``options.jobs`` workers.

    The local pool's guarantees on every worker: each batch (the cases of one plugin package) is
    shipped as bytes and evaluated by :func:`suite.runner.sandbox.run_sandboxed` in a forked child
    of the dask worker, through the local pool. So a per-case ``--timeout`` counts from the case's
    start, the default hang guard applies, a case that aborts or segfaults is stored ``crashed``
    without costing its dask worker, and a dask worker never imports a plugin. A batch's finished
    cases are collected every :data:`POLL_SECONDS` and on Ctrl-C / SIGTERM, so an interrupted run
    stores them. A worker that dies anyway (kill -9, the OOM killer) costs only what it ran since
    the last collection: its batch's other cases are re-run case by case on the remaining
    workers, and a case that kills a worker twice is stored ``crashed``. A run whose
    scheduler has had no worker for :attr:`no_worker_seconds` stores what is left ``crashed``, so
    a run always ends.
    """

    name = "dask"
    detaches_on_hangup = False  # SIGHUP stops a run as Ctrl-C does: its workers end with the session

    #: seconds without any worker before the cases still waiting are given up
    no_worker_seconds = 60.0
    #: how many times a case may be running on a worker that died before it is stored ``crashed``
    max_worker_deaths = 2

    def __init__(self) -> None:
        #: (scheduler, jobs) -> the client, the LocalCluster it started (or None) and their closer
        self._held: dict[tuple[Any, int], tuple[Any, Any, weakref.finalize[Any, Any]]] = {}

    def map_cases(self, cases: Sequence[Case], options: ExecOptions) -> Iterator[Outcome]:
        try:
            import dask.distributed  # noqa: F401  (only to fail early with a clear message)
        except ImportError:
            raise SuiteError("executor 'dask' needs dask.distributed: pip install 'dlsys-suite[dask]'") from None
        return self._run(cases, options)

    def _connect(self, options: ExecOptions) -> tuple[Any, Any]:
        import logging

        import dask
        from dask.distributed import Client, LocalCluster

        if options.scheduler:
            try:
                return Client(options.scheduler, timeout="20s"), None  # type: ignore[no-untyped-call]
            except OSError as exc:
                raise SuiteError(f"--scheduler {options.scheduler}: cannot connect: {exc}") from None
        # a worker death costs its running batch at once (no silent re-runs by the scheduler: this
        # executor re-runs the batch's cases one by one and stores the one that kills twice)
        import warnings

        with dask.config.set({**QUIET, "distributed.scheduler.allowed-failures": 0}), _sigint_ignored(), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a dashboard port in use: no run needs a dashboard
            cluster = LocalCluster(n_workers=max(1, options.jobs), threads_per_worker=1, processes=True,
                                   dashboard_address=":0", silence_logs=logging.CRITICAL)  # type: ignore[no-untyped-call]
            client = Client(cluster)  # type: ignore[no-untyped-call]
        try:
            client.run(_dask_setup_worker)
        except Exception:  # noqa: BLE001 - only a nicer Ctrl-C
            pass
        return client, cluster

    def _batches(self, cases: Sequence[Case], threads: int) -> list[list[Case]]:
        """The cases in batches of one package each (a worker never unpickles two packages), about
        :data:`BATCHES_PER_WORKER` per worker thread (*threads*: the cluster's, :func:`_threads`)
        and at most :data:`BATCH_MAX` cases each.

        A batch costs a fixed ~0.05 s of CPU in its sandbox (a batch of ``bench_runner.py --parallel``'s sweep,
        2026-12-04, load 6: the fork 3 ms, unpickling 3-10 ms, its pool worker's fork ~10 ms, the plugin's import
        and first evaluation 22 ms against 4.4 ms for a warm one) beside its dask worker's own
        handling, so batches are few and large; two per worker thread give the first results
        half-way through a run (a stopped run keeps them). A batch takes every *parts*-th case of its package (a stripe, not a
        slice): a sweep is expanded variant by variant, so slices differed in cost (the 500-case
        sweep of ``bench_runner.py --parallel``: 0.87, 0.87, 1.21 and 1.60 s of
        evaluation), and the run lasted until the dearest slice, handed out last, ended; its
        stripes cost alike (the busiest worker's CPU over the mean: 1.02-1.04 with slices, 1.01
        with stripes). The price: each batch of a sweep over several workloads carries all of
        them (each pickled once per batch)."""
        groups: dict[str, list[Case]] = {}
        for c in cases:
            groups.setdefault(package_of(resolved_tech(c)), []).append(c)
        size = max(1, min(BATCH_MAX, -(-len(cases) // (threads * BATCHES_PER_WORKER))))
        out: list[list[Case]] = []
        for g in groups.values():
            parts = -(-len(g) // size)  # as many as *size* needs, of equal sizes (no small remainder)
            out.extend(g[i::parts] for i in range(parts))
        return out

    def _run(self, cases: Sequence[Case], options: ExecOptions) -> Iterator[Outcome]:
        if not cases:
            return
        client, cluster = self._client(options)
        batch = _Batches(client, cases, options)
        finished = False
        try:
            for b in self._batches(list(batch.by_key.values()), _threads(client, options)):
                batch.submit([c.key for c in b])
            yield from self._collect(client, batch)
            finished = True
        finally:
            for fut in batch.running:
                fut.cancel()
            if not finished:  # stopped early (Ctrl-C, an error): the workers go now
                self.close()

    def _client(self, options: ExecOptions) -> tuple[Any, Any]:
        """The client (and the LocalCluster it started, or None) for *options*: the one an earlier
        call opened for the same scheduler and job count, while it is connected, else a new one.
        The engine calls :meth:`map_cases` once per chunk of a run (10,000 cases and more) and
        per phase: a LocalCluster started for each took its seconds of start-up and each worker's
        import of the core again. A run's parallel phase and its serial execute phase (``jobs=1``)
        each keep their own. Closed by :meth:`close` (``run_cases`` calls it for one it made from a
        name, as the run ends), by a run stopped early, or when this executor is collected or the
        interpreter exits: a caller that hands ``run_cases`` an executor of its own closes it with
        :meth:`close`."""
        want = (options.scheduler, options.jobs)
        held = self._held.pop(want, None)
        if held is not None:
            if getattr(held[0], "status", "running") == "running":
                self._held[want] = held
                return held[0], held[1]
            held[2]()  # disconnected: closed, and a new one opened
        client, cluster = self._connect(options)
        self._held[want] = (client, cluster, weakref.finalize(self, _close, client, cluster))
        return client, cluster

    def close(self) -> None:
        """Close every client this executor holds, and the LocalClusters it started."""
        held, self._held = self._held, {}
        for _client, _cluster, closer in held.values():
            closer()  # runs _close once, whoever calls it first

    def _collect(self, client: Any, batch: "_Batches") -> Iterator[Outcome]:
        """The outcomes of every batch: finished cases as the polls bring them, each batch's rest as
        it returns. On Ctrl-C or SIGTERM (held while the consumer stores an outcome: it surfaces
        here), the cases the workers finished are collected once more and yielded before the
        interrupt goes on."""
        with _Interrupts() as irq:
            try:
                yield from self._stream(client, batch, irq)
            except KeyboardInterrupt:  # a second one stops the salvage at once
                yield from self._poll(client, batch, SALVAGE_SECONDS, irq)
                raise

    def _stream(self, client: Any, batch: "_Batches", irq: "_Interrupts") -> Iterator[Outcome]:
        """:meth:`_collect`'s loop: a dead worker's unfinished cases re-run case by case; the
        waiting cases given up after :attr:`no_worker_seconds` without any worker."""
        from dask.distributed import wait
        from distributed.client import FIRST_COMPLETED

        deaths: dict[str, int] = {}
        alone = polled = time.monotonic()  # since when no worker is known (checked while cases wait); last poll
        while batch.running:
            irq.check()
            try:
                with irq.raising():
                    done, _ = wait(list(batch.running), timeout=POLL_SECONDS,  # type: ignore[no-untyped-call]
                                   return_when=FIRST_COMPLETED)
            except Exception:  # noqa: BLE001 - dask raises its own TimeoutError class
                done = set()
            for fut in done:
                keys = batch.pop(fut)
                try:
                    outs = fut.result()
                except Exception as exc:  # noqa: BLE001 - KilledWorker, a lost worker, ...
                    yield from self._worker_died(batch.unseen(keys), exc, deaths, batch.submit)
                    continue
                yield from batch.fresh(outs)
            if time.monotonic() - polled >= POLL_SECONDS:
                yield from self._poll(client, batch, 5 * POLL_SECONDS, irq)
                polled = time.monotonic()
            if done or not batch.running:
                continue
            if client.scheduler_info().get("workers"):
                alone = time.monotonic()
            elif time.monotonic() - alone > self.no_worker_seconds:
                yield from self._give_up(batch)

    @staticmethod
    def _poll(client: Any, batch: "_Batches", timeout: float, irq: "_Interrupts") -> list[Outcome]:
        """The cases the running batches have finished that the coordinator lacks, from every
        worker (a dead worker is skipped; none after *timeout* seconds: each batch's result still
        brings its cases)."""
        if not batch.running:
            return []
        try:
            with irq.raising():
                got = client.run(_finished_so_far, batch.have(), on_error="return", callback_timeout=timeout)
        except Exception:  # noqa: BLE001 - a poll is a bonus: each batch's result still comes
            return []
        outs: list[Outcome] = []
        for res in got.values():
            for token, part in (res.items() if isinstance(res, dict) else ()):
                batch.got[token] = batch.got.get(token, 0) + len(part)
                outs.extend(batch.fresh(part))
        return outs

    def _give_up(self, batch: "_Batches") -> Iterator[Outcome]:
        for fut in list(batch.running):
            fut.cancel()
            for k in batch.unseen(batch.pop(fut)):
                yield crashed_outcome(k, f"no dask worker for {self.no_worker_seconds:g} s: "
                                         "this case was never run (`suite run` again reruns it)")

    def _worker_died(self, keys: list[str], exc: BaseException, deaths: dict[str, int],
                     submit: Callable[[list[str]], None]) -> Iterator[Outcome]:
        """A batch whose dask worker died: its cases not yet collected (*keys*) re-run one by one (on
        a fresh worker); a case that was running on a dying worker :attr:`max_worker_deaths` times
        is stored ``crashed``."""
        if not keys:
            return
        if len(keys) > 1:
            for k in keys:  # which case killed it is unknown: each alone
                submit([k])
            return
        k = keys[0]
        deaths[k] = deaths.get(k, 0) + 1
        if deaths[k] < self.max_worker_deaths:
            submit([k])
            return
        yield crashed_outcome(k, f"dask worker lost while running this case ({deaths[k]} times; not tried "
                                 f"again): {error_line(exc)}")


class _Interrupts:
    """Ctrl-C, SIGTERM and SIGHUP during a dask run (main thread only; those whose handler raises):
    raised at once while the coordinator waits on dask (inside :meth:`raising`), else held until
    :meth:`check`, so an interrupt that arrives while the consumer stores an outcome still
    surfaces in the executor, which then collects the finished cases. Each raises through the
    handler it replaced (Ctrl-C's KeyboardInterrupt, the run's ``Terminated``)."""

    def __init__(self) -> None:
        self.old: dict[int, Callable[[int, Any], Any]] = {}
        self.pending: tuple[int, Any] | None = None
        self.waiting = False

    def __enter__(self) -> "_Interrupts":
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, *stop_signals()):
                handler = signal.getsignal(sig)
                if callable(handler):
                    self.old[sig] = handler
                    signal.signal(sig, self._on_signal)
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        for sig, handler in self.old.items():
            signal.signal(sig, handler)
        if exc_type is None:  # the run's last outcome was being stored: the interrupt still stops the run
            self.check()

    def _on_signal(self, signum: int, frame: Any) -> None:
        if self.waiting:
            self.old[signum](signum, frame)
        else:
            self.pending = (signum, frame)

    def check(self) -> None:
        """Raise the interrupt held, if any."""
        if self.pending is not None:
            (signum, frame), self.pending = self.pending, None
            self.old[signum](signum, frame)

    @contextlib.contextmanager
    def raising(self) -> Iterator[None]:
        """An interrupt raised at once inside (a wait on dask), held outside."""
        self.waiting = True
        try:
            yield
        finally:
            self.waiting = False


class _Batches:
    """The cases of one dask run, ready to ship (one stripped technique per technique, not one per
    case), the batches submitted (future -> its case keys; future -> its token), the outcomes
    collected from each running batch (token -> count) and the keys already yielded."""

    def __init__(self, client: Any, cases: Sequence[Case], options: ExecOptions) -> None:
        self.client = client
        # each batch runs a local pool of one worker in its sandbox: one case at a time per dask thread
        self.inner = replace(options, jobs=1, isolate=True, scheduler=None, executor_options={})
        self.running: dict[Any, list[str]] = {}
        self.tokens: dict[Any, str] = {}
        self.got: dict[str, int] = {}
        self.seen: set[str] = set()
        self._ids = itertools.count()
        self._run_id = f"{time.time_ns():x}"
        techs: dict[int, Technique] = {}
        self.by_key: dict[str, Case] = {}
        for c in cases:
            t = resolved_tech(c)
            if id(t) not in techs:
                techs[id(t)] = _shippable(t)
            self.by_key[c.key] = replace(c, tech=techs[id(t)])

    def submit(self, keys: list[str]) -> None:
        from suite.runner.sandbox import pack

        token = f"{self._run_id}-{next(self._ids)}"
        blob = pack([self.by_key[k] for k in keys])
        fut = self.client.submit(_dask_batch, blob, keys, self.inner, token, pure=False)
        self.running[fut] = keys
        self.tokens[fut] = token

    def pop(self, fut: Any) -> list[str]:
        """The keys of *fut*'s batch, which is no longer running."""
        self.got.pop(self.tokens.pop(fut), None)
        return self.running.pop(fut)

    def have(self) -> dict[str, int]:
        """Token -> outcomes collected, for every running batch."""
        return {t: self.got.get(t, 0) for t in self.tokens.values()}

    def unseen(self, keys: list[str]) -> list[str]:
        """*keys* whose outcome was not yielded yet."""
        return [k for k in keys if k not in self.seen]

    def fresh(self, outs: Sequence[Outcome]) -> Iterator[Outcome]:
        """The outcomes of *outs* not yielded yet (each case once, from a poll or its batch)."""
        for out in outs:
            key = out.get("key")
            if key in self.by_key and key not in self.seen:
                self.seen.add(key)
                yield out
