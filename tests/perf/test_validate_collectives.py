"""The collective model against the published measurements of validation/collectives/ (issue 40).

Each group's geometric-mean |time error| stays under its documented bound (docs/validation.md);
the calibrated constants are re-derived from the rows marked calibration = true, so a change of
either shows here; the set keeps the sources it must leave out out of it."""

import csv
import json

import pytest

from session_context import session_context
from suite.perf.network.nccl import SIMPLE_EFFICIENCY
from suite.validate_collectives import (BOUNDS, MIB, derive_efficiency, error_stats, load_rows, price_rows, summarize,
                                       summarize_sources, validation_dir)


@pytest.fixture(scope="module")
def rows():
    return price_rows(load_rows(), session_context().profile)


def test_every_group_within_its_bound(rows):
    seen = 0
    for s in summarize(rows):
        if s["rows"] == 0:
            continue
        seen += 1
        assert s["geomean |error|"] <= BOUNDS[(s["group"], s["size"])], s
    assert seen == 10  # 1 node x 2, x 4, x 8 and 4 nodes below and from 1 MiB; 2 and 8 nodes from 1 MiB


def test_bounds_are_the_issue_targets_but_the_documented_misses():
    # issue 40's targets, except 1 node x 2 from 1 MiB: the V100-PCIe table runs through host
    # memory (SHM) at 6.89 GB/s busbw where NCCL's own figure for the path, 10 GB/s, predicts ~28 %
    # less time at large sizes (documented; geomean 12.0 %); and 8 nodes from 1 MiB (documented;
    # 11.9 %, 2-8 MiB to -38 %)
    big = {g: b for (g, s), b in BOUNDS.items() if s == ">= 1 MiB"}
    assert big == {"1 node x 2": 0.125, "1 node x 4": 0.10, "1 node x 8": 0.10, "2 nodes": 0.10, "4 nodes": 0.10,
                   "8 nodes": 0.125}  # the misses just under their bound: a worse model fails here
    assert {b for (g, s), b in BOUNDS.items() if s == "< 1 MiB"} == {0.25}


def test_each_node_count_is_its_own_group(rows):
    """Pooled over 2-16 nodes, the multi-node rows from 1 MiB gave 4.9 % (the 2-node rows at 1.4 %)
    and the command said every group was within the 10 % target, where the 8 x 8 rows alone give
    11.9 % (an expert tryout): each placement is judged on its own now, and the miss is printed."""
    by = {(s["group"], s["size"]): s for s in summarize(rows)}
    assert [by[(g, ">= 1 MiB")]["rows"] for g in ("2 nodes", "4 nodes", "8 nodes")] == [14, 29, 14]
    assert by[("8 nodes", ">= 1 MiB")]["geomean |error|"] == pytest.approx(0.119, abs=5e-4)
    assert by[("2 nodes", ">= 1 MiB")]["geomean |error|"] == pytest.approx(0.014, abs=5e-4)


def test_error_stats_are_the_hand_counted_figures():
    """|errors| 0, 0.1, 0.2, 0.3: median (0.1 + 0.2) / 2, mean 0.6 / 4, geomean (1e-9 x 0.1 x 0.2 x
    0.3) ** (1/4) = 6e-12 ** 0.25 = 1.565e-3 (0 floored at 1e-9: one row near 0 drags it 100x below
    the median, which is why the median and mean are printed beside it)."""
    st = error_stats([0.0, -0.1, 0.2, -0.3])
    assert st["median |error|"] == pytest.approx(0.15) and st["mean |error|"] == pytest.approx(0.15)
    assert st["max |error|"] == pytest.approx(0.3) and st["geomean |error|"] == pytest.approx(1.565e-3, rel=1e-3)
    assert error_stats([0.05, -0.5, 0.01])["median |error|"] == pytest.approx(0.05)
    assert set(error_stats([]).values()) == {None}


