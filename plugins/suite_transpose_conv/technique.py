"""Declaration of the ``transpose-conv`` technique (Tida et al., unified kernel-segregated
transpose convolution, arXiv 2502.20493).

Its plain data (paper, variants, parameters, smoke, properties) is ``technique.toml``.
"""

from __future__ import annotations

from suite.api import Scenario, ScenarioSpec, Technique, declare_technique

from .claims import CLAIMS
from .layers import layers_of

__all__ = ["TECHNIQUE", "VALIDATION"]


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

TECHNIQUE = declare_technique(__name__, claims=CLAIMS, smoke=SMOKE, validation=VALIDATION)
