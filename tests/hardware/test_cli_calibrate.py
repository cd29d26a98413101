"""`suite hardware list|show|diff|calibrate` and the calibration measurements (quick mode)."""

from __future__ import annotations

import json
import tomllib

import numpy as np
import pytest
from click.testing import CliRunner

from suite.cli import main
from suite.hardware import ProfileLibrary, clear_cache
from suite.hardware import calibrate as cal


def run(*args, env=None, cli=None):
    """``suite ARGS``: through *cli* (the session's ``suite_cli``, its shared context) for the calls
    that read the shipped library, else with a context of its own (a call with its own *env*)."""
    res = cli(*args) if cli is not None else CliRunner().invoke(main, list(args), env=env)
    assert "Traceback" not in res.output, res.output
    return res


def test_list_json_filters(suite_cli):
    res = run("hardware", "list", "--kind", "cluster", "--format", "json", cli=suite_cli)
    assert res.exit_code == 0, res.output
    rows = json.loads(res.output[res.output.index("["):])
    names = {r["name"] for r in rows}
    assert {"titanx-cluster-10gbe", "k80-cluster-ib56", "perlmutter"} <= names
    assert {r["kind"] for r in rows} == {"cluster"}
    res = run("hardware", "list", "--vendor", "amd", "--format", "json", cli=suite_cli)
    rows = json.loads(res.output[res.output.index("["):])
    assert {r["name"] for r in rows} >= {"amd-mi250x", "amd-mi300x", "amd-epyc-7763"}
    assert all(r["vendor"] == "amd" for r in rows)


def test_show_json_units_sources_derived(suite_cli):
    res = run("hardware", "show", "nvidia-k40c", "--format", "json", cli=suite_cli)
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    fields = {f["path"]: f for f in data["fields"]}
    assert fields["device.memory_bandwidth"]["display"] == "288 GB/s"
    assert fields["device.peak_flops.fp32"]["display"] == "4.29 TFLOP/s"
    assert "K40 datasheet" in fields["device.memory_bandwidth"]["source"]
    derived = {d["name"]: d["value"] for d in data["derived"]}
    assert derived["machine_balance.fp32"] == pytest.approx(4.29e12 / 288e9)  # 14.9 FLOP/B


def test_show_text_and_unknown_name(suite_cli):
    res = run("hardware", "show", "k80-cluster-10gbe", cli=suite_cli)
    assert res.exit_code == 0
    assert "machine_balance.fp32" in res.output and "ethernet-10g" in res.output
    res = run("hardware", "show", "k80-cluster", cli=suite_cli)
    assert res.exit_code == 2
    assert res.output.startswith("error: hardware profile: expected a known profile name, got 'k80-cluster'")


def test_diff_titanx_10_vs_40(suite_cli):
    res = run("hardware", "diff", "titanx-cluster-10gbe", "titanx-cluster-40gbe", "--format", "json", cli=suite_cli)
    assert res.exit_code == 0, res.output
    rows = {r["field"]: r for r in json.loads(res.output)}
    assert rows["network.0.bandwidth"]["ratio_b_over_a"] == pytest.approx(4.0)
    assert rows["network.0.name"]["titanx-cluster-10gbe"] == "ethernet-10g"
    assert "device.memory" not in rows  # equal fields are left out


def test_diff_lines_up_levels_from_the_outermost_when_depths_differ(suite_cli):
    """A one-level cluster (its 10 GbE NIC) against a two-level one (a PCIe board switch, then 10 GbE):
    compared by position, network.0 was "1.25 GB/s vs 15.75 GB/s, ratio 12.6" (a NIC against a bus);
    from the outermost, the two fabrics meet (same 10 Gbit/s: no row) and the board's level stands alone."""
    res = run("hardware", "diff", "titanx-cluster-10gbe", "k80-cluster-10gbe", "--format", "json", cli=suite_cli)
    assert res.exit_code == 0, res.output
    rows = {r["field"]: r for r in json.loads(res.output)}
    assert not any(f.startswith(("network.0.", "network.1.", "derived.network.0.")) for f in rows)
    assert "network.-1.bandwidth" not in rows  # 10 Gbit/s on both
    assert (rows["network.-1.size"]["titanx-cluster-10gbe"], rows["network.-1.size"]["k80-cluster-10gbe"]) == ("32", "8")
    assert (rows["network.-2.bandwidth"]["titanx-cluster-10gbe"], rows["network.-2.bandwidth"]["k80-cluster-10gbe"]) == (
        "-", "15.75 GB/s")


