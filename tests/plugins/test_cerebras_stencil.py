"""cerebras-stencil: the kernels against naive float64 loops and scipy, the decompositions and
their ledgers, hand calculations of the model, properties under hypothesis, the conformance kit,
the claims and the bad-input messages."""

from __future__ import annotations


import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite import Scenario, Skip
from suite.collectives import Ledger
from suite.errors import ParameterError
from suite.perf import Group, collective_time

from suite_cerebras_stencil import execute, kernels as K, model
from suite_cerebras_stencil.technique import CLAIMS, DEFAULTS, PROFILES, TECHNIQUE
from session_context import session_context

C = K.DIFFUSION_C
TC = K.ADVECTION_TC


# --------------------------------------------------------------------------- naive oracles


def naive_diffusion(u):
    nx, ny, nz = u.shape
    out = np.empty((nx, ny, nz))
    for i in range(nx):
        for j in range(ny):
            for k in range(nz):
                s = (u[(i - 1) % nx, j, k] + u[(i + 1) % nx, j, k] + u[i, (j - 1) % ny, k] + u[i, (j + 1) % ny, k]
                     + u[i, j, (k - 1) % nz] + u[i, j, (k + 1) % nz])
                out[i, j, k] = (1 - 6 * C) * u[i, j, k] + C * s
    return out


def naive_advection(u, v, w):
    """The module formulas, point by point, in float64 (written independently of the code)."""
    nx, ny, nz = u.shape
    tx, ty, tz = TC
    su, sv, sw = (np.empty((nx, ny, nz)) for _ in range(3))
    for i in range(nx):
        im, ip = (i - 1) % nx, (i + 1) % nx
        for j in range(ny):
            jm, jp = (j - 1) % ny, (j + 1) % ny
            for k in range(nz):
                km, kp = (k - 1) % nz, (k + 1) % nz
                su[i, j, k] = (tx * ((u[im, j, k] + u[i, j, k]) ** 2 - (u[i, j, k] + u[ip, j, k]) ** 2)
                               + ty * ((v[i, jm, k] + v[ip, jm, k]) * (u[i, jm, k] + u[i, j, k])
                                       - (v[i, j, k] + v[ip, j, k]) * (u[i, j, k] + u[i, jp, k]))
                               + tz * ((w[i, j, km] + w[ip, j, km]) * (u[i, j, km] + u[i, j, k])
                                       - (w[i, j, k] + w[ip, j, k]) * (u[i, j, k] + u[i, j, kp])))
                sv[i, j, k] = (tx * ((u[im, j, k] + u[im, jp, k]) * (v[im, j, k] + v[i, j, k])
                                     - (u[i, j, k] + u[i, jp, k]) * (v[i, j, k] + v[ip, j, k]))
                               + ty * ((v[i, jm, k] + v[i, j, k]) ** 2 - (v[i, j, k] + v[i, jp, k]) ** 2)
                               + tz * ((w[i, j, km] + w[i, jp, km]) * (v[i, j, km] + v[i, j, k])
                                       - (w[i, j, k] + w[i, jp, k]) * (v[i, j, k] + v[i, j, kp])))
                sw[i, j, k] = (tx * ((u[im, j, k] + u[im, j, kp]) * (w[im, j, k] + w[i, j, k])
                                     - (u[i, j, k] + u[i, j, kp]) * (w[i, j, k] + w[ip, j, k]))
                               + ty * ((v[i, jm, k] + v[i, jm, kp]) * (w[i, jm, k] + w[i, j, k])
                                       - (v[i, j, k] + v[i, j, kp]) * (w[i, j, k] + w[i, jp, k]))
                               + tz * ((w[i, j, km] + w[i, j, k]) ** 2 - (w[i, j, k] + w[i, j, kp]) ** 2))
    return su, sv, sw


def fields(kernel, shape, seed=0, dtype=np.float64):
    return K.random_fields(kernel, shape, np.random.default_rng(seed), dtype)