def test_median_and_mean_stand_beside_the_geomean(rows):
    """An audit counted them by hand from the rows (``--format json``): 2 nodes from 1 MiB, geomean
    1.4 % but median 1.0 %, mean 5.7 % (7 of 14 rows within 1 %, the worst 16.2 %); 1 node x 2 from
    1 MiB median 27.4 %, mean 21.1 %; 1 node x 4 from 1 MiB mean 9.4 %."""
    by = {(s["group"], s["size"]): s for s in summarize(rows)}
    two = by[("2 nodes", ">= 1 MiB")]
    assert (round(100 * two["median |error|"], 1), round(100 * two["mean |error|"], 1)) == (1.0, 5.7)
    assert (round(100 * by[("1 node x 2", ">= 1 MiB")]["median |error|"], 1),
            round(100 * by[("1 node x 2", ">= 1 MiB")]["mean |error|"], 1)) == (27.4, 21.1)
    assert round(100 * by[("1 node x 4", ">= 1 MiB")]["mean |error|"], 1) == 9.4
    (src,) = [s for s in summarize_sources(rows) if s["nodes x GPUs"] == "2x8"]
    assert src["rows"] == 14 and src["median |error|"] == two["median |error|"]


def test_groups_on_a_calibration_tables_setup_say_so(rows):
    """gj-aion's 2 x 8 rows run on the profile and placement of the multi-node curve's calibration
    table (qoofyk's 2 x 8, the same HGX H100 + NDR400 hardware): the group names that curve; the 4-
    and 8-node groups share no calibration row's setup; a group whose table has its launch overhead
    calibrated below 1 MiB names it there."""
    by = {(s["group"], s["size"]): s["same setup as calibration of"] for s in summarize(rows)}
    assert by[("2 nodes", ">= 1 MiB")] == ["SIMPLE_EFFICIENCY['multi-node']"]
    assert by[("4 nodes", ">= 1 MiB")] == by[("8 nodes", ">= 1 MiB")] == by[("1 node x 8", ">= 1 MiB")] == []
    assert by[("1 node x 2", "< 1 MiB")] == ["launch_overhead"]


def test_calibration_rows_stay_calibrated(rows):
    """A calibration row priced by the candidate its constant was solved for stays on its measured
    time: the launch-overhead rows within 0.5 % (the Azure rows' busbw carries 2 decimals), the
    curves' points (1 MiB x 4^k) where ``auto`` picks Simple within 0.1 %. Where ``auto`` picks
    another protocol the curve does not price the row (the A100 table's 1, 16 and 64 MiB rows:
    +45 %, -24 %, -15 %, docs/validation.md)."""
    cal = [r for r in rows if r.calibration]
    for r in cal:
        if "launch_overhead" in r.calibrates:
            assert abs(r.error) < 0.005, (r.profile, r.nbytes, r.error)
    fit = [r for r in cal if r.nbytes in {MIB << (2 * k) for k in range(12)} and r.algorithm.endswith("/Simple")]
    assert sorted({r.profile: sum(1 for q in fit if q.profile == r.profile) for r in fit}.items()) == [
        ("azure-nd-a100-v4", 3), ("azure-nd-h100-v5", 7), ("hgx-h100-ndr400", 8)]
    for r in fit:
        assert abs(r.error) < 0.001, (r.profile, r.nbytes, r.error)


def test_2gpu_group_has_rows_on_both_sides_of_1mib(rows):
    by = {(s["group"], s["size"]): s for s in summarize(rows)}
    # 29 rows of the NC12s v3 table (8 B..2 GiB), the 8 B row calibrates the launch overhead
    assert by[("1 node x 2", "< 1 MiB")]["rows"] == 16
    assert by[("1 node x 2", ">= 1 MiB")]["rows"] == 12
    # hand check at 2 GiB: ring/Simple on 2 GPUs moves m x 2(n-1)/n = m; the path (PHB through an
    # Intel root complex) carries 16 GB/s x 0.75 (NCCL's PCI_BW) / 1.2 (INTEL_P2P_OVERHEAD) = 10 GB/s,
    # times the ring curve's 0.963 at that size: 2^31 B / 9.63 GB/s = 223.0 ms (+ 23 us of latency);
    # measured 311.6 ms: the model is 28.4 % fast there
    big = next(r for r in rows if r.source == "azure-nc12s-v3-v100-pcie.csv" and r.nbytes == 2**31)
    assert big.predicted == pytest.approx(2**31 / (16e9 * 0.75 / 1.2 * 0.963) + 22.7e-6, rel=1e-3)
    assert big.error == pytest.approx((0.22302 - 0.31162) / 0.31162, abs=2e-3)


