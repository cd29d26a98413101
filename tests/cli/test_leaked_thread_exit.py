"""``suite run --in-process`` with a plugin that leaves a non-daemon thread running: ops14 saw the
command print its summary, then hang 30 s (Python waits for every non-daemon thread before it exits)
with nothing said. The command now exits at once and names the thread it did not wait for. A new
interpreter, as a user runs it: a forked child (tests/forkrun.py) ends with os._exit, never waiting."""

from __future__ import annotations

import subprocess
import sys

from test_trust_plugins import _env, install

LEAKER = '''
import threading


def leak(s):
    # not a daemon, and it never ends: the Event is never set
    threading.Thread(target=threading.Event().wait, name="leaked-waiter").start()
    return Result().add("y", float(s.params["i"]), "s", "lower")


T = technique("evil-leak", leak, parameters={"i": Param(int, 0)})


@hookimpl
def suite_techniques():
    return [T]
'''


def test_a_leaked_thread_does_not_hold_the_command_and_is_named(tmp_path):
    site = install(tmp_path / "site", "evil_leak", LEAKER)
    # the plugin's thread waits forever: were the command to wait for it, it would never end and the
    # generous timeout (the command takes ~2 s) fails the test
    r = subprocess.run([sys.executable, "-m", "suite", "run", "--technique", "evil-leak", "--param", "i=1",
                        "--in-process", "-q"], env=_env(site, tmp_path / "s.sqlite"), capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert ("note: exiting without waiting for 1 thread that plugin code left running in this process: "
            "'leaked-waiter'") in r.stderr.splitlines()
