"""Tests of the Poseidon plugin: cost rule, per-layer and iteration model by hand calculation,
execute fidelity against the dense oracle and the cost rule's float counts, skips, properties
(hypothesis), claims resolution and the conformance kit."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite import Scenario, ScenarioSpec, Skip
from suite.collectives import Ledger
from suite.errors import ParameterError
from suite.hardware import Device, ProfileLibrary
from suite.testing import resolve_case
from suite.testing.strategies import layer_tables, layers
from suite.workloads import Layer, LayerTable
from suite_poseidon import execute, model
from suite_poseidon.technique import CLAIMS, TECHNIQUE

# ----------------------------------------------------------------------------- helpers

GBIT = 1e9 / 8  # B/s per Gbit/s

TOY_DEVICE = Device(type="gpu", name="toy", memory=12e9, memory_bandwidth=1e18, peak_flops={"fp32": 1e13})


def conv(name, params, fwd, bwd_half):
    """A conv layer with given params and per-sample FLOPs (tiny activations, compute bound)."""
    return Layer(name, "conv", (1, 1, 1), (1, 1, 1), params=params, fwd_flops=fwd,
                 bwd_data_flops=bwd_half, bwd_weight_flops=bwd_half, activation_bytes=4.0)


def fc(name, m, n, bias=True, flops=0.0):
    return Layer(name, "fc", (n,), (m,), params=m * n + (m if bias else 0), fwd_flops=flops,
                 bwd_data_flops=flops, bwd_weight_flops=flops, activation_bytes=4.0 * m, grad_shape=(m, n))


def cluster(tmp_path, nodes=32, bandwidth="10 Gbit/s", latency="37 us", name="test-cluster"):
    """A cluster profile written as TOML and loaded through the profile library."""
    (tmp_path / "dev.toml").write_text("""
[profile]
name = "test-gpu"
kind = "device"
[device]
type = "gpu"
memory = "12 GB"
memory_bandwidth = "336.5 GB/s"
peak_flops = { fp32 = "6.605 TFLOP/s" }
""")
    (tmp_path / f"{name}.toml").write_text(f"""
