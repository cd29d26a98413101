"""A run whose process ends before it writes its counts: a plugin that exits the process of an
``--in-process`` run (found by a plugin author's tryout: the run read "interrupted, cases 0" while it
held its finished cases, and ``--name`` was lost, since the name was given after the run ended)."""

from __future__ import annotations

import pytest

from suite.results import Store
from test_trust_plugins import CRASHER, install, suite_forked


def test_a_run_its_plugin_exited_keeps_its_name_and_counts_what_it_stored(tmp_path):
    site = install(tmp_path / "site", "evil_crash", CRASHER)
    exp = tmp_path / "exit.toml"
    exp.write_text('[before]\ntechnique = "evil-crash"\nparams = { mode = "ok", i = [1, 2, 3] }\n'
                   '[exit]\ntechnique = "evil-crash"\nparams = { mode = "exit3", i = 11 }\n')
    st = tmp_path / "s.sqlite"
    r = suite_forked(site, "run", str(exp), "--in-process", "--name", "exit-inproc", "-q", store=st)
    assert r.returncode == 3, r.stderr  # the plugin's os._exit(3) ended the command
    with Store(st) as store:
        rid = store.resolve_run("exit-inproc")  # named as it began
        info = store.run_info(rid)
        listed = store.runs().set_index("id").loc[rid]
    # --in-process commits each case as it finishes: the three ok cases before the exit are stored
    assert info["status"] == "interrupted"
    assert (info["total"], info["computed"], info["cached"], info["ok"], info["failed"]) == (3, 3, 0, 3, 0)
    assert (listed["status"], listed["total"], listed["ok"]) == ("interrupted", 3, 3)
    # and what it planned, written as it began: 3 + 1 cases (ops14: a killed run read its stored
    # count as its cases, 9 where 40 were planned)
    assert (info["planned"], listed["planned"]) == (4, 4)


def test_a_refused_name_ends_the_run_it_began_before_any_case(tmp_path):
    from session_context import session_context

    from suite.errors import StoreError
    from suite.runner import run_cases

    with Store(tmp_path / "s.sqlite") as st:
        with pytest.raises(StoreError, match="'123'"):  # all digits: it would read as a run id
            run_cases([], st, context=session_context(), name="123")
        (rid,) = st.runs()["id"].tolist()
        assert st.run_info(rid)["status"] == "error"  # not left "running" (read later as interrupted)
