"""One case, in whatever process evaluates it: a scenario in, a plain outcome dict out.

:func:`evaluate_outcome` is what every executor runs per case (the local pool's workers, the
in-process path, a remote sandbox); it never touches the store. An outcome is a pickle-able dict
(``key``, ``status``, ``metrics``, ``samples``, ``artifacts``, ``error``, ``traceback``,
``duration``, and ``fields_read`` for a case whose profile reads were recorded).

Nothing here is module state: what differs between callers (whether a ``KeyboardInterrupt`` is
the plugin's, which cases record their reads) is passed in as arguments.
"""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Mapping
from typing import Any

from suite.errors import SuiteError
from suite.frozen import changed_fields, guard, restore_changed_fields, same_items
from suite.hardware.recording import ReadPlan, Recording
from suite.runner.case import Case
from suite.runner.checks import BadMetric, bounded_error, bounded_traceback, metric_problem
from suite.runner.oracle import oracle_problem
from suite.technique import Skip, Technique

__all__ = ["CaseTimeout", "ReadSampler", "InputSnapshots", "LeftThreads", "CodeCheck", "machine_changed", "TRACK_CASES",
           "SUMMARY_MAX_ITEMS", "SUMMARY_MAX_CHARS",
           "summarize_artifacts",
           "evaluate_outcome", "run_case", "crashed_outcome", "package_of", "describe_exit", "error_line",
           "resolved_tech"]

#: a top-level artifact entry that is a sequence longer than this is a table: left out by "summary"
SUMMARY_MAX_ITEMS = 16
#: a top-level artifact entry that is a text or bytes longer than this (characters) is a dump: left
#: out by "summary" (a 300 MB string was stored whole, 630 MB of store for two cases)
SUMMARY_MAX_CHARS = 65536
#: cases of each (technique, variant, fidelity) per executor loop whose profile reads are recorded:
#: None, every case (recording in place costs a few per cent of a cheap model evaluation, where the
#: former recording view cost 3.3x it: docs/performance-history.md)
TRACK_CASES: int | None = None

Outcome = dict[str, Any]
_FLOATS = {float}


class CaseTimeout(BaseException):
    """Raised inside an in-process evaluation when its timeout expires (not an Exception, so a
    plugin's ``except Exception`` cannot swallow it)."""


class ReadSampler:
    """Which cases of one executor loop evaluate through a read-recording profile view.

    Every case by default (``per_group=None``); with an int, the first *per_group* cases of
    each (technique, variant, fidelity), counted by the loop that owns this object (one per pool
    worker, one per in-process run), never through module state.
    """

    __slots__ = ("per_group", "_seen")

    def __init__(self, per_group: int | None = TRACK_CASES) -> None:
        self.per_group = per_group
        self._seen: dict[tuple[Any, ...], int] = {}

    def take(self, group: tuple[Any, ...]) -> bool:
        """Whether the next case of *group* is recorded (and count it if so; every case, uncounted,
        with no limit)."""
        if self.per_group is None:
            return True
        n = self._seen.get(group, 0)
        if n >= self.per_group:
            return False
        self._seen[group] = n + 1
        return True


class CodeCheck:
    """Whether the code a case's key hashes (its technique's :func:`code_fingerprint` and the core's
    :func:`environment_fingerprint`, taken when the run resolved its cases) is still the code on
    disk, checked by the executor loop that evaluates the case, after the evaluation: a plugin
    edited (or ``git stash``-ed) while a run goes on, then imported by a worker, must not have its
    new numbers stored under the old code's key.

    The technique's package is checked after the first case of each chunk (:meth:`begin`) and
    after any case that imported a module (``sys.modules`` grew); the core's source (about 170
    files, 1.5 ms a stat walk against 0.1 ms for a plugin's) after the first case of the loop and
    after any case that imported a module: code already imported runs as it was, whatever its
    file says. Each is a stat of the hashed files (read again only when one changed), never per
    case of a chunk that imports nothing. A data file a model reads per case and edited in the
    middle of a chunk is seen from the next chunk on.
    """

    def __init__(self) -> None:
        self._first = True
        self._modules = -1

    def begin(self) -> None:
        """A new chunk: its first case is checked."""
        self._first = True

    def stale(self, case: Case) -> str | None:
        """The one-line error of *case* whose code changed since it was resolved, else None."""
        n = len(sys.modules)
        imported = n != self._modules
        if not (self._first or imported):
            return None  # (before the import below: an import statement per case cost more than this test)
        from suite.runner.fingerprint import code_fingerprint, environment_fingerprint

        self._first, self._modules = False, n
        tech = resolved_tech(case)
        if case.code is not None and code_fingerprint(tech, refresh=True) != case.code:
            who = package_of(tech)
        elif imported and case.env is not None and environment_fingerprint(refresh=True) != case.env:
            who = "the suite's core (suite/, its libraries)"
        else:
            return None
        self._first, self._modules = True, -1  # until the files are back as hashed, every case fails
        return (f"{who}: its code changed since the run resolved its cases (key {case.key}): run again "
                f"(on a cluster: every worker needs the files the run was started from)")

    def apply(self, case: Case, out: Outcome) -> Outcome:
        """*out* of *case*, failed (nothing stored ok under its key) when :meth:`stale`
        (``CodeChanged: ...``) or when it is an execute case evaluated on another machine than
        the one that resolved it (:func:`machine_changed`, ``MachineChanged: ...``)."""
        error = self.stale(case)
        error = f"CodeChanged: {error}" if error is not None else machine_changed(case)
        if error is not None:
            out.update(status="failed", metrics=None, samples=None, artifacts=None, traceback=None, error=error)
            out.pop("fields_read", None)
        return out