# ----------------------------------------------------------------------------- measurements

def test_gemm_counts_2n3():
    m = cal.measure_gemm("float64", repeats=3, target_s=0.005, n_max=128, n_min=64)
    n = m.params["n"]
    assert 64 <= n <= 128 and m.repeats == 3
    assert m.value > 1e7  # any BLAS does better than 10 MFLOP/s
    assert min(m.samples) <= m.value <= max(m.samples)
    assert m.name == "device.peak_flops.fp64"


def test_stream_counts_bytes_and_triad_is_correct():
    copy, triad = cal.measure_stream(1 << 20, repeats=2, block=4096)
    assert copy.params["array_bytes"] == triad.params["array_bytes"] == 1 << 20
    assert copy.value > 1e8 and triad.value > 1e8
    assert "3 x 8 B" in triad.method and "2 x 8 B" in copy.method


def test_blocked_triad_matches_numpy():
    """The blocked triad computes a = b + s*c exactly like the one-line numpy expression."""
    n, block = 10_000, 4096
    rng = np.random.default_rng(1)
    b, c = rng.standard_normal(n), rng.standard_normal(n)
    a = np.empty(n)
    tmp = np.empty(block)
    for i in range(0, n, block):
        j = min(i + block, n)
        np.multiply(c[i:j], 3.0, out=tmp[: j - i])
        np.add(b[i:j], tmp[: j - i], out=a[i:j])
    np.testing.assert_array_equal(a, b + 3.0 * c)


def test_loopback_tcp():
    lat, bw = cal.measure_tcp(rounds=20, bulk_bytes=1 << 20, repeats=2)
    assert 1e-7 < lat.value < 0.05
    assert bw.value > 1e6
    assert lat.name == "network.0.latency" and bw.name == "network.0.bandwidth"


def test_host_facts():
    f = cal.host_facts()
    assert f["cores_usable"] >= 1 and f["memory_bytes"] > 2**28


def _fake_calibration() -> cal.Calibration:
    ms = {
        "device.peak_flops.fp64": cal.Measurement("device.peak_flops.fp64", 5.0e10, "flop_rate", "gemm", [4.9e10, 5.0e10, 5.2e10]),
        "device.peak_flops.fp32": cal.Measurement("device.peak_flops.fp32", 1.0e11, "flop_rate", "gemm", [1e11]),
        "stream.copy": cal.Measurement("stream.copy", 2.0e10, "bandwidth", "copy", [2e10]),
        "stream.triad": cal.Measurement("stream.triad", 1.5e10, "bandwidth", "triad", [1.5e10]),
        "network.0.latency": cal.Measurement("network.0.latency", 2.0e-5, "time", "ping", [2e-5]),
        "network.0.bandwidth": cal.Measurement("network.0.bandwidth", 3.0e9, "bandwidth", "bulk", [3e9]),
    }
    facts = {"cpu_model": "Test CPU", "cores_usable": 2, "cores_logical": 4, "cores_physical": 2,
             "memory_bytes": 16 * 2**30, "llc_bytes": 32 * 2**20, "hostname": "h", "platform": "p",
             "python": "3", "numpy": "2", "blas": ""}
    return cal.Calibration(ms, facts, "2026-01-01T00:00:00+00:00", 1.0, True)


def test_to_toml_round_trip(tmp_path):
    c = _fake_calibration()
    text = cal.to_toml(c, name="local")
    raw = tomllib.loads(text)
    assert raw["profile"]["kind"] == "measured"
    assert raw["measured"]["device.peak_flops.fp64"]["spread"] == pytest.approx((5.2e10 - 4.9e10) / 5e10, rel=1e-3)
    f = tmp_path / "local.toml"
    f.write_text(text)
    prof = ProfileLibrary([f]).get("local")
    assert prof.device.peak_flops == {"fp64": 5e10, "fp32": 1e11}
    assert prof.device.memory_bandwidth == 1.5e10
    assert prof.device.memory == 16 * 2**30
    assert prof.network[0].latency == pytest.approx(2e-5) and prof.network[0].bandwidth == 3e9
    assert prof.num_devices == 1