@pytest.mark.parametrize("family,profile,figure", [
    ("ring", "azure-nd-a100-v4", None),
    ("nvls", "azure-nd-h100-v5", None),
    ("multi-node", "hgx-h100-ndr400", "issue description"),
])
def test_efficiency_curves_are_their_calibration_tables(family, profile, figure):
    cal = [r for r in load_rows() if r.profile == profile and r.calibration
           and (figure is None or r.figure.startswith(figure))]
    assert cal and all(f"SIMPLE_EFFICIENCY['{family}']" in r.calibrates for r in cal)
    assert derive_efficiency(cal, session_context().profile(profile), family) == SIMPLE_EFFICIENCY[family]


@pytest.mark.parametrize("profile,smallest_latency_us", [
    ("azure-nd-a100-v4", 15.0), ("azure-nd-h100-v5", 15.0), ("azure-nd-h200-v5", 15.0),
    ("azure-nd-gb200-v6", 10.2),  # ring/LL: 6.6 + (2 (n-1)) x 0.6 us on n = 8 and 4 GPUs
])
def test_launch_overheads_are_their_1_kib_rows(profile, smallest_latency_us):
    (row,) = [r for r in load_rows() if r.profile == profile and r.nbytes == 1024]
    assert row.calibration and "launch_overhead" in row.calibrates
    declared = session_context().profile(profile).communication.launch_overhead
    assert declared == pytest.approx(row.measured - smallest_latency_us * 1e-6, abs=0.06e-6)


def test_every_row_names_its_source_and_the_excluded_sources_stay_out():
    for path in sorted(validation_dir().glob("*.csv")):
        with path.open(newline="") as f:
            for r in csv.DictReader(f):
                assert r["source_url"].startswith("https://") and r["figure"], (path.name, r)
                low = (r["source_url"] + r["figure"]).lower()
                assert "ml-engineering" not in low and "a3-mega" not in low and "a3mega" not in low
                assert not low.rstrip("/").endswith(("issues/149", "issues/175")), r["source_url"]
                session_context().profile(r["profile"])  # the matching profile ships


def test_cli_prints_the_summary_as_json(suite_cli):
    res = suite_cli(["validate", "--collectives", "--format", "json"])
    assert res.exit_code == 0, res.output
    data = json.loads(res.output)
    assert len(data["rows"]) == len(load_rows()) and {s["group"] for s in data["summary"]} >= {"8 nodes"}
    two = next(s for s in data["summary"] if (s["group"], s["size"]) == ("2 nodes", ">= 1 MiB"))
    assert round(100 * two["median |error|"], 1) == 1.0 and round(100 * two["mean |error|"], 1) == 5.7
    assert [s["rows"] for s in data["sources"] if s["nodes x GPUs"] == "4x8"] == [14, 17, 15]


def test_cli_names_the_groups_over_the_target(suite_cli):
    res = suite_cli(["validate", "--collectives", "-q"])
    assert res.exit_code == 0, res.output
    text = " ".join(res.output.split())
    assert "every group within its bound" in text
    assert ("over the target (25.0 % < 1 MiB, 10.0 % >= 1 MiB), within a documented bound: 1 node x 2 >= 1 MiB (12.0 %), "
            "8 nodes >= 1 MiB (11.9 %)") in text
