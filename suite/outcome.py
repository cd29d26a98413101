"""The outcome of one case: what an executor (the ``suite_executor`` hook) yields per case.

A leaf module (it imports nothing of the suite), so the runner, the executors and the public
plugin API (:mod:`suite.api`) share one definition. An outcome is a plain dict, so it pickles to
a worker process or another machine unchanged; :class:`CaseOutcome` types it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, Literal, NotRequired, Protocol, TypedDict


__all__ = ["CaseOutcome", "CaseExecutor", "Status", "STATUSES"]

#: ``ok``: metrics measured; ``skipped``: the technique does not apply (:class:`suite.technique.Skip`);
#: ``failed``: the plugin raised; ``timeout``: the case ran past its limit; ``crashed``: the
#: process running it died (signal, abort, lost worker).
Status = Literal["ok", "skipped", "failed", "timeout", "crashed"]

#: every value of :data:`Status`
STATUSES: tuple[Status, ...] = ("ok", "skipped", "failed", "timeout", "crashed")


class CaseOutcome(TypedDict):
    """One case's outcome, as ``Executor.map_cases`` yields it.

    Keys
    ----
    key : str
        The case key (``Case.key``) the outcome belongs to.
    status : Status
        See :data:`Status`.
    metrics : list of [name, value, unit, direction], or None
        The measured metrics (``status == "ok"`` only); value a float in *unit*, direction
        ``"lower"`` or ``"higher"`` is better.
    samples : dict of str to list of float, or None
        Repeated measurements per metric name, where the technique reported them.
    artifacts : str or None
        The result's artifacts as JSON text (or None).
    error : str or None
        One line saying why the case did not give metrics.
    traceback : str or None
        The plugin's traceback of a ``failed`` case.
    duration : float or None
        Seconds the evaluation took (None when it never ran).
    fields_read : list of str, optional
        The profile fields the case read (recorded for the first cases of each technique,
        variant and fidelity in a process).
    """

    key: str
    status: str
    metrics: list[list[object]] | None
    samples: dict[str, list[float]] | None
    artifacts: str | None
    error: str | None
    traceback: str | None
    duration: float | None
    fields_read: NotRequired[list[str]]


class CaseExecutor(Protocol):
    """What a ``suite_executor`` hook returns: an object with a ``name`` and ``map_cases``.

    ``map_cases(cases, options)`` receives resolved cases (:class:`suite.api.Case`) and the run's
    :class:`suite.api.ExecOptions`, and yields one :class:`CaseOutcome` per case, in any order, as
    cases finish. It must yield an outcome for every case (``crashed`` if it could not run one)
    unless the consumer stops early (Ctrl-C closes the generator), and release its workers when
    the generator is closed. Subclassing :class:`suite.api.Executor` gives both.
    """

    name: str

    def map_cases(self, cases: Sequence[Any], options: Any) -> Iterator[CaseOutcome]:
        """Yield one outcome per case of *cases*."""
        ...
