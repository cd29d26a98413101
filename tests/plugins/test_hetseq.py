"""Tests of the HetSeq plugin: the README's arithmetic, the calibration, the step model by hand,
memory caps and batch splits by hand, the execute fidelity against a full-batch oracle written
here, properties (hypothesis), claims and the conformance kit."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite import ScenarioSpec, Skip
from suite.collectives.dataparallel import Clock, FlatModel, Workers, load_problem
from suite.errors import ParameterError
from suite.hardware import ProfileLibrary
from suite.testing import resolve_case
from suite_hetseq import execute, model
from suite_hetseq.technique import CLAIMS, TECHNIQUE, ideal_node_speedup
from session_context import session_context

BERT = "bert-base@seq128"


def scen(variant="hetseq", profile="hetseq-readme", fidelity="model", overrides=None, workload=None, **params):
    """The resolved scenario; *workload* None: BERT for the model, the fidelity's default otherwise."""
    spec = ScenarioSpec(variant=variant, profile=profile, workload=workload or (BERT if fidelity == "model" else None),
                        fidelity=fidelity, params=params, overrides=overrides or {})
    return resolve_case(TECHNIQUE, spec).scenario


def run(**kw):
    return TECHNIQUE.evaluate(scen(**kw))


# ----------------------------------------------------------------------------- the README's arithmetic


def test_readme_step_counts_are_ceil_of_samples_over_batch():
    # the README's steps: 267,139 x 128 = 34,193,792 samples; /256 = 133,569.5 -> 133,570;
    # /512 = 66,784.75 -> 66,785; /1024 = 33,392.4 -> 33,393
    assert model.README_SAMPLES == 34_193_792
    for nodes, (gpus, batch, steps, *_rest) in model.README_ROWS.items():
        assert gpus == 4 * nodes and batch == 32 * gpus
        assert model.fixed_epoch_steps(model.README_SAMPLES, batch) == steps


def test_readme_columns_and_its_inconsistency():
    rows = model.README_ROWS
    for nodes, (gpus, _b, steps, sps, days, expansion, speedup) in rows.items():
        assert speedup == pytest.approx(7.19 / days, abs=0.006)  # speed-up = 7.19 d / training time
        assert expansion == pytest.approx(speedup / (gpus / 4), abs=0.006)
    # steps x s/step: 267,139 x 2.60 s = 8.04 d, not the listed 7.19 d; the 4-node row 2.16 d, not 2.23 d
    assert 267_139 * 2.60 / 86_400 == pytest.approx(8.039, abs=1e-3)
    assert 66_785 * 2.794 / 86_400 == pytest.approx(2.160, abs=1e-3)


def _readme_gradient_and_intra_node_all_reduce():
    """(B, s): the 437.9 MB fp32 gradient of BERT-base and its 4-GPU PCIe ring all-reduce on one
    node of hetseq-readme (3 steps each way at 5 us + m/4 / 15.75 GB/s, reduction of 3/4 m at
    3 B per B of the TITAN Xp's 547.7 GB/s)."""
    m = 4 * 109_482_240
    return m, 2 * 3 * 5e-6 + 2 * 3 / 4 * m / 15.75e9 + 3 / 4 * m * 3 / 547.7e9


