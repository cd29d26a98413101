"""The plugin contract's fixed vocabularies (categories, fidelities, directions, capabilities,
the kit's default checks, metric vocabularies) and ``"package.module:attr"`` references.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

_REF = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")


def is_reference(value: Any) -> bool:
    """Whether *value* is a ``"package.module:attribute"`` reference (:func:`resolve_reference`)."""
    return isinstance(value, str) and _REF.fullmatch(value) is not None


def resolve_reference(ref: str, *, imported_only: bool = False) -> Any:
    """The object a ``"package.module:attribute"`` reference names, importing its module.

    Plugins declare what is expensive to import (a fidelity's evaluate function, a profile
    extension's pydantic schema) as references, so that listing what a plugin provides imports
    none of it. *imported_only*: import nothing; None when the module is not imported yet or
    has no such attribute (what the load guard compares a resolved fidelity with).

    Raises
    ------
    ValueError
        *ref* is not of that form.
    ImportError, AttributeError
        The module does not import or has no such attribute (not with *imported_only*).
    """
    import importlib
    import sys

    if not is_reference(ref):
        raise ValueError(f"expected a reference 'package.module:attribute', got {ref!r}")
    module, _, attr = ref.partition(":")
    obj: Any = sys.modules.get(module) if imported_only else importlib.import_module(module)
    for part in attr.split("."):
        obj = getattr(obj, part, None) if imported_only else getattr(obj, part)
    return obj


def unwrap_partial(f: Any) -> Any:
    """The callable that *f* runs: ``f.func`` of a ``functools.partial`` (nested ones peeled off
    too), *f* itself otherwise. Its ``__module__`` is the one that defines the code (a partial's
    own says ``functools``): what the case and judgement keys hash."""
    import functools

    while isinstance(f, functools.partial):
        f = f.func
    return f


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
KIT_OPT_OUTS = ("network-sensitivity", "oracle-agreement", "units", "meanings")

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

    ``meanings`` maps each of those metrics to what it measures (what it is over, at which scale),
    the definition a technique's value must follow to stand on one axis with the others' (the kit
    cannot check it; ``suite info`` and docs/plugin-authors.md show it). A metric of a paper's
    that means something else is reported under its own name.

    Raises
    ------
    ValueError
        ``meanings`` does not name exactly the metrics of ``metrics``.
    """

    name: str
    category: str
    description: str
    metrics: Mapping[str, tuple[str, str]]
    meanings: Mapping[str, str]

    def __post_init__(self) -> None:
        if set(self.meanings) != set(self.metrics):
            raise ValueError(f"vocabulary {self.name!r}: meanings must name exactly its metrics "
                             f"{sorted(self.metrics)}, got {sorted(self.meanings)}")
        # read-only, even to dict.__setitem__: a plugin that wrote `VOCABULARIES["data-parallel"]
        # .meanings["speedup"] = ...` at import changed what `suite info` says every built-in's
        # speed-up means (and its direction); a vocabulary is named by a technique, never pickled
        object.__setattr__(self, "metrics", MappingProxyType(dict(self.metrics)))
        object.__setattr__(self, "meanings", MappingProxyType(dict(self.meanings)))


@dataclass(frozen=True)
class MetricMeaning:
    """What one metric a technique reports means, as ``suite info`` prints it.

    ``unit`` and ``direction`` are the ones the technique's results give the metric (a pint unit
    string, ``"1"`` for a ratio; one of :data:`DIRECTIONS`); ``meaning`` is one line saying what it
    measures, and for a ratio its baseline: over what, at which scale (``"S-SGD's time to target
    over this variant's, same workers"``).

    Raises
    ------
    ValueError
        An empty unit or meaning, a meaning of more than one line, or a direction not in
        :data:`DIRECTIONS` (the message names the field, what was expected and given).
    """

    unit: str
    direction: str
    meaning: str

    def __post_init__(self) -> None:
        for name in ("unit", "meaning"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip() or "\n" in value:
                raise ValueError(f"{name}: expected one non-empty line of text, got {value!r}")
        if self.direction not in DIRECTIONS:
            raise ValueError(f"direction: expected one of {list(DIRECTIONS)}, got {self.direction!r}")


_ITERATION_TIME = ("seconds of one synchronous training step at the scenario's scale: forward, backward and "
                   "whatever of the gradient exchange is not hidden")

#: The shared metric vocabularies, by name. A technique speaks one by declaring
#: ``vocabulary="NAME"``; one that declares none keeps working and is compared on whatever
#: metrics it shares with the others.
VOCABULARIES: dict[str, Vocabulary] = {
    "data-parallel": Vocabulary(
        "data-parallel", "communication",
        "data-parallel training step: gradients exchanged every iteration",
        {"iteration_time": ("s", "lower"), "throughput": ("samples/s", "higher"), "speedup": ("1", "higher"),
         "comm_time": ("s", "lower"), "exposed_comm": ("s", "lower")},
        {"iteration_time": _ITERATION_TIME,
         "throughput": "samples per second of all N devices together (the global batch over iteration_time)",
         "speedup": "aggregate throughput at N devices over one device's at the same per-device batch "
                    "(one device: no communication; ideal N, the GPU count, whatever the technique's scale unit)",
         "comm_time": "seconds of gradient communication in one step, hidden behind compute or not",
         "exposed_comm": "the part of comm_time not hidden behind compute (what it adds to iteration_time)"}),
    "memory": Vocabulary(
        "memory", "memory", "training under a device-memory budget",
        {"peak_memory": ("B", "lower"), "iteration_time": ("s", "lower")},
        {"peak_memory": "the most bytes one device holds at any moment of a training step",
         "iteration_time": _ITERATION_TIME}),
}


#: What each metric ``suite.api.Workers.result()`` reports means (unit, direction, meaning), here
#: and not beside the helper so that a technique including it (``include =
#: ["suite.api:WORKERS_RESULT_MEANINGS"]``, resolved when the technique is built) imports no
#: numpy nor the helper; ``Workers.RESULT_MEANINGS`` is the same mapping.
WORKERS_RESULT_MEANINGS: Mapping[str, MetricMeaning] = MappingProxyType({
    "final_loss": MetricMeaning("1", "lower", "training loss (whole training set) of the workers' batch-weighted "
                                "average model after the run"),
    "final_accuracy": MetricMeaning("1", "higher", "test-set accuracy (fraction correct) of the workers' "
                                    "batch-weighted average model after the run"),
    "allreduces": MetricMeaning("1", "lower", "all-reduce calls within the run (not to a target)"),
    "grad_evals": MetricMeaning("1", "none", "gradient evaluations within the run, all workers: one per worker "
                                "per local step (one per non-empty micro-batch; none for a dummy batch)"),
    "sim_time": MetricMeaning("s", "lower", "simulated seconds the run took on the clock of the scenario's "
                              "profile (compute and all-reduce times the variant advances it by)"),
    "bytes_sent": MetricMeaning("B", "lower", "bytes all workers sent in the run's all-reduces (the ledger's "
                                "messages, each counted once)"),
    "bytes_received": MetricMeaning("B", "lower", "bytes all workers received in the run's all-reduces (the "
                                    "ledger; equals bytes_sent)"),
})
