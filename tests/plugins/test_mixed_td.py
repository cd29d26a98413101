"""Tests of the Mixed-TD plugin: decompositions against independent oracles (a direct loop
convolution, numpy's SVD of unfoldings built index by index, exact low-rank tensors), the authors'
closed forms by hand, the folding model by hand and against brute force, the vectorised evaluator
against the step-by-step greedy, properties (hypothesis), execute fidelity, claims and the kit."""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
import platform

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from suite import ScenarioSpec, Skip
from suite.errors import ParameterError, TechniqueError
from suite.testing import resolve_case
from suite_mixed_td import decompose as dec
from suite_mixed_td import execute, model
from suite_mixed_td.technique import CLAIMS, TECHNIQUE, per_dsp_gain
from suite_mixed_td.workloads import REPVGG_A0_PUBLISHED_PARAMS_M, digits_cnn, repvgg_a0


@functools.cache
def _zoo(name):
    """A zoo workload through a context (the deprecated global get_workload is not the lookup)."""
    from session_context import session_context

    return session_context().workload(name)


U250 = model.Resources(dsps=12288, on_chip_bytes=(5376 * 18 * 1024 + 1280 * 288 * 1024) / 8, clock=200e6,
                       dram_bw=12.5e9)

# ----------------------------------------------------------------------------- oracles written here


def loop_conv(x, w, stride=(1, 1), padding=(0, 0), groups=1):
    """The textbook definition, one output element at a time."""
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    ph, pw = padding
    xp = np.zeros((n, c, h + 2 * ph, wd + 2 * pw))
    xp[:, :, ph:ph + h, pw:pw + wd] = x
    ho, wo = (h + 2 * ph - kh) // stride[0] + 1, (wd + 2 * pw - kw) // stride[1] + 1
    out = np.zeros((n, f, ho, wo))
    fg = f // groups
    for b in range(n):
        for o in range(f):
            g = o // fg
            for i in range(ho):
                for j in range(wo):
                    s = 0.0
                    for ci in range(cg):
                        for a in range(kh):
                            for e in range(kw):
                                s += xp[b, g * cg + ci, i * stride[0] + a, j * stride[1] + e] * w[o, ci, a, e]
                    out[b, o, i, j] = s
    return out


def unfold_by_index(w, scheme):
    """The matrices a scheme factorises, built element by element from the scheme's definition."""
    f, c, kh, kw = w.shape
    g = scheme.group
    if scheme.kind == "svd-spatial":
        m = np.zeros((1, f * kh, c * kw))
        for fi, ci, a, e in itertools.product(range(f), range(c), range(kh), range(kw)):
            m[0, fi * kh + a, ci * kw + e] = w[fi, ci, a, e]
        return m
    if scheme.kind == "svd-group-c":
        cg = c // g
        m = np.zeros((g, f, cg * kh * kw))
        for fi, ci, a, e in itertools.product(range(f), range(c), range(kh), range(kw)):
            m[ci // cg, fi, (ci % cg) * kh * kw + a * kw + e] = w[fi, ci, a, e]
        return m
    fg = f // g
    m = np.zeros((g, c, fg * kh * kw))
    for fi, ci, a, e in itertools.product(range(f), range(c), range(kh), range(kw)):
        m[fi // fg, ci, (fi % fg) * kh * kw + a * kw + e] = w[fi, ci, a, e]
    return m


def small_scheme_cases():
    """(F, C, scheme) for small layers, every scheme kind."""
    return st.sampled_from([(4, 6), (6, 4), (8, 8), (3, 5), (6, 6)]).flatmap(
        lambda fc: st.sampled_from(dec.schemes_for(dec.Geometry(fc[0], fc[1], 3, 3)) ).map(lambda s: (fc[0], fc[1], s)))


# ----------------------------------------------------------------------------- convolution


@settings(max_examples=10, deadline=None)
@given(st.integers(1, 2), st.sampled_from([(2, 1), (4, 2), (6, 3), (4, 4)]), st.integers(1, 3), st.integers(1, 3),
       st.integers(1, 2), st.integers(0, 1), st.integers(0, 10_000))
def test_conv2d_equals_loop_definition(n, cg, kh, kw, s, p, seed):
    c, groups = cg
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, c, 5, 4))
    w = rng.normal(size=(2 * groups, c // groups, kh, kw))
    want = loop_conv(x, w, (s, s), (p, p), groups)
    np.testing.assert_allclose(dec.conv2d(x, w, (s, s), (p, p), groups), want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(execute.conv2d_scipy(x, w, (s, s), (p, p), groups), want, rtol=1e-10, atol=1e-10)



def _scipy_per_plane(x, w, stride, padding, groups):
    """The oracle as one scipy.signal.correlate per (image, filter, input channel): execute's loop."""
    (ph, pw) = padding
    return execute._per_plane_correlations(np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw))), w, stride, groups)


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 3), st.integers(1, 2), st.integers(1, 4), st.integers(1, 4), st.integers(1, 3),
       st.integers(1, 3), st.integers(0, 8), st.integers(0, 8), st.integers(1, 2), st.integers(1, 2),
       st.integers(0, 1), st.integers(0, 1), st.sampled_from(["normal", "signed zeros", "wide range"]),
       st.integers(0, 10_000))
