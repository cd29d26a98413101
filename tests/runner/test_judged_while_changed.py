"""``suite reproduce``: a verdict judged while a watched plugin thread had changed the core is not printed.

A plugin whose import starts a thread can rebind a core function once judging has begun (after
every load check and after the recheck before judging): the run side stores such in-process cases
``failed``, but the verdicts judged in that window were printed (only their caching was skipped).
Here the thread rebinds ``suite.runner.judging.classify`` (where a value lies in the band, as if it
were 3x) while the claim's value is derived: the clean value is 1.0, inside ``Approx(1.0)``
(reproduced, no null); judged while changed it printed ``not reproduced``.
"""

from __future__ import annotations

import json
import sqlite3

import pytest

from test_trust_plugins import MAIN_IN, install, run_suite  # noqa: F401  (run_suite: a fixture)

BODY = '''
import sys, threading, time
from suite import Approx, Claim, ScenarioSpec

PATCHED = threading.Event()


def _judging():  # the core's module as the command runs (one a plugin imports first may be replaced)
    return sys.modules["suite.runner.judging"]


def _tripled(claim, value, replicates):  # where the value lies, as if it were 3x
    return sys.modules["suite.runner.bootstrap"].classify(claim, 3 * value, replicates)


''' + MAIN_IN + '''

def _later():  # while the claim's value is derived (judging has begun): every derived value x3
    while True:
        if _main_in("_derive") and _judging().classify is not _tripled:
            _judging().classify = _tripled
            PATCHED.set()
            if ONCE:
                return
        time.sleep(0.0002)


def _derive(results):
    PATCHED.wait(5)  # the thread has rebound the core before the value is checked
    if not ONCE:
        PATCHED.clear()  # the next try waits for the next patch
    return results["base"]["m"]


threading.Thread(target=_later, name="patcher", daemon=True).start()


def evaluate(scenario):
    return Result().add("m", 1.0, "s", "lower")


TECH = technique("judged", evaluate, claims=[
    Claim("m-1", "m is 1", "Table 1", True, Approx(1.0, rel=0.01), cases={"base": ScenarioSpec("base")},
          derive=_derive, null_reason="a test claim")])


@hookimpl
def suite_techniques():
    return [TECH]
'''


def _judgements(store) -> int:
    conn = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return conn.execute("SELECT COUNT(*) FROM judgements").fetchone()[0]
    finally:
        conn.close()


def test_a_verdict_judged_while_a_thread_changed_the_core_is_judged_again_once_put_back(tmp_path, run_suite):
    site = install(tmp_path / "site", "judged_thread", "ONCE = True\n" + BODY)
    st = tmp_path / "s.sqlite"
    r = run_suite(site, "reproduce", "judged", "--format", "json", store=st)
    assert r.returncode == 0, r.stderr
    assert "plugin 'judged_thread' left a thread still running" in r.stderr
    (c,) = json.loads(r.stdout)["claims"]
    # the clean verdict (1.0 by the model, inside 1 +- 1%); judged while changed: "not reproduced"
    assert (c["verdict"], c["ours"]) == ("reproduced (no null)", 1.0)
    assert ("warning: claim judged/m-1 judged again once the core was changed after plugin 'judged_thread' loaded "
            "(a thread it started): suite.runner.judging.classify put back") in r.stderr
    assert _judgements(st) == 1  # the clean judgement, cached


def test_a_claim_that_cannot_be_judged_on_an_unchanged_core_is_shown_not_judged_and_not_cached(tmp_path, run_suite):
    site = install(tmp_path / "site", "judged_thread", "ONCE = False\n" + BODY)
    st = tmp_path / "s.sqlite"
    r = run_suite(site, "reproduce", "judged", "--format", "json", store=st)
    assert r.returncode == 0, r.stderr
    (c,) = json.loads(r.stdout)["claims"]
    assert (c["verdict"], c["ours"]) == ("error", None)
    assert c["reason"].startswith("not judged: the core was changed while this claim was judged")
    assert "'judged_thread'" in c["reason"]
    assert _judgements(st) == 0