def machine_changed(case: Case) -> str | None:
    """The one-line error of an execute-fidelity *case* evaluated on another machine than the one
    whose fingerprint its key holds (:data:`~suite.runner.dependencies.MACHINE_INPUT`: the machine
    that resolved it), else None. An execute result is a timing of the machine that ran it: on a
    remote executor (dask, slurm) on other hardware it would be stored under the resolving
    machine's key. The fingerprint is computed once per process; a model case is never checked."""
    if case.fidelity != "execute":
        return None
    from suite.runner.dependencies import MACHINE_INPUT, machine_description, machine_fingerprint

    keyed, here = (case.inputs or {}).get(MACHINE_INPUT), machine_fingerprint()
    if keyed is None or keyed == here:
        return None
    return (f"MachineChanged: resolved on machine {keyed}, executed on machine {here} ({machine_description()}) "
            f"(key {case.key}): an execute case is a timing of the machine its key names: run with an executor on "
            "the machine that resolves, or on workers of the same machine type (architecture, CPU model and count, "
            "memory)")


class LeftThreads:
    """The threads the cases of one executor loop left running, each with the key of the case it was
    first seen after: a thread that writes an input later (a timer, a sleeping thread) makes a later
    case fail as having changed its input, and that case's error names the thread and the case that
    left it. One ``threading.active_count()`` per case; the threads are listed only when the count
    moved or more threads run than before the first case (a thread that ended and another that
    started in one case leave the count as it was). Threads are known by identity, not by ident
    (the system reuses idents)."""

    __slots__ = ("_count", "_base", "_seen", "_left")

    def __init__(self) -> None:
        import weakref

        self._count = -1
        self._base = 0
        self._seen: weakref.WeakSet[Any] = weakref.WeakSet()
        self._left: list[tuple[Any, str]] = []

    def before(self) -> None:
        """The loop's first case: the threads running before any case ran are nobody's."""
        if self._count < 0:
            import threading

            self._seen.update(threading.enumerate())
            self._count = self._base = threading.active_count()

    def after(self, key: str) -> None:
        """After the case *key*: a thread it left running is noted as its."""
        import threading

        n = threading.active_count()
        if n != self._count or n > self._base:
            for t in threading.enumerate():
                if t not in self._seen:
                    self._seen.add(t)
                    self._left.append((t, key))
        if self._left:  # kept while running: each ran during the next case, at least in part
            self._left = [x for x in self._left if x[0].is_alive()]
        self._count = n

    def suspects(self) -> str:
        """``" (a thread ... may have written it)"`` for the noted threads that were running when the
        case began (perhaps ended since: a timer writes once), else ``""``."""
        named = "; ".join(f"{t.name!r}, left running by case {key}" for t, key in self._left)
        return f" (a thread an earlier case left running may have written it: {named})" if named else ""