def test_calibration_recovers_the_profile_figures_and_rows_1_2():
    prof, wl = session_context().profile("hetseq-readme"), session_context().workload(BERT)
    eff, bw = model.calibrate_readme(wl, prof)
    # the figures written into the profile and the model, to their printed digits
    assert eff == pytest.approx(model.DEFAULT_EFFICIENCY, rel=1e-4)
    assert bw == pytest.approx(prof.network[-1].bandwidth, rel=1e-4) and prof.network[-1].bandwidth == 5.843e9
    # hand check of the efficiency: 32 x 67.045 GFLOP on a 12.15 TFLOP/s TITAN Xp in
    # 2.60 s minus the 4-GPU PCIe ring all-reduce of the 437.9 MB fp32 gradient
    m, t_ar = _readme_gradient_and_intra_node_all_reduce()
    assert eff == pytest.approx(32 * 67.0453e9 / (12.15e12 * (2.60 - t_ar)), rel=1e-4)
    # hand check of the bandwidth, from row 2 alone: 32 sequences per GPU as in row 1, so the same
    # compute 2.60 s - t_ar; the 8-rank ring's 2 x 7 steps are each bound by the NIC hop
    # (20 us + m/8 / bw; the PCIe hop's 5 us + m/8 / 15.75 GB/s = 3.5 ms is faster), plus the
    # reduction of 7/8 m: 2.69 = (2.60 - t_ar) + 14 (20 us + m / (8 bw)) + 7/8 m x 3 / 547.7 GB/s
    bw_hand = 14 / 8 * m / (2.69 - (2.60 - t_ar) - 14 * 20e-6 - 7 / 8 * m * 3 / 547.7e9)
    assert bw == pytest.approx(bw_hand, rel=1e-6) and bw_hand == pytest.approx(5.843e9, rel=1e-4)
    assert 5e-6 + m / 8 / 15.75e9 < 20e-6 + m / 8 / bw_hand  # the NIC bounds the ring, as assumed
    # the judged rows 3-4 play no part: rows 1-2 alone give the same two figures
    assert model.calibrate_readme(wl, prof, rows={k: model.README_ROWS[k] for k in (1, 2)}) == (eff, bw)
    assert run(nodes=1)["iteration_time"] == pytest.approx(2.60, rel=1e-4)
    assert run(nodes=2)["iteration_time"] == pytest.approx(2.69, rel=1e-4)


def test_speedup_is_over_one_gpu_and_node_speedup_over_one_node():
    # speedup (the data-parallel vocabulary's): throughput over one TITAN Xp's, whose step is
    # compute only: 32 sequences in 2.60 s - t_ar (the calibration). 4 GPUs at 2.60 s per step
    # (row 1) and 8 at 2.69 s (row 2), each GPU doing 32 sequences per step:
    _m, t_ar = _readme_gradient_and_intra_node_all_reduce()
    one_gpu = 2.60 - t_ar
    r1, r2, r4, r8 = (run(nodes=n) for n in (1, 2, 4, 8))
    assert r1["speedup"] == pytest.approx(4 * one_gpu / 2.60, rel=1e-3)  # 3.933
    assert r2["speedup"] == pytest.approx(8 * one_gpu / 2.69, rel=1e-3)  # 7.603
    # 4 and 8 nodes by hand, as row 2: the same compute, then the ring over N = 16 and 32 ranks, its
    # 2 (N - 1) steps each bound by the NIC hop (20 us + m/N / 5.843 GB/s; the PCIe hop's 5 us + m/N /
    # 15.75 GB/s is faster at every N), plus the reduction of (N - 1)/N m at 3 B per B of 547.7 GB/s
    m, _t = _readme_gradient_and_intra_node_all_reduce()
    step = {n: one_gpu + 2 * (4 * n - 1) * (20e-6 + m / (4 * n) / 5.843e9) + (4 * n - 1) / (4 * n) * m * 3 / 547.7e9
            for n in (4, 8)}
    assert (r4["iteration_time"], r8["iteration_time"]) == pytest.approx((step[4], step[8]), rel=1e-4)
    assert r4["speedup"] == pytest.approx(16 * one_gpu / step[4], rel=1e-4)  # 15.150: under 16 GPUs
    assert r8["speedup"] == pytest.approx(32 * one_gpu / step[8], rel=1e-4)  # 30.240: under 32
    # node_speedup (the README's "speedup", the claims'): fixed-epoch time of 1 node over n nodes'
    assert r1["node_speedup"] == 1.0
    # 2 nodes: 133,570 steps of 2.69 s against 267,139 of 2.60 s (row 1)
    assert r2["node_speedup"] == pytest.approx(267_139 * 2.60 / (133_570 * 2.69), rel=1e-3)  # 1.933
    # 4 and 8 nodes: 66,785 and 33,393 steps (the README's counts) of the steps above
    assert r4["node_speedup"] == pytest.approx(267_139 * 2.60 / (66_785 * step[4]), rel=1e-4)  # 3.852
    assert r8["node_speedup"] == pytest.approx(267_139 * 2.60 / (33_393 * step[8]), rel=1e-4)  # 7.689
    assert r4["expansion"] == pytest.approx(r4["node_speedup"] / 4, rel=1e-12)