def _small_sizes(monkeypatch) -> list[tuple]:
    """The calibration's measurements, each run for real at the small sizes their own tests above
    use (GEMM n <= 128, 1 MiB STREAM arrays, 20 TCP rounds of 1 MiB) with the repeats the plan
    asks for; returns the list to which each call appends what the plan asked (kind, dtype,
    repeats, sizes)."""
    asked: list[tuple] = []
    real_gemm, real_curve, real_stream, real_tcp = cal.measure_gemm, cal.measure_gemm_curve, cal.measure_stream, cal.measure_tcp

    def gemm(dtype, repeats=5, target_s=0.2, n_max=4096, n_min=128):
        asked.append(("gemm", dtype, repeats, n_min))
        return real_gemm(dtype, repeats, target_s=0.005, n_max=128, n_min=64)

    def curve(dtype, sizes, peak, repeats=3, flop_per_sample=1e9):
        asked.append(("curve", dtype, repeats, tuple(sizes)))
        return real_curve(dtype, sizes, peak, repeats, flop_per_sample=1e6)

    def stream(array_bytes, repeats=5, block=65536):
        asked.append(("stream", None, repeats, array_bytes))
        return real_stream(1 << 20, repeats, block=4096)

    def tcp(rounds=2000, bulk_bytes=64 << 20, repeats=5, timeout_s=60.0):
        asked.append(("tcp", None, repeats, (rounds, bulk_bytes)))
        return real_tcp(rounds=20, bulk_bytes=1 << 20, repeats=repeats)

    for name, fn in (("measure_gemm", gemm), ("measure_gemm_curve", curve), ("measure_stream", stream),
                     ("measure_tcp", tcp)):
        monkeypatch.setattr(cal, name, fn)
    return asked


def test_cli_calibrate_quick_then_show_local(tmp_path, monkeypatch):
    """The whole `calibrate --quick` path (below) with every measurement run at a small size: the
    quick plan is what the command asks of them (best of 5 GEMM products at n >= 1024 per dtype, a
    curve below, 3 repeats of STREAM and TCP at smaller volumes than a full calibration). The quick
    sizes themselves (a few seconds of GEMM): the slow test below."""
    asked = _small_sizes(monkeypatch)
    _calibrate_quick_then_show(tmp_path, monkeypatch)
    assert [(k, d) for k, d, *_ in asked] == [("gemm", "float64"), ("curve", "float64"), ("gemm", "float32"),
                                             ("curve", "float32"), ("stream", None), ("tcp", None)]
    gemms = [a for a in asked if a[0] == "gemm"]
    assert all(repeats == 5 and n_min >= 1024 for _k, _d, repeats, n_min in gemms)
    assert all(a[2] == 3 and set(a[3]) <= {32, 64, 128} for a in asked if a[0] == "curve")
    stream, tcp = asked[4], asked[5]
    assert stream[2] == 3 and 8 << 20 <= stream[3] <= 64 << 20
    assert tcp[2] == 3 and tcp[3] == (200, 4 << 20)


@pytest.mark.slow
def test_cli_calibrate_quick_at_its_own_sizes_then_show_local(tmp_path, monkeypatch):
    _calibrate_quick_then_show(tmp_path, monkeypatch)


