"""The runner: experiment files and sweeps -> cases -> executors -> the results store.

Public API::

    from suite.runner import expand_entry, expand_experiment, run_cases, reproduce, ExecOptions
    # ctx: the caller's suite.context.Context (the CLI builds one per command)
    exp = expand_entry({"technique": "my-technique", "params": {"nodes": [1, 2, 4]}}, context=ctx)
    summary = run_cases(exp.cases, Store(), options=ExecOptions(jobs=2), context=ctx)
"""

from suite.runner.case import Case, Resolver, case_key, resolve_case
from suite.runner.engine import RunSummary, run_cases
from suite.runner.executors import ExecOptions, Executor, get_executor, run_case
from suite.runner.experiment import Expansion, expand_entry, expand_experiment, find_experiment, load_experiment
from suite.runner.reproduce import Scoreboard, reproduce

__all__ = ["Case", "Resolver", "case_key", "resolve_case", "RunSummary", "run_cases", "ExecOptions", "Executor",
           "get_executor", "run_case", "Expansion", "expand_entry", "expand_experiment", "find_experiment",
           "load_experiment", "Scoreboard", "reproduce"]
