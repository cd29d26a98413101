"""The profile fields a technique reads, found by evaluating it through a recording view.

``suite info TECHNIQUE`` lists them and ``suite hardware show NAME --unread`` marks the fields no
installed technique reads. Each variant is evaluated at its default scenario (or the given
profile) at the ``model`` and ``simulate`` fidelities, in an isolated worker process like any
case; ``execute`` is left out (it runs real computations and reads the profile only to
size them). The runner records the same during every sweep (:mod:`suite.hardware.tracking`).
"""

from __future__ import annotations

from typing import Any

from suite.technique import ScenarioSpec, Technique

__all__ = ["probe_fields_read", "FIDELITIES"]

FIDELITIES = ("model", "simulate")


def probe_fields_read(tech: Technique, context: Any = None, profile: str | None = None, timeout: float = 60.0
                      ) -> tuple[dict[tuple[str, str], set[str]], list[str]]:
    """Evaluate every variant of *tech* at its default scenario (on *profile* when given) through a
    read-recording view of the profile, in an isolated worker process (a plugin that aborts or
    hangs costs only its own probe, stopped after *timeout* s).

    Returns
    -------
    (reads, problems)
        ``reads``: (variant, fidelity) -> dotted profile paths read; ``problems``: one line per
        variant and fidelity that could not be evaluated (skipped, does not resolve, failed,
        crashed, timed out).
    """
    from suite.runner.case import Resolver
    from suite.runner.options import ExecOptions
    from suite.runner.pool import LocalExecutor

    resolver = Resolver(context=context)
    problems: list[str] = []
    cases = []
    for fid in FIDELITIES:
        if fid not in tech.fidelities:
            continue
        for v in tech.variant_names:
            try:
                case = resolver.resolve(tech, ScenarioSpec(v, profile=profile, fidelity=fid))
            except Exception as exc:  # noqa: BLE001 - a probe: report and go on
                msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                problems.append(f"{v} ({fid}): {msg}")
                continue
            if case.scenario is not None and case.scenario.profile is not None:
                cases.append(case)
    reads: dict[tuple[str, str], set[str]] = {}
    if not cases:
        return reads, problems
    by_key = {c.key: c for c in cases}  # one case per group: a fresh worker records the reads of each
    for out in LocalExecutor().map_cases(cases, ExecOptions(jobs=1, timeout=timeout)):
        c = by_key[out["key"]]
        if out["status"] == "ok" and out.get("fields_read") is not None:
            reads[(c.variant, c.fidelity)] = {r for r in out["fields_read"]
                                              if r not in ("name", "kind") and not r.endswith(".name")}
        else:
            problems.append(f"{c.variant} ({c.fidelity}): {out['status']}: {out.get('error') or 'no reads recorded'}")
    return reads, problems
