"""A dask ``Client`` in this process, for the fast twins of the tests that start a dask cluster
(tests/runner/test_dask_cluster.py, test_runner_executors.py): the executor's own code runs (its
batches, its worker function ``_dask_batch`` with its sandbox fork and local pool, the re-run of a
lost batch), without the 5-30 s of starting a scheduler and worker processes."""

from __future__ import annotations

from suite.context import Context


class _Done:
    """A finished dask future: its batch's outcomes, or the error a lost worker gives."""

    def __init__(self, value=None, error: BaseException | None = None):
        self.value, self.error = value, error

    def result(self):
        if self.error is not None:
            raise self.error
        return self.value

    def cancel(self) -> None:
        pass


class LostBatchClient:
    """What DaskExecutor asks of a ``distributed.Client``, run in this process: each batch submitted
    runs at once through the executor's own worker function (``_dask_batch``: its sandbox fork and
    local pool), except the batches holding ``kill_on`` (else the first batch of several cases,
    unless ``lose_first`` is False), which are lost as on a worker killed with SIGKILL (KilledWorker)."""

    def __init__(self, kill_on: str | None = None, lose_first: bool = True):
        self.kill_on, self.lose_first, self.submitted, self.lost = kill_on, lose_first, [], []

    def submit(self, fn, blob, keys, options, token, pure=True):
        from types import SimpleNamespace

        from distributed import KilledWorker

        self.submitted.append(list(keys))
        if (self.kill_on in keys) if self.kill_on else (self.lose_first and not self.lost and len(keys) > 1):
            self.lost.append(list(keys))
            # what the scheduler raises (allowed-failures 0, as the executor's own cluster sets it)
            return _Done(error=KilledWorker(f"batch-{len(self.submitted)}",
                                            SimpleNamespace(address="tcp://127.0.0.1:1"), 0))
        return _Done(value=fn(blob, keys, options, token))

    def scheduler_info(self):
        return {"workers": {"tcp://127.0.0.1:1": {}, "tcp://127.0.0.1:2": {}}}

    def close(self) -> None:
        pass


def run_on_fake_dask(tmp_path, monkeypatch, client, cases, name, wait=None):
    """``run_cases(cases, executor="dask")`` into ``tmp_path/<name>.sqlite`` with *client* as the
    executor's connection (monkeypatched for the test) and *wait* as ``dask.distributed.wait``
    (default: every future is finished); returns the run's summary."""
    from suite.results import Store
    from suite.runner import ExecOptions, run_cases
    from suite.runner.dask_executor import DaskExecutor

    monkeypatch.setattr(DaskExecutor, "_connect", lambda self, options: (client, None))
    # by default every future is finished (LostBatchClient): dask's wait() hands them all back at once
    monkeypatch.setattr("dask.distributed.wait",
                        wait or (lambda futs, timeout=None, return_when=None: (set(futs), set())))
    with Store(tmp_path / f"{name}.sqlite") as st:
        summary = run_cases(cases, st, executor="dask", options=ExecOptions(scheduler="tcp://127.0.0.1:0"),
                            context=Context.build())
    return summary


class _Running:
    """A batch running in a thread of ThreadClient, or lost with its (pretend) worker."""

    def __init__(self, inner):
        self.inner, self.lost = inner, None

    def done(self) -> bool:
        return self.lost is not None or self.inner.done()

    def result(self):
        if self.lost is not None:
            raise self.lost
        return self.inner.result()

    def cancel(self) -> None:
        self.inner.cancel()


class ThreadClient:
    """A client whose every batch runs at once in a thread of this process, through the executor's
    own worker function (``_dask_batch``: its sandbox fork and local pool), as on a worker of its
    own; ``run`` calls a function here, as each worker answers ``client.run`` (so it reads the
    running batches' finished cases); ``lose()`` loses every running batch as killed workers do
    (KilledWorker), while its thread goes on. ``on_wait`` (the test's script) is called at each
    ``dask.distributed.wait`` of the executor (see :func:`thread_wait`)."""

    def __init__(self, on_wait=lambda client: None):
        from concurrent.futures import ThreadPoolExecutor

        self.on_wait, self.pool, self.submitted, self.futures = on_wait, ThreadPoolExecutor(max_workers=32), [], []

    def submit(self, fn, blob, keys, options, token, pure=True):
        self.submitted.append(list(keys))
        fut = _Running(self.pool.submit(fn, blob, keys, options, token))
        self.futures.append(fut)
        return fut

    def run(self, fn, *args, on_error="raise", callback_timeout=None):
        return {"tcp://127.0.0.1:1": fn(*args)}

    def lose(self) -> None:
        from types import SimpleNamespace

        from distributed import KilledWorker

        for fut in self.futures:
            if not fut.done():
                fut.lost = KilledWorker("batch", SimpleNamespace(address="tcp://127.0.0.1:1"), 0)

    def scheduler_info(self):
        return {"workers": {"tcp://127.0.0.1:1": {}, "tcp://127.0.0.1:2": {}}}

    def close(self) -> None:
        pass


def thread_wait(client: ThreadClient):
    """``dask.distributed.wait`` over ThreadClient's futures: ``client.on_wait(client)``, then the
    futures done within *timeout* seconds (FIRST_COMPLETED)."""
    import time

    def wait(futs, timeout=None, return_when=None):
        client.on_wait(client)
        deadline = time.monotonic() + (timeout or 0)
        while True:
            done = {f for f in futs if f.done()}
            if done or time.monotonic() >= deadline:
                return done, set(futs) - done
            time.sleep(0.005)

    return wait
