"""suite.perf.training: the shared training model, against published counts and hand calculations."""

from __future__ import annotations

import numpy as np
import pytest

from suite.errors import ParameterError
from suite.perf import training as T
from suite.perf.network import Group, collective_time

GPT_1T = T.TransformerShape(layers=128, hidden=25600, heads=160, seq=2048, vocab=51200, positions=2048, name="1t")


@pytest.fixture(scope="module")
def selene(shared_context):
    return T.hardware_of(shared_context.profile("selene-dgx-a100"))


def test_activation_bytes_are_korthikanti_table2():
    """Korthikanti et al. 2022 Table 2, per layer: no parallelism s b h (34 + 5 a s / h); tensor
    parallel s b h (10 + 24/t + 5 a s / (h t)); tensor + sequence parallel s b h (34/t + 5 a s / (h t));
    selective recomputation drops the 5 a s / h term; full keeps 2 s b h (/ t with SP)."""
    m, s, h, a, b, t = GPT_1T, 2048, 25600, 160, 1, 8
    sbh = s * b * h
    att = 5 * a * s / h
    cases = [((1, False, 0), sbh * (34 + att)), ((t, False, 0), sbh * (10 + 24 / t + att / t)),
             ((t, True, 0), sbh * (34 / t + att / t)), ((t, True, 1), sbh * 34 / t), ((t, False, 1), sbh * (10 + 24 / t)),
             ((t, True, 2), 2 * sbh / t), ((t, False, 2), 2 * sbh)]
    for (tp, sp, rc), want in cases:
        stored, _ = T.layer_activation_bytes(m, b, tp=tp, sp=sp, recompute=rc)
        assert float(stored) == pytest.approx(want, rel=1e-12), (tp, sp, rc)


def test_flash_attention_stores_no_score_matrix():
    stored, _ = T.layer_activation_bytes(GPT_1T, 1, tp=8, sp=True, recompute=0, flash=True)
    assert float(stored) == pytest.approx(2048 * 25600 * 34 / 8, rel=1e-12)


def test_zero_bytes_per_param_are_rajbhandari_figure1():
    """ZeRO (SC'20) Fig. 1: 7.5B parameters on 64 data-parallel GPUs, K = 12: baseline 120 GB,
    P_os 31.4 GB, P_os+g 16.6 GB, P_os+g+p 1.9 GB per GPU."""
    psi, nd = 7.5e9, 64
    got = [float(T.state_bytes_per_param(z, nd, 2)) * psi / 1e9 for z in (0, 1, 2, 3)]
    assert got == pytest.approx([120.0, 31.4, 16.6, 1.9], abs=0.06)


def test_iteration_flops_is_narayanan_eq3_and_korthikanti_model_flops():
    B, s, l, h, V = 3072, 2048, 128, 25600, 51200
    eq3 = 96 * B * s * l * h * h * (1 + s / (6 * h) + V / (16 * l * h))
    assert T.iteration_flops(GPT_1T, B, "full") == pytest.approx(eq3, rel=1e-12)
    model = 72 * B * s * l * h * h * (1 + s / (6 * h) + V / (12 * l * h))
    assert T.iteration_flops(GPT_1T, B, "none") == pytest.approx(model, rel=1e-12)
    # selective recomputes only the attention core: 4 B s^2 h per layer more than none
    assert T.iteration_flops(GPT_1T, B, "selective") - model == pytest.approx(4 * B * s * s * h * l, rel=1e-9)


def test_interleaving_divides_the_bubble_by_v(selene):
    """Narayanan SC'21 §2.2.2: the bubble of p stages is (p - 1) / v stage times."""
    m = T.TransformerShape(layers=64, hidden=8192, heads=64, seq=2048, vocab=51200, name="t")
    plan = dict(tp=8, pp=8, dp=1, mbs=1, gbs=64, recompute="full")
    r1 = T.evaluate_plan(m, selene, **plan)
    r2 = T.evaluate_plan(m, selene, vpp=2, **plan)
    r4 = T.evaluate_plan(m, selene, vpp=4, **plan)
    assert r2["bubble"] == pytest.approx(r1["bubble"] / 2, rel=0.02)  # the last stage's head breaks exact balance
    assert r4["bubble"] == pytest.approx(r1["bubble"] / 4, rel=0.02)
    # the interleaved schedule sends v times as often
    assert r4["pp_comm"] == pytest.approx(4 * r1["pp_comm"], rel=1e-9)
    # activations: x (1 + (p - 1) / (p v)) on the first stage (Korthikanti §4.2.3)
    assert r2["activations"] > r1["activations"]