class InputSnapshots:
    """The per-case input guard's snapshots of profiles, workloads and parameter tables
    (:func:`suite.frozen.guard`), kept for the next case of one executor loop that shares the
    object (a sweep's cases share one parameter table per combination of the swept parameters
    other than the profile's: e.g. 32 tables for the 9,984 cases of benchmarks/bench_runner.py's sweep).

    A snapshot stays true after a case: :func:`suite.frozen.restore_changed` puts back whatever
    the case changed, so the next case is checked against the same state without walking the
    profile again (about half of the guard's cost per case). At most *size* profiles are kept
    (each snapshot holds its profile alive, so the id it is keyed by cannot be reused): a sweep
    over more profiles than that, visited in turn, would walk every one for every case (64, the
    former size, was below a 78-bandwidth sweep's 78 profiles).
    """

    __slots__ = ("size", "_snaps", "_plans", "_covers", "threads")

    def __init__(self, size: int = 4096) -> None:
        self.size = size
        self._snaps: dict[int, tuple[Any, list[Any]]] = {}
        self._plans: dict[int, Any] = {}
        self._covers: dict[int, tuple[Any, list[Any], bool]] = {}
        self.threads = LeftThreads()

    def plan(self, profile: Any) -> Any:
        """The :class:`suite.hardware.recording.ReadPlan` of *profile* (built now, or kept)."""
        hit = self._plans.get(id(profile))
        if hit is not None and hit.profile is profile:
            return hit
        if len(self._plans) >= self.size:
            self._plans.pop(next(iter(self._plans)))
        plan = self._plans[id(profile)] = ReadPlan(profile)
        return plan

    def covers(self, plan: Any, snap: list[Any]) -> bool:
        """Whether a recording through *plan* that ends clean (:meth:`Recording.stop_checked`)
        shows profile snapshot *snap* unchanged: every object the snapshot keeps is one the plan
        restores, with the same fields (keys and values the same objects, in the same order).
        Decided once per (plan, snapshot) pair; False for any object the walk of the guard keeps
        that the plan does not (then the guard checks the profile after every case)."""
        hit = self._covers.get(id(plan))
        if hit is not None and hit[0] is plan and hit[1] is snap:
            return hit[2]
        saved = {id(o): f for o, f in zip(plan.objs, plan.fields)}
        saved.update({id(t): c for t, c in zip(plan.tables, plan.table_items)})
        ok = bool(snap) and all(id(e[0]) in saved and same_items(e[1], saved[id(e[0])]) for e in snap)
        if len(self._covers) >= self.size:
            self._covers.pop(next(iter(self._covers)))
        self._covers[id(plan)] = (plan, snap, ok)
        return ok

    def of(self, profile: Any, label: str = "profile", limit: int = 256) -> list[Any]:
        """The snapshot of *profile* (or of a workload: any input shared by cases, under *label*,
        at most *limit* objects; taken now, or kept from an earlier case)."""
        if profile is None:
            return []
        hit = self._snaps.get(id(profile))
        if hit is not None and hit[0] is profile:
            return hit[1]
        if len(self._snaps) >= self.size:
            self._snaps.pop(next(iter(self._snaps)))
        snap = guard((label, profile), limit=limit)
        self._snaps[id(profile)] = (profile, snap)
        return snap


def error_line(exc: BaseException) -> str:
    """``"TypeName: first line of the message"``: a case's error as stored (the type always named,
    unlike :func:`suite.runner.verdicts.one_line`, which drops it for a SuiteError)."""
    msg = str(exc).strip().splitlines()
    return bounded_error(f"{type(exc).__name__}: {msg[0]}" if msg else type(exc).__name__)


def describe_exit(code: int | None) -> str:
    """The error of a case whose worker process ended with exit status *code* (negative: a signal)."""
    import signal

    if code is None:
        return "worker process vanished"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"worker process died ({name}) while running this case"
    return f"worker process exited with status {code} while running this case"


def summarize_artifacts(artifacts: dict[str, Any]) -> dict[str, Any]:
    """The ``"summary"`` of a result's artifacts: every top-level entry except tables and dumps.

    A table is a list, tuple or array of more than :data:`SUMMARY_MAX_ITEMS` items (a per-layer
    table, a trace); a dump a text or bytes of more than :data:`SUMMARY_MAX_CHARS`; the names of
    those left out are listed, sorted, under ``"_omitted"``. Decided from lengths only, so a summary
    costs no encoding of what it leaves out.
    """
    omitted = [k for k, v in artifacts.items()
               if (isinstance(v, (list, tuple)) and len(v) > SUMMARY_MAX_ITEMS)
               or (isinstance(v, (str, bytes)) and len(v) > SUMMARY_MAX_CHARS)
               or (bool(getattr(v, "ndim", 0)) and getattr(v, "size", 0) > SUMMARY_MAX_ITEMS)]
    if not omitted:
        return artifacts
    out = {k: v for k, v in artifacts.items() if k not in omitted}
    out["_omitted"] = sorted(omitted)
    return out


