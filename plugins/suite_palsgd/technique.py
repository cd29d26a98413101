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


def skipped_compute(results) -> float:
    """Null of the claims: the saving if PALSGD's time were DDP's scaled by the gradient evaluations it
    computes, ``1 - grad_evals / ddp_grad_evals`` of the claim's case (*results*: label -> result, read
    ``results['main']``; 1, at most 1): p of the steps after the warm-up at equal steps (the old typed-in
    'saving = p'), and it follows ``steps_ratio``, so an assumed fewer steps to the target moves the null as
    it moves ours. It is negative where PALSGD computes more gradient evaluations than DDP (more steps
    than the p it skips makes up for: ResNet-50's -0.081 at p 0.1, steps_ratio 1.2), as ours is then
    (-0.079): a time saving, not clamped at 0, since a PALSGD slower than DDP saves a negative share.
    Raises KeyError when ``results`` has no 'main' case or it lacks ``grad_evals`` / ``ddp_grad_evals``."""
    r = results["main"]
    return 1.0 - r["grad_evals"] / r["ddp_grad_evals"]


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
                   Null(f"gradient evaluations skipped (p = {params['p']:g})", derive=skipped_compute),
                   Null("DiLoCo for PALSGD", variants={"palsgd": "diloco"})),
            note=_HW + extra + " time_saving is already the gain (0 = no gain), so the 20% applies to it. "
                 f"p = {params['p']:g} is the authors' code setting for this experiment, not a value read in "
                 "the paper; a fraction p of steps skip forward and backward, so the model's saving is close to "
                 "the share of DDP's gradient evaluations PALSGD skips by construction: the null computed from "
                 "that share (p of the steps after the warm-up, following steps_ratio) makes the claim not "
                 "discriminating when it lands in the band (docs/techniques/palsgd.md sweeps p).",
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
        "at steps_ratio = 1 and p = 0.1 (the authors' code setting) ours is 0.1007, below 0.184 +- 20%; the null "
        "'gradient evaluations skipped' (0.099 here) stays 0.06 to 0.23 points below ours for p 0 to 0.5 and "
        "steps_ratio 0.8 to 1.2 (0.17 here), so the verdict flips to reproduced only in narrow windows: steps_ratio "
        "0.9481 to 0.9465 (ours 0.1473 to 0.1487, the null 0.1457 to 0.1472; DiLoCo 0.054), not discriminating "
        "below; at steps_ratio 1, p 0.1472 to 0.1486, not discriminating from 0.1487"),
}
_P = "p (fraction of steps that skip forward and backward)"
_P_NOTE = ("the saving is ~p by construction, and so is the null 'gradient evaluations skipped'; --param p swept with "
           "the claim's other params: ")
_SR = "steps_ratio (PALSGD's steps to the target / DDP's)"
_SR_NOTE = ("the paper's is not stated (docs page: [NOT FOUND]); --param steps_ratio swept with the claim's other "
            "params (the null 'gradient evaluations skipped' moves with it): ")
#: claim id -> the assumptions its verdict flips with, each swept alone with the claim's other params
#: (`suite run --technique palsgd --param steps_ratio=...`, the verdicts of tests/claim_verdict.py):
#: (p, where p flips it, to what, the sweep), (where steps_ratio flips it, to what, the sweep)
_FLIPS = {"resnet-50-imagenet-faster-than-ddp": (
              (0.1, 0.1472, "reproduced (to 0.1486; not discriminating above)",
               "0.1471 gives 0.14718 (below 0.1472), 0.1472 0.14728 (inside; the null 0.14573 outside): reproduced to "
               "0.1486; at 0.1487 the null is 0.14721 (inside): not discriminating to 0.2216; 0.2209 at 0.2217 (above)"),
              ("0.948", "reproduced (to 0.9465; not discriminating below)",
               "0.1007 at 1, 0.14719 at 0.9482 (below 0.1472), 0.14728 at 0.9481 (inside; the null 0.14571 and DiLoCo "
               "0.054 outside): reproduced to 0.9465 (0.14872, the null 0.14715 outside); at 0.9464 the null is 0.14724 "
               "(inside): not discriminating to 0.8663; 0.2209 at 0.8662 (above 0.2208): not reproduced")),
          "gpt-neo-125m-tinystories-faster-than-ddp": (
              (0.2, "0.1971 (below) and 0.2952 (above)", "reproduced below (not reproduced from 0.1964), "
                                                       "not reproduced above",
               "0.1987 at 0.2 (the null 0.198, inside); 0.1959 at 0.1971 with the null 0.1951 outside: reproduced to "
               "0.1965, 0.19518 at 0.1964 (below 0.1952); 0.2929 at 0.2952 (above 0.2928)"),
              ("1.0036 (above) and 0.8823 (below)", "reproduced above (not reproduced from 1.0045), not reproduced below",
               "0.1987 at 1 (the null 0.198, inside); 0.1959 at 1.0036 with the null 0.1951 outside: reproduced to "
               "1.0044, 0.1951 at 1.0045 (below 0.1952); 0.29273 at 0.8824, 0.29281 at 0.8823 (above 0.2928)")),
          "gpt-neo-8m-tinystories-faster-than-ddp": (
              (0.2, "0.1693 (below) and 0.2514 (above)", "reproduced below (not reproduced from 0.1662), "
                                                       "not reproduced above",
               "0.2022 at 0.2 (the null 0.1994, inside); 0.1718 at 0.1693 with the null 0.16876 outside: reproduced to "
               "0.1663, 0.1687 at 0.1662 (below 0.1688); 0.25321 at 0.2514 (above 0.2532)"),
              ("1.0383 (above) and 0.936 (below)", "reproduced above (not reproduced from 1.042), not reproduced below",
               "0.2022 at 1 (the null 0.1994, inside); the null 0.16888 at 1.0381 (inside); at 1.0382 the null is "
               "0.1688 in exact arithmetic, the band's lower edge: a tie that float rounding decides (judged "
               "reproduced today), so the flip is declared at 1.0383, the first value clearly past; 0.1717 at "
               "1.0383 with the null 0.16872 outside: reproduced to 1.0419, 0.16875 at 1.042 (below 0.1688); "
               "0.25316 at 0.9361, 0.25324 at 0.936 (above 0.2532)"))}
_DECIDING = {c: (Assumption(_P, p, flip_at=pflip, sourced=False, note=_P_NOTE + pswept, flips_to=pto),
                 Assumption(_SR, 1.0, flip_at=srflip, sourced=False, note=_SR_NOTE + swept, flips_to=srto))
             for c, ((p, pflip, pto, pswept), (srflip, srto, swept)) in _FLIPS.items()}


TECHNIQUE = declare_technique(__name__, claims=with_reasons(_claims(), _WHY_NOT, _DECIDING))
