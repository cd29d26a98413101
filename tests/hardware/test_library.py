"""The shipped profile library: everything validates, every figure has a source, figures lie in
physical ranges, the names other plugins rely on exist, and the content hash behaves."""

from __future__ import annotations

import re
import shutil

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.cli.hardware import _source_for
from suite.errors import SuiteError
from suite.hardware import ProfileLibrary, profile_dirs
from suite.hardware.derived import bisection_bandwidth, derived, flatten
from suite.hardware.units import format_quantity, parse_quantity
from suite.resources import builtin_dir

SHIPPED = builtin_dir("hardware_profiles")
from session_context import session_context  # noqa: E402

LIB = ProfileLibrary([SHIPPED], extensions=session_context().extensions())  # the installed plugins' [ext.*] schemas too
ALL = LIB.all()
BY_NAME = {p.name: p for p in ALL}

DEVICES = ["nvidia-k40c", "nvidia-k80", "nvidia-titan-x-maxwell", "nvidia-titan-x-pascal", "nvidia-titan-xp",
           "nvidia-gtx-1080-ti", "nvidia-rtx-2070", "nvidia-rtx-a5000", "nvidia-v100-sxm2-16gb",
           "nvidia-v100-sxm2-32gb", "nvidia-a40", "nvidia-a100-sxm4-40gb", "nvidia-a100-sxm4-80gb",
           "nvidia-a800-sxm4-80gb", "nvidia-h100-sxm5-80gb", "nvidia-h200-sxm-141gb", "nvidia-gh200", "nvidia-b200",
           "amd-mi250x", "amd-mi300x", "google-tpu-v4", "google-tpu-v5p", "cerebras-wse-2",
           "intel-xeon-platinum-8280", "amd-epyc-7763"]
NODES = ["dgx-1-v100", "dgx-a100", "dgx-h100", "hgx-h200", "frontier-node", "perlmutter-gpu-node",
         "k40c-workstation", "titan-xp-workstation"]
CLUSTERS = ["titanx-cluster-10gbe", "titanx-cluster-40gbe", "k80-cluster-10gbe", "k80-cluster-ib56",
            "gtx1080ti-6x3-ib56", "a40-64", "a800-64", "ft-32dev", "selene-dgx-a100", "h100-ndr-fat-tree", "frontier",
            "perlmutter"]


def test_at_least_30_profiles_all_valid():
    assert len(LIB) >= 30
    assert LIB.check_all() == {}
    assert LIB.warnings == []


@pytest.mark.parametrize("name,kind", [(n, "device") for n in DEVICES] + [(n, "node") for n in NODES]
                         + [(n, "cluster") for n in CLUSTERS])
def test_agreed_names_exist_with_kind(name, kind):
    assert BY_NAME[name].kind == kind


def test_library_is_shipped_folder_first():
    assert profile_dirs()[0] == SHIPPED
    assert set(LIB.names()) <= set(session_context().profiles.names())


@pytest.mark.parametrize("prof", ALL, ids=lambda p: p.name)
def test_every_figure_has_a_source(prof):
    assert prof.source
    missing = []
    for f in flatten(prof):
        if f.dimension is None or f.value in (0, 0.0):
            continue  # not a quantity, or a schema default (latency 0 when not given)
        if ".fits." in f.path:
            i, j = re.match(r"network\.(\d+)\.fits\.(\d+)\.", f.path).groups()
            if not prof.network[int(i)].fits[int(j)].source:
                missing.append(f.path)
            continue
        if not _source_for(prof, f.path):
            missing.append(f.path)
    assert missing == []


@pytest.mark.parametrize("prof", ALL, ids=lambda p: p.name)
def test_assumptions_are_declared(prof):
    """A profile whose sources say 'assumption' says so in its description too, and is unverified."""
    if any("assumption" in s.lower() for s in prof.sources.values()) and prof.kind == "cluster":
        assert "ASSUMPTION" in prof.description.upper()
    if prof.kind != "measured":
        assert prof.verified is False  # nothing was re-checked against its document in this library


