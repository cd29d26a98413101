"""HyScale-GNN's cost model: mini-batch GNN training time per stage on a hybrid CPU + accelerator node.

Pure functions from (graph sizes, hardware profile, parameters) to stage times, built from
:mod:`suite.perf` (roofline for compute, :func:`suite.perf.collective.collective_time` for every
transfer). Units are SI: seconds, bytes, B/s, FLOP/s. The paper's text beyond its abstract was
not read: the stage structure below is our reading of the abstract's "hybrid training",
"two-stage data pre-fetching" and "dynamic resource management" [Lin23, abstract].

Sizes of one mini-batch of ``b`` seeds (2 layers, fan-outs ``f1`` for the hop from the seeds,
``f2`` for the next; average degree ``k = 2E/N``; ``uniq(x) = N (1 - exp(-x/N))`` distinct nodes
among ``x`` uniform draws, the balls-in-bins expectation)::

    e2 = b min(f1, k)            edges of the seeds' block (layer 2)
    n1 = uniq(b + e2)            hop-1 frontier (seeds included)
    e1 = n1 min(f2, k)           edges of the input block (layer 1)
    n0 = uniq(n1 + e1)           input nodes whose features are gathered

Stages (one iteration; ``T`` host threads, ``R`` sampled edges/s per thread):

* **sample** ``(e1 + e2) / (t_s R)`` with ``R`` = :data:`SAMPLE_EDGES_PER_THREAD` (calibrated with
  this plugin's execute sampler per CPU-second, per technique);
* **gather** ``2 n0 d s_f / (eta_g BW_host t_g / T)``: read the feature rows, write the staging
  buffer (host-memory bound; ``eta_g`` = :data:`GATHER_EFFICIENCY` for random rows);
* **copy** features and block indices ``n0 d s_f + 8 (e1 + e2)`` over each accelerator's host
  link: ``latency + m / B_link`` (:func:`suite.perf.transfer_time`; a host copy is not a
  collective);
* **train** by roofline [Williams09] ``max(3 F / (eta peak), 3 M / BW)``: forward FLOPs
  ``F = 2 e1 d + 2 n1 (2d) h + 2 e2 h + 2 b (2h) c`` (GraphSAGE: self and neighbour matrices;
  GCN: ``2 n1 d h`` and ``2 b h c``), backward twice the forward (the usual 1:2 convention,
  [Narayanan21] §5.1), bytes ``M`` the features plus the gathered neighbour rows;
* **sync** the gradient all-reduce among the accelerators (``collective_time("allreduce",
  4 P, Group(n_acc, nodes))`` over the profile's levels) plus, when the CPU trains, the CPU's
  gradient to an accelerator and the average back over the host link (two ``p2p``).

Variants: ``multi-gpu`` adds sample + gather + copy + train + sync in series (PyG-style);
``cpu-only`` sample + gather + CPU train in series; ``prefetch`` runs the CPU stage (sample then
gather of batch i+2, all threads), the copy of i+1 and the training of i at once:
``max(S + G, P, A) + sync``; ``hyscale`` adds the CPU as a trainer with share ``beta`` of each
batch and searches (vectorised) ``beta`` and the thread split ``(t_s, t_g, t_c)``, with the
CPU stages either on separate threads (``max(S, G, C, P, A)``), sample + gather time-shared
(``max(S + G, C, P, A)``) or all three time-shared (``max(S + G + C, P, A)``), so ``prefetch``
(beta = 0) and ``cpu-only`` (beta = 1) lie in its space; ``distdgl`` partitions the graph over
the cluster's nodes, fetches ``(N-1)/N`` of the features from the other nodes
(``collective_time("alltoall", ...)`` over the outer level) and runs in series; ``ideal`` is the
bound of every stage hidden and every trainer's compute combined.

References
----------
.. [Lin23] Y.-C. Lin, V. Prasanna, "HyScale-GNN: A Scalable Hybrid GNN Training System on
   Single-Node Heterogeneous Architecture", arXiv 2303.00158, 2023 (abstract read).
.. [Williams09] S. Williams, A. Waterman, D. Patterson, "Roofline", CACM 52(4), 2009.
.. [Narayanan21] D. Narayanan et al., "Efficient Large-Scale Language Model Training on GPU
   Clusters Using Megatron-LM", SC 2021, §5.1 (backward = 2 x forward FLOPs).
.. [Zheng20] D. Zheng et al., "DistDGL: Distributed Graph Neural Network Training for
   Billion-Scale Graphs", IA3 2020 (partitioned graph, remote feature fetches).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from suite.api import Group, ParameterError, collective_time, roofline_time, transfer_time

from suite_hyscale_gnn.fanout import parse_fanout  # re-exported: its home before 0.3.1
from suite_hyscale_gnn.graphs import descriptor

__all__ = ["SAMPLE_EDGES_PER_THREAD", "GATHER_EFFICIENCY", "TRAIN_EFFICIENCY", "FPGA_FLOP_PER_DSP_CYCLE",
           "DEFAULT_HOST_CPU", "HOST_INPUT", "BETA_GRID", "Host", "Accel", "host_of", "accel_of", "parse_fanout",
           "batch_shape", "train_work", "StageModel", "stage_model", "search_hyscale", "iteration",
           "memory_need", "evaluate", "VARIANTS"]

VARIANTS = ("multi-gpu", "cpu-only", "prefetch", "hyscale", "distdgl", "ideal")

#: Sampled edges per second per host thread. Calibration (per technique): this plugin's execute
#: sampler (:func:`suite_hyscale_gnn.gnn.sample_neighbors`, Floyd's algorithm as one compiled numba
#: loop) on this machine's CPU, one thread, rmat-graph, 1,024 seeds, fan-out 10, per CPU-second (so
#: that waiting for a core on the shared machine does not dilute it): 241.7, 240.4 and 222.3 M
#: edges/s in three runs of ``python benchmarks/bench_hyscale.py`` (load average 1.95, 2.36, 2.34 on
#: 2 cores); we take the median, 240 M. (Earlier calibrations: 2.2 M, wall-clock, a sort-based
#: sampler on the loaded machine; 16 M, the vectorised-numpy Floyd sampler, 15.9, 15.9 and 18.3 M;
#: the compiled loop draws the same samples. See the docs page.) The paper's sampler is not known;
#: the docs show how the verdicts move with this constant.
SAMPLE_EDGES_PER_THREAD = 240e6
#: Achieved fraction of host memory bandwidth when gathering random feature rows of a few hundred
#: bytes (assumption: half of STREAM-like bandwidth for 400-B random rows; per technique).
GATHER_EFFICIENCY = 0.5
#: Achieved fraction of the fp32 peak in GNN training, per device type (assumptions, never per
#: claim): GPU 0.5 (small dense GEMMs plus sparse aggregation), CPU 0.3, FPGA 0.8 (a pipelined
#: systolic design keeps most DSPs busy).
TRAIN_EFFICIENCY = {"gpu": 0.5, "cpu": 0.3, "fpga": 0.8, "tpu": 0.5, "accelerator": 0.5, "wafer": 0.5}
#: fp32 FLOP per DSP slice per design-clock cycle on an FPGA (assumption: one fp32 multiply-add,
#: 2 FLOP, takes about 2 DSP48E2 slices in the vendor's floating-point operator; unverified).
FPGA_FLOP_PER_DSP_CYCLE = 1.0
#: The host CPU assumed when a profile names none (``node.cpu``): one socket of this profile.
DEFAULT_HOST_CPU = "amd-epyc-7763"
#: CPU shares the ``hyscale`` search tries (65 points in [0, 1]) besides the 1/t_i rule's.
BETA_GRID = np.linspace(0.0, 1.0, 65)
#: Bytes per gradient element (fp32 training).
GRAD_BYTES = 4.0


# --------------------------------------------------------------------------- hardware


@dataclass(frozen=True)
class Host:
    """The node's CPUs: ``sockets`` x one CPU device; totals in SI units."""

    sockets: int
    threads: int
    peak_flops: float
    memory_bandwidth: float
    memory: float | None
    cpu: str
    assumed: bool


