"""The Mixed-TD fidelities the declaration names by reference (``suite_mixed_td.fidelities:...``),
imported the first time one runs: the model fidelity's evaluate (the variant's design on the FPGA
pipeline model) and the execute fidelity's wrapper."""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from suite.api import Result, Skip, blas_threads, collector_paused

from suite_mixed_td import execute, model
from suite_mixed_td.technique import _family, default_ratio

__all__ = ["evaluate_model", "evaluate_execute"]


@collector_paused()  # the search's many small arrays and lists, none in a cycle
def evaluate_model(scenario) -> Result:
    """Model fidelity: the variant's design (dense, or the search's best) on the FPGA pipeline model.

    Returns
    -------
    suite.Result
        ``throughput`` (images/s), ``dsps`` (DSP slices), ``throughput_per_dsp`` (images/s/DSP),
        ``macs`` (MAC/image), ``macs_ratio`` (1, over dense), ``weight_bytes``, ``spilled_bytes`` (B),
        ``speedup`` and ``per_dsp_gain`` over the dense design (1), ``feasible`` (1 if both search
        constraints hold), ``decomposed_layers``. Artifacts: ``layers`` (per-layer choice),
        ``search`` (evaluations, wall time, evaluations/s, best score per generation).

    Raises
    ------
    suite.Skip
        No ``[ext.fpga]`` in the profile; a workload that is not a layer table; a DSP budget below the
        dense design's stage count.
    """
    from suite.api import LayerTable

    wl = scenario.workload
    if not isinstance(wl, LayerTable):
        raise Skip(f"mixed-td model: workload {getattr(wl, 'name', None)!r} is not a layer table "
                   f"(for the digits CNN use 'mixed-td-digits-cnn')")
    p = scenario.params
    res = model.resources_of(scenario.profile, p.get("dsp_budget"))
    dpm = float(p["dsp_per_mac"])
    ratio = float(p["ratio"]) if p.get("ratio") is not None else default_ratio(wl)
    macs_target = float(p["macs_target"]) if p.get("macs_target") is not None else ratio
    methods = model.METHODS[scenario.variant]
    net = model.build_network(wl, methods or ("svd", "cpd"))
    dense_design, d0 = _dense(net, res, dpm, wl.name)
    t0 = time.perf_counter()
    if methods and len(net.candidates):
        sr = _search(scenario, net, res, methods, ratio=ratio, macs_target=macs_target, dpm=dpm)
        design, m, feasible, evals, history = sr.design, sr.metrics, sr.feasible, sr.evaluations, sr.history
    else:
        design, m, feasible, evals, history = dense_design, d0, True, 1, []
    wall = time.perf_counter() - t0
    tpd = m["throughput"] / m["dsps"] if m["dsps"] else 0.0
    tpd0 = d0["throughput"] / d0["dsps"]
    out = Result()
    out.add("throughput", m["throughput"], "1/s", "higher")
    out.add("dsps", m["dsps"], "1", "lower")
    out.add("throughput_per_dsp", tpd, "1/s", "higher")
    out.add("macs", m["macs"], "1", "lower")
    out.add("macs_ratio", m["macs"] / net.dense_macs, "1", "lower")
    out.add("weight_bytes", m["weight_bytes"], "B", "lower")
    out.add("spilled_bytes", m["spilled_bytes"], "B", "lower")
    out.add("speedup", m["throughput"] / d0["throughput"], "1", "higher")
    out.add("per_dsp_gain", tpd / tpd0, "1", "higher")
    out.add("feasible", 1.0 if feasible else 0.0, "1", "higher")
    out.add("decomposed_layers", float(sum(1 for k in design if int(k) != 0)), "1", "none")
    out.artifacts["layers"] = net.describe(design)
    out.artifacts["search"] = {"evaluations": int(evals), "wall_s": wall,
                               "evaluations_per_s": (evals / wall) if wall > 0 else None,
                               "ratio": ratio, "macs_target": macs_target, "best_score": history[-1:] or None}
    return out


def _dense(net, res, dpm: float, name: str) -> tuple[np.ndarray, dict[str, float]]:
    """The dense design (every layer's candidate 0) and its metrics on the pipeline model.

    Raises
    ------
    suite.Skip
        The DSP budget is below the dense design's stage count.
    """
    dense_design = np.zeros(len(net.candidates), dtype=np.int64)
    d0 = {k: float(v[0]) for k, v in model.evaluate_designs(net, dense_design[None, :], res, dpm).items()}
    if not d0["feasible_fold"]:
        raise Skip(f"mixed-td model: dsp_budget {res.dsps} is below the {len(net.stages_of(dense_design))} "
                   f"stages of the dense design of {name!r}")
    return dense_design, d0


def _search(scenario, net, res, methods: tuple[str, ...], *, ratio: float, macs_target: float,
            dpm: float) -> model.SearchResult:
    """The variant's evolutionary search (:func:`suite_mixed_td.model.search`) on the scenario: its
    generations, seed and objective, and the first-generation prior's mean MAC ratio
    ``ratio - sb - mb`` from the workload family's and decomposition's :data:`model.PRIORS`."""
    p = scenario.params
    sb, mb = model.PRIORS[(_family(scenario.workload), "cp" if methods == ("cpd",) else "mixed")]
    return model.search(net, res, ratio=ratio, macs_target=macs_target, generations=int(p["generations"]),
                        seed=int(scenario.seed), prior_mean=ratio - sb - mb, dsp_per_mac=dpm,
                        objective=str(p["objective"]))


def evaluate_execute(scenario):
    """Execute fidelity: :func:`suite_mixed_td.execute.evaluate` with the family's default ratio filled
    in and BLAS/OpenMP pinned to one thread."""
    p = dict(scenario.params)
    if p.get("ratio") is None:
        p["ratio"] = default_ratio(scenario.workload)
    sc = dataclasses.replace(scenario, params=p)
    with blas_threads(1):  # tiny matrices: BLAS threads only contend
        return execute.evaluate(sc)