def test_conv2d_scipy_is_the_per_plane_scipy_loop_bit_for_bit(n, groups, cg, fg, kh, kw, dh, dw, sh, sw, ph, pw,
                                                              kind, seed):
    """conv2d_scipy computes scipy's direct sums for all planes at once (execute.py): every output
    bit, the signs of zeros included, is that of one scipy.signal.correlate per plane, and its
    shapes (up to 10 x 10 planes, 3 x 3 kernels) are those scipy's 'auto' computes directly."""
    from scipy.signal import choose_conv_method

    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, cg * groups, kh + dh, kw + dw))
    if kind == "signed zeros":
        x[x > 0] = -0.0
    elif kind == "wide range":
        x *= 10.0 ** rng.uniform(-8, 8, size=x.shape)
    w = rng.normal(size=(fg * groups, cg, kh, kw))
    plane = np.zeros((kh + dh + 2 * ph, kw + dw + 2 * pw))
    assert choose_conv_method(plane, w[0, 0], mode="valid") == "direct"
    got = execute.conv2d_scipy(x, w, (sh, sw), (ph, pw), groups)
    want = _scipy_per_plane(x, w, (sh, sw), (ph, pw), groups)
    assert got.shape == want.shape
    if platform.machine().lower() in ("x86_64", "amd64"):
        assert got.tobytes() == want.tobytes()
    else:  # scipy's C sums may be compiled with fused multiply-adds (aarch64): each of the kh*kw*cg terms
        # may round differently, so the difference is bounded by the sum of |x| |w|, not by ULPs of the result
        scale = execute.conv2d_scipy(np.abs(x), np.abs(w), (sh, sw), (ph, pw), groups)
        assert np.all(np.abs(got - want) <= 4 * kh * kw * cg * np.finfo(float).eps * scale)

# ----------------------------------------------------------------------------- SVD schemes


@settings(max_examples=20, deadline=None)
@given(small_scheme_cases(), st.integers(0, 10_000))
def test_full_rank_svd_reconstructs_every_scheme(case, seed):
    f, c, s = case
    if s.kind == "cpd":
        return
    w = np.random.default_rng(seed).normal(size=(f, c, 3, 3))
    r = dec.max_rank(dec.Geometry(f, c, 3, 3), s)
    ws = dec.svd_factors(w, s, r)
    np.testing.assert_allclose(dec.reconstruct(ws, s, w.shape), w, atol=1e-10)


@settings(max_examples=20, deadline=None)
@given(small_scheme_cases(), st.integers(0, 10_000), st.data())
def test_rank_r_error_is_root_of_dropped_squared_singular_values(case, seed, data):
    f, c, s = case
    if s.kind == "cpd":
        return
    w = np.random.default_rng(seed).normal(size=(f, c, 3, 3))
    mr = dec.max_rank(dec.Geometry(f, c, 3, 3), s)
    r = data.draw(st.integers(1, mr))
    sig = np.linalg.svd(unfold_by_index(w, s), compute_uv=False)  # the oracle's own unfolding
    want = math.sqrt(float((sig[:, r:] ** 2).sum()))
    got = float(np.linalg.norm(w - dec.reconstruct(dec.svd_factors(w, s, r), s, w.shape)))
    assert got == pytest.approx(want, rel=1e-9, abs=1e-9)
    # the truncation is the best rank-r fit: a least-squares fit on random rank-r left factors is never better
    m = unfold_by_index(w, s)
    a = np.random.default_rng(seed + 1).normal(size=(m.shape[0], m.shape[1], r))
    other = sum(np.linalg.norm(mi - ai @ np.linalg.lstsq(ai, mi, rcond=None)[0]) ** 2 for mi, ai in zip(m, a))
    assert got <= math.sqrt(other) + 1e-9


def test_svd_error_non_increasing_in_rank():
    w = np.random.default_rng(3).normal(size=(8, 6, 3, 3))
    s = dec.Scheme("svd-group-c", 2)
    errs = [np.linalg.norm(w - dec.svd_reconstruct(w, s, r)) for r in range(1, dec.max_rank(dec.Geometry(8, 6, 3, 3), s) + 1)]
    assert all(a >= b - 1e-12 for a, b in zip(errs, errs[1:]))
    assert errs[-1] < 1e-10


# ----------------------------------------------------------------------------- CPD


def _exact_rank_r(r, shape, seed):
    rng = np.random.default_rng(seed)
    facs = [rng.normal(size=(n, r)) for n in shape]
    return np.einsum("ar,br,cr,dr->abcd", *facs)  # an exact rank-r tensor, built independently