@dataclass(frozen=True)
class Accel:
    """The node's accelerators (all alike): count, type, fp32 peak, memory bandwidth and capacity,
    host link bandwidth and latency."""

    count: int
    type: str
    peak_flops: float
    memory_bandwidth: float
    memory: float
    link_bandwidth: float
    link_latency: float


#: the input (``Technique.uses``) holding the assumed host: resolved by the runner, hashed into the key
HOST_INPUT = f"profile:{DEFAULT_HOST_CPU}"


def _fp32(dev) -> float:
    pf = dev.peak_flops
    for k in ("fp32", "tf32", "fp64"):
        if k in pf:
            return float(pf[k])
    return 0.0


def host_of(profile, assumed_cpu=None) -> Host:
    """The host of *profile*: ``node.cpu`` (x its count in ``[ext.mix]``, default 1 socket); a
    CPU device profile is its own host; otherwise one :data:`DEFAULT_HOST_CPU` socket
    (``assumed=True``): *assumed_cpu*, that device (``scenario.input(HOST_INPUT).device``).
    Threads = cores (no SMT); host memory = ``node.host_memory``.

    Raises
    ------
    ParameterError
        The host is assumed and *assumed_cpu* was not given."""
    dev = profile.require_device()
    node = profile.node
    if dev.type == "cpu":
        cpu, name, assumed = dev, dev.name or profile.name, False
        sockets = profile.devices_per_node
    else:
        # node.cpu is resolved by the library that loaded the profile (profile.cpu)
        assumed = profile.cpu is None
        name = DEFAULT_HOST_CPU if assumed else node.cpu
        if assumed and assumed_cpu is None:
            raise ParameterError(f"hyscale-gnn: profile {profile.name!r} names no node.cpu: expected the assumed host "
                                 f"{DEFAULT_HOST_CPU!r} given (scenario.input({HOST_INPUT!r})), got none")
        cpu = assumed_cpu if assumed else profile.cpu
        sockets = 1
        for g in profile.groups:
            if g.name == name:
                sockets = g.count
    memory = node.host_memory if node is not None and node.host_memory else None
    if dev.type == "cpu" and memory is None:
        memory = float(dev.memory) * sockets
    cores = int(cpu.cores or 1)
    return Host(sockets, sockets * cores, sockets * _fp32(cpu), sockets * float(cpu.memory_bandwidth), memory,
                name, assumed)