@pytest.mark.parametrize("shape", [(5, 4, 3), (24, 24, 24)])
def test_diffusion_equals_naive_loops_and_scipy_convolve(shape):
    from scipy import ndimage

    (u,) = fields("diffusion7", shape)
    ref = naive_diffusion(u)
    k = np.zeros((3, 3, 3))
    k[1, 1, 1] = 1 - 6 * C
    for ax in range(3):
        for s in (0, 2):
            idx = [1, 1, 1]
            idx[ax] = s
            k[tuple(idx)] = C
    conv = ndimage.convolve(u, k, mode="wrap")
    np.testing.assert_allclose(conv, ref, rtol=0, atol=1e-12)
    for got in (K.apply("diffusion7", (u,))[0], K.apply_correlate("diffusion7", (u,))[0],
                K.apply_roll("diffusion7", (u,))[0]):
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", [(4, 3, 3), (9, 7, 5)])
def test_advection_equals_naive_loops(shape):
    f = fields("advection", shape, seed=3)
    ref = naive_advection(*f)
    for impl in (K.apply, K.apply_correlate, K.apply_roll):
        for got, want in zip(impl("advection", f), ref):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)


@pytest.mark.parametrize("kernel", K.KERNELS)
def test_fp32_within_tolerance_of_the_float64_oracle(kernel):
    f = fields(kernel, (10, 9, 8), seed=1, dtype=np.float32)
    ref = K.apply_roll(kernel, tuple(x.astype(np.float64) for x in f))
    scale = max(np.abs(r).max() for r in ref)
    for got, want in zip(K.apply(kernel, f), ref):
        assert got.dtype == np.float32
        assert np.abs(got - want).max() / scale < 1e-6


def test_blocked_kernels_are_bit_identical_to_slices():
    (u,) = fields("diffusion7", (11, 9, 7), seed=2, dtype=np.float32)
    p = K.pad_wrap(u)
    f = fields("advection", (11, 9, 7), seed=4, dtype=np.float32)
    pf = tuple(K.pad_wrap(x) for x in f)
    whole = K.advection_padded(*pf)
    assert np.array_equal(K.diffusion7_jit(p, np.empty_like(u)), K.diffusion7_padded(p))
    u64 = u.astype(np.float64)
    p64 = K.pad_wrap(u64)
    assert np.array_equal(K.diffusion7_jit(p64, np.empty_like(u64)), K.diffusion7_padded(p64))
    with pytest.raises(TypeError, match="float16"):
        K.diffusion7_jit(p.astype(np.float16), np.empty_like(u, dtype=np.float16))
    for planes in (1, 3, 4, 11):
        out = np.empty_like(u)
        assert np.array_equal(K.diffusion7_blocked(p, out, planes=planes), K.diffusion7_padded(p))
        outs = tuple(np.empty_like(x) for x in f)
        K.advection_blocked(*pf, out=outs, planes=planes)
        assert all(np.array_equal(a, b) for a, b in zip(outs, whole))


# --------------------------------------------------------------------------- counts (hand)


def test_flop_counts_by_hand_and_as_counted():
    # diffusion: 5 adds for the neighbours, 2 multiplies, 1 add = 8 per point
    assert K.flop_count("diffusion7", 4, 3, 2) == 8 * 24
    # advection on a 2 x 2 x 2 block: faces 3 x (3 * 2 * 2) = 36; 8 per face + 24 per point
    assert K.flop_count("advection", 2, 2, 2) == 8 * 36 + 24 * 8 == 480
    assert K.flops_per_point("advection") == 48.0
    for kernel, shape, want in (("diffusion7", (4, 3, 2), 192), ("advection", (2, 2, 2), 480)):
        ops = K.Ops()
        K.apply(kernel, fields(kernel, shape), ops=ops)
        assert ops.flops == want
    # compulsory bytes: fp32 diffusion reads u, writes out: 8 B; advection 3 in + 3 out: 24 B
    assert K.bytes_per_point("diffusion7", 4) == 8.0
    assert K.bytes_per_point("advection", 4) == 24.0
    assert K.bytes_per_point("advection", 2) == 12.0


