"""The coordinator: skip stored cases, execute the rest, write outcomes to the store.

Data flow (docs/architecture.md): resolved cases -> :func:`run_cases` -> executor (local pool / dask) ->
outcome dicts -> :class:`suite.results.Store` (batched commits, only here).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence, Sized
from dataclasses import dataclass, field, replace
from typing import Any

from suite.results.store import FAILED_STATUSES, Store
from suite.runner.case import Case
from suite.runner.checks import check_outcome
from suite.runner.executors import ExecOptions, Executor, LocalExecutor, get_executor
from suite.runner.progress import NullProgress, Progress

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

    def message(self) -> str:
        """One line for the terminal."""
        if self.interrupted:
            return (f"interrupted: run {self.run_id} stored {self.computed} new case(s) in {self.store}; "
                    f"run the same command again to resume (stored cases are not recomputed)")
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
    """SIGTERM (a CI time-out, a batch scheduler) during a run: handled like Ctrl-C, so the run is
    marked ``interrupted`` and every finished case is committed."""


def _on_sigterm(signum, frame):  # pragma: no cover - exercised through a subprocess test
    raise Terminated()


def _trap_sigterm():
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        return None
    try:
        return signal.signal(signal.SIGTERM, _on_sigterm)
    except (ValueError, OSError):  # pragma: no cover
        return None


def _restore_sigterm(old) -> None:
    import signal

    if old is not None:
        try:
            signal.signal(signal.SIGTERM, old)
        except (ValueError, OSError):  # pragma: no cover
            pass


def _unread_overrides(cases: Sequence[Case], store: Store, seen: dict[tuple, set[str]],
                      run_id: int | None = None) -> list[str]:
    """One warning per (technique, overridden field) that no evaluation of that technique's code
    was seen to read: the run's own record (the reads of the results it computed or reused,
    :meth:`Store.run_fields_read`); only for a technique of which that record has none, the
    store's for the same code."""
    from suite.hardware.tracking import covers, normalize_path

    out: list[str] = []
    done: set[tuple[str, str]] = set()
    known: dict[tuple[str, str], set[str] | None] = {}
    own = (store.run_fields_read(run_id) if run_id is not None else None) or {}
    for c in cases:
        if not c.overrides:
            continue
        kc = (c.technique, c.code or "")
        if kc not in known:
            reads = set(own.get(kc, ()))
            for (t, code, _v, _f), r in seen.items():
                if (t, code) == kc:
                    reads |= r
            if not reads:  # the run recorded none (every case reused from before reads were kept)
                for r in store.fields_read(c.technique, c.code or "").values():
                    reads |= r
            known[kc] = reads or None
        reads = known[kc]
        if reads is None:  # nothing recorded (every case cached from an older store, or failed)
            continue
        for k in c.overrides:
            if (c.technique, k) in done:  # already warned: not re-checked for every case of a sweep
                continue
            path = normalize_path(k, c.scenario.profile if c.scenario is not None else None)
            if not covers(reads, path):
                done.add((c.technique, k))
                out.append(f"--set {k}: {c.technique} never read profile field {path!r} in this run, so its "
                           f"results do not depend on it (the cases differ only in their keys); see "
                           f"`suite info {c.technique}` for the fields it reads")
    return out


def _every_case(gen, cases: Sequence[Case], name: str):
    """The outcomes of *gen*, then a ``crashed`` outcome for every case of *cases* it never
    yielded (the :class:`~suite.runner.executors.Executor` contract: one outcome per case), so an
    executor that loses a case cannot end a run as ``done`` with that case unstored. A second
    outcome for a case is dropped (the first is stored); one for a key that is not among *cases*
    is an error of the executor (:class:`~suite.errors.SuiteError`)."""
    from suite.errors import SuiteError
    from suite.runner.executors import crashed_outcome

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


#: cases run per chunk: a sweep is resolved, checked against the store and executed this many at
#: a time, so a lazily expanded sweep (:func:`suite.runner.experiment.stream_entry`) of any size
#: holds at most one chunk of resolved cases
CHUNK = 10_000