def accel_of(profile) -> Accel | None:
    """The accelerators of *profile* (None for a CPU-only profile). FPGA peak:
    ``dsp_slices x clock x`` :data:`FPGA_FLOP_PER_DSP_CYCLE` from ``[ext.fpga]``.

    Raises
    ------
    suite.Skip
        An accelerator without a host link, or an FPGA without ``[ext.fpga]`` dsp_slices and clock.
    """
    from suite.api import Skip

    dev = profile.require_device()
    if dev.type == "cpu":
        return None
    if dev.host_link is None:
        raise Skip(f"hyscale-gnn: profile {profile.name!r}: the accelerator has no device.host_link")
    if dev.type == "fpga":
        fp = (profile.ext or {}).get("fpga")
        if not fp or not fp.get("clock"):
            raise Skip(f"hyscale-gnn: profile {profile.name!r}: an FPGA needs [ext.fpga] dsp_slices and clock")
        peak = float(fp["dsp_slices"]) * float(fp["clock"]) * FPGA_FLOP_PER_DSP_CYCLE
    else:
        peak = _fp32(dev)
    if peak <= 0:
        raise Skip(f"hyscale-gnn: profile {profile.name!r}: the device has no fp32 peak")
    return Accel(profile.devices_per_node, dev.type, peak, float(dev.memory_bandwidth), float(dev.memory),
                 float(dev.host_link.bandwidth), float(dev.host_link.latency))


# --------------------------------------------------------------------------- sizes


def _uniq(x, n: float):
    return n * -np.expm1(-np.asarray(x, dtype=float) / n)


def batch_shape(b, desc: dict, fanout: tuple[int, int]) -> dict:
    """Expected sizes of a mini-batch of *b* seeds (scalar or array), see the module docstring."""
    n = float(desc["nodes"])
    k = 2.0 * float(desc["edges"]) / n
    b = np.asarray(b, dtype=float)
    e2 = b * min(fanout[0], k)
    n1 = np.maximum(_uniq(b + e2, n), b)
    e1 = n1 * min(fanout[1], k)
    n0 = np.maximum(_uniq(n1 + e1, n), n1)
    return {"b": b, "e2": e2, "n1": n1, "e1": e1, "n0": n0}


def train_work(shape: dict, desc: dict, hidden: int, gnn: str) -> tuple[np.ndarray, np.ndarray]:
    """(FLOPs, bytes) of forward + backward for a batch of *shape* (module docstring)."""
    d, c, h = float(desc["d"]), float(desc["classes"]), float(hidden)
    b, e2, n1, e1, n0 = shape["b"], shape["e2"], shape["n1"], shape["e1"], shape["n0"]
    if gnn == "graphsage":
        fwd = 2 * e1 * d + 2 * n1 * 2 * d * h + 2 * e2 * h + 2 * b * 2 * h * c
    else:
        fwd = 2 * e1 * d + 2 * n1 * d * h + 2 * e2 * h + 2 * b * h * c
    fb = float(desc["feature_bytes"])
    mem = n0 * d * fb + 4.0 * (e1 * d + e2 * h + n1 * h + b * c)
    return 3.0 * fwd, 3.0 * mem