def test_slab_ledger_bytes_by_hand():
    (u,) = fields("diffusion7", (8, 6, 5), dtype=np.float32)
    led = Ledger()
    out = execute.slab_run("diffusion7", (u,), 4, led)
    # 4 ranks x 2 planes of 6 x 5 fp32 = 4 * 2 * 120 B
    assert led.total_bytes == 960 == 4 * model.halo_bytes("diffusion7", 0, 6, 5, 4, "gpu-4x")
    assert np.array_equal(out[0], K.apply("diffusion7", (u,))[0])


def test_block_ledger_bytes_by_hand():
    f = fields("advection", (8, 8, 4), dtype=np.float32)
    led = Ledger()
    out = execute.block_run("advection", f, 2, 2, led)
    # per 4 x 4 block: 3 fields x 4 faces x 4 columns x 4 z x 4 B = 768, plus 2 corner columns x 16 B
    assert led.total_bytes == 4 * (768 + 32) == 3200
    assert execute.block_halo_expected("advection", 8, 8, 4, 2, 2, 4) == 3200
    assert all(np.array_equal(a, b) for a, b in zip(out, K.apply("advection", f)))


# --------------------------------------------------------------------------- model (hand)


def _eval(variant, profile, **params):
    return model.evaluate(Scenario("cerebras-stencil", variant, "model", session_context().profile(profile), None,
                                   {**DEFAULTS, **params}))


def test_streamed_io_by_hand():
    # gpu-4x: slab of 150 x 595 x 1536 points, 3 fp32 fields in and 3 out over PCIe 3.0 x16 (15.75 GB/s)
    slab = 150 * 595 * 1536
    r = _eval("gpu-4x", "dgx-1-v100")
    assert r["io_time"] == pytest.approx(2 * 3 * 4 * slab / 15.75e9, rel=1e-12)
    # wse: the whole 600 x 595 x 1536 grid in and out over 1.2 Tbit/s = 150 GB/s
    r = _eval("wse", "cerebras-wse-1")
    assert r["io_time"] == pytest.approx(2 * 3 * 4 * 600 * 595 * 1536 / 150e9, rel=1e-12)
    # cpu-2s: each socket copies its half in and out through memory: 2 x bytes at 140.8 GB/s
    r = _eval("cpu-2s", "xeon-platinum-8280-2s")
    assert r["io_time"] == pytest.approx(2 * 2 * 3 * 4 * 300 * 595 * 1536 / 140.8e9, rel=1e-12)


def test_gpu_halo_is_collective_time_of_one_side():
    prof = session_context().profile("dgx-1-v100")
    r = _eval("gpu-4x", "dgx-1-v100", io="resident")
    plane_set = 3 * 595 * 1536 * 4  # three fields, one plane each
    want = collective_time("p2p", plane_set, Group(ranks_per_node=4, nodes=1), prof).time
    assert r["halo_time"] == pytest.approx(want, rel=1e-9)
    assert r["halo_bytes"] == 2 * plane_set


def test_wse_layout_and_capacity_by_hand():
    r = _eval("wse", "cerebras-wse-1")
    assert r["columns_per_pe"] == 1 and r["ranks"] == 600 * 595
    assert r["resident_bytes"] == 1536 * 24  # six fp32 fields of one column
    assert r["capacity_bytes"] == pytest.approx(18e9 / 400_000)
    # the WSE-1 per-PE rate: 0.86 PFLOP/s over 600 x 595 PEs (SC20)
    assert model.WSE_PE_FLOPS == pytest.approx(2.409e9, rel=1e-3)
    with pytest.raises(Skip, match=r"^cerebras-stencil: advection 2000 x 2000 x 1000 fp32 needs 120 KB per PE, "
                                   r"cerebras-cs-2 PEs hold 47 KB$"):
        _eval("wse", "cerebras-cs-2", nx=2000, ny=2000, nz=1000)


def test_dominant_terms_at_the_defaults():
    for v, prof in (("wse", "cerebras-wse-1"), ("gpu-4x", "dgx-1-v100")):
        r = _eval(v, prof)
        assert r["io_time"] > 0.9 * r["time_per_call"]  # streamed: the I/O link dominates
    r = _eval("wse", "cerebras-wse-1", io="resident")
    assert r["compute_time"] > r["halo_time"]


