"""VirtualFlow's elasticity: weighted fair sharing (WFS) against a static priority scheduler,
replayed over the authors' 20-job trace with simpy.

What is re-implemented (from the authors' code, read, not copied)
----------------------------------------------------------------
* The trace ``deploy/scheduler_traces/medium20_8jph.json`` of ``andrewor14/models`` (commit
  07a6669): 20 jobs (13 BERT GLUE fine-tunings, 3 Transformer, 4 ResNet), each with an arrival
  time (s), a priority (1, 5 or 10), a GPU demand, a global batch, epochs or steps and, for some,
  ``num_virtual_nodes_per_device``. :data:`MEDIUM20_8JPH` holds these facts.
* ``deploy/run_medium20_elasticity_experiment.sh`` replays it on one host with 8 GPUs under the
  ``WFS`` and ``Priority`` schedulers with ``GPU_RELEASE_WAIT_SECONDS = 10``.
* ``deploy/scheduler.py`` (weighted fair shares, :func:`wfs_allocations`): each round, every
  unallocated job's share is ``free x priority / sum(priority)``, at least 1, rounded down to a
  power of two; while the shares exceed the free GPUs, the lowest-priority shares are halved;
  jobs whose share covers their demand get the demand and leave the round; when none does, every
  job gets its share. GPUs left over are filled by doubling allocations in descending priority
  order without exceeding a demand. A queued job (queue in descending priority) is admitted only
  if it lowers no allocation of a running job of higher priority.

What is ours
------------
* ``Priority`` (the static baseline): the scheduler's code for this mode was not in the stored
  versions read; we take it as the non-elastic policy the name suggests: a job runs on exactly
  its demand, jobs start in descending priority (arrival order within a priority), and the head
  of the queue waits for its GPUs (no backfilling, no resize).
* A job's length: steps (``num_steps``, or ``epochs x ceil(N / batch)`` with N the training
  set: GLUE [Wang18] CoLA 8,551, SST-2 67,349, MRPC 3,668; CIFAR-10 50,000 [Krizhevsky09];
  ImageNet-1k 1,281,167 [Russakovsky15]) times the model's step time on the allocation
  (the ``virtual`` variant of :func:`suite_virtualflow.model.step_model`):
  ``(V / g) t(B / V) + T_AR(M, g)`` with ``V = demand x vn_per_device`` fixed, so the job's
  semantics never change with g. Workload tables: BERT-base at 128 tokens for GLUE (our
  assumption: BERT's GLUE default sequence length), ``transformer-base`` with 256 tokens per
  sequence (batches are in tokens), ``resnet-50`` for ImageNet and ``resnet-18-cifar`` for
  CIFAR-10 (the authors' CIFAR ResNet depth was not read).
* A resize costs the 10 s GPU-release wait; a job started in a round where another job shrinks
  waits the same 10 s for the released GPUs.

References
----------
.. [Or22] A. Or, H. Zhang, M. J. Freedman, VirtualFlow, MLSys 2022 (abstract: "up to 48% lower
   job completion times with resource elasticity"); ``andrewor14/models`` at 07a6669.
.. [Wang18] A. Wang et al., "GLUE: A Multi-Task Benchmark and Analysis Platform for Natural
   Language Understanding", 2018, Table 1 (train sizes 8.5k, 67k, 3.7k).
.. [Krizhevsky09] A. Krizhevsky, "Learning Multiple Layers of Features from Tiny Images", 2009.
.. [Russakovsky15] O. Russakovsky et al., "ImageNet Large Scale Visual Recognition Challenge",
   IJCV 2015 (ILSVRC-2012: 1,281,167 training images).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from suite.api import Workload
from suite_virtualflow.constants import GPU_RELEASE_WAIT, TRACE_NAME

__all__ = [
    "TraceJob",
    "TraceWorkload",
    "MEDIUM20_8JPH",
    "TRACE",
    "DATASET_SIZES",
    "GPU_RELEASE_WAIT",
    "wfs_allocations",
    "job_steps",
    "job_workload",
    "step_time_table",
    "TRACE_INPUTS",
    "replay",
    "Replay",
    "evaluate",
]

# GPU_RELEASE_WAIT (``GPU_RELEASE_WAIT_SECONDS`` of the authors' run_medium20_elasticity_experiment.sh)
# and TRACE's name are defined in suite_virtualflow.constants, so the declaration reads them
# without this module.

#: Training-set sizes (samples) [Wang18, Krizhevsky09, Russakovsky15].
DATASET_SIZES = {"CoLA": 8551, "SST-2": 67349, "MRPC": 3668, "cifar10": 50000, "imagenet": 1281167}

#: Tokens per Transformer sequence (our assumption; the trace's Transformer batches are tokens).
TRANSFORMER_SEQ = 256


@dataclass(frozen=True)
class TraceJob:
    """One job of a trace (the authors' JSON fields)."""

    arrival: float  # s
    workload: str  # "bert", "transformer", "resnet"
    priority: int
    demand: int  # GPUs
    batch: int  # global batch (samples; tokens for the transformer)
    epochs: int | None = None
    steps: int | None = None
    vn_per_device: int = 1  # num_virtual_nodes_per_device (default 1)
    data: str = ""  # GLUE task or dataset

    @property
    def virtual_nodes(self) -> int:
        return self.demand * self.vn_per_device


@dataclass(frozen=True)
class TraceWorkload(Workload):
    """A job trace as a workload (kind ``trace``)."""

    jobs: tuple[TraceJob, ...] = ()
    gpus: int = 8


def _b(t, pr, g, b, ep, task, vn=1):
    return TraceJob(t, "bert", pr, g, b, epochs=ep, vn_per_device=vn, data=task)


#: The 20 jobs of medium20_8jph.json (andrewor14/models @ 07a6669), in file order.
MEDIUM20_8JPH: tuple[TraceJob, ...] = (
    _b(1, 1, 1, 4, 1, "SST-2"),
    _b(363, 1, 8, 32, 20, "CoLA"),
    TraceJob(827, "transformer", 5, 4, 8192, steps=4000, vn_per_device=2),
    TraceJob(1123, "resnet", 10, 1, 128, epochs=20, data="cifar10"),
    _b(1352, 10, 1, 4, 10, "MRPC"),
    _b(1877, 10, 1, 8, 1, "SST-2", 2),
    _b(2781, 10, 8, 64, 20, "MRPC", 2),
    _b(3248, 1, 8, 64, 20, "MRPC", 2),
    _b(3315, 10, 2, 16, 1, "SST-2", 2),
    _b(3340, 10, 2, 8, 1, "SST-2"),
    _b(3680, 1, 4, 32, 20, "MRPC", 2),
    TraceJob(3724, "resnet", 5, 1, 64, epochs=10, data="cifar10"),
    _b(3829, 1, 2, 8, 1, "SST-2"),
    TraceJob(3867, "transformer", 10, 8, 2048, steps=4000),
    TraceJob(4261, "resnet", 10, 1, 128, epochs=1, data="imagenet"),
    _b(4517, 1, 8, 64, 20, "CoLA", 2),
    TraceJob(4524, "resnet", 10, 4, 256, epochs=3, vn_per_device=2, data="imagenet"),
    TraceJob(4805, "transformer", 5, 4, 4096, steps=4000),
    _b(5576, 10, 1, 4, 1, "SST-2"),
    _b(6505, 1, 2, 16, 10, "CoLA", 2),
)

TRACE = TraceWorkload(
    name=TRACE_NAME, kind="trace",
    source="andrewor14/models @ 07a6669, deploy/scheduler_traces/medium20_8jph.json (VirtualFlow, Or et al. MLSys 2022)",
    description="20 jobs (13 BERT GLUE, 3 Transformer, 4 ResNet) arriving over 6505 s at ~8 jobs/hour, "
                "replayed on 8 GPUs (run_medium20_elasticity_experiment.sh)",
    jobs=MEDIUM20_8JPH, gpus=8)


# --------------------------------------------------------------------------- weighted fair sharing


def _pow2_floor(x: float) -> int:
    return 1 << int(math.floor(math.log2(x))) if x >= 1 else 1


def wfs_allocations(jobs: Sequence[tuple[object, int, int]], gpus: int) -> dict:
    """Weighted fair shares in powers of two (the authors' ``get_weighted_fair_shares``).

    Parameters
    ----------
    jobs : sequence of (key, priority, demand)
        Priorities > 0, demands >= 1.
    gpus : int
        GPUs in the cluster.

    Returns
    -------
    dict
        key -> GPUs; every value a power of two in ``[1, demand]``, their sum <= gpus.

    Raises
    ------
    ValueError
        More jobs than GPUs (every job needs one).
    """
    if len(jobs) > gpus:
        raise ValueError(f"cannot give {len(jobs)} jobs a GPU each with {gpus} GPUs")
    alloc: dict = {}
    left = list(jobs)
    free = gpus
    while left:
        psum = sum(p for _, p, _ in left)
        share = {k: _pow2_floor(max(1.0, free * p / psum)) for k, p, _ in left}
        by_prio = sorted(left, key=lambda j: j[1])
        i = 0
        while sum(share.values()) > free and i < len(by_prio):
            k = by_prio[i][0]
            if share[k] > 1:
                share[k] //= 2
            else:
                i += 1
        done = [j for j in left if share[j[0]] >= j[2]]
        if done:
            for k, _, d in done:
                alloc[k] = d
                free -= d
            left = [j for j in left if share[j[0]] < j[2]]
        else:
            for k, _, _ in left:
                alloc[k] = share[k]
                free -= share[k]
            left = []
    if free > 0:  # double allocations, highest priority first, within demand
        for k, _, d in sorted(jobs, key=lambda j: -j[1]):
            a = alloc[k]
            while free >= a and d >= 2 * a:
                free -= a
                a *= 2
            alloc[k] = a
    return alloc


# --------------------------------------------------------------------------- job lengths


def job_steps(job: TraceJob) -> int:
    """Steps of a job: ``num_steps``, or ``epochs x ceil(N / batch)`` (:data:`DATASET_SIZES`)."""
    if job.steps is not None:
        return int(job.steps)
    n = DATASET_SIZES[job.data]
    return int(job.epochs) * -(-n // job.batch)


#: the zoo workloads :func:`job_workload` names (``Technique.uses``: resolved by the runner)
TRACE_INPUTS = ("workload:bert-base@seq128", "workload:transformer-base", "workload:resnet-50",
                "workload:resnet-18-cifar")


def job_workload(job: TraceJob) -> tuple[str, int]:
    """(zoo workload name, global batch in samples) of a trace job."""
    if job.workload == "bert":
        return "bert-base@seq128", job.batch
    if job.workload == "transformer":
        return "transformer-base", job.batch // TRANSFORMER_SEQ
    if job.workload == "resnet":
        return ("resnet-50" if job.data == "imagenet" else "resnet-18-cifar"), job.batch
    raise ValueError(f"trace job: unknown workload {job.workload!r}")


def step_time_table(job: TraceJob, profile, efficiency: float | None = None, workloads=None,
                    reference=None) -> dict[int, float]:
    """Seconds per step of *job* on g = 1, 2, 4, ... <= demand GPUs of *profile*: the ``virtual``
    variant's step of the cost model (:func:`suite_virtualflow.model.step_model`:
    ``(V/g) t(B/V) + T_AR(4 params, g)``, the g devices packed onto the fewest nodes), with
    V = demand x vn_per_device fixed and B = V x floor(batch / V) samples. *workloads* maps the
    zoo names of :func:`job_workload` to the workloads (``scenario.input("workload:NAME")``, the
    technique's :data:`TRACE_INPUTS`); *reference* is the model's efficiency reference profile.

    Raises
    ------
    suite.errors.ParameterError
        g not dividing V, more GPUs than the profile's first device type has (from the model), or
        a job whose workload is not in *workloads*.
    """
    from suite.api import ParameterError

    from suite_virtualflow import model

    name, B = job_workload(job)
    wl = (workloads or {}).get(name)
    if wl is None:
        raise ParameterError(f"virtualflow: trace job workload {name!r}: expected one of the resolved inputs "
                             f"{sorted(workloads or {})}, got none")
    V = job.virtual_nodes
    b = max(1, B // V)
    out = {}
    g = 1
    while g <= job.demand:
        out[g] = model.step_model(wl, profile, "virtual", b * V, V, g, efficiency, reference=reference).step_time
        g *= 2
    return out


# --------------------------------------------------------------------------- replay


@dataclass
class Replay:
    """What one replay gives: per-job JCT (s), the average, the makespan, resizes."""

    jct: list[float]
    start: list[float]
    finish: list[float]
    resizes: int
    allocations: list[list[tuple[float, int]]] = field(default_factory=list)  # per job: (time, GPUs)

    @property
    def avg_jct(self) -> float:
        return sum(self.jct) / len(self.jct)

    @property
    def makespan(self) -> float:
        return max(self.finish)


@dataclass
class _Run:
    i: int
    job: TraceJob
    steps_left: float
    alloc: int = 0
    resume_at: float = 0.0
    proc: object = None


def replay(jobs: Sequence[TraceJob], gpus: int, step_time: Callable[[int, int], float], policy: str,
           wait: float = GPU_RELEASE_WAIT) -> Replay:
    """Replay a trace with simpy under ``policy`` (``"wfs"`` elastic, ``"priority"`` static).

    Parameters
    ----------
    jobs : sequence of TraceJob
    gpus : int
        GPUs of the cluster (>= the largest demand).
    step_time : callable (job index, GPUs) -> s
        Seconds per step of job i on that many GPUs.
    policy : {"wfs", "priority"}
    wait : float
        Seconds a resize (and a start on GPUs another job releases) waits.

    Returns
    -------
    Replay

    Raises
    ------
    ValueError
        Unknown policy, or a demand above ``gpus``.
    """
    import simpy

    if policy not in ("wfs", "priority"):
        raise ValueError(f"policy must be 'wfs' or 'priority', got {policy!r}")
    if any(j.demand > gpus for j in jobs):
        raise ValueError(f"a job demands more than the {gpus} GPUs")
    sim = _Cluster(simpy, jobs, gpus, step_time, policy, wait)
    for i, j in enumerate(jobs):
        sim.env.process(sim.arrive(_Run(i, j, float(job_steps(j)))))
    sim.env.run()
    jct = [f - j.arrival for f, j in zip(sim.finish, jobs)]
    return Replay(jct, sim.start, sim.finish, sim.resizes, sim.hist)


class _Cluster:
    """The simpy processes of one replay: arrivals, each running job's steps, and the scheduler
    that (re)allocates GPUs on every arrival and completion."""

    def __init__(self, simpy, jobs: Sequence[TraceJob], gpus: int, step_time: Callable[[int, int], float],
                 policy: str, wait: float) -> None:
        self.simpy, self.env = simpy, simpy.Environment()
        self.gpus, self.step_time, self.policy, self.wait = gpus, step_time, policy, wait
        self.queue: list[_Run] = []
        self.running: dict[int, _Run] = {}
        n = len(jobs)
        self.start, self.finish = [math.nan] * n, [math.nan] * n
        self.hist: list[list[tuple[float, int]]] = [[] for _ in range(n)]
        self.resizes = 0

    def runner(self, r: _Run):
        env = self.env
        while True:
            t0 = env.now
            pause = max(0.0, r.resume_at - t0)
            st = self.step_time(r.i, r.alloc)
            try:
                yield env.timeout(pause + r.steps_left * st)
                r.steps_left = 0.0
                self.finish[r.i] = env.now
                del self.running[r.i]
                self.schedule()
                return
            except self.simpy.Interrupt:
                worked = max(0.0, env.now - t0 - pause)
                r.steps_left = max(0.0, r.steps_left - worked / st)

    def set_alloc(self, r: _Run, g: int) -> None:
        r.alloc = g
        self.hist[r.i].append((float(self.env.now), int(g)))

    def launch(self, r: _Run, g: int, delay: float) -> None:
        self.set_alloc(r, g)
        r.resume_at = self.env.now + delay
        self.start[r.i] = self.env.now + delay
        self.running[r.i] = r
        r.proc = self.env.process(self.runner(r))

    def arrive(self, r: _Run):
        yield self.env.timeout(max(0.0, r.job.arrival - self.env.now))
        self.queue.append(r)
        self.schedule()

    def schedule(self) -> None:
        self.queue.sort(key=lambda r: (-r.job.priority, r.job.arrival, r.i))
        if self.policy == "priority":
            self._schedule_static()
        else:
            self._schedule_wfs()

    def _schedule_static(self) -> None:
        """Static priority: start queued jobs, in order, at their full demand while it fits."""
        free = self.gpus - sum(r.alloc for r in self.running.values())
        while self.queue and self.queue[0].job.demand <= free:
            r = self.queue.pop(0)
            free -= r.job.demand
            self.launch(r, r.job.demand, 0.0)

    def _schedule_wfs(self) -> None:
        """Weighted fair sharing: admit queued jobs while no higher-priority running job would
        fall below its fair share, then resize every running job to its new share (each resize
        waits ``wait`` seconds)."""
        queue, gpus = self.queue, self.gpus
        run = list(self.running.values())
        fair = wfs_allocations([(r.i, r.job.priority, r.job.demand) for r in run], gpus) if run else {}
        new: list[_Run] = []
        while queue and len(run) + len(new) < gpus:
            cand = queue[0]
            pot = wfs_allocations([(r.i, r.job.priority, r.job.demand) for r in run + new + [cand]], gpus)
            if any(r.job.priority > cand.job.priority and pot[r.i] < fair[r.i] for r in run):
                break
            fair = pot
            new.append(queue.pop(0))
        shrink = any(fair[r.i] < r.alloc for r in run)
        for r in run:
            if fair[r.i] != r.alloc:
                self.resizes += 1
                self.set_alloc(r, fair[r.i])
                r.resume_at = self.env.now + self.wait
                r.proc.interrupt()
        for r in new:
            self.launch(r, fair[r.i], self.wait if shrink else 0.0)


# --------------------------------------------------------------------------- evaluate


def _trace_of(scenario) -> TraceWorkload:
    wl = scenario.workload
    return wl if isinstance(wl, TraceWorkload) else TRACE


def evaluate(scenario):
    """Simulate fidelity: replay the trace under ``elastic`` (WFS) or ``static`` (Priority).

    Reads the profile's first device type (step times), its devices per node and network (the
    all-reduce), and ``gpus`` / ``release_wait`` / ``efficiency`` from the parameters; the
    workload when it is a trace (default: :data:`TRACE`).

    Returns
    -------
    suite.Result
        ``avg_jct`` (s), ``makespan`` (s), ``resizes``, ``max_jct`` (s), ``avg_wait`` (s, start -
        arrival); artifact ``jobs`` (per job: arrival, start, finish, JCT, allocations).

    Raises
    ------
    suite.Skip
        A variant other than ``elastic`` / ``static``; a profile with fewer GPUs than asked.
    """
    from suite.api import Result, Skip, require_devices

    from suite_virtualflow import model

    if scenario.variant not in ("elastic", "static"):
        raise Skip(f"virtualflow: the simulate fidelity replays a trace under 'elastic' or 'static', "
                   f"not {scenario.variant!r}")
    prof = scenario.profile
    if prof is None:
        raise Skip("virtualflow simulate fidelity needs a hardware profile")
    p = scenario.params
    trace = _trace_of(scenario)
    gpus = int(p.get("gpus") or trace.gpus)
    require_devices(prof, gpus, "gpus", have=model.device_slots(prof)[0].count)
    eff = p.get("efficiency")
    wls = {u.partition(":")[2]: scenario.input(u) for u in TRACE_INPUTS}
    ref = scenario.input(model.EFFICIENCY_INPUT)
    tables = [step_time_table(j, prof, None if eff is None else float(eff), wls, ref) for j in trace.jobs]
    policy = "wfs" if scenario.variant == "elastic" else "priority"
    rep = replay(trace.jobs, gpus, lambda i, g: tables[i][g], policy, float(p.get("release_wait", GPU_RELEASE_WAIT)))
    res = Result()
    res.add("avg_jct", rep.avg_jct, "s", "lower")
    res.add("makespan", rep.makespan, "s", "lower")
    res.add("max_jct", max(rep.jct), "s", "lower")
    res.add("resizes", rep.resizes, "1", "none")
    res.add("avg_wait", sum(s - j.arrival for s, j in zip(rep.start, trace.jobs)) / len(trace.jobs), "s", "lower")
    res.artifacts["jobs"] = [
        {"job": i, "workload": j.workload, "data": j.data, "priority": j.priority, "demand": j.demand,
         "arrival": j.arrival, "start": rep.start[i], "finish": rep.finish[i], "jct": rep.jct[i],
         "steps": job_steps(j), "step_time_at_demand": tables[i][j.demand], "allocations": rep.allocations[i]}
        for i, j in enumerate(trace.jobs)]
    return res

