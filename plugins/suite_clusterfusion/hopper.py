"""The ``[ext.hopper]`` profile table: what ClusterFusion reads about a Hopper-class GPU beyond the core schema.

Thread-block clusters and distributed shared memory (DSMEM) are Hopper features (CUDA compute
capability 9.0): the blocks of one cluster read and write each other's shared memory over the
SM-to-SM network. The table carries the figures the cost model needs; every figure needs a source
in the profile's ``[sources]`` (``"ext.hopper.dsmem_bandwidth" = "..."``).

Fields (SI units after loading)
-------------------------------
dsmem_bandwidth : B/s
    Aggregate DSMEM bandwidth of the whole GPU (all SMs together).
dsmem_latency_cluster, dsmem_latency_cycles : lists of equal length
    SM-to-SM DSMEM latency in SM clock cycles, measured at the listed cluster sizes
    (ascending); other sizes are interpolated linearly in log2(cluster size) and held constant
    beyond the ends (:func:`dsmem_latency_cycles`).
global_latency_cycles : float
    Latency of the same block-to-block exchange through global memory (the DSMEM-off path).
max_cluster_size, max_cluster_size_nonportable : int
    The portable cluster-size limit and the limit with
    ``cudaFuncAttributeNonPortableClusterSizeAllowed``.
sm_clock : Hz
    SM clock used to turn cycles into seconds.
hbm_efficiency : float in (0, 1], optional
    Achieved fraction of the datasheet memory bandwidth (a measured copy rate over the peak);
    the model reads HBM at ``hbm_efficiency x device.memory_bandwidth`` (1 when absent).
kernel_gap : s, optional
    GPU-side gap between two consecutive kernels of a decode step (launch and drain), charged
    once per kernel.
"""

from __future__ import annotations

import math

from suite_clusterfusion.extension import HopperExt  # re-exported: the schema moved to extension.py

__all__ = ["HopperExt", "dsmem_latency_cycles", "hopper_of"]


def dsmem_latency_cycles(hopper: dict, cluster: int) -> float:
    """SM-to-SM DSMEM latency (cycles) at *cluster* blocks, from the measured points of ``[ext.hopper]``.

    Linear interpolation in ``log2(cluster)`` between the measured sizes, constant beyond the ends
    (e.g. 190 / 200 / 280 cycles at 2 / 4 / 16 give 240 at 8).

    Parameters
    ----------
    hopper : dict
        The resolved ``profile.ext["hopper"]`` table.
    cluster : int
        Blocks per cluster, >= 1.

    Returns
    -------
    float
        Cycles.
    """
    xs = [math.log2(c) for c in hopper["dsmem_latency_cluster"]]
    ys = [float(v) for v in hopper["dsmem_latency_cycles"]]
    x = math.log2(max(1, int(cluster)))
    if x <= xs[0]:
        return ys[0]
    if x >= xs[-1]:
        return ys[-1]
    for (x0, y0), (x1, y1) in zip(zip(xs, ys), zip(xs[1:], ys[1:])):
        if x0 <= x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return ys[-1]  # pragma: no cover - unreachable


def hopper_of(profile) -> dict | None:
    """The profile's ``[ext.hopper]`` table (a dict, SI units) or None when it has none."""
    ext = getattr(profile, "ext", None) or {}
    return ext.get("hopper")