# CP-ALS is not guaranteed to recover an exact rank-r tensor from a random start once r >= 3: it
# can stall in a swamp (r=3, shape (5, 7, 3, 2), seed 1 ends at relative error 0.058 after 500
# sweeps; 4 of 720 rank-3/4 draws stay above 1e-6 even with three restarts). So recovery is a
# property for ranks 1 and 2, and fixed draws for ranks 3 and 4. Ranks 1-2 can still converge
# slowly: r=2, shape (8, 4, 3, 3), seed 139 is at 2.1e-6 after 500 sweeps, 5.7e-10 after 1,000 and
# 6.5e-13 after 2,000 (a draw the default profile found); seeds 0-1499 x the three shapes x ranks
# 1-2 (9,000 draws) have two above 1e-6 at 500 sweeps (that one and (5, 7, 3, 2) seed 1415) and
# none at 5,000. The tolerance stops every other draw long before.
@settings(max_examples=8, deadline=None)
@example(2, (8, 4, 3, 3), 139)
@example(2, (5, 7, 3, 2), 1415)
@given(st.integers(1, 2), st.sampled_from([(6, 5, 3, 3), (8, 4, 3, 3), (5, 7, 3, 2)]), st.integers(0, 10_000))
def test_cpd_recovers_an_exact_rank_r_tensor(r, shape, seed):
    x = _exact_rank_r(r, shape, seed)
    got, err = dec.cp_als(x, r, n_iter=5000, tol=1e-14, seed=seed)
    assert err < 1e-6
    np.testing.assert_allclose(dec.cp_to_tensor(got), x, atol=1e-5 * np.abs(x).max())


@pytest.mark.parametrize("r", [3, 4])
@pytest.mark.parametrize("shape", [(6, 5, 3, 3), (8, 4, 3, 3), (5, 7, 3, 2)])
def test_cpd_recovers_fixed_rank_3_and_4_tensors(r, shape):
    x = _exact_rank_r(r, shape, 0)
    got, err = dec.cp_als(x, r, n_iter=500, tol=1e-14, seed=0)
    assert err < 1e-6
    np.testing.assert_allclose(dec.cp_to_tensor(got), x, atol=1e-5 * np.abs(x).max())


def test_cpd_factors_shapes_and_error():
    w = np.random.default_rng(0).normal(size=(6, 4, 3, 3))
    ws, err = dec.cpd_factors(w, 5)
    assert [a.shape for a in ws] == [(5, 4, 1, 1), (5, 1, 3, 1), (5, 1, 1, 3), (6, 5, 1, 1)]
    recon = dec.reconstruct(ws, dec.Scheme("cpd"), w.shape)
    assert float(np.linalg.norm(w - recon) / np.linalg.norm(w)) == pytest.approx(err, rel=1e-9)
    assert 0 < err < 1


# ----------------------------------------------------------------------------- factorised = reconstructed


@settings(max_examples=25, deadline=None)
@given(small_scheme_cases(), st.integers(1, 2), st.integers(0, 1), st.integers(0, 10_000), st.data())
def test_factorised_layer_equals_convolution_with_reconstructed_weight(case, stride, pad, seed, data):
    f, c, s = case
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(f, c, 3, 3))
    geo = dec.Geometry(f, c, 3, 3, stride, stride, pad, pad, 5, 6)
    r = data.draw(st.integers(1, min(dec.max_rank(geo, s), 6)))
    ws, recon = dec.decompose(w, geo, s, r, n_iter=20)
    x = rng.normal(size=(1, c, 5, 6))
    y = dec.run_factors(x, ws, geo, s)
    want = loop_conv(x, recon, (stride, stride), (pad, pad))
    np.testing.assert_allclose(y, want, rtol=1e-9, atol=1e-9 * np.abs(want).max())
    assert y.shape == (1, f, geo.ho, geo.wo)


# ----------------------------------------------------------------------------- closed forms


def test_closed_forms_by_hand_resnet18_layer2_0_2():
    # 128 -> 128 channels, 3x3, stride 1, 28x28 output (784 pixels)
    g = dec.Geometry(128, 128, 3, 3, 1, 1, 1, 1, 28, 28, "layer2.0.2.conv")
    assert dec.dense_macs(g) == 784 * 128 * 128 * 9 == 115_605_504
    assert dec.per_rank_macs(g, dec.Scheme("svd-spatial")) == 784 * (128 * 3 + 128 * 3) == 602_112
    assert dec.per_rank_macs(g, dec.Scheme("svd-group-c", 4)) == 784 * 4 * (128 + 32 * 9) == 1_304_576
    assert dec.per_rank_macs(g, dec.Scheme("svd-group-f", 8)) == 784 * 8 * (128 + 16 * 9) == 1_705_984
    assert dec.per_rank_macs(g, dec.Scheme("cpd")) == 784 * (128 + 3 + 3 + 128) == 205_408
    assert dec.per_rank_params(g, dec.Scheme("svd-spatial")) == 768
    assert dec.per_rank_params(g, dec.Scheme("cpd")) == 262
    assert dec.max_rank(g, dec.Scheme("svd-spatial")) == 384
    assert dec.max_rank(g, dec.Scheme("svd-group-c", 4)) == min(128, 32 * 9) == 128
    assert dec.max_rank(g, dec.Scheme("cpd")) == 128 * 3 * 3  # product of all dims but the largest