# ----------------------------------------------------------------------------- sanity ranges
# Line rates per direction, by technology, written out by hand:
#  PCIe gen g x16: raw signalling 2.5/5/8/16/32 GT/s per lane x 16 lanes / 8 bits
#  NVLink 2/3/4/5 per GPU per direction: 150 / 300 / 450 / 900 GB/s (V100/A100/H100/B200 datasheets)
#  Ethernet / InfiniBand / Slingshot: the rate in the name (Gbit/s), Slingshot-11 200 Gbit/s
PCIE_GTS = {1: 2.5e9, 2: 5e9, 3: 8e9, 4: 16e9, 5: 32e9, 6: 64e9}
NVLINK = {2: 150e9, 3: 300e9, 4: 450e9, 5: 900e9}


def line_rate(name: str) -> float:
    """Upper bound (B/s per direction) of a network level or host link named *name*."""
    n = name.lower()
    if m := re.search(r"pcie ?(\d)(?:\.0)?(?: x(\d+))?", n):
        return PCIE_GTS[int(m.group(1))] * int(m.group(2) or 16) / 8
    if "k80-board-pcie" in n:
        return PCIE_GTS[3] * 16 / 8
    if m := re.search(r"pcie ?(\d)", n):
        return PCIE_GTS[int(m.group(1))] * 16 / 8
    if m := re.search(r"nvlink(\d)", n):
        return NVLINK[int(m.group(1))]
    if n == "nvlink-c2c":
        return 450e9
    if m := re.search(r"(?:ethernet|infiniband)\D*?(\d+)g", n):
        return int(m.group(1)) * 1e9 / 8
    if m := re.match(r"omni-path-(\d+)g$", n):
        return int(m.group(1)) * 1e9 / 8  # Intel Omni-Path port: the rate in the name (Gbit/s)
    if m := re.match(r"(?:aws-enhanced|efa)-(\d+)g$", n):
        return int(m.group(1)) * 1e9 / 8  # AWS ENA / EFA port: the rate in the name (Gbit/s)
    if "slingshot-11" in n:
        return 200e9 / 8
    if "infinity-fabric" in n:
        return 200e9  # MI250X in-package GCD link, the fastest xGMI link of the generation
    if n == "shared-memory":
        return 12 * 6400e6 * 8  # DRAM-bound copies: at most one 12-channel DDR5-6400 socket (614 GB/s)
    if n.startswith("wifi"):
        return 9.6e9 / 8  # 802.11ax (Wi-Fi 6) maximum PHY rate, 9.6 Gbit/s
    if n.startswith("wan"):
        return 400e9 / 8  # a wide-area link is no faster than a 400G Ethernet port
    if n.endswith("-calibrated"):
        return 400e9 / 8  # an effective rate fitted to measurements: no faster than a 400G NIC port
    raise AssertionError(f"no line-rate rule for link {name!r}: add one to this test")


