"""Exceptions of dlsys-suite.

Every error a user can cause derives from :class:`SuiteError`; the CLI prints its message as
one line (no traceback unless ``--debug``) and exits non-zero. Messages name the file, the
field, what was expected and what was given.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "SuiteError",
    "ParameterError",
    "TechniqueError",
    "OracleMismatch",
    "PluginError",
    "ProfileError",
    "WorkloadError",
    "ExperimentError",
    "StoreError",
    "did_you_mean",
    "close_names",
]


class SuiteError(Exception):
    """Base class: a user-facing error with a one-line message."""


class ParameterError(SuiteError, ValueError):
    """A technique parameter, variant or scenario value is invalid."""


class TechniqueError(SuiteError):
    """A technique declaration is malformed (a plugin author's error)."""


class OracleMismatch(TechniqueError):
    """A technique's implementation disagrees with its independent oracle (a wrong result, not a
    malformed declaration).

    A subclass of :class:`TechniqueError` (which plugins raised for this before 0.3.0), so an
    ``except TechniqueError`` written for those keeps catching it. Raise it with one line naming
    the quantity, the oracle's value and the implementation's, e.g.
    ``OracleMismatch("ring allreduce: oracle 1.41 s, simulated 1.52 s (tolerance 1e-9)")``.
    """


class PluginError(SuiteError):
    """A plugin failed to load or conflicts with another (strict mode, duplicate names)."""


class ProfileError(SuiteError, ValueError):
    """A hardware profile is malformed: names file, field path, expected and given."""


class WorkloadError(SuiteError, LookupError):
    """An unknown or malformed workload."""


class ExperimentError(SuiteError, ValueError):
    """An experiment file or a sweep specification is malformed."""


class StoreError(SuiteError):
    """The results store cannot be opened, or a query names an unknown run."""


def close_names(given: str, allowed: Iterable[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
    """The names of *allowed* closest to *given*, best first (at most *n*; none may be close).

    Names are compared with case and punctuation removed, so ``vgg-19`` finds ``vgg19`` and
    ``RESNET_50`` finds ``resnet-50``: a name equal to *given* in that form wins, else difflib's
    ratio >= *cutoff* on those forms decides (0.85: one or two characters off in a short name).
    """
    def bare(s: str) -> str:
        return "".join(c for c in s.lower() if c.isalnum())

    by_bare: dict[str, list[str]] = {}
    for name in allowed:
        by_bare.setdefault(bare(name), []).append(name)
    key = bare(given)
    near = [key] if key in by_bare else difflib.get_close_matches(key, list(by_bare), n=n, cutoff=cutoff)
    return [name for k in near for name in by_bare[k]][:n]


def did_you_mean(given: str, allowed: Iterable[str]) -> str:
    """``"; did you mean 'NAME'?"`` for the closest of *allowed* (:func:`close_names`), or ``""``:
    the hint every "unknown name" message of the suite appends."""
    near = close_names(given, allowed, n=1)
    return f"; did you mean {near[0]!r}?" if near else ""
