"""Tests of the mg-wfbp plugin: merge rule by hand, exact optimum vs brute force, timeline values
by hand, properties under hypothesis, and the execute fidelity against its oracles."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite import Scenario, Skip
from suite.collectives import Ledger
from suite.hardware import ProfileLibrary
from suite.workloads import Layer, LayerTable
from suite_mgwfbp import execute as X
from suite_mgwfbp import model as M
from suite_mgwfbp.technique import TECHNIQUE, iteration_times

# --------------------------------------------------------------------------- fixtures

DEVICE_TOML = """
[profile]
name = "test-dev"
kind = "device"
source = "test: round figures for hand calculation"
[device]
type = "gpu"
memory = "16 GB"
memory_bandwidth = "1000 TB/s"
peak_flops = { fp32 = "1 TFLOP/s" }
"""

CLUSTER_TOML = """
nodes = 4
[profile]
name = "test-cluster"
kind = "cluster"
source = "test"
[node]
device = "test-dev"
devices_per_node = 1
[[network]]
name = "eth"
topology = "switch"
size = 4
bandwidth = "8 Gbit/s"
latency = "1 ms"
"""

FIT_TOML = """
nodes = 16
[profile]
name = "test-k80-10gbe"
kind = "cluster"
source = "test"
[node]
device = "test-dev"
devices_per_node = 1
[[network]]
name = "10gbe"
topology = "switch"
size = 16
bandwidth = "10 Gbit/s"
latency = "50 us"
fits = [{ collective = "allreduce", workers = 8, alpha = "5.230273e-4 s", beta = "8.570747e-10 s/B" }]
"""

TWO_LEVEL_TOML = """
nodes = 2
[profile]
name = "test-two-level"
kind = "cluster"
source = "test"
[node]
device = "test-dev"
devices_per_node = 4
[[network]]
name = "nvlink"
topology = "switch"
size = 4
bandwidth = "100 GB/s"
latency = "1 us"
[[network]]
name = "eth"
topology = "switch"
size = 2
bandwidth = "10 Gbit/s"
latency = "50 us"
"""

#: the same two nodes of 4 with a 10 GB/s PCIe switch inside, and published fits for 2 workers (one
#: node) and 8 (both) listed on the outer level
TWO_LEVEL_FIT_TOML = (TWO_LEVEL_TOML.replace('"test-two-level"', '"test-two-level-fits"').replace('"nvlink"', '"pcie"')
                      .replace('"100 GB/s"', '"10 GB/s"')
                      + 'fits = [{ collective = "allreduce", workers = 2, alpha = "2e-6 s", beta = "1e-10 s/B" },\n'
                        '        { collective = "allreduce", workers = 8, alpha = "5e-4 s", beta = "1e-9 s/B" }]\n')


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    d = tmp_path_factory.mktemp("profiles")
    for name, text in (("dev", DEVICE_TOML), ("cluster", CLUSTER_TOML), ("fit", FIT_TOML), ("two", TWO_LEVEL_TOML),
                       ("twofits", TWO_LEVEL_FIT_TOML)):
        (d / f"{name}.toml").write_text(text)
    return ProfileLibrary([d])


def three_layer_table() -> LayerTable:
    """fc1 (1 MB of fp32 gradient), relu, fc2 (2 MB), fc3 (4 MB); per-sample FLOPs chosen so that
    on a 1 TFLOP/s device at efficiency 1 the times are round milliseconds."""
    return LayerTable(name="test-3fc", kind="mlp", dtype_bytes=4, input_shape=(10,), layers=(
        Layer("fc1", "fc", (10,), (10,), params=250_000, fwd_flops=1e9, bwd_data_flops=0.0, bwd_weight_flops=1e9),
        Layer("relu1", "act", (10,), (10,), params=0, fwd_flops=5e8, bwd_data_flops=5e8),
        Layer("fc2", "fc", (10,), (10,), params=500_000, fwd_flops=2e9, bwd_data_flops=2e9, bwd_weight_flops=2e9),
        Layer("fc3", "fc", (10,), (10,), params=1_000_000, fwd_flops=1e9, bwd_data_flops=1e9, bwd_weight_flops=1e9),
    ))


def scenario(lib, variant, profile="test-cluster", fidelity="model", workload=None, **params):
    p = TECHNIQUE.validate_params({"efficiency": 1.0, "batch": 1, **params})
    return Scenario("mg-wfbp", variant, fidelity, lib.get(profile) if profile else None,
                    workload if workload is not None or fidelity == "execute" else three_layer_table(), p, 0)


# --------------------------------------------------------------------------- merge rule by hand


def test_merge_rule_case_not_started_merges():
    # bwd (1,1,1) ms-units, 10 B each, a = 1, b = 1: layer 2 ready at 1, message 1..12; layer 1
    # ready at 2 (waited 1, not < a = 1: no merge, [2] closes); layer 0 ready at 3 while layer 1's
    # message would start at 12 > 3: merge. Groups [2], [0, 1]: 1..12, then 12..33.
    comm = M.CommCost(1.0, 1.0)
    groups, pred = M.groups_mgwfbp((1, 1, 1), (10, 10, 10), comm)
    assert groups == [[2], [0, 1]]
    assert pred == 33.0
    costs = M.LayerCosts(("a", "b", "c"), 0.0, (1.0, 1.0, 1.0), (10.0, 10.0, 10.0))
    assert M.iteration_time(costs, groups, comm) == 33.0
    assert M.iteration_time(costs, M.groups_wfbp(3), comm) == 34.0  # 1..12, 12..23, 23..34
    assert M.iteration_time(costs, M.groups_sync(3), comm) == 34.0  # 3 + 1 + 30


def test_merge_rule_idle_link_does_not_merge():
    # layer 1 ready at 1, message 1..3; layer 0 ready at 11 >= 3: the link is idle, no merge.
    groups, pred = M.groups_mgwfbp((10, 1), (1, 1), M.CommCost(1.0, 1.0))
    assert groups == [[1], [0]]
    assert pred == 13.0


def test_counterexample_to_optimality():
    """The merge rule is not optimal (found by a random search, kept as an explicit case).

    bwd (3, 2, 1), bytes (2, 2, 3), a = 4, b = 1. Gradients are ready at 1 (layer 2), 3 (layer 1),
    6 (layer 0). The rule merges 2 into 1 (layer 2's message 1..8 would make layer 1 wait 2 < a:
    merged 3..12 beats 1..8 + 8..14) and then 1 into 0 (wait 6 - 3 = 3 < a), ending at
    6 + 4 + 7 = 17. Sending layer 2 alone (1..8) and then layers 0-1 together (8..16) ends at 16.
    """
    comm = M.CommCost(4.0, 1.0)
    costs = M.LayerCosts(("l0", "l1", "l2"), 0.0, (3.0, 2.0, 1.0), (2.0, 2.0, 3.0))
    groups, pred = M.groups_mgwfbp(costs.bwd, costs.nbytes, comm)
    assert groups == [[0, 1, 2]] and pred == 17.0
    best_groups, best = M.brute_force_best(costs, comm)
    assert best_groups == [[2], [0, 1]] and best == 16.0
    assert M.groups_optimal(costs.bwd, costs.nbytes, comm) == ([[2], [0, 1]], 16.0)


def test_bucket_groups_by_hand():
    # from the last layer: [3] holds 3 >= 3 -> close; [2] 2, [1,2] 3 -> close; [0] 4 -> close
    assert M.groups_bucket((4, 1, 2, 3), 3) == [[3], [1, 2], [0]]
    assert M.groups_bucket((1, 1, 1), 100) == [[0, 1, 2]]
    with pytest.raises(ValueError, match="bucket_mb"):
        M.groups_bucket((1, 1), 0)


def test_merge_rule_rejects_empty_layers():
    with pytest.raises(ValueError, match="nbytes > 0"):
        M.groups_mgwfbp((1, 1), (0, 1), M.CommCost(1, 1))


# --------------------------------------------------------------------------- a and b


def test_comm_cost_uses_fit_when_present(lib):
    prof = lib.get("test-k80-10gbe")
    c = M.comm_cost_from_profile(prof, 8)
    assert (c.a, c.b) == (5.230273e-4, 8.570747e-10) and c.source.startswith("fit")
    # no fit for 4 workers: ring on 10 Gbit/s, 50 us: a = 2*3*50 us, b = 2*3/4 / 1.25e9
    c4 = M.comm_cost_from_profile(prof, 4)
    assert c4.source.startswith("formula:ring")
    assert c4.a == pytest.approx(3e-4, rel=1e-9) and c4.b == pytest.approx(1.2e-9, rel=1e-9)
    # fit disabled: ring for 8 workers a = 14*50 us, b = 2*7/8 / 1.25e9
    c8 = M.comm_cost_from_profile(prof, 8, use_fit=False)
    assert c8.a == pytest.approx(7e-4, rel=1e-9) and c8.b == pytest.approx(1.4e-9, rel=1e-9)
    # tree: 2*ceil(log2 8) = 6 start-ups and 6 passes of the bytes
    ct = M.comm_cost_from_profile(prof, 8, "tree", use_fit=False)
    assert ct.a == pytest.approx(3e-4, rel=1e-9) and ct.b == pytest.approx(6 / 1.25e9, rel=1e-9)
    assert M.comm_cost_from_profile(prof, 1).a == 0.0


def test_a_fit_is_set_aside_when_its_level_is_overridden(lib):
    """The fit was measured on the level as loaded (10 Gbit/s): a bandwidth override leaves the
    8-worker all-reduce to the ring formula at the new bandwidth (a sweep used to price every
    bandwidth by the 10 GbE fit: the same time at 1, 10 and 100 Gbit/s)."""
    prof = lib.get("test-k80-10gbe")
    slow = prof.with_overrides({"network.-1.bandwidth": "1 Gbit/s"})
    c = M.comm_cost_from_profile(slow, 8)
    # ring for 8 workers: a = 2*7*50 us, b = 2*7/8 / 0.125e9 (1 Gbit/s = 125 MB/s)
    assert c.source.startswith("formula:ring")
    assert c.a == pytest.approx(7e-4, rel=1e-9) and c.b == pytest.approx(1.4e-8, rel=1e-9)
    # an override of another field of the level (its latency) sets it aside too; the profile as loaded keeps it
    assert M.comm_cost_from_profile(prof.with_overrides({"network.0.latency": "60 us"}), 8).source.startswith("formula")
    assert M.comm_cost_from_profile(prof, 8).source.startswith("fit")


def test_a_fit_follows_the_levels_its_workers_cross(lib):
    """Fits are listed on the outer level, but 2 workers packed 4 to a node never leave their node:
    an override of the outer level keeps their fit (0.3.8 set it aside, and the 2-worker case changed
    with a bandwidth it never reads), an override of the node's own level sets it aside (0.3.8 kept
    it: the sweep priced every PCIe bandwidth alike); 8 workers cross both levels."""
    prof = lib.get("test-two-level-fits")
    outer = prof.with_overrides({"network.-1.bandwidth": "1 Gbit/s"})
    inner = prof.with_overrides({"network.0.bandwidth": "1 GB/s"})
    assert (M.comm_cost_from_profile(outer, 2).a, M.comm_cost_from_profile(outer, 2).b) == (2e-6, 1e-10)
    assert M.comm_cost_from_profile(outer, 8).source.startswith("formula")
    # 2 workers on the 1 GB/s level: ring a = 2*1*1 us, b = 2*1/2 / 1e9 = 1 ns/B (plus the
    # reduction term 1/2 x 3 / (1000 TB/s) = 1.5e-15 s/B)
    c2 = M.comm_cost_from_profile(inner, 2)
    assert c2.source.startswith("formula:ring")
    assert c2.a == pytest.approx(2e-6, rel=1e-9) and c2.b == pytest.approx(1e-9 + 1.5e-15, rel=1e-9)
    assert M.comm_cost_from_profile(inner, 8).source.startswith("formula")
    # the devices or NICs per node move where the ranks sit (8 workers on one node of 8): every fit stands aside
    for field, value in (("node.devices_per_node", 8), ("node.nics_per_node", 4)):
        moved = prof.with_overrides({field: value})
        assert [M.comm_cost_from_profile(moved, w).source[:7] for w in (2, 8)] == ["formula", "formula"], field
    # the fits overridden themselves are what the user asked for, whatever else is overridden
    own = prof.with_overrides({"network.0.bandwidth": "1 GB/s",
                               "network.1.fits": [{"collective": "allreduce", "workers": 2, "alpha": "3 us",
                                                   "beta": "2e-10 s/B"}]})
    assert (M.comm_cost_from_profile(own, 2).a, M.comm_cost_from_profile(own, 2).b) == (3e-6, 2e-10)


def test_comm_cost_hierarchical_by_hand(lib):
    # 8 workers = 2 nodes x 4: RS and AG inside (3 x 1 us each, 3/4 m / 100 GB/s each), then the
    # m/4 shard across 2 nodes: one exchange (recursive doubling, 1 x 50 us, m/4 / 1.25 GB/s),
    # cheaper than the 2-step ring. Reduction 3 / (1000 TB/s) per byte on 3/4 m inside and m/4 outside.
    c = M.comm_cost_from_profile(lib.get("test-two-level"), 8, "hierarchical")
    assert c.a == pytest.approx(6e-6 + 50e-6, rel=1e-6)
    # the 4 ranks of a node send their shards at once through its one NIC: m/4 at 1.25 GB/s / 4
    assert c.b == pytest.approx(2 * 0.75 / 100e9 + 0.25 / (1.25e9 / 4) + 3e-15 * (0.75 + 0.25), rel=1e-6)


# --------------------------------------------------------------------------- model by hand


def test_model_values_by_hand(lib):
    """2 workers on 8 Gbit/s with 1 ms latency: ring a = 2 ms, b = 1 ns/B. Units (fc1+relu1,
    fc2, fc3): backward 1.5, 4, 2 ms; gradients 1, 2, 4 MB -> t_c 3, 4, 6 ms; ready at 7.5, 6,
    2 ms; forward 4.5 ms.

    wfbp: fc3 2..8, fc2 8..12, fc1 12..15 -> 19.5 ms.  sync: 7.5 + 2 + 7 = 16.5 -> 21 ms.
    mg-wfbp: fc3 alone (fc2 would wait 4 > a); fc2's message would start at 8 > 7.5 when fc1 is
    ready: merge -> fc3 2..8, {fc1, fc2} 8..13 -> 17.5 ms (the optimum of the 4 groupings).
    bucket (cap 5 MB): {fc2, fc3} 6..14, fc1 14..17 -> 21.5 ms.
    """
    want = {"wfbp": 19.5e-3, "sync": 21e-3, "mg-wfbp": 17.5e-3, "bucket": 21.5e-3}
    for v, t in want.items():
        r = TECHNIQUE.evaluate(scenario(lib, v, workers=2, bucket_mb=5e6 / 2**20))
        # the reduction term, 1/2 x 3 / (1000 TB/s) = 1.5e-15 s/B next to b = 1e-9, moves t_c by 1.5e-6
        assert r["iteration_time"] == pytest.approx(t, rel=2e-6), v
        assert r["compute_time"] == pytest.approx(12e-3, rel=1e-9)
        assert r["speedup"] == pytest.approx(2 * 12e-3 / t, rel=2e-6)
        assert r["scaling_efficiency"] == pytest.approx(12e-3 / t, rel=2e-6)
        assert r["optimal_iteration_time"] == pytest.approx(17.5e-3, rel=2e-6)
    r = TECHNIQUE.evaluate(scenario(lib, "mg-wfbp", workers=2))
    assert r.artifacts["groups"] == [["fc3"], ["fc1", "fc2"]]
    assert r["exposed_comm"] == pytest.approx(13e-3 - 7.5e-3, rel=2e-6)
    assert r["optimality_gap"] == pytest.approx(0.0, abs=1e-12)
    assert r["throughput"] == pytest.approx(2 / 17.5e-3, rel=2e-6)
    assert r.artifacts["comm_model"]["source"].startswith("formula:ring")


def test_one_worker_has_no_communication(lib):
    for v in ("sync", "wfbp", "mg-wfbp"):
        r = TECHNIQUE.evaluate(scenario(lib, v, workers=1))
        assert r["iteration_time"] == pytest.approx(12e-3, rel=1e-9) and r["speedup"] == pytest.approx(1.0)


def test_skips(lib):
    with pytest.raises(Skip, match="devices"):
        TECHNIQUE.evaluate(scenario(lib, "wfbp", workers=5))
    with pytest.raises(Skip, match="network"):
        M.comm_cost_from_profile(lib.get("test-dev"), 2)
    # a device profile means one worker: compute only
    r = TECHNIQUE.evaluate(scenario(lib, "wfbp", profile="test-dev"))
    assert r["iteration_time"] == pytest.approx(12e-3, rel=1e-9)


def test_declared_properties_hold(lib):
    for prop in TECHNIQUE.properties:
        for v in ("sync", "wfbp", "bucket", "mg-wfbp"):
            prop.check(TECHNIQUE, scenario(lib, v, workers=4))


# --------------------------------------------------------------------------- properties


@st.composite
def layer_costs(draw, max_layers=12):
    L = draw(st.integers(1, max_layers))
    t = st.floats(0.0, 10.0, allow_nan=False, allow_infinity=False)
    bwd = tuple(draw(st.lists(t, min_size=L, max_size=L)))
    nbytes = tuple(draw(st.lists(st.floats(1e-3, 10.0), min_size=L, max_size=L)))
    fwd = draw(t)
    comm = M.CommCost(draw(st.floats(0.0, 5.0)), draw(st.floats(0.0, 2.0)))
    return M.LayerCosts(tuple(f"l{i}" for i in range(L)), fwd, bwd, nbytes), comm


def _all_groupings(costs, comm):
    return {"sync": M.groups_sync(costs.L), "wfbp": M.groups_wfbp(costs.L),
            "bucket": M.groups_bucket(costs.nbytes, 7.0),
            "mg-wfbp": M.groups_mgwfbp(costs.bwd, costs.nbytes, comm)[0],
            "optimal": M.groups_optimal(costs.bwd, costs.nbytes, comm)[0]}


@settings(max_examples=60)
@given(layer_costs(max_layers=30))
def test_groups_are_contiguous_and_cover_every_layer(case):
    costs, comm = case
    for name, groups in _all_groupings(costs, comm).items():
        assert sorted(l for g in groups for l in g) == list(range(costs.L)), name
        for g in groups:
            assert g == list(range(g[0], g[-1] + 1)), (name, g)
        # communication order: from the last layer down
        assert [g[0] for g in groups] == sorted((g[0] for g in groups), reverse=True), name


@settings(max_examples=60)
@given(layer_costs(max_layers=30))
def test_mgwfbp_never_slower_than_wfbp_or_sync_and_above_compute(case):
    costs, comm = case
    T = {k: M.iteration_time(costs, g, comm) for k, g in _all_groupings(costs, comm).items()}
    eps = 1e-9 * (1 + T["sync"])
    assert T["mg-wfbp"] <= T["wfbp"] + eps
    assert T["mg-wfbp"] <= T["sync"] + eps
    assert T["optimal"] <= T["mg-wfbp"] + eps
    for v, t in T.items():
        assert t >= costs.fwd + sum(costs.bwd) - eps, v


@settings(max_examples=60)
@given(layer_costs(max_layers=30))
def test_rule_prediction_equals_timeline(case):
    costs, comm = case
    groups, pred = M.groups_mgwfbp(costs.bwd, costs.nbytes, comm)
    tl = M.schedule(costs, groups, comm)
    assert costs.fwd + pred == pytest.approx(tl.iteration_time, rel=1e-9, abs=1e-12)


@settings(max_examples=40)
@given(layer_costs(max_layers=10))
def test_dynamic_programme_equals_brute_force(case):
    costs, comm = case
    _, bf = M.brute_force_best(costs, comm)
    groups, end = M.groups_optimal(costs.bwd, costs.nbytes, comm)
    assert costs.fwd + max(sum(costs.bwd), end) == pytest.approx(bf, rel=1e-9, abs=1e-12)
    assert M.iteration_time(costs, groups, comm) == pytest.approx(bf, rel=1e-9, abs=1e-12)


@settings(max_examples=40)
@given(layer_costs(max_layers=12))
def test_mgwfbp_optimal_without_startup_cost(case):
    # with a = 0 merging saves nothing and the rule only merges a message that has not started
    costs, comm = case
    comm = M.CommCost(0.0, comm.b)
    groups, _ = M.groups_mgwfbp(costs.bwd, costs.nbytes, comm)
    _, bf = M.brute_force_best(costs, comm)
    assert M.iteration_time(costs, groups, comm) == pytest.approx(bf, rel=1e-9, abs=1e-12)


@settings(max_examples=40)
@given(layer_costs(max_layers=2))
def test_mgwfbp_optimal_for_two_layers(case):
    costs, comm = case
    groups, _ = M.groups_mgwfbp(costs.bwd, costs.nbytes, comm)
    _, bf = M.brute_force_best(costs, comm)
    assert M.iteration_time(costs, groups, comm) == pytest.approx(bf, rel=1e-9, abs=1e-12)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="the merge rule is not optimal in general: see "
                                       "test_counterexample_to_optimality and docs/techniques/mg-wfbp.md")
@settings(max_examples=100)
@given(layer_costs(max_layers=12))
def test_mgwfbp_equals_brute_force_optimum(case):
    """Slow (hypothesis searches for a counterexample, then shrinks it: ~1.5 s CPU under the ci
    profile, ~10 s under dev); the fast suite shows the same non-optimality on the pinned case,
    test_counterexample_to_optimality."""
    costs, comm = case
    groups, _ = M.groups_mgwfbp(costs.bwd, costs.nbytes, comm)
    _, bf = M.brute_force_best(costs, comm)
    assert M.iteration_time(costs, groups, comm) == pytest.approx(bf, rel=1e-9, abs=1e-12)


# --------------------------------------------------------------------------- execute


def test_allreduce_groups_equals_dense_mean_and_ledger_counts():
    rng = np.random.default_rng(0)
    P, sizes = 3, [7, 5, 11, 2]
    wg = [[rng.normal(size=n) for n in sizes] for _ in range(P)]
    ledger = Ledger()
    out = X.allreduce_groups(wg, [[3], [1, 2], [0]], ledger)
    for l, n in enumerate(sizes):
        np.testing.assert_allclose(out[l], np.mean([wg[r][l] for r in range(P)], axis=0), rtol=1e-13, atol=1e-15)
    tags = ledger.by_tag()
    # ring all-reduce of m elements on P = 3 workers: 2(P-1)P = 12 messages, 2(P-1) m * 8 bytes;
    # layer 3 has 2 elements < P, so one of the 3 chunks is empty and sends nothing: 2(P-1)*2 = 8
    assert tags == {"g0": (8, 2 * 2 * 2 * 8), "g1": (12, 2 * 2 * 16 * 8), "g2": (12, 2 * 2 * 7 * 8)}


@settings(max_examples=15)
@given(st.integers(1, 5), st.data())
def test_any_contiguous_grouping_gives_the_same_average(P, data):
    L = 5
    groups = data.draw(st.sampled_from(list(M.all_contiguous_groupings(L))))
    rng = np.random.default_rng(P)
    wg = [[rng.normal(size=n) for n in (4, 9, 3, 6, 2)] for _ in range(P)]
    ref = X.allreduce_groups(wg, M.groups_wfbp(L))
    out = X.allreduce_groups(wg, groups)
    for a, b in zip(out, ref):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_local_gradients_match_finite_differences():
    rng = np.random.default_rng(1)
    mlp = X.MLP.init((4, 5, 3), rng)
    Xb, yb = rng.normal(size=(6, 4)), rng.integers(0, 3, 6)
    g = X.local_gradients(mlp, Xb, yb)
    h = 1e-6
    for l, (i, j) in ((0, (1, 2)), (1, (4, 0))):
        plus, minus = mlp.copy(), mlp.copy()
        plus.W[l][i, j] += h
        minus.W[l][i, j] -= h
        fd = (plus.loss_acc(Xb, yb)[0] - minus.loss_acc(Xb, yb)[0]) / (2 * h)
        assert g[l][i * mlp.W[l].shape[1] + j] == pytest.approx(fd, rel=1e-5, abs=1e-8)


def test_execute_variants_agree_with_oracles(lib):
    ref = None
    for v in ("sync", "wfbp", "bucket", "mg-wfbp"):
        sc = scenario(lib, v, profile="test-cluster", fidelity="execute", workers=4, steps=10, batch=16)
        r = TECHNIQUE.evaluate(sc)
        assert r["max_diff_vs_layerwise"] <= 1e-12 and r["max_diff_vs_dense"] <= 1e-12, v
        assert r["ledger_matches_ring"] == 1.0, v
        assert r["messages_per_step"] == 2 * 3 * 4 * r["groups"], v
        # every layer's bytes cross the ring 2(P-1) times whatever the grouping
        params = sum(i * o + o for i, o in zip(r.artifacts["mlp_sizes"][:-1], r.artifacts["mlp_sizes"][1:]))
        assert r["bytes_per_step"] == 2 * 3 * params * 8, v
        assert r["final_loss"] < math.log(10), v
        ref = r["final_loss"] if ref is None else ref
        assert r["final_loss"] == pytest.approx(ref, rel=1e-12), v
    assert TECHNIQUE.evaluate(scenario(lib, "wfbp", fidelity="execute", workers=4, steps=2))["groups"] == 4


def test_execute_skips(lib):
    with pytest.raises(Skip, match="profile"):
        TECHNIQUE.evaluate(scenario(lib, "mg-wfbp", profile=None, fidelity="execute", steps=1))
    with pytest.raises(Skip, match="layer table"):
        TECHNIQUE.evaluate(scenario(lib, "wfbp", fidelity="execute", workload=three_layer_table(), steps=1))


# --------------------------------------------------------------------------- declaration and claims


def test_declaration():
    assert TECHNIQUE.name == "mg-wfbp"
    assert {v.name for v in TECHNIQUE.baselines} == {"sync", "wfbp", "bucket"}
    assert TECHNIQUE.validate_params({})["bucket_mb"] == 25.0
    for c in TECHNIQUE.claims:
        assert c.verified == (c.source == "abstract"), c.id


def test_ordering_claims_need_the_margin_and_ties_fail():
    """The 'scales better' claims: iteration times with a 2% margin (docs/verdicts.md); a tie (what the
    model gives at the paper's 8-node points with the PyTorch code's fit, where merging never helps) fails."""
    from suite import Result

    def res(t):
        return Result().add("iteration_time", t, "s", "lower")

    claim = {c.id: c for c in TECHNIQUE.claims}["googlenet-8n-10gbe-mgwfbp-faster-than-wfbp"]
    assert iteration_times({"mg-wfbp": res(1.0), "wfbp": res(2.0)}) == {"mg-wfbp": 1.0, "wfbp": 2.0}
    assert not claim.expect.check({"mg-wfbp": 0.3202, "wfbp": 0.3202})  # tie
    assert not claim.expect.check({"mg-wfbp": 1.0, "wfbp": 1.019})  # 1.9% faster: inside the margin
    assert claim.expect.check({"mg-wfbp": 1.0, "wfbp": 1.021})
    # its first null puts WFBP in MG-WFBP's place: a tie by construction, so always outside; the
    # second, DDP's fixed buckets in its place, can be inside (any merging beating WFBP)
    assert [n.variants for n in claim.nulls] == [{"mg-wfbp": "wfbp"}, {"mg-wfbp": "bucket"}]


def test_no_claim_comes_from_the_plotting_script():
    assert all(c.source == "abstract" and c.verified for c in TECHNIQUE.claims)
    assert all(c.nulls for c in TECHNIQUE.claims)


def test_conformance_kit():
    from suite.testing import check_technique

    rep = check_technique(TECHNIQUE, max_examples=5)
    for cap in ("bytes-conserved", "oracle-exact", "sgd-envelope"):
        assert rep.outcomes[f"family:{cap}"] == "passed"


@pytest.fixture(scope="module")
def ctx(shared_context):
    return shared_context


def _claim_scenario(ctx, claim_id):
    from suite.errors import ProfileError
    from suite.runner.case import resolve_case

    claim = {c.id: c for c in TECHNIQUE.claims}[claim_id]
    spec = claim.scenario if claim.scenario is not None else claim.cases["mg-wfbp"]
    try:
        case = resolve_case(TECHNIQUE, spec, context=ctx)
    except ProfileError as exc:  # pragma: no cover - profile not shipped in this checkout
        pytest.skip(str(exc))
    return case.scenario


def _claim_comm_model(ctx, claim_id):
    return TECHNIQUE.evaluate(_claim_scenario(ctx, claim_id)).artifacts["comm_model"]


def test_shipped_k80_ib_profile_uses_the_published_fit(ctx):
    cm = _claim_comm_model(ctx, "googlenet-8n-ib56-mgwfbp-optimal")  # 8 workers, 56 Gb IB
    # the authors' published 56Gb IB all-reduce fit for 8 workers (the k80 profile's cited source)
    assert (cm["a_s"], cm["b_s_per_byte"]) == pytest.approx((9.753672e-5, 3.056823e-10), rel=1e-9)
    assert cm["source"].startswith("fit")


#: the testbed's declared constants (hardware_profiles/clusters/k80-cluster-bcaffe-10gbe.toml):
#: 10 Gbit/s = 1.25e9 B/s, 160 us per message (B-Caffe's alpha = 20 us x 8 ranks), K80 memory 240 GB/s
_BW, _LAT, _GAMMA = 1.25e9, 160e-6, 3 / 240e9


def test_testbed_allreduce_of_one_mib_by_hand(ctx):
    """B-Caffe's testbed (8 nodes of one worker, host-staged MPI over 10GbE) as collective_time
    prices it: a ring all-reduce of 1 MiB over 8 ranks is 14 steps of one 131072 B message,
    14 x (160 us + 131072 B / 1.25 GB/s) = 14 x 264.8576 us = 3.7080064 ms, plus the reduction of
    7/8 MiB at 3 / (240 GB/s) = 11.4688 us: 3.7194752 ms."""
    from suite.api import collective_time, group_of

    prof = _claim_scenario(ctx, "googlenet-8n-10gbe-mgwfbp-optimal").profile
    assert prof.name == "k80-cluster-bcaffe-10gbe"
    cost = collective_time("allreduce", 2**20, group_of(prof, 8), prof, "ring")
    assert cost.time == pytest.approx(3.7194752e-3, rel=1e-12)
    assert cost.bytes_per_level == pytest.approx((2 * 7 / 8 * 2**20,), rel=1e-12)


def test_testbed_claims_are_priced_by_the_network_model(ctx):
    """Every 8-node 10GbE claim runs on the testbed profile, which has no published fit: the
    all-reduce is collective_time's ring, a = 14 x 160 us = 2.24 ms and
    b = 14/8 / 1.25 GB/s + 7/8 x 3 / (240 GB/s) = 1.4 + 0.0109375 = 1.4109375 ns/B. The what-if
    stays on k80-cluster-10gbe with the authors' 16-worker fit (a = 0.908 ms)."""
    ids = [c.id for c in TECHNIQUE.claims if "-8n-10gbe-" in c.id]
    assert len(ids) == 6
    for cid in ids:
        cm = _claim_comm_model(ctx, cid)
        assert cm["a_s"] == pytest.approx(14 * _LAT, rel=1e-9), cid
        assert cm["b_s_per_byte"] == pytest.approx(14 / 8 / _BW + 7 / 8 * _GAMMA, rel=1e-9), cid
        assert cm["source"].startswith("formula:ring by suite.perf.collective_time"), cid
    cm = _claim_comm_model(ctx, "resnet-50-16n-10gbe-fast-device-mgwfbp-optimal")
    assert cm["source"].startswith("fit") and cm["a_s"] == pytest.approx(9.080981e-4, rel=1e-12)


