"""Semantic versioning of the plugin contract: a check or rule that tightens warns for one minor
version before it fails.

A new default check of the conformance kit (and the runner's rules that go with it) names the
version from which it fails (:data:`FAILS_FROM`); before that version its failure is reported as
a :class:`KitWarning` and the check passes. The project's changelog lists each one.
"""

from __future__ import annotations

__all__ = ["KitWarning", "FAILS_FROM", "fails_now", "version_tuple", "show_removals"]


class KitWarning(FutureWarning):
    """A default check that will fail from the next minor version found a problem: fix it, or opt
    out of the check with a written reason (``Technique.kit_opt_out``)."""


#: rule -> the first version in which it fails instead of warning (introduced in 0.2.0)
FAILS_FROM = {
    "network-sensitivity": "0.3.0",
    "oracle-agreement": "0.3.0",
    "units": "0.3.0",
    # a plugin whose load leaves a thread running (suite.registry): watched and noted until then
    "thread-at-load": "0.4.0",
    # a declared metric meaning whose unit or direction the results contradict (a default check of 0.3.10)
    "meanings": "0.4.0",
    # a claim's assumption with no value, a NaN value or flip_at, or a name given twice (a check of 0.3.13)
    "claims-assumptions": "0.4.0",
}


def version_tuple(text: str) -> tuple[int, ...]:
    """``"0.2.0"`` -> ``(0, 2, 0)`` (a pre-release or local suffix is ignored)."""
    out = []
    for part in text.split(".")[:3]:
        digits = "".join(ch for ch in part if ch.isdigit()) if not part.isdigit() else part
        out.append(int(digits or 0))
    return tuple(out)


def fails_now(rule: str, version: str | None = None) -> bool:
    """Whether *rule* (a key of :data:`FAILS_FROM`) fails at *version* (default: this suite's)."""
    if version is None:
        from suite._version import __version__

        version = __version__
    return version_tuple(version) >= version_tuple(FAILS_FROM[rule])


#: the messages of the suite's own deprecations that end in a removal (each names the version)
_REMOVAL = r".*(dlsys-suite 0\.4\.0|removed in 0\.4\.0)"


def show_removals() -> None:
    """Show each of the suite's own deprecation warnings that announce a removal, once per place in
    the code that triggers it. Python hides ``DeprecationWarning`` outside ``__main__``, so a plugin
    that still calls a global lookup (``suite.hardware.get_profile``, which ignores ``--set`` and the
    plugins' own profiles) would otherwise be told only by the conformance kit. The ``suite`` command
    calls this at start-up; pool workers inherit the filter."""
    import warnings

    warnings.filterwarnings("default", category=DeprecationWarning, message=_REMOVAL)