def test_candidate_ranks_by_hand():
    """ranks floor(115605504 q / 602112) for q = 0.70..0.30 are 134 124 115 105 96 86 76 67 57; extended
    by 144 and 47; each interval's integer with the most divisors: [134,144) -> 140 (12 divisors),
    [124,134) -> 126 (first of 126, 132), [115,124) -> 120 (16), [105,115) -> 108, [96,105) -> 96,
    [86,96) -> 90, [76,86) -> 84, [67,76) -> 72, [57,67) -> 60, [47,57) -> 48."""
    g = dec.Geometry(128, 128, 3, 3, 1, 1, 1, 1, 28, 28)
    assert dec.candidate_ranks(g, dec.Scheme("svd-spatial")) == [140, 126, 120, 108, 96, 90, 84, 72, 60, 48]
    assert dec.divisors(140) == [1, 2, 4, 5, 7, 10, 14, 20, 28, 35, 70, 140]


@settings(max_examples=25, deadline=None)
@given(small_scheme_cases(), st.integers(1, 2), st.integers(1, 4), st.data())
def test_factor_shape_counts_equal_closed_forms_and_increase_in_rank(case, stride, half, data):
    f, c, s = case
    # closed forms assume h = ho x stride (so the 1x1 on the input sees ho wo s^2 pixels)
    h = 2 * half * stride
    geo = dec.Geometry(f, c, 3, 3, stride, stride, 1, 1, h, h)
    assert geo.ho * stride == h
    mr = dec.max_rank(geo, s)
    prev = None
    for r in sorted({1, mr, data.draw(st.integers(1, mr))}):
        fl = dec.factor_layers(geo, s, r)
        macs, params = sum(x.macs for x in fl), sum(x.params for x in fl)
        assert macs == r * dec.per_rank_macs(geo, s)
        assert params == r * dec.per_rank_params(geo, s)
        if prev is not None:
            assert macs > prev[0] and params > prev[1]
        prev = (macs, params)


def test_rank_beyond_maximum_is_one_line():
    g = dec.Geometry(128, 128, 3, 3, 1, 1, 1, 1, 28, 28, "layer2.0.2.conv")
    with pytest.raises(TechniqueError) as e:
        dec.factor_layers(g, dec.Scheme("svd-spatial"), 400)
    assert str(e.value) == "mixed-td: rank 400 exceeds the maximum 384 of layer2.0.2.conv under svd-spatial"
    with pytest.raises(TechniqueError, match="group 3 does not divide C=128"):
        dec.max_rank(g, dec.Scheme("svd-group-c", 3))


# ----------------------------------------------------------------------------- folding model


def stage(cin, cout, k=3, pix=1, groups=1):
    return dec.FactorLayer(cin, cout, k, k, 1, 1, 0, 0, groups, pix, 1)


def test_ladder_by_hand():
    # cin 4 (1,2,4), cout 6 (1,2,3,6), kernel 9 (1,3,9): the cheapest next divisor each rung
    p, cy = model.ladder(stage(4, 6, 3, pix=10))
    assert list(p) == [1, 2, 4, 8, 12, 24, 72, 216]
    assert list(cy) == [2160 / q for q in (1, 2, 4, 8, 12, 24, 72, 216)]
    assert list(model.all_foldings(stage(4, 6, 3))[:6]) == [1, 2, 3, 4, 6, 8]


def test_greedy_can_be_worse_than_brute_force():
    """One stage, budget 3 DSPs: the ladder goes 1 -> 2 -> 4, so the greedy stops at p = 2, while
    fine = 3 alone fits; brute force finds p = 3, 1.5x fewer cycles. A known gap, kept."""
    s = [stage(4, 6, 3, pix=10)]
    g = model.greedy_fold(s, 3)
    b = model.brute_force_fold(s, 3)
    assert g[0] == 2160 / 2 and g[1] == 2
    assert b == (2160 / 3, 3)


def test_greedy_two_stages_by_hand():
    """Stage A: 8x8 channels, 1x1, 100 pixels = 6400 MACs; stage B: 2x2, 1x1, 100 pixels = 400 MACs.
    Budget 20: A climbs 1,2,4,8,16 (cycles 400 at 16 DSPs) while B (400 cycles at p = 1) ties; B can
    go to p = 2 (18 DSPs), A to 32 would need 34: level = max(400, 200) = 400 with A at 16, B at 1."""
    a, b = stage(8, 8, 1, pix=100), stage(2, 2, 1, pix=100)
    cyc, dsps, rung = model.greedy_fold([a, b], 20)
    assert cyc == 400 and dsps == 17  # B released back to p = 1: the level does not need it
    assert model.brute_force_fold([a, b], 20) == (400, 17)


@settings(max_examples=20, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([1, 2, 3, 4, 6]), st.sampled_from([1, 2, 4, 6]),
                          st.sampled_from([1, 3]), st.integers(1, 20)), min_size=1, max_size=3),
       st.integers(1, 120))
def test_greedy_never_beats_brute_force(specs, budget):
    stages = [stage(a, b, k, pix) for a, b, k, pix in specs]
    g = model.greedy_fold(stages, budget)
    b = model.brute_force_fold(stages, budget)
    assert (g is None) == (b is None)
    if g is not None:
        assert g[0] >= b[0] - 1e-9


