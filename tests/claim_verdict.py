"""The verdict ``suite reproduce`` gives one claim when its scenarios are changed: how a test checks
the value at which a declared assumption flips the verdict, and what it flips to
(``Assumption.flip_at`` / ``flips_to``, docs/verdicts.md), without a store or a worker.

``verdict_at(tech, claim, spec_edit=..., scenario_edit=...)`` evaluates the claim's cases (and its
variant nulls' cases) in this process, each spec passed through *spec_edit* and each resolved
scenario through *scenario_edit*, and judges them with the scoreboard's own rule
(:func:`suite.runner.verdicts.decide`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from suite.runner.verdicts import INSIDE, OUTSIDE, ClaimOutcome, NullOutcome, decide
from suite.testing import resolve_case


def _run(tech, specs: Mapping[str, Any], spec_edit: Callable | None, scenario_edit: Callable | None) -> dict:
    out = {}
    for label, spec in specs.items():
        sc = resolve_case(tech, spec_edit(spec) if spec_edit else spec).scenario
        out[label] = tech.evaluate(scenario_edit(sc) if scenario_edit else sc)
    return out


def verdict_at(tech, claim, spec_edit: Callable | None = None,
               scenario_edit: Callable | None = None) -> tuple[str, Any]:
    """(verdict, our value) of *claim* of *tech* with every case edited; raises what a case raises."""
    specs = claim.specs()
    res = _run(tech, specs, spec_edit, scenario_edit)
    ours = claim.value(res)
    nulls = []
    for n in claim.nulls:
        if n.variants is not None:
            v = claim.value(_run(tech, n.substitute(specs), spec_edit, scenario_edit))
        else:
            v = n.derive(res) if n.derive is not None else n.value
        nulls.append(NullOutcome(n.label, "variants" if n.variants is not None else "value", value=v,
                                 inside=bool(claim.expect.check(v))))
    o = ClaimOutcome(tech.name, claim.id, claim.statement, claim.source, claim.verified, claim.expect.describe(),
                     ours=ours, nulls=nulls)
    decide(claim, o, INSIDE if claim.expect.check(ours) else OUTSIDE, res)
    return o.verdict, ours