nodes = {nodes}
[profile]
name = "{name}"
kind = "cluster"
[node]
device = "test-gpu"
devices_per_node = 1
[[network]]
name = "eth"
topology = "switch"
size = {nodes}
bandwidth = "{bandwidth}"
latency = "{latency}"
""")
    lib = ProfileLibrary([tmp_path])
    return lib.get(name), lib.get("test-gpu")


def scenario(variant, profile, workload, fidelity="model", seed=0, **params):
    return Scenario("poseidon", variant, fidelity, profile=profile, workload=workload,
                    params=TECHNIQUE.validate_params(params), seed=seed)


def small_table():
    """Two convs and two fc layers (VGG-like tail), compute bound on TOY_DEVICE."""
    ls = (conv("conv1", 2_000, 1e8, 1e8), conv("conv2", 300_000, 2e9, 2e9),
          fc("fc6", 4096, 9216, flops=2.0 * 4096 * 9216), fc("fc8", 1000, 4096, flops=2.0 * 1000 * 4096))
    return LayerTable(name="toy", kind="cnn", layers=ls, input_shape=(1, 1, 1))


# ----------------------------------------------------------------------------- the cost rule


def test_cost_rule_vgg19_22k_classifier_hand_numbers():
    # Poseidon's example (K=32, P=16): VGG19-22K fc8 4096 -> 21841. Hand calculation:
    # PS  = 2*21841*4096*(16+16-2)/16 = 2*89_460_736*30/16 = 335_477_760 floats
    # SFB = 2*32*15*(21841+4096)      = 960*25_937         =  24_899_520 floats
    assert model.ps_floats_per_node(21841, 4096, 16, 16) == 335_477_760
    assert model.sfb_floats_per_node(21841, 4096, 16, 32) == 24_899_520
    assert model.best_scheme(fc("fc8", 21841, 4096), 16, 16, 32) == "sfb"


def test_cost_rule_small_classifier_prefers_ps():
    # 512 -> 10, K=32, P=16: SFB 2*32*15*522 = 501_120 > PS 2*5120*30/16 = 19_200 floats
    assert model.sfb_floats_per_node(10, 512, 16, 32) == 501_120
    assert model.ps_floats_per_node(10, 512, 16, 16) == 19_200
    assert model.best_scheme(fc("fc8", 10, 512), 16, 16, 32) == "ps"


def test_cost_rule_rejects_bad_counts():
    with pytest.raises(ValueError):
        model.ps_floats_per_node(4, 4, 2, 3)
    with pytest.raises(ValueError):
        model.sfb_floats_per_node(4, 4, 2, 0)


def _brute_force_floats(scheme: str, m: int, n: int, p: int, s: int, k: int) -> float:
    """The busiest node's floats sent + received for one m x n fc gradient, by enumerating every
    message of one iteration (no formula): PS with S servers on nodes 0..S-1, each holding m n / S
    of the matrix (push of every worker's shard to its server, pull of the updated shard back,
    nothing sent to oneself); SFB: every node sends its K pairs of factors (m + n floats each) to
    every other node (Poseidon §3, sufficient-factor broadcasting)."""
    traffic = [0.0] * p
    msgs = []
    if scheme == "ps":
        shard = m * n / s
        for w in range(p):
            for srv in range(s):
                if w != srv:
                    msgs += [(w, srv, shard), (srv, w, shard)]  # push, pull
    else:
        for a in range(p):
            for b in range(p):
                if a != b:
                    msgs.append((a, b, k * (m + n)))
    for src, dst, size in msgs:
        traffic[src] += size
        traffic[dst] += size
    return max(traffic)


@settings(max_examples=60)
@given(m=st.integers(1, 400), n=st.integers(1, 400), p=st.integers(1, 9), k=st.integers(1, 64), data=st.data())
def test_hybcomm_picks_the_cheaper_scheme_by_brute_force_count(m, n, p, k, data):
    s = data.draw(st.integers(1, p))
    ps, sfb = _brute_force_floats("ps", m, n, p, s, k), _brute_force_floats("sfb", m, n, p, s, k)
    assert model.ps_floats_per_node(m, n, p, s) == pytest.approx(ps, rel=1e-12)
    assert model.sfb_floats_per_node(m, n, p, k) == pytest.approx(sfb, rel=1e-12)
    assert model.best_scheme(fc("f", m, n), p, s, k) == ("sfb" if sfb <= ps else "ps")


@settings(max_examples=30)
@given(layer=layers(kind="conv"), p=st.integers(1, 64), k=st.integers(1, 4096))
def test_hybcomm_never_sfb_for_conv(layer, p, k):
    assert model.best_scheme(layer, p, p, k) == "ps"
    with pytest.raises(ValueError):
        model.layer_comm(layer, "sfb", p, p, k, 1e-5, 1e-9, 1e13, 1e12, 1.0)


# ----------------------------------------------------------------------------- per-layer model


def test_ps_layer_time_hand_calculation():
    # 1e6 params = 4e6 B, P = S = 4, alpha 10 us, 10 Gbit/s: per phase each NIC moves 4e6*3/4 = 3e6 B
    # T = 2 (1e-5 + 3e6 / 1.25e9) = 4.82e-3 s; bytes per node 2*1e6*(4+4-2)/4*4 = 1.2e7 B
    layer = conv("c", 1_000_000, 0, 0)
    lc = model.layer_comm(layer, "ps", 4, 4, 32, 1e-5, 1 / (10 * GBIT), 1e13, 1e12, 1.0)
    assert lc.scheme == "ps"
    assert lc.time == pytest.approx(4.82e-3, rel=1e-12)
    assert lc.bytes == pytest.approx(1.2e7, rel=1e-12)


def test_sfb_layer_time_hand_calculation():
    # fc 2000 -> 1000 with 1000 bias, P = S = 4, K = 8, alpha 10 us, 10 Gbit/s, peak 1e12, eff 0.5.
    # factors: 8*(1000+2000)*4 = 96_000 B to each of 3 peers: 3 (1e-5 + 96000/1.25e9) = 2.604e-4 s
    # bias by PS: 4000 B, per phase 3000 B: 2 (1e-5 + 3000/1.25e9) = 2.48e-5 s
    # rebuild: 2*1000*2000*8*3 = 9.6e7 FLOP / (0.5 * 1e12) = 1.92e-4 s (compute bound)
    # bytes per node: 2*8*3*3000*4 = 576_000 + bias 2*1000*6/4*4 = 12_000 -> 588_000 B
    layer = fc("f", 1000, 2000)
    lc = model.layer_comm(layer, "sfb", 4, 4, 8, 1e-5, 1 / (10 * GBIT), 1e12, 1e15, 0.5)
    assert lc.net_time == pytest.approx(2.604e-4 + 2.48e-5, rel=1e-9)
    assert lc.rebuild_time == pytest.approx(1.92e-4, rel=1e-6)
    assert lc.bytes == pytest.approx(588_000, rel=1e-12)


def test_single_node_has_no_traffic():
    layer = fc("f", 1000, 2000)
    for scheme in ("ps", "sfb"):
        lc = model.layer_comm(layer, scheme, 1, 1, 32, 1e-5, 1e-9, 1e12, 1e12, 1.0)
        assert lc.time == 0.0 and lc.bytes == 0.0


# ----------------------------------------------------------------------------- iteration model


def two_convs():
    # each: 1e6 params, 1e9 FLOP forward and 2e9 backward per sample
    return (conv("a", 1_000_000, 1e9, 1e9), conv("b", 1_000_000, 1e9, 1e9))


def test_iteration_time_hand_calculation_ps_and_wfbp():
    # batch 10 on 1e13 FLOP/s (eff 1): per layer f = 1e10/1e13 = 1e-3 s, b = 2e-3 s.
    # PS at P = S = 2, alpha 0, 1 GB/s: per phase 4e6/2 = 2e6 B -> c = 2 * 2e-3 = 4e-3 s per layer.
    # no overlap: T = 2e-3 + 4e-3 + 8e-3 = 14e-3 s
    # WFBP: layer b ready at 2e-3, link busy to 6e-3; layer a ready at 4e-3, sent 6e-3 .. 10e-3;
    #       T = 2e-3 + max(4e-3, 10e-3) = 12e-3 s.  One node: T1 = 6e-3 s.
    ls = two_convs()
    ps = model.iteration_model(ls, "ps", 2, 10, 2, 0.0, 1e-9, TOY_DEVICE, 1.0)
    wf = model.iteration_model(ls, "wfbp", 2, 10, 2, 0.0, 1e-9, TOY_DEVICE, 1.0)
    assert ps.iteration_time == pytest.approx(14e-3, rel=1e-9)
    assert wf.iteration_time == pytest.approx(12e-3, rel=1e-9)
    assert wf.exposed_comm == pytest.approx(6e-3, rel=1e-9)
    sp, _, one = model.speedup(ls, "wfbp", 2, 10, 2, 0.0, 1e-9, TOY_DEVICE, 1.0)
    assert one.iteration_time == pytest.approx(6e-3, rel=1e-9)
    assert sp == pytest.approx(2 * 6e-3 / 12e-3, rel=1e-9)
    assert model.speedup(ls, "ps", 2, 10, 2, 0.0, 1e-9, TOY_DEVICE, 1.0)[0] == pytest.approx(12 / 14, rel=1e-9)


def test_variant_schemes():
    t = small_table().layers
    schemes = {v: [c.scheme for c in model.iteration_model(t, v, 16, 32, 16, 1e-5, 1e-9, TOY_DEVICE).comms]
               for v in model.VARIANTS}
    assert schemes["ps"] == ["ps"] * 4 and schemes["wfbp"] == ["ps"] * 4
    assert schemes["sfb"] == ["ps", "ps", "sfb", "sfb"]
    # fc6 4096x9216: SFB 2*32*15*13312 = 12.8M < PS 2*37.7M*30/16 = 141.6M floats -> sfb
    # fc8 1000x4096: SFB 2*32*15*5096  =  4.9M < PS 2*4.1M*30/16  =  15.4M floats -> sfb
    assert schemes["poseidon"] == ["ps", "ps", "sfb", "sfb"]
    # two nodes, K = 1024: fc6 SFB 2*1024*1*13312 = 27.3M < PS 2*37.7M*(2+2-2)/2 = 75.5M -> sfb;
    #                      fc8 SFB 2*1024*1*5096  = 10.4M > PS 2*4.1M*(2+2-2)/2  =  8.2M -> ps
    it = model.iteration_model(t, "poseidon", 2, 1024, 2, 1e-5, 1e-9, TOY_DEVICE)
    assert [c.scheme for c in it.comms] == ["ps", "ps", "sfb", "ps"]


def test_iteration_model_rejects_bad_input():
    t = small_table().layers
    with pytest.raises(ValueError):
        model.iteration_model(t, "allreduce", 2, 32, 2, 0, 1e-9, TOY_DEVICE)
    with pytest.raises(ValueError):
        model.iteration_model(t, "ps", 2, 32, 3, 0, 1e-9, TOY_DEVICE)


def test_compute_model_vs_published_vgg19_measurement():
    # J. Johnson, jcjohnson/cnn-benchmarks README: VGG-19, batch 16, GTX TITAN X (Maxwell),
    # Torch + cuDNN 5005, forward + backward 323.40 ms. Our roofline at the default efficiency
    # must be within the 30% tolerance for absolute times.
    from session_context import session_context

    dev = session_context().profile("nvidia-titan-x-maxwell").device
    it = model.iteration_model(session_context().workload("vgg19").layers, "ps", 1, 16, 1, 0.0, 0.0, dev)
    assert it.iteration_time == pytest.approx(0.3234, rel=0.30)


# ----------------------------------------------------------------------------- properties (model)


@st.composite
def model_inputs(draw):
    table = draw(layer_tables(1, 8))
    p = draw(st.integers(1, 32))
    s = draw(st.integers(1, p))
    k = draw(st.integers(1, 128))
    alpha = draw(st.floats(0.0, 1e-4))
    bw = draw(st.floats(0.1e9, 50e9))
    eff = draw(st.floats(0.05, 1.0))
    return table, p, s, k, alpha, bw, eff


@settings(max_examples=40)
@given(model_inputs())
def test_wfbp_time_between_bounds(inp):
    table, p, s, k, alpha, bw, eff = inp
    for v in ("wfbp", "poseidon"):
        it = model.iteration_model(table.layers, v, p, k, s, alpha, 1 / bw, TOY_DEVICE, eff)
        b, c = sum(it.backward), it.comm_time
        assert it.forward + max(b, c) <= it.iteration_time * (1 + 1e-12)
        assert it.iteration_time <= (it.forward + b + c) * (1 + 1e-12)


@settings(max_examples=40)
@given(model_inputs(), st.floats(1.0, 16.0))
def test_iteration_time_non_increasing_in_bandwidth(inp, factor):
    table, p, s, k, alpha, bw, eff = inp
    for v in model.VARIANTS:
        slow = model.iteration_model(table.layers, v, p, k, s, alpha, 1 / bw, TOY_DEVICE, eff)
        fast = model.iteration_model(table.layers, v, p, k, s, alpha, 1 / (bw * factor), TOY_DEVICE, eff)
        assert fast.iteration_time <= slow.iteration_time * (1 + 1e-12)


@settings(max_examples=40)
@given(model_inputs())
def test_overlap_never_hurts_and_hybrid_bytes_are_the_per_layer_min(inp):
    table, p, s, k, alpha, bw, eff = inp
    ps = model.iteration_model(table.layers, "ps", p, k, s, alpha, 1 / bw, TOY_DEVICE, eff)
    wf = model.iteration_model(table.layers, "wfbp", p, k, s, alpha, 1 / bw, TOY_DEVICE, eff)
    hy = model.iteration_model(table.layers, "poseidon", p, k, s, alpha, 1 / bw, TOY_DEVICE, eff)
    assert wf.iteration_time <= ps.iteration_time * (1 + 1e-12)
    for layer, c in zip(table.layers, hy.comms):
        if layer.kind != "fc":
            assert c.scheme == "ps"
            continue
        m, n = layer.grad_shape
        bias = 2.0 * (layer.params - m * n) * (p + s - 2) / s * 4
        best = min(model.sfb_floats_per_node(m, n, p, k), model.ps_floats_per_node(m, n, p, s)) * 4
        assert c.bytes == pytest.approx(best + bias, rel=1e-12)


@settings(max_examples=25)
@given(table=layer_tables(1, 8), k=st.integers(1, 128), variant=st.sampled_from(sorted(model.VARIANTS)))
def test_speedup_one_node_is_one(table, k, variant):
    sp, at_p, at_1 = model.speedup(table.layers, variant, 1, k, 1, 1e-5, 1e-9, TOY_DEVICE)
    assert sp == 1.0 and at_p.iteration_time == at_1.iteration_time


# ----------------------------------------------------------------------------- evaluate (model)


def test_evaluate_on_toml_cluster(tmp_path):
    prof, _ = cluster(tmp_path)
    r = TECHNIQUE.evaluate(scenario("poseidon", prof, small_table(), nodes=8))
    for name in ("iteration_time", "throughput", "speedup", "comm_time", "bytes_per_node", "comm_bytes"):
        assert math.isfinite(r[name]) and r[name] > 0
    assert r["throughput"] == pytest.approx(8 * 32 / r["iteration_time"])
    rows = r.artifacts["layers"]
    assert [row["scheme"] for row in rows] == ["ps", "ps", "sfb", "sfb"]
    assert r["bytes_per_node"] == pytest.approx(sum(row["bytes"] for row in rows))
    assert r["sfb_layers"] == 2


def test_bandwidth_override_on_profile_lowers_time(tmp_path):
    prof, _ = cluster(tmp_path)
    wl = small_table()
    times = []
    for bw in ("2 Gbit/s", "10 Gbit/s", "40 Gbit/s"):
        p2 = prof.with_overrides({"network.-1.bandwidth": bw})
        times.append(TECHNIQUE.evaluate(scenario("ps", p2, wl, nodes=16))["iteration_time"])
    assert times[0] > times[1] > times[2]


def test_skips(tmp_path):
    prof, dev = cluster(tmp_path, nodes=8)
    wl = small_table()
    with pytest.raises(Skip, match="exceeds the 8 nodes"):
        TECHNIQUE.evaluate(scenario("ps", prof, wl, nodes=16))
    with pytest.raises(Skip, match="servers=8 > nodes=4"):
        TECHNIQUE.evaluate(scenario("ps", prof, wl, nodes=4, servers=8))
    with pytest.raises(Skip, match="not a cluster"):
        TECHNIQUE.evaluate(scenario("ps", dev, wl, nodes=2))
    with pytest.raises(Skip, match="layer-table"):
        TECHNIQUE.evaluate(scenario("ps", prof, None, nodes=2))
    # one node on a single device is fine, and scales by 1
    assert TECHNIQUE.evaluate(scenario("poseidon", dev, wl, nodes=1))["speedup"] == 1.0
    with pytest.raises(Skip, match="nodes=100"):
        TECHNIQUE.evaluate(scenario("ps", None, None, fidelity="execute", nodes=100))


def test_parameter_validation():
    with pytest.raises(ParameterError, match="efficiency"):
        TECHNIQUE.validate_params({"efficiency": 0})
    with pytest.raises(ParameterError, match="dtype"):
        TECHNIQUE.validate_params({"dtype": "fp16"})
    with pytest.raises(ParameterError, match="nodes"):
        TECHNIQUE.validate_params({"nodes": 0})
    d = TECHNIQUE.validate_params({})
    assert d["nodes"] is None and d["batch_per_node"] == 32 and d["servers"] is None  # nodes: the profile's, <= 16
    assert d["efficiency"] == model.DEFAULT_EFFICIENCY


# ----------------------------------------------------------------------------- execute fidelity


@settings(max_examples=25)
@given(p=st.integers(1, 6), k=st.integers(1, 8), m=st.integers(1, 40), n=st.integers(1, 40),
       seed=st.integers(0, 2**16))
def test_sfb_aggregate_equals_dense_and_ledger_matches_rule(p, k, m, n, seed):
    rng = np.random.default_rng(seed)
    layer = fc("f", m, n, bias=False)
    deltas, xs, grads = execute.worker_gradients(layer, p, k, rng)
    oracle = np.sum([d.astype(np.float64).T @ x.astype(np.float64) for d, x in zip(deltas, xs)], axis=0)
    # the outer-product form of one worker's gradient
    np.testing.assert_allclose(grads[0], sum(np.outer(deltas[0][i], xs[0][i]) for i in range(k)), rtol=1e-4, atol=1e-4)
    ledger = Ledger()
    outs = execute.aggregate_sfb(deltas, xs, ledger, "f:sfb")
    for o in outs:
        np.testing.assert_allclose(o, oracle, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(oracle).max()))
    per_node = execute.node_bytes(ledger, "f:sfb", p)
    assert per_node == [2 * k * (p - 1) * (m + n) * 4] * p


@settings(max_examples=25)
@given(p=st.integers(1, 6), k=st.integers(1, 8), m=st.integers(1, 40), n=st.integers(1, 40), data=st.data())
def test_ps_aggregate_equals_dense_and_ledger_matches_rule(p, k, m, n, data):
    s = data.draw(st.integers(1, p))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    deltas, xs, grads = execute.worker_gradients(fc("f", m, n, bias=False), p, k, rng)
    oracle = execute.dense_oracle(deltas, xs)
    ledger = Ledger()
    for o in execute.aggregate_ps(grads, s, ledger, "f:ps"):
        np.testing.assert_allclose(o, oracle, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(oracle).max()))
    per_node = execute.node_bytes(ledger, "f:ps", p)
    assert sum(per_node) == execute.expected_ps_bytes(m, n, p, s)
    if p > 1 and (m * n) % s == 0:
        # equal shards: each server node moves exactly 2MN(P1+P2-2)/P2 floats, others 2MN
        assert per_node[:s] == [model.ps_floats_per_node(m, n, p, s) * 4] * s
        assert per_node[s:] == [2 * m * n * 4] * (p - s)


def test_execute_default_point_schemes_and_bytes():
    # P = 16, K = 32: conv1 -> PS (not fc); fc6 512x1024: SFB 2*32*15*1536 = 1_474_560 <= PS
    # 2*524_288*30/16 = 1_966_080 floats -> SFB; fc8 10x512: SFB 501_120 > PS 19_200 -> PS.
    r = TECHNIQUE.evaluate(scenario("poseidon", None, None, fidelity="execute", nodes=16, seed=3))
    rows = {row["layer"]: row for row in r.artifacts["layers"]}
    assert [rows[n]["scheme"] for n in ("conv1", "fc6", "fc8")] == ["ps", "sfb", "ps"]
    assert rows["fc6"]["sfb_bytes_per_node"] == 1_474_560 * 4
    assert rows["fc6"]["ps_bytes_per_server_node"] == 1_966_080 * 4
    assert rows["fc8"]["ps_bytes_per_server_node"] == 19_200 * 4
    # bytes on the wire for the chosen schemes: conv1 PS 2*15*864*4 = 103_680; fc6 SFB
    # 16*15*32*1536*4 = 47_185_920; fc8 PS 2*15*5120*4 = 614_400 -> 47_904_000 B
    assert r["bytes_moved"] == 47_904_000
    assert r["bytes_sent"] == r["bytes_received"] == r["bytes_moved"]
    assert r["max_rel_error"] < 1e-4
    assert len(r.metrics["aggregate_time"].samples) == 3  # default repeats, every sample stored
    assert r.artifacts["setup"]["threads"] == 1  # BLAS/OpenMP pinned while timing


def test_execute_variants_pick_their_schemes():
    base = dict(nodes=4, batch_per_node=8)
    ps = TECHNIQUE.evaluate(scenario("ps", None, None, fidelity="execute", **base))
    sfb = TECHNIQUE.evaluate(scenario("sfb", None, None, fidelity="execute", **base))
    hy = TECHNIQUE.evaluate(scenario("poseidon", None, None, fidelity="execute", **base))
    assert ps["bytes_moved"] == ps["bytes_ps"] and ps["sfb_layers"] == 0
    assert sfb["bytes_moved"] == sfb["bytes_sfb"] and sfb["sfb_layers"] == 2
    assert hy["bytes_moved"] <= min(hy["bytes_ps"], hy["bytes_sfb"])


def test_execute_is_deterministic_for_a_seed():
    a = TECHNIQUE.evaluate(scenario("poseidon", None, None, fidelity="execute", nodes=3, batch_per_node=4, seed=7))
    b = TECHNIQUE.evaluate(scenario("poseidon", None, None, fidelity="execute", nodes=3, batch_per_node=4, seed=7))
    assert a["max_rel_error"] == b["max_rel_error"] and a["bytes_moved"] == b["bytes_moved"]


# ----------------------------------------------------------------------------- declared properties


def test_declared_properties_hold_on_a_toml_cluster(tmp_path):
    prof, _ = cluster(tmp_path, nodes=16)
    for v in TECHNIQUE.variant_names:
        sc = scenario(v, prof, small_table(), nodes=16)
        for prop in TECHNIQUE.properties:
            prop.check(TECHNIQUE, sc)


# ----------------------------------------------------------------------------- claims


def test_claims_metadata():
    ids = {c.id: c for c in CLAIMS}
    verified = {i for i, c in ids.items() if c.verified}
    assert verified == {"vgg19-22k-16n-10gbe", "inception-v3-32n", "inception-v3-32n-tf", "inception-v3-32n-vs-tf"}
    assert ids["vgg19-22k-16n-10gbe"].expect.paper == 15.5 and ids["vgg19-22k-16n-10gbe"].expect.rel == 0.2
    assert ids["inception-v3-32n"].expect.paper == 31.5
    assert ids["inception-v3-32n-tf"].expect.paper == 20.0
    # "15.5x on 16 nodes" judged on the gain: 14.5 +- 2.9 -> [12.6, 18.4], which contains ideal
    # scaling (16): the claim is not discriminating whatever our model says
    lo, hi = ids["vgg19-22k-16n-10gbe"].expect.band()
    assert (lo, hi) == pytest.approx((12.6, 18.4))
    ideal = [n.value for n in ids["vgg19-22k-16n-10gbe"].nulls if n.variants is None]
    assert ideal == [16.0] and lo <= 16.0 <= hi
    # "50% improvement" -> gain 0.5 +- 0.1: [1.4, 1.6]; no gain (1.0) is a null outside it
    assert ids["inception-v3-32n-vs-tf"].expect.band() == pytest.approx((1.4, 1.6))
    assert all(c.nulls for c in CLAIMS)
    for c in CLAIMS:
        for spec in c.specs().values():
            assert spec.params["batch_per_node"] == 32


def test_claims_evaluate_and_variants_order():
    """Every claim's cases resolve against the shipped profiles and workloads and give finite
    values; at each claim point overlap never hurts (wfbp >= ps) and Poseidon moves no more bytes
    than PS (structural, not the paper's numbers)."""
    for c in CLAIMS:
        results = {lab: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, spec).scenario) for lab, spec in c.specs().items()}
        assert math.isfinite(float(c.value(results)))
        for spec in c.specs().values():
            got = {v: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, dataclasses.replace(spec, variant=v)).scenario)
                   for v in ("ps", "wfbp", "poseidon")}
            assert got["wfbp"]["speedup"] >= got["ps"]["speedup"]
            assert got["poseidon"]["bytes_per_node"] <= got["ps"]["bytes_per_node"]