def test_comm_model_bcaffe_is_deprecated_and_prices_through_the_profile(lib):
    """comm_model='b-caffe' (0.3.0) warns, names its replacement and 0.4.0, and gives the profile's
    price: the hand-computed times of test_model_values_by_hand."""
    for v, t in {"wfbp": 19.5e-3, "sync": 21e-3, "mg-wfbp": 17.5e-3}.items():
        with pytest.warns(FutureWarning, match=r"0\.4\.0.*k80-cluster-bcaffe-10gbe"):  # shown by default
            r = TECHNIQUE.evaluate(scenario(lib, v, workers=2, comm_model="b-caffe"))
        assert r["iteration_time"] == pytest.approx(t, rel=2e-6), v
        src = r.artifacts["comm_model"]["source"]
        assert src.startswith("formula:ring") and "deprecated (removed in 0.4.0)" in src  # in the stored result
    with pytest.raises(Exception, match="comm_model"):
        M.comm_cost({"comm_model": "nccl"}, None, 2)


def test_an_override_that_sets_a_fit_aside_is_in_the_profile_hash(lib):
    """An override equal to the profile's own value sets its fits aside (the case is priced by the
    model), so its case must not share a key with the profile as loaded: the store served the
    model's number to a later run without overrides (2.078 ms of communication where the fit gives
    2.901 on k80-cluster-ib56). Without fits, equal figures still hash alike."""
    fitted = lib.get("test-two-level-fits")
    same = fitted.with_overrides({"network.0.bandwidth": "10 GB/s"})
    assert same.network == fitted.network  # the same figures, fits included
    assert same.content_hash() != fitted.content_hash()
    assert M.comm_cost_from_profile(same, 2).source.startswith("formula")
    assert M.comm_cost_from_profile(fitted, 2).source.startswith("fit")
    plain = lib.get("test-two-level")
    assert plain.with_overrides({"network.0.bandwidth": "100 GB/s"}).content_hash() == plain.content_hash()


