"""A run still running reads with the counts of the cases it stored so far and the number it
planned (ops14 finding 4: while a run held 19 of its 40 cases, ``suite results list`` showed
``running, cases 0, computed 0, ok 0`` and ``results show`` "cases 0" above a table of 19 rows)."""

from __future__ import annotations

import re

from click.testing import CliRunner

from suite.context import Context
from suite.results import Store
from suite.results.runs import case_count
from suite.runner import ExecOptions, expand_entry, run_cases
from suite.runner.options import Executor
from suite.runner.pool import LocalExecutor

SEEN_AT = 4  # the store is read when the run has stored this many of its 10 cases


class _Peek(Executor):
    """The in-process executor, which reads the store (as another terminal would) after *n* outcomes."""

    name = "peek"

    def __init__(self, path, n, store=None):
        self.path, self.n, self.seen, self.store = path, n, {}, store

    def map_cases(self, cases, options):
        for i, out in enumerate(LocalExecutor().map_cases(cases, ExecOptions(jobs=1))):
            if i == self.n:
                self._read()
            yield out

    def _read(self):
        from suite.cli import main

        if self.store is not None:  # the run's flusher thread commits on its own time: wait for it
            self.store.flush()
        with Store(self.path, readonly=True) as st:
            rid = int(st.runs()["id"].iloc[-1])
            self.seen["info"] = st.run_info(rid)
            self.seen["row"] = st.runs().set_index("id").loc[rid].to_dict()
        self.seen["list"] = CliRunner().invoke(main, ["results", "list", "--store", str(self.path)]).output
        self.seen["show"] = CliRunner().invoke(main, ["results", "show", "latest", "--store", str(self.path)]).output


def test_a_running_run_shows_what_it_stored_of_what_it_planned(fake_registry, tmp_path):
    ctx = Context.build()
    cases = expand_entry({"technique": "fake", "variants": ["base"], "params": {"x": list(range(1, 11))}},
                         context=ctx).cases
    with Store(tmp_path / "s.sqlite", batch_size=1) as st:  # each case committed as it finishes
        peek = _Peek(tmp_path / "s.sqlite", SEEN_AT, st)
        s = run_cases(cases, st, executor=peek, context=ctx)
    info, row = peek.seen["info"], peek.seen["row"]
    assert info["status"] == "running"
    assert (info["total"], info["computed"], info["ok"], info["planned"]) == (4, 4, 4, 10)
    assert (row["status"], row["total"], row["computed"], row["planned"]) == ("running", 4, 4, 10)
    assert case_count(info) == "4 stored of 10 planned"
    # the list's row: status, cases, computed, cached, failed
    assert re.search(r"running\s*│\s*4 stored of 10 planned\s*│\s*4\s*│\s*0\s*│\s*0\s*│", peek.seen["list"]), \
        peek.seen["list"]
    assert "cases 4 stored of 10 planned: computed 4, cached 0, ok 4" in peek.seen["show"]
    with Store(tmp_path / "s.sqlite", readonly=True) as st:  # finished: its own counts, no plan
        done = st.run_info(s.run_id)
    assert (done["status"], done["total"], done["computed"], "planned" in done) == ("done", 10, 10, False)
    assert case_count(done) == "10"


class _CtrlC(Executor):
    """The in-process executor, Ctrl-C'd (as the runner sees it) after *n* outcomes in all."""

    name = "ctrl-c"

    def __init__(self, n):
        self.left = n

    def map_cases(self, cases, options):
        for out in LocalExecutor().map_cases(cases, ExecOptions(jobs=1)):
            if not self.left:
                raise KeyboardInterrupt
            self.left -= 1
            yield out


def test_an_interrupted_run_shows_what_it_stored_of_what_it_planned(fake_registry, tmp_path):
    """newuser14 finding 2: a Ctrl-C'd (or SIGTERM'd) run read ``interrupted | 96 | 15`` (its plan
    as its cases) and JSON ``"cases": 96, "planned": null``, where a kill -9 of the same sweep read
    "18 stored of 96 planned". Here 2 of the 10 cases are stored by an earlier run and 3 more are
    computed before the Ctrl-C: 5 stored of 10 planned. The run reads its cases in chunks of 2, then
    4 (stored 1-2, then 3-6): the Ctrl-C comes in its second chunk, when it has seen 6 of its 10 cases."""
    import json

    from suite.cli import main

    ctx = Context.build()

    def sweep(xs):
        return expand_entry({"technique": "fake", "variants": ["base"], "params": {"x": xs}}, context=ctx).cases

    path = tmp_path / "s.sqlite"
    with Store(path) as st:
        run_cases(sweep([1, 2]), st, context=ctx)
        s = run_cases(sweep(list(range(1, 11))), st, executor=_CtrlC(3), context=ctx, chunk_size=2)
    assert s.interrupted and (s.total, s.computed, s.cached) == (6, 3, 2)
    with Store(path, readonly=True) as st:
        info = st.run_info(s.run_id)
        row = st.runs().set_index("id").loc[s.run_id].to_dict()
    assert (info["status"], info["total"], info["computed"], info["cached"], info["ok"], info["planned"]) == \
        ("interrupted", 5, 3, 2, 5, 10)
    assert (row["status"], row["total"], row["planned"]) == ("interrupted", 5, 10)
    listed = CliRunner().invoke(main, ["results", "list", "--store", str(path)]).output
    assert re.search(r"interrupted\s*│\s*5 stored of 10 planned\s*│\s*3\s*│\s*2\s*│\s*0\s*│", listed), listed
    doc = json.loads(CliRunner().invoke(main, ["results", "list", "--store", str(path), "--format", "json"]).output)
    assert [(r["status"], r["cases"], r["planned"]) for r in doc] == [("done", 2, None), ("interrupted", 5, 10)]
    shown = CliRunner().invoke(main, ["results", "show", "latest", "--store", str(path)]).output
    assert "cases 5 stored of 10 planned: computed 3, cached 2, ok 5" in shown
