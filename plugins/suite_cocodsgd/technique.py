"""Declaration of CoCoD-SGD: paper, variants, parameters, claims, properties.

Facts (Shen et al., IJCAI 2019, arXiv 1906.12043): the abstract (16 GTX 1080 Ti, ResNet18 and
VGG16, "up to 2-3x faster than traditional synchronous SGD"; "better time speedup") and the
update rule and weights of the supplement (eq. 9, weights M_i / sum M), read in the paper; the
testbed (6 nodes x 3 GTX 1080 Ti, 56 Gb/s InfiniBand, CIFAR-10/100) and Fig. 1's caption from a
secondary source. Not stated in what could be read: k, batch sizes, per-model speed-ups, the
heterogeneous set-up.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from suite.api import (Assumption, Between, Claim, Null, Ordered, Result, ScenarioSpec, Technique,
                       declare_technique, with_reasons)


_HW_NOTE = (
    "Profile gtx1080ti-6x3-ib56 (6 nodes x 3 GTX 1080 Ti, 56 Gb/s InfiniBand, from a secondary source); 16 "
    "workers on one flat ring whose inter-node hops run at 56 Gb/s; fp32 gradients; t_c from the CIFAR "
    "layer table's FLOPs at efficiency 0.5 of the 11.34 TFLOP/s fp32 peak; batch 128 per GPU and k = 4 are "
    "assumptions (the paper's are not stated in what could be read); homogeneous workers; iterations to target equal to S-SGD's "
    "(steps_ratio = 1). Tolerance on the gain (docs/verdicts.md): the paper's range of gains [1, 2] widened by "
    "20% of the gain at each end: [2 - 0.2 x 1, 3 + 0.2 x 2] = [1.8, 3.4]."
)


def _spec(variant: str, workload: str) -> ScenarioSpec:
    return ScenarioSpec(variant=variant, profile="gtx1080ti-6x3-ib56", workload=workload,
                        params={"workers": 16, "hetero": 1.0}, fidelity="model")


def times_to_target(results: Mapping[str, Result]) -> dict[str, float]:
    """Label -> time to target (s): the value the ordering claims judge."""
    return {label: r["time_to_target"] for label, r in results.items()}


_NULLS_SPEEDUP = (Null("no gain", value=1.0),
                  Null("Local SGD for CoCoD-SGD", variants={"cocod-sgd": "local-sgd"}),
                  Null("Pipe-SGD for CoCoD-SGD", variants={"cocod-sgd": "pipe-sgd"}))


def _claims() -> list[Claim]:
    out = []
    for wl, name in (("resnet-18-cifar", "ResNet18"), ("vgg16-cifar", "VGG16")):
        out.append(Claim(
            id=f"{wl}-16x1080ti-speedup",
            statement=f"CoCoD-SGD trains {name} up to 2-3x faster than synchronous SGD on 16 GTX 1080 Ti",
            source="abstract", verified=True,
            expect=Between(1.8, 3.4),
            scenario=_spec("cocod-sgd", wl), metric="speedup", nulls=_NULLS_SPEEDUP,
            note=_HW_NOTE + " The abstract gives one range for both models; per-model values are not stated.",
        ))
        out.append(Claim(
            id=f"{wl}-16x1080ti-faster-than-ssgd",
            statement=f"CoCoD-SGD reaches the target sooner than S-SGD ({name}, 16 GTX 1080 Ti)",
            source="abstract", verified=True,
            expect=Ordered(("cocod-sgd", "s-sgd"), margin=0.02, lower=True),
            cases={"cocod-sgd": _spec("cocod-sgd", wl), "s-sgd": _spec("s-sgd", wl)},
            derive=times_to_target,
            nulls=(Null("S-SGD for CoCoD-SGD", variants={"cocod-sgd": "s-sgd"}),
                   Null("Local SGD for CoCoD-SGD", variants={"cocod-sgd": "local-sgd"}),
                   Null("Pipe-SGD for CoCoD-SGD", variants={"cocod-sgd": "pipe-sgd"})),
            note="Implied by the abstract's 'up to 2-3x faster than traditional synchronous SGD'; ordering of "
                 "time to target with the 2% margin of docs/verdicts.md, under the same assumptions as the speed-up "
                 "claim. With steps_ratio = 1 the model's max(k t_c, t_AR) <= k (t_c + t_AR) holds for every "
                 "input, and so does Local SGD's k t_c + t_AR: the nulls put each baseline in CoCoD-SGD's place, "
                 "and when a baseline that does not decouple (Local SGD) is as much faster than S-SGD, the "
                 "ordering does not show what CoCoD-SGD adds.",
        ))
    return out


# --------------------------------------------------------------------------- properties


def _model(tech: Technique, scenario, variant: str, **params) -> Result:
    p = dict(scenario.params)
    p.update(params)
    return tech.evaluate(dataclasses.replace(scenario, variant=variant, fidelity="model", params=p))


def check_round_ordering(tech: Technique, scenario) -> None:
    """max(k t_c, t_AR) <= cocod <= local <= s-sgd and cocod <= pipe <= s-sgd per round
    (homogeneous workers, so every variant has the same t_c)."""
    from suite_cocodsgd import model

    r = {v: _model(tech, scenario, v, hetero=1.0) for v in model.VARIANTS}
    inp = r["s-sgd"].artifacts["inputs"]
    k, t_c, t_ar = inp["k"], inp["t_c_sync"], inp["t_ar"]
    t = {v: r[v]["round_time"] for v in r}
    eps = 1e-12 * t["s-sgd"]
    if not (max(k * t_c, t_ar) <= t["cocod-sgd"] + eps):
        raise AssertionError(f"cocod {t['cocod-sgd']} < max(k t_c, t_AR)")
    if not (t["cocod-sgd"] <= t["local-sgd"] + eps):
        raise AssertionError(f"cocod {t['cocod-sgd']} > local {t['local-sgd']}")
    if not (t["local-sgd"] <= t["s-sgd"] + eps):
        raise AssertionError(f"local {t['local-sgd']} > s-sgd {t['s-sgd']}")
    if not (t["cocod-sgd"] <= t["pipe-sgd"] + eps <= t["s-sgd"] + 2 * eps):
        raise AssertionError(f"pipe out of order: {t}")


def check_speedup_bound(tech: Technique, scenario) -> None:
    """speed-up over S-SGD <= k (t_c + t_AR) / max(k t_c, t_AR) / steps_ratio (homogeneous)."""
    r = _model(tech, scenario, "cocod-sgd", hetero=1.0)
    inp = r.artifacts["inputs"]
    k, t_c, t_ar = inp["k"], inp["t_c_sync"], inp["t_ar"]
    bound = k * (t_c + t_ar) / max(k * t_c, t_ar) / scenario.params["steps_ratio"]
    if not (r["speedup"] <= bound * (1 + 1e-12)):
        raise AssertionError(f"speedup {r['speedup']} > bound {bound}")


def check_merge_identity(tech: Technique, scenario) -> None:
    """After every CoCoD merge, sum_i w_i x_i = xbar + sum_i w_i Delta_i (to 1e-10), on real arrays
    with heterogeneous workers and proportional sampling (supplement eq. 9)."""
    from suite_cocodsgd import execute

    p = dict(scenario.params)
    p.update(workers=3, steps=8, k=2, batch=8, hetero=3.0, clock_workload="")
    s = execute.setup("cocod-sgd", p, scenario.profile, scenario.seed)
    extra = execute.run(s)
    if not (extra["merge_error"] <= 1e-10):
        raise AssertionError(f"merge identity off by {extra['merge_error']}")


# ---------------------------------------------------------- why not reproduced, and what decides (issue 42)
#: claim id -> (reason class, reason) of each claim not reproduced; claim id -> the assumptions its
#: verdict depends on, with the value at which it flips (docs/verdicts.md; the docs page's table)
_WHY_NOT = {
    "resnet-18-cifar-16x1080ti-speedup": ("setup unknown", "batch per GPU (128) and iterations to target equal to "
                                          "S-SGD's (steps_ratio = 1) are assumptions (not stated in what could be "
                                          "read); our S-SGD baseline is compute-bound at batch 128 (1.16x); the verdict "
                                          "flips to not discriminating (Pipe-SGD lands on ours) at a batch of 26 per "
                                          "GPU (1.800; 27 gives 1.770) or at steps_ratio 0.645 (1.802; 0.646 gives "
                                          "1.7995); k changes nothing at batch 128 (1 to 64: 1.163)"),
    "vgg16-cifar-16x1080ti-speedup": ("setup unknown", "as the ResNet-18 claim: batch and iterations to target are "
                                      "assumptions; the verdict flips to not discriminating (Pipe-SGD lands on ours) "
                                      "at a batch of 60 per GPU (1.810; 61 gives 1.797) or at steps_ratio 0.766 "
                                      "(1.801; 0.767 gives 1.799)"),
}
#: claim id -> (batch at which it flips, what the sweep gave), (steps_ratio at which it flips, what the
#: sweep gave): --param batch / --param steps_ratio, everything else as declared. At each flip the
#: Pipe-SGD null gives exactly our value (researcher 13, F5), so the verdict flips to *not
#: discriminating*, not to *reproduced*. Local steps k is no deciding assumption: at batch 128 every k
#: from 1 to 64 gives the same speed-up (1.163 and 1.380).
_FLIPS = {"resnet-18-cifar-16x1080ti-speedup": (
              (26, "24 gives 1.867, 26 1.800, 27 1.770, 32 1.650, 128 1.163"),
              (0.645, "1 gives 1.163, 0.65 1.788, 0.646 1.7995, 0.645 1.802, 0.64 1.816")),
          "vgg16-cifar-16x1080ti-speedup": (
              (60, "56 gives 1.868, 60 1.810, 61 1.797, 64 1.760, 128 1.380; 16 gives 4.04, above the band's 3.4"),
              (0.766, "1 gives 1.380, 0.8 1.725, 0.767 1.799, 0.766 1.801, 0.75 1.840"))}
_ND = "not discriminating"
_DECIDING = {c: (Assumption("batch per GPU", 128, flip_at=at, sourced=False, flips_to=_ND,
                            note="smaller batches raise communication's share and the gain; --param batch: " + swept),
                 Assumption("iterations to target / S-SGD's (steps_ratio)", 1.0, flip_at=sr_at, sourced=False,
                            flips_to=_ND, note="the paper's is not stated; --param steps_ratio: " + sr_swept))
             for c, ((at, swept), (sr_at, sr_swept)) in _FLIPS.items()}


TECHNIQUE = declare_technique(__name__, claims=with_reasons(_claims(), _WHY_NOT, _DECIDING))
