"""SuperNeurons (Wang et al., PPoPP 2018): declaration, claims, properties (the model evaluation is
:func:`suite_superneurons.model.evaluate`, imported the first time the model fidelity runs).

Every number below was read in the paper's full text (the ACM camera-ready, PPoPP 2018,
pp. 41-53; Tables 4 and 5, §4.1.1, §4.2, the abstract).

The frameworks' own memory policies, which the paper's tables compare against, are modelled by
our variants (the mapping is an assumption, stated in docs/techniques/superneurons.md):

* Caffe and Torch keep every forward output and gradient for the whole iteration -> ``baseline``;
* MXNet and TensorFlow free tensors after their last use (memory planning / ref-counting)
  -> ``liveness`` (neither swaps or recomputes by default in the versions the paper used);
* SuperNeurons -> ``liveness+offload+recompute``.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

from dataclasses import replace

from suite.api import (Approx, Assumption, Claim, Exact, Gain, Null, Scenario, ScenarioSpec, Skip, Technique,
                       declare_technique, with_reasons)
from suite_superneurons.constants import RESNET_2500_UNITS_DEPTH

MIB = 2.0**20


# --------------------------------------------------------------------------- properties


def _prop_peak_order(tech: Technique, s: Scenario) -> None:
    from suite.api import LayerTable
    from suite_superneurons.model import POLICIES, simulate

    if s.params["mode"] != "iteration" or not isinstance(s.workload, LayerTable):
        raise Skip("iteration mode only")
    peaks = {p: simulate(s.workload, s.params["batch"], p, tensor_cache=False).peak for p in POLICIES}
    lp = simulate(s.workload, s.params["batch"], "liveness").l_peak
    if not (peaks["baseline"] >= peaks["liveness"] >= peaks["liveness+offload+recompute"] - 1e-6):
        raise AssertionError(peaks)
    if not (peaks["liveness+offload+recompute"] >= lp * (1 - 1e-12)):
        raise AssertionError((peaks, lp))


def _prop_no_read_after_free(tech: Technique, s: Scenario) -> None:
    from suite.api import LayerTable
    from suite_superneurons.model import POLICIES, simulate

    if not isinstance(s.workload, LayerTable):
        raise Skip("needs a layer table")
    cap = s.profile.device.memory if s.profile and s.profile.device else None
    for p in POLICIES:
        tr = simulate(s.workload, s.params["batch"], p, capacity=cap)
        if not (not tr.violations):
            raise AssertionError(f"{p}: {tr.violations[:3]}")
        if not (tr.bytes_offloaded == tr.bytes_prefetched):
            raise AssertionError(f"{p}: offloaded != prefetched")


def _prop_more_memory_never_hurts_depth(tech: Technique, s: Scenario) -> None:
    if s.params["mode"] != "iteration":
        raise Skip("iteration mode only")
    small = tech.evaluate(s)
    bigger = s.profile.with_overrides({"device.memory": s.profile.device.memory * 2})
    big = tech.evaluate(replace(s, profile=bigger))
    if not (big["fits"] >= small["fits"]):
        raise AssertionError('failed: big["fits"] >= small["fits"]')


# --------------------------------------------------------------------------- claims


def ratio_super_over_tf(results) -> float:
    return results["superneurons"]["max_depth"] / results["tensorflow"]["max_depth"]


SN = "liveness+offload+recompute"
#: the null of each variant's claims: the next simpler policy in SuperNeurons' stack (§3), or, for
#: the simplest (keep everything), the next richer one
_SIMPLER = {SN: "liveness+offload", "liveness+offload": "liveness", "liveness": "baseline", "baseline": "liveness"}


def _policy_null(variant: str) -> Null:
    other = _SIMPLER[variant]
    return Null(f"{other} for {variant}", variants={variant: other})


def _depth_claim(cid: str, framework: str, variant: str, paper: int, verified_note: str) -> Claim:
    return Claim(
        id=cid, statement=f"Deepest ResNet trainable at batch 16 on a 12 GB K40: {framework} {paper}",
        source="Table 4", verified=True, expect=Approx(paper, rel=0.20),
        scenario=ScenarioSpec(variant, profile="nvidia-k40c", workload="resnet-152",
                              params={"mode": "max-depth", "batch": 16}),
        metric="max_depth", nulls=(_policy_null(variant),),
        note=(f"{framework} modelled as our `{variant}` variant. {verified_note} Tolerance 20%: a maximum "
              "depth is set by a memory ratio, so it is judged like a ratio (fixed before our value was seen)."),
    )


def _batch_claim(net: str, workload: str, paper: int) -> Claim:
    return Claim(
        id=f"table5-{net.lower()}-max-batch", statement=f"Largest batch of {net} on a 12 GB K40 with SuperNeurons: {paper}",
        source="Table 5", verified=True, expect=Approx(paper, rel=0.20),
        scenario=ScenarioSpec("liveness+offload+recompute", profile="nvidia-k40c", workload=workload,
                              params={"mode": "max-batch"}),
        metric="max_batch", nulls=(_policy_null(SN), Null("liveness only", variants={SN: "liveness"})),
        note="Tolerance 20% (a capacity figure judged like a ratio).",
    )


def _walk_claim(policy: str, label: str, paper: float) -> Claim:
    return Claim(
        id=f"alexnet-b200-{label}", statement=f"AlexNet at batch 200, peak memory with {label}: {paper} MB",
        source="§4.1.1 (Fig. 10 walkthrough)", verified=True, expect=Approx(paper * MIB, rel=0.20),
        scenario=ScenarioSpec(policy, profile="nvidia-k40c", workload="alexnet-caffe",
                              params={"batch": 200, "tensor_cache": False}),
        metric="activation_peak", nulls=(_policy_null(policy),),
        note=("Paper MB are MiB (its CONV1 output, 221.56 MB, is 96x55x55x200x4 B in MiB); judged in bytes "
              "(paper MiB x 2^20). Our figure counts "
              "activations and gradients, not parameters. Tolerance 20% (memory sizes, docs/verdicts.md). Null: the "
              "next simpler policy at the same batch (for the keep-everything baseline, liveness); a null "
              "inside the band means this step of the stack does not change the peak by more than the "
              "tolerance in our model."),
    )


CLAIMS = [
    _depth_claim("table4-superneurons-depth", "SuperNeurons", "liveness+offload+recompute", 1920, ""),
    _depth_claim("table4-tensorflow-depth", "TensorFlow", "liveness", 592, ""),
    _depth_claim("table4-mxnet-depth", "MXNet", "liveness", 480, "Same model as TensorFlow: MXNet's extra "
                 "workspace and allocator overheads are not modelled."),
    _depth_claim("table4-caffe-depth", "Caffe", "baseline", 148, ""),
    _depth_claim("table4-torch-depth", "Torch", "baseline", 152, ""),
    Claim(
        id="deeper-than-tensorflow", statement="3.2432x deeper than TensorFlow (1920/592, batch 16, 12 GB K40)",
        source="§4.2 and Table 4", verified=True, expect=Gain(3.2432, rel=0.20),
        cases={"superneurons": ScenarioSpec("liveness+offload+recompute", profile="nvidia-k40c", workload="resnet-152",
                                            params={"mode": "max-depth", "batch": 16}),
               "tensorflow": ScenarioSpec("liveness", profile="nvidia-k40c", workload="resnet-152",
                                          params={"mode": "max-depth", "batch": 16})},
        derive=ratio_super_over_tf,
        nulls=(Null("no gain", value=1.0), Null("offload without recompute", variants={SN: "liveness+offload"})),
        note="The ratio is against TensorFlow (our `liveness`), not against a liveness-free baseline; judged on "
             "the gain (2.2432 +- 20%: [2.795, 3.692]).",
    ),
    Claim(
        id="resnet2500-batch1-fits", statement="ResNet with 2500 residual units... trains at batch 1 on a 12 GB GPU",
        source="abstract; §4.2", verified=True, expect=Exact(1.0),
        scenario=ScenarioSpec(SN, profile="nvidia-k40c", workload=f"resnet-{RESNET_2500_UNITS_DEPTH}",
                              params={"batch": 1}),
        metric="fits", nulls=(Null("liveness only", variants={SN: "liveness"}),),
        note=(f"Read literally: 2500 residual units of the Table 4 family (6, 32, n3, 6), n3 = 2456, depth "
              f"3 x 2500 + 2 = {RESNET_2500_UNITS_DEPTH} (`resnet-{RESNET_2500_UNITS_DEPTH}`; 2.78e9 parameters at "
              "224 x 224). Our model keeps weights and their gradients on the device (2 x 4 B per parameter, "
              "22 GB), so it cannot fit 12 GB whatever the activation policy; the paper's input size for this "
              "network is not stated. The earlier reading (depth 2500 = 833 units) is on the docs page."),
    ),
    _batch_claim("AlexNet", "alexnet-caffe", 1792),
    _batch_claim("VGG16", "vgg16", 224),
    _batch_claim("InceptionV4", "inception-v4", 240),
    _batch_claim("ResNet50", "resnet-50", 384),
    _batch_claim("ResNet101", "resnet-101", 256),
    _batch_claim("ResNet152", "resnet-152", 176),
    _walk_claim("baseline", "baseline", 2189.437),
    _walk_claim("liveness", "liveness", 1489.355),
    _walk_claim("liveness+offload", "offload", 1132.155),
    _walk_claim("liveness+offload+recompute", "recompute", 886.23),
]


# ---------------------------------------------------------- why not reproduced, and what decides (issue 42)
#: claim id -> (reason class, reason) of each claim not reproduced; claim id -> the assumptions its
#: verdict depends on, with the value at which it flips (docs/verdicts.md; the docs page's table)
#: the device memory every capacity claim is judged on, bisected with model.max_trainable / max_batch
#: (the claim's own search at the given capacity): claim id -> (capacity in B where the verdict flips, how)
_CAP_FLIPS = {
    "table4-superneurons-depth": (11.63e9, "below it ours is 1535 < 1536, not reproduced"),
    "table4-tensorflow-depth": (13.29e9, "above it ours is 713 > 710.4 (and below 9.54e9 B, 473 < 473.6)"),
    "table4-mxnet-depth": (11.16e9, "below it ours is 575, inside 480 +- 20%"),
    "table4-caffe-depth": (12.11e9, "above it ours is 179 > 177.6; 12 GiB gives 197"),
    "table4-torch-depth": (12.33e9, "above it ours is 185 > 182.4; 12 GiB gives 197"),
    "table5-alexnet-max-batch": (11.81e9, "below it ours enters 1792 +- 20%"),
    "table5-inceptionv4-max-batch": (13.18e9, "above it ours is 289 > 288; 12 GiB gives 282"),
    "table5-resnet50-max-batch": (10.29e9, "below it ours enters 384 +- 20%"),
    "table5-resnet101-max-batch": (10.59e9, "below it ours enters 256 +- 20%"),
    "table5-resnet152-max-batch": (11.10e9, "below it ours enters 176 +- 20%"),
}


def _table5(cid: str, over: int) -> tuple[str, str]:
    """The reason of a Table 5 row outside its band (VGG16 at +7% and InceptionV4 at +9% land inside)."""
    return ("setup unknown", "the memory the paper's runs left to tensors is not stated (the allocator's fragmentation "
            "and the framework's state take some; the paper gives no figure): we give them all 12e9 B, and ours is "
            f"22-40% above the paper's on the four rows outside the band (this one +{over}%); below "
            f"{_CAP_FLIPS[cid][0]:.4g} B ours is inside (cuDNN workspaces take none: §3.5 sizes them from what is left)")


_WHY_NOT = {
    "table4-mxnet-depth": ("baseline not modelled", "MXNet is modelled as our `liveness` variant (same as "
                           "TensorFlow); its extra workspace and allocator overheads are not modelled"),
    "deeper-than-tensorflow": ("missing mechanism", "our SuperNeurons depth is 17% short (1589 against 1920), not the "
                               "baseline: our TensorFlow depth (629) reproduces its own claim (592 +- 20%), and even "
                               "over the paper's 592 the ratio is 1589/592 = 2.68, under 2.795; our recomputation keeps "
                               "every residual skip tensor on the device, which SuperNeurons' runtime avoids in a way "
                               "the paper does not describe"),
    "resnet2500-batch1-fits": ("source imprecise", "'ResNet with 2500 residual units' has two readings: read literally "
                               "(2500 units, depth 7502, 2.78e9 parameters) the weights and their gradients alone "
                               "(20.7 GiB of our 22.6 GiB peak) exceed 12 GB whatever the input size; read as depth 2500 "
                               "(833 units) it fits at 8.5 GiB, so the verdict flips with the reading"),
    "table5-alexnet-max-batch": _table5("table5-alexnet-max-batch", 22),
    "table5-resnet50-max-batch": _table5("table5-resnet50-max-batch", 40),
    "table5-resnet101-max-batch": _table5("table5-resnet101-max-batch", 37),
    "table5-resnet152-max-batch": _table5("table5-resnet152-max-batch", 31),
    "alexnet-b200-liveness": ("source imprecise", "the walkthrough's figures imply two layouts: its baseline (2189 MB) "
                              "matches ReLU and dropout in place (ours 2040 MiB; 3057 without), its liveness (1489 MB) "
                              "only every layer's output a tensor of its own (its §3.2 formula sum l^f + l^b_N: "
                              "1472 MiB; its rule, each forward output kept to its backward: 1626 MiB); in place, "
                              "that rule gives our 1184 MiB, as freeing at last use does"),
}
def _capacity(cid: str) -> Assumption:
    at, how = _CAP_FLIPS[cid]
    return Assumption("memory the model may fill (the K40's '12 GB' read as 12e9 B, none reserved)", "12e9 B",
                      flip_at=f"{at:.4g} B", sourced=False,
                      note=f"the datasheet's and the paper's '12 GB'; what the driver, the framework and cuDNN "
                           f"reserve is not stated (nvidia-smi shows 11439 MiB = 11.99e9 B on a K40c); {how}")


#: which of our policies each framework of Table 4 runs: our reading, no source says which
_FRAMEWORK = {
    "table4-tensorflow-depth": ("TensorFlow = liveness", "any other policy (baseline 176, recompute-only 764)"),
    "table4-mxnet-depth": ("MXNet = liveness", None),
    "table4-caffe-depth": ("Caffe = baseline", "liveness (629)"),
    "table4-torch-depth": ("Torch = baseline", "liveness (629)"),
}


def _framework(cid: str) -> Assumption:
    value, at = _FRAMEWORK[cid]
    return Assumption("the policy the framework runs", value, flip_at=at, sourced=False,
                      note="our reading of the frameworks (Caffe and Torch keep every tensor, TensorFlow and MXNet free "
                           "at last use); at the claim's scenario baseline gives 176, liveness 629, recompute-only 764"
                           + ("; no policy of ours lands inside 480 +- 20%" if at is None else ""))


_DECIDING = {cid: ((_framework(cid),) if cid in _FRAMEWORK else ()) + (_capacity(cid),) for cid in _CAP_FLIPS}
_DECIDING["resnet2500-batch1-fits"] = (Assumption(
    "reading of 'ResNet with 2500 residual units'", "2500 bottleneck units (depth 7502)", flip_at="depth 2500 (833 units)",
    sourced=False, note="depth 2500 (`resnet-2500`) fits at 8.52 GiB; the input size cannot flip it (the weights and "
                        "gradients of depth 7502 need 20.7 GiB at any input size)"),)
_INPLACE = "Caffe's bvlc_alexnet definition (each relu and dropout layer's top is its bottom)"
_DECIDING["alexnet-b200-baseline"] = (Assumption(
    "ReLU and dropout run in place (simulate inplace=True)", "in place", flip_at="not in place (3057 MiB > 2627)",
    sourced=True, source=_INPLACE),)
_DECIDING["alexnet-b200-liveness"] = (Assumption(
    "ReLU and dropout run in place (simulate inplace=True)", "in place",
    flip_at="not in place with the §3.2 rule (simulate keep_forward=True): 1626 MiB, inside", sourced=True,
    source=_INPLACE, note="not in place with our last-use rule: 1184 MiB, unchanged"),)


TECHNIQUE = declare_technique(__name__, claims=with_reasons(CLAIMS, _WHY_NOT, _DECIDING))