def _calibrate_quick_then_show(tmp_path, monkeypatch):
    """`calibrate --quick` writes into the per-user folder, and `show local` finds it there. The
    second `calibrate` only checks the replace-and-keep-a-backup step, so it writes the first
    call's (real) measurement again instead of measuring this machine a second time."""
    env = {"XDG_CONFIG_HOME": str(tmp_path), "SUITE_PROFILES": ""}
    measured: list[cal.Calibration] = []
    real_calibrate = cal.calibrate

    def calibrate_once(quick=False, progress=False):
        if not measured:
            measured.append(real_calibrate(quick=quick, progress=progress))
        return measured[0]

    monkeypatch.setattr(cal, "calibrate", calibrate_once)
    clear_cache()
    try:
        res = run("hardware", "calibrate", "--quick", env=env)
        assert res.exit_code == 0, res.output
        out = tmp_path / "dlsys-suite" / "profiles" / "local.toml"
        assert out.exists() and f"wrote {out}" in res.output
        res = run("hardware", "show", "local", "--format", "json", env=env)
        assert res.exit_code == 0, res.output
        data = json.loads(res.output)
        assert data["kind"] == "measured"
        assert set(data["measured"]) >= {"device.peak_flops.fp64", "stream.triad", "network.0.latency"}
        assert data["measured"]["stream.triad"]["repeats"] == 3
        res = run("hardware", "validate", str(out), env=env)
        assert res.exit_code == 0, res.output
        # a second calibration replaces the file but keeps the previous measurement beside it
        first = out.read_text()
        res = run("hardware", "calibrate", "--quick", env=env)
        assert res.exit_code == 0, res.output
        assert f"replacing {out}" in res.output and (out.parent / "local.toml.bak").read_text() == first
        assert len(measured) == 1 and measured[0].quick and out.read_text() == first
    finally:
        clear_cache()


def test_gemm_efficiency_curve_shape():
    m = cal.measure_gemm_curve("float32", [32, 16], peak=1e15, repeats=2, flop_per_sample=1e6)
    sizes = [s for s, _f in m.params["curve"]]
    assert sizes == [2.0 * 16**3, 2.0 * 32**3]  # increasing, 2 n^3 FLOP per product
    assert all(0 < f <= 1 for _s, f in m.params["curve"])
    assert m.params["sizes"] == [16, 32]


def test_efficiency_at_interpolates_in_log_size():
    from suite.hardware.schema import Device

    d = Device(type="cpu", memory=1e9, memory_bandwidth=1e9, peak_flops={"fp32": 1e11},
               efficiency={"gemm_fp32": [[1e6, 0.1], [1e9, 0.5], [1e12, 0.9]]})
    assert d.efficiency_at("gemm_fp32", 1e3) == 0.1  # clamped below
    assert d.efficiency_at("gemm_fp32", 1e15) == 0.9  # clamped above
    # 10^7.5 is halfway between 10^6 and 10^9 in log size: 0.1 + 0.5 x 0.4
    assert d.efficiency_at("gemm_fp32", 10**7.5) == pytest.approx(0.3)
    assert d.efficiency_at("gemm_fp64", 1e9) is None


@pytest.mark.parametrize("curve,msg", [([[1e6, 1.5]], "fractions in \\(0, 1\\]"), ([[1e9, 0.5], [1e6, 0.2]], "increasing"),
                                       ([], "at least one point")])
def test_efficiency_curve_validated(curve, msg):
    from pydantic import ValidationError

    from suite.hardware.schema import Device

    with pytest.raises(ValidationError, match=msg):
        Device(type="cpu", memory=1e9, memory_bandwidth=1e9, peak_flops={"fp32": 1e11}, efficiency={"g": curve})


def test_calibrate_refuses_a_name_another_profile_would_shadow(tmp_path, monkeypatch):
    """-o FILE with --name local while a `local` profile exists elsewhere: the new file would be
    shadowed (the first definition wins), so calibrate refuses at once, before measuring."""
    from click.testing import CliRunner

    from suite.cli import main

    existing = tmp_path / "p"
    existing.mkdir()
    (existing / "local.toml").write_text('[profile]\nname = "local"\nkind = "device"\n[device]\ntype = "cpu"\n'
                                         'memory = "1 GiB"\nmemory_bandwidth = "1 GB/s"\n'
                                         'peak_flops = { fp64 = "1 GFLOP/s" }\n')
    monkeypatch.setenv("SUITE_PROFILES", str(existing))
    out = tmp_path / "new.toml"
    r = CliRunner().invoke(main, ["hardware", "calibrate", "--quick", "-o", str(out)])
    assert r.exit_code == 2 and not out.exists()
    assert "--name local: expected a name not in the profile library, got one already defined in" in r.output