def param_count(desc: dict, hidden: int, gnn: str) -> int:
    """Trainable parameters of the 2-layer model (weights and biases)."""
    d, c, h = int(desc["d"]), int(desc["classes"]), int(hidden)
    mats = 2 if gnn == "graphsage" else 1
    return mats * (d * h + h * c) + h + c


def memory_need(desc: dict) -> float:
    """Host bytes for the topology (CSR: 8-B row pointers, 4-B column indices of both directions)
    and the features."""
    return 8.0 * (desc["nodes"] + 1) + 4.0 * 2 * desc["edges"] + desc["nodes"] * desc["d"] * desc["feature_bytes"]


# --------------------------------------------------------------------------- transfers


def link_time(nbytes: float, acc: Accel) -> float:
    """One host <-> accelerator copy of *nbytes* over the accelerator's host link (s):
    ``latency + m / B_link`` (:func:`suite.perf.transfer_time`; the host is not a rank of any
    network level, so it is not a collective)."""
    if nbytes <= 0:
        return 0.0
    return transfer_time(float(nbytes), acc.link_bandwidth, acc.link_latency)


def _link_affine(acc: Accel) -> tuple[float, float]:
    """(alpha, s/B) of :func:`link_time`."""
    return acc.link_latency, 1.0 / acc.link_bandwidth


def sync_time(profile, acc: Accel | None, nodes: int, grad_bytes: float) -> float:
    """Gradient all-reduce among all accelerators (``collective_time`` over the profile's levels)."""
    if acc is None or acc.count * nodes <= 1 or not profile.network:
        return 0.0
    return collective_time("allreduce", grad_bytes, Group(ranks_per_node=acc.count, nodes=nodes), profile).time


# --------------------------------------------------------------------------- stages


@dataclass(frozen=True)
class StageModel:
    """Everything the variants combine: per-batch work and the hardware."""

    batch: int
    fanout: tuple[int, int]
    hidden: int
    gnn: str
    desc: dict
    host: Host
    acc: Accel | None
    threads: int
    sync_acc: float
    grad_bytes: float

    # -- stage times (vectorised over b and threads)
    def sample(self, b, t):
        s = batch_shape(b, self.desc, self.fanout)
        return (s["e1"] + s["e2"]) / (np.asarray(t, float) * SAMPLE_EDGES_PER_THREAD)

    def gather_bytes(self, b):
        s = batch_shape(b, self.desc, self.fanout)
        return 2.0 * s["n0"] * self.desc["d"] * self.desc["feature_bytes"]

    def gather(self, b, t):
        bw = GATHER_EFFICIENCY * self.host.memory_bandwidth * np.asarray(t, float) / self.host.threads
        return self.gather_bytes(b) / bw

    def copy_bytes(self, b):
        s = batch_shape(b, self.desc, self.fanout)
        return s["n0"] * self.desc["d"] * self.desc["feature_bytes"] + 8.0 * (s["e1"] + s["e2"])

    def copy(self, b):
        a, beta = _link_affine(self.acc)
        bb = np.asarray(self.copy_bytes(b), float)
        return np.where(bb > 0, a + beta * bb, 0.0)

    def _train(self, b, peak, bw, eff):
        s = batch_shape(b, self.desc, self.fanout)
        f, m = train_work(s, self.desc, self.hidden, self.gnn)
        return np.maximum(f / (eff * peak), m / bw)

    def acc_train(self, b):
        a = self.acc
        return self._train(b, a.peak_flops, a.memory_bandwidth, TRAIN_EFFICIENCY.get(a.type, 0.5))

    def cpu_train(self, b, t):
        frac = np.asarray(t, float) / self.host.threads
        with np.errstate(divide="ignore", invalid="ignore"):
            out = self._train(b, self.host.peak_flops * frac, self.host.memory_bandwidth * frac,
                              TRAIN_EFFICIENCY["cpu"])
        return np.where(np.asarray(b) > 0, out, 0.0)

    def sync_cpu(self) -> float:
        """CPU gradient to one accelerator and the averaged gradient back (two host-link copies)."""
        return 2.0 * link_time(self.grad_bytes, self.acc) if self.acc is not None else 0.0