# --------------------------------------------------------------------------- bad input


def test_bad_input_messages():
    with pytest.raises(ParameterError, match=r"parameter 'nz': expected >= 3 points, got 1"):
        TECHNIQUE.validate_params({"nz": 1})
    with pytest.raises(Skip, match=r"gpu-4x needs a node with >= 4 GPUs, got device profile nvidia-v100-sxm2-16gb"):
        _eval("gpu-4x", "nvidia-v100-sxm2-16gb")
    with pytest.raises(Skip, match=r"wse needs a profile with \[ext.cerebras\].*cerebras-wse-2"):
        _eval("wse", "cerebras-wse-2")
    with pytest.raises(Skip, match=r"cpu-2s needs a CPU"):
        _eval("cpu-2s", "dgx-1-v100")


# --------------------------------------------------------------------------- properties (hypothesis)


shapes = st.tuples(st.integers(3, 9), st.integers(3, 8), st.integers(3, 6))


@settings(max_examples=15, deadline=None)
@given(kernel=st.sampled_from(K.KERNELS), shape=shapes, seed=st.integers(0, 2**16), data=st.data())
def test_decomposed_equals_single_domain(kernel, shape, seed, data):
    f = fields(kernel, shape, seed, np.float32)
    single = K.apply(kernel, f)
    parts = data.draw(st.integers(1, shape[0]))
    px, py = data.draw(st.integers(2, shape[0])), data.draw(st.integers(2, shape[1]))
    led = Ledger()
    slabs = execute.slab_run(kernel, f, parts, led)
    assert led.total_bytes == (parts * model.halo_bytes(kernel, 0, shape[1], shape[2], 4, "gpu-4x") if parts > 1 else 0)
    led = Ledger()
    blocks = execute.block_run(kernel, f, px, py, led)
    assert led.total_bytes == execute.block_halo_expected(kernel, *shape, px, py, 4)
    for dec in (slabs, blocks):
        assert all(np.array_equal(a, b) for a, b in zip(dec, single))


@settings(max_examples=15, deadline=None)
@given(kernel=st.sampled_from(K.KERNELS), shape=shapes, seed=st.integers(0, 2**16),
       shift=st.tuples(st.integers(-4, 4), st.integers(-4, 4), st.integers(-4, 4)))
def test_kernel_invariants(kernel, shape, seed, shift):
    f = fields(kernel, shape, seed)
    out = K.apply(kernel, f)
    rolled = K.apply(kernel, tuple(np.roll(x, shift, axis=(0, 1, 2)) for x in f))
    for a, b in zip(rolled, out):
        np.testing.assert_array_equal(a, np.roll(b, shift, axis=(0, 1, 2)))
    if kernel == "advection":
        for s in out:  # the face fluxes telescope on the periodic grid
            assert abs(s.sum()) < 1e-10 * (np.abs(s).sum() + 1)
        assert all(not np.any(s) for s in K.apply(kernel, tuple(np.zeros(shape) for _ in range(3))))
        const = K.apply(kernel, tuple(np.full(shape, 1.7) for _ in range(3)))
        assert all(np.allclose(s, 0.0, atol=1e-12) for s in const)
    else:
        assert out[0].sum() == pytest.approx(f[0].sum(), rel=1e-12)
        np.testing.assert_allclose(K.apply(kernel, (np.full(shape, 3.0),))[0], 3.0, rtol=0, atol=1e-14)


@settings(max_examples=25, deadline=None)
@given(variant=st.sampled_from(model.VARIANTS), kernel=st.sampled_from(K.KERNELS),
       nx=st.integers(3, 3000), ny=st.integers(3, 3000), nz=st.integers(3, 3000), steps=st.integers(1, 50),
       dtype=st.sampled_from(("fp32", "fp16")), io=st.sampled_from(("resident", "streamed")))
