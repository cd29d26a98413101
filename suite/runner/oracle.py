"""The runner's oracle rule: an execute result whose ``oracle_error`` exceeds the technique's
declared ``oracle_tolerance`` is a failed case, never ``ok``.

A technique that declares no tolerance is held to :data:`suite.technique.DEFAULT_ORACLE_TOLERANCE`
from version 0.3.0 (:mod:`suite.deprecation`); in 0.2 only the kit's ``oracle-agreement`` check
warns about it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["oracle_limit", "oracle_problem"]


def oracle_limit(tech: Any) -> tuple[float, bool]:
    """``(tolerance, declared)``: the technique's ``oracle_tolerance``, else the default."""
    from suite.technique import DEFAULT_ORACLE_TOLERANCE

    tol = getattr(tech, "oracle_tolerance", None)
    return (DEFAULT_ORACLE_TOLERANCE, False) if tol is None else (float(tol), True)


def oracle_problem(tech: Any, result: Any, *, enforce_default: bool | None = None) -> str | None:
    """Why *result* disagrees with its oracle beyond the tolerance, or None.

    Parameters
    ----------
    tech : Technique
    result : Result
        Read: its ``oracle_error`` metric (absent: None).
    enforce_default : bool, optional
        Hold an undeclared tolerance to the default (default: from version 0.3.0).
    """
    m = result.metrics.get("oracle_error") if hasattr(result, "metrics") else None
    if m is None:
        return None
    tol, declared = oracle_limit(tech)
    if not declared:
        if enforce_default is None:
            from suite.deprecation import fails_now

            enforce_default = fails_now("oracle-agreement")
        if not enforce_default:
            return None
    if abs(m.value) > tol:
        src = "its declared oracle_tolerance" if declared else "the default oracle tolerance"
        return (f"oracle_error = {m.value:.3g} exceeds {src} {tol:g}: the execute result disagrees with its "
                f"oracle")
    return None
