"""Shapes and MAC counts of the builder against a direct numpy computation of the same op."""

from __future__ import annotations

import numpy as np
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from suite.workloads.cnn import CNNBuilder


def _conv_numpy(x, w, stride, pad, dil, groups):
    """Direct grouped, strided, dilated convolution; returns (output, multiply-adds performed)."""
    c, h, wd = x.shape
    out, cin_g, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
    span_h, span_w = dil * (kh - 1) + 1, dil * (kw - 1) + 1
    ho = len(range(0, xp.shape[1] - span_h + 1, stride))
    wo = len(range(0, xp.shape[2] - span_w + 1, stride))
    y = np.zeros((out, ho, wo))
    macs = 0
    og = out // groups
    for o in range(out):
        g = o // og
        xs = xp[g * cin_g:(g + 1) * cin_g]
        for i in range(ho):
            for j in range(wo):
                patch = xs[:, i * stride:i * stride + span_h:dil, j * stride:j * stride + span_w:dil]
                y[o, i, j] = np.sum(patch * w[o])
                macs += patch.size
    return y, macs


def _deconv_numpy(x, w, stride, pad, out_pad):
    """Transpose convolution by scattering every input element through the kernel."""
    c, h, wd = x.shape
    _, cout, kh, kw = w.shape
    full = np.zeros((cout, (h - 1) * stride + kh + out_pad, (wd - 1) * stride + kw + out_pad))
    macs = 0
    for ci in range(c):
        for i in range(h):
            for j in range(wd):
                full[:, i * stride:i * stride + kh, j * stride:j * stride + kw] += x[ci, i, j] * w[ci]
                macs += cout * kh * kw
    hs, ws = full.shape[1] - 2 * pad, full.shape[2] - 2 * pad
    return full[:, pad:pad + hs, pad:pad + ws], macs


@settings(max_examples=25)
@given(g=st.integers(1, 2), cin_g=st.integers(1, 2), og=st.integers(1, 2), h=st.integers(3, 7), w=st.integers(3, 7),
       k=st.integers(1, 3), s=st.integers(1, 3), p=st.integers(0, 2), d=st.integers(1, 2))
def test_conv_shape_and_macs_match_direct_convolution(g, cin_g, og, h, w, k, s, p, d):
    assume(d * (k - 1) + 1 <= min(h, w) + 2 * p)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(g * cin_g, h, w))
    wt = rng.normal(size=(g * og, cin_g, k, k))
    y, macs = _conv_numpy(x, wt, s, p, d, g)
    b = CNNBuilder("t", x.shape)
    b.conv(b.input, g * og, k, s, p, d, groups=g, bias=True, name="c")
    layer = b.layers[0]
    assert layer.output_shape == y.shape
    assert layer.attrs["macs"] == macs and layer.fwd_flops == 2 * macs
    assert layer.params == wt.size + g * og


@settings(max_examples=25)
@given(c=st.integers(1, 3), co=st.integers(1, 3), h=st.integers(1, 5), k=st.integers(1, 5), s=st.integers(1, 3),
       p=st.integers(0, 2), op=st.integers(0, 2))
def test_deconv_shape_and_macs_match_scatter(c, co, h, k, s, p, op):
    assume(op < s and (h - 1) * s + k + op - 2 * p > 0)  # PyTorch requires output_padding < stride
    rng = np.random.default_rng(1)
    x = rng.normal(size=(c, h, h))
    wt = rng.normal(size=(c, co, k, k))
    y, macs = _deconv_numpy(x, wt, s, p, op)
    b = CNNBuilder("t", x.shape)
    b.deconv(b.input, co, k, s, p, output_padding=op, bias=False, name="d")
    layer = b.layers[0]
    assert layer.output_shape == y.shape
    assert layer.attrs["macs"] == macs and layer.params == wt.size


def test_fc_flops_equal_a_matmul():
    rng = np.random.default_rng(2)
    x, wt = rng.normal(size=(7,)), rng.normal(size=(5, 7))
    b = CNNBuilder("t", (7,))
    b.fc(b.input, 5, name="fc")
    layer = b.layers[0]
    assert layer.output_shape == (wt @ x).shape
    assert layer.fwd_flops == 2 * wt.size and layer.grad_shape == wt.shape