def test_sweep_equals_predict(variant, kernel, nx, ny, nz, steps, dtype, io):
    prof = session_context().profile(PROFILES["wse-1" if variant == "wse" else variant])
    pf = model.platform_of(variant, prof, dtype)
    pr = model.predict(pf, kernel, nx, ny, nz, steps, dtype, io)
    sw = model.sweep(pf, kernel, [nx], [ny], [nz], [steps], dtype, io)
    assert sw["total"][0] == pytest.approx(pr.total, rel=1e-9)
    assert sw["halo"][0] == pytest.approx(pr.halo, rel=1e-9, abs=1e-15)
    assert bool(sw["fits"][0]) == pr.fits


@settings(max_examples=20, deadline=None)
@given(variant=st.sampled_from(model.VARIANTS), kernel=st.sampled_from(K.KERNELS),
       n=st.integers(8, 600), factor=st.floats(1.01, 8.0), io=st.sampled_from(("resident", "streamed")))
def test_time_non_increasing_in_every_bandwidth(variant, kernel, n, factor, io):
    prof = session_context().profile(PROFILES["wse-1" if variant == "wse" else variant])
    paths = {"cpu-2s": ["device.memory_bandwidth"],
             "gpu-4x": ["device.memory_bandwidth", "network.0.bandwidth", "device.host_link.bandwidth"],
             "wse": ["device.memory_bandwidth", "ext.cerebras.fabric_bandwidth", "ext.cerebras.io_bandwidth"]}[variant]
    params = {**DEFAULTS, "kernel": kernel, "nx": n, "ny": n, "nz": n, "io": io}
    t0 = model.evaluate(Scenario("cerebras-stencil", variant, "model", prof, None, params))["time_per_call"]
    pf = model.platform_of(variant, prof)
    for path in paths:
        cur = {"device.memory_bandwidth": prof.device.memory_bandwidth,
               "network.0.bandwidth": prof.network[0].bandwidth if prof.network else None,
               "device.host_link.bandwidth": prof.device.host_link.bandwidth if prof.device.host_link else None,
               "ext.cerebras.fabric_bandwidth": None, "ext.cerebras.io_bandwidth": None}[path]
        if cur is None:
            cur = {"ext.cerebras.fabric_bandwidth": 100e15 / 8, "ext.cerebras.io_bandwidth": pf.io_bandwidth}[path]
        faster = prof.with_overrides({path: f"{cur * factor} B/s"})
        t1 = model.evaluate(Scenario("cerebras-stencil", variant, "model", faster, None, params))["time_per_call"]
        assert t1 <= t0 * (1 + 1e-12), path


def test_link_changes_only_the_variant_crossing_it():
    base = {v: _eval(v, PROFILES["wse-1" if v == "wse" else v])["time_per_call"] for v in model.VARIANTS}
    dgx = session_context().profile("dgx-1-v100").with_overrides({"network.0.bandwidth": "15.75 GB/s"})  # a PCIe host
    wse = session_context().profile("cerebras-wse-1")
    wse_slow = wse.with_overrides({"ext.cerebras.fabric_bandwidth": "10 Pbit/s"})
    wse_eth = wse.with_overrides({"ext.cerebras.io_bandwidth": "600 Gbit/s"})
    sc = lambda v, p: model.evaluate(Scenario("cerebras-stencil", v, "model", p, None, DEFAULTS))["time_per_call"]
    assert sc("gpu-4x", dgx) > base["gpu-4x"]
    assert sc("wse", wse_slow) > base["wse"]
    assert sc("wse", wse_eth) > base["wse"]
    # a link the variant's traffic does not cross changes nothing: I/O links when resident
    res = {**DEFAULTS, "io": "resident"}
    sr = lambda v, p: model.evaluate(Scenario("cerebras-stencil", v, "model", p, None, res))["time_per_call"]
    assert sr("wse", wse_eth) == sr("wse", session_context().profile("cerebras-wse-1"))
    pcie_host = session_context().profile("dgx-1-v100").with_overrides({"device.host_link.bandwidth": "4 GB/s"})
    assert sr("gpu-4x", pcie_host) == sr("gpu-4x", session_context().profile("dgx-1-v100"))
    assert sr("gpu-4x", dgx) > sr("gpu-4x", session_context().profile("dgx-1-v100"))  # the halo crosses NVLink


