"""Tests of the HyScale-GNN plugin: sampler (subset, fan-out, uniformity), blocks and the 2-layer
models against dense oracles and finite differences, the split gradient, the graph generators,
the cost model by hand calculation, variant orderings and monotonicity (hypothesis), bad input,
infeasibility, claims and the conformance kit."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from suite import ScenarioSpec, Skip
from suite.errors import ParameterError
from suite.testing import resolve_case
from suite_hyscale_gnn import gnn, graphs, model
from suite_hyscale_gnn.technique import CLAIMS, TECHNIQUE

# ----------------------------------------------------------------------------- helpers


def random_graph(n, p, seed):
    rng = np.random.default_rng(seed)
    a = sp.random(n, n, density=p, random_state=rng, format="csr")
    return graphs.to_csr(n, *a.nonzero())


def spec(variant="hyscale", profile="hyscale-cpu-gpu", workload="hyscale-gnn-ogbn-products", fidelity="model",
         **params):
    return ScenarioSpec(variant=variant, profile=profile, workload=workload, fidelity=fidelity, params=params)


def run(s, overrides=None):
    if overrides:
        s = dataclasses.replace(s, overrides=overrides)
    return TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario)


# ----------------------------------------------------------------------------- sampler


@settings(max_examples=25, deadline=None)
@given(n=st.integers(5, 60), p=st.floats(0.02, 0.5), f=st.integers(1, 12), seed=st.integers(0, 10_000))
def test_sampled_neighbours_are_a_subset_at_most_the_fanout(n, p, f, seed):
    adj = random_graph(n, p, seed)
    seeds = np.arange(n)
    rows, nbrs = gnn.sample_neighbors(adj.indptr, adj.indices, seeds, f, np.random.default_rng(seed))
    for i in range(n):
        true = set(adj.indices[adj.indptr[i]:adj.indptr[i + 1]].tolist())
        got = nbrs[rows == i].tolist()
        assert len(got) == len(set(got)), "sampled with replacement"
        assert set(got) <= true
        assert len(got) == min(f, len(true))


def test_sampler_is_uniform_chi_square():
    # one node with 20 neighbours, fan-out 5: each neighbour is kept with probability 1/4
    n, deg, f, trials = 21, 20, 5, 4000
    adj = graphs.to_csr(n, np.zeros(deg, np.int64), np.arange(1, n))
    rng = np.random.default_rng(1)
    counts = np.zeros(n, int)
    for _ in range(trials):
        _, nbrs = gnn.sample_neighbors(adj.indptr, adj.indices, np.array([0]), f, rng)
        counts[nbrs] += 1
    obs = counts[1:]
    expected = np.full(deg, trials * f / deg)
    assert obs.sum() == trials * f
    assert stats.chisquare(obs, expected).pvalue > 1e-3


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 80), p=st.floats(0.0, 0.6), f=st.integers(1, 15), s=st.integers(0, 120),
       seed=st.integers(0, 10_000))
def test_compiled_sampler_is_bit_identical_to_the_numpy_floyd(n, p, f, s, seed):
    # the compiled loop draws the numpy version's stream in its order: same samples, same dtype,
    # and the generator left in the same state (the next draw agrees)
    adj = random_graph(n, p, seed)
    seeds = np.random.default_rng(seed + 1).integers(0, n, s)  # repeats allowed, as in a layer's sources
    r1, r2 = np.random.default_rng(seed), np.random.default_rng(seed)
    got = gnn.sample_neighbors(adj.indptr, adj.indices, seeds, f, r1)
    ref = gnn._sample_neighbors_numpy(adj.indptr, adj.indices, seeds, f, r2)
    for a, b in zip(got, ref):
        assert a.dtype == b.dtype == np.int64
        np.testing.assert_array_equal(a, b)
    assert r1.random() == r2.random()


def test_compiled_sampler_on_the_execute_graphs_matches_numpy_and_keeps_low_degree_rows_in_order():
    adj, _, _ = {w.name: w for w in graphs.graph_workloads()}["rmat-graph"].load()
    seeds = np.random.default_rng(0).choice(adj.shape[0], 1024, replace=False)
    for f in (1, 10, 25):
        r1, r2 = np.random.default_rng(f), np.random.default_rng(f)
        rows, nbrs = gnn.sample_neighbors(adj.indptr, adj.indices, seeds, f, r1)
        ref = gnn._sample_neighbors_numpy(adj.indptr, adj.indices, seeds, f, r2)
        np.testing.assert_array_equal(rows, ref[0])
        np.testing.assert_array_equal(nbrs, ref[1])
    # a seed of degree <= fan-out keeps its CSR row as it is
    deg = np.diff(adj.indptr)[seeds]
    i = int(np.flatnonzero(deg <= 10)[0])
    rows, nbrs = gnn.sample_neighbors(adj.indptr, adj.indices, seeds, 10, np.random.default_rng(0))
    np.testing.assert_array_equal(nbrs[rows == i], adj.indices[adj.indptr[seeds[i]]:adj.indptr[seeds[i] + 1]])


def test_sampler_rejects_out_of_range_seeds():
    adj = random_graph(10, 0.3, 0)
    with pytest.raises(IndexError, match=r"seeds\[1\] = 10 is not a node id in \[0, 10\)"):
        gnn.sample_neighbors(adj.indptr, adj.indices, np.array([0, 10]), 3, np.random.default_rng(0))
    with pytest.raises(IndexError, match="seeds"):
        gnn.sample_neighbors(adj.indptr, adj.indices, np.array([-1]), 3, np.random.default_rng(0))


def test_sampler_rejects_bad_fanout():
    adj = random_graph(10, 0.3, 0)
    with pytest.raises(ValueError, match="fanout"):
        gnn.sample_neighbors(adj.indptr, adj.indices, np.arange(3), 0, np.random.default_rng(0))


# ----------------------------------------------------------------------------- blocks and models


@settings(max_examples=15, deadline=None)
@given(n=st.integers(10, 80), p=st.floats(0.03, 0.3), seed=st.integers(0, 1000),
       model_name=st.sampled_from(gnn.MODELS))
def test_sparse_aggregation_equals_dense(n, p, seed, model_name):
    adj = random_graph(n, p, seed)
    rng = np.random.default_rng(seed)
    seeds = rng.choice(n, max(1, n // 4), replace=False)
    blocks = gnn.sample_blocks(adj.indptr, adj.indices, seeds, [3, 2], rng, model_name)
    h = rng.standard_normal((blocks[0].src.size, 5))
    dense = blocks[0].agg.toarray()
    np.testing.assert_allclose(blocks[0].agg @ h, dense @ h, rtol=1e-12, atol=1e-12)
    # mean weights: every non-empty row sums to one
    rs = np.asarray(blocks[0].agg.sum(axis=1)).ravel()
    assert np.all((np.abs(rs - 1) < 1e-12) | (rs == 0))
    # destinations are the first sources, and block l's sources are block l+1's... destinations
    assert blocks[1].src.size == blocks[0].n_dst
    np.testing.assert_array_equal(blocks[0].src[:blocks[0].n_dst], blocks[1].src)
    np.testing.assert_array_equal(blocks[1].src[:blocks[1].n_dst], seeds)


@pytest.mark.parametrize("model_name", gnn.MODELS)
def test_minibatch_forward_with_full_fanout_equals_dense_full_graph(model_name):
    adj, x, _ = graphs.load_sbm_graph(blocks=3, block_size=60, p_in=0.1, p_out=0.01, d=8, seed=3)
    rng = np.random.default_rng(0)
    dmax = int(np.diff(adj.indptr).max())
    seeds = rng.choice(adj.shape[0], 40, replace=False)
    params = gnn.init_params(model_name, 8, 16, 3, rng)
    blocks = gnn.sample_blocks(adj.indptr, adj.indices, seeds, [dmax, dmax], rng, model_name)
    mb = gnn.forward(params, blocks, x[blocks[0].src], model_name)[0]
    # independent dense oracle written here: GraphSAGE-mean / GCN-mean over all of A
    a = adj.toarray().astype(float)
    if model_name == "gcn":
        a += np.eye(a.shape[0])
    a /= np.maximum(a.sum(axis=1, keepdims=True), 1)
    h = x.astype(float)
    if model_name == "graphsage":
        h1 = np.maximum(h @ params["Ws1"] + a @ h @ params["Wn1"] + params["b1"], 0)
        z = h1 @ params["Ws2"] + a @ h1 @ params["Wn2"] + params["b2"]
    else:
        h1 = np.maximum(a @ h @ params["W1"] + params["b1"], 0)
        z = a @ h1 @ params["W2"] + params["b2"]
    np.testing.assert_allclose(mb, z[seeds], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("model_name", gnn.MODELS)
def test_backward_matches_finite_differences(model_name):
    adj = random_graph(40, 0.15, 5)
    rng = np.random.default_rng(2)
    x = rng.standard_normal((40, 4))
    y = rng.integers(0, 3, 40)
    seeds = np.arange(0, 40, 3)
    blocks = gnn.sample_blocks(adj.indptr, adj.indices, seeds, [4, 3], rng, model_name)
    params = gnn.init_params(model_name, 4, 6, 3, rng)
    params = {k: v + 0.1 * rng.standard_normal(v.shape) for k, v in params.items()}
    loss, grads, _ = gnn.loss_and_grads(params, blocks, x[blocks[0].src], y[seeds], model_name)
    eps = 1e-6
    for key, val in params.items():
        idx = tuple(rng.integers(0, s) for s in val.shape)
        up = {k: v.copy() for k, v in params.items()}
        dn = {k: v.copy() for k, v in params.items()}
        up[key][idx] += eps
        dn[key][idx] -= eps
        lu = gnn.loss_and_grads(up, blocks, x[blocks[0].src], y[seeds], model_name)[0]
        ld = gnn.loss_and_grads(dn, blocks, x[blocks[0].src], y[seeds], model_name)[0]
        assert grads[key][idx] == pytest.approx((lu - ld) / (2 * eps), rel=1e-5, abs=1e-8), key


@settings(max_examples=15, deadline=None)
@given(cut=st.floats(0.05, 0.95), seed=st.integers(0, 1000), model_name=st.sampled_from(gnn.MODELS))
def test_weighted_gradient_over_trainers_equals_the_whole_batch(cut, seed, model_name):
    adj = random_graph(60, 0.1, seed)
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((60, 5))
    y = rng.integers(0, 3, 60)
    seeds = rng.choice(60, 20, replace=False)
    blocks = gnn.sample_blocks(adj.indptr, adj.indices, seeds, [5, 3], rng, model_name)
    params = gnn.init_params(model_name, 5, 7, 3, rng)
    _, whole, _ = gnn.loss_and_grads(params, blocks, x[blocks[0].src], y[seeds], model_name)
    k = min(max(1, int(cut * 20)), 19)
    tot = {key: 0.0 for key in whole}
    for rows in (np.arange(k), np.arange(k, 20)):
        sub = gnn.restrict(blocks, rows, model_name)
        _, g, _ = gnn.loss_and_grads(params, sub, x[sub[0].src], y[seeds[rows]], model_name)
        for key in tot:
            tot[key] = tot[key] + g[key] * rows.size / 20
    for key in whole:
        np.testing.assert_allclose(tot[key], whole[key], rtol=1e-10, atol=1e-13)


# ----------------------------------------------------------------------------- graphs


def test_rmat_quadrant_frequencies_match_graph500_parameters():
    rng = np.random.default_rng(0)
    src, dst = graphs.rmat_edges(1, 200_000, rng)  # one bit: the quadrant itself
    freq = {q: np.mean((src == q[0]) & (dst == q[1])) for q in ((0, 0), (0, 1), (1, 0), (1, 1))}
    for q, want in zip(freq, (0.57, 0.19, 0.19, 0.05)):
        assert freq[q] == pytest.approx(want, abs=0.005), q


def test_generated_graphs_shapes_labels_and_density():
    adj, x, y = graphs.load_sbm_graph()
    assert adj.shape == (2000, 2000) and x.shape == (2000, 32) and x.dtype == np.float32
    assert (adj != adj.T).nnz == 0 and adj.diagonal().sum() == 0
    np.testing.assert_array_equal(np.bincount(y), [500] * 4)
    same = y[adj.nonzero()[0]] == y[adj.nonzero()[1]]
    # expected within-block edge fraction: 499 * 0.03 / (499 * 0.03 + 1500 * 0.003) = 0.769
    assert same.mean() == pytest.approx(0.769, abs=0.02)
    adj, x, y = graphs.load_rmat_graph()
    assert adj.shape == (2048, 2048) and (adj != adj.T).nnz == 0
    np.testing.assert_array_equal(np.bincount(y), [512] * 4)


def test_execute_trains_above_majority_and_oracles_hold():
    r = run(spec(fidelity="execute", workload="sbm-graph", epochs=2, exec_batch=256, hidden=32))
    assert r["accuracy"] > r["majority_accuracy"] + 0.3
    assert r["oracle_error"] < 1e-12 and r["grad_split_error"] < 1e-10 and r["fullgraph_error"] < 1e-10
    assert 0 < r["cpu_share"] < 1 and r["pipeline_ratio"] > 0
    r = run(spec(variant="multi-gpu", fidelity="execute", workload="rmat-graph", epochs=2, exec_batch=256,
                 hidden=32, gnn="gcn"))
    assert r["accuracy"] > r["majority_accuracy"]


def test_execute_variants_train_the_same_model():
    # the split gradient equals the whole batch's: hyscale and multi-gpu end at the same loss
    a = run(spec(variant="hyscale", fidelity="execute", workload="sbm-graph", epochs=1, exec_batch=256, hidden=16))
    b = run(spec(variant="multi-gpu", fidelity="execute", workload="sbm-graph", epochs=1, exec_batch=256, hidden=16))
    assert a["final_loss"] == pytest.approx(b["final_loss"], rel=1e-9)


def test_execute_skips():
    with pytest.raises(Skip):
        run(spec(variant="distdgl", fidelity="execute", workload="sbm-graph"))
    with pytest.raises(Skip):
        run(spec(fidelity="execute"))  # a size descriptor cannot be trained


# ----------------------------------------------------------------------------- model by hand

TOY = {"nodes": 1000, "edges": 5000, "d": 10, "feature_bytes": 4, "classes": 5, "train": 500}


def test_batch_shape_by_hand():
    # average degree 10; fan-out (4, 20): e2 = 8 * 4 = 32; n1 = 1000 (1 - e^{-40/1000}) = 39.2106
    s = model.batch_shape(8, TOY, (4, 20))
    assert float(s["e2"]) == 32.0
    assert float(s["n1"]) == pytest.approx(1000 * (1 - math.exp(-0.04)), rel=1e-12)
    n1 = 1000 * (1 - math.exp(-0.04))
    assert float(s["e1"]) == pytest.approx(n1 * 10, rel=1e-12)  # min(20, 10) = 10 per node
    assert float(s["n0"]) == pytest.approx(1000 * (1 - math.exp(-(n1 + 10 * n1) / 1000)), rel=1e-12)


def test_train_flops_by_hand():
    s = {"b": np.array(2.0), "e2": np.array(6.0), "n1": np.array(8.0), "e1": np.array(20.0), "n0": np.array(25.0)}
    f, m = model.train_work(s, TOY, hidden=3, gnn="graphsage")
    # forward: 2*20*10 + 2*8*20*3 + 2*6*3 + 2*2*6*5 = 400 + 960 + 36 + 120 = 1516; x3 for fwd+bwd
    assert float(f) == 3 * 1516
    # bytes: 25*10*4 + 4*(20*10 + 6*3 + 8*3 + 2*5) = 1000 + 1008 = 2008; x3
    assert float(m) == 3 * 2008
    f, _ = model.train_work(s, TOY, hidden=3, gnn="gcn")
    assert float(f) == 3 * (400 + 2 * 8 * 10 * 3 + 36 + 2 * 2 * 3 * 5)


def test_parameter_count_and_memory_need_by_hand():
    # GraphSAGE, ogbn-products (d 100, 47 classes), hidden 256: 2*(100*256 + 256*47) + 256 + 47
    desc = graphs.GRAPH_DESCRIPTORS["ogbn-products"]
    d = dict(zip(("nodes", "edges", "d", "feature_bytes", "classes", "train"), desc[:6]))
    assert model.param_count(d, 256, "graphsage") == 2 * (25_600 + 12_032) + 303 == 75_567
    assert model.memory_need(d) == 8 * 2_449_030 + 8 * 61_859_140 + 2_449_029 * 400


def test_hardware_from_profiles_by_hand():
    sc = resolve_case(TECHNIQUE, spec()).scenario
    host = model.host_of(sc.profile)
    assert (host.sockets, host.threads) == (2, 128)
    assert host.memory_bandwidth == pytest.approx(2 * 204.8e9)
    acc = model.accel_of(sc.profile)
    assert (acc.count, acc.peak_flops, acc.link_bandwidth) == (4, 27.8e12, 31.5e9)
    fp = model.accel_of(resolve_case(TECHNIQUE, spec(profile="hyscale-cpu-fpga")).scenario.profile)
    assert fp.peak_flops == pytest.approx(12288 * 200e6 * 1.0)  # DSPs x clock x FLOP/DSP/cycle
    assert fp.link_bandwidth == 15.75e9


def test_stage_times_and_variants_by_hand():
    sc = resolve_case(TECHNIQUE, spec(batch=1024)).scenario
    sm = model.stage_model(sc.profile, sc.workload, sc.params)
    n, e = 2_449_029, 61_859_140
    k = 2 * e / n
    # each of the 4 GPUs gets its own sub-batch of 256 seeds, sampled and gathered by the CPUs
    e2 = 256 * 25
    n1 = n * (1 - math.exp(-(256 + e2) / n))
    e1 = n1 * 10
    n0 = n * (1 - math.exp(-(n1 + e1) / n))
    t_s = 4 * (e1 + e2) / (128 * 240e6)  # R = 240 M sampled edges/s per thread (model.py's calibration)
    t_g = 4 * 2 * n0 * 100 * 4 / (0.5 * 2 * 204.8e9)
    copy_b = n0 * 100 * 4 + 8 * (e1 + e2)
    assert k > 25
    multi = model.iteration("multi-gpu", sm)
    assert multi["t_sample"] == pytest.approx(t_s, rel=1e-9)
    assert multi["t_gather"] == pytest.approx(t_g, rel=1e-9)
    # one p2p over the host link: the shared model's latency plus bytes / 31.5 GB/s
    assert multi["t_copy"] == pytest.approx(copy_b / 31.5e9, rel=0.01)
    total = sum(multi[k] for k in ("t_sample", "t_gather", "t_copy", "t_train_acc", "t_sync"))
    assert multi["iteration_time"] == pytest.approx(total, rel=1e-12)
    pre = model.iteration("prefetch", sm)
    assert pre["iteration_time"] == pytest.approx(max(t_s + t_g, pre["t_copy"], pre["t_train_acc"]) + pre["t_sync"])


def test_hyscale_search_space_and_shares():
    sc = resolve_case(TECHNIQUE, spec()).scenario
    sm = model.stage_model(sc.profile, sc.workload, sc.params)
    out = model.search_hyscale(sm)
    assert out["points"] >= 100_000
    assert out["b_cpu"] + 4 * out["b_acc"] == pytest.approx(1024)
    fixed = model.search_hyscale(sm, cpu_share=0.25)
    assert fixed["cpu_share"] == 0.25 and fixed["iteration_time"] >= out["iteration_time"]
    # the rule b_i ~ 1/t_i: the CPU's share from per-sample times, by hand
    t_acc = (float(sm.copy(1024)) + float(sm.acc_train(1024))) / 1024
    t_cpu = float(sm.cpu_train(1024, 128)) / 1024
    assert model.rule_share(sm) == pytest.approx((1 / t_cpu) / (4 / t_acc + 1 / t_cpu), rel=1e-12)


@pytest.mark.parametrize("profile,batch,fanout", [("hyscale-cpu-gpu", 1024, "25,10"), ("hyscale-cpu-gpu", 64, "5,5"),
                                                   ("hyscale-cpu-fpga", 1024, "25,10"),
                                                   ("hyscale-cpu-fpga", 8192, "40,20")])
def test_reduced_search_equals_the_brute_force(profile, batch, fanout):
    # the oracle: every one of the >= 100,000 points evaluated at once (full=True); the model's
    # reduced search must return the same point (time, share, threads, mode, stage times)
    sc = resolve_case(TECHNIQUE, spec(profile=profile, batch=batch, fanout=fanout)).scenario
    sm = model.stage_model(sc.profile, sc.workload, sc.params)
    for share in (None, 0.0, 0.3, 1.0):
        assert model.search_hyscale(sm, share) == model.search_hyscale(sm, share, full=True)


_RESOLVED = {}


def _resolved(prof, wl):
    if (prof, wl) not in _RESOLVED:
        _RESOLVED[prof, wl] = resolve_case(TECHNIQUE, spec(profile=prof, workload=wl)).scenario
    return _RESOLVED[prof, wl]


@settings(max_examples=12, deadline=None)
@given(batch=st.integers(16, 8192), f1=st.integers(1, 40), f2=st.integers(1, 40), hidden=st.integers(8, 1024),
       g=st.sampled_from(["graphsage", "gcn"]), prof=st.sampled_from(["hyscale-cpu-gpu", "hyscale-cpu-fpga"]),
       wl=st.sampled_from(["hyscale-gnn-ogbn-products", "hyscale-gnn-ogbn-papers100m", "hyscale-gnn-mag240m"]))
def test_variant_ordering(batch, f1, f2, hidden, g, prof, wl):
    sc = _resolved(prof, wl)
    p = {**sc.params, "batch": batch, "fanout": f"{f1},{f2}", "hidden": hidden, "gnn": g}
    sm = model.stage_model(sc.profile, sc.workload, p)
    t = {v: model.iteration(v, sm)["iteration_time"] for v in ("hyscale", "prefetch", "cpu-only", "multi-gpu", "ideal")}
    assert t["hyscale"] <= min(t["prefetch"], t["cpu-only"]) * (1 + 1e-12)
    assert t["prefetch"] <= t["multi-gpu"] * (1 + 1e-12)
    assert t["ideal"] <= t["hyscale"] * (1 + 1e-12)


@settings(max_examples=6, deadline=None)
@given(factor=st.floats(1.1, 8.0), variant=st.sampled_from(["multi-gpu", "prefetch", "hyscale", "distdgl"]))
def test_epoch_time_non_increasing_in_link_and_peak(factor, variant):
    base = run(spec(variant))["epoch_time"]
    link = run(spec(variant), {"device.host_link.bandwidth": f"{31.5 * factor} GB/s"})["epoch_time"]
    peak = run(spec(variant), {"device.peak_flops.fp32": f"{27.8 * factor} TFLOP/s"})["epoch_time"]
    assert link <= base * (1 + 1e-12) and peak <= base * (1 + 1e-12)


def test_epoch_time_changes_with_host_link_and_crossed_levels():
    base = run(spec("multi-gpu"))
    slow_link = run(spec("multi-gpu"), {"device.host_link.bandwidth": "3.15 GB/s"})
    assert slow_link["t_copy"] > 5 * base["t_copy"] and slow_link["epoch_time"] > base["epoch_time"]
    slow_pcie = run(spec("multi-gpu"), {"network.0.bandwidth": "0.315 GB/s"})
    assert slow_pcie["t_sync"] > base["t_sync"] and slow_pcie["epoch_time"] > base["epoch_time"]
    d = spec("distdgl", profile="hyscale-distdgl-4n")
    db = run(d)
    slow_net = run(d, {"network.1.bandwidth": "10 Gbit/s"})
    assert slow_net["t_remote"] > 5 * db["t_remote"] and slow_net["epoch_time"] > db["epoch_time"]
    # the single-node variants never cross the cluster's outer level
    one = run(spec("hyscale", profile="hyscale-distdgl-4n"))
    one_slow = run(spec("hyscale", profile="hyscale-distdgl-4n"), {"network.1.bandwidth": "10 Gbit/s"})
    assert one["epoch_time"] == one_slow["epoch_time"]


def test_infeasible_when_topology_and_features_exceed_host_memory():
    # papers100M: 8 * 111e6 + 8 * 1.616e9 + 111e6 * 512 B = 70.7 GB > 64 GB
    with pytest.raises(Skip, match="infeasible"):
        run(spec(workload="hyscale-gnn-ogbn-papers100m"), {"node.host_memory": "64 GB"})
    run(spec(workload="hyscale-gnn-ogbn-papers100m"), {"node.host_memory": "80 GB"})


def test_bad_fanout_is_one_clear_line():
    with pytest.raises(ParameterError) as exc:
        TECHNIQUE.validate_params({"fanout": "25"})
    assert str(exc.value) == ("hyscale-gnn: parameter 'fanout': expected one positive integer per layer "
                              "(2 layers), got '25'")
    for bad in ("25,x", "0,10", "25,10,5"):
        with pytest.raises(ParameterError, match="fanout"):
            TECHNIQUE.validate_params({"fanout": bad})
    assert TECHNIQUE.validate_params({"fanout": " 15 , 5"})["fanout"] == "15,5"


def test_cpu_only_profile_runs_cpu_only_and_skips_accelerator_variants():
    r = run(spec("cpu-only", profile="amd-epyc-7763"))
    assert r["t_copy"] == 0 and r["t_train_cpu"] > 0
    with pytest.raises(Skip):
        run(spec("multi-gpu", profile="amd-epyc-7763"))


# ----------------------------------------------------------------------------- claims and kit


def test_claims_metadata_and_nulls():
    assert [c.id for c in CLAIMS] == ["cpu-gpu-vs-multi-gpu-pyg", "cpu-fpga-vs-multi-gpu-pyg", "cpu-fpga-vs-distdgl"]
    assert [c.expect.paper for c in CLAIMS] == [2.08, 12.6, 5.27]
    for c in CLAIMS:
        assert c.verified and c.source == "abstract"
        labels = {n.label for n in c.nulls}
        assert {"no gain", "ideal bound", "prefetch alone"} <= labels


def test_claims_evaluate_and_nulls_are_computed():
    for c in CLAIMS:
        res = {lab: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario) for lab, s in c.specs().items()}
        ours = c.value(res)
        assert math.isfinite(ours) and ours > 0
        for null in c.nulls:
            if null.variants:
                alt = {lab: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario)
                       for lab, s in null.substitute(c.specs()).items()}
                v = c.value(alt)
                if null.label == "ideal bound":
                    assert v >= ours * (1 - 1e-12)  # nothing beats the bound
                else:
                    assert v <= ours * (1 + 1e-12)  # hyscale's space contains prefetch


def test_conformance_kit():
    from suite.testing import check_technique

    rep = check_technique(TECHNIQUE, max_examples=5)
    assert "claims-nulls" in rep.passed and "runs-and-metrics" in rep.passed
    assert "family:network-sensitivity" in rep.passed


@pytest.mark.parametrize("variant,profile", [("multi-gpu", "hyscale-cpu-gpu"), ("hyscale", "hyscale-cpu-fpga"),
                                             ("distdgl", "hyscale-distdgl-4n"), ("hyscale", "hyscale-distdgl-4n")])
def test_network_sensitivity_of_every_crossed_level(variant, profile):
    from suite.perf.sensitivity import check_network_sensitivity

    sc = resolve_case(TECHNIQUE, spec(variant, profile=profile)).scenario
    assert check_network_sensitivity(TECHNIQUE, sc) == []


def test_execute_defaults_to_a_workload_it_can_run(shared_context):
    """`suite run --technique hyscale-gnn --fidelity execute` ran 0 cases ok: the default workload
    (ogbn-products, a layer table for the model) has no arrays. Execute's own default is a
    generated graph; the model's stays the paper's dataset."""
    from suite.runner.case import Resolver
    from suite.technique import ScenarioSpec

    ctx = shared_context
    tech, res = ctx.technique("hyscale-gnn"), Resolver(context=ctx)
    ex = res.resolve(tech, ScenarioSpec(variant="hyscale", fidelity="execute"))
    mo = res.resolve(tech, ScenarioSpec(variant="hyscale", fidelity="model"))
    assert ex.scenario.workload_name == "sbm-graph" and mo.scenario.workload_name == tech.default_workload


_WORKLOAD_PROBE = r"""
import json, sys
import suite_hyscale_gnn as plugin
from suite_hyscale_gnn.technique import TECHNIQUE
wls = plugin.suite_workloads()
fanout = TECHNIQUE.parameters["fanout"].validate("fanout", "25, 10", technique="hyscale-gnn")
print(json.dumps({"numpy": "numpy" in sys.modules, "fanout": fanout,
                  "hashes": {w.name: w.content_hash() for w in wls}}))