def test_gemm_peak_is_the_best_product_not_the_median():
    """A peak is what the machine can do: other load only slows a product down, so the GEMM peak is
    the fastest of its repeats (the median of 3 small quick products read 5-164 GFLOP/s on one
    machine where numpy reached 142-175); the samples stay recorded for the spread."""
    from suite.hardware.calibrate import measure_gemm

    m = measure_gemm("float32", 4, target_s=0.001, n_max=128, n_min=64)
    assert len(m.samples) == 4 and m.value == max(m.samples) and "best of 4" in m.method


def test_validate_warns_when_the_calibration_is_noisy_old_or_quick():
    from datetime import datetime, timezone
    from types import SimpleNamespace

    from suite.hardware.calibrate import calibration_warnings

    prof = SimpleNamespace(kind="measured", name="local", measured={
        "started": "2026-01-01T00:00:00+00:00", "quick": True,
        "device.peak_flops.fp32": {"value": 1.2e10, "spread": 1.8}, "stream.triad": {"value": 1e10, "spread": 0.05}})
    w = calibration_warnings(prof, now=datetime(2026, 3, 2, tzinfo=timezone.utc))
    assert len(w) == 3
    assert "device.peak_flops.fp32 180%" in w[0] and "stream.triad" not in w[0]
    assert "calibrated 60 days ago" in w[1] and "--quick" in w[2]
    fresh = SimpleNamespace(kind="measured", name="local", measured={
        "started": "2026-03-01T00:00:00+00:00", "quick": False, "stream.triad": {"spread": 0.05}})
    assert calibration_warnings(fresh, now=datetime(2026, 3, 2, tzinfo=timezone.utc)) == []
    assert calibration_warnings(SimpleNamespace(kind="cluster", name="x", measured={})) == []


def test_calibrate_writes_under_suite_config_dir_and_nothing_under_home(tmp_path, monkeypatch):
    """$SUITE_CONFIG_DIR moves the per-user folder (where calibrate writes and the library reads)
    as $SUITE_CACHE_DIR moves the cache: a sandbox that sets it leaves HOME alone (a trial's
    calibrate under SUITE_STORE/SUITE_CACHE_DIR replaced ~/.config/dlsys-suite/profiles/local.toml)."""
    home, cfg = tmp_path / "home", tmp_path / "cfg"
    home.mkdir()
    monkeypatch.setattr(cal, "calibrate", lambda quick=False, progress=False: _fake_calibration())
    env = {"HOME": str(home), "XDG_CONFIG_HOME": None, "SUITE_PROFILES": None, "SUITE_CONFIG_DIR": str(cfg)}
    clear_cache()
    try:
        res = run("hardware", "calibrate", "--quick", env=env)
        out = cfg / "profiles" / "local.toml"
        assert res.exit_code == 0, res.output
        assert f"wrote {out}" in res.output and out.exists()
        assert list(home.rglob("*")) == []
        res = run("hardware", "show", "local", "--format", "json", env=env)
        assert res.exit_code == 0, res.output
        assert json.loads(res.output)["kind"] == "measured"
    finally:
        clear_cache()


def test_calibrate_refuses_a_default_destination_another_local_profile_would_shadow(tmp_path, monkeypatch):
    """With $SUITE_PROFILES set, the default destination is its first folder, searched after the
    per-user folder: a `local` profile already there would win and the new file be skipped as a
    duplicate, so calibrate refuses before measuring (as it does for -o FILE)."""
    cfg, extra = tmp_path / "cfg", tmp_path / "extra"
    (cfg / "profiles").mkdir(parents=True)
    extra.mkdir()
    old = cfg / "profiles" / "local.toml"
    old.write_text(cal.to_toml(_fake_calibration(), name="local"))

    def never(quick=False, progress=False):
        raise AssertionError("measured although the result would be shadowed")

    monkeypatch.setattr(cal, "calibrate", never)
    env = {"SUITE_CONFIG_DIR": str(cfg), "SUITE_PROFILES": str(extra), "XDG_CONFIG_HOME": None}
    clear_cache()
    try:
        res = run("hardware", "calibrate", "--quick", env=env)
        assert res.exit_code == 2 and not (extra / "local.toml").exists()
        assert f"--name local: expected a name not in the profile library, got one already defined in {old}" \
            in res.output
    finally:
        clear_cache()