@settings(max_examples=30, deadline=None)
@given(kernel=st.sampled_from(K.KERNELS), nx=st.integers(3, 3000), ny=st.integers(3, 3000),
       nz=st.integers(3, 6000), dtype=st.sampled_from(("fp32", "fp16")), gen=st.sampled_from(("wse-1", "wse-2")))
def test_wse_runs_iff_columns_fit(kernel, nx, ny, nz, dtype, gen):
    prof = session_context().profile(PROFILES[gen])
    pes = 600 * 595 if gen == "wse-1" else 850_000
    cols = (-(-nx // 600)) * (-(-ny // 595)) if gen == "wse-1" else -(-(nx * ny) // pes)
    need = cols * nz * (2 if kernel == "diffusion7" else 6) * (4 if dtype == "fp32" else 2)
    fits = need <= prof.device.memory / prof.device.cores
    try:
        model.evaluate(Scenario("cerebras-stencil", "wse", "model", prof, None,
                                {**DEFAULTS, "kernel": kernel, "nx": nx, "ny": ny, "nz": nz, "dtype": dtype}))
        ran = True
    except Skip:
        ran = False
    assert ran == fits


# --------------------------------------------------------------------------- execute, kit, claims


@pytest.mark.parametrize("variant,dtype", [(v, "fp32") for v in model.VARIANTS] + [("wse", "fp16")])
@pytest.mark.parametrize("kernel", K.KERNELS)
def test_execute_checks_its_oracles(variant, kernel, dtype):
    from suite.testing import resolve_case
    from suite import ScenarioSpec

    case = resolve_case(TECHNIQUE, ScenarioSpec(variant=variant, fidelity="execute",
                                                params={"kernel": kernel, "nx": 12, "ny": 10, "nz": 8, "dtype": dtype}))
    r = execute.evaluate(case.scenario, repeats=1)
    assert r["decomposed_equal"] == 1.0
    tol = 1e-6 if dtype == "fp32" else 2e-3  # fp16: eps 9.8e-4, a few roundings per point
    assert r["oracle_error"] < tol and r["correlate_error"] < tol
    assert r["ledger_halo_bytes"] == r["model_halo_bytes"] > 0
    assert r["flops_counted"] == r["flops_model"] == K.flop_count(kernel, 12, 10, 8)


def test_check_technique():
    from suite.testing import check_technique

    rep = check_technique(TECHNIQUE, max_examples=3)
    assert "properties" not in rep.skipped


def test_claims_resolve_with_nulls_and_derived_ratios():
    from suite.testing import resolve_case

    ids = {c.id for c in CLAIMS}
    assert ids == {"vs-4xv100-wse-1", "vs-2xxeon-wse-1", "vs-4xv100-wse-2", "vs-2xxeon-wse-2", "gpu-vs-cpu"}
    nulls = {c.id: [n.value for n in c.nulls] for c in CLAIMS}
    # the streamed ingress ratio, by hand: 1.2 Tbit/s = 150 GB/s over 4 x 15.75 GB/s = 2.381 (inside [2.2, 2.8])
    assert nulls["vs-4xv100-wse-1"] == [1.0, pytest.approx(2500.0), pytest.approx(150 / 63)]
    assert nulls["vs-4xv100-wse-2"] == [1.0, pytest.approx(20e15 / 3.6e12), pytest.approx(150 / 63)]
    assert nulls["vs-2xxeon-wse-1"] == [1.0, pytest.approx(31960, rel=1e-4)]
    assert nulls["gpu-vs-cpu"] == [1.0, pytest.approx(12.78, rel=1e-3)]
    assert {c.id for c in CLAIMS if c.verified} == ids - {"gpu-vs-cpu"}
    for c in CLAIMS:
        res = {k: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario) for k, s in c.specs().items()}
        val = c.value(res)
        assert np.isfinite(val) and val > 0
        lo, hi = c.expect.band()
        assert (lo, hi) == pytest.approx({2.5: (2.2, 2.8), 114.0: (91.4, 136.6), 45.6: (36.68, 54.52)}[c.expect.paper])


def test_null_figures_match_the_claims_profiles():
    """The bandwidth nulls are written as numbers (claims are built at import, before any profile is read);
    each must equal the figure of the shipped profile its case runs on, so the two cannot drift apart."""
    from suite_cerebras_stencil import technique as t
    from suite_cerebras_stencil.extension import CerebrasExt

    cpu, gpu = session_context().profile(PROFILES["cpu-2s"]), session_context().profile(PROFILES["gpu-4x"])
    assert t._CPU_BW == pytest.approx(cpu.devices_per_node * cpu.device.memory_bandwidth, rel=1e-12)
    assert t._GPU_BW == pytest.approx(model.GPUS * gpu.device.memory_bandwidth, rel=1e-12)
    assert t._GPU_IO == pytest.approx(model.GPUS * gpu.device.host_link.bandwidth, rel=1e-12)
    for gen in ("wse-1", "wse-2"):
        wse = session_context().profile(PROFILES[gen])
        assert t._BW[gen] == pytest.approx(wse.device.memory_bandwidth, rel=1e-12)
        ext = CerebrasExt.model_validate(dict(wse.ext["cerebras"]))
        assert t._WSE_IO == pytest.approx(ext.io_bandwidth, rel=1e-12)


def test_io_mode_flips_only_the_gpu_claims():
    """Audit 11b B14: resident takes gpu/wse from 2.42 to 87.3 (out of [2.2, 2.8]: a flip), but cpu/wse from 1.70 to
    1290 and cpu/gpu from 0.70 to 14.7 stay outside [91.4, 136.6] and [36.7, 54.5]: those declare no flip."""
    import dataclasses

    from suite.testing import resolve_case
    from suite_cerebras_stencil.technique import TECHNIQUE

    for c in TECHNIQUE.claims:
        vals = []
        for io in ("streamed", "resident"):
            specs = {k: dataclasses.replace(s, params={**s.params, "io": io}) for k, s in c.specs().items()}
            vals.append(c.expect.check(c.value({k: TECHNIQUE.evaluate(resolve_case(TECHNIQUE, s).scenario)
                                                for k, s in specs.items()})))
        flips = vals[0] != vals[1]
        assert flips == c.id.startswith("vs-4xv100"), c.id
        assert c.assumptions[0].flip_at == ("resident" if flips else None), c.id


def test_the_trivial_predictors_read_the_profiles_the_claims_run_on(shared_context):
    """research14 #10: the bandwidth-ratio nulls are constants written in technique.py; each must be
    the figure of the profile its claim runs on, or a profile edit would leave a null describing
    other hardware (9 PB/s and 20 PB/s on-wafer, 4 x 900 GB/s HBM2 of a DGX-1, 2 x 140.8 GB/s of two
    Xeon 8280, 12 x 100 GbE of a CS system, 4 x PCIe 3.0 x16 at 15.75 GB/s)."""
    from suite_cerebras_stencil.technique import _BW, _CPU_BW, _GPU_BW, _GPU_IO, _WSE_IO, PROFILES

    prof = {k: shared_context.profile(v) for k, v in PROFILES.items()}
    assert {g: prof[g].device.memory_bandwidth for g in ("wse-1", "wse-2")} == _BW
    gpu, cpu = prof["gpu-4x"], prof["cpu-2s"]
    assert 4 * gpu.device.memory_bandwidth == _GPU_BW and 4 * gpu.device.host_link.bandwidth == _GPU_IO
    assert cpu.num_devices * cpu.device.memory_bandwidth == _CPU_BW
    for g in ("wse-1", "wse-2"):
        io = prof[g].ext["cerebras"]["io_bandwidth"]  # "1.2 Tbit/s" in the file, read in B/s
        assert io == pytest.approx(_WSE_IO, rel=1e-12), (g, io)
