"""A technique's default scale fits the profile it runs on, and `suite results show` says what it
resolved to. A new user's 4-node x 8-GPU profile (h800-4x8 here: 4 nodes of 8 H800, 32 GPUs):
poseidon at its defaults skipped every case ("nodes=16 exceeds the 4 nodes"), and mg-wfbp /
cocod-sgd ran on every device but stored ``param.workers`` empty, so nothing said 32 GPUs ran.
Model fidelity, milliseconds a case."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def show(suite_cli, tmp_path_factory):
    """``show(technique, profile, *more)``: the json cases of one default run (plus *more* options)."""
    store = tmp_path_factory.mktemp("defaults") / "s.sqlite"

    def run(technique, profile, *more):
        r = suite_cli("run", "-t", technique, "--profile", profile, *more, "-q", "--store", store)
        assert r.exit_code == 0, r.output
        r = suite_cli("results", "show", "latest", "--format", "json", "--store", store)
        assert r.exit_code == 0, r.output
        return {c["variant"]: c for c in json.loads(r.output)["cases"]}

    return run


@pytest.mark.parametrize("profile, nodes", [
    ("h800-4x8", 4),  # a cluster of 4 nodes: all 4 (was nodes=16: every case skipped)
    ("titanx-cluster-10gbe", 16),  # 32 single-GPU nodes: the paper's 16 at most
    ("dgx-h100", 8),  # one node of 8 GPUs behind NVSwitch: its 8 devices as workers
])
def test_poseidon_default_nodes_fit_the_profile_and_are_shown(show, profile, nodes):
    got = show("poseidon", profile)
    assert len(got) == 4 and {c["status"] for c in got.values()} == {"ok"}
    assert {c["nodes_used"] for c in got.values()} == {nodes}
    same = show("poseidon", profile, "--param", f"nodes={nodes}")  # the default is that explicit value
    assert {v: c["speedup"] for v, c in got.items()} == {v: c["speedup"] for v, c in same.items()}


def test_poseidon_says_it_uses_one_gpu_per_node(suite_cli, tmp_path):
    """On 4 nodes of 8 GPUs: 4 GPUs run, 28 idle; the setup artifact (one worker per node) and `suite
    info` say so, and the numbers are the one-GPU-per-node ones (speed-up < 4 over one node, not ~32)."""
    from suite.results.store import Store

    store = tmp_path / "s.sqlite"
    r = suite_cli("run", "-t", "poseidon", "--variant", "ps", "--profile", "h800-4x8", "-q", "--store", store)
    assert r.exit_code == 0, r.output
    with Store(store) as st:
        (res,) = [st.result(k) for k in st.cases(None)["key"]]
    assert res.artifacts["setup"]["workers_per_node"] == 1 and res["nodes_used"] == 4
    assert 3.5 < res["speedup"] <= 4.0
    info = suite_cli("info", "poseidon")
    assert "one GPU per node" in " ".join(info.output.split())


def test_dflop_default_nodes_fit_the_profile_and_are_shown(show):
    """dflop's nodes defaulted to the claim's 8: on fewer nodes every case failed (ValueError). Unset,
    it is the profile's nodes at most 8: Selene cut to 6 DGX A100 nodes runs on 6 (48 GPUs)."""
    got = show("dflop", "selene-dgx-a100", "--variant", "dflop", "--set", "nodes=6")["dflop"]
    assert got["status"] == "ok" and got["param.nodes"] is None and got["nodes_used"] == 6
    same = show("dflop", "selene-dgx-a100", "--variant", "dflop", "--set", "nodes=6", "--param", "nodes=6")["dflop"]
    assert got["step_time"] == same["step_time"]
    assert show("dflop", "selene-dgx-a100", "--variant", "dflop")["dflop"]["nodes_used"] == 8  # 560 nodes: 8


def test_dflop_more_nodes_than_the_profile_is_a_skip(show):
    got = show("dflop", "h800-4x8", "--variant", "megatron", "--param", "nodes=8")["megatron"]  # 4 nodes
    assert got["status"] == "skipped" and got["error"] == "dflop: nodes=8 but profile 'h800-4x8' has 4 nodes"