# ----------------------------------------------------------------------------- step model by hand


def _toy_cluster(tmp_path):
    (tmp_path / "fast.toml").write_text("""
[profile]
name = "toy-fast"
kind = "device"
[device]
type = "gpu"
memory = "16 GB"
memory_bandwidth = "1000 GB/s"
peak_flops = { fp32 = "10 TFLOP/s" }
""")
    (tmp_path / "slow.toml").write_text("""
[profile]
name = "toy-slow"
kind = "device"
[device]
type = "gpu"
memory = "8 GB"
memory_bandwidth = "500 GB/s"
peak_flops = { fp32 = "5 TFLOP/s" }
""")
    (tmp_path / "c.toml").write_text("""
nodes = 2
[profile]
name = "toy-mix"
kind = "cluster"
[node]
device = "toy-fast"
devices_per_node = 2
[[network]]
name = "intra"
topology = "switch"
size = 2
bandwidth = "10 GB/s"
latency = "1 us"
[[network]]
name = "inter"
topology = "switch"
size = 2
bandwidth = "1 GB/s"
latency = "10 us"
[ext.mix]
groups = [{ device = "toy-fast", count = 2 }, { device = "toy-slow", count = 2 }]
""")
    return ProfileLibrary([tmp_path]).get("toy-mix")


def test_step_by_hand_on_a_two_type_cluster(tmp_path, monkeypatch):
    prof = _toy_cluster(tmp_path)
    lib = ProfileLibrary([tmp_path])
    import suite.hardware as hw

    monkeypatch.setattr(hw, "library", lambda *a, **k: lib)
    wl = session_context().workload(BERT)
    F = wl.fwd_flops + wl.bwd_flops  # 67.045 GFLOP per sequence
    eff = 0.5
    t_fast, t_slow = F / (0.5 * 10e12), F / (0.5 * 5e12)
    m = 4.0 * wl.params
    # ring over 4 ranks on 2 nodes: 6 steps, each bound by the 1 GB/s inter-node hop (one flow per
    # NIC), plus the reduction of 3/4 m at 3 B per B of the first device's 1000 GB/s
    t_ar = 2 * 3 * 10e-6 + 2 * 3 / 4 * m / 1e9 + 3 / 4 * m * 3 / 1000e9
    # hetseq, B = 60: shares 2:2:1:1 of the speeds -> 20, 20, 10, 10: every rank busy 20 t_fast
    s = model.step(wl, prof, 4, 60, "hetseq", eff)
    assert s.batches.tolist() == [20, 20, 10, 10]
    assert s.time == pytest.approx(20 * t_fast + t_ar, rel=1e-9)
    # DDP, equal 15 each: the slow ranks take 15 t_slow = 30 t_fast... 1.5 x longer compute
    d = model.step(wl, prof, 4, 60, "ddp-equal-batch", eff)
    assert d.batches.tolist() == [15] * 4
    assert d.time == pytest.approx(15 * t_slow + t_ar, rel=1e-9)
    assert d.t_allreduce == s.t_allreduce
    # one node only (the two fast ranks): intra-node ring, 2 steps at 10 GB/s
    one = model.step(wl, prof, 2, 40, "hetseq", eff)
    assert one.t_allreduce == pytest.approx(2 * 1e-6 + m / 10e9 + 0.5 * m * 3 / 1000e9, rel=1e-9)