def test_tp_communication_goes_through_collective_time(selene):
    """No SP: 2 all-reduces forward, 2 backward, 2 more recomputed, per layer and micro-batch."""
    m = T.TransformerShape(layers=4, hidden=4096, heads=32, seq=2048, vocab=51200, name="t")
    r = T.evaluate_plan(m, selene, tp=8, pp=1, dp=1, mbs=2, gbs=4, recompute="full")
    one = collective_time("allreduce", 2 * 2 * 2048 * 4096, Group(8, 1), selene.profile).time
    assert r["tp_comm"] == pytest.approx(2 * 4 * 6 * one, rel=1e-12)  # m = 2 micro-batches x 4 layers


def test_ignore_memory_prices_a_plan_that_does_not_fit(selene):
    plan = dict(tp=8, pp=8, dp=1, mbs=1, gbs=64, recompute="none")
    r = T.evaluate_plan(GPT_1T, selene, **plan)
    assert not r["fits"] and r["time"] == np.inf
    r2 = T.evaluate_plan(GPT_1T, selene, ignore_memory=True, **plan)
    assert not r2["fits"] and np.isfinite(r2["time"]) and r2["time"] == r["raw_time"]


def test_vectorised_equals_one_plan_at_a_time(selene):
    tps, pps, rcs = np.array([8, 4, 8, 2]), np.array([64, 32, 16, 128]), np.array([2, 1, 0, 2])
    dps = 3072 // (tps * pps)
    many = T.evaluate(GPT_1T, selene, T.Plans(tp=tps, pp=pps, dp=dps, mbs=1, gbs=3072, recompute=rcs, sp=True),
                      ignore_memory=True)
    for i in range(len(tps)):
        one = T.evaluate_plan(GPT_1T, selene, ignore_memory=True, tp=int(tps[i]), pp=int(pps[i]), dp=int(dps[i]),
                              mbs=1, gbs=3072, recompute=int(rcs[i]), sp=True)
        assert many["time"][i] == pytest.approx(one["time"], rel=1e-12)
        assert many["memory"][i] == pytest.approx(one["memory"], rel=1e-12)


def test_gemm_curve_comes_from_the_device(selene, shared_context):
    assert not selene.assumed
    assert float(T.gemm_efficiency(selene, 1e12)) == pytest.approx(0.703)
    a40 = T.hardware_of(shared_context.profile("a40-64"))
    assert a40.assumed and float(T.gemm_efficiency(a40, 1e12)) == T.DEFAULT_GEMM_EFFICIENCY


def test_bad_plans_are_one_line_errors(selene):
    with pytest.raises(ParameterError, match="tp=3 must divide the 160 heads"):
        T.evaluate_plan(GPT_1T, selene, tp=3, pp=1, dp=1, gbs=1)
    with pytest.raises(ParameterError, match="layers divisible by pp x vpp"):
        T.evaluate_plan(GPT_1T, selene, tp=8, pp=64, dp=1, vpp=3, gbs=64)
    with pytest.raises(ParameterError, match="multiple of dp x micro-batch"):
        T.evaluate_plan(GPT_1T, selene, tp=8, pp=64, dp=6, mbs=1, gbs=100)
    with pytest.raises(ParameterError, match="recompute: expected one of"):
        T.evaluate_plan(GPT_1T, selene, tp=8, pp=64, dp=6, gbs=3072, recompute="some")


BLOOM = T.TransformerShape(layers=70, hidden=14336, heads=112, seq=2048, vocab=250880, dropout=True, alibi=True,
                           embed_norm=True, name="bloom")


def test_bf16_optimizer_layout_keeps_bf16_grads_beside_an_unsharded_fp32_buffer():
    """DeepSpeed BF16_Optimizer (tr11-176B-ml README: the fp32 accumulation buffer 'consumes
    4 bytes * params of additional memory', not sharded): bf16 weights 2 + bf16 gradients 2 + fp32
    gradients 4 + fp32 master and two moments 12 / dp; at dp 8: 9.5 B, against 7.5 without the copy."""
    assert float(T.state_bytes_per_param(1, 8, 4, grad_copy=True)) == pytest.approx(2 + 2 + 4 + 12 / 8)
    assert float(T.state_bytes_per_param(1, 8, 4)) == pytest.approx(2 + 4 + 12 / 8)
    assert float(T.state_bytes_per_param(0, 8, 4, grad_copy=True)) == pytest.approx(2 + 2 + 4 + 12)