def test_default_sweep_point_resolves():
    # the sweep: defaults + nodes 1..32 + bandwidth overrides on the default profile
    for n in (1, 32):
        for bw in ("2 Gbit/s", "40 Gbit/s"):
            case = resolve_case(TECHNIQUE, ScenarioSpec(variant="poseidon", params={"nodes": n},
                                                        overrides={"network.-1.bandwidth": bw}))
            r = TECHNIQUE.evaluate(case.scenario)
            assert r["speedup"] > 0 and (n > 1 or r["speedup"] == 1.0)


# ----------------------------------------------------------------------------- conformance kit


def test_conformance_kit():
    from suite.testing import check_technique

    rep = check_technique(TECHNIQUE, max_examples=5)
    assert "properties" in rep.passed and "family:alpha-beta-bound" in rep.passed
    assert "family:bytes-conserved" in rep.passed


def test_ps_layer_time_fewer_servers_hand_calculation():
    # P = 4 workers, S = 2 colocated servers, 1e6 params = 4e6 B: the busiest NIC (a server) moves
    # max(4e6, (4-1)*4e6/2) = 6e6 B per phase: T = 2 (1e-5 + 6e6/1.25e9) = 9.62e-3 s;
    # a server+worker node moves 2*1e6*(4+2-2)/2 floats = 4e6 floats = 1.6e7 B
    lc = model.layer_comm(conv("c", 1_000_000, 0, 0), "ps", 4, 2, 32, 1e-5, 1 / (10 * GBIT), 1e13, 1e12, 1.0)
    assert lc.time == pytest.approx(9.62e-3, rel=1e-12)
    assert lc.bytes == pytest.approx(1.6e7, rel=1e-12)