def test_memory_caps_by_hand():
    wl = session_context().workload(BERT)
    states = 16 * 109_482_240  # fp32 weights, grads, Adam m and v
    act = 2 * 52.0044e6  # Korthikanti eq. 1 at 2 B per value, scaled to fp32
    assert model.memory_bytes(wl, 10) == pytest.approx(states + 10 * act, rel=1e-5)
    devs = model.rank_devices(session_context().profile("hetseq-v100-titanxp-4n"), 16)
    caps = model.batch_caps(wl, devs)
    assert caps[0] == math.floor((16e9 - states) / act) == 136  # V100 16 GB
    assert caps[-1] == math.floor((12e9 - states) / act) == 98  # TITAN Xp 12 GB
    with pytest.raises(Skip, match="does not fit"):
        run(variant="hetseq", nodes=1, global_batch=4 * 137)
    with pytest.raises(Skip, match="fits at most 98"):
        run(variant="ddp-equal-batch", profile="hetseq-readme", nodes=1, global_batch=4 * 99)


def test_split_on_the_v100_titanxp_mix_by_hand():
    # per-rank ideal share of 512: 512 x 15.7 / (8 x 15.7 + 8 x 12.15) = 36.09 (V100), 27.91 (TITAN Xp)
    r = run(profile="hetseq-v100-titanxp-4n", nodes=4)
    assert r.artifacts["batches"] == [36] * 8 + [28] * 8
    d = run(variant="ddp-equal-batch", profile="hetseq-v100-titanxp-4n", nodes=4)
    assert d.artifacts["batches"] == [32] * 16
    assert d["imbalance"] == pytest.approx(15.7 / 12.15, rel=1e-12)  # the V100s wait for the TITAN Xps
    assert r["imbalance"] == pytest.approx((28 / 12.15) / (36 / 15.7), rel=1e-12)  # within one sample
    assert r["throughput"] > d["throughput"]


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.2, 5.0), min_size=1, max_size=12), st.integers(1, 400))
def test_hetseq_split_equal_within_one_sample(times, total):
    b = model.split_batch("hetseq", total, times)
    t = np.array(times)
    assert b.sum() == total and (b >= 0).all()
    busy = b * t
    # largest remainders: every rank's compute within one sample of the slowest rank's time
    assert busy.max() - busy.min() <= t.max() * (1 + 1e-9) + 1e-12
    e = model.split_batch("ddp-equal-batch", total, times)
    assert e.sum() == total and e.max() - e.min() <= 1


# ----------------------------------------------------------------------------- execute vs the oracle


def _oracle_grad(theta, X, y, d, k, l2=0.0):
    """Full-batch gradient of softmax regression, one sample at a time (the test's own oracle)."""
    W, b = theta[: d * k].reshape(d, k), theta[d * k:]
    gW, gb = np.zeros((d, k)), np.zeros(k)
    for x, c in zip(X, y):
        z = x @ W + b
        p = np.exp(z - z.max())
        p /= p.sum()
        p[c] -= 1
        gW += np.outer(x, p)
        gb += p
    n = len(y)
    return np.concatenate([(gW / n + l2 * W).ravel(), gb / n])


@functools.lru_cache(maxsize=None)
def _problem(K):
    return load_problem(K, "iid", seed=K)


@settings(max_examples=10, deadline=None)
@given(st.lists(st.integers(0, 9), min_size=1, max_size=6).filter(lambda b: sum(b) > 0), st.integers(1, 3),
       st.integers(0, 1000))
def test_any_split_with_empty_ranks_gives_the_single_process_step(batches, micro, seed):
    p = _problem(len(batches))
    m = FlatModel(p.d, p.classes)
    w = Workers(p, m, batches, Clock(np.ones(len(batches)), 0.0), seed)
    theta = np.random.default_rng(seed).normal(size=m.size) * 0.05
    w.params = [theta.copy() for _ in batches]
    idx = [w.minibatch(i) for i in range(w.K)]
    union = np.concatenate(idx)
    want = theta - 0.3 * _oracle_grad(theta, p.X_train[union], p.y_train[union], m.d, m.k)
    w.sgd_step(0.3, idx=idx, micro=micro)
    assert w.identical() and w.allreduces == 1
    assert np.max(np.abs(w.params[0] - want)) <= 1e-12
    # the execute module's dense oracle is the same full-batch gradient
    assert np.allclose(execute.union_gradient(m, theta, p.X_train[union], p.y_train[union]),
                       _oracle_grad(theta, p.X_train[union], p.y_train[union], m.d, m.k), atol=1e-13)