@pytest.mark.parametrize("prof", ALL, ids=lambda p: p.name)
def test_sanity_ranges(prof):
    dev = prof.device
    assert dev is not None
    for dtype, rate in dev.peak_flops.items():
        assert 1e9 <= rate <= 10e15, (dtype, rate)  # no device above 10 PFLOP/s dense
    if dev.type != "wafer":
        assert 1e9 <= dev.memory_bandwidth < 10e12  # single device below 10 TB/s
        # an FPGA publishes no FLOP/s: its rate depends on the design built from its [ext.fpga] resources
        assert dev.peak_flops or (dev.type == "fpga" and prof.ext.get("fpga"))
    if dev.type in ("gpu", "tpu"):
        assert 4e9 <= dev.memory <= 256e9
    # precision ladder: lower precision is never slower
    ladder = [k for k in ("fp64", "fp32", "tf32", "fp16", "fp8") if k in dev.peak_flops]
    for lo, hi in zip(ladder, ladder[1:]):
        assert dev.peak_flops[lo] <= dev.peak_flops[hi], (lo, hi)
    if "bf16" in dev.peak_flops and "fp16" in dev.peak_flops:
        assert dev.peak_flops["bf16"] == dev.peak_flops["fp16"]
    if dev.host_link is not None:
        assert 0 < dev.host_link.bandwidth <= line_rate(dev.host_link.name.split(" (")[0]) * 1.0001
    if "fp32" in dev.peak_flops:
        assert 1 <= dev.peak_flops["fp32"] / dev.memory_bandwidth <= 100  # machine balance, FLOP/B
    for lvl in prof.network:
        assert 0 < lvl.bandwidth <= line_rate(lvl.name) * 1.0001, lvl.name
        wide = lvl.name.lower().startswith(("wifi", "wan"))  # wireless / wide-area: ms, not us
        assert 1e-7 <= lvl.latency <= (0.2 if wide else 1e-3), lvl.name
        for fit in lvl.fits:
            assert 1e-7 <= fit.alpha <= 1e-2
            assert 1 / fit.beta <= 8 * lvl.bandwidth  # an all-reduce is not faster than 8x the link
    if prof.kind == "cluster":
        assert prof.network[-1].size == prof.nodes
        if len(prof.network) > 1:
            assert prof.network[0].size == prof.node.devices_per_node
    if prof.reliability and prof.reliability.device_mtbf:
        assert prof.reliability.device_mtbf >= 1000 * 3600


def test_known_figures_in_si():
    """Spot checks of the unit conversion on shipped files (hand-computed)."""
    a100 = BY_NAME["nvidia-a100-sxm4-80gb"].device
    assert a100.memory == 80e9 and a100.memory_bandwidth == 2039e9 and a100.peak_flops["bf16"] == 312e12
    assert BY_NAME["google-tpu-v4"].device.memory == 32 * 2**30
    assert BY_NAME["titanx-cluster-10gbe"].network[-1].bandwidth == 1.25e9  # 10 Gbit/s
    assert BY_NAME["gtx1080ti-6x3-ib56"].network[-1].bandwidth == 7e9  # 56 Gbit/s
    fits = {f.workers: (f.alpha, f.beta) for f in BY_NAME["k80-cluster-10gbe"].network[-1].fits}
    assert fits == {16: (9.080981e-4, 7.395651e-10), 8: (5.230273e-4, 8.570747e-10)}  # placeholders left out
    ib = {f.workers for f in BY_NAME["k80-cluster-ib56"].network[-1].fits}
    assert ib == {2, 4, 8, 16}
    assert BY_NAME["ft-32dev"].num_devices == 32
    assert BY_NAME["perlmutter"].devices_per_node == 4 and BY_NAME["perlmutter"].node.nics_per_node == 4
    assert BY_NAME["perlmutter"].device.memory == 80e9
    assert BY_NAME["frontier"].num_devices == 9408 * 4


def test_derived_figures_by_hand():
    d = {x.name: x.value for x in derived(BY_NAME["perlmutter"])}
    assert d["machine_balance.fp32"] == pytest.approx(19.5e12 / 2039e9)
    assert d["machine_balance.bf16"] == pytest.approx(312e12 / 2039e9)
    assert d["devices_total"] == 1024
    assert d["network.-1.aggregate_injection"] == pytest.approx(256 * 4 * 25e9)
    # 4 GPUs fully connected, 300 GB/s each over 3 links: 2 x 2 links of 100 GB/s cross the cut
    assert d["network.0.bisection_bandwidth"] == pytest.approx(400e9)
    sel = BY_NAME["selene-dgx-a100"]
    # fat-tree of 560 nodes, 8 NICs x 25 GB/s per node, non-blocking: 280 x 200 GB/s
    assert bisection_bandwidth(sel, -1) == pytest.approx(280 * 8 * 25e9)
    # dragonfly of 9408 nodes, 4 NICs x 25 GB/s, global taper 1 (the default): 4704 x 100 GB/s
    assert bisection_bandwidth(BY_NAME["frontier"], -1) == pytest.approx(4704 * 4 * 25e9)


