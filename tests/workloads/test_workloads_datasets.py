"""Datasets: bundled and generated data are local and reproducible; partitions are exact covers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.errors import WorkloadError
from suite.workloads.datasets import (blobs, data_hash, gaussian_mixture, label_counts, partition, pathological,
                                      powerlaw_graph)
from session_context import session_context


@pytest.mark.parametrize("name,n,d,classes", [("digits", 1797, 64, 10), ("iris", 150, 4, 3), ("wine", 178, 13, 3),
                                              ("breast-cancer", 569, 30, 2)])
def test_sklearn_bundled_shapes(name, n, d, classes):
    ds = session_context().workload(name)
    X, y = ds.load()
    assert X.shape == (n, d) == (ds.n, ds.d)
    assert len(np.unique(y)) == classes == ds.classes


@pytest.mark.parametrize("name", ["moons", "circles", "blobs", "gaussian-mixture", "digits"])
def test_generated_data_is_reproducible_and_hashed(name):
    ds = session_context().workload(name)
    X, y = ds.load()
    assert X.shape == (ds.n, ds.d) and y.shape == (ds.n,)
    assert data_hash(ds) == data_hash(ds)
    assert ds.content_hash() == session_context().workload(name).content_hash()


def test_seed_changes_data_and_ids():
    a, b = blobs(seed=0), blobs(seed=1)
    assert a.name != b.name and a.content_hash() != b.content_hash()
    assert data_hash(a) != data_hash(b)


def test_gaussian_mixture_components_have_their_means():
    ds = gaussian_mixture(n=4000, k=3, d=4, separation=5.0, seed=2)
    X, y = ds.load()
    rng = np.random.default_rng(2)  # the generator's first draw is the means
    means = rng.normal(0.0, 5.0, size=(3, 4))
    for j in range(3):
        # sample mean within 5 standard errors (cov eigenvalues are O(1..5))
        Xi = X[y == j]
        assert np.all(np.abs(Xi.mean(0) - means[j]) < 5 * np.sqrt(6.0 / len(Xi)))


def test_powerlaw_graph_edges_and_degrees():
    ds = powerlaw_graph(n=500, m=2, seed=3)
    edges, deg = ds.load()
    assert edges.shape == ((500 - 2) * 2, 2)
    assert np.all(edges[:, 0] < edges[:, 1])
    assert deg.sum() == 2 * len(edges)
    # heavy tail: the max degree is far above the mean (2m = 4)
    assert deg.max() > 5 * deg.mean()


def _check_cover(parts, n):
    allidx = np.concatenate(parts)
    assert allidx.size == n and np.array_equal(np.sort(allidx), np.arange(n))


@settings(max_examples=20)
@given(n=st.integers(20, 300), workers=st.integers(1, 8), k=st.integers(2, 6),
       scheme=st.sampled_from(["iid", "dirichlet", "pathological"]), seed=st.integers(0, 1000),
       alpha=st.floats(0.05, 10.0))
def test_partition_is_an_exact_cover(n, workers, k, scheme, seed, alpha):
    y = np.random.default_rng(seed).integers(0, k, size=n)
    parts = partition(y, workers, scheme=scheme, alpha=alpha, seed=seed)
    assert len(parts) == workers
    _check_cover(parts, n)
    assert all(np.all(np.diff(p) > 0) for p in parts)
    again = partition(y, workers, scheme=scheme, alpha=alpha, seed=seed)
    assert all(np.array_equal(a, b) for a, b in zip(parts, again))


def test_pathological_gives_at_most_two_labels_per_worker():
    y = np.repeat(np.arange(10), 100)  # 1000 samples, 10 labels, shards of 50 never straddle labels
    parts = pathological(y, 10, shards_per_worker=2, seed=0)
    counts = label_counts(parts, y, 10)
    assert np.all((counts > 0).sum(1) <= 2)
    assert np.all(counts.sum(1) == 100)


def test_dirichlet_skew_grows_as_alpha_shrinks():
    y = np.repeat(np.arange(10), 200)

    def mean_labels(alpha):
        c = label_counts(partition(y, 10, "dirichlet", alpha=alpha, seed=1), y, 10)
        return ((c / np.maximum(c.sum(1, keepdims=True), 1)) > 0.05).sum(1).mean()

    assert mean_labels(0.05) < mean_labels(1.0) < mean_labels(100.0) + 1e-9
    assert mean_labels(100.0) == 10


def test_partition_errors_are_clear():
    with pytest.raises(WorkloadError, match="scheme"):
        partition([0, 1], 2, scheme="bogus")
    with pytest.raises(WorkloadError, match="alpha"):
        partition([0, 1], 2, alpha=0)
    with pytest.raises(WorkloadError, match="min_size"):
        partition(np.zeros(10, int), 5, alpha=0.01, min_size=3, seed=0)


def test_bundled_dataset_read_once_per_process_and_each_caller_gets_its_own_copy():
    from suite.workloads import datasets

    X, y = datasets.load_sklearn("iris")
    X[0, 0], y[0] = -99.0, 7  # a caller that writes into its arrays
    X2, y2 = datasets.load_sklearn("iris")
    assert X2[0, 0] == 5.1 and y2[0] == 0  # iris's first row (Fisher 1936): 5.1 cm sepal length, setosa
    assert X2.flags.writeable and datasets._read_sklearn.cache_info().hits >= 1
