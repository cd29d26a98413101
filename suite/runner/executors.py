"""Executors: where cases are evaluated. One interface, two built-in implementations.

An executor turns resolved :class:`~suite.runner.case.Case` objects into *outcomes*: plain,
pickle-able dicts (see :func:`suite.runner.evaluate.evaluate_outcome`) that the coordinating
process writes to the store. Workers never touch the store.

* ``local`` (default, :mod:`suite.runner.pool`): a pool of forked worker processes, or this
  process with ``--in-process``;
* ``dask`` (:mod:`suite.runner.dask_executor`): :mod:`dask.distributed`, each batch evaluated in a
  supervised sandbox (:mod:`suite.runner.sandbox`) on its worker.

The interface and the options are in :mod:`suite.runner.options`, one case's evaluation in
:mod:`suite.runner.evaluate`; this module looks executors up by name and re-exports those
names (their home before 0.3.0). A plugin adds an executor with the ``suite_executor(name)``
hook, returning an object with the :class:`Executor` interface (see ``docs/plugin-api.md``).
"""

from __future__ import annotations

from typing import Any

from suite.errors import SuiteError, did_you_mean
from suite.runner.checks import metric_problem
from suite.runner.dask_executor import DaskExecutor
from suite.runner.evaluate import (SUMMARY_MAX_ITEMS, CaseTimeout, crashed_outcome, evaluate_outcome, package_of,
                                   run_case, summarize_artifacts)
from suite.runner.options import ARTIFACT_MODES, DEFAULT_EXECUTE_TIMEOUT, DEFAULT_STALL_TIMEOUT, ExecOptions, Executor
from suite.runner.pool import LocalExecutor

__all__ = ["Executor", "ExecOptions", "LocalExecutor", "DaskExecutor", "get_executor", "run_case",
           "evaluate_outcome", "BUILTIN_EXECUTORS", "DEFAULT_EXECUTE_TIMEOUT", "DEFAULT_STALL_TIMEOUT",
           "metric_problem", "ARTIFACT_MODES", "SUMMARY_MAX_ITEMS", "summarize_artifacts", "crashed_outcome",
           "package_of", "CaseTimeout"]

BUILTIN_EXECUTORS: dict[str, type[Executor]] = {"local": LocalExecutor, "dask": DaskExecutor}


def get_executor(name: str, *, context: Any = None) -> Executor:
    """The executor called *name*: a built-in one, or one a plugin provides (``suite_executor``).

    Parameters
    ----------
    name : str
    context : suite.context.Context
        Where plugin executors come from (the command's); needed for a plugin's executor only.

    Raises
    ------
    SuiteError
        Unknown name (the known ones are listed); a plugin's executor asked for without a
        context; a plugin's executor without a ``map_cases`` method.
    """
    if name in BUILTIN_EXECUTORS:
        return BUILTIN_EXECUTORS[name]()
    if context is None:
        raise SuiteError(f"--executor {name}: not a built-in executor ({', '.join(sorted(BUILTIN_EXECUTORS))}); "
                         "a plugin's executor is looked up in a context: get_executor(name, context=Context.build())")
    ex = context.registry.executor(name)
    if ex is None:
        broken = [f"plugin {p.name!r} failed on it: {p.reason}" for p in context.registry.plugins
                  if p.status == "quarantined" and p.reason.startswith(f"suite_executor(name={name!r})")]
        plugins = context.registry.executor_plugins()
        raise SuiteError(f"--executor: unknown executor {name!r}{did_you_mean(name, [*BUILTIN_EXECUTORS, *plugins])}; "
                         f"expected one of {sorted(BUILTIN_EXECUTORS)} or one a plugin provides"
                         + (f" (plugins with executors: {', '.join(plugins)})" if plugins else "")
                         + "".join(f" ({b})" for b in broken))
    if isinstance(ex, type):
        ex = ex()
    if not hasattr(ex, "map_cases"):
        raise SuiteError(f"--executor {name}: the plugin's executor has no map_cases method")
    return ex  # type: ignore[no-any-return]