def test_dhelix_default_plan_fits_the_profile_and_is_shown(show):
    """dhelix's plan defaulted to tp 8 x pp 2 x dp 4 = 64 GPUs: on 32 GPUs every case skipped. dp left
    unset is the most replicas the profile holds, at most 4: 32 // 16 = 2 on h800-4x8, 4 on a800-64."""
    got = show("dhelix", "h800-4x8", "--variant", "dhelix,megatron")
    assert {c["status"] for c in got.values()} == {"ok"} and {c["dp_used"] for c in got.values()} == {2}
    same = show("dhelix", "h800-4x8", "--variant", "dhelix,megatron", "--param", "dp=2")
    assert {v: c["mfu"] for v, c in got.items()} == {v: c["mfu"] for v, c in same.items()}
    assert show("dhelix", "a800-64", "--variant", "dhelix")["dhelix"]["dp_used"] == 4  # the paper's 64 GPUs


def test_node_aware_grids_default_ranks_fit_the_profile_and_are_shown(show):
    """ranks defaulted to 64 (8 nodes x 8 ranks per node): on 4 nodes every case skipped. Unset, it
    is 8 ranks per node on every node, at most 64: 4 x 8 = 32 on h800-4x8, 64 on perlmutter-cpu."""
    got = show("node-aware-grids", "h800-4x8")
    assert {c["status"] for c in got.values()} == {"ok"}
    assert {(c["ranks_used"], c["nodes"]) for c in got.values()} == {(32, 4)}
    same = show("node-aware-grids", "h800-4x8", "--param", "ranks=32")
    assert {v: c["time"] for v, c in got.items()} == {v: c["time"] for v, c in same.items()}
    assert {c["ranks_used"] for c in show("node-aware-grids", "perlmutter-cpu").values()} == {64}


def test_virtualflow_default_devices_fit_the_profile_and_are_shown(show):
    """devices defaulted to 4: on one H100 'physical' and 'virtual' failed (ParameterError 'expected
    <= 1'). Unset, it is the profile's devices, at most 4, dividing V = 16: 1 on one H100, 2 on the
    2-V100 azure-nc12s-v3, 4 on the 8-V100 dgx-1-v100."""
    for profile, want in (("nvidia-h100-sxm5-80gb", 1), ("azure-nc12s-v3", 2), ("dgx-1-v100", 4)):
        got = show("virtualflow", profile, "--variant", "physical,virtual")
        assert {(c["status"], c["devices_used"]) for c in got.values()} == {("ok", want)}, profile
    same = show("virtualflow", "azure-nc12s-v3", "--variant", "physical,virtual", "--param", "devices=2")
    got = show("virtualflow", "azure-nc12s-v3", "--variant", "physical,virtual")
    assert {v: c["step_time"] for v, c in got.items()} == {v: c["step_time"] for v, c in same.items()}


def test_kernel_kmeans_default_gpus_fit_the_profile_and_are_shown(show):
    """gpus defaulted to 4: on one H100 the 1d / 1.5d / 2d layouts skipped ('gpus=4 but profile has 1
    devices'). Unset, it is the largest square <= 4 and the profile's devices: 1 on one H100 (and on
    the 2-GPU azure-nc12s-v3: 2 is no square), 4 on perlmutter."""
    for profile, want in (("nvidia-h100-sxm5-80gb", 1), ("azure-nc12s-v3", 1), ("perlmutter", 4)):
        got = show("kernel-kmeans", profile, "--variant", "1d,2d")
        assert {(c["status"], c["param.gpus"], c["gpus"]) for c in got.values()} == {("ok", None, want)}, profile
    same = show("kernel-kmeans", "perlmutter", "--variant", "1d,2d", "--param", "gpus=4")
    got = show("kernel-kmeans", "perlmutter", "--variant", "1d,2d")
    assert {v: c["total_time"] for v, c in got.items()} == {v: c["total_time"] for v, c in same.items()}


def test_hetseq_default_nodes_fit_the_profile_and_are_shown(show):
    """nodes defaulted to the README's 4: on one H100 both variants skipped ('nodes=4 but profile has
    1'). Unset, it is the profile's nodes, at most 4: 1 on one H100 (node_speedup 1), 4 on h800-4x8."""
    for profile, want in (("nvidia-h100-sxm5-80gb", 1), ("h800-4x8", 4)):
        got = show("hetseq", profile)
        assert {(c["status"], c["param.nodes"], c["nodes_used"]) for c in got.values()} == {("ok", None, want)}
    assert {c["node_speedup"] for c in show("hetseq", "nvidia-h100-sxm5-80gb").values()} == {1.0}
    same = show("hetseq", "h800-4x8", "--param", "nodes=4")
    got = show("hetseq", "h800-4x8")
    assert {v: c["node_speedup"] for v, c in got.items()} == {v: c["node_speedup"] for v, c in same.items()}