def test_model_bytes_equal_execute_ledger_bytes():
    """The model's per-node bytes for a layer equal what the execute fidelity's ledger counts for
    the same layer shape (fc6 of EXEC_LAYERS, no bias) at P = S = 8, K = 16."""
    r = TECHNIQUE.evaluate(scenario("poseidon", None, None, fidelity="execute", nodes=8, batch_per_node=16))
    row = {x["layer"]: x for x in r.artifacts["layers"]}["fc6"]
    layer = execute.EXEC_LAYERS[1]
    for scheme, key in (("ps", "ps_bytes_per_server_node"), ("sfb", "sfb_bytes_per_node")):
        lc = model.layer_comm(layer, scheme, 8, 8, 16, 1e-5, 1e-9, 1e13, 1e12, 1.0)
        assert lc.bytes == row[key]


def test_one_node_of_8_devices_prices_like_8_single_gpu_machines_on_the_same_switch(tmp_path):
    """A node profile with a network level: poseidon's workers are its devices, behind its switch,
    exactly as 8 single-GPU machines behind a switch of the same bandwidth and latency (the
    category sweep puts poseidon on a one-node profile's 8 GPUs this way); more workers than
    devices is a Skip naming the limit."""
    prof, _dev = cluster(tmp_path, nodes=8, bandwidth="100 Gbit/s", latency="5 us")
    (tmp_path / "node.toml").write_text("""
[profile]
name = "test-node"
kind = "node"
[node]
device = "test-gpu"
devices_per_node = 8
[[network]]
name = "switch"
topology = "switch"
size = 8
bandwidth = "100 Gbit/s"
latency = "5 us"
""")
    node = ProfileLibrary([tmp_path]).get("test-node")
    wl = small_table()
    for v in ("ps", "poseidon"):
        on_node = TECHNIQUE.evaluate(scenario(v, node, wl, nodes=8))
        on_cluster = TECHNIQUE.evaluate(scenario(v, prof, wl, nodes=8))
        assert on_node["iteration_time"] == pytest.approx(on_cluster["iteration_time"], rel=1e-9)
    with pytest.raises(Skip, match="up to its 8 devices"):
        TECHNIQUE.evaluate(scenario("ps", node, wl, nodes=9))


