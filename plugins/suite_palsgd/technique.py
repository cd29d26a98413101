"""Declaration of PALSGD: paper, variants, parameters, claims, properties, and GPT-Neo-8M.

Facts (Naganuma et al., TMLR 2025, arXiv 2504.18454): the abstract's 18.4% / 24.4% / 21.1%
faster than DDP (ImageNet-1K ResNet-50, TinyStories GPT-Neo-125M, TinyStories GPT-Neo-8M) and
"beats DiLoCo", read in the paper; Algorithm 1's pseudo-synchronization step from a secondary
source; the authors' code (update rules, H, p, eta, warm-up, batch, gradient accumulation,
GPT-Neo-8M's size). Not stated in what could be read: hardware, wall-clock times, the settings of
the headline runs, how "faster" was measured.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses

from suite.api import (Approx, Assumption, Claim, Null, ScenarioSpec, Technique, declare_technique,
                       with_reasons)


# --------------------------------------------------------------------------- GPT-Neo-8M


def gpt_neo_8m():
    """GPT-Neo-8M of the authors' code (Hiroki11x/Pseudo-Asynchronous-LocalSGD): 8 layers, hidden 128, 8 heads,
    GPT-Neo's vocabulary (50,257), 300 learned positions (the code's max_length), local attention
    every other layer; 8,054,656 parameters, the count the code's README gives."""
    from suite.api import TransformerSpec, transformer

    spec = TransformerSpec(
        "gpt-neo-8m", 8, 128, 8, vocab=50257, seq=300, positions=300, qkv_bias=False, local_window=256,
        local_every=2,
        source="PALSGD authors' code Hiroki11x/Pseudo-Asynchronous-LocalSGD @ 2c37c48, gptneo_8m example "
               "(8 layers, hidden 128, 8 heads, max_length 300); GPT-Neo architecture (EleutherAI)",
        published_params=8_054_656, published_note="parameter count in the authors' README [CODE]")
    return transformer(spec)


# --------------------------------------------------------------------------- claims

_HW = ("Hardware not stated in the paper's abstract; assumption: 4 workers (the code's 4 GPUs per node) on one dgx-a100 node "
       "(A100 80 GB, NVSwitch), bf16 peak at efficiency 0.5, fp32 gradients on the wire. Settings from the "
       "authors' code defaults for that experiment [CODE], not confirmed as the paper's. Steps to the target "
       "equal to DDP's (steps_ratio = 1, assumption), 10,000 target steps. 'X% faster' read as "
       "time_saving = 1 - T_PALSGD / T_DDP. ")


def _spec(variant: str, workload: str, **params) -> ScenarioSpec:
    base = {"workers": 4}
    base.update(params)
    return ScenarioSpec(variant=variant, profile="dgx-a100", workload=workload, params=base, fidelity="model")


def _claims() -> list[Claim]:
    rows = [
        ("resnet-50-imagenet", "ImageNet-1K with ResNet-50", 0.184, "resnet-50",
         dict(batch=128, grad_accum=16, H=100, warmup=100, p=0.1), "ResNet-50 at 224x224 (zoo table)."),
        ("gpt-neo-125m-tinystories", "TinyStories with GPT-Neo-125M", 0.244, "gpt-neo-125m@seq300",
         dict(batch=128, grad_accum=16, H=100, warmup=100, p=0.2), "GPT-Neo-125M at the code's max_length 300."),
        ("gpt-neo-8m-tinystories", "TinyStories with GPT-Neo-8M", 0.211, "gpt-neo-8m",
         dict(batch=32, grad_accum=16, H=32, warmup=32, p=0.2),
         "GPT-Neo-8M is not in the zoo: the plugin contributes it (8 layers, hidden 128, 8 heads, 300 positions, "
         "8,054,656 parameters as in the authors' README)."),
    ]
    out = []
    for cid, what, val, wl, params, extra in rows:
        out.append(Claim(
            id=f"{cid}-faster-than-ddp",
            statement=f"PALSGD trains {val:.1%} faster than DDP on {what}",
            source="abstract", verified=True,
            expect=Approx(val, rel=0.2),
            scenario=_spec("palsgd", wl, **params), metric="time_saving",
            nulls=(Null("no gain", value=0.0),
                   Null(f"saving = p ({params['p']:g})",
                        value=float(params["p"])),
                   Null("DiLoCo for PALSGD", variants={"palsgd": "diloco"})),
            note=_HW + extra + " time_saving is already the gain (0 = no gain), so the 20% applies to it. "
                 f"p = {params['p']:g} is the authors' code setting for this experiment, not a value read in "
                 "the paper; a fraction p of steps skip forward and backward, so the model's saving is close to "
                 "p by construction: the null 'saving = p' makes the claim not discriminating when p alone "
                 "lands in the band (docs/techniques/palsgd.md sweeps p).",
        ))
    return out


# --------------------------------------------------------------------------- properties

_SMALL = dict(workers=3, steps=9, batch=8, H=2, warmup=3, p=0.3, eta=0.5, inner="adamw", lr=0.01,
              weight_decay=0.0, outer_lr=0.25, outer_momentum=0.9, hetero=1.0, split="dirichlet", alpha=0.5,
              hidden=0, efficiency=0.5, dtype="fp32", algorithm="ring", clock_workload="")


def _exec(variant: str, profile=None, **over):
    from suite_palsgd import execute

    q = dict(_SMALL)
    q.update(over)
    s = execute.setup(variant, q, profile, 0)
    extra = execute.run(s)
    return s, extra


