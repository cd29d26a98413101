"""The profile fields a technique reads, found by evaluating it through a recording view.

``suite info TECHNIQUE`` lists them and ``suite hardware show NAME --unread`` marks the fields no
installed technique reads. Each variant is evaluated at its default scenario (or the given
profile) at the ``model`` and ``simulate`` fidelities, in an isolated worker process like any
case; ``execute`` is left out (it runs real computations and reads the profile only to
size them). :func:`probe_choice_reads` evaluates the first variant at each other value of a
parameter with choices, for the fields only that value reads. The runner records the same during
every sweep (:mod:`suite.hardware.tracking`).
"""

from __future__ import annotations

import warnings

from typing import Any

from suite.technique import ScenarioSpec, Technique

__all__ = ["probe_fields_read", "probe_choice_reads", "FIDELITIES"]

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
    specs = [((v, fid), f"{v} ({fid})", ScenarioSpec(v, profile=profile, fidelity=fid))
             for fid in FIDELITIES if fid in tech.fidelities for v in tech.variant_names]
    return _probe(tech, context, specs, timeout)


def probe_choice_reads(tech: Technique, context: Any = None, timeout: float = 60.0, profile: str | None = None
                       ) -> tuple[dict[tuple[str, str, str], set[str]], list[str]]:
    """As :func:`probe_fields_read`, for the first variant at the first of :data:`FIDELITIES` it
    has, once per other value of each parameter with choices (a bool: its other value), the others
    at their defaults (on *profile* when given): a field that only such a value reads (a library
    that only ``auto`` consults) is absent from the default scenarios' reads.

    Returns
    -------
    (reads, problems)
        ``reads``: (``"name=value"``, variant, fidelity) -> dotted profile paths read (all of them,
        not only those the default scenario leaves unread); ``problems``: as
        :func:`probe_fields_read`'s.
    """
    fid = next((f for f in FIDELITIES if f in tech.fidelities), None)
    if fid is None or not tech.variant_names:
        return {}, []
    v = tech.variant_names[0]
    specs = [((f"{name}={value}", v, fid), f"{v} ({fid}, {name}={value})",
              ScenarioSpec(v, profile=profile, fidelity=fid, params={name: value}))
             for name, p in tech.parameters.items()
             for value in (p.choices or ((not p.default,) if p.type is bool and p.default is not None else ()))
             if value != p.default]
    return _probe(tech, context, specs, timeout)


def _probe(tech: Technique, context: Any, specs: list[tuple[Any, str, ScenarioSpec]], timeout: float
           ) -> tuple[dict[Any, set[str]], list[str]]:
    """Resolve each (label, what, spec) of *specs* and evaluate it in an isolated worker: label ->
    the paths read, and a line per spec not evaluated (*what*: how the line names it)."""
    from suite.runner.case import Resolver
    from suite.runner.options import ExecOptions
    from suite.runner.pool import LocalExecutor

    resolver = Resolver(context=context)
    problems: list[str] = []
    by_key: dict[str, tuple[Any, str]] = {}  # one case per group: a fresh worker records the reads of each
    cases = []
    for label, what, spec in specs:
        try:
            case = resolver.resolve(tech, spec)
        except Exception as exc:  # noqa: BLE001 - a probe: report and go on
            msg = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            problems.append(f"{what}: {msg}")
            continue
        if case.scenario is not None and case.scenario.profile is not None:
            cases.append(case)
            by_key[case.key] = (label, what)
    reads: dict[Any, set[str]] = {}
    if not cases:
        return reads, problems
    with warnings.catch_warnings():  # a probe of a deprecated value the user never asked for warns nobody
        warnings.simplefilter("ignore")
        outs = list(LocalExecutor().map_cases(cases, ExecOptions(jobs=1, timeout=timeout)))
    for out in outs:
        label, what = by_key[out["key"]]
        if out["status"] == "ok" and out.get("fields_read") is not None:
            reads[label] = {r for r in out["fields_read"] if r not in ("name", "kind") and not r.endswith(".name")}
        else:
            problems.append(f"{what}: {out['status']}: {out.get('error') or 'no reads recorded'}")
    return reads, problems