# ----------------------------------------------------------------------------- content hash

def test_hash_stable_across_key_order_and_location(tmp_path):
    src = SHIPPED / "devices" / "nvidia-v100-sxm2-16gb.toml"
    text = src.read_text()
    (tmp_path / "a").mkdir()
    shutil.copy(src, tmp_path / "a" / "v.toml")
    # reorder the [device] keys and change prose: same content
    lines = text.splitlines()
    start = lines.index("[device]") + 1
    end = next(i for i in range(start, len(lines)) if not lines[i].strip())
    body = lines[start:end][::-1]
    reordered = "\n".join(lines[:start] + body + lines[end:]).replace("Figures recalled", "Numbers recalled")
    reordered = reordered.replace('memory_bandwidth = "900 GB/s"', 'memory_bandwidth = "7200 Gbit/s"')
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "v.toml").write_text(reordered)
    h0 = LIB.get("nvidia-v100-sxm2-16gb").content_hash()
    ha = ProfileLibrary([tmp_path / "a"]).get("nvidia-v100-sxm2-16gb").content_hash()
    hb = ProfileLibrary([tmp_path / "b"]).get("nvidia-v100-sxm2-16gb").content_hash()
    assert h0 == ha == hb
    assert re.fullmatch(r"[0-9a-f]{16}", h0)


def _device_refused(p, path: str) -> bool:
    """``device.*`` on a profile with several groups of the device's type is refused (issue 42;
    tests/hardware/test_device_groups_overrides.py): change a group's device instead."""
    same = {g.name for g in p.groups if p.device is not None and g.device.type == p.device.type}
    return path.startswith("device.") and len(same) > 1


NUMERIC = [(p.name, f.path) for p in ALL if p.kind != "device" for f in flatten(p)
           if f.dimension and isinstance(f.value, float) and f.value > 0 and ".fits." not in f.path
           and not _device_refused(p, f.path)]


@settings(max_examples=25, deadline=None)
@given(st.sampled_from(NUMERIC), st.floats(1.01, 3.0))
def test_any_figure_changed_changes_hash(case, factor):
    name, path = case
    prof = BY_NAME[name]
    value = next(f.value for f in flatten(prof) if f.path == path)
    changed = prof.with_overrides({path: value * factor})
    assert changed.content_hash() != prof.content_hash()


def test_override_records_and_parses_units():
    prof = BY_NAME["titanx-cluster-10gbe"]
    q = prof.with_overrides({"network.-1.bandwidth": "40 Gbit/s"})
    assert q.network[-1].bandwidth == 5e9
    assert q.overrides == {"network.-1.bandwidth": "40 Gbit/s"}
    assert q.content_hash() != BY_NAME["titanx-cluster-40gbe"].content_hash()  # the name and overrides differ


def test_an_override_of_a_missing_level_names_the_levels_there_are():
    """`--set network.1.bandwidth=...` on a one-level profile said only "expected the dotted path of a
    field of this profile": the levels (and that -1 is the outermost) are what the user needs."""
    from suite.errors import ProfileError

    prof = BY_NAME["titanx-cluster-10gbe"]
    assert len(prof.network) == 1
    with pytest.raises(ProfileError) as e:
        prof.with_overrides({"network.1.bandwidth": "40 Gbit/s"})
    assert str(e.value) == ("profile 'titanx-cluster-10gbe': override 'network.1.bandwidth': expected a network level "
                            f"of this profile (1 level(s): network.0 ({prof.network[0].name}); network.-1 is the "
                            "outermost), got network.1")
    with pytest.raises(ProfileError, match=r"expected the dotted path of a field"):  # a level there, a field not
        prof.with_overrides({"network.0.bogus": "1"})


