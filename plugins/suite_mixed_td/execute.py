"""Mixed-TD's execute fidelity: real decompositions of real weights, run as real convolutions.

Two inputs:

* ``digits`` (scikit-learn's bundled 8x8 digits): a small CNN (conv 1->8, conv 8->16, conv 16->16
  stride 2, global average pool, fc 16->10; 3x3 kernels, ReLU) trained here in numpy (seeded,
  Adam); its two target convs (3x3, more than 3 input channels) are decomposed under the variant's
  methods and the decomposed network is scored on the held-out quarter **without fine-tuning**
  (the authors fine-tune on ImageNet; not possible offline). Metric ``accuracy_drop``.
* a layer-table workload (``resnet-18``, ``mixed-td-repvgg-a0``): the first ``execute_layers``
  target convs with seeded He-normal weights, on random inputs; metric ``output_rel_error`` of the
  factorised layer against the dense one.

Per target layer the choice is the candidate (scheme, rank from
:func:`~suite_mixed_td.decompose.candidate_ranks`) with MACs <= ``ratio`` x dense and the smallest
relative weight error: the variant fixes which methods compete (``svd-only``, ``cpd-only``,
``mixed-td``: both; ``dense``: none). This per-layer greedy stands in for the authors' accuracy-driven
search (no ImageNet here).

Oracles, reported as metrics (the evaluate raises if one fails):

* ``oracle_error``: every factorised layer's output (its factor convolutions run in sequence)
  against :func:`scipy.signal.correlate` applied with the weight reconstructed from the factors;
* ``eckart_young_error``: for every SVD choice, ``| ||W - W_r||_F - sqrt(sum_{i>r} sigma_i^2) |``
  relative to ``||W||_F`` [EY36].
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from suite_mixed_td import decompose as dec
from suite_mixed_td import model

__all__ = ["DigitsCNN", "train_digits_cnn", "conv2d_scipy", "choose", "evaluate", "ORACLE_TOL"]

#: Largest relative oracle error accepted (float64 arithmetic; anything above is a bug).
ORACLE_TOL = 1e-8


def conv2d_scipy(x, w, stride=(1, 1), padding=(0, 0), groups: int = 1):
    """Reference convolution from :func:`scipy.signal.correlate` (an implementation independent of
    :func:`suite_mixed_td.decompose.conv2d`): per (image, filter, input channel) a 'valid'
    correlation of the zero-padded plane, summed over the input channels, subsampled by the stride.

    Where scipy's ``method="auto"`` takes its direct method (float64 planes and kernels as small as
    the execute fidelity's: an 8 x 8 input patch, 3 x 3 kernels), the correlations run for every
    image and filter at once as :func:`_direct_correlations`: scipy's direct sums, term by term in
    its order, so the output is bit for bit the per-plane loop's on x86-64 (tests/plugins/test_mixed_td.py
    compares them on random shapes, strides, paddings and groups; where scipy's C sums are compiled
    with fused multiply-adds, aarch64, the last bits may differ); the per-plane loop's scipy calls cost
    the 4 execute smoke cases 1.29 s against 0.34 s (docs/performance-history.md, "Plugin computation
    under the tests, 0.3.6"). Other inputs run the per-plane loop.
    """
    ph, pw = padding
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    if _scipy_takes_direct(xp, w):
        return _direct_correlations(xp, w, stride, groups)
    return _per_plane_correlations(xp, w, stride, groups)


def _out_shape(xp, w, stride) -> tuple[int, int]:
    """(Ho, Wo) of a strided 'valid' correlation of the padded input *xp* with *w*."""
    return (xp.shape[2] - w.shape[2]) // stride[0] + 1, (xp.shape[3] - w.shape[3]) // stride[1] + 1


def _scipy_takes_direct(xp, w) -> bool:
    """Whether :func:`scipy.signal.correlate` (``method="auto"``) computes one plane of *xp* with
    one kernel of *w* by its direct sums: float64 inputs, and its choice, which for floating
    inputs depends on the shapes only."""
    from scipy.signal import choose_conv_method

    if xp.dtype != np.float64 or w.dtype != np.float64 or 0 in xp.shape or 0 in w.shape:
        return False
    return choose_conv_method(xp[0, 0], w[0, 0, ::-1, ::-1], mode="valid") == "direct"


def _per_plane_correlations(xp, w, stride, groups: int):
    """One :func:`scipy.signal.correlate` per (image, filter, input channel) of the padded *xp*."""
    from scipy.signal import correlate

    n = xp.shape[0]
    f, cg = w.shape[:2]
    fg = f // groups
    ho, wo = _out_shape(xp, w, stride)
    out = np.zeros((n, f, ho, wo))
    for i in range(n):
        for o in range(f):
            gi = o // fg
            acc = 0.0
            for j in range(cg):
                acc = acc + correlate(xp[i, gi * cg + j], w[o, j], mode="valid")
            out[i, o] = acc[::stride[0], ::stride[1]][:ho, :wo]
    return out


def _direct_correlations(xp, w, stride, groups: int):
    """What :func:`_per_plane_correlations` gives when scipy takes its direct method, for every
    image and filter at once: each output element is scipy's sum over the kernel in row-major
    order (the products added one by one from the first), the per-channel planes added in channel
    order, computed at the strided positions only."""
    n = xp.shape[0]
    f, cg, kh, kw = w.shape
    fg = f // groups
    ho, wo = _out_shape(xp, w, stride)
    sh, sw = stride
    out = np.empty((n, f, ho, wo))
    for gi in range(groups):
        wg = w[gi * fg:(gi + 1) * fg]
        acc = 0.0  # as the loop's sums start (0.0 + -0.0 is 0.0)
        for j in range(cg):
            plane = xp[:, None, gi * cg + j]  # (n, 1, H, W)
            corr = 0.0
            for a in range(kh):
                for b in range(kw):
                    corr = corr + plane[..., a:a + sh * (ho - 1) + 1:sh, b:b + sw * (wo - 1) + 1:sw] * wg[:, j, a, b, None, None]
            acc = acc + corr
        out[:, gi * fg:(gi + 1) * fg] = acc
    return out


# --------------------------------------------------------------------------- the digits CNN


class DigitsCNN:
    """conv(1->8) - conv(8->16) - conv(16->16, stride 2) - global avg pool - fc(16->10), 3x3
    kernels, padding 1, ReLU; numpy forward and backward (im2col)."""

    SPEC = ((1, 8, 1), (8, 16, 1), (16, 16, 2))  # (cin, cout, stride)

    def __init__(self, seed: int = 0):
        rng = np.random.default_rng(seed)
        self.w = [rng.normal(0, np.sqrt(2.0 / (c * 9)), (f, c, 3, 3)) for c, f, _ in self.SPEC]
        self.b = [np.zeros(f) for _, f, _ in self.SPEC]
        self.fw = rng.normal(0, np.sqrt(1.0 / 16), (10, 16))
        self.fb = np.zeros(10)

    def geometries(self, h: int = 8) -> list[dec.Geometry]:
        out = []
        for i, (c, f, s) in enumerate(self.SPEC):
            out.append(dec.Geometry(f, c, 3, 3, s, s, 1, 1, h, h, name=f"conv{i + 1}"))
            h = (h + 2 - 3) // s + 1
        return out

    @staticmethod
    def _cols(x, s):
        n, c, h, w = x.shape
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        ho, wo = (h - 1) // s + 1, (w - 1) // s + 1
        cols = np.empty((n, c, 3, 3, ho, wo))
        for i in range(3):
            for j in range(3):
                cols[:, :, i, j] = xp[:, :, i:i + s * ho:s, j:j + s * wo:s]
        return cols.transpose(0, 4, 5, 1, 2, 3).reshape(n * ho * wo, c * 9), (n, c, h, w, ho, wo)

    @staticmethod
    def _uncols(dcols, meta, s):
        n, c, h, w, ho, wo = meta
        d = dcols.reshape(n, ho, wo, c, 3, 3).transpose(0, 3, 4, 5, 1, 2)
        dx = np.zeros((n, c, h + 2, w + 2))
        for i in range(3):
            for j in range(3):
                dx[:, :, i:i + s * ho:s, j:j + s * wo:s] += d[:, :, i, j]
        return dx[:, :, 1:-1, 1:-1]

    def forward(self, x, layers=None):
        """Logits; ``layers`` maps a conv index to a callable replacing that conv (no bias, no ReLU)."""
        h = x
        for i, (_c, f, s) in enumerate(self.SPEC):
            if layers and i in layers:
                z = layers[i](h)
            else:
                z = dec.conv2d(h, self.w[i], (s, s), (1, 1))
            h = np.maximum(z + self.b[i][None, :, None, None], 0)
        return h.mean(axis=(2, 3)) @ self.fw.T + self.fb

    def loss_grad(self, x, y):
        cache = []
        h = x
        for i, (_c, f, s) in enumerate(self.SPEC):
            cols, meta = self._cols(h, s)
            z = cols @ self.w[i].reshape(f, -1).T + self.b[i]
            a = np.maximum(z, 0)
            cache.append((cols, meta, z))
            n, _, _, _, ho, wo = meta
            h = a.reshape(n, ho, wo, f).transpose(0, 3, 1, 2)
        pooled = h.mean(axis=(2, 3))
        logits = pooled @ self.fw.T + self.fb
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        n = len(y)
        loss = -np.log(p[np.arange(n), y] + 1e-12).mean()
        dl = p
        dl[np.arange(n), y] -= 1
        dl /= n
        grads = {"fw": dl.T @ pooled, "fb": dl.sum(0)}
        dpool = dl @ self.fw
        _, f, ho, wo = h.shape
        dh = np.broadcast_to(dpool[:, :, None, None] / (ho * wo), h.shape)
        for i in reversed(range(len(self.SPEC))):
            cols, meta, z = cache[i]
            nn_, c, hh, ww, ho, wo = meta
            f = self.SPEC[i][1]
            dz = dh.transpose(0, 2, 3, 1).reshape(-1, f) * (z > 0)
            grads[f"w{i}"] = (dz.T @ cols).reshape(self.w[i].shape)
            grads[f"b{i}"] = dz.sum(0)
            if i:
                dh = self._uncols(dz @ self.w[i].reshape(f, -1), meta, self.SPEC[i][2])
        return loss, grads

    def params(self):
        out = {"fw": self.fw, "fb": self.fb}
        for i in range(len(self.SPEC)):
            out[f"w{i}"], out[f"b{i}"] = self.w[i], self.b[i]
        return out


def _digits(seed: int):
    from suite.api import load_sklearn

    x, y = load_sklearn("digits")
    x = (x / 16.0).reshape(-1, 1, 8, 8)
    idx = np.random.default_rng(seed).permutation(len(y))
    cut = int(0.75 * len(y))
    return x[idx[:cut]], y[idx[:cut]], x[idx[cut:]], y[idx[cut:]]


_TRAINED: dict = {}


def train_digits_cnn(seed: int = 0, epochs: int = 8, lr: float = 0.03, batch: int = 128):
    """Train :class:`DigitsCNN` on 75% of the digits with Adam (seeded). Returns (net, x_test, y_test).

    Deterministic for its arguments, so the result is kept per process (the variants of one sweep
    share one trained network; nothing writes to it afterwards).
    """
    key = (seed, epochs, lr, batch)
    if key not in _TRAINED:
        if len(_TRAINED) > 8:
            _TRAINED.clear()
        _TRAINED[key] = _train(seed, epochs, lr, batch)
    return _TRAINED[key]


def _train(seed, epochs, lr, batch):
    xtr, ytr, xte, yte = _digits(seed)
    net = DigitsCNN(seed)
    prm = net.params()
    m = {k: np.zeros_like(v) for k, v in prm.items()}
    v = {k: np.zeros_like(v) for k, v in prm.items()}
    rng = np.random.default_rng(seed + 1)
    t = 0
    for _ in range(epochs):
        order = rng.permutation(len(ytr))
        for s in range(0, len(order), batch):
            bi = order[s:s + batch]
            _, g = net.loss_grad(xtr[bi], ytr[bi])
            t += 1
            for k, p in prm.items():
                m[k] = 0.9 * m[k] + 0.1 * g[k]
                v[k] = 0.999 * v[k] + 0.001 * g[k] ** 2
                p -= lr * (m[k] / (1 - 0.9 ** t)) / (np.sqrt(v[k] / (1 - 0.999 ** t)) + 1e-8)
    return net, xte, yte


# --------------------------------------------------------------------------- choice per layer


def choose(w: np.ndarray, geo: dec.Geometry, methods, ratio: float, seed: int = 0, cpd_iter: int = 50):
    """The candidate with MACs <= ratio x dense and the least relative weight error.

    Returns
    -------
    dict with ``scheme``, ``rank``, ``factors``, ``recon`` (dense weight from the factors),
    ``rel_error``, ``macs_ratio``, ``eckart_young_error`` (SVD choices; 0 otherwise).
    """
    base = dec.dense_macs(geo)
    norm = float(np.linalg.norm(w))
    best = None
    for s in dec.schemes_for(geo, methods):
        ranks = [r for r in dec.candidate_ranks(geo, s) if sum(f.macs for f in dec.factor_layers(geo, s, r))
                 <= ratio * base]
        if not ranks:
            continue
        r = max(ranks)  # the most accurate rank of this scheme within the MAC budget
        if s.kind == "cpd":
            ws, _err = dec.cpd_factors(w, r, n_iter=cpd_iter, seed=seed)
            ey = 0.0
        else:
            ws = dec.svd_factors(w, s, r)
        recon = dec.reconstruct(ws, s, w.shape)
        err = float(np.linalg.norm(w - recon)) / norm
        if s.kind != "cpd":
            sig = dec.svd_singular_values(w, s)
            ey = abs(err * norm - float(np.sqrt((sig[:, r:] ** 2).sum()))) / norm
        macs = sum(f.macs for f in dec.factor_layers(geo, s, r))
        cand = {"scheme": s, "rank": r, "factors": ws, "recon": recon, "rel_error": err,
                "macs_ratio": macs / base, "eckart_young_error": ey}
        if best is None or err < best["rel_error"]:
            best = cand
    if best is None:
        best = {"scheme": dec.Scheme("keep"), "rank": 0, "factors": [w], "recon": w, "rel_error": 0.0,
                "macs_ratio": 1.0, "eckart_young_error": 0.0}
    return best


def _oracle(x, ch, geo):
    """Relative error of the factorised layer vs the scipy convolution with the reconstructed weight."""
    y = dec.run_factors(x, ch["factors"], geo, ch["scheme"])
    ref = conv2d_scipy(x, ch["recon"], (geo.sh, geo.sw), (geo.ph, geo.pw))
    return float(np.abs(y - ref).max() / max(np.abs(ref).max(), 1e-300)), y


# --------------------------------------------------------------------------- evaluate


def evaluate(scenario):
    """Execute fidelity (see the module docstring).

    Returns
    -------
    suite.Result
        ``oracle_error`` (1, max relative), ``eckart_young_error`` (1), ``weight_rel_error`` (1,
        mean over target layers), ``macs_ratio`` (1, decomposed target layers over dense),
        ``decompose_time`` (s); digits: ``accuracy_dense``, ``accuracy``, ``accuracy_drop``
        (fractions); layer tables: ``output_rel_error`` (1, mean). Artifact ``layers``: per-layer
        choices.

    Raises
    ------
    suite.Skip
        A workload that is neither ``digits`` nor a layer table with target convs.
    suite.api.OracleMismatch
        An oracle check fails (a bug).
    """
    from suite.api import LayerTable, OracleMismatch, Result, Skip

    p = scenario.params
    methods = model.METHODS[scenario.variant]
    ratio = float(p["ratio"])
    seed = int(scenario.seed)
    wl = scenario.workload
    res = Result()
    tally = _Tally()
    t0 = time.perf_counter()
    if wl is not None and wl.name == "digits":
        _execute_digits(int(p["epochs"]), methods, ratio, seed, tally, res)
    elif isinstance(wl, LayerTable):
        targets = [l for l in wl.layers if model.is_target(l)][: int(p["execute_layers"])]
        if not targets:
            raise Skip(f"mixed-td execute: workload {wl.name!r} has no target conv (3x3, groups 1, C > 3)")
        _execute_table(targets, methods, ratio, seed, tally, res)
    else:
        raise Skip(f"mixed-td execute: workload {getattr(wl, 'name', None)!r} is neither 'digits' nor a layer table")
    if tally.oracle > ORACLE_TOL or tally.ey > ORACLE_TOL:
        raise OracleMismatch(f"mixed-td execute: oracle check failed: factorised vs reconstructed {tally.oracle:.3g}, "
                             f"Eckart-Young {tally.ey:.3g} (tolerance {ORACLE_TOL:g})")
    res.add("oracle_error", tally.oracle, "1", "lower")
    res.add("eckart_young_error", tally.ey, "1", "lower")
    res.add("weight_rel_error", float(np.mean(tally.werr)) if tally.werr else 0.0, "1", "lower")
    res.add("macs_ratio", tally.macs / tally.dmacs if tally.dmacs else 1.0, "1", "lower")
    res.add("decompose_time", time.perf_counter() - t0, "s", "lower")
    res.artifacts["layers"] = tally.rows
    return res


@dataclass
class _Tally:
    """Worst oracle errors and totals over the decomposed layers of one case."""

    oracle: float = 0.0
    ey: float = 0.0
    werr: list[float] = field(default_factory=list)
    macs: float = 0.0
    dmacs: float = 0.0
    rows: list[dict] = field(default_factory=list)

    def add(self, ch: dict, geo, err: float, **row) -> None:
        self.oracle, self.ey = max(self.oracle, err), max(self.ey, ch["eckart_young_error"])
        self.werr.append(ch["rel_error"])
        self.macs += ch["macs_ratio"] * dec.dense_macs(geo)
        self.dmacs += dec.dense_macs(geo)
        self.rows.append({"layer": geo.name, "choice": _label(ch), "weight_rel_error": ch["rel_error"], **row,
                          "macs_ratio": ch["macs_ratio"]})


def _choose(w, geo, methods, ratio: float, seed: int) -> dict:
    return choose(w, geo, methods, ratio, seed) if methods else choose(w, geo, (), ratio)


def _execute_digits(epochs: int, methods, ratio: float, seed: int, tally: _Tally, res) -> None:
    """Train the digits CNN, decompose its target layers (each checked on the activations that
    reach it), and measure the accuracy with the decomposed layers in place."""
    net, xte, yte = train_digits_cnn(seed, epochs=epochs)
    acc0 = float((net.forward(xte).argmax(1) == yte).mean())
    repl = {}
    h = xte[:16]
    for i, geo in enumerate(net.geometries()):
        if net.SPEC[i][0] > 3:  # a target layer (3x3, groups 1, more than 3 input channels)
            ch = _choose(net.w[i], geo, methods, ratio, seed)
            err, _ = _oracle(h, ch, geo)
            tally.add(ch, geo, err)
            repl[i] = (lambda c, g: (lambda z: dec.run_factors(z, c["factors"], g, c["scheme"])))(ch, geo)
        z = repl[i](h) if i in repl else dec.conv2d(h, net.w[i], (geo.sh, geo.sw), (1, 1))
        h = np.maximum(z + net.b[i][None, :, None, None], 0)
    acc = float((net.forward(xte, repl).argmax(1) == yte).mean())
    res.add("accuracy_dense", acc0, "1", "higher")
    res.add("accuracy", acc, "1", "higher")
    res.add("accuracy_drop", acc0 - acc, "1", "lower")


def _execute_table(targets, methods, ratio: float, seed: int, tally: _Tally, res) -> None:
    """Decompose random He-normal weights of a layer table's target convs; each checked on an
    8x8 input patch (any size checks the algebra) against the factors and the dense conv."""
    rng = np.random.default_rng(seed)
    outerr = []
    for layer in targets:
        geo = g0 = dec.Geometry.of_layer(layer)
        hw = min(g0.h, 8)
        w = rng.normal(0, np.sqrt(2.0 / (g0.C * g0.kh * g0.kw)), (g0.F, g0.C, g0.kh, g0.kw))
        ch = _choose(w, geo, methods, ratio, seed)
        x = rng.normal(size=(1, g0.C, hw, hw))
        small = dec.Geometry(g0.F, g0.C, g0.kh, g0.kw, g0.sh, g0.sw, g0.ph, g0.pw, hw, hw, g0.name)
        err, y = _oracle(x, ch, small)
        dense = dec.conv2d(x, w, (g0.sh, g0.sw), (g0.ph, g0.pw))
        outerr.append(float(np.linalg.norm(y - dense) / np.linalg.norm(dense)))
        tally.add(ch, geo, err, output_rel_error=outerr[-1])
    res.add("output_rel_error", float(np.mean(outerr)), "1", "lower")


def _label(ch) -> str:
    return "keep" if ch["scheme"].kind == "keep" else f"{ch['scheme']}@{ch['rank']}"
