"""The profile fields a technique reads, found by evaluating it through a recording view.

``suite info TECHNIQUE`` lists them and ``suite hardware show NAME --unread`` marks the fields no
installed technique reads. Each variant is evaluated at its default scenario (or the given
profile) at the ``model`` and ``simulate`` fidelities, in this process: cheap analytic
evaluations; ``execute`` is left out (it runs real computations and reads the profile only to
size them). The runner records the same during every sweep (:mod:`suite.hardware.tracking`).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from suite.technique import ScenarioSpec, Technique

__all__ = ["probe_fields_read", "FIDELITIES"]

FIDELITIES = ("model", "simulate")


def probe_fields_read(tech: Technique, context: Any = None, profile: str | None = None
                      ) -> tuple[dict[tuple[str, str], set[str]], list[str]]:
    """Evaluate every variant of *tech* at its default scenario (on *profile* when given) through a
    read-recording view of the profile.

    Returns
    -------
    (reads, problems)
        ``reads``: (variant, fidelity) -> dotted profile paths read; ``problems``: one line per
        variant and fidelity that could not be evaluated (skipped, does not resolve, raised).
    """
    from suite.hardware.tracking import tracked
    from suite.runner.case import Resolver

    resolver = Resolver(context=context)
    reads: dict[tuple[str, str], set[str]] = {}
    problems: list[str] = []
    for fid in FIDELITIES:
        if fid not in tech.fidelities:
            continue
        for v in tech.variant_names:
            try:
                case = resolver.resolve(tech, ScenarioSpec(v, profile=profile, fidelity=fid))
                if case.scenario.profile is None:
                    continue
                view, got = tracked(case.scenario.profile)
                tech.evaluate(dataclasses.replace(case.scenario, profile=view))
            except Exception as exc:  # noqa: BLE001 - a probe: report and go on
                msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                problems.append(f"{v} ({fid}): {msg}")
                continue
            reads[(v, fid)] = {r for r in got if r not in ("name", "kind") and not r.endswith(".name")}
    return reads, problems