def test_gradient_fold_costs_18_bytes_per_parameter_per_microbatch(selene):
    """update_hp_grads after every micro-batch: 18 B per local parameter through HBM. One stage
    (pp 1) holding the whole 1.7B GPT at tp 1: 128 micro-batches x 18 B x P / 2039 GB/s, with P
    counted by hand: 24 layers x (12 h^2 + 13 h) + (51200 + 2048) h embeddings + 2 h final norm,
    h = 2304: 24 x 63,730,944 + 122,683,392 + 4,608 = 1,652,230,656."""
    m = T.TransformerShape(layers=24, hidden=2304, heads=24, seq=2048, vocab=51200, positions=2048)
    base = dict(tp=1, pp=1, dp=1, mbs=1, gbs=128, recompute="full", grad_bytes=4)
    off = T.evaluate_plan(m, selene, ignore_memory=True, **base)
    on = T.evaluate_plan(m, selene, ignore_memory=True, fp32_grad_copy=True, **base)
    params = 1_652_230_656
    want = 128 * 18 * params / 2039e9
    assert on["grad_fold"] == pytest.approx(want, rel=1e-9)
    assert on["raw_time"] - off["raw_time"] == pytest.approx(want, rel=1e-9)
    assert on["states"] - off["states"] == pytest.approx(2 * params, rel=1e-9)


def test_alibi_adds_four_bytes_per_score_element_forward_only(selene):
    """Megatron-DeepSpeed's baddbmm(alibi, q, k^T, beta=1): the bias is broadcast into the score
    buffer (2 B written) and read by the GEMM (2 B); the backward does not see it."""
    m0 = T.TransformerShape(layers=2, hidden=1024, heads=16, seq=2048, vocab=1000)
    m1 = T.TransformerShape(layers=2, hidden=1024, heads=16, seq=2048, vocab=1000, alibi=True)
    a = T.Plans(tp=2, mbs=2).arrays()
    k0, k1 = T.layer_kernels(m0, selene, a)["core"], T.layer_kernels(m1, selene, a)["core"]
    elements = 2 * 16 * 2048 * 2048 / 2
    assert float(k1[0] - k0[0]) == pytest.approx(4 * elements / 2039e9, rel=1e-9)
    assert float(k1[1]) == pytest.approx(float(k0[1]), rel=1e-12)


def test_first_stage_holds_embedding_norm_input_and_stage_outputs_per_microbatch(selene):
    """BLOOM's first stage (embedding + 5 layers of 70 at pp 12, 1F1B: 12 micro-batches in flight)
    stores per micro-batch, beside the layers, the embedding layer norm's input (2 s b h) and, in
    DeepSpeed's pipe buffers, the stage output (2 s b h)."""
    plan = dict(tp=4, pp=12, dp=8, mbs=2, gbs=2048, recompute="full", zero=1, grad_bytes=4, embed_as_layer=True)
    base = T.evaluate_plan(BLOOM, selene, ignore_memory=True, **plan)
    keep = T.evaluate_plan(BLOOM, selene, ignore_memory=True, keep_stage_outputs=True, **plan)
    sbh = 2048 * 2 * 14336
    assert keep["activations"] - base["activations"] == pytest.approx(12 * 2 * sbh, rel=1e-9)
    no_norm = T.evaluate_plan(T.TransformerShape(layers=70, hidden=14336, heads=112, seq=2048, vocab=250880,
                                                 alibi=True), selene, ignore_memory=True, **plan)
    assert base["activations"] - no_norm["activations"] == pytest.approx(12 * 2 * sbh, rel=1e-9)


def test_gradient_fold_is_a_second_memory_peak_on_bloom_first_stage(selene):
    """BLOOM's first stage (5 layers + the embedding, 12 micro-batches in flight, full
    recomputation, TP 4, dropout, embedding layer norm): per micro-batch 5 x 2 s b h layer inputs
    + s b h dropout mask + 2 s b h norm input = 13 s b h; rebuilding one layer holds
    s b h (10 + 24/4 + 5 a s / (4 h)) - 2 s b h = 34 s b h more. After a backward the fold holds 11
    micro-batches, no rebuilt layer, and the fp32 copy of the embedding's gradient (4 V h / 4 B):
    143 s b h + V h = 11.99 GB against 12 x 13 + 34 = 190 s b h = 11.16 GB outside the fold."""
    plan = dict(tp=4, pp=12, dp=8, mbs=2, gbs=2048, recompute="full", zero=1, grad_bytes=4, embed_as_layer=True)
    sbh = 2048 * 2 * 14336
    plain = T.evaluate_plan(BLOOM, selene, ignore_memory=True, **plan)
    copy = T.evaluate_plan(BLOOM, selene, ignore_memory=True, fp32_grad_copy=True, **plan)
    assert plain["activations"] == pytest.approx(190 * sbh, rel=1e-9)
    assert copy["activations"] == pytest.approx(143 * sbh + 250880 * 14336, rel=1e-9)
