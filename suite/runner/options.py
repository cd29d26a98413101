"""How cases are executed: the options every executor is given, and the executor interface.

:class:`ExecOptions` is what ``suite run`` passes down (jobs, time-outs, the dask scheduler, a
plugin executor's ``-X`` options, the artifacts mode); :class:`Executor` is the interface of the
built-in executors (:mod:`suite.runner.pool`, :mod:`suite.runner.dask_executor`) and of a
plugin's (the ``suite_executor`` hook).
"""

from __future__ import annotations

import abc
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from suite.errors import SuiteError
from suite.runner.case import Case

__all__ = ["ExecOptions", "Executor", "ARTIFACT_MODES", "DEFAULT_EXECUTE_TIMEOUT", "DEFAULT_STALL_TIMEOUT", "stop_signals"]

#: default time-out (s) of an execute-fidelity case, enforced from outside its worker process
DEFAULT_EXECUTE_TIMEOUT = 600.0
#: default hang guard (s) of model and simulate cases: a worker silent this long is stalled
DEFAULT_STALL_TIMEOUT = 600.0
#: what of a result's artifacts is stored (``--artifacts``): nothing, the small entries, everything
ARTIFACT_MODES = ("none", "summary", "full")


@dataclass(frozen=True)
class ExecOptions:
    """How to execute.

    Attributes
    ----------
    jobs : int
        Worker processes.
    timeout : float or None
        Per-case time-out (s) for every case; None for none.
    scheduler : str or None
        A dask scheduler address.
    isolate : bool
        Evaluate in worker processes even with one job (the default), so a plugin that aborts,
        segfaults, exhausts memory or hangs costs only its own case. ``False`` is the in-process
        fast path (``--in-process``): for debugging and profiling a plugin you trust.
    execute_timeout : float or None
        Time-out (s) of an execute-fidelity case when ``timeout`` is not given
        (:data:`DEFAULT_EXECUTE_TIMEOUT`); enforced by killing the worker.
    stall_timeout : float or None
        The hang guard of the other cases when ``timeout`` is not given
        (:data:`DEFAULT_STALL_TIMEOUT`): a worker that reports nothing for this long is killed,
        its unreported cases are re-run one at a time, and the one that stalls again is stored as
        ``timeout``. Outcomes stay batched (no per-case messages), so model sweeps keep their speed.
    executor_options : mapping of str to str
        Options of a plugin's executor, by name, as given on the command line
        (``-X partition=gpu`` or ``--slurm-partition gpu`` for ``--executor slurm``); the executor
        parses and validates them. Empty for the built-in executors.
    artifacts : str
        What of each result's artifacts is stored (:data:`ARTIFACT_MODES`): ``"summary"``
        (default) keeps every top-level entry except tables (sequences of more than
        :data:`suite.runner.evaluate.SUMMARY_MAX_ITEMS` items, e.g. a per-layer table) and texts
        longer than :data:`suite.runner.evaluate.SUMMARY_MAX_CHARS` characters, and lists the ones
        left out under ``"_omitted"``; ``"none"`` stores only those names (all of them);
        ``"full"`` keeps everything (and recomputes cases stored with a summary or none, as
        ``suite reproduce`` does).

    Raises
    ------
    SuiteError
        ``artifacts`` not one of :data:`ARTIFACT_MODES`.
    """

    jobs: int = 1
    timeout: float | None = None
    scheduler: str | None = None
    isolate: bool = True
    execute_timeout: float | None = DEFAULT_EXECUTE_TIMEOUT
    stall_timeout: float | None = DEFAULT_STALL_TIMEOUT
    executor_options: Mapping[str, str] = field(default_factory=dict)
    artifacts: str = "summary"

    def __post_init__(self) -> None:
        if self.artifacts not in ARTIFACT_MODES:
            raise SuiteError(f"--artifacts: expected one of {', '.join(ARTIFACT_MODES)}, got {self.artifacts!r}")


class Executor(abc.ABC):
    """The executor interface.

    ``map_cases(cases, options)`` yields one outcome dict per case, in any order, as cases
    finish. It must yield an outcome for every case (``crashed`` if it could not run it) unless
    the consumer stops early (Ctrl-C: ``close()`` of the generator), and release its workers when
    the generator is closed.
    """

    name: str = ""
    #: What a SIGHUP (the ssh session closed) does to a run on this executor. False: it stops the
    #: run as Ctrl-C does, committing what finished (the built-in local and dask executors: their
    #: workers would die with the session anyway). True: an executor whose work outlives the
    #: coordinator (jobs in a batch queue) keeps SIGHUP's default, so the coordinator ends at once
    #: and the work goes on for the next run of the same command to collect. None (not declared,
    #: every executor written before 0.3.12): the same as True, as 0.3.11 did for every executor
    detaches_on_hangup: bool | None = None

    @abc.abstractmethod
    def map_cases(self, cases: Sequence[Case], options: ExecOptions) -> Iterator[dict[str, Any]]:
        raise NotImplementedError


def stop_signals() -> list[Any]:
    """The signals that stop a run as Ctrl-C does: SIGTERM, and SIGHUP where the platform has it
    (the engine's handlers and the dask executor's interrupt holder read this one list)."""
    import signal

    return [signal.SIGTERM] + ([signal.SIGHUP] if hasattr(signal, "SIGHUP") else [])
