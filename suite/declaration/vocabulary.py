"""The plugin contract's fixed vocabularies (categories, fidelities, directions, capabilities,
the kit's default checks, metric vocabularies) and ``"package.module:attr"`` references.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

_REF = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")


def is_reference(value: Any) -> bool:
    """Whether *value* is a ``"package.module:attribute"`` reference (:func:`resolve_reference`)."""
    return isinstance(value, str) and _REF.fullmatch(value) is not None


def resolve_reference(ref: str) -> Any:
    """The object a ``"package.module:attribute"`` reference names, importing its module.

    Plugins declare what is expensive to import (a fidelity's evaluate function, a profile
    extension's pydantic schema) as references, so that listing what a plugin provides imports
    none of it.

    Raises
    ------
    ValueError
        *ref* is not of that form.
    ImportError, AttributeError
        The module does not import or has no such attribute.
    """
    import importlib

    if not is_reference(ref):
        raise ValueError(f"expected a reference 'package.module:attribute', got {ref!r}")
    module, _, attr = ref.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part)
    return obj


CATEGORIES = (
    "communication",
    "memory",
    "fault-tolerance",
    "sgd",
    "kernels",
    "accelerators",
    "cluster-design",
    "data-systems",
)
FIDELITIES = ("model", "simulate", "execute")
DIRECTIONS = ("lower", "higher", "none")
#: Default checks of the conformance kit a technique may opt out of (``kit_opt_out``, with a reason)
KIT_OPT_OUTS = ("network-sensitivity", "oracle-agreement", "units")

#: ``oracle_error`` accepted when a technique declares no ``oracle_tolerance``
DEFAULT_ORACLE_TOLERANCE = 1e-8

#: Family checks of the conformance kit a technique may declare in ``capabilities``
#: (suite/testing/check.py, FAMILY_CHECKS); any other name is an error, never a skipped check.
CAPABILITIES = ("bytes-conserved", "alpha-beta-bound", "memory-capacity", "offload-balanced",
                "recovery-exact", "sgd-envelope", "oracle-exact", "network-sensitivity")


@dataclass(frozen=True)
class Vocabulary:
    """A metric vocabulary the techniques of one category share, so that they can be compared
    head to head (``suite run --category C``, ``suite report``).

    ``metrics`` maps each required metric to ``(unit, direction)``: the unit is the one a
    technique must report it in (bytes in ``B``, times in ``s``; tables scale for display only),
    the direction which way is better. The conformance kit checks that a technique declaring the
    vocabulary reports every one of them, in that unit, with that direction.
    """

    name: str
    category: str
    description: str
    metrics: Mapping[str, tuple[str, str]]


#: The shared metric vocabularies, by name. A technique speaks one by declaring
#: ``vocabulary="NAME"``; one that declares none keeps working and is compared on whatever
#: metrics it shares with the others.
VOCABULARIES: dict[str, Vocabulary] = {
    "data-parallel": Vocabulary(
        "data-parallel", "communication",
        "data-parallel training step: gradients exchanged every iteration",
        {"iteration_time": ("s", "lower"), "throughput": ("samples/s", "higher"), "speedup": ("1", "higher"),
         "comm_time": ("s", "lower"), "exposed_comm": ("s", "lower")}),
    "memory": Vocabulary(
        "memory", "memory", "training under a device-memory budget",
        {"peak_memory": ("B", "lower"), "iteration_time": ("s", "lower")}),
}
