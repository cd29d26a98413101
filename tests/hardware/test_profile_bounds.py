"""Counts and shapes a model read as something else are refused, by ``--set`` as by a file
(tests/hardware/malformed/ holds the files): ``node.nics_per_node = 0`` was priced as 1 NIC and -8
as -8 x the NIC bandwidth (mg-wfbp sync, resnet-50, 64 workers on h100-ndr-fat-tree: comm_time
0.663 ms at -8 against 0.719 ms at 8 real NICs, stored ok). And ``hardware show`` says which figure
an override wrote and what its bisection formula multiplies."""

from __future__ import annotations

import json

import pytest

from suite.errors import ProfileError
from suite.hardware.derived import derived
from session_context import session_context

H100 = "h100-ndr-fat-tree"  # 32 nodes of 8 H100, 8 NICs of 400 Gbit/s (50 GB/s) each, one fat-tree


@pytest.mark.parametrize("field, value, expected", [
    ("node.nics_per_node", "0", "expected an integer >= 1, got '0'"),
    ("node.nics_per_node", "-1", "expected an integer >= 1, got '-1'"),
    ("node.nics_per_node", "-8", "expected an integer >= 1, got '-8'"),
    ("device.cores", "0", "expected an integer >= 1, got '0'"),
    ("network.-1.oversubscription", "inf", "expected a finite number >= 1, got inf"),
    # odyssey's redundant simulation read 0 h as no failures: 15.27 samples/s, as at 50000 h (1e-9 h: 0)
    ("reliability.device_mtbf", "0 h", 'expected a time > 0 like "2 us", got \'0 h\''),
])
def test_a_value_a_model_misread_is_refused_by_set(field, value, expected):
    prof = session_context().profile(H100)
    with pytest.raises(ProfileError) as exc:
        prof.with_overrides({field: value})
    assert str(exc.value) == f"profile {H100!r}: override {field!r}: {expected}"


def _bisection(prof):
    return next((d.value, d.formula) for d in derived(prof) if d.name == "network.1.bisection_bandwidth")


def test_the_bisection_formula_names_the_nics_it_multiplies():
    """32 nodes: 16 x 8 NICs x 50 GB/s = 6.4 TB/s; with one NIC 16 x 50 GB/s = 800 GB/s."""
    prof = session_context().profile(H100)
    assert _bisection(prof) == (pytest.approx(6.4e12), "fat-tree of 32: n/2 x 8 NICs x bandwidth / oversubscription 1 "
                                                       "(non-blocking)")
    one = prof.with_overrides({"node.nics_per_node": "1"})
    assert _bisection(one) == (pytest.approx(8e11), "fat-tree of 32: n/2 x 1 NIC x bandwidth / oversubscription 1 "
                                                    "(non-blocking)")


def test_show_labels_an_overridden_figure_with_the_files_value_and_source(suite_cli):
    res = suite_cli("hardware", "show", "dgx-h100", "--set", "network.-1.bandwidth=100 GB/s",
                    "--set", "reliability.device_mtbf=1000 h", "--format", "json")
    assert res.exit_code == 0, res.output
    src = {f["path"]: (f["display"], f["source"]) for f in json.loads(res.output)["fields"]}
    assert src["network.0.bandwidth"] == ("100 GB/s", "--set override (file: 450 GB/s, NVIDIA H100 datasheet: NVLink "
                                                      "900 GB/s total per GPU = 450 GB/s per direction)")
    assert src["reliability.device_mtbf"] == ("1000 h", "--set override (not in the file)")
    assert src["network.0.latency"][1].startswith("assumption: ~1 us")  # not overridden: the file's own source
    text = suite_cli("hardware", "show", "dgx-h100", "--set", "network.0.bandwidth=100 GB/s")
    assert "--set override (file: 450 GB/s," in text.output