def test_execute_hetseq_with_dummy_ranks_matches_the_oracle_and_ddp_is_biased():
    # ranks 0-7 V100, 8-9 TITAN Xp, 10-11 dummy batches
    r = run(fidelity="execute", profile="hetseq-v100-titanxp-4n", exec_ranks=12, dummy_ranks=2, update_freq=3,
            steps=8)
    assert r["oracle_error"] <= 1e-10 and r["allreduce_error"] <= 1e-12
    assert r["allreduces_per_step"] == 1.0 and r["dummy_ranks"] == 2
    b = r.artifacts["batches"]
    assert b[-2:] == [0, 0] and sum(b) == 32 * 12 and b[0] > b[8] > 0  # V100 ranks hold more than TITAN Xp ones
    # DDP's mean of per-rank means on this split: 2 empty ranks count as zero gradients and the
    # V100/TITAN Xp batches differ, so it is off by at least the 2/12 shrink of the mean
    assert r["mean_of_means_bias"] > 0.1
    assert r["bytes_sent"] == r["bytes_received"] > 0
    e = run(variant="ddp-equal-batch", fidelity="execute", profile="hetseq-v100-titanxp-4n", exec_ranks=12, steps=8)
    assert e["oracle_error"] <= 1e-10 and e["mean_of_means_bias"] <= 1e-12  # equal batches: unbiased
    assert r["final_loss"] < 1.0 and e["final_loss"] < 1.0


def test_execute_bad_input_is_one_line():
    with pytest.raises(ParameterError, match=r"parameter 'dummy_ranks': expected fewer than the 4 ranks, got 4"):
        run(fidelity="execute", profile=None, exec_ranks=4, dummy_ranks=4)
    with pytest.raises(Skip, match="nodes=9 but profile 'hetseq-readme' has 8"):
        run(nodes=9)
    with pytest.raises(ParameterError, match=r"17 ranks but its \[ext.mix\] groups hold 16"):
        model.rank_devices(session_context().profile("hetseq-v100-titanxp-4n"), 17)


# ----------------------------------------------------------------------------- network levels


def test_step_time_follows_the_levels_the_all_reduce_crosses():
    base = run(nodes=4)["iteration_time"]
    slower = {"network.0.bandwidth": "1.575 GB/s"}
    assert run(nodes=4, overrides=slower)["iteration_time"] > base  # PCIe / 10 becomes the ring's bound
    assert run(nodes=4, overrides={"network.1.bandwidth": "0.5843 GB/s"})["iteration_time"] > base
    assert run(nodes=4, overrides={"network.1.latency": "200 us"})["iteration_time"] > base
    # a 50 us PCIe hop is still faster than the 20 us + m/16/5.843 GB/s NIC hop: unchanged (ring bound)
    assert run(nodes=4, overrides={"network.0.latency": "50 us"})["iteration_time"] == base
    # one node never crosses the inter-node level
    one = run(nodes=1)
    assert run(nodes=1, overrides={"network.1.bandwidth": "1 Gbit/s"})["iteration_time"] == one["iteration_time"]


def test_readme_all_reduce_is_the_nic_bound_ring_by_hand():
    # docs: one ring over P = 4n ranks, each of its 2(P-1) steps bound by the NIC hop, plus the
    # reduction of (P-1)/P m at 3 B per B of the TITAN Xp's 547.7 GB/s: nearly flat in n
    m = 4 * 109_482_240
    for n, want in ((2, 0.1335), (4, 0.1434), (8, 0.1488)):
        P = 4 * n
        t = 2 * (P - 1) * (20e-6 + m / (P * 5.843e9)) + (P - 1) / P * m * 3 / 547.7e9
        got = run(nodes=n)["comm_time"]
        assert got == pytest.approx(t, rel=1e-9) and got == pytest.approx(want, abs=5e-5)