def _speedup(variant: str, workload: str, gbit: float) -> float:
    from suite.testing import resolve_case

    spec = ScenarioSpec(variant=variant, profile="titanx-cluster-40gbe", workload=workload,
                        params={"nodes": 32, "batch_per_node": 32}, overrides={"network.-1.bandwidth": f"{gbit} Gbit/s"})
    return TECHNIQUE.evaluate(resolve_case(TECHNIQUE, spec).scenario)["speedup"]


def test_the_published_flip_bandwidths_hold_on_the_model():
    """docs/techniques/poseidon.md and the scoreboard's "flips at" state where each verdict resting on
    the 40 GbE assumption changes (bisected on the model, written by hand in technique.py's _FLIPS):
    the model's value on either side of each, against the band edge the note names, so a change of
    the model or the profile that moves a flip fails here instead of leaving the page stale."""
    from suite_poseidon.technique import _FLIPS

    # the flips this test brackets are the ones the page prints: an edit of _FLIPS fails here until the
    # probes below are moved with it
    assert {c: at for c, (at, _how) in _FLIPS.items()} == {
        "inception-v3-32n": "7.62 Gbit/s", "inception-v3-32n-tf": "23.25 Gbit/s",
        "inception-v3-32n-vs-tf": "19.5 Gbit/s", "tf-vgg19-22k-32n-slower-than-1": "0.64 Gbit/s"}
    sp = _speedup
    # each band edge as the claim declares it (a claim's tolerance edited fails here, not only its page)
    band = {c.id: c.expect.band() for c in TECHNIQUE.claims if c.id in _FLIPS}
    want = {"inception-v3-32n": (25.4, 37.6), "inception-v3-32n-tf": (16.2, 23.8), "inception-v3-32n-vs-tf": (1.4, 1.6),
            "tf-vgg19-22k-32n-slower-than-1": (-math.inf, 1.0)}  # 1 + (x - 1)(1 -+ 20%) of a gain; AtMost(1)
    assert band.keys() == want.keys() and all(band[k] == pytest.approx(want[k], rel=1e-12) for k in want)
    # inception-v3-32n: Poseidon's speed-up leaves the band (25.4x) below 7.62 Gbit/s
    lo = band["inception-v3-32n"][0]
    assert sp("poseidon", "inception-v3", 7.5) < lo < sp("poseidon", "inception-v3", 7.75)
    # inception-v3-32n-tf: ps inside 16.2x-23.8x between 7.28 and 23.25 Gbit/s
    lo, hi = band["inception-v3-32n-tf"]
    assert sp("ps", "inception-v3", 7.2) < lo < sp("ps", "inception-v3", 7.35)
    assert sp("ps", "inception-v3", 23.2) < hi < sp("ps", "inception-v3", 23.3)
    # inception-v3-32n-vs-tf: Poseidon / ps inside 1.4-1.6 between 12.3 and 19.5, above it between
    # 9.09 and 12.3, inside between 5.02 and 9.08, below under 5.02
    lo, hi = band["inception-v3-32n-vs-tf"]
    ratio = {g: sp("poseidon", "inception-v3", g) / sp("ps", "inception-v3", g) for g in (4.98, 5.06, 9.06, 9.11, 12.2, 12.4, 19.4, 19.6)}
    assert ratio[4.98] < lo < ratio[5.06] < hi and ratio[9.06] < hi < ratio[9.11]
    assert ratio[12.2] > hi > ratio[12.4] > lo and ratio[19.4] > lo > ratio[19.6]
    # tf-vgg19-22k-32n-slower-than-1: ps below 1x only under 0.64 Gbit/s
    hi = band["tf-vgg19-22k-32n-slower-than-1"][1]
    assert sp("ps", "vgg19-22k", 0.62) < hi < sp("ps", "vgg19-22k", 0.66)


