"""Declaration of the ``transpose-conv`` technique (Tida et al., unified kernel-segregated
transpose convolution, arXiv 2502.20493)."""

from __future__ import annotations

from suite.api import Paper, Param, Property, Scenario, ScenarioSpec, Technique, Variant

from .claims import CLAIMS
from .layers import layers_of

__all__ = ["TECHNIQUE", "VALIDATION"]

PAPER = Paper(
    title="Unified Kernel-Segregated Transpose Convolution Operation",
    authors=("Vijay Srinivas Tida", "Md Imran Hossen", "Liqun Shan", "Sai Venkatesh Chilukoti", "Sonya Hsu",
             "Xiali Hei"),
    venue="arXiv",
    year=2025,
    arxiv="2502.20493",
)

VARIANT_LIST = [
    Variant("scatter", "the definition: every input times every tap, scatter-added, then cropped (the oracle)",
            baseline=True),
    Variant("zero-insert", "conventional: insert s-1 zeros, pad, stride-1 convolution with the flipped kernel",
            baseline=True),
    Variant("kernel-segregated", "Tida et al. 2022: s^2 sub-kernels on a ceil(Ho/s) grid, sub-output buffers, "
            "interleave and crop (extra elements for odd sizes)"),
    Variant("unified", "Tida et al. 2025: one pass, each output computed once from its parity's sub-kernel, "
            "written in place"),
]

PARAMETERS = {
    "batch": Param(int, 1, "", 1, 4096, help="batch size N"),
    "in_channels": Param(int, 16, "", 1, 8192, help="Ci of the single layer (when no workload is given)"),
    "out_channels": Param(int, 16, "", 1, 8192, help="Co of the single layer"),
    "height": Param(int, 15, "", 1, 4096, help="input height H of the single layer"),
    "width": Param(int, 15, "", 1, 4096, help="input width W of the single layer"),
    "kernel": Param(int, 4, "", 1, 31, help="square kernel size k"),
    "stride": Param(int, 2, "", 1, 16, help="stride s"),
    "padding": Param(int, 1, "", 0, 30, help="padding p (PyTorch ConvTranspose2d semantics)"),
    "output_padding": Param(int, 0, "", 0, 15, help="output padding op, 0 <= op < s"),
    "dtype": Param(str, "float32", choices=("float32", "float64"), help="element type"),
    "repeats": Param(int, 5, "", 1, 1000, help="execute: timed repeats (median reported, raw samples kept)"),
    "threads": Param(int, 1, "", 0, 256, help="execute: BLAS threads while timing (threadpoolctl); 0 = the "
                     "library's default. 1 by default: multi-threaded BLAS on a shared, oversubscribed machine "
                     "gives timings 10-100x off"),
    "check": Param(bool, True, help="execute: compare the output with the scatter definition"),
    "traffic": Param(str, "per-tap", choices=("per-tap", "fused"),
                     help="model: memory traffic of the reference numpy schedule (per-tap) or of one fused "
                          "kernel per launch (fused, as on a GPU)"),
    "efficiency": Param(float, 1.0, "", 1e-3, 1.0, help="model: achieved fraction of the profile's peak FLOP/s"),
    "launch_overhead": Param(float, 0.0, "s", 0.0, 1.0, help="model: fixed cost per operation/kernel launch"),
}


# --------------------------------------------------------------------------- properties

_CHECK_MACS = 2e7  # properties run the arrays only for layers up to this many MACs (kept fast)


def _small_layers(scenario: Scenario):
    from suite_transpose_conv import model

    return [l for l in layers_of(scenario) if model.macs(l, "zero-insert") <= _CHECK_MACS]


def check_equals_scatter(tech: Technique, scenario: Scenario) -> None:
    """The scenario's variant equals the scatter definition on random inputs (allclose)."""
    import numpy as np

    from .ops import run

    rng = np.random.default_rng(scenario.seed)
    for l in _small_layers(scenario):
        x = rng.standard_normal((l.n, l.ci, l.h, l.w))
        w = rng.standard_normal((l.ci, l.co, l.k, l.k))
        out, _ = run(scenario.variant, x, w, l.s, l.p, l.op)
        ref, _ = run("scatter", x, w, l.s, l.p, l.op)
        if not (out.shape == (l.n, l.co, l.ho, l.wo)):
            raise AssertionError(f"{scenario.variant}: shape {out.shape}")
        if not (np.allclose(out, ref, rtol=1e-9, atol=1e-9)):
            raise AssertionError(f"{scenario.variant} differs from scatter on {l}")