def test_declared_properties_hold_on_the_shipped_profiles():
    for prof in ("hetseq-readme", "hetseq-v100-titanxp-4n"):
        for v in TECHNIQUE.variant_names:
            for nodes in (1, 2, 4):
                sc = scen(v, prof, nodes=nodes)
                for prop in TECHNIQUE.properties:
                    if prop.name != "union-gradient":
                        prop.check(TECHNIQUE, sc)


# ----------------------------------------------------------------------------- claims


def test_claims_metadata():
    ids = {c.id: c for c in CLAIMS}
    assert set(ids) == {"readme-speedup-4n", "readme-speedup-8n", "heterogeneous-scaling"}
    assert all(c.verified for c in CLAIMS)
    assert ids["readme-speedup-4n"].expect.band() == pytest.approx((2.776, 3.664))
    assert ids["readme-speedup-8n"].expect.band() == pytest.approx((4.952, 6.928))
    for cid, n in (("readme-speedup-4n", 4), ("readme-speedup-8n", 8)):  # computed, no longer typed in
        (null,) = ids[cid].nulls
        assert null.value is None and null.derive is ideal_node_speedup
        assert null.label == f"ideal scaling of our 1-node time ({n} nodes)"
    assert all(c.nulls for c in CLAIMS)


def test_claims_evaluate_and_their_verdicts_are_as_documented():
    vals = {}
    for c in CLAIMS:
        res = {lab: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario) for lab, s in c.specs().items()}
        vals[c.id] = float(c.value(res))
    # docs/techniques/hetseq.md: 3.85x and 7.69x, above the bands (not reproduced), below ideal
    assert 3.664 < vals["readme-speedup-4n"] < 4.0
    assert 6.928 < vals["readme-speedup-8n"] < 8.0
    # the mix gains, and so does DDP on it (not discriminating)
    assert vals["heterogeneous-scaling"] >= 1.02
    c = next(c for c in CLAIMS if c.id == "heterogeneous-scaling")
    sub = c.nulls[0].substitute(c.specs())
    res = {lab: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario) for lab, s in sub.items()}
    assert 1.02 <= c.value(res) < vals["heterogeneous-scaling"]


def test_speedup_8n_is_setup_unknown_and_flips_where_declared():
    """readme-speedup-8n rests on the README's unnamed fabric (docs/verdicts.md: "setup unknown" names
    the assumption and its flip): at 8 nodes, a per-node link at or below 1.91 GB/s (a fabric tapered
    from the 5.843 GB/s calibrated on 2 nodes) puts ours inside [4.952, 6.928]; 1.92 GB/s does not."""
    c = next(c for c in TECHNIQUE.claims if c.id == "readme-speedup-8n")
    assert c.reason_class == "setup unknown" and "1.92 GB/s" in c.reason
    fabric = next(a for a in c.assumptions if a.name.startswith("inter-node fabric"))
    assert (fabric.value, fabric.flip_at, fabric.sourced) == ("5.843 GB/s", "1.92 GB/s", False)
    hi = c.expect.band()[1]

    def at(bw):
        return run(nodes=8, overrides={"network.1.bandwidth": bw})["node_speedup"]

    assert at("1.91 GB/s") <= hi < at("1.92 GB/s")
    assert at("1.92 GB/s") == pytest.approx(6.9287, abs=5e-5) and at("5.843 GB/s") == pytest.approx(7.6886, abs=5e-5)


@pytest.mark.parametrize("bandwidth, verdict", [
    # --set network.1.bandwidth at 4 nodes: each side of the declared flip (about 2.94 GB/s) and of the
    # window's low end (0.70 GB/s); reader 15 #2: 2.9 GB/s and 10 GbE were reproduced, undeclared. Ours (the
    # model's, not pinned): 3.6644, 3.6638, 3.6588, 3.2336, 2.7865, 2.7738
    ("2.945 GB/s", "not reproduced"), ("2.94 GB/s", "reproduced"), ("2.9 GB/s", "reproduced"),
    ("1.25 GB/s", "reproduced"), ("0.70 GB/s", "reproduced"), ("0.69 GB/s", "not reproduced")])