def test_fast_device_optimality_gap_opens_between_3_5x_and_3_75x_a_k80():
    """Audit 11b A10: the what-if device's speed is what decides the claim, declared with its flip: at 3.5x a
    K80 GK210 (15.28 TFLOP/s, 840 GB/s) the merge rule is optimal (gap 0), at 3.75x 1.34% off the best grouping."""
    import dataclasses

    from suite.testing import resolve_case
    from suite_mgwfbp.technique import TECHNIQUE

    c = {c.id: c for c in TECHNIQUE.claims}["resnet-50-16n-10gbe-fast-device-mgwfbp-optimal"]

    def gap(x):
        ov = {"device.peak_flops.fp32": f"{x * 4.365} TFLOP/s", "device.memory_bandwidth": f"{x * 240} GB/s"}
        spec = dataclasses.replace(c.scenario, overrides=ov)
        return TECHNIQUE.evaluate(resolve_case(TECHNIQUE, spec).scenario)["optimality_gap"]

    assert gap(3.5) == 0.0 and c.expect.check(gap(3.5))
    assert gap(3.75) == pytest.approx(0.0134, abs=1e-4) and not c.expect.check(gap(3.75))
    assert c.assumptions[0].flip_at == "between 3.5x and 3.75x" and "disagrees with the proof" in c.reason
