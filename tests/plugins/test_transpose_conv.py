"""Tests of the transpose-conv plugin.

Oracles: (1) the adjoint of a direct strided convolution built column by column with
``scipy.signal.correlate2d`` (PyTorch ConvTranspose2d is the adjoint of Conv2d); (2) scipy's
full 2-D convolution of the zero-upsampled input, cropped. Counts and model values against hand
calculations written here.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from scipy.signal import convolve2d, correlate2d

from suite import ParameterError, Result, Scenario, Skip
from suite.errors import WorkloadError
from suite.hardware import ProfileLibrary
from suite.workloads import Layer, LayerTable
from suite_transpose_conv import claims as C
from suite_transpose_conv import execute as X
from suite_transpose_conv import model as M
from suite_transpose_conv import ops
from suite_transpose_conv.layers import ConvT, from_layer, layers_of
from suite_transpose_conv.technique import TECHNIQUE, check_counts, check_equals_scatter

VARIANTS = list(ops.VARIANTS)

# --------------------------------------------------------------------------- oracles


def _direct_conv(z: np.ndarray, w: np.ndarray, s: int, p: int, h: int, wd: int) -> np.ndarray:
    """Conv2d (stride s, padding p) of z (Co, Ho, Wo) with w read as (Ci, Co, k, k): (Ci, h, wd)."""
    ci_n, co_n, k, _ = w.shape
    ho, wo = z.shape[1:]
    zp = np.zeros((co_n, max(ho + 2 * p, (h - 1) * s + k), max(wo + 2 * p, (wd - 1) * s + k)))
    zp[:, p:p + ho, p:p + wo] = z
    y = np.zeros((ci_n, h, wd))
    for ci in range(ci_n):
        for co in range(co_n):
            y[ci] += correlate2d(zp[co], w[ci, co], mode="valid")[::s, ::s][:h, :wd]
    return y


def adjoint_oracle(x: np.ndarray, w: np.ndarray, s: int, p: int, op: int) -> np.ndarray:
    """Transpose conv as the explicit adjoint (dense matrix transpose) of the direct convolution."""
    n, ci, h, wd = x.shape
    co, k = w.shape[1], w.shape[2]
    ho, wo = (h - 1) * s - 2 * p + k + op, (wd - 1) * s - 2 * p + k + op
    cols = []
    for j in range(co * ho * wo):
        e = np.zeros(co * ho * wo)
        e[j] = 1.0
        cols.append(_direct_conv(e.reshape(co, ho, wo), w, s, p, h, wd).ravel())
    a = np.stack(cols, axis=1)  # (Ci h wd, Co ho wo)
    return np.stack([(a.T @ x[i].ravel()).reshape(co, ho, wo) for i in range(n)])


def upsample_oracle(x: np.ndarray, w: np.ndarray, s: int, p: int, op: int) -> np.ndarray:
    """Full 2-D convolution (scipy) of the zero-upsampled input with each kernel, cropped by p."""
    n, ci, h, wd = x.shape
    co, k = w.shape[1], w.shape[2]
    ho, wo = (h - 1) * s - 2 * p + k + op, (wd - 1) * s - 2 * p + k + op
    out = np.zeros((n, co, ho, wo))
    for b in range(n):
        for c in range(ci):
            u = np.zeros(((h - 1) * s + 1, (wd - 1) * s + 1))
            u[::s, ::s] = x[b, c]
            for o in range(co):
                full = convolve2d(u, w[c, o], mode="full")  # ((h-1)s+k, (w-1)s+k)
                padded = np.zeros((full.shape[0] + op, full.shape[1] + op))
                padded[:full.shape[0], :full.shape[1]] = full
                out[b, o] += padded[p:p + ho, p:p + wo]
    return out


@st.composite
def geometries(draw, max_hw=9, max_c=3, strides=(2, 3), max_k=7):
    s = draw(st.sampled_from(strides))
    k = draw(st.integers(2, max_k))
    p = draw(st.integers(0, k - 1))
    op = draw(st.integers(0, s - 1))
    h = draw(st.integers(1, max_hw))
    w = draw(st.integers(1, max_hw))
    assume((h - 1) * s - 2 * p + k + op >= 1 and (w - 1) * s - 2 * p + k + op >= 1)
    return ConvT("t", draw(st.integers(1, 2)), draw(st.integers(1, max_c)), draw(st.integers(1, max_c)), h, w,
                 k, s, p, op)


def _arrays(l: ConvT, seed: int = 0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((l.n, l.ci, l.h, l.w)), rng.standard_normal((l.ci, l.co, l.k, l.k))


# --------------------------------------------------------------------------- correctness


def test_scatter_is_the_adjoint_of_direct_convolution_fixed_cases():
    for l in [ConvT("a", 1, 2, 3, 3, 4, 3, 2, 1, 1), ConvT("b", 2, 1, 2, 2, 3, 4, 3, 2, 2),
              ConvT("c", 1, 2, 1, 4, 4, 5, 2, 4, 0)]:
        x, w = _arrays(l)
        out, _ = ops.scatter(x, w, l.s, l.p, l.op)
        np.testing.assert_allclose(out, adjoint_oracle(x, w, l.s, l.p, l.op), rtol=1e-10, atol=1e-10)


@settings(max_examples=12, deadline=None)
@given(geometries(max_hw=4, max_c=2, max_k=5))
def test_every_variant_equals_the_adjoint_oracle(l):
    x, w = _arrays(l, 1)
    ref = adjoint_oracle(x, w, l.s, l.p, l.op)
    for v in VARIANTS:
        out, _ = ops.run(v, x, w, l.s, l.p, l.op)
        assert out.shape == (l.n, l.co, l.ho, l.wo)
        np.testing.assert_allclose(out, ref, rtol=1e-9, atol=1e-9, err_msg=v)


@settings(max_examples=30, deadline=None)
@given(geometries())
def test_every_variant_equals_scatter_and_scipy(l):
    x, w = _arrays(l, 2)
    ref, _ = ops.scatter(x, w, l.s, l.p, l.op)
    np.testing.assert_allclose(ref, upsample_oracle(x, w, l.s, l.p, l.op), rtol=1e-9, atol=1e-9)
    for v in VARIANTS:
        out, _ = ops.run(v, x, w, l.s, l.p, l.op)
        np.testing.assert_allclose(out, ref, rtol=1e-9, atol=1e-9, err_msg=v)


@pytest.mark.parametrize("l", [ConvT("blas", 2, 5, 12, 4, 3, 5, 2, 2, 1), ConvT("blas-s3", 1, 3, 9, 3, 4, 4, 3, 1, 2),
                               ConvT("loop", 2, 6, 8, 5, 4, 4, 2, 1, 0), ConvT("loop-s3", 1, 5, 2, 4, 3, 5, 3, 2, 1)])
def test_unified_blas_and_loop_paths_equal_scipy(l):
    # Co > LOOP_MAX_CO takes per-tap BLAS gemms, Co <= LOOP_MAX_CO the compiled loop nest; float32 and float64
    assert (l.co > ops.LOOP_MAX_CO) == l.name.startswith("blas")
    x, w = _arrays(l, 7)
    ref = upsample_oracle(x, w, l.s, l.p, l.op)
    np.testing.assert_allclose(ops.unified(x, w, l.s, l.p, l.op)[0], ref, rtol=1e-9, atol=1e-9)
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    out32, work = ops.unified(x32, w32, l.s, l.p, l.op, packed=ops.pack(w32))
    assert out32.dtype == np.float32 and work.macs == M.macs(l, "unified")
    np.testing.assert_allclose(out32, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


@pytest.mark.parametrize("l", [ConvT("blas", 2, 5, 12, 4, 3, 5, 2, 2, 1), ConvT("blas-s3", 1, 3, 9, 3, 4, 4, 3, 1, 2),
                               ConvT("blas-crop", 1, 4, 10, 3, 3, 2, 3, 2, 1),
                               ConvT("loop", 2, 6, 8, 5, 4, 4, 2, 1, 0), ConvT("loop-s3", 1, 5, 2, 4, 3, 5, 3, 2, 1)])
@pytest.mark.parametrize("variant", ["zero-insert", "kernel-segregated"])
def test_zero_insert_and_ks_blas_and_loop_paths_equal_scipy(l, variant):
    # the baseline and the null run the same paths as unified (Co > LOOP_MAX_CO: the shared gemm
    # class schedule; Co <= LOOP_MAX_CO: the shared loop nest); blas-crop: p > k - 1 crops the upsampled input
    x, w = _arrays(l, 9)
    ref = upsample_oracle(x, w, l.s, l.p, l.op)
    np.testing.assert_allclose(ops.run(variant, x, w, l.s, l.p, l.op)[0], ref, rtol=1e-9, atol=1e-9)
    x32, w32 = x.astype(np.float32), w.astype(np.float32)
    out32, work = ops.run(variant, x32, w32, l.s, l.p, l.op, packed=ops.pack(w32))
    assert out32.dtype == np.float32 and work.macs == M.macs(l, variant)
    np.testing.assert_allclose(out32, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


@pytest.mark.parametrize("co", [12, 3])
def test_every_timed_variant_runs_its_macs_through_the_shared_primitives(monkeypatch, co):
    # like for like: every MAC of zero-insert, kernel-segregated and unified is issued by the one
    # in-place gemm (Co > LOOP_MAX_CO) or the one compiled loop nest (Co <= LOOP_MAX_CO)
    l = ConvT("l", 2, 9, co, 5, 6, 4, 2, 1, 1)
    x, w = (a.astype(np.float32) for a in _arrays(l, 10))
    seen = {"gemm": 0, "loops": 0}
    gemm_acc, run_loops = ops._gemm_acc, ops._run_loops

    def count_gemm(gemm, a, tap, acc, first, work):
        assert gemm is not None and acc.flags.c_contiguous
        seen["gemm"] += a.shape[0] * a.shape[1] * tap.shape[1]
        return gemm_acc(gemm, a, tap, acc, first, work)

    def count_loops(loops, xpc, taps, out, rows, cols, *args):
        before = args[-1].macs
        run_loops(loops, xpc, taps, out, rows, cols, *args)
        seen["loops"] += args[-1].macs - before

    monkeypatch.setattr(ops, "_gemm_acc", count_gemm)
    monkeypatch.setattr(ops, "_run_loops", count_loops)
    for v in ("zero-insert", "kernel-segregated", "unified"):
        seen.update(gemm=0, loops=0)
        _, work = ops.run(v, x, w, l.s, l.p, l.op, packed=ops.pack(w))
        path = "gemm" if co > ops.LOOP_MAX_CO else "loops"
        assert seen[path] == work.macs == M.macs(l, v) and sum(seen.values()) == work.macs, v


@pytest.mark.parametrize("l", [ConvT("dcgan-like", 2, 16, 12, 4, 4, 5, 2, 2, 1), ConvT("ebgan-like", 1, 8, 3, 8, 8, 4, 2, 1, 0),
                               ConvT("stride1", 2, 10, 16, 1, 1, 4, 1, 0, 0)])
def test_unified_equals_torch_conv_transpose2d(l):
    # torch is an optional extra ([torch]); CI has none and skips this
    torch = pytest.importorskip("torch", reason="torch (optional extra [torch]) not installed")
    x, w = (a.astype(np.float32) for a in _arrays(l, 8))
    ref = torch.nn.functional.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=l.s, padding=l.p,
                                               output_padding=l.op).numpy()
    out, _ = ops.unified(x, w, l.s, l.p, l.op, packed=ops.pack(w))
    np.testing.assert_allclose(out, ref, rtol=1e-4, atol=1e-4 * np.abs(ref).max())


def test_stride_larger_than_kernel_and_stride_one():
    # s = 3 > k = 2: one parity class per axis has no taps and stays zero
    for l in [ConvT("a", 1, 2, 2, 4, 5, 2, 3, 0, 2), ConvT("b", 1, 3, 2, 5, 5, 3, 1, 1, 0)]:
        x, w = _arrays(l, 3)
        ref = upsample_oracle(x, w, l.s, l.p, l.op)
        for v in VARIANTS:
            np.testing.assert_allclose(ops.run(v, x, w, l.s, l.p, l.op)[0], ref, rtol=1e-9, atol=1e-9, err_msg=v)


def test_packed_weights_are_contiguous_taps_and_give_the_same_output():
    l = ConvT("p", 2, 3, 4, 4, 5, 4, 2, 1, 1)
    x, w = _arrays(l, 6)
    packed = ops.pack(w)
    assert packed.shape == (4, 4, 3, 4) and packed.flags.c_contiguous
    assert packed[1, 2, 0, 3] == w[0, 3, 1, 2]
    ref = adjoint_oracle(x, w, l.s, l.p, l.op)
    for v in VARIANTS:
        np.testing.assert_allclose(ops.run(v, x, w, l.s, l.p, l.op, packed=packed)[0], ref, rtol=1e-9, atol=1e-9,
                                   err_msg=v)
    with pytest.raises(ParameterError, match="packed weights must have shape"):
        ops.unified(x, w, l.s, l.p, l.op, packed=packed.transpose(0, 1, 3, 2))


def test_float32_inputs_stay_float32():
    l = ConvT("a", 1, 4, 4, 5, 5, 4, 2, 1, 0)
    x, w = (a.astype(np.float32) for a in _arrays(l))
    for v in VARIANTS:
        assert ops.run(v, x, w, 2, 1, 0)[0].dtype == np.float32


def test_layer_inputs_drawn_once_are_the_fresh_draws_bits_and_read_only(monkeypatch):
    l, other = ConvT("a", 1, 4, 4, 5, 5, 4, 2, 1, 0), ConvT("b", 1, 3, 4, 5, 5, 4, 2, 1, 0)
    monkeypatch.setattr(X, "_INPUT_CACHE", {})
    x, w = X._seeded_inputs(l, "float32", 7)
    fx, fw = X._inputs(l, "float32", np.random.default_rng(7))
    assert x.dtype == np.float32 and np.array_equal(x, fx) and np.array_equal(w, fw)
    assert X._seeded_inputs(l, "float32", 7)[0] is x  # the second variant on this layer draws nothing
    assert not np.array_equal(X._seeded_inputs(l, "float32", 8)[0], x)  # another seed, other inputs
    with pytest.raises(ValueError, match="read-only"):
        x[0, 0, 0, 0] = 1.0
    # over the byte budget the least recently used entries go, never the one just drawn
    monkeypatch.setattr(X, "INPUT_CACHE_BYTES", x.nbytes + w.nbytes)
    X._seeded_inputs(other, "float32", 7)
    assert list(X._INPUT_CACHE) == [(1, 3, 5, 5, 4, 4, "float32", 7)]


def test_bad_geometry_is_a_one_line_parameter_error():
    x, w = np.zeros((1, 2, 3, 3)), np.zeros((2, 2, 3, 3))
    with pytest.raises(ParameterError, match="output_padding"):
        ops.unified(x, w, 2, 1, 2)
    with pytest.raises(ParameterError, match="input channels"):
        ops.unified(np.zeros((1, 3, 3, 3)), w, 2, 1, 0)
    with pytest.raises(ParameterError, match="unknown variant"):
        ops.run("im2col", x, w, 2, 1, 0)
    with pytest.raises(ParameterError, match="output size"):
        ops.output_size(1, 2, 2, 1, 0)  # 0 - 2 + 2 = 0


# --------------------------------------------------------------------------- counts


@settings(max_examples=30, deadline=None)
@given(geometries(max_hw=12, max_c=3))
def test_counts_properties(l):
    x, w = _arrays(l, 4)
    work = {v: ops.run(v, x, w, l.s, l.p, l.op)[1] for v in VARIANTS}
    # unified computes exactly Ho x Wo outputs per channel
    assert work["unified"].outputs == l.ho * l.wo
    assert work["zero-insert"].outputs == l.ho * l.wo
    # MACs unified <= KS <= zero-insert, with equality of the first two when s divides Ho and Wo
    assert work["unified"].macs <= work["kernel-segregated"].macs <= work["zero-insert"].macs
    if l.ho % l.s == 0 and l.wo % l.s == 0:
        assert work["unified"].macs == work["kernel-segregated"].macs
    # extra elements of KS: s^2 ceil(Ho/s) ceil(Wo/s) - Ho Wo
    extra = l.s ** 2 * math.ceil(l.ho / l.s) * math.ceil(l.wo / l.s) - l.ho * l.wo
    assert work["kernel-segregated"].outputs - l.ho * l.wo == extra == M.extra_outputs(l)
    # counted work equals the model's closed forms
    for v in VARIANTS:
        assert work[v].macs == M.macs(l, v), v
        assert work[v].outputs == M.outputs_computed(l, v), v


def test_counts_by_hand():
    # DCGAN-style layer: 256 -> 128 channels, 16x16 -> 32x32, k4 s2 p1
    l = ConvT("d", 1, 256, 128, 16, 16, 4, 2, 1, 0)
    assert (l.ho, l.wo) == (32, 32)
    assert M.macs(l, "zero-insert") == 32 * 32 * 16 * 256 * 128 == 536_870_912
    assert M.macs(l, "unified") == M.macs(l, "kernel-segregated") == 536_870_912 // 4
    assert M.macs(l, "scatter") == 16 * 16 * 16 * 256 * 128
    # odd output: H = 15, k3 s2 p1 -> Ho = 29. Classes: r=0 uses taps {1} (1 tap) on 15 outputs,
    # r=1 taps {0, 2} (2 taps) on 14 outputs: 15*1 + 14*2 = 43 per axis -> 43^2 per channel pair.
    o = ConvT("o", 1, 1, 1, 15, 15, 3, 2, 1, 0)
    assert o.ho == 29
    assert M.macs(o, "unified") == 43 * 43 == 1849
    assert M.macs(o, "kernel-segregated") == 15 * 15 * 9 == 2025
    assert M.macs(o, "zero-insert") == 29 * 29 * 9 == 7569
    assert M.outputs_computed(o, "kernel-segregated") == 4 * 15 * 15 == 900
    assert M.extra_outputs(o) == 900 - 841 == 59


def test_phase_plan_by_hand():
    # k=5, s=2, p=2 (DCGAN): taps per class ceil((5-a)/2): a=0 -> 3, a=1 -> 2; sum = k
    phases, lo, hi = ops.phase_plan(4, 5, 2, 2, 1)
    assert [(ph.r, ph.a, ph.d, ph.taps, ph.count) for ph in phases] == [(0, 0, 1, 3, 4), (1, 1, 1, 2, 4)]
    assert (lo, hi) == (1, 1)
    assert sum(ph.taps for ph in phases) == 5


# --------------------------------------------------------------------------- memory


def _tracemalloc_slack(itemsize: int) -> int:
    # numpy's ufunc buffers for in-place adds on strided views (2 x 8192 elements) + Python objects
    return 2 * 8192 * itemsize + 8192


@settings(max_examples=10, deadline=None)
@given(geometries(max_hw=14, max_c=24))
def test_peak_temp_memory_matches_the_model(l):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((l.n, l.ci, l.h, l.w)).astype(np.float32)
    w = rng.standard_normal((l.ci, l.co, l.k, l.k)).astype(np.float32)
    packed = ops.pack(w)  # as the execute fidelity does, once per layer outside the measured call
    for v in VARIANTS:
        measured = X.peak_temp_bytes(v, x, w, l, packed)
        assert abs(measured - M.temp_bytes(l, v, 4)) <= _tracemalloc_slack(4), v


def test_temp_memory_ordering_on_gan_layers():
    for l in [ConvT("a", 1, 256, 128, 8, 8, 4, 2, 1, 0), ConvT("b", 1, 128, 64, 15, 15, 3, 2, 1, 0),
              ConvT("c", 1, 64, 3, 32, 32, 4, 2, 1, 0)]:
        x, w = (a.astype(np.float32) for a in _arrays(l))
        meas = {v: X.peak_temp_bytes(v, x, w, l, ops.pack(w)) for v in VARIANTS}
        assert meas["unified"] < meas["kernel-segregated"] < meas["zero-insert"]
        # unified by hand, layer a (8 -> 16, k4 s2 p1: per axis 2 classes of 8 outputs, 2 taps, pads 1 + 1):
        # padded input 10 x 10 x 256 + one class's accumulator 64 x 128 + one window copy of 8 + 2 - 1
        # rows x 8 columns x 256 channels (batch 1: the rows a class's two row taps read)
        if l.name == "a":
            assert abs(meas["unified"] - 4 * (100 * 256 + 64 * 128 + 9 * 8 * 256)) <= _tracemalloc_slack(4)
        # layer c (Co = 3: the compiled loop nest): padded NCHW input 64 x 34 x 34 + one row transient 3 x 32
        if l.name == "c":
            assert abs(meas["unified"] - 4 * (64 * 34 * 34 + 3 * 32)) <= _tracemalloc_slack(4)
        fused = {v: M.temp_bytes(l, v, 4, "fused") for v in VARIANTS}
        assert fused["unified"] == 0
        # KS: 4 sub-outputs of ceil(Ho/2)^2 x Co floats; zero-insert: (Ho+k-1)^2 x Ci floats
        assert fused["kernel-segregated"] == 4 * math.ceil(l.ho / 2) ** 2 * l.co * 4
        assert fused["zero-insert"] == (l.ho + l.k - 1) ** 2 * l.ci * 4


# --------------------------------------------------------------------------- model

CPU_TOML = """
[profile]
name = "test-cpu"
kind = "device"
source = "test: round figures for hand calculation"
[device]
type = "cpu"
memory = "64 GB"
memory_bandwidth = "100 GB/s"
peak_flops = { fp32 = "1 TFLOP/s", fp64 = "0.5 TFLOP/s" }
"""


@pytest.fixture
def profile(tmp_path):
    (tmp_path / "cpu.toml").write_text(CPU_TOML)
    return ProfileLibrary([tmp_path]).get("test-cpu")


def _scenario(variant, fidelity="model", profile=None, workload=None, **params):
    return Scenario("transpose-conv", variant, fidelity, profile=profile, workload=workload,
                    params=TECHNIQUE.validate_params(params))


def test_model_fused_time_by_hand(profile):
    # 256 -> 128, 16 -> 32, k4 s2 p1, batch 1, float32; unified fused = one kernel:
    # FLOPs 2 * 134,217,728 = 268,435,456 at 1e12 -> 268.4 us; bytes 4 * (65536 + 524288 + 131072)
    # = 2,883,584 at 1e11 -> 28.8 us; compute-bound -> 268.435456 us.
    params = dict(in_channels=256, out_channels=128, height=16, width=16, kernel=4, stride=2, padding=1,
                  traffic="fused")
    r = TECHNIQUE.evaluate(_scenario("unified", profile=profile, **params))
    assert r["time"] == pytest.approx(268.435456e-6, rel=1e-12)
    assert r["macs"] == 134_217_728
    assert r["peak_temp_bytes"] == 0
    # zero-insert fused: upsample (0 FLOPs, 4*(65536 + 35*35*256) B = 1,516,544 B -> 15.17 us)
    # + conv (2 * 536,870,912 FLOPs -> 1073.74 us; bytes 4*(313600 + 524288 + 131072) < roof)
    z = TECHNIQUE.evaluate(_scenario("zero-insert", profile=profile, **params))
    assert z["time"] == pytest.approx(15.16544e-6 + 1073.741824e-6, rel=1e-12)
    # KS fused: 4 launches of 268,435,456/4 FLOPs each (67.1 us; memory 4*(65536 + 131072 + 32768)
    # = 917,504 B -> 9.2 us) + interleave 4*(131072 + 131072) B -> 10.49 us
    k = TECHNIQUE.evaluate(_scenario("kernel-segregated", profile=profile, **params))
    assert k["time"] == pytest.approx(4 * 67.108864e-6 + 10.48576e-6, rel=1e-12)


def test_model_per_tap_time_is_a_sum_of_rooflines(profile):
    l = ConvT("l", 1, 8, 4, 5, 5, 3, 2, 1, 0)
    ops_list = M.operations(l, "unified", 4, "per-tap")
    gemms = [o for o in ops_list if o.what == "gemm"]
    assert sum(o.flops for o in gemms) == 2 * M.macs(l, "unified")
    expect = sum(max(o.flops / 1e12, o.bytes / 1e11) for o in ops_list)
    assert M.layer_time(l, "unified", 1e12, 1e11) == pytest.approx(expect, rel=1e-12)
    # efficiency scales the compute roof only; launch overhead adds per operation
    assert M.layer_time(l, "unified", 1e12, 1e11, launch_overhead=1e-6) == pytest.approx(expect + len(ops_list) * 1e-6)


def test_model_without_profile_skips():
    with pytest.raises(Skip):
        TECHNIQUE.evaluate(_scenario("unified"))


# --------------------------------------------------------------------------- workloads

def _deconv(name, cin, hin, cout, k, s, p, op, hout=None):
    hout = hout if hout is not None else (hin - 1) * s - 2 * p + k + op
    return Layer(name, "deconv", (cin, hin, hin), (cout, hout, hout),
                 attrs={"kernel": (k, k), "stride": (s, s), "padding": (p, p), "output_padding": (op, op)})


GEN = LayerTable("tiny-gen", "gan", layers=(
    _deconv("d1", 16, 1, 32, 4, 1, 0, 0),
    Layer("d1.relu", "act", (32, 4, 4), (32, 4, 4)),
    _deconv("d2", 32, 4, 16, 5, 2, 2, 1),
    _deconv("d3", 16, 8, 3, 4, 2, 1, 0),
))


def test_layers_from_a_workload():
    ls = layers_of(_scenario("unified", workload=GEN, batch=2))
    assert [(l.name, l.n, l.ci, l.co, l.h, l.k, l.s, l.p, l.op, l.ho) for l in ls] == [
        ("d1", 2, 16, 32, 1, 4, 1, 0, 0, 4), ("d2", 2, 32, 16, 4, 5, 2, 2, 1, 8), ("d3", 2, 16, 3, 8, 4, 2, 1, 0, 16)]


def test_workload_errors():
    bad = _deconv("bad", 8, 4, 8, 4, 2, 1, 0, hout=9)
    with pytest.raises(WorkloadError, match="output_shape"):
        from_layer(bad, 1)
    no_deconv = LayerTable("fc-only", "cnn", layers=(Layer("fc", "fc", (8,), (4,)),))
    with pytest.raises(Skip):
        layers_of(_scenario("unified", workload=no_deconv))


def test_zoo_gan_generators_have_deconv_layers():
    from session_context import session_context

    for name in ("dcgan-generator", "ebgan-generator"):
        try:
            wl = session_context().workload(name)
        except WorkloadError:
            pytest.skip(f"{name} not in the zoo yet")
        ls = [from_layer(l, 1) for l in wl.layers if l.kind == "deconv"]
        assert ls and all(l.s == 2 for l in ls[1:])


# --------------------------------------------------------------------------- execute

def test_execute_small_layer():
    r = TECHNIQUE.evaluate(_scenario("unified", "execute", in_channels=8, out_channels=4, height=7, width=6,
                                     kernel=3, stride=2, padding=1, repeats=3))
    l = ConvT("layer", 1, 8, 4, 7, 6, 3, 2, 1, 0)
    assert len(r.metrics["time"].samples) == 3
    assert r["time"] == pytest.approx(float(np.median(r.metrics["time"].samples)))
    assert r["time_min"] == pytest.approx(min(r.metrics["time"].samples))
    assert r["macs"] == M.macs(l, "unified")
    assert r["outputs_computed"] == l.ho * l.wo == 13 * 11
    assert r["extra_outputs"] == 0
    assert r["oracle_error"] < 1e-4
    assert abs(r["peak_temp_bytes"] - M.temp_bytes(l, "unified", 4)) <= _tracemalloc_slack(4)
    k = TECHNIQUE.evaluate(_scenario("kernel-segregated", "execute", in_channels=8, out_channels=4, height=7,
                                     width=6, kernel=3, stride=2, padding=1, repeats=1))
    assert k["extra_outputs"] == M.extra_outputs(l) == 4 * 7 * 6 - 13 * 11


def test_execute_on_a_workload_sums_layers():
    r = TECHNIQUE.evaluate(_scenario("zero-insert", "execute", workload=GEN, repeats=2))
    rows = r.artifacts["layers"]
    assert [row["name"] for row in rows] == ["d1", "d2", "d3"]
    assert r["macs"] == sum(M.macs(from_layer(l, 1), "zero-insert") for l in GEN.layers if l.kind == "deconv")
    assert r.metrics["time"].samples == pytest.approx(
        tuple(sum(row["samples"][j] for row in rows) for j in range(2)))
    # every sample of every layer is stored, as the samples of its layer_time.<i> metric
    for i, row in enumerate(rows):
        assert r.metrics[f"layer_time.{i}"].samples == pytest.approx(tuple(row["samples"]))
        assert r[f"layer_time.{i}"] == pytest.approx(float(np.median(row["samples"])))


def test_execute_pins_every_thread_pool_to_the_declared_count(blas_unpinned):
    r = TECHNIQUE.evaluate(_scenario("unified", "execute", in_channels=4, out_channels=2, height=5, width=5,
                                     kernel=3, stride=2, padding=1, repeats=2, threads=1))
    pools = r.artifacts["machine"]["thread_pools"]
    assert pools and all(p["threads"] == 1 for p in pools)


def test_declared_properties_hold_on_smoke_like_scenarios():
    for v in VARIANTS:
        sc = _scenario(v, "execute", in_channels=3, out_channels=2, height=5, width=6, kernel=5, stride=3,
                       padding=2, output_padding=1)
        check_equals_scatter(TECHNIQUE, sc)
        check_counts(TECHNIQUE, sc)


# --------------------------------------------------------------------------- claims

def _res(layers):
    r = Result()
    r.artifacts["layers"] = layers
    return r


def test_mean_speedup_and_memory_saving_by_hand():
    results = {
        "g/zero-insert": _res([{"s": 1, "time": 1.0, "peak_temp_bytes": 0},
                               {"s": 2, "time": 4.0, "peak_temp_bytes": 30e6},
                               {"s": 2, "time": 6.0, "peak_temp_bytes": 10e6}]),
        "g/unified": _res([{"s": 1, "time": 1.0, "peak_temp_bytes": 0},
                           {"s": 2, "time": 1.0, "peak_temp_bytes": 5e6},
                           {"s": 2, "time": 3.0, "peak_temp_bytes": 1e6}]),
    }
    # stride-1 layer excluded: mean(4/1, 6/3) = 3
    assert C.mean_speedup(results) == pytest.approx(3.0)
    # measured results carry per-layer medians as metrics layer_time.<i>, which take precedence
    # over the artifact: mean(8/1, 6/3) = 5
    for label, times in (("g/zero-insert", (1.0, 8.0, 6.0)), ("g/unified", (1.0, 1.0, 3.0))):
        for i, t in enumerate(times):
            results[label].add(f"layer_time.{i}", t, "s", "lower", samples=[t, t])
    assert C.mean_speedup(results) == pytest.approx(5.0)
    assert C.max_memory_saving_mb(results) == pytest.approx(25.0)


def test_claims_are_declared_with_fixed_tolerances():
    ids = {c.id: c for c in TECHNIQUE.claims}
    assert (ids["cpu-average-speedup-model"].expect.paper == 3.89
            and ids["cpu-average-speedup-model"].expect.rel == 0.2)
    assert ids["gpu-average-speedup"].expect.paper == 2.03 and ids["gpu-average-speedup"].expect.rel == 0.2
    assert ids["gan-layers-speedup-model"].expect.paper == 3.5
    # memory: 20% (docs/verdicts.md); speed-ups judged on the gain
    assert ids["ebgan-memory-saving"].expect.paper == 35.0 and ids["ebgan-memory-saving"].expect.rel == 0.2
    assert ids["gan-layers-speedup-model"].expect.band() == pytest.approx((3.0, 4.0))  # 1 + 2.5 +- 0.5
    # issue 42: the measured speed-ups were dropped (their values moved 2.4-3.1 with the machine's load)
    assert {c.id for c in TECHNIQUE.claims if c.measured} == set()
    assert all(any(n.value == 1.0 for n in c.nulls) for c in TECHNIQUE.claims if "speedup" in c.id)
    assert all(c.verified for c in TECHNIQUE.claims)  # every number was read in the abstract
    for c in TECHNIQUE.claims:
        labels = set(c.specs())
        assert c.nulls
        assert {lab.rsplit("/", 1)[1] for lab in labels} == {"zero-insert", "unified"}


def test_conformance_kit():
    from suite.testing import check_technique

    rep = check_technique(TECHNIQUE, max_examples=3)
    assert rep.outcomes["family:oracle-exact"] == "passed"
    assert rep.outcomes["properties"] == "passed"


@pytest.mark.slow  # two tracemalloc runs of the EB-GAN layers at batch 32 and 33: ~5 s
def test_ebgan_memory_claim_flips_at_the_declared_batch():
    """Audit 11b B15: the saving is 0.853 MB per sample (tracemalloc, float32), so [28, 42] MB is reached at batch
    33 (28.16 MB; 32 gives 27.30): the batch the abstract does not state, declared with that flip."""
    import dataclasses

    from suite.testing import resolve_case
    from suite_transpose_conv.technique import TECHNIQUE

    c = {c.id: c for c in TECHNIQUE.claims}["ebgan-memory-saving"]

    def saving(b):
        specs = {k: dataclasses.replace(s, params={**s.params, "batch": b}) for k, s in c.specs().items()}
        return c.value({k: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario) for k, s in specs.items()})

    assert saving(32) == pytest.approx(27.304, abs=1e-3) and not c.expect.check(saving(32))
    assert saving(33) == pytest.approx(28.157, abs=1e-3) and c.expect.check(saving(33))
    assert c.assumptions[0].flip_at == 33


def test_cpu_speedup_claims_flip_with_the_xeon_memory_bandwidth():
    """Audit 11b B16: the SKU the abstract does not name decides both roofline claims: at 55 GB/s the average
    speed-up is 4.36 (inside [3.312, 4.468]; 60 GB/s: 4.54), on the GAN layers 75 GB/s gives 3.99 (inside [3, 4];
    80 GB/s: 4.01); the 8280's 140.8 GB/s gives 4.59 and 4.34, above both bands."""
    import dataclasses

    from suite.testing import resolve_case
    from suite_transpose_conv.technique import TECHNIQUE

    claims = {c.id: c for c in TECHNIQUE.claims}

    def at(cid, gbs):
        c = claims[cid]
        specs = {k: dataclasses.replace(s, overrides={"device.memory_bandwidth": f"{gbs} GB/s"})
                 for k, s in c.specs().items()}
        return c, c.value({k: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario) for k, s in specs.items()})

    for cid, inside, outside, want in (("cpu-average-speedup-model", 55, 60, 4.358),
                                       ("gan-layers-speedup-model", 75, 80, 3.987)):
        c, v = at(cid, inside)
        assert v == pytest.approx(want, abs=1e-3) and c.expect.check(v)
        assert not c.expect.check(at(cid, outside)[1])
