"""The public executor API: what a plugin's executor (the ``suite_executor`` hook) may use.

An executor receives resolved cases and yields one *outcome* dict per case; the coordinating
process (:func:`suite.runner.run_cases`) alone writes them to the store. This module is the
small, stable surface a third-party executor (a package of its own, as any plugin) builds on, so it never imports ``suite.runner`` internals:

* :class:`Executor`, :class:`ExecOptions`: the interface and the options it is given
  (``options.executor_options`` holds the executor's own ``-X NAME=VALUE`` options).
* :class:`Case`: the resolved unit of work (``key``, ``fidelity``, ``scenario``, ``tech``).
* :func:`run_isolated`: evaluate cases on this machine in forked worker processes with the
  local executor's crash and time-out attribution (a case that aborts, segfaults or hangs is
  stored ``crashed`` / ``timeout`` and the rest go on). A remote task (a SLURM array task, say)
  runs its share of cases through it.
* :func:`run_case`, :func:`crashed_outcome`: one case in this process; the outcome of a case
  that could not run.
* :func:`shippable`: a case made ready to pickle to another machine (the technique without its
  claims and properties, which a worker never needs).
* :data:`DONE_STATUSES`: the statuses a later run does not recompute (so an executor may reuse
  such an outcome that a lost coordinator never stored).
* :func:`pack`, :func:`run_sandboxed`: a batch of cases as bytes, and its evaluation on the remote
  side in a supervised child through the local pool (so the remote process never imports the
  plugin, and a case that hangs or crashes costs only itself); :func:`package_of` the plugin
  package of a case's technique (a batch should hold one package's cases).
"""

from __future__ import annotations

from dataclasses import replace

from suite.results.store import OK
from suite.runner.case import Case
from suite.runner.evaluate import crashed_outcome, package_of, run_case
from suite.runner.options import ExecOptions, Executor
from suite.runner.pool import run_isolated
from suite.runner.sandbox import pack, run_sandboxed

__all__ = ["Case", "Executor", "ExecOptions", "run_isolated", "run_case", "crashed_outcome", "shippable",
           "DONE_STATUSES", "pack", "run_sandboxed", "package_of"]

#: outcome statuses a later ``suite run`` does not recompute (every other one is rerun)
DONE_STATUSES = frozenset({OK})


def shippable(case: Case) -> Case:
    """*case* with a technique stripped of claims and properties, ready to pickle elsewhere.

    Raises
    ------
    suite.errors.SuiteError
        The case is not resolved (no technique or scenario attached).
    """
    from suite.errors import SuiteError

    if case.tech is None or case.scenario is None:
        raise SuiteError(f"case {case.key}: not resolved (resolve it with suite.runner.case.resolve_case)")
    return replace(case, tech=replace(case.tech, claims=[], properties=[]))
