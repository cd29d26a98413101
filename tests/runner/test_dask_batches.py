"""How the dask executor cuts a run into batches (no cluster needed): one package per batch,
about BATCHES_PER_WORKER per worker, and each batch a stripe of its package's cases, so batches
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
    got = [[c.key for c in b] for b in DaskExecutor()._batches(cases, nworkers=2)]
    # 13 cases for 2 workers x 2 batches: at most ceil(13 / 4) = 4 per batch; package a's 10 cases
    # in ceil(10 / 4) = 3 stripes (every third case), package b's 3 in one
    assert got == [["a0", "a3", "a6", "a9"], ["a1", "a4", "a7"], ["a2", "a5", "a8"], ["b0", "b1", "b2"]]


def test_a_sweep_of_variants_gives_each_batch_every_variant():
    # 4 variants x 25 cases, expanded variant by variant: slices would give each batch one variant
    cases = [SimpleNamespace(tech=SimpleNamespace(package="p", name="p"), key=f"{v}{i}")
             for v in "wxyz" for i in range(25)]
    batches = DaskExecutor()._batches(cases, nworkers=2)
    assert [len(b) for b in batches] == [25, 25, 25, 25]
    for b in batches:
        assert sorted({c.key[0] for c in b}) == ["w", "x", "y", "z"]
    assert sorted(c.key for b in batches for c in b) == sorted(c.key for c in cases)
