"""The simulated clock of the data-parallel workers: compute time from FLOPs and peak (the
roofline's compute roof [Williams09]) and all-reduce time over the profile's network levels
(:func:`suite.perf.collective_time`, [Patarasuk09]); references in
:mod:`suite.collectives.dataparallel`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np

from suite.errors import ParameterError, ProfileError

if TYPE_CHECKING:  # pragma: no cover
    from suite.declaration.results import Scenario
    from suite.hardware import NetworkLevel, Profile
    from suite.workloads import LayerTable

__all__ = ['allreduce_seconds', 'compute_seconds', 'Clock', 'clock_for', 'ModelCase', 'model_case']


class ModelCase(NamedTuple):
    """What a data-parallel model fidelity prices: the model's layer table, the profile and the
    number of workers K."""

    workload: "LayerTable"
    profile: "Profile"
    workers: int


def model_case(scenario: "Scenario", example: str) -> ModelCase:
    """The layer table, the profile and the worker count K of a data-parallel model case, or the
    :class:`~suite.declaration.results.Skip` that says why the case cannot be priced.

    K is the ``workers`` parameter, or every device of the profile when it is None (or 0).

    Parameters
    ----------
    scenario : Scenario
        A resolved model-fidelity scenario with a ``workers`` parameter.
    example : str
        A layer table of the zoo the technique prices, named in the Skip's message
        (``"resnet-18-cifar"``).

    Raises
    ------
    Skip
        The workload is not a layer table, there is no profile, more workers than the profile
        has devices, or K > 1 workers and the profile has no network level.
    """
    from suite.declaration.results import Skip, require_devices
    from suite.workloads import LayerTable

    wl = scenario.workload
    if not isinstance(wl, LayerTable):
        raise Skip(f"{scenario.technique} model fidelity needs a model's layer table (e.g. {example}), "
                   f"got {type(wl).__name__ if wl is not None else None}")
    prof = scenario.profile
    if prof is None:
        raise Skip(f"{scenario.technique} model fidelity needs a hardware profile")
    workers = int(scenario.params["workers"] or prof.num_devices)
    if workers > 1 and not prof.network:
        raise Skip(f"profile {prof.name!r} has no network for {workers} workers")
    require_devices(prof, workers, "workers")  # placement would invent the nodes the profile does not have
    return ModelCase(wl, prof, workers)


def _levels(profile: "Profile") -> "tuple[NetworkLevel | None, NetworkLevel | None]":
    """(inner, outer) network levels of a profile; either may be None."""
    levels = list(profile.network)
    if not levels:
        return None, None
    if len(levels) >= 2:
        return levels[0], levels[-1]
    if profile.kind == "cluster":
        return (levels[0] if profile.devices_per_node > 1 else None), levels[0]
    return levels[0], None


def allreduce_seconds(profile: "Profile", nbytes: float, workers: int, algorithm: str = "ring") -> float:
    """Time of one all-reduce of *nbytes* over *workers* devices of *profile* (s).

    Workers fill nodes in order (``devices_per_node`` each, :func:`suite.perf.group_of`) and
    the all-reduce is priced by :func:`suite.perf.collective_time` over every level the group
    crosses: ``ring``, one flat ring through all workers (the alpha-beta ring at each level's full
    bandwidth, NCCL's ring algorithm without its efficiency; each step as slow as its slowest hop,
    the inter-node hops over the node's NICs) [Patarasuk09]; ``hierarchical``: reduce-scatter in
    the node, all-reduce of each shard across nodes, all-gather in the node. Both include the
    reduction term. ``auto``: the library's choice (``[communication] library``); under NCCL (a
    GPU profile's default) NCCL's tuner model, which prices every link at its ``efficiency``
    (undeclared: :data:`suite.perf.network.collective._LINK_EFFICIENCY` by link kind) and can be
    slower than the named ``ring``.

    Parameters
    ----------
    profile : Profile
    nbytes : float
        Message size m (B).
    workers : int
        p >= 1; 1 costs nothing.
    algorithm : {"ring", "hierarchical", "auto"}

    Raises
    ------
    ProfileError
        More than one worker but no network level that connects them.
    """
    from suite.perf import collective_time, group_of

    if workers <= 1 or nbytes <= 0:
        return 0.0
    if algorithm not in ("ring", "hierarchical", "auto"):
        raise ParameterError(f"all-reduce algorithm must be 'ring', 'hierarchical' or 'auto', got {algorithm!r}")
    inner, outer = _levels(profile)
    dpn = profile.devices_per_node
    if workers > dpn and outer is None:
        raise ProfileError(f"profile {profile.name!r}: {workers} workers need more than one node "
                           f"({dpn} devices per node) but the profile has no inter-node network level")
    if inner is None and outer is None:
        raise ProfileError(f"profile {profile.name!r}: {workers} workers but no [[network]] level")
    return collective_time("allreduce", nbytes, group_of(profile, workers), profile, algorithm).time


def compute_seconds(profile: "Profile", flops: float, efficiency: float, dtype: str = "fp32") -> float:
    """Compute time of *flops* FLOPs on the profile's device: ``F / (eff * peak[dtype])`` (s),
    the compute roof of the roofline [Williams09] (:func:`suite.perf.roofline_time` with no
    memory term: a training step of the models used here is compute-bound)."""
    from suite.perf import roofline_time

    dev = profile.require_device()
    return roofline_time(flops, 0.0, dev.flops(dtype), 1.0, efficiency)


@dataclass(frozen=True)
class Clock:
    """Simulated step and all-reduce times.

    Attributes
    ----------
    step : ndarray, shape (K,)
        Seconds one local step (forward + backward + update on its batch) takes on worker i.
    allreduce : float
        Seconds of one all-reduce of the model (or gradient) vector.
    """

    step: np.ndarray
    allreduce: float

    @property
    def slowest(self) -> float:
        return float(np.max(self.step))


def clock_for(profile: "Profile | None", flops_per_sample: float, nbytes: float, batches: Sequence[int],
              speeds: Sequence[float], efficiency: float = 0.5, dtype: str = "fp32",
              algorithm: str = "ring") -> Clock:
    """The :class:`Clock` of K workers: worker i's step takes
    ``b_i * s_i * flops_per_sample / (eff * peak)`` (s_i its relative time per sample, 1 = the
    profile's device) and one all-reduce of *nbytes* takes :func:`allreduce_seconds`.

    With ``profile=None`` the clock counts in units: a step of one sample on the fastest worker
    is 1e-3 s and an all-reduce 1e-3 s per worker hop (for runs without a profile).
    """
    b = np.asarray(batches, float)
    s = np.asarray(speeds, float)
    K = len(b)
    if profile is None:
        return Clock(step=b * s * 1e-3, allreduce=0.0 if K == 1 else 2e-3 * (K - 1))
    t_sample = compute_seconds(profile, flops_per_sample, efficiency, dtype)
    return Clock(step=b * s * t_sample, allreduce=allreduce_seconds(profile, nbytes, K, algorithm))