def check_reduces_to_ssgd(tech: Technique, scenario) -> None:
    """p = 0, H = 1, plain inner SGD, outer lr 1 without momentum: PALSGD = synchronous SGD."""
    import numpy as np

    kw = dict(p=0.0, H=1, inner="sgd", lr=0.1, outer_lr=1.0, outer_momentum=0.0)
    a, _ = _exec("palsgd", scenario.profile, **kw)
    b, _ = _exec("s-sgd", scenario.profile, **kw)
    err = max(float(np.max(np.abs(x - y))) for x, y in zip(a.workers.params, b.workers.params))
    if not (err <= 1e-12):
        raise AssertionError(f"PALSGD(p=0, H=1, SGD, outer lr 1) differs from S-SGD by {err}")


def check_allreduce_count(tech: Technique, scenario) -> None:
    """#all-reduces = warm-up + floor((T - warm-up)/H), and replicas identical after every sync."""
    for v in ("local-sgd", "diloco", "palsgd"):
        s, extra = _exec(v, scenario.profile)
        expect = 3 + (9 - 3) // 2
        if not (s.workers.allreduces == expect):
            raise AssertionError(f"{v}: {s.workers.allreduces} all-reduces, expected {expect}")
        if not (extra["synced_identical"]):
            raise AssertionError(f"{v}: replicas differ right after a sync")


def check_local_not_slower(tech: Technique, scenario) -> None:
    """Model: local variants' time to target <= DDP's (equal steps); PALSGD <= DiLoCo when T_ps <= T_c."""
    from suite_palsgd import model

    r = {v: tech.evaluate(dataclasses.replace(scenario, variant=v, fidelity="model",
                                              params=dict(scenario.params, steps_ratio=1.0)))
         for v in model.VARIANTS}
    t = {v: r[v]["time_to_target"] for v in r}
    eps = 1e-12 * t["s-sgd"]
    for v in ("local-sgd", "diloco", "palsgd"):
        if not (t[v] <= t["s-sgd"] + eps):
            raise AssertionError(f"{v} {t[v]} s slower than DDP {t['s-sgd']} s")
    inp = r["palsgd"].artifacts["inputs"]
    if inp["t_ps"] <= inp["t_c"]:
        if not (t["palsgd"] <= t["diloco"] + eps):
            raise AssertionError(f"palsgd {t['palsgd']} slower than diloco {t['diloco']}")


# ---------------------------------------------------------- why not reproduced, and what decides (issue 42)
#: claim id -> (reason class, reason) of each claim not reproduced; claim id -> the assumptions its
#: verdict depends on, with the value at which it flips (docs/verdicts.md; the docs page's table)
_WHY_NOT = {
    "resnet-50-imagenet-faster-than-ddp": (
        "setup unknown", "PALSGD's steps to the target against DDP's (steps_ratio) and p are not stated for this run: "
        "at steps_ratio = 1 and p = 0.1 (the authors' code setting) ours is 0.1007, below 0.184 +- 20% (the saving is "
        "p within 0.4 points); the verdict flips to reproduced at steps_ratio 0.948 (0.1474; every null outside: "
        "DiLoCo 0.0538) and, at steps_ratio 1, to not discriminating at p = 0.1475 (the null 'saving = p' lands "
        "beside ours)"),
}
_P = "p (fraction of steps that skip forward and backward)"
_P_NOTE = "the saving is ~p by construction; the docs page sweeps p"
_SR = "steps_ratio (PALSGD's steps to the target / DDP's)"
_SR_NOTE = ("the paper's is not stated (docs page: [NOT FOUND]); --param steps_ratio swept with the claim's other "
            "params, the saving is ")
#: claim id -> the assumptions its verdict flips with, each swept alone with the claim's other params
#: (`suite run --technique palsgd --param steps_ratio=...`): (p, where p flips it, to what), (where
#: steps_ratio flips it, to what, the sweep)
_FLIPS = {"resnet-50-imagenet-faster-than-ddp": (
              (0.1, 0.1475, "not discriminating"),
              ("0.948", "reproduced", "0.1007 at 1, 0.1465 at 0.949, 0.1474 at 0.948 (inside 0.1472 to 0.2208; "
               "DiLoCo 0.0538, outside), 0.2201 at 0.867, 0.2210 at 0.866 (above the band: not reproduced again)")),
          "gpt-neo-125m-tinystories-faster-than-ddp": (
              (0.2, "0.196 (below) and 0.293 (above)", "not reproduced"),
              ("1.005 (above) and 0.882 (below)", "not reproduced",
               "0.1987 at 1, 0.1955 at 1.004, 0.1947 at 1.005 (below 0.1952); 0.2923 at 0.883, 0.2931 at 0.882 "
               "(above 0.2928); the null 'saving = p' stays inside between")),
          "gpt-neo-8m-tinystories-faster-than-ddp": (
              (0.2, "0.1665 (below) and 0.2515 (above)", "not reproduced"),
              ("1.042 (above) and 0.936 (below)", "not reproduced",
               "0.2022 at 1, 0.1695 at 1.041, 0.1687 at 1.042 (below 0.1688); 0.2524 at 0.937, 0.2532 at 0.936 "
               "(above 0.2532); the null 'saving = p' stays inside between"))}
_DECIDING = {c: (Assumption(_P, p, flip_at=pflip, sourced=False, note=_P_NOTE, flips_to=pto),
                 Assumption(_SR, 1.0, flip_at=srflip, sourced=False, note=_SR_NOTE + swept, flips_to=srto))
             for c, ((p, pflip, pto), (srflip, srto, swept)) in _FLIPS.items()}


TECHNIQUE = declare_technique(__name__, claims=with_reasons(_claims(), _WHY_NOT, _DECIDING))