def stage_model(profile, workload, params, nodes: int = 1, variant: str | None = None,
                assumed_cpu=None) -> StageModel:
    """Resolve hardware and sizes for one scenario (``cpu-only`` and the ``ideal`` bound price no gradient sync:
    there is nothing to synchronise).

    Raises
    ------
    suite.Skip
        Topology + features exceed host memory ("infeasible"), or the hardware lacks a figure.
    ParameterError
        A bad ``fanout`` or ``threads``.
    """
    from suite.api import Skip

    desc = descriptor(workload)
    fanout = parse_fanout(params["fanout"])
    host = host_of(profile, assumed_cpu)
    acc = accel_of(profile)
    need = memory_need(desc)
    if host.memory is not None and need * (1.0 / nodes) > host.memory:
        raise Skip(f"hyscale-gnn: infeasible: topology + features of {workload.name!r} need {need / 1e9:.1f} GB "
                   f"per {'node' if nodes == 1 else f'node of {nodes}'}, host memory is {host.memory / 1e9:.1f} GB")
    threads = params.get("threads") or host.threads
    if threads > host.threads:
        raise ParameterError(f"hyscale-gnn: parameter 'threads': expected <= {host.threads} (the host's cores), "
                             f"got {threads}")
    gb = GRAD_BYTES * param_count(desc, params["hidden"], params["gnn"])
    sync = 0.0 if variant in ("cpu-only", "ideal") else sync_time(profile, acc, nodes, gb)
    return StageModel(int(params["batch"]), fanout, int(params["hidden"]), params["gnn"], desc, host, acc,
                      int(threads), sync, gb)


def _compositions(t: int) -> np.ndarray:
    """Every (t_s, t_g, t_c) with t_s, t_g >= 1, t_c >= 0 and sum t: shape (K, 3)."""
    ts, tg = np.meshgrid(np.arange(1, t + 1), np.arange(1, t + 1), indexing="ij")
    ts, tg = ts.ravel(), tg.ravel()
    ok = ts + tg <= t
    ts, tg = ts[ok], tg[ok]
    return np.stack([ts, tg, t - ts - tg], axis=1)


@functools.lru_cache(maxsize=16)
def _thread_grid(T: int) -> tuple:
    """:func:`_compositions` of *T* with its columns as floats (K, 1) and their reciprocals
    (``1 / t_c`` is inf where no thread trains: infeasible unless the CPU has no share); cached
    per thread count, read-only."""
    comp = _compositions(T)
    ts, tg, tc = (comp[:, i:i + 1].astype(float) for i in range(3))
    with np.errstate(divide="ignore"):
        out = (comp, ts, tg, tc, 1.0 / ts, 1.0 / tg, 1.0 / tc)
    for x in out:
        x.setflags(write=False)
    return out


def rule_share(sm: StageModel) -> float:
    """The CPU's share by HyScale's balancing rule as we read it: ``b_i = B (1/t_i) / sum_j (1/t_j)``
    with ``t_i`` trainer i's per-sample time on the whole batch (accelerators: copy + train; CPU:
    train with all threads)."""
    if sm.acc is None:
        return 1.0
    B = sm.batch
    t_acc = float(sm.copy(B) + sm.acc_train(B)) / B
    t_cpu = float(sm.cpu_train(B, sm.threads)) / B
    inv = [1.0 / t_acc] * sm.acc.count + [1.0 / t_cpu]
    return inv[-1] / sum(inv)


def _separate_candidates(s1, g1, c1, T: int) -> np.ndarray:
    """The thread splits that can hold each share's least
    ``max(S, G, C)`` with the CPU stages on separate threads: for every ``t_s``, the two integer
    neighbours of the crossing ``t_g = R g / (g + c)``, ``R = T - t_s`` (``g / t_g`` falls and
    ``c / (R - t_g)`` rises in ``t_g``, so the integer optimum of their max is one of them).
    Returns ``t_s`` as floats, shape (T - 1, 1, 1), and ``t_g``, shape (T - 1, 2, M): every
    ``t_s`` in 1..T-1 and both neighbours, per share."""
    ts = np.arange(1, T, dtype=float)[:, None]  # (T-1, 1)
    R = T - ts
    with np.errstate(divide="ignore", invalid="ignore"):
        cross = R * g1[None, :] / (g1 + c1)[None, :]
    cross = np.where(np.isfinite(cross), cross, 1.0)  # g = c = 0: any split, take t_g = 1
    hi_tg = np.maximum(np.where(c1[None, :] > 0, R - 1, R), 1)  # a training thread when the CPU trains
    lo = np.clip(np.floor(cross), 1, hi_tg)
    hi = np.clip(np.ceil(cross), 1, hi_tg)
    return ts[:, :, None], np.stack([lo, hi], axis=1)


