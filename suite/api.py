"""The public plugin API: everything a dlsys-suite plugin may import, from one module.

A plugin (a built-in one under ``plugins/`` or a third-party distribution) imports from the suite
only this module (and :mod:`suite.testing` in its tests)::

    from suite.api import Technique, Variant, Paper, Param, Claim, Result, hookimpl

Every name in :data:`__all__` is documented, with its parameters, return value, errors and an
example, on one page: ``docs/plugin-api.md`` (a test keeps the page and this list equal). The
names come in eight groups:

* declaring a technique: :class:`Technique`, :class:`Variant`, :class:`Param`, :class:`Paper`,
  :class:`Claim` and its shapes, :class:`Null`, :class:`Property`, :class:`Assumption`;
* evaluating one: :class:`Scenario`, :class:`ScenarioSpec`, :class:`Result`, :class:`Skip`,
  :func:`require_devices`, :func:`require_dataset`, :func:`resolve_scale`, :func:`read_data`;
* the hooks: :data:`hookimpl` (the hooks themselves are in :mod:`suite.hookspecs`);
* errors: :class:`SuiteError` and the subclasses a plugin raises;
* hardware: :class:`Profile` and the unit types of profile fields and extension tables;
* workloads: layer tables, datasets and their builders;
* performance models and the simulated collectives the fidelities share;
* executors: what a ``suite_executor`` plugin builds on, :class:`CaseExecutor` and
  :class:`CaseOutcome`.

Importing this module is cheap: the declaration API (first four groups) is imported with it;
every other name is imported on first use (:pep:`562`), so a plugin's declaration module, which
``suite techniques`` imports, pulls in no cost model, no pydantic and no runner.

Importing other ``suite.*`` modules from a plugin is deprecated in 0.3.0 (the conformance kit
warns, naming ``suite.api``) and fails from 0.4.0.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from suite.declaration.loader import declare_technique
from suite.declaration.vocabulary import WORKERS_RESULT_MEANINGS
from suite.errors import OracleMismatch, ParameterError, ProfileError, SuiteError, TechniqueError, WorkloadError
from suite.declaration.hooks import lazy_hook
from suite.hookspecs import hookimpl
from suite.outcome import CaseExecutor, CaseOutcome
from suite.technique import (
    Approx,
    Assumption,
    AtLeast,
    AtMost,
    Between,
    Claim,
    Exact,
    Gain,
    Null,
    Ordered,
    Paper,
    Param,
    Property,
    Result,
    Scenario,
    ScenarioSpec,
    Skip,
    Technique,
    Variant,
    read_data,
    require_dataset,
    require_devices,
    resolve_scale,
    with_reasons,
)

if TYPE_CHECKING:  # pragma: no cover - what the lazy names below resolve to, for the type checker
    from suite.collectives import (Ledger, Message, allgather, allreduce, broadcast, ps_push_pull, recv,
                                   reduce_scatter, ring_allreduce, send)
    from suite.collectives.dataparallel import (Clock, FlatModel, ModelCase, Workers, allreduce_seconds, clock_for,
                                                compute_seconds, load_problem, model_case, proportional_batches,
                                                relative_speeds, reshard, virtual_node_split)
    from suite.execution import (DONE_STATUSES, Case, ExecOptions, Executor, crashed_outcome, pack, package_of,
                                 run_isolated, run_sandboxed, shippable)
    from suite.frozen import freeze
    from suite.hardware import NetworkLevel, Profile, mix_devices, parse_quantity
    from suite.hardware.extensions import ProfileExtension
    from suite.hardware.units import BandwidthQ, BytesQ, FrequencyQ, TimeQ, format_quantity
    from suite.perf import (Timeline, blas_threads, collector_paused, grouped_wfbp_timeline, layer_times, measurement_clock,
                            roofline_time, sequential_iteration_time, transfer_time, wfbp_timeline)
    from suite.perf.network import (Group, allreduce_fit, broadcast_time, collective_time, group_of, p2p_time,
                                    ps_push_pull_time, ring_allreduce_time)
    from suite.perf import training
    from suite.perf.pipeline import (partition_layers, pipeline_1f1b_schedule, pipeline_1f1b_unbalanced_time,
                                     split_microbatches, stage_sums)
    from suite.perf.sensitivity import check_network_sensitivity
    from suite.perf.training import CommPricer, Plans, TransformerShape, hardware_of, shape_of
    from suite.workloads import Dataset, Layer, LayerTable, Workload
    from suite.workloads.architectures import resnet
    from suite.workloads.cnn import CNNBuilder
    from suite.workloads.datasets import gaussian_mixture, load_sklearn, partition
    from suite.workloads.transformer import TransformerSpec, activation_memory, training_flops, transformer

__all__ = [
    # declaring and evaluating a technique (imported with this module)
    "Technique", "Variant", "Param", "Paper", "Claim", "Approx", "AtLeast", "AtMost", "Between", "Exact", "Gain",
    "Ordered", "Null", "Property", "Assumption", "with_reasons", "Scenario", "ScenarioSpec", "Result",
    "Skip", "require_devices", "require_dataset", "resolve_scale", "read_data", "declare_technique",
    # the hook marker, and a hook in one line
    "hookimpl", "lazy_hook",
    # errors a plugin raises
    "SuiteError", "ParameterError", "TechniqueError", "OracleMismatch", "ProfileError", "WorkloadError",
    # hardware: profiles, quantities, extension tables
    "Profile", "NetworkLevel", "parse_quantity", "mix_devices", "BandwidthQ", "BytesQ", "FrequencyQ", "TimeQ",
    "format_quantity", "ProfileExtension",
    # workloads
    "Workload", "Layer", "LayerTable", "Dataset", "CNNBuilder", "resnet", "TransformerSpec", "transformer",
    "activation_memory", "training_flops", "gaussian_mixture", "load_sklearn", "partition", "freeze",
    # performance models
    "Group", "group_of", "collective_time", "p2p_time", "broadcast_time", "ring_allreduce_time",
    "ps_push_pull_time", "allreduce_fit", "roofline_time", "transfer_time", "layer_times", "Timeline",
    "wfbp_timeline", "grouped_wfbp_timeline", "sequential_iteration_time", "blas_threads", "collector_paused", "measurement_clock",
    "partition_layers", "pipeline_1f1b_schedule", "pipeline_1f1b_unbalanced_time", "split_microbatches",
    "stage_sums", "training", "CommPricer", "Plans", "TransformerShape", "hardware_of", "shape_of",
    "check_network_sensitivity",
    # simulated collectives and data-parallel workers
    "Ledger", "Message", "send", "recv", "ring_allreduce", "allreduce", "allgather", "reduce_scatter", "broadcast",
    "ps_push_pull", "Workers", "WORKERS_RESULT_MEANINGS", "FlatModel", "Clock", "clock_for", "load_problem",
    "compute_seconds", "allreduce_seconds", "relative_speeds", "proportional_batches", "reshard", "virtual_node_split", "model_case",
    "ModelCase",
    # executors (the suite_executor hook)
    "Executor", "ExecOptions", "Case", "run_isolated", "crashed_outcome", "shippable", "DONE_STATUSES",
    "pack", "run_sandboxed", "package_of", "CaseOutcome", "CaseExecutor",
]

#: lazily imported name -> the module it comes from
_LAZY: dict[str, str] = {
    **dict.fromkeys('Profile NetworkLevel parse_quantity mix_devices'.split(), 'suite.hardware'),
    **dict.fromkeys('BandwidthQ BytesQ FrequencyQ TimeQ format_quantity'.split(), 'suite.hardware.units'),
    **dict.fromkeys('ProfileExtension'.split(), 'suite.hardware.extensions'),
    **dict.fromkeys('Workload Layer LayerTable Dataset'.split(), 'suite.workloads'),
    **dict.fromkeys('CNNBuilder'.split(), 'suite.workloads.cnn'),
    **dict.fromkeys('resnet'.split(), 'suite.workloads.architectures'),
    **dict.fromkeys('TransformerSpec transformer activation_memory training_flops'.split(),
                    'suite.workloads.transformer'),
    **dict.fromkeys('gaussian_mixture load_sklearn partition'.split(), 'suite.workloads.datasets'),
    **dict.fromkeys('freeze'.split(), 'suite.frozen'),
    **dict.fromkeys('Group group_of collective_time p2p_time broadcast_time ring_allreduce_time ps_push_pull_time '
                    'allreduce_fit'.split(), 'suite.perf.network'),
    **dict.fromkeys(('roofline_time transfer_time layer_times Timeline wfbp_timeline grouped_wfbp_timeline '
                     'sequential_iteration_time blas_threads collector_paused measurement_clock').split(), 'suite.perf'),
    **dict.fromkeys(('partition_layers pipeline_1f1b_schedule pipeline_1f1b_unbalanced_time split_microbatches '
                     'stage_sums').split(), 'suite.perf.pipeline'),
    **dict.fromkeys('training CommPricer Plans TransformerShape hardware_of shape_of'.split(), 'suite.perf.training'),
    **dict.fromkeys('check_network_sensitivity'.split(), 'suite.perf.sensitivity'),
    **dict.fromkeys(('Ledger Message send recv ring_allreduce allreduce allgather reduce_scatter broadcast '
                     'ps_push_pull').split(), 'suite.collectives'),
    **dict.fromkeys(('Workers FlatModel Clock clock_for load_problem compute_seconds allreduce_seconds '
                     'relative_speeds proportional_batches reshard virtual_node_split model_case ModelCase').split(),
                    'suite.collectives.dataparallel'),
    **dict.fromkeys(('Executor ExecOptions Case run_isolated crashed_outcome shippable DONE_STATUSES pack '
                     'run_sandboxed package_of').split(), 'suite.execution'),
}


#: the names that are modules themselves (not a name inside the module of :data:`_LAZY`)
_MODULES = frozenset({"training"})


def __getattr__(name: str) -> object:
    """Import a lazily exported name on first use (:pep:`562`) and keep it in the module."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'suite.api' has no attribute {name!r} (the plugin API is suite.api.__all__)")
    mod = importlib.import_module(module)
    value: object = mod if name in _MODULES else getattr(mod, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
