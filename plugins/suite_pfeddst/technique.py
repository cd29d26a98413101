"""PFedDST (Fan et al., arXiv 2502.07750, 2025): the technique declaration.

Variants (three baselines), parameters (k, alpha, c and the recency window R set once here, never
per claim), the abstract's two qualitative claims judged as orderings over seeds 0-9 with paired
bootstrap intervals, their nulls, and the declared properties.

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

import dataclasses
import math
from typing import TYPE_CHECKING

from suite.api import Claim, Null, Ordered, ScenarioSpec, declare_technique


if TYPE_CHECKING:
    import numpy as np

__all__ = ["TECHNIQUE", "PAPER", "CLAIMS", "PROPERTIES", "SEEDS", "TARGET_ACCURACY", "paired_summary",
           "derive_accuracy", "derive_rounds", "gaussian_mixture_10"]


#: Target personalized accuracy for "rounds to target", fixed here before any run (digits, 20 clients).
TARGET_ACCURACY = 0.90
SEEDS = tuple(range(10))


_BASELINES = ("local-only", "fedavg", "random-peers")
_P = "edge-hetero"


def gaussian_mixture_10():
    """The second execute data set: a 10-component Gaussian mixture (2,000 x 10, seed 0)."""
    from suite.api import gaussian_mixture

    return gaussian_mixture(n=2000, k=10, d=10, separation=3.0, seed=0, name="pfeddst-gaussian-mixture-10")


def _cases(workload: str = "digits") -> dict[str, ScenarioSpec]:
    out = {}
    for v in ("pfeddst", *_BASELINES):
        for s in SEEDS:
            out[f"{v}@{s}"] = ScenarioSpec(variant=v, profile=_P, workload=workload, fidelity="execute", seed=s,
                                           params={"clients": 20, "shards": 2})
    return out


def _bootstrap(diff: np.ndarray, reps: int = 4000, seed: int = 0) -> tuple[float, float]:
    """Percentile 95% bootstrap interval of the mean of *diff* (seeded; Efron & Tibshirani 1993, ch. 13).

    Not the runner's :func:`suite.runner.reproduce.bootstrap_interval`: that one resamples the
    repeated samples of each metric inside one result (timings), while this resamples the paired
    per-seed differences pfeddst - baseline across the claim's cases, one value per case. The
    claims are not ``measured`` and their metrics carry no samples, so nothing is bootstrapped twice.
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(diff), size=(reps, len(diff)))
    means = diff[idx].mean(axis=1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def paired_summary(results, metric: str, higher: bool) -> dict:
    """Per variant mean of *metric* over the seeds; the better baseline; the paired difference
    pfeddst - baseline (mean, 95% bootstrap interval, Cohen's d of the paired differences)."""
    import numpy as np

    by: dict[str, list[float]] = {}
    for label, r in sorted(results.items(), key=lambda kv: (kv[0].split("@")[0], int(kv[0].split("@")[1]))):
        v = label.split("@")[0]
        by.setdefault(v, []).append(float(r[metric]))
    means = {v: float(np.mean(x)) for v, x in by.items()}
    base = [v for v in by if v != "pfeddst"]
    best = max(base, key=lambda v: means[v]) if higher else min(base, key=lambda v: means[v])
    diff = np.array(by["pfeddst"]) - np.array(by[best])
    lo, hi = _bootstrap(diff)
    sd = float(np.std(diff, ddof=1)) if len(diff) > 1 else 0.0
    return {"means": means, "best": best, "diff": float(diff.mean()), "interval": (lo, hi),
            "cohens_d": float(diff.mean() / sd) if sd > 0 else (0.0 if diff.mean() == 0 else math.inf)}


def derive_accuracy(results):
    """Ordered values for claim 1: the better baseline's mean, and that mean plus the lower end of
    the paired difference's interval (so the 2% margin must be cleared by the whole interval)."""
    s = paired_summary(results, "final_accuracy", higher=True)
    b = s["means"][s["best"]]
    return {"pfeddst": b + s["interval"][0], "best baseline": b}


def derive_rounds(results):
    """Ordered values for claim 2 (rounds, lower is better): the better baseline's mean rounds, and
    that mean plus the upper end of the paired difference's interval; an upper end above -1 round
    counts as a tie (fails): the claim asks for >= 2% and >= 1 round fewer."""
    s = paired_summary(results, "rounds_to_target", higher=False)
    b = s["means"][s["best"]]
    hi = s["interval"][1]
    return {"pfeddst": b + hi if hi <= -1.0 else max(b + hi, b), "best baseline": b}


_NULLS = tuple(Null(f"{v} in place of pfeddst", variants={"pfeddst": v}) for v in _BASELINES)
_SETTING = ("Setting (ours; the paper's is CIFAR-10/100 with unknown clients, k, alpha, c, model): scikit-learn "
            "digits, 20 clients, pathological split with 2 shards each, one-hidden-layer MLP (32 units), 30 "
            "rounds, seeds 0-9, k=2 of degree 4, alpha=1, c=2, R=5, cross loss reading. ")

CLAIMS = [
    Claim(
        "better-accuracy",
        "PFedDST enhances model accuracy: final personalized accuracy above the better of the three baselines "
        "by >= 2% (the paired difference's 95% bootstrap interval clears the margin)",
        source="abstract", verified=True,
        cases=_cases(), derive=derive_accuracy,
        expect=Ordered(("pfeddst", "best baseline"), margin=0.02, lower=False),
        nulls=_NULLS, domain=(0.0, 1.0),
        note=_SETTING + "The abstract is qualitative; the 2% margin is the ordering margin of docs/verdicts.md. "
             "A claim defect in this setting: the better baseline (local-only) ends at 0.9845, so the 2% relative "
             "margin needs an accuracy above 1.004, which no accuracy reaches (reported as such by reproduce). "
             "PFedDST and random peer choice both end at 0.9702: the selection does nothing here. "
             "Our value for pfeddst is the better baseline's mean plus the lower end of the paired interval.",
    ),
    Claim(
        "faster-convergence",
        "PFedDST accelerates convergence: rounds to the target personalized accuracy (0.90) >= 2% and >= 1 "
        "round fewer than the better baseline (paired 95% bootstrap interval)",
        source="abstract", verified=True,
        cases=_cases(), derive=derive_rounds,
        expect=Ordered(("pfeddst", "best baseline"), margin=0.02, lower=True),
        nulls=_NULLS,
        defect=("settled before any run: the better baseline (local-only) reaches 0.90 in 2.6 rounds on average, so "
                "'>= 1 round fewer' needs PFedDST at 0.90 after round 1, where every method's round-1 accuracy is "
                "0.35-0.51 (same initialisation, one round of local training); the setting, not the technique, "
                "decides it"),
        note=_SETTING + f"Target {TARGET_ACCURACY} fixed in the technique before any run; a run that never "
             "reaches it counts rounds + 1 (censored).",
    ),
]


# --------------------------------------------------------------------------- properties


def _tiny(seed: int):
    """A small real problem for the execute properties: 300 digits, 8 clients."""
    import numpy as np
    from suite.api import load_sklearn

    from suite_pfeddst import execute

    X, y = load_sklearn("digits")
    rng = np.random.default_rng(seed)
    idx = rng.permutation(len(y))[:300]
    return execute.load_clients(X[idx], y[idx], 8, seed=seed)


def check_selection(tech, scenario):
    """k distinct neighbours, never itself, drawn from the peer graph, for both selecting variants."""
    from suite_pfeddst import execute

    cl = _tiny(scenario.seed)
    nbrs = execute.peer_graph(cl.n, 4, scenario.seed)
    for v in ("pfeddst", "random-peers"):
        rr = execute.run(cl, v, rounds=2, hidden=8, degree=4, k=2, seed=scenario.seed)
        for rnd in rr.selections:
            for i, picked in enumerate(rnd):
                if not (len(picked) == 2 == len(set(picked))):
                    raise AssertionError(f"{v}: client {i} picked {picked}")
                if not (i not in picked and set(picked) <= set(nbrs[i])):
                    raise AssertionError(f"{v}: client {i} picked {picked} not in {nbrs[i]}")


def check_score_shape(tech, scenario):
    """S increases in s_l (alpha > 0), decreases in s_d, is linear in s_p (for positive brackets)."""
    import numpy as np

    from suite_pfeddst import execute

    rng = np.random.default_rng(scenario.seed)
    a, c = float(scenario.params["alpha"]) or 1.0, float(scenario.params["c"])
    s_l, s_d, s_p = rng.uniform(0, 3, 20), rng.uniform(0, 2, 20), rng.uniform(0.05, 1, 20)
    S = execute.score_matrix(s_l, s_d, s_p, a, c)
    if not (np.all(execute.score_matrix(s_l + 0.5, s_d, s_p, a, c) > S)):
        raise AssertionError("S not increasing in s_l")
    if not (np.all(execute.score_matrix(s_l, s_d + 0.5, s_p, a, c) < S)):
        raise AssertionError("S not decreasing in s_d")
    if not (np.allclose(execute.score_matrix(s_l, s_d, 2 * s_p, a, c), 2 * S)):
        raise AssertionError("S not linear in s_p")


def check_convex(tech, scenario):
    """Each aggregate is a convex combination: within the inputs' range, idempotent on equal inputs."""
    import numpy as np

    from suite_pfeddst import execute

    rng = np.random.default_rng(scenario.seed)
    own = rng.normal(size=50)
    rec = [rng.normal(size=50) for _ in range(3)]
    agg = execute.average_extractors(own, rec)
    st = np.stack([own, *rec])
    if not (np.all(agg <= st.max(axis=0) + 1e-12) and np.all(agg >= st.min(axis=0) - 1e-12)):
        raise AssertionError("aggregate leaves the hull")
    same = execute.average_extractors(own, [own.copy(), own.copy()])
    if not (np.allclose(same, own, rtol=1e-14, atol=0)):
        raise AssertionError("aggregate of equal inputs differs from them (beyond rounding)")


def check_bandwidth_monotone(tech, scenario):
    """Round time does not rise when any network level gets twice as fast."""
    prof = scenario.profile
    sc = dataclasses.replace(scenario, fidelity="model")
    t0 = tech.evaluate(sc)["round_time"]
    for i, lv in enumerate(prof.network):
        faster = prof.with_overrides({f"network.{i}.bandwidth": f"{2 * lv.bandwidth} B/s"})
        t1 = tech.evaluate(dataclasses.replace(sc, profile=faster))["round_time"]
        if not (t1 <= t0 * (1 + 1e-12)):
            raise AssertionError(f"round time rose from {t0} to {t1} s when level {i} got faster")


def check_k0_identical(tech, scenario):
    """k = 0 makes pfeddst and random-peers identical bit for bit (models, curve, no bytes)."""
    import numpy as np

    from suite_pfeddst import execute

    cl = _tiny(scenario.seed)
    a = execute.run(cl, "pfeddst", rounds=2, hidden=8, k=0, seed=scenario.seed)
    b = execute.run(cl, "random-peers", rounds=2, hidden=8, k=0, seed=scenario.seed)
    if not (a.accuracy == b.accuracy):
        raise AssertionError(f"curves differ at k=0: {a.accuracy} vs {b.accuracy}")
    if not (all(np.array_equal(x, y) for x, y in zip(a.thetas, b.thetas))):
        raise AssertionError("models differ at k=0")
    if not (a.ledger.total_bytes == b.ledger.total_bytes == 0):
        raise AssertionError("traffic at k=0")


def check_ledger_bytes(tech, scenario):
    """The ledger's bytes equal rounds x clients x (k |e| + deg (|h| + |theta| + scalar)), and no
    header is averaged into another client (headers travel only as scoring messages)."""
    from suite_pfeddst import execute

    cl = _tiny(scenario.seed)
    h = 8
    e_b = (cl.d * h + h) * 8
    h_b = (h * cl.classes + cl.classes) * 8
    rr = execute.run(cl, "pfeddst", rounds=2, hidden=h, degree=4, k=2, seed=scenario.seed)
    want = 2 * cl.n * (2 * e_b + 4 * (h_b + e_b + h_b + execute.SCALAR_BYTES))
    if not (rr.ledger.total_bytes == want):
        raise AssertionError(f"ledger {rr.ledger.total_bytes} B, expected {want} B")
    tags = rr.ledger.by_tag()
    if not (tags["extractor"][1] == 2 * cl.n * 2 * e_b):
        raise AssertionError(f"extractor bytes {tags['extractor']}")


TECHNIQUE = declare_technique(__name__, claims=CLAIMS)
# the declaration's parts (technique.toml), by their 0.3.0 names
PAPER, PROPERTIES = TECHNIQUE.paper, TECHNIQUE.properties