def _separate_exact(s1, g1, c1, ab, sync, T: int, its, itg, itc) -> tuple:
    """The brute force's answer for the separate-threads mode, ``(time, composition row, share)``
    -- the least ``max(max(S, G, C), P, A) + sync`` and the first point reaching it in the brute
    force's row-major (composition, share) order -- from the crossing candidates of every
    ``t_s`` (:func:`_separate_candidates`) plus one composition block (``t_s`` fixed) per
    winning share. The values are the brute force's own expressions, so equal floats compare
    equal."""
    tsv, tgv = _separate_candidates(s1, g1, c1, T)  # (T-1, 1, 1) and (T-1, 2, M) thread counts
    with np.errstate(divide="ignore"):  # the same reciprocals as the brute force's table
        sub = np.fmax(np.fmax(s1 * (1.0 / tsv), g1 * (1.0 / tgv)), c1 * (1.0 / (T - tsv - tgv)))
    v = (np.maximum(sub, ab) + sync).min(axis=1)  # (T-1, M): least per (t_s, share)
    t_col = v.min(axis=0)
    tstar = t_col.min()
    best = None
    for j in np.flatnonzero(t_col == tstar):
        k = int(np.flatnonzero(v[:, j] == tstar)[0])  # first t_s = k + 1 reaching it
        ts = k + 1
        base = (ts - 1) * T - (ts - 1) * ts // 2
        rows = np.arange(base, base + T - ts)  # t_g = 1..T - t_s
        blk = np.maximum(np.fmax(np.fmax(s1[j] * its[rows, 0], g1[j] * itg[rows, 0]), c1[j] * itc[rows, 0]),
                         ab[j]) + sync[j]
        i = int(rows[np.flatnonzero(blk == tstar)[0]])
        if best is None or i < best[1]:
            best = (blk[i - base], i, int(j))
    return best


def search_hyscale(sm: StageModel, cpu_share: float | None = None, full: bool = False) -> dict:
    """The ``hyscale`` configuration of least iteration time: CPU share beta (grid
    :data:`BETA_GRID` plus the rule's share, or the given one), thread split and CPU stage mode
    (module docstring), over every point of the space. Returns the best point's stage times,
    share, threads, mode and the number of points of the space (``points``).

    ``full=True`` evaluates every point at once (the rebalancer's brute force, K x M for the
    separate-threads mode). By default the separate-threads mode is solved exactly on a subset:
    per share, only the two integer neighbours of the G/C crossing for every ``t_s``
    (:func:`_separate_candidates`), then the full column of the share(s) reaching the least
    time, so the answer -- time, and the first point in the brute force's order among equal
    times -- is the brute force's (the tests compare the two)."""
    T = sm.threads
    betas = np.array([cpu_share]) if cpu_share is not None else np.unique(np.append(BETA_GRID, rule_share(sm)))
    if sm.acc is None:
        betas = np.array([1.0])
    b_cpu, b_acc, s1, g1, c1, p, a, sync = _per_share_work(sm, betas)
    comp, ts, tg, tc, its, itg, itc = _thread_grid(int(T))
    ab = np.maximum(p, a)
    # fmax skips the NaN of 0 * inf (no CPU share and no training thread: that stage is empty)
    with np.errstate(invalid="ignore"):
        if full:
            split = np.fmax(np.fmax(s1[None, :] * its, g1[None, :] * itg), c1[None, :] * itc)  # (K, M)
            t_split = np.maximum(split, ab[None, :]) + sync[None, :]
            i, j = np.unravel_index(np.argmin(t_split), t_split.shape)
            sep = (t_split[i, j], int(i), int(j))
        else:
            sep = _separate_exact(s1, g1, c1, ab, sync, T, its, itg, itc)
        # mode b: sample+gather time-shared on t_sg threads, train on T - t_sg
        tsg = np.arange(1, T + 1, dtype=float)[:, None]
        with np.errstate(divide="ignore"):
            itb = 1.0 / (T - tsg)
        shared2 = np.fmax((s1 + g1)[None, :] / tsg, c1[None, :] * itb)  # (T, M)
    shared3 = (s1 + g1 + c1) / T  # (M,)
    # iteration time per point: max(CPU stages, copy, accelerator training) + sync
    t_b = np.maximum(shared2, ab[None, :]) + sync[None, :]
    t_c = np.maximum(shared3, ab) + sync
    best = []
    t_sep, i, j = sep
    best.append((t_sep, "separate", j, (ts[i, 0], tg[i, 0], tc[i, 0])))
    i2, j2 = np.unravel_index(np.argmin(t_b), t_b.shape)
    best.append((t_b[i2, j2], "sample+gather shared", j2, (tsg[i2, 0], tsg[i2, 0], T - tsg[i2, 0])))
    j3 = int(np.argmin(t_c))
    best.append((t_c[j3], "all shared", j3, (T, T, T)))
    t, mode, j, thr = min(best, key=lambda x: x[0])
    points = comp.shape[0] * betas.size + t_b.size + t_c.size  # the space (every point covered)
    th = [float(x) for x in thr]
    S, G, C = _cpu_stage_times(mode, th, s1[j], g1[j], c1[j], T)
    return {"iteration_time": float(t), "mode": mode, "cpu_share": float(betas[j]), "b_cpu": float(b_cpu[j]),
            "b_acc": float(b_acc[j]), "threads": th, "t_sample": float(S), "t_gather": float(G),
            "t_train_cpu": float(C), "t_copy": float(p[j]), "t_train_acc": float(a[j]), "t_sync": float(sync[j]),
            "points": int(points), "rule_share": float(rule_share(sm))}


