"""Progress: plain periodic lines when not a terminal, nothing when quiet."""

from __future__ import annotations

import io

from suite.runner import ExecOptions, expand_entry, run_cases
from suite.runner.progress import NullProgress, PlainProgress, RichProgress, make_progress
from suite.context import Context


def test_plain_lines_count_done_failed_cached(fake_registry, store):
    exp = expand_entry({"technique": "fake", "variants": ["base"], "params": {"x": [1, 2], "mode": ["ok", "raise"]}},
                       context=Context.build())
    run_cases(exp.cases[:1], store, context=Context.build())  # one case already stored
    buf = io.StringIO()
    prog = PlainProgress(buf, every=0.0)  # a line per case
    run_cases(exp.cases, store, options=ExecOptions(jobs=1), progress=prog, context=Context.build())
    lines = buf.getvalue().splitlines()
    assert lines[0] == "run: 4 case(s): 1 already stored, 3 to compute"
    assert lines[-1].startswith("progress: 3/3 computed (2 failed, 0 skipped), 1 cached, ")
    assert "cases/s" in lines[-1]
    assert len(lines) == 4


def test_make_progress_choice():
    class Tty(io.StringIO):
        def isatty(self):
            return True

    assert isinstance(make_progress(quiet=True), NullProgress)
    assert isinstance(make_progress(stream=io.StringIO()), PlainProgress)
    assert isinstance(make_progress(stream=Tty()), RichProgress)