def _result_fields(tech: Technique, res: Any, artifacts: str) -> tuple[list[list[Any]], dict[str, list[float]],
                                                                        str | None]:
    """``(metrics, samples, artifacts JSON)`` of an evaluated result, each metric checked
    (:func:`suite.runner.checks.metric_problem`) and the oracle rule applied.

    Raises
    ------
    BadMetric
        A metric that cannot be true, or an oracle error beyond the tolerance.
    SuiteError
        Artifacts that are not JSON-serialisable.
    """
    ms = list(res.metrics.values())
    # comprehensions, not map over attrgetters: a specialised attribute read per field instead of
    # a C call per metric (the rows 0.7 against 1.6 us for a result of 9 metrics)
    values = [m.value for m in ms]
    samples: dict[str, list[float]] = {}
    total = sum(values) if set(map(type, values)) == _FLOATS else None
    # floats whose sum is finite are all finite; none below 0 and no samples: every test of
    # metric_problem passed, decided in C loops (a sweep's common case); else each is checked
    if not (total is not None and total - total == 0.0 and min(values, default=0.0) >= 0.0
            and [m.samples for m in ms].count(None) == len(ms)):
        for m in ms:
            bad = metric_problem(m)
            if bad:
                raise BadMetric(f"{tech.name}: {bad}")
            if m.samples is not None:
                samples[m.name] = list(m.samples)
    metrics = [[m.name, m.value, m.unit, m.direction] for m in ms]
    bad = oracle_problem(tech, res)
    if bad:
        raise BadMetric(f"{tech.name}: {bad}")
    art = res.artifacts
    if art and artifacts == "summary":
        art = summarize_artifacts(art)
    elif artifacts == "none":  # only the names left out: a later full run or reproduce computes it again
        art = {"_omitted": sorted(map(str, art))} if art else {}
    text = None
    if art or artifacts == "none":  # {} under none: a case with no artifacts, not one stored by 0.3.11's none
        try:
            text = _dumps()(art)
        except (TypeError, ValueError) as exc:
            raise SuiteError(f"{tech.name}: artifacts are not JSON-serialisable: {exc}") from None
    return metrics, samples, text


def _dumps() -> Any:
    """:func:`suite.results.codec.dumps`, imported on first use (this module stays free of the store)."""
    global _DUMPS
    if _DUMPS is None:
        from suite.results.codec import dumps

        _DUMPS = dumps
    return _DUMPS


_DUMPS: Any = None
__caches__ = ("_DUMPS",)  # suite.tamper: rebound by this module (built on first use), not an input


def _evaluate(tech: Technique, scenario: Any, out: Outcome, artifacts: str, interrupt_fails: bool, t0: float) -> None:
    """Evaluate into *out* (started at *t0*): its status and fields, every failure of plugin code caught."""
    try:
        # what a plugin prints goes to stderr: stdout is the command's output (--format json);
        # contextlib.redirect_stdout's swap, without its objects
        stdout, sys.stdout = sys.stdout, sys.stderr
        try:
            res = tech.evaluate(scenario)
        finally:
            sys.stdout = stdout
        out["duration"] = time.perf_counter() - t0  # evaluation only, not the checks
        out["metrics"], samples, out["artifacts"] = _result_fields(tech, res, artifacts)
        out["samples"] = samples or None
        out["status"] = "ok"
    except Skip as exc:
        out["status"], out["error"] = "skipped", str(exc)
    except CaseTimeout as exc:
        out["status"], out["error"] = "timeout", str(exc)
    except KeyboardInterrupt as exc:
        if not interrupt_fails:  # Ctrl-C of an in-process run: the run stops (and resumes later)
            raise
        # a worker ignores SIGINT, so this one was raised by the plugin itself: its case fails
        out["status"], out["error"], out["traceback"] = ("failed", f"KeyboardInterrupt raised by the plugin: "
                                                         f"{error_line(exc)}", bounded_traceback(traceback.format_exc()))
    except BaseException as exc:  # noqa: BLE001 - any failure of plugin code is a stored failed case
        out["status"], out["error"], out["traceback"] = ("failed", error_line(exc) + _readonly_hint(exc, scenario),
                                                         bounded_traceback(traceback.format_exc()))