def test_speedup_4n_fabric_flips_where_declared(bandwidth, verdict):
    """Reader 15 #2: the 4-node claim rests on the unnamed fabric too, not only on the README's two 1-node
    times. Band by hand 1 + 2.22 x [0.8, 1.2] = [2.776, 3.664]; the null (ideal scaling at our reference) is 4,
    outside, so ours inside is 'reproduced' from 2.94 GB/s down to 0.70 GB/s, as declared."""
    from claim_verdict import verdict_at, with_overrides

    c = next(c for c in TECHNIQUE.claims if c.id == "readme-speedup-4n")
    a = next(a for a in c.assumptions if a.name.startswith("inter-node fabric"))
    assert (a.value, a.flip_at, a.sourced) == ("5.843 GB/s", "about 2.94 GB/s", False)
    assert a.flips_to == "reproduced (to 0.70 GB/s; not reproduced below)"
    assert "decide it" not in c.reason and "0.70 and 2.94 GB/s" in c.reason
    got, value = verdict_at(TECHNIQUE, c, spec_edit=with_overrides({"network.1.bandwidth": bandwidth}))
    assert c.expect.band() == pytest.approx((2.776, 3.664), abs=1e-12)
    assert got == verdict and c.expect.check(value) == (verdict != "not reproduced")


@pytest.mark.parametrize("claim_id, algorithm, verdict", [
    # reader 15 #2: --param algorithm=tree is inside [2.776, 3.664] and [4.952, 6.928]. Ours (the model's, not
    # pinned): 4n ring 3.8521, tree 3.5906, hierarchical 3.8334; 8n ring 7.6886, tree 6.8316, auto 7.6961
    ("readme-speedup-4n", "ring", "not reproduced"), ("readme-speedup-4n", "tree", "reproduced"),
    ("readme-speedup-4n", "hierarchical", "not reproduced"),
    ("readme-speedup-8n", "ring", "not reproduced"), ("readme-speedup-8n", "tree", "reproduced"),
    ("readme-speedup-8n", "auto", "not reproduced")])
def test_readme_claims_flip_on_the_all_reduce_algorithm_as_declared(claim_id, algorithm, verdict):
    """The default ring is a modelling choice (the README names no algorithm), declared on both claims as
    flipping at tree to reproduced (the ideal-scaling nulls 4 and 8 stay outside)."""
    from claim_verdict import verdict_at, with_params

    c = next(c for c in TECHNIQUE.claims if c.id == claim_id)
    a = next(a for a in c.assumptions if a.name.startswith("all-reduce algorithm"))
    assert (a.value, a.flip_at, a.flips_to, a.sourced) == ("ring", "tree", "reproduced", False)
    got, value = verdict_at(TECHNIQUE, c, spec_edit=with_params(algorithm=algorithm))
    gain = {"readme-speedup-4n": 3.22 - 1, "readme-speedup-8n": 5.94 - 1}[claim_id]  # the gain over 1, +- 20%
    assert c.expect.band() == pytest.approx((1 + 0.8 * gain, 1 + 1.2 * gain), abs=1e-12)  # [2.776, 3.664], [4.952, 6.928]
    assert got == verdict and c.expect.check(value) == (verdict != "not reproduced")


# ----------------------------------------------------------------------------- conformance kit


def test_conformance_kit():
    from suite.testing import check_technique

    rep = check_technique(TECHNIQUE, max_examples=3)
    for name in ("properties", "family:bytes-conserved", "family:oracle-exact", "family:memory-capacity",
                 "family:alpha-beta-bound", "family:sgd-envelope"):
        assert name in rep.passed, rep.outcomes


