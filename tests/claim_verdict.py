"""The verdict ``suite reproduce`` gives one claim when its scenarios are changed: how a test checks
the value at which a declared assumption flips the verdict, and what it flips to
(``Assumption.flip_at`` / ``flips_to``, docs/verdicts.md), without a store or a worker.

``verdict_at(tech, claim, spec_edit=..., scenario_edit=...)`` evaluates the claim's cases (and its
variant nulls' cases) in this process, each spec passed through *spec_edit* and each resolved
scenario through *scenario_edit*, and judges them with the scoreboard's own function
(:func:`suite.runner.judging.judge`: its value checks, nulls and verdict), the results served from
memory instead of a store."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from suite.runner.judging import judge
from suite.runner.reproduce import new_outcome
from suite.testing import resolve_case


@dataclass
class _Case:
    key: str
    fidelity: str


class _Results:
    """What the judge reads a case's result from (a store in ``suite reproduce``)."""

    def __init__(self) -> None:
        self.by_key: dict[str, Any] = {}

    def result(self, key: str) -> Any:
        return self.by_key[key]


def _run(tech, specs: Mapping[str, Any], spec_edit: Callable | None, scenario_edit: Callable | None,
         results: _Results, prefix: str) -> dict[str, _Case]:
    cases = {}
    for label, spec in specs.items():
        case = resolve_case(tech, spec_edit(spec) if spec_edit else spec)
        sc = scenario_edit(case.scenario) if scenario_edit else case.scenario
        cases[label] = _Case(prefix + label, case.fidelity)
        results.by_key[prefix + label] = tech.evaluate(sc)
    return cases


def with_params(**params: Any) -> Callable:
    """A ``spec_edit`` for :func:`verdict_at`: every case with *params* set, its other params kept."""
    return lambda spec: dataclasses.replace(spec, params={**spec.params, **params})


def with_overrides(overrides: Mapping[str, str]) -> Callable:
    """A ``spec_edit`` for :func:`verdict_at`: every case with the profile fields *overrides* set
    (``{"network.1.bandwidth": "2.94 GB/s"}``, as ``--set``), its other overrides kept."""
    return lambda spec: dataclasses.replace(spec, overrides={**spec.overrides, **overrides})


def verdict_at(tech, claim, spec_edit: Callable | None = None,
               scenario_edit: Callable | None = None) -> tuple[str, Any]:
    """(verdict, our value) of *claim* of *tech* with every case edited; raises what a case raises."""
    specs, results = claim.specs(), _Results()
    cases = _run(tech, specs, spec_edit, scenario_edit, results, "")
    ncases = [(n, _run(tech, n.substitute(specs), spec_edit, scenario_edit, results, f"null{i}:")
               if n.variants is not None else None, "") for i, n in enumerate(claim.nulls)]
    o = new_outcome(tech, claim)
    judge(claim, o, cases, {k: ("ok", None) for k in results.by_key}, results, ncases)
    return o.verdict, o.ours