def test_dense_resnet18_on_u250_by_hand():
    """All 16 3x3 convs of ResNet-18 have 115,605,504 MACs per image; 16 x 1024 DSPs would exceed
    12,288, so they stop at p = 512: 225,792 cycles, 200 MHz / 225,792 = 885.77 images/s."""
    net = model.build_network(_zoo("resnet-18"))
    assert len(net.candidates) == 16  # 3x3, groups 1, more than 3 input channels (the zoo's 7x7 stem excluded)
    ev = model.evaluate_designs(net, np.zeros((1, 16), dtype=np.int64), U250)
    assert ev["cycles"][0] == 115_605_504 / 512 == 225_792
    assert ev["throughput"][0] == pytest.approx(200e6 / 225_792, rel=1e-12)
    assert ev["spilled_bytes"][0] == 0  # 11.68 MB of 8-bit weights fit the 59.6 MB of BRAM + URAM
    # 8-bit weights: ResNet-18's 11,689,512 parameters less 9,600 batch-norm and 1,000 fc-bias values
    assert ev["weight_bytes"][0] == 11_689_512 - 9_600 - 1_000


def test_vectorised_equals_step_by_step_greedy():
    net = model.build_network(_zoo("resnet-18"))
    rng = np.random.default_rng(7)
    d = np.stack([rng.integers(0, k, size=8) for k in net.n_cands], axis=1)
    ev = model.evaluate_designs(net, d, U250)
    for i in range(len(d)):
        ref = model.design_metrics(net, d[i], U250)
        assert ref["throughput"] == pytest.approx(ev["throughput"][i], rel=1e-12)
        assert ref["dsps"] == ev["dsps"][i]