def _at_reference(c, days):
    from claim_verdict import verdict_at, with_params

    edit = with_params(one_node_days=days) if days else None
    r = TECHNIQUE.evaluate(resolve_case(TECHNIQUE, edit(c.scenario) if edit else c.scenario).scenario)
    return verdict_at(TECHNIQUE, c, spec_edit=edit)[0], r, ideal_node_speedup({"main": r})


@pytest.mark.parametrize("claim_id, n, last, sides", [
    # (1-node reference in days, verdict, the null by hand: n x T / 8.0389 d): each side of the declared flip,
    # then of where the null enters the band; *last*: the reference the declaration says the window ends at
    ("readme-speedup-4n", 4, "7.37 d", ((7.65, "not reproduced", 3.8065), (7.64, "reproduced", 3.8015),
                                        (7.37, "reproduced", 3.6672), (7.36, "not discriminating", 3.6622),
                                        (7.19, "not discriminating", 3.5776))),
    ("readme-speedup-8n", 8, "6.97 d", ((7.25, "not reproduced", 7.2149), (7.24, "reproduced", 7.2050),
                                        (7.19, "reproduced", 7.1552), (6.97, "reproduced", 6.9363),
                                        (6.96, "not discriminating", 6.9263)))])
def test_the_one_node_time_decides_both_readme_claims(claim_id, n, last, sides):
    """Audit 14 #7 / brief 15 #2: the README's 1-node time is 7.19 d in its time column but 267,139 steps x
    2.60 s/step = 694,561 s = 8.0389 d; ours divides by the latter. The flip to the README's 7.19 d was judged
    against ideal scaling typed in as 4.0 / 8.0, which ignores the reference: computed (our 1-node time over n,
    against the same reference T) it is by hand 4 x 7.19 / 8.0389 = 3.5776 at 4 nodes, inside [2.776, 3.664]:
    not discriminating (8 x 7.19 / 8.0389 = 7.1552 at 8 nodes, outside [4.952, 6.928]). Reproduced only where
    ours is in the band and the null above it: 4n from 7.64 d (ours 3.8521 x 7.64 / 8.04 = 3.661) to 7.37 d
    (null 3.6672; 7.36 d: 3.6622); 8n from 7.24 d (7.6886 x 7.24 / 8.04 = 6.924) to 6.97 d (null 6.9363;
    6.96 d: 6.9263). Review of brief 15: both flips were declared plain 'reproduced'; they say where the
    window ends and that it is not discriminating below. The model's 1-node time is within 3e-5 of the
    README's 8.0389 d (its calibration), hence rel 1e-4 on the nulls."""
    c = next(c for c in TECHNIQUE.claims if c.id == claim_id)
    verdict, r, null = _at_reference(c, None)
    one_node_days = r["one_node_time"] / 86_400
    assert one_node_days == pytest.approx(267_139 * 2.60 / 86_400, rel=1e-4)  # 8.0389 d
    assert verdict == "not reproduced" and null == pytest.approx(n, rel=1e-12)
    for days, want, by_hand in sides:
        got, r, null = _at_reference(c, days)
        assert got == want
        assert null == pytest.approx(by_hand, rel=1e-4)
        assert c.expect.check(r["node_speedup"]) == (want != "not reproduced")
        assert c.expect.check(by_hand) == (want == "not discriminating")
    a = next(a for a in c.assumptions if a.name.startswith("1-node reference time"))
    assert (a.value, a.sourced) == ("8.04 d", False)
    assert a.flips_to == f"reproduced (to {last}; not discriminating below)"
    end = min(d for d, want, _ in sides if want == "reproduced")  # the window's last reproduced side ...
    below = max((side for side in sides if side[0] < end), key=lambda side: side[0])  # ... and the next one
    assert last == f"{end:g} d" and below[1] == "not discriminating"
    assert sides[1][0] <= float(a.flip_at.split()[1]) <= sides[0][0]  # "about 7.65 d": between the two sides
    assert ("not discriminating" in c.reason) == (claim_id == "readme-speedup-4n")