def _per_share_work(sm: StageModel, betas: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per CPU share beta: the CPU's and each accelerator's sub-batch, the per-thread work of the
    CPU stages (S1, G1, C1: the stage's time with one thread; stage time = work / threads), the
    copy and accelerator training times and the synchronisation. Every trainer samples its own
    sub-batch (the CPU's included); features are gathered for the accelerators' sub-batches (the
    CPU trainer reads its rows in place)."""
    B = sm.batch
    b_cpu = betas * B
    n_acc = sm.acc.count if sm.acc is not None else 0
    b_acc = (B - b_cpu) / max(n_acc, 1)
    s1 = sm.sample(b_cpu, 1.0) + n_acc * sm.sample(b_acc, 1.0)
    g1 = np.where(b_acc > 0, n_acc * sm.gather(b_acc, 1.0), 0.0)
    c1 = sm.cpu_train(b_cpu, 1.0)
    if sm.acc is not None:
        p = np.where(b_acc > 0, sm.copy(b_acc), 0.0)
        a = np.where(b_acc > 0, sm.acc_train(b_acc), 0.0)
    else:
        p = a = np.zeros_like(betas)
    sync = np.where(b_acc > 0, sm.sync_acc, 0.0) + np.where((b_cpu > 0) & (b_acc > 0), sm.sync_cpu(), 0.0)
    return b_cpu, b_acc, s1, g1, c1, p, a, sync


def _cpu_stage_times(mode: str, th: list[float], s1: float, g1: float, c1: float, T: int) -> tuple[float, float, float]:
    """Sample, gather and CPU-train stage times (s) of the chosen mode and thread split."""
    if mode == "separate":
        return s1 / th[0], g1 / th[1], (c1 / th[2] if c1 > 0 else 0.0)
    if mode == "sample+gather shared":
        return s1 / th[0], g1 / th[0], (c1 / th[2] if c1 > 0 else 0.0)
    return s1 / T, g1 / T, c1 / T


def iteration(variant: str, sm: StageModel, nodes: int = 1, profile=None, cpu_share: float | None = None) -> dict:
    """Stage times and iteration time (s) of one mini-batch for *variant* (module docstring)."""
    B, T = sm.batch, sm.threads
    if variant != "cpu-only" and sm.acc is None:
        from suite.api import Skip

        raise Skip(f"hyscale-gnn: variant {variant!r} needs accelerators; the profile is CPU-only")
    out = {"t_sample": 0.0, "t_gather": 0.0, "t_copy": 0.0, "t_train_acc": 0.0, "t_train_cpu": 0.0,
           "t_sync": 0.0, "t_remote": 0.0, "cpu_share": 0.0}
    if variant == "hyscale":
        return {**out, **search_hyscale(sm, cpu_share)}
    if variant == "cpu-only":
        s, g, c = float(sm.sample(B, T)), float(sm.gather(B, T)), float(sm.cpu_train(B, T))
        out.update(t_sample=s, t_gather=g, t_train_cpu=c, cpu_share=1.0, iteration_time=s + g + c)
        return out
    n = sm.acc.count
    if variant == "ideal":
        rate = n * B / float(sm.acc_train(B)) + B / float(sm.cpu_train(B, T))
        out.update(iteration_time=B / rate, t_train_acc=B / rate)
        return out
    if variant == "distdgl":
        per_acc = B / nodes / n
        s = n * float(sm.sample(per_acc, T))
        g = n * float(sm.gather(per_acc, T)) / nodes  # the local 1/N of the rows
        p, a = float(sm.copy(per_acc)), float(sm.acc_train(per_acc))
        remote = 0.0
        if nodes > 1:
            fb = float(sm.gather_bytes(per_acc)) / 2.0  # feature bytes of one sub-batch
            rb = n * fb * (nodes - 1) / nodes
            remote = collective_time("alltoall", rb, Group(ranks_per_node=1, nodes=nodes), profile).time
        out.update(t_sample=s, t_gather=g, t_remote=remote, t_copy=p, t_train_acc=a, t_sync=sm.sync_acc,
                   iteration_time=s + g + remote + p + a + sm.sync_acc)
        return out
    s, g = n * float(sm.sample(B / n, T)), n * float(sm.gather(B / n, T))  # one sub-batch per accelerator
    p, a = float(sm.copy(B / n)), float(sm.acc_train(B / n))
    out.update(t_sample=s, t_gather=g, t_copy=p, t_train_acc=a, t_sync=sm.sync_acc)
    if variant == "multi-gpu":
        out["iteration_time"] = s + g + p + a + sm.sync_acc
    elif variant == "prefetch":
        out["iteration_time"] = max(s + g, p, a) + sm.sync_acc
    else:  # pragma: no cover - validated by the technique
        raise ValueError(f"unknown variant {variant!r}")
    return out


_STAGES = ("t_sample", "t_gather", "t_remote", "t_copy", "t_train_acc", "t_train_cpu", "t_sync")


def evaluate(scenario):
    """Model fidelity: epoch time, throughput and stage times of one variant.

    Parameters
    ----------
    scenario : suite.Scenario
        ``profile`` a device / node / cluster profile (cluster: ``distdgl`` uses every node; the
        single-node variants use one), ``workload`` a graph workload (``hyscale-gnn-ogbn-products``,
        ...), ``params`` batch, fanout, hidden, gnn, threads, cpu_share.

    Returns
    -------
    suite.Result
        ``epoch_time`` (s), ``iteration_time`` (s), ``throughput`` (samples/s), ``iterations``,
        the stage times ``t_*`` (s), ``cpu_share``, ``search_points``; artifact ``config``.

    Raises
    ------
    suite.Skip
        Not a graph workload; infeasible (host memory); a variant that needs accelerators on a
        CPU-only profile.
    """
    from suite.api import Result, Skip

    wl = scenario.workload
    if wl is None or getattr(wl, "kind", None) != "graph":
        raise Skip("hyscale-gnn: needs a graph workload (e.g. hyscale-gnn-ogbn-products)")
    prof = scenario.profile
    prm = scenario.params
    nodes = prof.num_nodes if scenario.variant == "distdgl" else 1
    sm = stage_model(prof, wl, prm, nodes=nodes, variant=scenario.variant,
                     assumed_cpu=scenario.input(HOST_INPUT).device)
    it = iteration(scenario.variant, sm, nodes=nodes, profile=prof, cpu_share=prm.get("cpu_share"))
    desc = sm.desc
    iters = math.ceil(desc["train"] / sm.batch)
    t = it["iteration_time"]
    res = Result()
    res.add("epoch_time", iters * t, "s", "lower")
    res.add("iteration_time", t, "s", "lower")
    res.add("throughput", desc["train"] / (iters * t), "samples/s", "higher")
    res.add("iterations", iters, "1", "none")
    for k in _STAGES:
        res.add(k, it.get(k, 0.0), "s", "lower")
    res.add("cpu_share", it.get("cpu_share", 0.0), "1", "none")
    res.add("search_points", it.get("points", 0), "1", "none")
    res.artifacts["config"] = {
        "variant": scenario.variant, "mode": it.get("mode", "series" if scenario.variant in
                                                   ("multi-gpu", "cpu-only", "distdgl") else "pipelined"),
        "threads": it.get("threads"), "b_cpu": it.get("b_cpu"), "b_acc": it.get("b_acc"),
        "rule_share": it.get("rule_share"), "host": sm.host.cpu, "host_assumed": sm.host.assumed,
        "sockets": sm.host.sockets, "host_threads": sm.host.threads,
        "accelerators": sm.acc.count if sm.acc is not None else 0, "nodes": nodes,
        "batch_shape": {k: float(v) for k, v in batch_shape(sm.batch, desc, sm.fanout).items()},
        "grad_bytes": sm.grad_bytes,
    }
    return res