#: numpy's refusals to write a read-only array (suite.frozen makes every input array read-only)
_READONLY = ("assignment destination is read-only", "cannot set WRITEABLE flag to True of this array")


def _readonly_hint(exc: BaseException, scenario: Any) -> str:
    """For numpy's refusal to write a read-only array: which input it is (an array the failing
    frame holds, found in the scenario's workload, parameters or profile) and what to do; else
    ``""``. Runs only for a failed case."""
    if not isinstance(exc, ValueError) or str(exc) not in _READONLY:
        return ""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    # the arrays the failing line holds (the input itself or a view of it), by the array that owns their memory
    held = {id(_root(v)) for v in (tb.tb_frame.f_locals.values() if tb is not None else ()) if hasattr(v, "flags")}
    found = _find_input(scenario, held) if held else None
    what = f"input {found}" if found else "an input array"
    return f" ({what} is read-only: a plugin must not change its inputs; copy it first, e.g. numpy.array(x))"


def _root(a: Any) -> Any:
    """The array that owns *a*'s memory (*a* itself, or the base at the end of its views)."""
    while hasattr(getattr(a, "base", None), "flags"):
        a = a.base
    return a


def _children(path: str, v: Any) -> Any:
    """(path, value) of what *v* holds: a mapping's items, a sequence's elements, an object's fields."""
    if isinstance(v, Mapping):
        return ((f"{path}[{k!r}]", x) for k, x in v.items())
    if isinstance(v, (list, tuple)):
        return ((f"{path}[{i}]", x) for i, x in enumerate(v))
    d = getattr(v, "__dict__", None)
    return ((f"{path}.{k}", x) for k, x in d.items()) if isinstance(d, dict) else ()


def _find_input(scenario: Any, ids: set[int], limit: int = 2000) -> str | None:
    """The path (``workload.weights``) of the first of the scenario's inputs whose id is in *ids*
    (breadth first, at most *limit* objects)."""
    from collections import deque

    todo = deque((name, getattr(scenario, name, None)) for name in ("workload", "params", "profile"))
    while todo and limit > 0:
        path, v = todo.popleft()
        limit -= 1
        if v is None or type(v) in (int, float, str, bool):
            continue
        if id(v) in ids or (hasattr(v, "flags") and id(_root(v)) in ids):
            return path
        todo.extend(_children(path, v))
    return None


def evaluate_outcome(tech: Technique, scenario: Any, key: str, artifacts: str = "full", *,
                     interrupt_fails: bool = False, record_reads: bool = False,
                     snapshots: InputSnapshots | None = None) -> Outcome:
    """Evaluate one scenario and return its outcome as a plain dict.

    Parameters
    ----------
    tech : Technique
    scenario : Scenario
        Resolved (frozen inputs).
    key : str
        The case key the outcome carries.
    artifacts : str
        What of the result's artifacts the outcome carries (``"none"``, ``"summary"``,
        ``"full"``; see :class:`suite.runner.options.ExecOptions`).
    interrupt_fails : bool
        A ``KeyboardInterrupt`` during the evaluation fails the case (in a worker process, which
        ignores SIGINT, only the plugin raises one) instead of propagating (in-process: Ctrl-C).
    record_reads : bool
        Record the profile fields the evaluation reads, in the profile's own objects
        (:class:`suite.hardware.recording.Recording`): an ok outcome then lists ``fields_read``.
    snapshots : InputSnapshots, optional
        The calling loop's kept profile snapshots (default: the profile is walked afresh).

    Returns
    -------
    dict
        ``key``, ``status`` (``ok``, ``skipped``, ``failed``, ``timeout``), ``metrics`` (list of
        ``[name, value, unit, direction]``), ``samples`` (metric -> list of float), ``artifacts``
        (JSON text or None), ``error`` (one line or None), ``traceback`` (or None), ``duration``
        (s of evaluation), ``fields_read`` (sorted dotted paths; recorded ok cases only).
    """
    t0 = time.perf_counter()
    out: Outcome = {"key": key, "metrics": None, "samples": None, "artifacts": None, "error": None,
                    "traceback": None, "duration": None}
    # the inputs' state before the case: a change by any route (vars(), object.__setattr__,
    # __dict__, dict.__setitem__) fails this case and is undone before the next one
    profile = getattr(scenario, "profile", None)
    snapshots = snapshots or InputSnapshots()
    snaps = _snapshots_of(scenario, profile, snapshots)
    rec, reads, clean = None, None, False
    threads = snapshots.threads
    threads.before()
    if record_reads and profile is not None:
        rec = Recording(snapshots.plan(profile)).start()
    try:
        _evaluate(tech, scenario, out, artifacts, interrupt_fails, t0)
    finally:
        if rec is not None:  # the profile's own objects as they were; clean: checked on the way
            reads, clean = rec.stop_checked()
    if rec is not None and clean and snapshots.covers(rec.plan, snaps[0]):
        snaps = snaps[1:]  # the recording found every object of the profile as the snapshot has it
    _fail_if_mutated(out, tech, _restore_changed(snaps), threads)
    threads.after(key)
    if out["duration"] is None or out["status"] != "ok":
        out["duration"] = time.perf_counter() - t0
    if reads is not None and out["status"] == "ok":
        out["fields_read"] = reads
    return out