@pytest.mark.parametrize("claim_id, before, past", [
    # (Gbit/s, verdict) just above each declared flip (7.62, 23.25, 19.5, 0.64 Gbit/s), then just below it
    ("inception-v3-32n", (7.7, "not discriminating"), (7.5, "not reproduced")),  # Poseidon under 25.4x below 7.62
    ("inception-v3-32n-tf", (23.5, "not reproduced"), (23.0, "reproduced")),  # ps into [16.2, 23.8], ideal 32x out
    ("inception-v3-32n-vs-tf", (20.0, "not reproduced"), (19.0, "not discriminating")),  # plain WFBP = ours
    ("tf-vgg19-22k-32n-slower-than-1", (0.65, "not reproduced"), (0.63, "reproduced")),  # ps below 1x, ideal 32 out
])
def test_each_bandwidth_flip_leads_where_its_assumption_says(claim_id, before, past):
    """Audit 14 #5: each declared inter-node bandwidth flip bracketed through the scoreboard's judge (every
    case's last network level set to the Gbit/s given, x 1e9 / 8 B/s): the verdict just above the flip
    differs from the one just below it, and the one below is the assumption's flips_to; at 19 Gbit/s the
    vs-TF ratio lands in [1.4, 1.6] with plain WFBP beside it, so that flip leads to "not discriminating"."""
    from claim_verdict import verdict_at

    c = next(c for c in TECHNIQUE.claims if c.id == claim_id)
    flip = float(c.assumptions[0].flip_at.split()[0])
    assert past[0] < flip < before[0]
    for gbit, verdict in (before, past):
        slow = lambda sc, g=gbit: dataclasses.replace(  # noqa: E731
            sc, profile=sc.profile.with_overrides({"network.-1.bandwidth": g * 1e9 / 8}))
        assert verdict_at(TECHNIQUE, c, scenario_edit=slow)[0] == verdict
    assert c.assumptions[0].flips_to == past[1] != before[1]


def test_default_nodes_still_answers_with_a_deprecation_warning(shared_context):
    """0.3.11's public default_nodes(profile) is nodes_of({}, profile) now: kept one minor version
    (review14). k80-cluster-10gbe has 8 nodes, under the paper's 16; titanx-cluster-10gbe's 32 give 16."""
    from suite_poseidon.model import default_nodes

    with pytest.warns(DeprecationWarning, match="removed in 0.4.0"):
        assert default_nodes(shared_context.profile("k80-cluster-10gbe")) == 8
    with pytest.warns(DeprecationWarning, match="removed in 0.4.0"):
        assert default_nodes(shared_context.profile("titanx-cluster-10gbe")) == 16