# ----------------------------------------------------------------------------- units round trip

DIMS = {"bytes": (1e3, 1e15), "bandwidth": (1e6, 1e16), "flop_rate": (1e9, 1e16), "time": (1e-9, 1e9),
        "per_byte_time": (1e-13, 1e-6), "power": (1.0, 1e6), "frequency": (1e6, 1e10)}


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(DIMS)), st.floats(0, 1))
def test_format_parse_round_trip(dim, u):
    lo, hi = DIMS[dim]
    value = lo * (hi / lo) ** u
    text = format_quantity(value, dim)
    assert parse_quantity(text, dim, strict=True) == pytest.approx(value, rel=1e-5)


def test_bits_and_bytes_never_guessed():
    assert parse_quantity("400 Gbit/s", "bandwidth") == 50e9
    assert parse_quantity("400 GB/s", "bandwidth") == 400e9
    assert parse_quantity("1 GiB", "bytes") == 2**30
    assert parse_quantity("1 GB", "bytes") == 1e9
    with pytest.raises(ValueError, match="bits: a size must be given in bytes"):
        parse_quantity("8 Gibit", "bytes")
    assert parse_quantity(5.0, "bytes") == 5.0  # programmatic SI float
    with pytest.raises(ValueError, match="a bare number"):
        parse_quantity(5.0, "bytes", strict=True)


@pytest.mark.parametrize("text, bytes_per_s", [("7 Gb/s", 875_000_000.0), ("100 Mb/s", 12_500_000.0),
                                                ("1 Tb/s", 125_000_000_000.0), ("8 kb/s", 1_000.0),
                                                ("7 Gb / s", 875_000_000.0), ("7 Gb/second", 875_000_000.0)])
def test_b_per_second_is_bits_per_second_as_networks_write_it(text, bytes_per_s):
    # a tryout's "7 Gb/s" was read as gilbert/s and "100 Mb/s" as megabarn/s (wrong dimension)
    assert parse_quantity(text, "bandwidth", strict=True) == bytes_per_s
    from suite.hardware.units import ureg  # pint itself, not the shipped table of the fast path

    assert ureg.Quantity(text).to("byte / second").magnitude == pytest.approx(bytes_per_s, rel=1e-12)


@pytest.mark.parametrize("text, said", [("1 mb/s", "'m' is milli: there is no millibit; did you mean Mb (mega)?"),
                                        ("100 mbps", "there is no millibit; did you mean Mbps (mega)?"),
                                        ("2 uB", "'u' is micro: there is no microbyte)"),
                                        ("3 mbit/s", "did you mean Mbit (mega)?"),
                                        ("1 cb/s", "'c' is centi: there is no centibit)"),
                                        ("1 fb/s", "'f' is femto: there is no femtobit)"),
                                        ("1 cB", "'c' is centi: there is no centibyte)")])
def test_a_sub_unit_prefix_on_bits_or_bytes_is_refused(text, said):
    # with "b" the bit, pint read "1 mb/s" as 1 millibit/s = 0.000125 B/s (a second reader): a
    # network's megabits written in lower case, 10^9 too slow, silently (0.3.7 refused it as barns)
    with pytest.raises(ValueError) as err:
        parse_quantity(text, "bandwidth")
    assert said in str(err.value)
    assert parse_quantity("10 ms", "time") == 0.01  # milli on a second stays milli


def test_a_size_in_b_is_bits_and_refused_as_a_size():
    with pytest.raises(ValueError, match="bits: a size must be given in bytes"):
        parse_quantity("80 Gb", "bytes")


def test_mix_devices_resolves_groups_like_node_device():
    from suite.hardware import mix_devices

    p = session_context().profile("edge-hetero")
    groups = mix_devices(p)
    assert [(n, c) for n, _, c in groups] == [("nvidia-jetson-nano", 10), ("raspberry-pi-4b", 10)]
    assert groups[0][1] == session_context().profile("nvidia-jetson-nano").device
    assert mix_devices(session_context().profile("nvidia-jetson-nano")) == ()