def _fail_if_mutated(out: Outcome, tech: Technique, changed: str | None, threads: LeftThreads) -> None:
    """*out* failed (``InputMutated``) when the case changed an input (*changed*, put back), naming a
    thread an earlier case left running that may have written it."""
    if changed is not None:
        out.update(status="failed", metrics=None, samples=None, artifacts=None, traceback=None,
                   error=f"InputMutated: {tech.name}: the case changed its input {changed} (inputs are "
                         f"read-only; copy them to change them); put back for the next case{threads.suspects()}")


def _snapshots_of(scenario: Any, profile: Any, snapshots: InputSnapshots) -> tuple[list[Any], ...]:
    """The input guard's snapshots of a case: its profile (first), workload and parameter table, and
    each input a parameter names (``Param(..., ref=...)``: a profile or workload shared by the cases
    that name it, kept by its own identity)."""
    snaps = (snapshots.of(profile), snapshots.of(getattr(scenario, "workload", None), "workload", limit=1),
             snapshots.of(getattr(scenario, "params", None), "scenario.params"))
    inputs = getattr(scenario, "inputs", None)
    if not inputs:
        return snaps
    # the case's own profile or workload named again is held once (its recording may cover it)
    own = (profile, getattr(scenario, "workload", None))
    return snaps + tuple(snapshots.of(v, f"scenario.input({k!r})") for k, v in inputs.items()
                         if not any(v is o for o in own))


def _restore_changed(snaps: tuple[list[Any], ...]) -> str | None:
    """:func:`suite.frozen.restore_changed` of each snapshot (each put back): the changed fields of
    all of them, the first found first (a case that wrote its profile and its parameters names both)."""
    return changed_fields([label for snap in snaps for label in restore_changed_fields(snap)])


def resolved_tech(case: Case) -> Technique:
    """The technique *case* was resolved against.

    Raises
    ------
    SuiteError
        The case is not resolved.
    """
    if case.tech is None:
        raise SuiteError(f"case {case.key}: not resolved (no technique attached; resolve it with suite.runner.resolve_case)")
    return case.tech


def package_of(tech: Technique | None) -> str:
    """The top-level package that implements *tech* (the module of its fidelity functions), the
    unit a pool worker is bound to: a worker never runs another package's cases, so a plugin
    that corrupts its process (patches a core function, writes a shared profile through
    ``object.__setattr__``) can only lie about its own cases."""
    if tech is None:
        return ""
    return tech.package or tech.name


def run_case(case: Case, technique: Technique | None = None, artifacts: str = "full",
             snapshots: InputSnapshots | None = None) -> Outcome:
    """Evaluate a resolved case (with the technique it was resolved against, unless one is given);
    *artifacts* as :attr:`suite.runner.options.ExecOptions.artifacts`; *snapshots*: the caller's
    loop's :class:`InputSnapshots`, so an executor calling this per case walks each profile once.

    Raises
    ------
    SuiteError
        The case is not resolved.
    """
    technique = technique if technique is not None else resolved_tech(case)
    if case.scenario is None:
        raise SuiteError(f"case {case.key}: not resolved")
    return evaluate_outcome(technique, case.scenario, case.key, artifacts, snapshots=snapshots)


def crashed_outcome(key: str, error: str, status: str = "crashed") -> Outcome:
    """The outcome of a case that could not run (*status* ``crashed`` or ``timeout``)."""
    return {"key": key, "status": status, "metrics": None, "samples": None, "artifacts": None,
            "error": error, "traceback": None, "duration": None}
