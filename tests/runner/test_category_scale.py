"""Category sweeps at equal scale: every technique on the same number of GPUs and the same
efficiency, from each technique's scale declaration (Param(role="scale"))."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from suite.errors import TechniqueError
from suite.runner.category import CannotScale, expand_category, scale_value
from suite.technique import Param


def _tech(**params):
    return SimpleNamespace(name="t", parameters=params)


@pytest.mark.parametrize("param, gpus, dpn, expect", [
    (Param(int, unit="GPUs", role="scale", minimum=1), 8, 8, ("n", 8)),
    (Param(int, unit="workers", role="scale", optional=True, minimum=1), 32, 8, ("n", 32)),
    (Param(int, unit="nodes", role="scale", minimum=1), 32, 8, ("n", 4)),  # 4 nodes of 8 GPUs
    (Param(int, unit="nodes", role="scale", minimum=1, devices_each=1), 8, 8, ("n", 8)),  # single-GPU machines
])
def test_scale_value_converts_gpus_into_the_declared_unit(param, gpus, dpn, expect):
    assert scale_value(_tech(n=param), gpus, dpn) == expect


def test_scale_value_refuses_with_the_reason():
    with pytest.raises(CannotScale, match="12 GPUs is not a whole number of its n \\(8 GPU\\(s\\) each\\)"):
        scale_value(_tech(n=Param(int, unit="nodes", role="scale")), 12, 8)
    with pytest.raises(CannotScale, match="declares no scale parameter .* among dp, tp"):
        scale_value(_tech(tp=Param(int, unit="GPUs"), dp=Param(int, unit="GPUs")), 8, 8)
    with pytest.raises(CannotScale, match="maximum|<= 4|at most"):
        scale_value(_tech(n=Param(int, unit="GPUs", role="scale", maximum=4)), 8, 8)
    assert scale_value(_tech(x=Param(float)), 8, 8) is None  # no size at all: a single-device technique


def test_a_scale_of_replicas_counts_the_product_of_its_group_parameters():
    """dhelix's dp: replicas of a tp x pp group. `--category communication --gpus 64` left dhelix out
    ("declares no scale parameter among dp, pp, tp"); dp = 64 / (8 x 2) = 4 at its defaults, and
    8 GPUs is one replica of tp 4 x pp 2."""
    from suite.report.plots import scale_text

    t = _tech(tp=Param(int, 8, unit="GPUs"), pp=Param(int, 2, unit="GPUs"),
              dp=Param(int, unit="1", role="scale", optional=True, minimum=1, devices_each="tp*pp"))
    assert scale_value(t, 64, 8) == ("dp", 4)
    assert scale_value(t, 8, 8, {"tp": ["4"], "pp": ["2"]}) == ("dp", 1)
    with pytest.raises(CannotScale, match=r"^8 GPUs is not a whole number of its dp \(16 GPU\(s\) each: tp\*pp\)$"):
        scale_value(t, 8, 8)
    with pytest.raises(CannotScale, match=r"its dp counts tp\*pp GPUs each: expected one value of each, got tp=\['4', '8'\]"):
        scale_value(t, 64, 8, {"tp": ["4", "8"]})
    assert scale_text(t, {"param.dp": 4, "param.tp": 8.0, "param.pp": None}, 8) == "dp=4 = 64 GPUs"  # pp: its default


def test_devices_each_names_int_parameters_of_the_technique():
    from suite.technique import Paper, Technique, Variant

    with pytest.raises(TechniqueError, match=r"Param: devices_each: expected an integer >= 1 or a product"):
        Param(int, unit="1", role="scale", devices_each="tp+pp")
    with pytest.raises(TechniqueError, match=r"Param: devices_each: expected an integer >= 1"):
        Param(int, unit="nodes", role="scale", devices_each=0)
    with pytest.raises(TechniqueError, match=r"Param: devices_each='tp\*pp': expected with role='scale'.*got it with role=None"):
        Param(int, unit="1", devices_each="tp*pp")  # a category run put it at dp=2 and said "no scale parameter"
    with pytest.warns(DeprecationWarning, match=r"devices_each=4: expected unit 'nodes'.*got unit 'GPUs'.*ignored, "
                                                r"and refused from dlsys-suite 0\.4\.0"):
        Param(int, unit="GPUs", role="scale", devices_each=4)  # an int was accepted, and did nothing: warned first
    assert Param(int, unit="1", role="scale", devices_each=" tp * pp ").devices_each == "tp*pp"
    for unit in ("GPUs", "nodes"):  # a replica of tp x pp devices is neither one GPU nor one node
        with pytest.raises(TechniqueError, match=rf"expected unit 'nodes' .* or '1' .*, got unit '{unit}'"):
            Param(int, unit=unit, role="scale", devices_each="tp*pp")

    def tech(each):
        return Technique(name="t", title="t", category="communication", paper=Paper("P"),
                         variants=[Variant("base", "baseline", baseline=True)], fidelities={"model": lambda s: None},
                         parameters={"tp": Param(int, 1), "dp": Param(int, 1, unit="1", role="scale", devices_each=each)})

    with pytest.raises(TechniqueError, match=r"parameter 'dp': devices_each: expected a product of its other int "
                                             r"parameters, got 'tp\*pp' \('pp' is not a parameter\)"):
        tech("tp*pp")
    with pytest.raises(TechniqueError, match=r"got 'dp\*tp' \('dp' is the scale parameter itself\)"):
        tech("dp*tp")  # dp = GPUs / (dp x tp): counted from its own default


def test_devices_are_counted_with_the_declarations_own_check_of_the_product():
    """One check of a "tp*pp" product (suite.declaration.params.scale_factors) serves the declaration
    and the count of devices: over a float tp = 2.5 the count gave int(2.5) x 2 = 4 GPUs a replica
    where the declaration refuses the product; a good one counts 4 x 3 = 12 (pp's --param)."""
    from suite.declaration.params import devices_each, scale_factors, scale_parameter

    params = {"tp": Param(float, 2.5), "pp": Param(int, 2, unit="GPUs"),
              "dp": Param(int, unit="1", role="scale", devices_each="tp*pp")}
    with pytest.raises(TechniqueError, match=r"^parameter 'dp': devices_each: expected a product of its other int "
                                             r"parameters, got 'tp\*pp' \('tp' is not an int parameter\)$"):
        devices_each(params, "dp", None, 8)
    ok = {**params, "tp": Param(int, 4, unit="GPUs")}
    assert scale_factors(ok, "dp") == ["tp", "pp"] and devices_each(ok, "dp", {"pp": ["3"]}, 8) == 12
    assert scale_parameter(ok) == ("dp", ok["dp"]) and scale_parameter({"tp": ok["tp"]}) is None
    assert scale_factors({"n": Param(int, unit="nodes", role="scale", devices_each=4)}, "n") == []


def test_sixty_four_gpus_put_dhelix_at_four_replicas_beside_the_others(shared_context):
    from suite.runner.case import Resolver

    ctx = shared_context
    cases, _notes, warnings = expand_category("communication", context=ctx, resolver=Resolver(context=ctx),
                                              base={"profiles": ["selene-dgx-a100"]}, gpus=64)
    by = {c.technique: c.scenario.params for c in cases}
    assert (by["dhelix"]["dp"], by["dhelix"]["tp"], by["dhelix"]["pp"], by["mg-wfbp"]["workers"]) == (4, 8, 2, 64)
    assert not any("dhelix" in w for w in warnings)


def test_param_role_is_checked():
    with pytest.raises(TechniqueError, match="Param role: expected one of"):
        Param(int, role="size")


def test_dgx_a100_runs_three_communication_techniques_on_its_8_gpus(shared_context):
    from suite.runner.case import Resolver

    ctx = shared_context
    cases, notes, warnings = expand_category("communication", context=ctx, resolver=Resolver(context=ctx),
                                             base={"profiles": ["dgx-a100"], "workloads": ["resnet-50"]})
    by = {}
    for c in cases:
        by.setdefault(c.technique, c.scenario.params)
    assert {"hetseq", "mg-wfbp", "poseidon"} <= set(by)
    # 8 GPUs each: hetseq 1 node of 8, mg-wfbp 8 workers, poseidon 8 single-GPU workers
    assert (by["hetseq"]["nodes"], by["mg-wfbp"]["workers"], by["poseidon"]["nodes"]) == (1, 8, 8)
    # one efficiency for all (their own defaults differ: 0.069, 0.5, 0.85)
    assert {by[t]["efficiency"] for t in ("hetseq", "mg-wfbp", "poseidon")} == {0.5}
    # resnet-50 is no transformer: dhelix does not apply at any scale, which is what the note says
    # (it warned "it cannot run on 8 GPUs (... 16 GPU(s) each: tp*pp)")
    assert not any("dhelix" in w for w in warnings)
    assert ("dhelix left out (does not apply): ParameterError: dhelix: workload 'resnet-50' is not a transformer "
            "layer table") in notes


def test_colours_are_fixed_per_technique_and_bars_are_labelled_with_the_scale():
    from suite.report.plots import scale_text, technique_colours

    every = technique_colours(["poseidon", "hetseq", "mg-wfbp"])
    assert technique_colours(["poseidon", "mg-wfbp", "hetseq"]) == every  # order-independent
    nodes = _tech(nodes=Param(int, unit="nodes", role="scale"))
    assert scale_text(nodes, {"param.nodes": 4}, 8) == "4 nodes = 32 GPUs"
    assert scale_text(_tech(w=Param(int, unit="workers", role="scale")), {"param.w": 8}, 8) == "8 workers = 8 GPUs"


def test_head_to_head_speedups_at_equal_gpus_are_over_one_gpu(shared_context):
    """The data-parallel vocabulary's ``speedup`` is aggregate throughput over one GPU's: at 8 GPUs
    (h100-ndr-fat-tree: HetSeq on 1 node of 8, MG-WFBP on 8 workers, Poseidon on 8 single-GPU
    nodes) the ideal is 8 for every technique (a hand count: 8 GPUs, each at its one-GPU speed), and
    each one's communication keeps it a little under. HetSeq's per-node speed-up (the README's)
    is 1 on one node, under its own name."""
    from suite.runner.case import Resolver

    ctx = shared_context
    cases, _notes, _warnings = expand_category("communication", context=ctx, resolver=Resolver(context=ctx),
                                               base={"profiles": ["h100-ndr-fat-tree"], "workloads": ["resnet-50"]},
                                               gpus=8)
    first = {}
    for c in cases:
        if c.fidelity == "model" and c.technique in ("hetseq", "mg-wfbp", "poseidon"):
            first.setdefault(c.technique, c)
    assert set(first) == {"hetseq", "mg-wfbp", "poseidon"}
    res = {t: ctx.registry.technique(t).evaluate(c.scenario) for t, c in first.items()}
    assert first["hetseq"].scenario.params["nodes"] == 1 and first["poseidon"].scenario.params["nodes"] == 8
    for t, r in res.items():
        # within 6% of ideal 8 and below it: 8 GPUs on one node still pay an NVLink all-reduce (a model
        # that dropped communication would give 8.0 exactly, which this band no longer admits)
        assert 7.5 < r["speedup"] < 7.99, (t, r["speedup"])
        assert r["comm_time"] > 0, t
    assert res["hetseq"]["node_speedup"] == 1.0  # one node over one node


TWO = ["k80-cluster-10gbe", "h100-ndr-fat-tree"]  # 8 nodes x 2 K80s (16 GPUs); 32 nodes x 8 H100s


def _two_profiles(order, workload="resnet-50", **kw):
    from suite.runner.case import Resolver
    from session_context import session_context

    ctx = session_context()
    cases, notes, warnings = expand_category("communication", context=ctx, resolver=Resolver(context=ctx),
                                             base={"profiles": order, "workloads": [workload]}, **kw)
    scales = {(c.technique, c.scenario.profile.name, k, v) for c in cases for k, v in c.scenario.params.items()
              if k in ("nodes", "workers")}
    return scales, notes, warnings


def _category_note(notes):
    """The category's scale note among *notes* (the others say what runs and who was left out)."""
    (note,) = [n for n in notes if n.startswith("category communication:")
               and not n.startswith("category communication: running ")]
    return note


def test_two_profiles_each_put_every_technique_on_the_same_gpus():
    """`--profile k80-cluster-10gbe,h100-ndr-fat-tree` said "every technique on 16 GPUs" but gave the
    H100 cluster hetseq nodes=8 (64 GPUs: the K80's 2 per node used for both) beside mg-wfbp's 16
    workers, and left Poseidon out or in by the profiles' order. By hand, 16 GPUs: hetseq 16/2 = 8
    K80 nodes, 16/8 = 2 H100 nodes; mg-wfbp 16 workers on both; Poseidon 16 single-GPU nodes, which
    the K80 cluster's 8 nodes cannot hold (left out there, on that profile only, in either order)."""
    expect = {("hetseq", "k80-cluster-10gbe", "nodes", 8), ("hetseq", "h100-ndr-fat-tree", "nodes", 2),
              ("mg-wfbp", "k80-cluster-10gbe", "workers", 16), ("mg-wfbp", "h100-ndr-fat-tree", "workers", 16),
              ("poseidon", "h100-ndr-fat-tree", "nodes", 16)}
    for order in (TWO, TWO[::-1]):
        scales, notes, _warnings = _two_profiles(order)
        assert scales == expect, order
        assert ("poseidon left out on k80-cluster-10gbe (does not apply): poseidon: nodes=16 exceeds the 8 nodes "
                "of profile 'k80-cluster-10gbe'") in notes
    assert _category_note(notes) == ("category communication: every technique on 16 GPUs (the size of profile k80-cluster-10gbe, "
                        "the smallest named; --gpus to change) with efficiency 0.5 (--param efficiency=...): "
                        "on h100-ndr-fat-tree: hetseq nodes=2; mg-wfbp workers=16; poseidon nodes=16 | "
                        "on k80-cluster-10gbe: hetseq nodes=8; mg-wfbp workers=16")


def test_a_profile_with_fewer_gpus_than_asked_is_left_out_and_named():
    """--gpus 32 on the K80 cluster's 16 GPUs: that profile is left out (not run at 32 workers on 16
    GPUs), the H100 cluster runs hetseq on 32/8 = 4 nodes, mg-wfbp on 32 workers, Poseidon on 32 nodes."""
    scales, notes, warnings = _two_profiles(TWO, gpus=32)
    assert scales == {("hetseq", "h100-ndr-fat-tree", "nodes", 4), ("mg-wfbp", "h100-ndr-fat-tree", "workers", 32),
                      ("poseidon", "h100-ndr-fat-tree", "nodes", 32)}
    assert ("--category communication: profile k80-cluster-10gbe left out: it has 16 GPUs, fewer than the 32 every "
            "technique runs on (--gpus)") in warnings


def test_a_scale_set_by_param_is_printed_in_gpus_per_technique_and_profile():
    """docs/comparisons.md's command (`--param nodes=8 --param workers=8`) printed "every technique on
    16 GPUs"; the cases run hetseq on 8 nodes (x 2 K80s = 16 GPUs, x 8 H100s = 64), mg-wfbp on 8
    workers (8 GPUs), Poseidon on 8 single-GPU nodes (8 GPUs)."""
    scales, notes, _warnings = _two_profiles(TWO, params={"nodes": ["8"], "workers": ["8"], "efficiency": ["0.5"]})
    assert {s[3] for s in scales} == {8} and len(scales) == 6
    assert _category_note(notes) == ("category communication: the scale of hetseq, mg-wfbp, poseidon set by your --param (its "
                        "GPUs below) with efficiency 0.5 (--param efficiency=...): on k80-cluster-10gbe: hetseq "
                        "nodes=8 = 16 GPUs; mg-wfbp workers=8 = 8 GPUs; poseidon nodes=8 = 8 GPUs | on "
                        "h100-ndr-fat-tree: hetseq nodes=8 = 64 GPUs; mg-wfbp workers=8 = 8 GPUs; poseidon "
                        "nodes=8 = 8 GPUs")


def test_the_make_your_own_example_of_comparisons_md_gives_a_head_to_head():
    """docs/comparisons.md's "How to make your own" command was `--category memory --workload
    resnet-50 --profile dgx-a100`: only superneurons ran ("no head-to-head"). The command the page
    now shows runs three techniques on both clusters, at 8 GPUs each (by hand: HetSeq 8/2 = 4 K80
    nodes and 8/8 = 1 H100 node, MG-WFBP 8 workers, Poseidon 8 single-GPU nodes), and the note
    the page quotes is the one printed."""
    import re
    import shlex
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "comparisons.md").read_text(encoding="utf-8")
    section = page[page.index("## How to make your own"):]
    command = re.search(r"```bash\n(suite run --category .*?)\n", section.replace("\\\n", "")).group(1)
    argv = shlex.split(command)
    opt = {argv[i]: argv[i + 1] for i in range(2, len(argv) - 1, 2)}
    assert (opt["--category"], opt["--workload"]) == ("communication", "vgg19-22k"), command
    scales, notes, _warnings = _two_profiles(opt["--profile"].split(","), opt["--workload"], gpus=int(opt["--gpus"]))
    assert scales == {("hetseq", "k80-cluster-10gbe", "nodes", 4), ("hetseq", "h100-ndr-fat-tree", "nodes", 1),
                      ("mg-wfbp", "k80-cluster-10gbe", "workers", 8), ("mg-wfbp", "h100-ndr-fat-tree", "workers", 8),
                      ("poseidon", "k80-cluster-10gbe", "nodes", 8), ("poseidon", "h100-ndr-fat-tree", "nodes", 8)}
    quoted = " ".join(section.split()).split("Its note gives each cluster's scale: \"")[1].split("\" (")[0]
    head, tail = quoted.split(" ...: ")
    assert _category_note(notes).startswith("category communication: " + head) and _category_note(notes).endswith(": " + tail)