def _chunks(cases: Iterable[Case], size: int) -> Iterator[list[Case]]:
    if isinstance(cases, Sequence) and len(cases) <= size:
        if len(cases):
            yield list(cases)
        return
    buf: list[Case] = []
    try:
        for c in cases:
            buf.append(c)
            if len(buf) >= size:
                yield buf
                buf = []
    except Exception:
        # a lazy sweep's combination that does not resolve: the cases resolved before it in this
        # chunk run first, so "every case before it stays stored" holds within a chunk too
        if buf:
            yield buf
        raise
    if buf:
        yield buf


def run_cases(cases: Iterable[Case], store: Store, *, executor: str | Executor = "local",
              options: ExecOptions | None = None, rerun: bool = False, allow_parallel_execute: bool = False,
              progress: Progress | None = None, command: str | None = None, registry: Any = None,
              chunk_size: int = CHUNK, context: Any = None) -> RunSummary:
    """Run *cases* into *store* as one run.

    Parameters
    ----------
    cases : sequence or iterable of Case
        Resolved cases (duplicates by key are run once). An iterable that is not a sequence (a
        lazily expanded sweep) is consumed *chunk_size* cases at a time; ``len(cases)``, when it
        has one, is the progress total.
    store : Store
    executor : str or Executor
        ``"local"``, ``"dask"`` or a plugin's executor name.
    options : ExecOptions
        Jobs, timeout (s), dask scheduler.
    rerun : bool
        Recompute cases already stored ok.
    allow_parallel_execute : bool
        Let ``execute``-fidelity cases run concurrently (by default they run one at a time, so
        measured timings stay clean).
    progress : Progress
        Where to show progress (default: nothing).
    command : str
        The command line recorded in the run's provenance (default ``sys.argv``).
    chunk_size : int
        Cases per chunk (:data:`CHUNK`): each chunk is looked up in the store, executed and
        handed to the store before the next is taken, so memory does not grow with the sweep
        (but for one key string per case, kept to run duplicates once).
    context : suite.context.Context
        The command's context: the plugin executors and the run's provenance (its plugin
        distributions). Required from 0.3.0 (given none, a new one is built with a
        ``DeprecationWarning``).
    registry : Registry, optional
        Deprecated since 0.2.0 (``DeprecationWarning``), removed in 0.3.0: pass *context*. Used
        only when no *context* is given (a context is built on it).

    Returns
    -------
    RunSummary
        Counts, failures, and ``interrupted`` if Ctrl-C stopped it (everything finished before
        is committed).

    Raises
    ------
    ExperimentError
        A case of a lazy sweep that does not resolve, raised when its chunk is reached: the run
        ends ``error`` and every case before it stays stored.
    """
    import time

    from suite.context import Context

    if registry is not None:
        Context.warn_registry_argument("run_cases()")
    context = Context.given(context, "run_cases()", registry=registry)
    options = options or ExecOptions()
    progress = progress or NullProgress()
    ex = executor if isinstance(executor, Executor) or hasattr(executor, "map_cases") \
        else get_executor(executor, context=context)
    t0 = time.monotonic()
    plugins = context.registry.distributions()  # provenance: the plugin distributions of the command's context
    run_id = store.begin_run(command=command, plugins=plugins)
    summary = RunSummary(run_id=run_id, store=str(store.path))
    name = getattr(ex, "name", "") or type(ex).__name__
    in_process = isinstance(ex, LocalExecutor) and not options.isolate and options.jobs <= 1
    seen: set[str] = set()
    seen_reads: dict[tuple, set[str]] = {}
    # one case per (technique, code, overridden field, profile): what the unread-override check needs
    reps: dict[tuple, Case] = {}
    started = False
    gen = None
    old_term = _trap_sigterm()
    try:
        for chunk in _chunks(cases, max(1, int(chunk_size))):
            chunk = [c for c in chunk if not (c.key in seen or seen.add(c.key))]
            if not chunk:
                continue
            keys = [c.key for c in chunk]
            summary.keys.extend(keys)
            summary.total += len(chunk)
            for c in chunk:
                for k in c.overrides or ():
                    reps.setdefault((c.technique, c.code, k, c.profile), c)
            cached = set() if rerun else store.ok_keys(keys)
            refresh: set[str] = set()
            if cached and options.artifacts == "full":  # stored with a summary of its artifacts: computed again
                refresh = store.summarized_keys(cached)
                cached -= refresh
            # each run keeps the overrides it asked for (a cached case never shows another run's)
            store.link_cached(run_id, [k for k in keys if k in cached],
                              {c.key: c.overrides for c in chunk if c.overrides and c.key in cached})
            todo = [c for c in chunk if c.key not in cached]
            summary.cached += len(chunk) - len(todo)
            if not started:  # the progress total: distinct keys of a sequence, the combinations of a stream
                total = (len({c.key for c in cases}) if isinstance(cases, Sequence) else
                         len(cases) if isinstance(cases, Sized) else summary.total)
                progress.start(max(total, summary.total), summary.cached)
                started = True
            else:
                progress.add_cached(len(chunk) - len(todo), summary.total)
            phases: list[tuple[list[Case], ExecOptions]] = []
            if allow_parallel_execute:
                phases.append((todo, options))
            else:
                par = [c for c in todo if c.fidelity != "execute"]
                ser = [c for c in todo if c.fidelity == "execute"]
                if par:
                    phases.append((par, options))
                if ser:  # one at a time, with a time-out enforced from outside the worker
                    phases.append((ser, replace(options, jobs=1, isolate=options.isolate or options.jobs > 1,
                                                timeout=options.timeout or options.execute_timeout)))
            by_key = {c.key: c for c in todo}
            for phase_cases, opts in phases:
                gen = ex.map_cases(phase_cases, opts)
                for out in _every_case(gen, phase_cases, name):
                    case = by_key[out["key"]]
                    out = check_outcome(out, case.technique)  # here, where no plugin code runs
                    ident = case.identity()
                    ident["key"] = case.key
                    store.add_outcome(ident, out, run_id, replace=rerun or case.key in refresh)
                    if in_process:  # the plugin runs in this process: an abort must not lose a finished case
                        store.flush()
                    if out.get("fields_read"):
                        seen_reads.setdefault((case.technique, case.code or "", case.variant, case.fidelity),
                                              set()).update(out["fields_read"])
                    st = out["status"]
                    summary.computed += 1
                    summary.by_status[st] = summary.by_status.get(st, 0) + 1
                    if st == "ok":
                        summary.ok += 1
                    elif st == "skipped":
                        summary.skipped += 1
                    else:
                        summary.failed += 1
                        if len(summary.failures) < 50:
                            summary.failures.append({"key": case.key, "case": case.describe(), "status": st,
                                                     "error": out.get("error")})
                    progress.update(st)
                gen = None
        if not started:
            progress.start(0, 0)
    except KeyboardInterrupt:
        summary.interrupted = True
        if gen is not None and hasattr(gen, "close"):
            try:
                gen.close()
            except BaseException:  # noqa: BLE001 - stopping workers must not hide the interrupt
                pass
    except BaseException as exc:
        summary.error = str(exc) or type(exc).__name__
        raise
    finally:
        _restore_sigterm(old_term)
        progress.stop()
        summary.seconds = time.monotonic() - t0
        counts = {"total": summary.total, "computed": summary.computed, "cached": summary.cached,
                  "ok": summary.ok + summary.cached, "failed": summary.failed, "skipped": summary.skipped}
        store.finish_run(run_id, summary.status, counts)
        try:
            for (t, code, v, f), r in seen_reads.items():
                store.add_fields_read(t, code, v, f, r)
            store.flush()  # the run's own results, with their recorded reads
            summary.warnings = _unread_overrides(list(reps.values()), store, seen_reads, run_id)
        except Exception as exc:  # noqa: BLE001 - a diagnostic must never lose the run
            summary.warnings.append(f"could not record the profile fields read: {exc}")
    return summary
