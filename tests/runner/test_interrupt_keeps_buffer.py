"""A Ctrl-C (or SIGTERM) in the middle of a run keeps every case that finished before it, including
the ones still waiting in the store's buffer: the SIGTERM and kill -9 tests send their signal at a
time of their own and usually land just after a commit, when the buffer is empty, so they cannot
see a run that drops its buffered outcomes when it is interrupted. Here nothing is committed before
the interrupt (a batch of 10,000 cases or an hour) and the interrupt comes after exactly 4 cases."""

from __future__ import annotations

from suite.context import Context
from suite.results import Store
from suite.runner import ExecOptions, expand_entry, run_cases
from suite.runner.options import Executor
from suite.runner.pool import LocalExecutor

FINISHED = 4


class _InterruptedAfter(Executor):
    """The in-process executor, interrupted (as by Ctrl-C) when it has handed over *n* outcomes."""

    name = "interrupted-after"

    def __init__(self, n):
        self.n = n

    def map_cases(self, cases, options):
        inner = LocalExecutor().map_cases(cases, ExecOptions(jobs=1))
        for i, out in enumerate(inner):
            if i == self.n:
                raise KeyboardInterrupt
            yield out


def test_an_interrupted_run_commits_the_cases_still_buffered(fake_registry, tmp_path):
    ctx = Context.build()
    cases = expand_entry({"technique": "fake", "variants": ["base"], "params": {"x": list(range(1, 11))}},
                         context=ctx).cases
    with Store(tmp_path / "s.sqlite", batch_size=10_000, batch_seconds=3600.0) as st:
        s = run_cases(cases, st, executor=_InterruptedAfter(FINISHED), context=ctx)
        assert s.interrupted and s.computed == FINISHED
    with Store(tmp_path / "s.sqlite", readonly=True) as st:
        assert st.run_info(s.run_id)["status"] == "interrupted"
        stored = st.cases(s.run_id)
        assert len(stored) == FINISHED, f"{len(stored)} of the {FINISHED} finished cases stored"
        assert sorted(stored["param.x"]) == [1, 2, 3, 4] and set(stored["status"]) == {"ok"}