def test_prior_equals_scipy_stats_norm():
    from scipy.stats import norm

    net = model.build_network(_zoo("resnet-18"))
    for mean in (0.32, 0.61, -0.1, 1.2):
        got = model._prior(net, mean)
        for l, row in enumerate(net.candidates):  # the binning of _prior, with scipy.stats' CDF
            base, step = row[0].macs, 0.05
            bins = [min(int(math.ceil(c.macs / base / step - 1e-9)) - 1, int(round(1 / step)) - 1) for c in row]
            want = np.zeros(len(row))
            for b in set(bins):
                members = [i for i, x in enumerate(bins) if x == b]
                want[members] = (norm.cdf((b + 1) * step, mean, 0.15) - norm.cdf(b * step, mean, 0.15)) / len(members)
            want = np.ones(len(row)) if want.sum() <= 0 else want
            np.testing.assert_allclose(got[l], want / want.sum(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["resnet-18", "digits"])
def test_searchsorted_levels_equal_the_bisection_bit_for_bit(name):
    # the one-searchsorted level lookup against the row-by-row bisection it replaced, on every figure
    net = model.build_network(_zoo(name) if name != "digits" else digits_cnn())
    rng = np.random.default_rng(3)
    d = np.stack([rng.integers(0, k, size=64) for k in net.n_cands], axis=1)
    for res, dpm in ((U250, 1.0), (dataclasses.replace(U250, dsps=300), 0.5), (dataclasses.replace(U250, dsps=9), 2.0)):
        fast = model.evaluate_designs(net, d, res, dpm)
        ref = model.evaluate_designs(net, d, res, dpm, method="bisect")
        assert fast.keys() == ref.keys()
        for k in fast:
            assert np.array_equal(fast[k], ref[k]), k
    assert net.cand_tables(1.0)["keys"] is not None  # integer cycles: the fast path is the one taken
    with pytest.raises(ValueError, match="method"):
        model.evaluate_designs(net, d, U250, method="linear")


@pytest.mark.parametrize("name", ["resnet-18", "digits"])
def test_stacked_step_functions_equal_the_row_by_row_ones(name):
    # every candidate's step function built for all candidates at once against the one-candidate
    # function (the path a network without integer, nonincreasing cycles takes), entry by entry
    net = model.build_network(_zoo(name) if name != "digits" else digits_cnn())
    ids = np.concatenate([net.stage_ids[l, :len(r)] for l, r in enumerate(net.candidates)])
    for dpm in (0.5, 1.0, 2.0):
        DS = net.dsp_table(dpm)
        b, d, n, hi, lo, w = model._step_functions_stacked(net.CY, DS, net.W, ids)
        assert len(n) == len(ids) and n.max() > 1
        for c, row in enumerate(ids):
            rb, rd, rhi, rlo, rw = model._step_function(net.CY, DS, net.W, [int(i) for i in row if i])
            assert n[c] == len(rb) and np.array_equal(b[c, :n[c]], rb) and np.array_equal(d[c, :n[c]], rd), c
            assert (hi[c], lo[c], w[c]) == (rhi, rlo, rw), c


@pytest.mark.parametrize("name", ["resnet-18", "digits"])
def test_cand_tables_row_by_row_path_equals_the_stacked_one(name, monkeypatch):
    # cand_tables' fallback (a network whose cycles are not integer or not nonincreasing builds each
    # candidate's step function alone) against the stacked path, every key, on real networks
    net = model.build_network(_zoo(name) if name != "digits" else digits_cnn())  # one object per workload (cached)
    monkeypatch.setattr(net, "_ctab", {}, raising=False)  # built here, not served from the network's cache (which
    want = {dpm: net.cand_tables(dpm) for dpm in (0.5, 2.0)}  # a search adds its own entries to)
    monkeypatch.setattr(net, "_ctab", {}, raising=False)
    monkeypatch.setattr(model, "_step_functions_stacked", lambda *a: None)
    for dpm, w in want.items():
        got = net.cand_tables(dpm)
        assert got is not w
        assert got.keys() == w.keys()
        for k in w:
            if isinstance(w[k], np.ndarray):
                assert np.array_equal(got[k], w[k]), (dpm, k)
            else:
                assert got[k] == w[k], (dpm, k)


def test_step_function_by_hand():
    # two stages: cycles (8, 4, 2) and (6, 3, 3) per rung, DSPs (1, 2, 4) and (1, 2, 2), weights 5 and 7
    CY = np.array([[0, 0, 0], [8, 4, 2], [6, 3, 3]], float)
    DS = np.array([[0, 0, 0], [1, 2, 4], [1, 2, 2]])
    W = np.array([0.0, 5.0, 7.0])
    b, d, hi, lo, w = model._step_function(CY, DS, W, [1, 2])
    # at T = 2 stage 1 is at rung 2 (4 DSPs), stage 2 cannot reach 2 cycles: infeasible; T = 3: 4 + 2;
    # T = 4: 2 + 2; T = 6: 2 + 1 (stage 1 at rung 1 still: 8 > 6); T = 8: 1 + 1
    assert b.tolist() == [2, 3, 4, 6, 8] and d.tolist() == [1e18, 6, 4, 3, 2] and (hi, lo, w) == (8, 3, 12)
    stacked = model._step_functions_stacked(CY, DS, W, np.array([[1, 2], [0, 0], [2, 0]]))
    assert stacked[0][0].tolist() == b.tolist() and stacked[1][0].tolist() == d.tolist()
    assert stacked[2].tolist() == [5, 1, 2] and stacked[3].tolist() == [8, 0, 6] and stacked[5].tolist() == [12, 0, 7]
    assert model._step_functions_stacked(CY[:, ::-1].copy(), DS, W, np.array([[1, 2]])) is None  # cycles rising


@pytest.mark.parametrize("name", ["resnet-18", "digits"])
def test_breakpoint_level_search_equals_the_integer_bisection(name):
    # the bisection over breakpoint indices against the integer bisection of [a, hi] it replaced,
    # from budgets where nothing fits (the answer is hi) to budgets where full unrolling fits
    net = model.build_network(_zoo(name) if name != "digits" else digits_cnn())
    rng = np.random.default_rng(5)
    d = np.stack([rng.integers(0, k, size=48) for k in net.n_cands], axis=1)
    for dpm in (0.5, 1.0, 2.0):
        t = net.cand_tables(dpm)
        U, F = model._level_table(t)  # the fast path is the one taken
        rows = t["bp"].reshape(-1, t["width"])
        for c in rng.integers(0, len(rows), size=40):  # each entry: the row's DSPs at its count <= U
            cnt = np.searchsorted(rows[c], U, side="right")
            want = np.where(cnt == 0, 1e18, t["dsp"][c * t["width"] + np.maximum(cnt - 1, 0)])
            assert np.array_equal(F[c], want)
        model._StepTables(t, d, "searchsorted")  # a search's first evaluation: the table pays from the second
        stt = model._StepTables(t, d, "searchsorted")
        assert stt.levels is not None  # the breakpoint-table path is the one compared (else both sides bisect)
        hi, lo = t["hi"][stt.cids].max(axis=1), t["lo"][stt.cids].max(axis=1)
        for budget in (1.0, 9.0, 300.0, 2000.0, 12288.0, 1e6, 1e12):
            a = np.maximum(lo, np.floor(dpm * t["macs"][stt.cids].sum(axis=1) / budget))
            got = model._lowest_fitting_level(stt, t, lo, hi, budget, dpm)
            assert np.array_equal(got, model._bisect_level(stt, a, hi, budget)), (dpm, budget)


@settings(max_examples=10, deadline=None)
@given(st.sampled_from([0.25, 0.5, 1.0, 1.5, 2.0]), st.integers(8, 3000), st.sampled_from([1e3, 5e3, 1e9]),
       st.integers(0, 1000))
def test_vectorised_equals_greedy_any_dsp_cost_budget_and_spill(dpm, budget, onchip, seed):
    net = model.build_network(digits_cnn())
    res = model.Resources(dsps=budget, on_chip_bytes=onchip, clock=1e8, dram_bw=1e9)
    rng = np.random.default_rng(seed)
    d = np.stack([rng.integers(0, k, size=6) for k in net.n_cands], axis=1)
    ev = model.evaluate_designs(net, d, res, dpm)
    for i in range(len(d)):
        ref = model.design_metrics(net, d[i], res, dpm)
        assert ref["throughput"] == pytest.approx(ev["throughput"][i], rel=1e-12, abs=0)
        assert ref["dsps"] == ev["dsps"][i]
        assert ref["spilled_bytes"] == ev["spilled_bytes"][i]


@settings(max_examples=10, deadline=None)
@given(st.integers(16, 30000), st.integers(0, 1000))
def test_throughput_non_decreasing_in_dsp_budget(budget, seed):
    net = model.build_network(digits_cnn())
    rng = np.random.default_rng(seed)
    d = np.stack([rng.integers(0, k, size=10) for k in net.n_cands], axis=1)
    r1 = dataclasses.replace(U250, dsps=budget)
    r2 = dataclasses.replace(U250, dsps=budget + int(rng.integers(1, 5000)))
    t1, t2 = model.evaluate_designs(net, d, r1)["throughput"], model.evaluate_designs(net, d, r2)["throughput"]
    assert (t2 >= t1).all()


def test_dram_matters_only_when_weights_spill():
    net = model.build_network(_zoo("resnet-18"))
    d = np.zeros((1, 16), dtype=np.int64)
    fits = model.evaluate_designs(net, d, U250)
    slow = model.evaluate_designs(net, d, dataclasses.replace(U250, dram_bw=1e6))
    assert slow["throughput"][0] == fits["throughput"][0]
    tiny = dataclasses.replace(U250, on_chip_bytes=1e6)
    sp = model.evaluate_designs(net, d, tiny)
    # (11,678,912 - 1,000,000) B / 12.5 GB/s = 0.854 ms per image < 225,792 / 200 MHz = 1.129 ms: compute-bound
    assert sp["spilled_bytes"][0] == 11_678_912 - 1_000_000
    t_dram = (11_678_912 - 1_000_000) / 12.5e9
    assert sp["throughput"][0] == pytest.approx(1 / max(225_792 / 200e6, t_dram), rel=1e-12)
    half = model.evaluate_designs(net, d, dataclasses.replace(tiny, dram_bw=12.5e9 / 4))
    assert half["throughput"][0] == pytest.approx(12.5e9 / 4 / (11_678_912 - 1_000_000), rel=1e-12)


def test_search_meets_both_constraints_and_is_seeded():
    net = model.build_network(_zoo("resnet-18"))
    kw = dict(ratio=0.65, macs_target=0.65, generations=15, prior_mean=0.32)
    a = model.search(net, U250, seed=1, **kw)
    b = model.search(net, U250, seed=1, **kw)
    assert np.array_equal(a.design, b.design)
    assert a.evaluations == 100 + 14 * 100
    dense = model.evaluate_designs(net, np.zeros((1, 16), dtype=np.int64), U250)
    assert a.feasible
    assert a.metrics["macs"] <= 0.65 * net.dense_macs
    assert a.metrics["throughput"] >= dense["throughput"][0] / 0.65



def test_memoised_score_evaluates_each_distinct_design_once_with_the_same_bits():
    # the search's score remembered per design row: a generation's repeats are not evaluated again,
    # and every row's figures are those of evaluating it alone (score: the evaluator's throughput)
    net = model.build_network(_zoo("resnet-18"))
    calls = []

    def score(d):
        calls.append(len(d))
        ev = model.evaluate_designs(net, d, U250)
        return ev["throughput"], ev["feasible_fold"]

    rng = np.random.default_rng(3)
    base = (rng.random((6, 16)) * net.n_cands[None, :]).astype(np.int64)
    first = base[[0, 1, 0, 2, 1, 0]]
    second = base[[3, 0, 4, 3, 5, 2]]
    f = model._memoised(score)
    s1, k1 = f(first)
    s2, k2 = f(second)
    assert calls == [3, 3]  # rows 0, 1, 2; then 3, 4, 5 (0 and 2 remembered)
    for got, feas, designs in ((s1, k1, first), (s2, k2, second)):
        for row, v, ok in zip(designs, got, feas):
            alone = model.evaluate_designs(net, row[None, :], U250)
            assert v == alone["throughput"][0] and ok == alone["feasible_fold"][0]


# ----------------------------------------------------------------------------- workloads


def test_repvgg_a0_deploy_matches_the_paper():
    w = repvgg_a0()
    assert math.floor(w.params / 1e4) / 100 == REPVGG_A0_PUBLISHED_PARAMS_M  # Table 4 prints 8.30 M
    assert w.params == 8_309_384
    convs = [l for l in w.layers if l.kind == "conv"]
    assert [l.output_shape[0] for l in convs] == [48] + [48] * 2 + [96] * 4 + [192] * 14 + [1280]
    assert sum(model.is_target(l) for l in w.layers) == 21
    assert sum(l.attrs["macs"] for l in convs) + 1280 * 1000 == pytest.approx(1.36e9, rel=0.01)  # Table 4: 1.4 B


# ----------------------------------------------------------------------------- technique


def _scen(variant="mixed-td", fidelity="model", profile="xilinx-alveo-u250", workload="resnet-18", **params):
    return resolve_case(TECHNIQUE, ScenarioSpec(variant=variant, fidelity=fidelity, profile=profile,
                                                workload=workload, params=params)).scenario


def test_model_variants_on_u250():
    dense = TECHNIQUE.evaluate(_scen("dense"))
    assert dense["speedup"] == 1.0 and dense["per_dsp_gain"] == 1.0 and dense["feasible"] == 1.0
    assert dense["throughput"] == pytest.approx(200e6 / 225_792)
    for v in ("svd-only", "cpd-only", "mixed-td"):
        r = TECHNIQUE.evaluate(_scen(v, generations=10))
        assert r["feasible"] == 1.0, v
        assert r["speedup"] >= 1 / 0.65 - 1e-9 and r["macs_ratio"] <= 0.65 + 1e-12, v
        kinds = {row["choice"].split("@")[0].split(":")[0] for row in r.artifacts["layers"]}
        if v == "svd-only":
            assert "cpd" not in kinds
        if v == "cpd-only":
            assert kinds <= {"cpd", "keep"}


def test_skips_and_bad_input():
    with pytest.raises(Skip, match="profile 'nvidia-a100-sxm4-80gb' has no \\[ext.fpga\\]"):
        TECHNIQUE.evaluate(_scen("dense", profile="nvidia-a100-sxm4-80gb"))
    with pytest.raises(Skip, match="not a layer table"):
        TECHNIQUE.evaluate(_scen("dense", workload="digits"))
    with pytest.raises(ParameterError) as e:
        TECHNIQUE.validate_params({"ratio": 1.5})
    assert str(e.value) == "mixed-td: parameter 'ratio': expected <= 1.0, got 1.5"
    with pytest.raises(Skip, match="dsp_budget 3 is below"):
        TECHNIQUE.evaluate(_scen("dense", dsp_budget=3))


def test_ext_fpga_overrides_with_units():
    """An override leaves a unit string in [ext.fpga]: 100 MHz is read as 1e8 Hz, a bad one is one line."""
    from suite.errors import ProfileError
    from session_context import session_context

    u250 = session_context().profile("xilinx-alveo-u250")
    res = model.resources_of(u250.with_overrides({"ext.fpga.clock": "100 MHz", "ext.fpga.memory_bandwidth": "50 Gbit/s"}))
    assert res.clock == 1e8 and res.dram_bw == 6.25e9 and res.on_chip_bytes == 59_572_224
    with pytest.raises(ProfileError, match="field ext.fpga.clock: expected a frequency"):
        model.resources_of(u250.with_overrides({"ext.fpga.clock": "fast"}))


def test_execute_digits_oracles_and_accuracy():
    r = TECHNIQUE.evaluate(_scen("mixed-td", fidelity="execute", workload="digits"))
    assert r["oracle_error"] < 1e-10 and r["eckart_young_error"] < 1e-10
    assert r["accuracy_dense"] > 0.8  # 10 classes: chance is 0.1
    assert r["accuracy"] <= r["accuracy_dense"] + 0.02
    assert r["macs_ratio"] <= 0.65 + 1e-12
    assert [row["layer"] for row in r.artifacts["layers"]] == ["conv2", "conv3"]


def test_execute_layer_table_he_weights():
    r = TECHNIQUE.evaluate(_scen("svd-only", fidelity="execute", workload="resnet-18", execute_layers=1))
    assert r["oracle_error"] < 1e-10 and r["eckart_young_error"] < 1e-10
    # random He weights have a flat spectrum: keeping 65% of the MACs leaves a large error
    assert 0.2 < r["output_rel_error"] < 1.0
    assert 0.2 < r["weight_rel_error"] < 1.0
    d = TECHNIQUE.evaluate(_scen("dense", fidelity="execute", workload="resnet-18", execute_layers=1))
    assert d["output_rel_error"] == 0.0 and d["weight_rel_error"] == 0.0


def test_claims_metadata_and_derive():
    assert [c.id for c in CLAIMS] == ["resnet18-per-dsp", "repvgga0-per-dsp"]
    for c in CLAIMS:
        assert c.verified and c.source == "abstract"
        assert c.expect.low == pytest.approx(1.584) and c.expect.high == pytest.approx(12.148)
        assert {n.label.split(" ")[0] for n in c.nulls} == {"dense", "search"}
        floor = [n.value for n in c.nulls if n.value is not None][0]
        assert not c.expect.check(floor)  # the search floor lies outside the band
        assert not c.expect.check(1.0)

    from suite import Result
    a, b = Result().add("throughput_per_dsp", 3.0, "1/s"), Result().add("throughput_per_dsp", 1.5, "1/s")
    assert per_dsp_gain({"mixed": a, "dense": b}) == 2.0


def test_conformance_kit():
    from suite.testing import check_technique

    rep = check_technique(TECHNIQUE, max_examples=3)
    assert rep.outcomes["properties"] == "passed"


def test_per_dsp_claims_name_the_unnamed_baseline_and_each_its_own_flip():
    """Audit 11b A5: the per-DSP objective (ResNet-18 3.98, RepVGG-A0 5.16, both inside [1.584, 12.148]) is the
    only flip, and the page rules it out as the paper's objective, so the class is the unnamed compared
    accelerators (baseline not modelled, was setup unknown); RepVGG's flip quoted ResNet-18's 3.98."""
    claims = {c.id: c for c in TECHNIQUE.claims}
    for cid, want in (("resnet18-per-dsp", 3.975), ("repvgga0-per-dsp", 5.156)):
        c = claims[cid]
        specs = {k: dataclasses.replace(s, params={**s.params, "objective": "per-dsp"}) for k, s in c.specs().items()}
        v = c.value({k: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario) for k, s in specs.items()})
        assert v == pytest.approx(want, abs=5e-3) and c.expect.check(v)
        assert c.reason_class == "baseline not modelled" and f"{want:.2f}" in c.assumptions[0].flip_at