def check_counts(tech: Technique, scenario: Scenario) -> None:
    """Unified computes exactly Ho x Wo outputs per channel; MACs unified <= KS <= zero-insert;
    KS extra elements = s^2 ceil(Ho/s) ceil(Wo/s) - Ho Wo; counted work equals the closed forms."""
    import numpy as np

    from suite_transpose_conv import model

    from .ops import VARIANTS, run

    rng = np.random.default_rng(scenario.seed)
    for l in _small_layers(scenario):
        x = rng.standard_normal((l.n, l.ci, l.h, l.w))
        w = rng.standard_normal((l.ci, l.co, l.k, l.k))
        work = {v: run(v, x, w, l.s, l.p, l.op)[1] for v in VARIANTS}
        if not (work["unified"].outputs == l.ho * l.wo):
            raise AssertionError('failed: work["unified"].outputs == l.ho * l.wo')
        if not (work["unified"].macs <= work["kernel-segregated"].macs <= work["zero-insert"].macs):
            raise AssertionError('failed: work["unified"].macs <= work["kernel-segregated"].macs <= work["zero-insert"].macs')
        if not (work["kernel-segregated"].outputs - l.ho * l.wo == model.extra_outputs(l)):
            raise AssertionError('failed: work["kernel-segregated"].outputs - l.ho * l.wo == model.extra_outputs(l)')
        for v, wk in work.items():
            if not (wk.macs == model.macs(l, v)):
                raise AssertionError(f"{v}: counted {wk.macs} MACs, closed form {model.macs(l, v)}")


PROPERTIES = [
    Property("equals-scatter", "every variant equals the scatter definition (allclose) for the scenario's layers",
             check_equals_scatter),
    Property("counts", "unified computes exactly Ho*Wo outputs per channel; MACs unified <= KS <= zero-insert; "
             "KS extra elements equal s^2 ceil(Ho/s) ceil(Wo/s) - Ho Wo", check_counts),
]

_SMOKE_LAYER = {"in_channels": 8, "out_channels": 8, "height": 9, "width": 9, "kernel": 3, "stride": 2,
                "padding": 1, "repeats": 2, "dtype": "float64"}  # float64: oracle_error ~1e-15 (oracle-exact)

SMOKE = [
    ScenarioSpec(variant="unified", fidelity="execute", params=_SMOKE_LAYER),
    ScenarioSpec(variant="kernel-segregated", fidelity="model", params=_SMOKE_LAYER),
]

#: Scenarios ``suite validate transpose-conv`` runs at both fidelities: every variant on three
#: layer shapes (even and odd outputs), each well under a second to execute.
VALIDATION = [
    ScenarioSpec(variant=v, fidelity="execute", params={**shape, "repeats": 5})
    for shape in (
        {"in_channels": 64, "out_channels": 32, "height": 16, "width": 16, "kernel": 4, "stride": 2, "padding": 1},
        {"in_channels": 32, "out_channels": 32, "height": 31, "width": 31, "kernel": 3, "stride": 2, "padding": 1},
        {"in_channels": 128, "out_channels": 64, "height": 8, "width": 8, "kernel": 5, "stride": 3, "padding": 2},
    )
    for v in ("scatter", "zero-insert", "kernel-segregated", "unified")
]

TECHNIQUE = Technique(
    name="transpose-conv",
    title="Unified kernel-segregated transpose convolution (Tida et al. 2025)",
    category="kernels",
    paper=PAPER,
    variants=VARIANT_LIST,
    fidelities={"model": "suite_transpose_conv.model:evaluate", "execute": "suite_transpose_conv.execute:evaluate"},
    parameters=PARAMETERS,
    claims=CLAIMS,
    properties=PROPERTIES,
    version="0.5.0",
    default_profile="intel-xeon-platinum-8280",
    default_workload=None,
    needs_profile=True,
    needs_workload=False,
    profile_kinds=("device", "node", "measured"),
    # largest oracle_error accepted: the max abs difference from the scatter definition, float32 run
    # (execute's own check is allclose at rtol = atol = 1e-4 of the output's scale; the float32
    # layers of the claims measure up to 5.4e-7, float64 ones ~1e-15)
    oracle_tolerance=1e-4,
    capabilities=frozenset({"oracle-exact"}),
    smoke=SMOKE,
    validation=VALIDATION,
    docs="docs/techniques/transpose-conv.md",
)