@pytest.mark.parametrize("gpus", [8, 16])
def test_a_workload_a_technique_does_not_read_is_its_reason_at_any_scale(gpus):
    """newuser14 finding 5: comparisons.md's VGG command (--gpus 8) warned "dhelix left out: it cannot
    run on 8 GPUs (... 16 GPU(s) each: tp*pp)", and --gpus 16 gave the reason all along: VGG-19 is
    not a transformer layer table."""
    _scales, notes, warnings = _two_profiles(TWO, "vgg19-22k", gpus=gpus)
    assert ("dhelix left out (does not apply): ParameterError: dhelix: workload 'vgg19-22k' is not a transformer "
            "layer table") in notes
    assert not any("dhelix" in w for w in warnings)


def test_a_technique_that_applies_but_cannot_scale_keeps_the_scale_warning():
    """A transformer dhelix reads, on 8 GPUs: one replica takes 16 (tp 8 x pp 2 by default)."""
    _scales, notes, warnings = _two_profiles(["h100-ndr-fat-tree"], "dhelix-qwen3-14b-like", gpus=8)
    assert ("--category communication: dhelix left out: it cannot run on 8 GPUs (8 GPUs is not a whole number "
            "of its dp (16 GPU(s) each: tp*pp))") in warnings
    assert not any(n.startswith("dhelix") for n in notes)
