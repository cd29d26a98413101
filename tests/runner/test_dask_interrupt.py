"""Cases a dask batch has finished reach the store before the batch ends: on Ctrl-C (collected
from the workers once more before the run stops) and when the batch's worker dies (collected by
the polls every ``POLL_SECONDS``; only the cases not collected are re-run). Batches run in
threads of this process through the executor's own worker function (fakedask.ThreadClient); the
real-cluster twin is in test_dask_cluster.py (slow).

The sweep: ``fake`` with n = 1..16 (y = x * n * 10 with x = 1, fakeplugin.y_of on fake-cluster-a's 10 Gbit/s)
and ``FAKE_GATE=PATH:8``: cases n <= 8 finish at once, n > 8 wait for the gate file. Cut into 4
striped batches (2 pretend workers x 2), each batch holds 2 cases of n <= 8 first, then 2 gated
ones: so no batch can end while the gate is shut, and exactly 8 cases are finished."""

from __future__ import annotations

import os
import signal
import time

import pytest
from fakedask import ThreadClient, run_on_fake_dask, thread_wait
from storetable import store_table
from suite.context import Context

pytest.importorskip("distributed", reason="the dask executor needs dask.distributed (extra [dask])")

N, OPEN = 16, 8


def _sweep():
    from suite.runner import expand_entry

    entry = {"technique": "fake", "variants": ["base"], "params": {"n": list(range(1, N + 1))}}
    return expand_entry(entry, context=Context.build()).cases


def _finished_on_workers() -> int:
    from suite.runner import dask_executor

    return sum(len(v) for v in list(dask_executor._FINISHED.values()))


