"""The coordinator: skip stored cases, execute the rest, write outcomes to the store.

Data flow (docs/architecture.md): resolved cases -> :func:`run_cases` -> executor (local pool / dask) ->
outcome dicts -> :class:`suite.results.Store` (batched commits, only here).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from suite.results.sql import hashed
from suite.results.store import FAILED_STATUSES, Store
from suite.runner.case import Case
from suite.runner.checks import DeclaredUnit, check_outcome, declared_units, unit_warning
from suite.runner.dependencies import installed_libraries
from suite.runner.evaluate import crashed_outcome
from suite.runner.executors import get_executor
from suite.runner.options import ExecOptions, Executor, stop_signals
from suite.runner.pool import LocalExecutor
from suite.runner.progress import NullProgress, Progress
from suite.runner.unread import OverrideReads, Reads, unread_overrides
from suite.tamper_process import drain_notes, recheck

if TYPE_CHECKING:  # pragma: no cover
    from suite.context import Context

__all__ = ["RunSummary", "run_cases"]


@dataclass
class RunSummary:
    """What a run did. ``failed`` counts failed + timeout + crashed cases."""

    run_id: int
    store: str
    total: int = 0
    cached: int = 0
    computed: int = 0
    ok: int = 0
    failed: int = 0
    skipped: int = 0
    by_status: dict[str, int] = field(default_factory=dict)
    interrupted: bool = False
    seconds: float = 0.0
    failures: list[dict[str, Any]] = field(default_factory=list)  # first few: key, case, status, error
    keys: list[str] = field(default_factory=list)  # every case key of the run, in expansion order
    warnings: list[str] = field(default_factory=list)  # e.g. an override of a field no case read

    error: str | None = None  # set when the run stopped on an error of the suite itself

    @property
    def status(self) -> str:
        if self.error:
            return "error"
        if self.interrupted:
            return "interrupted"
        return "failed" if self.failed else "done"

    def as_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in ("run_id", "store", "total", "computed", "cached", "ok", "failed",
                                            "skipped", "by_status", "interrupted", "seconds", "failures",
                                            "warnings")}
        d["status"] = self.status
        return d

    def message(self, resume: str | None = None) -> str:
        """One line for the terminal; *resume*: the command that resumes an interrupted run when it
        is not the same command (``suite.cli.run.resume_command``)."""
        if self.interrupted:
            how = (f"resume with `{resume}`" if resume else "run the same command again to resume")
            return (f"interrupted: run {self.run_id} stored {self.computed} new case(s) in {self.store}; "
                    f"{how} (stored cases are not recomputed)")
        head = f"run {self.run_id}: {self.total} case(s), {self.cached} already stored"
        if self.computed == 0 and self.total:
            return (f"{head}: nothing new to compute (every case is stored ok; --rerun recomputes); "
                    f"store {self.store}")
        head += f", {self.computed} computed"
        bits = [f"{self.ok} ok"]
        if self.skipped:
            bits.append(f"{self.skipped} skipped")
        if self.failed:
            parts = [f"{self.by_status[s]} {s}" for s in FAILED_STATUSES if self.by_status.get(s)]
            bits.append(f"{self.failed} failed" + (f" ({', '.join(parts)})" if parts != [f"{self.failed} failed"] else ""))
        return f"{head}; {', '.join(bits)}; {self.seconds:.2f} s; store {self.store}"


class Terminated(KeyboardInterrupt):
    """SIGTERM (a CI time-out, a batch scheduler) or SIGHUP (the ssh session or terminal of the run
    closed) during a run: handled like Ctrl-C, so the run is marked ``interrupted`` and every
    finished case is committed."""


def _on_sigterm(signum: int, frame: Any) -> None:  # pragma: no cover - exercised through a subprocess test
    import signal

    if signum == getattr(signal, "SIGHUP", None):
        _away_from_the_terminal()
    raise Terminated()


def _away_from_the_terminal() -> None:
    """After SIGHUP (the terminal closed) stdout and stderr go to /dev/null: the progress display's
    teardown and the closing message would fail on the gone terminal (EIO), leaving the run row
    ``running`` and the exit status 1 instead of 130. A file or pipe is kept."""
    import os

    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:  # pragma: no cover
        return
    for fd in (1, 2):
        try:
            if os.isatty(fd):
                os.dup2(null, fd)
        except OSError:
            pass
    os.close(null)


def _trap_sigterm(hangup: bool = True) -> dict[Any, Any]:
    """Turn SIGTERM and (with *hangup*) SIGHUP into :class:`Terminated` (main thread only); returns
    the handlers it replaced (signal -> handler; empty off the main thread). A SIGHUP ignored
    (``nohup suite run ...``: the run is to outlive the session) stays ignored; without *hangup*
    (an executor that :attr:`~suite.runner.options.Executor.detaches_on_hangup`) SIGHUP is left be."""
    import signal
    import threading

    old: dict[Any, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return old
    for sig in stop_signals():
        if sig != signal.SIGTERM and (not hangup or signal.getsignal(sig) is signal.SIG_IGN):
            continue
        try:
            old[sig] = signal.signal(sig, _on_sigterm)
        except (ValueError, OSError):  # pragma: no cover
            pass
    return old


def _restore_sigterm(old: dict[Any, Any]) -> None:
    import signal

    for sig, handler in old.items():
        if handler is not None:
            try:
                signal.signal(sig, handler)
            except (ValueError, OSError):  # pragma: no cover
                pass


def _every_case(gen: Iterable[dict[str, Any]], cases: Sequence[Case], name: str) -> Iterator[dict[str, Any]]:
    """The outcomes of *gen*, then a ``crashed`` outcome for every case of *cases* it never
    yielded (the :class:`~suite.runner.executors.Executor` contract: one outcome per case), so an
    executor that loses a case cannot end a run as ``done`` with that case unstored. A second
    outcome for a case is dropped (the first is stored); one for a key that is not among *cases*
    is an error of the executor (:class:`~suite.errors.SuiteError`)."""
    from suite.errors import SuiteError

    keys = {c.key for c in cases}
    missing = set(keys)
    for out in gen:
        key = out.get("key")
        if key not in missing:
            if key in keys:
                continue
            raise SuiteError(f"executor {name!r}: returned an outcome for case {key!r}, which is not one "
                             "of the cases it was given")
        missing.discard(key)
        yield out
    for c in cases:
        if c.key in missing:
            missing.discard(c.key)
            yield crashed_outcome(c.key, f"executor {name!r} returned no outcome for this case")


#: cases run in the first chunk: a sweep is resolved, checked against the store and executed a
#: chunk at a time, so a lazily expanded sweep (:func:`suite.runner.experiment.stream_entry`) of
#: any size holds at most one chunk of resolved cases
CHUNK = 10_000

#: each later chunk is twice the one before, up to this many times the first (40,000 cases at the
#: default): a pool forks its worker once per chunk, and after each fork every page the
#: coordinator writes (the store's page cache, the run's key set) faults on its first write (and
#: is copied while the worker lives), a cost per chunk that grows with the coordinator's memory.
#: Cases 100k-400k of a closed-form sweep (`bench_scale.py`'s child, 3 runs alternated, load
#: 7.2-8.9): 2.7 page faults and 106 us of CPU per case (median) with chunks of 10,000 to the end,
#: 1.6 and 94 with this growth; 8 times instead of 4 saved ~1 us/case more at 1M for 100 MB more
#: peak RSS (547 MB against 446); issue 44, flat at scale
CHUNK_GROWTH = 4


def _chunks(cases: Iterable[Case], size: int) -> Iterator[list[Case]]:
    """*cases* in lists: the first of *size* cases, each later one twice the one before, up to
    :data:`CHUNK_GROWTH` times *size*; a combination that does not resolve ends the last list
    with the cases before it (they run first), then its error is raised."""
    if isinstance(cases, Sequence) and len(cases) <= size:
        if len(cases):
            yield list(cases)
        return
    buf: list[Case] = []
    limit = size * CHUNK_GROWTH
    try:
        for c in cases:
            buf.append(c)
            if len(buf) >= size:
                yield buf
                buf = []
                size = min(limit, 2 * size)
    except Exception:
        # a lazy sweep's combination that does not resolve: the cases resolved before it in this
        # chunk run first, so "every case before it stays stored" holds within a chunk too
        if buf:
            yield buf
        raise
    if buf:
        yield buf


def _phases(todo: list[Case], options: ExecOptions, allow_parallel_execute: bool) -> list[tuple[list[Case], ExecOptions]]:
    """*todo* in the phases it runs in: execute-fidelity cases one at a time after the rest (a
    time-out enforced from outside the worker, measured timings clean), unless
    *allow_parallel_execute*."""
    if allow_parallel_execute:
        return [(todo, options)] if todo else []
    par = [c for c in todo if c.fidelity != "execute"]
    ser = [c for c in todo if c.fidelity == "execute"]
    phases = [(par, options)] if par else []
    if ser:
        phases.append((ser, replace(options, jobs=1, isolate=options.isolate or options.jobs > 1,
                                    timeout=options.timeout or options.execute_timeout)))
    return phases


class _Run:
    """The state of one :func:`run_cases` call and its steps: a chunk checked against the store,
    an outcome recorded, the run closed."""

    def __init__(self, store: Store, run_id: int, options: ExecOptions, rerun: bool, progress: Progress,
                 in_process: bool) -> None:
        self.store, self.run_id, self.options, self.rerun = store, run_id, options, rerun
        self.progress, self.in_process = progress, in_process
        self.summary = RunSummary(run_id=run_id, store=str(store.path))
        self.seen: set[str] = set()
        self.seen_reads: Reads = {}
        self._last_reads: tuple[Any, Any] = (None, None)  # the fields-read list last added, and its group
        # one case per (technique, code, overridden field, profile): what the unread-override check needs
        self.reps: dict[tuple[Any, ...], Case] = {}
        self.override_reads = OverrideReads()  # per overridden field: the run's cases that did not read it
        self.units: dict[str, set[str]] = {}  # technique -> the metric units its results gave (each checked once)
        self.unit_warnings: list[str] = []
        self.declared: dict[tuple[str, str], DeclaredUnit] = {}  # (technique, fidelity) -> its declared units
        drain_notes()  # what a recheck put back before this run (another run's, a judgement's) is not this run's
        self.started = False
        self.planned = 0  # the cases the run set out to run, when known up front (0: not known)
        self.refresh: set[str] = set()  # the chunk's keys stored ok without some artifacts: computed again
        self.refreshed = 0  # how many such keys the run has met
        self.chunk_size = CHUNK  # cases per chunk (set by the run: _execute)

    def todo(self, chunk: list[Case], cases: Iterable[Case]) -> list[Case]:
        """The cases of *chunk* to compute: new keys not already stored ok (those are linked to
        this run as cached, with the overrides this run asked for)."""
        new: list[Case] = []
        for c in chunk:
            if c.key not in self.seen:
                self.seen.add(c.key)
                new.append(c)
        whole = not self.started and len(chunk) < self.chunk_size  # the sweep ended inside its first chunk
        chunk = new
        if not chunk:
            return []
        keys = [c.key for c in chunk]
        self.summary.keys.extend(keys)
        self.summary.total += len(chunk)
        for c in chunk:
            for k in c.overrides or ():
                self.reps.setdefault((c.technique, c.code, k, c.profile), c)
        khash = {} if self.rerun else hashed(keys)  # each key's store hash, computed once for the look-ups below
        cached = set() if self.rerun else self.store.ok_keys(khash)
        self.refresh = set()
        if cached and self.options.artifacts == "full":  # stored without some of its artifacts: computed again
            self.refresh = self.store.summarized_keys({k: khash[k] for k in cached})
            cached -= self.refresh
            self.refreshed += len(self.refresh)
        # each run keeps the overrides it asked for (a cached case never shows another run's)
        self.store.link_cached(self.run_id, {k: h for k, h in khash.items() if k in cached},
                               {c.key: c.overrides for c in chunk if c.overrides and c.key in cached})
        self._note_cached([c for c in chunk if c.overrides and c.key in cached])
        todo = [c for c in chunk if c.key not in cached]
        for c in todo:  # built here, once, before an executor forks or pickles (a lazily built scenario)
            c.scenario
        self.summary.cached += len(chunk) - len(todo)
        self._progress(cases, len(chunk) - len(todo), whole)
        return todo

    def _note_cached(self, cases: list[Case]) -> None:
        """Count *cases* (reused from the store, with overrides) in the override-reads tally by the
        reads their stored results recorded: a rerun warns of the same cases as the run that
        computed them (one that recorded none, stored before reads were kept, is not counted)."""
        if cases:
            reads = self.store.case_fields_read([c.key for c in cases])
            for c in cases:
                if c.key in reads:
                    self.override_reads.note(c, reads[c.key])

    def _progress(self, cases: Iterable[Case], cached: int, whole: bool = False) -> None:
        if self.started:
            self.progress.add_cached(cached, self.summary.total)
            return
        # the progress total: distinct keys of a sequence, or of a stream held whole by its first chunk;
        # else the combinations of a stream (a key repeated across its entries is run once)
        known = whole or isinstance(cases, Sized)
        total = (self.summary.total if whole else len({c.key for c in cases}) if isinstance(cases, Sequence) else
                 len(cases) if isinstance(cases, Sized) else self.summary.total)
        if known:  # the plan, stored: a live, killed or interrupted run reads "N stored of M planned"
            self.planned = max(total, self.summary.total)
            self.store.plan_run(self.run_id, self.planned)
        self.progress.start(max(total, self.summary.total), self.summary.cached, self.refreshed)
        self.started = True

    def record(self, case: Case, out: dict[str, Any]) -> None:
        """Check *out* (here, where no plugin code runs), hand it to the store, count it. A core this
        process holds that a plugin's watched thread changed is put back first (:func:`recheck`),
        and a case computed in this process while it was changed is stored failed, not ok."""
        out = check_outcome(out, case.technique, self._declared(case))
        note = recheck()
        if note:
            if self.in_process:
                out = dict(out, status="failed", metrics=None, samples=None, artifacts=None, error=note)
        ident = case.identity()
        ident["key"] = case.key
        self.store.add_outcome(ident, out, self.run_id, replace=self.rerun or case.key in self.refresh)
        if self.in_process:  # the plugin runs in this process: an abort must not lose a finished case
            self.store.flush()
        if out["status"] == "ok" and out.get("metrics"):
            self._check_units(case.technique, out["metrics"])
        reads = out.get("fields_read")
        if reads is not None and case.overrides:
            self.override_reads.note(case, reads)
        if reads:
            group = (case.technique, case.code or "", case.variant, case.fidelity)
            # a batch's cases that read the same fields share one list (one pickled object): added once
            if reads is not self._last_reads[0] or group != self._last_reads[1]:
                self.seen_reads.setdefault(group, set()).update(reads)
                self._last_reads = (reads, group)  # held, so its id cannot be another list's
        st, s = out["status"], self.summary
        s.computed += 1
        s.by_status[st] = s.by_status.get(st, 0) + 1
        if st == "ok":
            s.ok += 1
        elif st == "skipped":
            s.skipped += 1
        else:
            s.failed += 1
            if len(s.failures) < 50:
                s.failures.append({"key": case.key, "case": case.describe(), "status": st, "error": out.get("error")})
        self.progress.update(st)

    def _declared(self, case: Case) -> DeclaredUnit | None:
        """The units *case*'s technique declares for its metrics at its fidelity (one lookup built
        per technique and fidelity; :func:`suite.runner.checks.declared_units`), None: no technique."""
        group = (case.technique, case.fidelity)
        found = self.declared.get(group)
        if found is None and case.tech is not None:
            found = self.declared[group] = declared_units(case.tech, case.fidelity)
        return found

    def _check_units(self, technique: str, metrics: list[Any]) -> None:
        """Warn (at the run's end) of a metric unit holding a hiding character the first time a
        result of *technique* gives it: once per technique and unit, however many cases."""
        seen = self.units.get(technique)
        if seen is None:
            seen = self.units[technique] = set()
        for row in metrics:  # [name, value, unit, direction], as check_outcome passed them
            if row[2] not in seen:
                seen.add(row[2])
                w = unit_warning(technique, row[0], row[2])
                if w:
                    self.unit_warnings.append(w)

    def close(self) -> None:
        """Mark the run finished with its counts; store the reads recorded; warn of unread overrides.
        An interrupted run's row keeps its plan as ``total`` (0: not known), read back as ``planned``
        beside the counts of the cases it stored (:func:`suite.results.runs.run_info`)."""
        s, store = self.summary, self.store
        counts = {"total": self.planned if s.interrupted else s.total, "computed": s.computed, "cached": s.cached, "ok": s.ok + s.cached,
                  "failed": s.failed, "skipped": s.skipped}
        store.finish_run(self.run_id, s.status, counts)
        try:
            for (t, code, v, f), r in self.seen_reads.items():
                store.add_fields_read(t, code, v, f, r)
            store.flush()  # the run's own results, with their recorded reads
            # a run that reused no stored result computed all it holds: its reads are seen_reads
            # (a query over every case of the run: ~5 us a case of a cheap sweep, issue 44)
            warned: set[tuple[str, str]] = set()
            s.warnings = unread_overrides(list(self.reps.values()), store, self.seen_reads,
                                          self.run_id if s.cached else None, warned)
            s.warnings += self.override_reads.warnings(warned)
        except Exception as exc:  # noqa: BLE001 - a diagnostic must never lose the run
            s.warnings.append(f"could not record the profile fields read: {exc}")
        s.warnings += self.unit_warnings
        s.warnings += drain_notes()  # what recheck put back during the run (here, in pool loops)


def _execute(run: _Run, ex: Any, name: str, cases: Iterable[Case], chunk_size: int,
             allow_parallel_execute: bool) -> None:
    """Every chunk of *cases*: what is not stored, through executor *ex*, into the store. A
    Ctrl-C (or SIGTERM, SIGHUP) marks the run interrupted; the executor's generator is closed
    however the run ends (an error left it open, with the handlers it installed)."""
    gen = None
    run.chunk_size = max(1, int(chunk_size))
    try:
        for chunk in _chunks(cases, run.chunk_size):
            todo = run.todo(chunk, cases)
            # the chunk's resolved cases live until it is done: out of the cyclic collector's walks
            # (each youngest-generation collection walked them: 3 -> 1 collections, 0.8 -> 0.1 us a
            # case at 10k cases); acyclic, so reference counting still frees them after the chunk.
            # Not --in-process: there plugin code makes cyclic garbage in this process, which a
            # freeze would keep until the run ends
            if not run.in_process:
                gc.freeze()
            by_key = {c.key: c for c in todo}
            for phase_cases, opts in _phases(todo, run.options, allow_parallel_execute):
                gen = ex.map_cases(phase_cases, opts)
                for out in _every_case(gen, phase_cases, name):
                    run.record(by_key[out["key"]], out)
                gen = None
        if not run.started:
            run.progress.start(0, 0)
    except KeyboardInterrupt:
        run.summary.interrupted = True
    finally:  # on any exit: an executor's handlers (dask's Ctrl-C holder) end with its generator
        if gen is not None and hasattr(gen, "close"):
            try:
                gen.close()
            except BaseException:  # noqa: BLE001 - stopping workers must not hide what ended the run
                pass


def run_cases(cases: Iterable[Case], store: Store, *, executor: str | Executor = "local",
              options: ExecOptions | None = None, rerun: bool = False, allow_parallel_execute: bool = False,
              progress: Progress | None = None, command: str | None = None, chunk_size: int = CHUNK,
              context: Context, name: str | None = None, resumes: int | None = None) -> RunSummary:
    """Run *cases* into *store* as one run.

    Parameters
    ----------
    cases : sequence or iterable of Case
        Resolved cases (duplicates by key run once); a non-sequence (a lazy sweep) is consumed chunk by chunk.
    store : Store
    executor : str or Executor
        ``"local"``, ``"dask"``, a plugin's executor name, or an executor. One made here from a
        name is closed (its ``close()``, if it has one) when the run ends; one given is the caller's.
    options : ExecOptions
    rerun : bool
        Recompute cases already stored ok.
    allow_parallel_execute : bool
        Let ``execute``-fidelity cases run concurrently (default: one at a time, clean timings).
    progress, command : Progress, str
        Where to show progress (default: nothing); the command line in the run's provenance
        (default ``sys.argv``).
    chunk_size : int
        Cases in the first chunk (:data:`CHUNK`; each later one twice the one before, up to
        :data:`CHUNK_GROWTH` times this), each run and stored before the next.
    context : suite.context.Context
        Required: the command's context (plugin executors, the run's provenance).
    name : str, optional
        The run's label (``suite run --name``), given as it begins: a run whose process ends early keeps it.
    resumes : int, optional
        The interrupted run this one resumes: if it holds *name*, the name moves to this run.

    Returns
    -------
    RunSummary
        Counts, failures, ``interrupted`` after Ctrl-C (everything finished is committed).

    Raises
    ------
    ExperimentError
        A case of a lazy sweep that does not resolve, when its chunk is reached: the run ends
        ``error``, every case before it stored.
    StoreError
        *name* refused (:meth:`suite.results.store.Store.name_run`): before any case runs.
    """
    t0 = time.monotonic()
    run, ex = _start(cases, store, executor, options or ExecOptions(), rerun, progress, command, context, name,
                     resumes)
    old_term = _trap_sigterm(hangup=getattr(ex, "detaches_on_hangup", None) is False)
    old_gc = _collector_for_run(raise_threshold=not run.in_process)  # plugin code runs here when in-process
    try:
        _execute(run, ex, getattr(ex, "name", "") or type(ex).__name__, cases, chunk_size, allow_parallel_execute)
    except BaseException as exc:
        run.summary.error = str(exc) or type(exc).__name__
        raise
    finally:
        _restore_collector(old_gc)
        _restore_sigterm(old_term)
        _finish(run, t0, ex if ex is not executor else None)
    return run.summary


def _finish(run: _Run, t0: float, made: Any) -> None:
    """End *run* begun at *t0* (monotonic s): progress stopped, counts stored; the executor *made*
    from a name (None: the caller's) closed."""
    run.progress.stop()
    run.summary.seconds = time.monotonic() - t0
    run.close()
    if made is not None:
        _close_executor(made, run.summary)


def _close_executor(ex: Any, summary: RunSummary) -> None:
    """Close executor *ex*, made by :func:`run_cases` from a name, as its run ends: the dask
    executor's client and the LocalCluster it started (its worker processes) ended with the run,
    not when the executor was next collected (a frame of its run held in a dask time-out's
    traceback cycle kept it, and them, alive until a full collection). A failure to close is a
    warning of the run: its results are stored."""
    close = getattr(ex, "close", None)
    if close is None:
        return
    try:
        close()
    except Exception as exc:  # noqa: BLE001 - the run is stored; closing must not lose its summary
        summary.warnings.append(f"could not close executor {getattr(ex, 'name', type(ex).__name__)!r}: {exc}")


#: the cyclic collector's youngest-generation threshold during a run (Python's default is 700
#: allocations): the coordinator allocates a few dozen acyclic containers per case (an outcome
#: dict, its metric rows, the store's buffered rows), all freed by reference counting, so a
#: collection every 700 allocations finds nothing and, walking the buffered outcomes and the run's
#: growing key set, cost about half of what grew per case from 10k to 1M cases (issue 44)
RUN_GC_THRESHOLD = 100_000


def _collector_for_run(raise_threshold: bool = True) -> tuple[int, int, int]:
    """Move what lives through the run (cases, profiles, plugins) out of the cyclic collector's
    walks (:func:`gc.freeze`) and, with *raise_threshold* (never when plugin code runs in this
    process: ``--in-process``), collect the youngest generation every :data:`RUN_GC_THRESHOLD`
    allocations; a pool worker puts its plugin's thresholds back (suite.runner.pool). Returns the
    thresholds it replaced (:func:`_restore_collector` puts them back)."""
    old = gc.get_threshold()
    gc.freeze()
    if old[0] and raise_threshold:  # 0: the caller disabled automatic collection; left as it is
        gc.set_threshold(max(old[0], RUN_GC_THRESHOLD), *old[1:])
    return old


def _restore_collector(old: tuple[int, int, int]) -> None:
    gc.set_threshold(*old)
    gc.unfreeze()


def _start(cases: Iterable[Case], store: Store, executor: str | Executor, options: ExecOptions, rerun: bool,
           progress: Progress | None, command: str | None, context: Context,
           name: str | None = None, resumes: int | None = None) -> tuple[_Run, Any]:
    """The run begun in *store* (its provenance: the plugin distributions of the command's
    context; its *name*, if any, moved from run *resumes* if that holds it) and the executor that runs it."""
    ex = executor if isinstance(executor, Executor) or hasattr(executor, "map_cases") \
        else get_executor(executor, context=context)
    plugins = context.registry.distributions()
    run_id = store.begin_run(command=command, plugins=plugins, packages=installed_libraries(plugins))
    if name is not None:
        try:
            store.name_run(run_id, name, resumes)
        except BaseException:  # a refused name (or one a concurrent run took): this run ends before a case
            store.finish_run(run_id, "error", {})
            raise
    in_process = isinstance(ex, LocalExecutor) and not options.isolate and options.jobs <= 1
    return _Run(store, run_id, options, rerun, progress or NullProgress(), in_process), ex
