"""How the dask executor cuts a run into batches (no cluster needed): one package per batch,
about BATCHES_PER_WORKER per worker thread, and each batch a stripe of its package's cases, so batches
of a sweep expanded variant by variant cost alike."""

from __future__ import annotations

from types import SimpleNamespace

from suite.runner.dask_executor import BATCHES_PER_WORKER, DaskExecutor


def _cases(package: str, n: int) -> list[SimpleNamespace]:
    tech = SimpleNamespace(package=package, name=package)
    return [SimpleNamespace(tech=tech, key=f"{package}{i}") for i in range(n)]


def test_batches_are_stripes_of_one_package_each():
    cases = _cases("a", 10) + _cases("b", 3)
    assert BATCHES_PER_WORKER == 2
    got = [[c.key for c in b] for b in DaskExecutor()._batches(cases, threads=2)]
    # 13 cases for 2 threads x 2 batches: at most ceil(13 / 4) = 4 per batch; package a's 10 cases
    # in ceil(10 / 4) = 3 stripes (every third case), package b's 3 in one
    assert got == [["a0", "a3", "a6", "a9"], ["a1", "a4", "a7"], ["a2", "a5", "a8"], ["b0", "b1", "b2"]]


def test_a_sweep_of_variants_gives_each_batch_every_variant():
    # 4 variants x 25 cases, expanded variant by variant: slices would give each batch one variant
    cases = [SimpleNamespace(tech=SimpleNamespace(package="p", name="p"), key=f"{v}{i}")
             for v in "wxyz" for i in range(25)]
    batches = DaskExecutor()._batches(cases, threads=2)
    assert [len(b) for b in batches] == [25, 25, 25, 25]
    for b in batches:
        assert sorted({c.key[0] for c in b}) == ["w", "x", "y", "z"]
    assert sorted(c.key for b in batches for c in b) == sorted(c.key for c in cases)


def test_a_worker_with_several_threads_gets_batches_for_each_thread(tmp_path, monkeypatch, fake_registry):
    """A plain ``dask worker`` runs one thread per core: the run is cut by the cluster's threads,
    not its worker processes (one 4-thread worker counted as one took 2 batches: 2 cases at a time)."""
    from fakedask import LostBatchClient, run_on_fake_dask
    from suite.context import Context
    from suite.runner import expand_entry

    class FourThreads(LostBatchClient):
        def scheduler_info(self):
            return {"workers": {"tcp://127.0.0.1:1": {"nthreads": 4}}}

    exp = expand_entry({"technique": "fake", "variants": ["base"], "params": {"n": list(range(1, 17))}},
                       context=Context.build())
    client = FourThreads(lose_first=False)
    s = run_on_fake_dask(tmp_path, monkeypatch, client, exp.cases, "threads")
    assert (s.total, s.ok) == (16, 16)
    # 16 cases for 4 threads x 2 batches: 8 stripes of 2 cases, each case in exactly one
    assert sorted(len(b) for b in client.submitted) == [2] * 8
    assert sorted(k for b in client.submitted for k in b) == sorted(c.key for c in exp.cases)