def test_mix_devices_names_the_bad_group(tmp_path):
    from suite.errors import ProfileError
    from suite.hardware import mix_devices

    (tmp_path / "bad.toml").write_text("""
[profile]
name = "bad-mix"
kind = "node"
[node]
device = "nvidia-titan-xp"
devices_per_node = 2
[ext.mix]
groups = [{ device = "nvidia-titan-xp", count = 1 }, { device = "no-such-gpu", count = 1 }]
""")
    lib = ProfileLibrary([SHIPPED, tmp_path])
    with pytest.raises(ProfileError, match=r"field ext\.mix\.groups\.1\.device: expected the name of a device"):
        mix_devices(lib.get("bad-mix"), lib)  # raised when the groups are resolved (load or lookup)


def test_an_override_of_a_mix_count_reaches_the_resolved_groups():
    """hyscale-cpu-gpu mixes 2 x amd-epyc-7763 and 4 x nvidia-rtx-a5000 ([ext.mix]); the groups
    are resolved when the file loads, so `--set ext.mix.groups.1.count=8` must reach them (it
    used to change ext.mix only, and every technique reading profile.groups saw 4)."""
    from suite.errors import ProfileError
    from suite.hardware import mix_devices

    p = session_context().profiles.get("hyscale-cpu-gpu")
    q = p.with_overrides({"ext.mix.groups.1.count": "8"})
    assert [(g.name, g.count) for g in q.groups] == [("amd-epyc-7763", 2), ("nvidia-rtx-a5000", 8)]
    assert [c for _n, _d, c in mix_devices(q)] == [2, 8] and q.groups[1].device == p.groups[1].device
    with pytest.raises(ProfileError, match="override of ext.mix: expected the groups' devices"):
        p.with_overrides({"ext.mix.groups.0.device": "nvidia-k40c"})
    with pytest.raises(ProfileError, match="override 'node.cpu'"):
        p.with_overrides({"node.cpu": "nvidia-k40c"})
    with pytest.raises(ProfileError, match="override 'node.device': expected 'nvidia-rtx-a5000'"):
        p.with_overrides({"node.device": "nvidia-k40c"})
    assert p.with_overrides({"node.device": p.node.device, "nodes": 1}).device == p.device


@pytest.mark.parametrize("text", ["2 ms/s", "3 percent"])
def test_a_dimensionless_unit_is_the_wrong_dimension_not_no_unit(text):
    # `latency = "2 ms/s"` said "(no unit)" (a new user's tryout): it has a unit, one of no dimension
    with pytest.raises(ValueError) as err:
        parse_quantity(text, "time")
    assert str(err.value) == f"expected a time like \"2 us\", got '{text}' (wrong dimension: dimensionless)"
    with pytest.raises(ValueError, match=r"got '2' \(no unit\)"):  # a bare number still has none
        parse_quantity("2", "time")


@pytest.mark.parametrize("path, near", [("network.-1.bandwith", "network.-1.bandwidth"),
                                        ("node.devices_pr_node", "node.devices_per_node"),
                                        ("netwrk.-1.latency", "network.-1.latency")])
def test_an_override_typo_gets_a_did_you_mean_as_a_file_key_does(path, near):
    # `--set network.-1.bandwith=...` named no field while the same typo in a file did (a new user's tryout)
    with pytest.raises(SuiteError) as err:
        BY_NAME["ft-32dev"].with_overrides({path: "1 GB/s"})
    assert str(err.value).endswith(f"got {path!r}; did you mean {near!r}?")


def test_an_override_far_from_every_field_gets_no_guess():
    with pytest.raises(SuiteError) as err:
        BY_NAME["ft-32dev"].with_overrides({"zzz": 1})
    assert str(err.value).endswith("got 'zzz'")