def _until(pred, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not pred():
        assert time.monotonic() < deadline, "timed out waiting for the batches' open cases"
        time.sleep(0.005)


def _stored_n(path) -> dict[int, tuple[str, float]]:
    """n -> (status, y) of every stored case."""
    import json
    import sqlite3

    conn = sqlite3.connect(path)
    rows = conn.execute("SELECT c.params, c.status, m.value FROM cases c LEFT JOIN metrics m "
                        "ON m.case_key = c.key AND m.name = 'y'").fetchall()
    conn.close()
    return {json.loads(p)["n"]: (s, y) for p, s, y in rows}


def test_ctrl_c_stores_the_cases_running_batches_finished(tmp_path, monkeypatch, fake_registry):
    gate = tmp_path / "gate"
    monkeypatch.setenv("FAKE_GATE", f"{gate}:{OPEN}")
    monkeypatch.setattr("suite.runner.dask_executor.POLL_SECONDS", 1e9)  # only the collection on Ctrl-C

    def ctrl_c(client):  # the 8 open cases done, every batch stuck at the gate: Ctrl-C
        _until(lambda: _finished_on_workers() == OPEN)
        os.kill(os.getpid(), signal.SIGINT)

    client = ThreadClient(ctrl_c)
    try:
        s = run_on_fake_dask(tmp_path, monkeypatch, client, _sweep(), "int", wait=thread_wait(client))
    finally:
        gate.touch()
        client.pool.shutdown(wait=True)
    assert s.interrupted and (s.computed, s.ok) == (OPEN, OPEN)
    assert len(client.submitted) == 4 and all(len(b) == 4 for b in client.submitted)
    assert _stored_n(tmp_path / "int.sqlite") == {n: ("ok", pytest.approx(10.0 * n)) for n in range(1, OPEN + 1)}


def test_a_dead_workers_finished_cases_are_kept_and_only_the_rest_rerun(tmp_path, monkeypatch, fake_registry):
    gate = tmp_path / "gate"
    monkeypatch.setenv("FAKE_GATE", f"{gate}:{OPEN}")
    monkeypatch.setattr("suite.runner.dask_executor.POLL_SECONDS", 0.0)  # a poll after every wait
    calls = []

    def script(client):  # 1st wait: the open cases finish (then a poll); 2nd: every worker dies
        calls.append(1)
        if len(calls) == 1:
            _until(lambda: _finished_on_workers() == OPEN)
        elif len(calls) == 2:
            client.lose()
            gate.touch()

    client = ThreadClient(script)
    cases = _sweep()
    try:
        s = run_on_fake_dask(tmp_path, monkeypatch, client, cases, "lost", wait=thread_wait(client))
    finally:
        gate.touch()
        client.pool.shutdown(wait=True)
    assert not s.interrupted and (s.computed, s.ok) == (N, N)
    # re-run alone: the 8 gated cases the dead batches had not finished, and none of the 8 they had
    n_of = {c.key: c.params["n"] for c in cases}
    rerun = [b for b in client.submitted if len(b) == 1]
    assert sorted(n_of[b[0]] for b in rerun) == list(range(OPEN + 1, N + 1))
    assert _stored_n(tmp_path / "lost.sqlite") == {n: ("ok", pytest.approx(10.0 * n)) for n in range(1, N + 1)}
    assert len(store_table(tmp_path / "lost.sqlite")) == N


def test_an_interrupt_while_an_outcome_is_stored_waits_for_the_executor():
    """Ctrl-C while the consumer stores an outcome is held, and raised at the executor's next
    check; during a wait on dask it is raised at once; the old handler is back afterwards."""
    from suite.runner.dask_executor import _Interrupts

    before = signal.getsignal(signal.SIGINT)
    with _Interrupts() as irq:
        signal.raise_signal(signal.SIGINT)  # its handler runs before the call returns: nothing raised
        assert irq.pending is not None
        with pytest.raises(KeyboardInterrupt):
            irq.check()
        with pytest.raises(KeyboardInterrupt), irq.raising():
            signal.raise_signal(signal.SIGINT)
        assert irq.pending is None
    assert signal.getsignal(signal.SIGINT) is before
    # held while the last outcome is stored, the executor then done: raised as it ends, not lost
    with pytest.raises(KeyboardInterrupt), _Interrupts():
        signal.raise_signal(signal.SIGINT)
    assert signal.getsignal(signal.SIGINT) is before


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_sigterm_while_an_outcome_is_stored_surfaces_as_the_runs_terminated(sig, monkeypatch):
    """SIGTERM and SIGHUP go through the run's own handler (engine: Terminated, a KeyboardInterrupt),
    held the same way: so a dask run stopped by a batch scheduler or a closed ssh session collects
    its finished cases too."""
    from suite.runner.dask_executor import _Interrupts
    from suite.runner.engine import Terminated, _on_sigterm, _restore_sigterm, _trap_sigterm

    # the run's SIGHUP handler moves a terminal's output to /dev/null: not this test process's
    monkeypatch.setattr("suite.runner.engine._away_from_the_terminal", lambda: None)
    old = _trap_sigterm()
    try:
        with _Interrupts() as irq:
            signal.raise_signal(sig)
            assert irq.pending is not None and irq.pending[0] == sig
            with pytest.raises(Terminated):
                irq.check()
        assert signal.getsignal(sig) is _on_sigterm  # the run's handler is back
    finally:
        _restore_sigterm(old)


def test_a_batch_returns_only_the_outcomes_the_coordinator_does_not_hold(monkeypatch):
    """Review: each case a poll had collected was pickled and sent again in its batch's result (the
    coordinator dropped the copy). A poll's ``have`` is the coordinator's receipt: of a batch of 3
    whose first 2 a poll delivered and the next poll acknowledged, the result carries the third."""
    from suite.runner import dask_executor as dx

    outs = [{"key": k, "status": "ok"} for k in ("a", "b", "c")]

    def sandboxed(blob, keys, options):
        yield outs[0]
        yield outs[1]
        assert dx._finished_so_far({"tok": 0}) == {"tok": outs[:2]}  # a poll delivers the first two
        assert dx._finished_so_far({"tok": 2}) == {"tok": []}  # the next one says they are held
        yield outs[2]

    monkeypatch.setattr("suite.runner.sandbox.run_sandboxed", sandboxed)
    monkeypatch.setattr(dx, "_import_core", lambda: None)
    assert dx._dask_batch(b"", ["a", "b", "c"], None, "tok") == [outs[2]]
    assert "tok" not in dx._FINISHED and "tok" not in dx._HELD  # nothing kept after the batch