"""


def test_workloads_and_fanout_import_no_numpy_and_keep_their_hashes():
    """The workloads hook and the fanout check run for every command that reads workloads or
    validates parameters (a cached `suite reproduce` too): they import no numpy, and the graphs'
    content hashes (inputs of every stored case key) are those of 0.3.0 (2c35d09)."""
    import json
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", _WORKLOAD_PROBE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["numpy"] is False
    assert got["fanout"] == "25,10"
    assert got["hashes"] == {"sbm-graph": "1215545799d94dc7", "rmat-graph": "1d4ad3531410e81b",
                             "hyscale-gnn-ogbn-products": "408db756da8ed44b",
                             "hyscale-gnn-ogbn-papers100m": "643211558eeac049",
                             "hyscale-gnn-mag240m": "db302c074c487b1e"}
    assert model.parse_fanout("3,2") == (3, 2)  # still importable from the model (its home before)


def test_distdgl_claim_flips_with_its_assumed_cluster_network():
    """Audit 11b A9: DistDGL is modelled (1.07x on the assumed 100 Gbit/s cluster); the claim enters
    5.27x +- 20% of the gain ([4.416, 6.124]) between 20 Gbit/s (4.14x) and 18 Gbit/s (4.55x); P3 not modelled."""

    c = {c.id: c for c in TECHNIQUE.claims}["cpu-fpga-vs-distdgl"]

    def at(bw):
        specs = {k: (dataclasses.replace(s, overrides={"network.1.bandwidth": f"{bw} Gbit/s"}) if k == "baseline" else s)
                 for k, s in c.specs().items()}
        return c.value({k: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario) for k, s in specs.items()})

    assert at(100) == pytest.approx(1.073, abs=1e-3)
    assert at(20) == pytest.approx(4.135, abs=1e-3) and not c.expect.check(at(20))
    assert at(18) == pytest.approx(4.552, abs=1e-3) and c.expect.check(at(18))
    # 'up to' is over P3 and DistDGL: P3 is not modelled, whatever DistDGL's network
    assert c.reason_class == "baseline not modelled" and c.assumptions[-1].flip_at == "about 19 Gbit/s"


def test_multi_gpu_pyg_claim_has_no_flip_over_its_swept_settings():
    """Audit 11b B16: the 12.6x claim's unknowns, swept, stay far below [10.28, 14.92]: hidden 64 gives 1.66x
    (the largest of the point's settings), and a PyG node whose GPUs talk at 0.3 GB/s (a hundredth of PCIe 4.0)
    2.47x; declared with no flip and the ranges."""
    c = {c.id: c for c in TECHNIQUE.claims}["cpu-fpga-vs-multi-gpu-pyg"]

    def at(params=None, link=None):
        specs = {k: dataclasses.replace(s, params={**s.params, **(params or {})},
                                        overrides={"network.0.bandwidth": link} if link and k == "baseline" else {})
                 for k, s in c.specs().items()}
        return c.value({k: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario) for k, s in specs.items()})

    assert at({"hidden": 64}) == pytest.approx(1.662, abs=1e-3)
    assert at(link="0.3 GB/s") == pytest.approx(2.466, abs=1e-3) and c.expect.band()[0] == pytest.approx(10.28)
    assert c.assumptions[-1].flip_at is None and "0.3 GB/s: 2.47x" in c.assumptions[-1].note
