"""suite.perf.blas_threads: every BLAS pool, scipy's own OpenBLAS included, at the limit."""

from __future__ import annotations

import pytest


def test_every_blas_pool_is_limited_including_scipys():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    from suite.perf import blas_threads

    with blas_threads(1):
        import scipy.linalg.blas  # noqa: F401  (loaded by blas_threads already)

        pools = [p for p in threadpoolctl.threadpool_info() if p.get("user_api") == "blas"]
        assert pools and all(p["num_threads"] == 1 for p in pools)
        assert any("scipy" in p["filepath"] for p in pools)  # scipy's OpenBLAS, not only numpy's


def test_zero_leaves_the_pools_alone():
    import contextlib

    from suite.perf import blas_threads

    assert isinstance(blas_threads(0), contextlib.nullcontext)
