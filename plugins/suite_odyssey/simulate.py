"""Discrete-event simulation (SimPy) of a DP x PP (x TP) training job under a failure trace.

The job is simulated at the level of recovery events, not iterations: between two events the
throughput is constant (``global_batch / T_iter`` with ``T_iter`` from the unified performance
model, a 1F1B DAG per plan), so hours of training take a few hundred events. Events:

* ``fail`` / ``repair`` of a device, from a trace file (``time,device,event`` per line, seconds)
  or drawn with exponential inter-arrival times from the device MTBF and repair time (seeded);
* checkpoints (``checkpoint-restart`` only), every Young/Daly interval of running time;
* the end of a recovery (the job makes no progress while it recovers).

A failure also loses the iteration in flight (its partial progress), and for
``checkpoint-restart`` everything since the last checkpoint.

References: see :mod:`suite_odyssey.model`; SimPy 4 (https://simpy.readthedocs.io).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np
import simpy

from suite.api import ParameterError

from .model import PerfModel, Plan, choose_policy, daly_interval, expected_window, young_interval

__all__ = ["TraceEvent", "exponential_trace", "parse_trace", "JobSimulation", "run_simulation", "POLICIES"]

POLICIES = ("checkpoint-restart", "redundant", "replan", "reroute", "odyssey")


@dataclass(frozen=True, order=True)
class TraceEvent:
    """One failure-trace event: at ``time`` (s) ``device`` fails or is repaired."""

    time: float
    device: int
    event: str  # "fail" or "repair"


def exponential_trace(devices: int, mtbf: float, mttr: float, horizon: float,
                      rng: np.random.Generator) -> list[TraceEvent]:
    """Failures with exponential inter-arrival times (mean ``mtbf`` s per device) and repairs
    after exponential times (mean ``mttr`` s); a repaired device can fail again.

    Deterministic for a generator state; devices are drawn in order 0..N-1.
    """
    out: list[TraceEvent] = []
    if not math.isfinite(mtbf) or mtbf <= 0:
        return out
    for d in range(devices):
        t = 0.0
        while True:
            t += rng.exponential(mtbf)
            if t >= horizon:
                break
            out.append(TraceEvent(t, d, "fail"))
            t += rng.exponential(mttr) if mttr > 0 else 0.0
            if t >= horizon:
                break
            out.append(TraceEvent(t, d, "repair"))
    out.sort()
    return out


def parse_trace(text: str, devices: int, path: str | Path) -> list[TraceEvent]:
    """The events of a failure trace's *text*: one ``time,device,event`` per line (time in seconds,
    device an index in ``[0, devices)``, event ``fail`` or ``repair``); blank lines, ``#`` comments
    and a ``time,device,event`` header are skipped; *path* names the file in messages. A scenario's
    trace comes resolved, as the bytes of its ``failures`` input (``Param(..., ref="file")``: the
    file's content is in the case key); nothing here opens a file.

    Raises
    ------
    ParameterError
        ``<file>:<line>: ...`` naming what was expected and what was given: a malformed line, a
        device out of range, a negative time, time going backwards, a failure of a device that
        is already down or a repair of one that is up.
    """
    out: list[TraceEvent] = []
    down: set[int] = set()
    last = 0.0
    for no, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line or line.replace(" ", "").lower() == "time,device,event":
            continue
        where = f"{path}:{no}"
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3:
            raise ParameterError(f"{where}: expected 'time,device,event', got {raw.strip()!r}")
        try:
            t = float(parts[0])
            if not math.isfinite(t):
                raise ValueError
        except ValueError:
            raise ParameterError(f"{where}: time: expected a number of seconds, got {parts[0]!r}") from None
        try:
            d = int(parts[1])
        except ValueError:
            raise ParameterError(f"{where}: device: expected an integer, got {parts[1]!r}") from None
        ev = parts[2].lower()
        if ev not in ("fail", "repair"):
            raise ParameterError(f"{where}: event: expected 'fail' or 'repair', got {parts[2]!r}")
        if t < 0:
            raise ParameterError(f"{where}: time: expected >= 0, got {t}")
        if t < last:
            raise ParameterError(f"{where}: time: expected >= {last} (times must not decrease), got {t}")
        if not 0 <= d < devices:
            raise ParameterError(f"{where}: device: expected 0..{devices - 1}, got {d}")
        if ev == "fail" and d in down:
            raise ParameterError(f"{where}: device {d} fails while already down")
        if ev == "repair" and d not in down:
            raise ParameterError(f"{where}: device {d} is repaired but is not down")
        (down.add if ev == "fail" else down.discard)(d)
        last = t
        out.append(TraceEvent(t, d, ev))
    return out


@dataclass
class Knobs:
    """Technique constants of a simulation (stated assumptions; see the docs page)."""

    reconfigure_time: float  # s, communicator rebuild and restart of a re-planned job
    failover_time: float  # s, detect a failure and reroute / fail over, or rejoin a repaired device
    checkpoint_rule: str = "daly"
    failure_free_mtbf: bool = False  # True when no failures are expected (no checkpoints)


@dataclass
class _State:
    plan: Plan
    pos: dict  # (pipe, stage) -> tuple of devices
    where: dict  # device -> (pipe, stage)
    holes: set = field(default_factory=set)
    covered: dict = field(default_factory=dict)  # (pipe, stage) -> covering stage
    t: float | None = None  # cached iteration time


class JobSimulation:
    """One policy on one failure trace (a SimPy model). Use :func:`run_simulation`."""

    def __init__(self, pm: PerfModel, policy: str, trace: list[TraceEvent], horizon: float, knobs: Knobs):
        if policy not in POLICIES:
            raise ParameterError(f"odyssey: variant: expected one of {list(POLICIES)}, got {policy!r}")
        self.pm = pm
        self.policy = policy
        self.trace = trace
        self.horizon = float(horizon)
        self.k = knobs
        n = pm.cluster.devices
        self.n = n
        self.alive = set(range(n))
        self.state_factor = 2.0 if policy == "redundant" else 1.0
        ff = pm.best_plan(n)
        if ff is None:
            raise ParameterError(f"odyssey: no DP x PP plan of {pm.job.name} fits in {n} devices of "
                                 f"{pm.cluster.memory / 2**30:.0f} GiB")
        self.ff_plan = ff
        self.ff_rate = pm.job.global_batch / ff.iteration_time
        plan = pm.best_plan(n, self.state_factor) if policy == "redundant" else ff
        if plan is None:
            raise ParameterError(f"odyssey: redundant computation needs twice the model state per device; no plan of "
                                 f"{pm.job.name} fits in {n} devices")
        self.st = self._fresh_state(plan)
        # checkpointing (checkpoint-restart only)
        self.delta = pm.checkpoint_time()
        cluster_mtbf = math.inf if knobs.failure_free_mtbf else pm.cluster.device_mtbf / n
        rule = daly_interval if knobs.checkpoint_rule == "daly" else young_interval
        self.tau = rule(self.delta, cluster_mtbf) if policy == "checkpoint-restart" else math.inf
        # accounting
        self.progress = 0.0  # useful samples committed or in flight
        self.ckpt_progress = 0.0
        self.rate = 0.0
        self.t_last = 0.0
        self.busy_until = 0.0
        self.next_ckpt_in = self.tau
        self.timeline: list[tuple[float, float]] = []
        self.degraded_time = 0.0
        self.degraded_work = 0.0
        self.records: list[dict] = []
        self.recoveries: list[dict] = []
        self.checkpoints = 0
        self.env = simpy.Environment()
        self.proc = None

    # -- plan bookkeeping
    def _fresh_state(self, plan: Plan, devices=None) -> _State:
        devs = sorted(self.alive if devices is None else devices)[: plan.devices]
        pos, where = {}, {}
        for k, p in enumerate(plan.positions()):
            grp = tuple(devs[k * plan.tp:(k + 1) * plan.tp])
            pos[p] = grp
            for d in grp:
                where[d] = p
        return _State(plan, pos, where)

    def _layers_of(self, st: _State) -> dict:
        b = st.plan.bounds
        return {d: (b[s], b[s + 1]) for d, (_j, s) in st.where.items()
                if d in self.alive and (_j, s) not in st.holes and (_j, s) not in st.covered}

    def iteration_time(self, st: _State | None = None) -> float:
        st = st or self.st
        if st.t is None:
            st.t = self._iteration_time(st)
        return st.t

    def _iteration_time(self, st: _State) -> float:
        if st.holes:
            f = np.zeros(st.plan.pp, dtype=int)
            for _j, s in st.holes:
                f[s] += 1
            return self.pm.reroute_time(st.plan, f)
        if self.policy == "redundant":
            cov: dict = {}
            for (j, s), by in st.covered.items():
                cov.setdefault(j, []).append((s, by))
            return self.pm.redundant_time(st.plan, cov)
        return st.plan.iteration_time

    # -- candidate actions: each returns (new state or None, one-shot cost s)
    def _act_replan(self):
        plan = self.pm.best_plan(len(self.alive), self.state_factor)
        if plan is None:
            return None, math.inf
        new = self._fresh_state(plan)
        move = self.pm.replan_transfer_time(self.st.plan, self._layers_of(self.st), plan, self._layers_of(new))
        return new, self.k.reconfigure_time + move

    def _act_reroute(self, pos):
        st = _State(self.st.plan, self.st.pos, self.st.where, set(self.st.holes) | {pos}, dict(self.st.covered))
        if math.isinf(self.iteration_time(st)):
            return None, math.inf
        return st, self.k.failover_time

    def _act_cover(self, pos):
        """Bamboo-style failover: the predecessor stage ``(s - 1) mod p`` of the same pipeline,
        which holds a replica of stage ``s``, takes it over; impossible when that neighbour is
        itself down, already covers a stage, or when ``pos`` was covering one."""
        j, s = pos
        p = self.st.plan.pp
        if p == 1:
            return self._act_reroute(pos)
        by = (s - 1) % p
        nb = (j, by)
        covering = {b for (jj, _s), b in self.st.covered.items() if jj == j}
        if (nb in self.st.holes or nb in self.st.covered or by in covering or s in covering
                or any(d not in self.alive for d in self.st.pos[nb])):
            return None, math.inf
        st = _State(self.st.plan, self.st.pos, self.st.where, set(self.st.holes), {**self.st.covered, pos: by})
        return st, self.k.failover_time

    def _act_rejoin(self, dev):
        pos = self.st.where.get(dev)
        if pos is None or (pos not in self.st.holes and pos not in self.st.covered):
            return self.st, 0.0
        if any(d not in self.alive for d in self.st.pos[pos]):
            return self.st, 0.0
        st = _State(self.st.plan, self.st.pos, self.st.where, set(self.st.holes) - {pos},
                    {k: v for k, v in self.st.covered.items() if k != pos})
        copy = self.pm.transfer_time(self.pm.state_bytes(self.st.plan.bounds, pos[1], self.st.plan.tp))
        return st, self.k.failover_time + copy

    # -- accounting
    def _advance(self):
        now = self.env.now
        dt = now - self.t_last
        if dt > 0:
            self.progress += self.rate * dt
            if self.rate > 0:
                if self.policy == "checkpoint-restart":
                    self.next_ckpt_in -= dt
                if len(self.alive) < self.n:
                    self.degraded_time += dt
                    self.degraded_work += self.rate * dt
        self.t_last = now

    def _set_rate(self, rate: float):
        self._advance()
        self.rate = rate
        if not self.timeline or self.timeline[-1][1] != rate:
            self.timeline.append((self.env.now, rate))

    def running_rate(self) -> float:
        t = self.iteration_time()
        return self.pm.job.global_batch / t if math.isfinite(t) and t > 0 else 0.0

    # -- SimPy processes
    def main(self):
        while True:
            if self.busy_until > self.env.now:
                self._set_rate(0.0)
                try:
                    yield self.env.timeout(min(self.busy_until - self.env.now, 2 * self.horizon + 1.0))
                except simpy.Interrupt:
                    pass
                continue
            self._set_rate(self.running_rate())
            wait = self.next_ckpt_in if self.policy == "checkpoint-restart" else math.inf
            try:
                yield self.env.timeout(min(wait, 2 * self.horizon + 1.0))
            except simpy.Interrupt:
                continue
            if self.policy == "checkpoint-restart" and math.isfinite(wait):
                self._advance()
                self.ckpt_progress = self.progress
                self.next_ckpt_in = self.tau
                self.busy_until = self.env.now + self.delta
                self.checkpoints += 1

    def driver(self):
        for ev in self.trace:
            if ev.time >= self.horizon:
                break
            if ev.time > self.env.now:
                yield self.env.timeout(ev.time - self.env.now)
            self.on_event(ev)
            self.proc.interrupt()

    def on_event(self, ev: TraceEvent):
        self._advance()
        now = self.env.now
        if math.isinf(self.busy_until):  # stalled: no feasible plan so far; re-plan when possible
            (self.alive.discard if ev.event == "fail" else self.alive.add)(ev.device)
            new, cost = self._act_replan()
            if new is not None:
                self.st, self.busy_until = new, now + cost
                self.records.append({"time_h": now / 3600, "device": ev.device, "event": ev.event,
                                     "policy": "replan(after stall)", "cost_s": cost, "lost_s": 0.0,
                                     "iteration_time_s": self.iteration_time(), "plan": new.plan.describe()})
            return
        recovering = self.busy_until > now
        t_before = self.iteration_time()
        if ev.event == "fail":
            self.alive.discard(ev.device)
            hit = (ev.device in self.st.where and self.st.where[ev.device] not in self.st.holes
                   and self.st.where[ev.device] not in self.st.covered)
            if not hit:
                self.records.append({"time_h": now / 3600, "device": ev.device, "event": "fail", "policy": "none",
                                     "cost_s": 0.0, "lost_s": 0.0, "iteration_time_s": t_before,
                                     "plan": self.st.plan.describe(), "note": "idle device"})
                return
            pos = self.st.where[ev.device]
            # work lost: the iteration in flight, or everything since the checkpoint
            if self.policy == "checkpoint-restart":
                lost = self.progress - self.ckpt_progress
            else:
                lost = 0.0 if recovering else math.fmod(self.progress, self.pm.job.global_batch)
            self.progress -= lost
            if self.policy == "checkpoint-restart":
                # restart from the checkpoint on the same plan, the failed device replaced
                chosen, cost, new = "restart", self.pm.cluster.restart_time, self.st
                self.next_ckpt_in = self.tau
            else:
                chosen, new, cost = self._decide_failure(pos)
        else:
            self.alive.add(ev.device)
            if self.policy == "checkpoint-restart":
                return
            lost = 0.0
            chosen, new, cost = self._decide_repair(ev.device)
            if chosen == "none":
                return
        self.st = new
        start = max(now, self.busy_until)
        self.busy_until = start + cost
        t_after = self.iteration_time()
        rec = {"time_h": now / 3600, "device": ev.device, "event": ev.event, "policy": chosen, "cost_s": cost,
               "lost_s": lost / self.ff_rate, "iteration_time_s": t_after, "plan": self.st.plan.describe(),
               "holes": len(self.st.holes), "covered": len(self.st.covered)}
        self.records.append(rec)
        if ev.event == "fail":
            self.recoveries.append(rec)

    def _options_failure(self, pos):
        return {"reroute": self._act_reroute(pos), "replan": self._act_replan()}

    def _decide_failure(self, pos):
        if self.policy == "replan":
            new, c = self._act_replan()
            return self._or_stall("replan", new, c)
        if self.policy in ("reroute", "redundant"):
            new, c = self._act_reroute(pos) if self.policy == "reroute" else self._act_cover(pos)
            if new is not None:
                return self.policy, new, c
            new, c = self._act_replan()  # no surviving replica / neighbour: fall back to re-planning
            return self._or_stall("replan(fallback)", new, c)
        opts = self._options_failure(pos)
        return self._choose(opts)

    def _decide_repair(self, dev):
        if self.policy in ("reroute", "redundant"):
            new, c = self._act_rejoin(dev)
            return ("rejoin" if c > 0 else "none"), new, c
        if self.policy == "replan":
            new, c = self._act_replan()
            if new is None or self.iteration_time(new) >= self.iteration_time() * (1 - 1e-12):
                return "none", self.st, 0.0
            return "replan", new, c
        rj, crj = self._act_rejoin(dev)
        opts = {"rejoin" if crj > 0 else "none": (rj, crj), "replan": self._act_replan()}
        return self._choose(opts)

    def _choose(self, opts):
        window = expected_window(len(self.alive), self.n - len(self.alive), self.pm.cluster.device_mtbf,
                                 self.pm.cluster.repair_time)
        feasible = {k: (c, self.iteration_time(st) if st is not None else math.inf) for k, (st, c) in opts.items()}
        try:
            ch = choose_policy(feasible, window, self.ff_plan.iteration_time)
        except ValueError:
            return "stall", self.st, math.inf
        return ch.name, opts[ch.name][0], opts[ch.name][1]

    def _or_stall(self, name, new, c):
        if new is None:
            return "stall", self.st, math.inf
        return name, new, c

    def run(self) -> dict:
        self.proc = self.env.process(self.main())
        self.env.process(self.driver())
        self.env.run(until=self.horizon)
        self._advance()
        return self.summary()

    def summary(self) -> dict:
        H = self.horizon
        avg = self.progress / H if H > 0 else 0.0
        post = self.degraded_work / self.degraded_time / self.ff_rate if self.degraded_time > 0 else 1.0
        lost = [r["cost_s"] + r["lost_s"] for r in self.recoveries if math.isfinite(r["cost_s"])]
        after = [self.pm.job.global_batch / r["iteration_time_s"] / self.ff_rate for r in self.recoveries
                 if math.isfinite(r["iteration_time_s"]) and r["iteration_time_s"] > 0]
        choices: dict[str, int] = {}
        for r in self.recoveries:
            choices[r["policy"]] = choices.get(r["policy"], 0) + 1
        return {
            "average_throughput": avg,
            "failure_free_throughput": self.ff_rate,
            "relative_throughput": avg / self.ff_rate,
            "post_recovery_relative": post,
            "post_recovery_relative_min": min(after) if after else 1.0,
            "time_lost_per_failure": float(np.mean(lost)) if lost else 0.0,
            "failures": sum(1 for e in self.trace if e.event == "fail" and e.time < H),
            "recoveries": len(self.recoveries),
            "checkpoints": self.checkpoints,
            "checkpoint_interval": self.tau,
            "checkpoint_time": self.delta,
            "degraded_time": self.degraded_time,
            "choices": choices,
            "plan": self.ff_plan.describe() if self.policy != "redundant" else self.st.plan.describe(),
            "timeline": [[t / 3600, r] for t, r in self.timeline],
            "events": self.records,
        }


def run_simulation(pm: PerfModel, policy: str, trace: list[TraceEvent], horizon: float, knobs: Knobs) -> dict:
    """Simulate ``policy`` on ``trace`` for ``horizon`` seconds; returns the summary dict
    (throughputs in samples/s, times in s, the throughput timeline as ``[hour, samples/s]``
    steps and one record per event)."""
    return JobSimulation(pm, policy, trace, horizon, knobs).run()


# --------------------------------------------------------------------------- scenario plumbing


@lru_cache(maxsize=64)
def _perf_model(job, cluster, bubble_fill: float, tp: int) -> PerfModel:
    """One PerfModel (and its plan-search cache) per (job, cluster, bubble fill, TP degree)."""
    return PerfModel(job, cluster, bubble_fill=bubble_fill, tp_degrees=(tp,))


def build(scenario) -> tuple[PerfModel, Knobs]:
    """The performance model and knobs of a resolved scenario (profile + workload + params).

    Without a workload, a uniform decoder of ``layers x hidden`` is used
    (:func:`suite_odyssey.model.uniform_transformer`).

    Raises
    ------
    ParameterError, ProfileError
        Bad batch sizes, a non-model workload, a profile without device/network/reliability.
    """
    from .model import cluster_from_profile, job_from_workload, uniform_transformer

    p = scenario.params
    if scenario.profile is None:
        raise ParameterError("odyssey: the model and simulate fidelities need a cluster profile (--profile NAME)")
    if scenario.workload is not None:
        job = job_from_workload(scenario.workload, int(p["global_batch"]), int(p["micro_batch"]), p["recompute"])
    else:
        job = uniform_transformer(int(p["layers"]), int(p["hidden"]), int(p["seq_len"]), int(p["vocab"]),
                                  int(p["global_batch"]), int(p["micro_batch"]), int(p["heads"]), p["recompute"])
    cluster = cluster_from_profile(scenario.profile, mfu=float(p["mfu"]), device_mtbf_h=p["device_mtbf"],
                                   repair_time_h=p["repair_time"], restart_time_s=p["restart_time"],
                                   checkpoint_bandwidth_gbs=p["checkpoint_bandwidth"])
    pm = _perf_model(job, cluster, float(p["bubble_fill"]), int(p["tp"]))
    knobs = Knobs(reconfigure_time=float(p["reconfigure_time"]), failover_time=float(p["failover_time"]),
                  checkpoint_rule=p["checkpoint_rule"], failure_free_mtbf=(p["failures"] == "none"))
    return pm, knobs


def make_trace(scenario, pm: PerfModel) -> list[TraceEvent]:
    """The failure trace a scenario asks for: ``failures = "exponential"`` (seeded draws from the
    device MTBF and repair time), ``"none"``, or the path of a ``time,device,event`` file."""
    src = scenario.params["failures"]
    horizon = float(scenario.params["horizon"]) * 3600.0
    n = pm.cluster.devices
    if src == "none":
        return []
    if src == "exponential":
        return exponential_trace(n, pm.cluster.device_mtbf, pm.cluster.repair_time, horizon,
                                 np.random.default_rng(scenario.seed))
    return parse_trace(scenario.input("failures").decode("utf-8"), n, src)


def evaluate(scenario):
    """Simulate fidelity: one policy (the variant) on the scenario's failure trace.

    Metrics: ``average_throughput`` and ``failure_free_throughput`` (samples/s),
    ``relative_throughput``, ``post_recovery_relative`` (time-weighted throughput while a device
    is down and the job is not recovering, over failure-free), ``post_recovery_relative_min``
    (worst throughput right after a recovery), ``time_lost_per_failure`` (s: one-shot recovery
    plus recomputed work), ``failures``, ``recoveries``, ``checkpoints``. Artifacts: the
    throughput ``timeline`` (``[hour, samples/s]`` steps), the ``events`` with the policy chosen
    per failure, ``choices`` and the initial ``plan``.
    """
    from suite.api import Result

    pm, knobs = build(scenario)
    trace = make_trace(scenario, pm)
    out = run_simulation(pm, scenario.variant, trace, float(scenario.params["horizon"]) * 3600.0, knobs)
    r = Result()
    r.add("average_throughput", out["average_throughput"], "samples/s", "higher")
    r.add("failure_free_throughput", out["failure_free_throughput"], "samples/s", "higher")
    r.add("relative_throughput", out["relative_throughput"], "1", "higher")
    r.add("post_recovery_relative", out["post_recovery_relative"], "1", "higher")
    r.add("post_recovery_relative_min", out["post_recovery_relative_min"], "1", "higher")
    r.add("time_lost_per_failure", out["time_lost_per_failure"], "s", "lower")
    r.add("failures", out["failures"], "1", "none")
    r.add("recoveries", out["recoveries"], "1", "none")
    r.add("checkpoints", out["checkpoints"], "1", "none")
    for k in ("timeline", "events", "choices", "plan", "degraded_time"):
        r.artifacts[k] = out[k]
    r.artifacts["checkpoint_interval_s"] = out["checkpoint_interval"] if math.isfinite(out["checkpoint_interval"]) else None
    r.artifacts["checkpoint_time_s"] = out["checkpoint_time"]
    r.artifacts["workload"] = pm.job.name
    return r


def expected_throughput(ff_rate: float, t0: float, t_deg: float, cost: float, job_mtbf: float,
                        repair_time: float, ckpt_overhead: float = 0.0) -> tuple[float, float]:
    """Throughput with failures at the rate the profile's MTBF gives (renewal-reward over one
    failure cycle [Ross, *Stochastic Processes*, §3.6]).

    A failure arrives every ``M = device_mtbf / devices`` on average (exponential per device);
    each costs the one-shot recovery ``cost`` (no progress), after which the job runs degraded
    (iteration ``t_deg`` instead of ``t0``) for ``D = min(repair_time, M - cost)``. Useful time
    per cycle ``M - cost - D (1 - t0 / t_deg)``, and checkpointing spends ``delta / tau`` more:

    ``throughput = ff_rate x max(0, useful / M) / (1 + ckpt_overhead)``.

    Returns ``(throughput, availability)`` with ``availability = throughput / ff_rate``.
    """
    if not math.isfinite(job_mtbf):  # no failures
        return ff_rate / (1.0 + ckpt_overhead), 1.0 / (1.0 + ckpt_overhead)
    c = max(0.0, cost)
    d = min(repair_time, max(0.0, job_mtbf - c))
    slow = 1.0 - t0 / t_deg if math.isfinite(t_deg) and t_deg > 0 else 1.0
    useful = max(0.0, job_mtbf - c - d * slow)
    avail = useful / job_mtbf / (1.0 + ckpt_overhead)
    return ff_rate * avail, avail


def _one_failure(pm, scenario, knobs, victims, cost, f, t1) -> tuple[float, float]:
    """(recovery cost, degraded iteration time) of one failure: the scenario's first when it
    fails devices, else one probe failure of a device drawn with its seed."""
    if f >= 1:
        return cost / f, t1
    sim = JobSimulation(pm, scenario.variant, [], 3600.0, knobs)
    d = int(np.random.default_rng(scenario.seed).integers(pm.cluster.devices))
    sim.busy_until = 0.0
    sim.on_event(TraceEvent(0.0, d, "fail"))
    c = sim.records[-1]["cost_s"] if sim.records and math.isfinite(sim.records[-1]["cost_s"]) else 0.0
    if scenario.variant == "checkpoint-restart" and math.isfinite(sim.tau):
        c += sim.tau / 2.0
    return c, sim.iteration_time()


def evaluate_model(scenario):
    """Model fidelity: the plan, its iteration time, and the state after ``failed_devices``
    failures of devices drawn with the scenario's seed, each recovered by the variant's policy
    at once (no repair).

    Metrics: ``iteration_time`` (failure-free, s; the redundant variant includes its
    overhead), ``throughput`` (samples/s, with failures at the profile's MTBF and the variant's
    recovery: :func:`expected_throughput`), ``failure_free_throughput`` (samples/s),
    ``availability`` (their ratio), ``post_failure_iteration_time`` (s),
    ``post_recovery_relative`` (failure-free best-plan time over post-failure time),
    ``recovery_cost`` (s, one-shot costs summed; checkpoint-restart adds the expected rework of
    half an interval), ``checkpoint_overhead`` (``delta / tau``, checkpoint-restart only, else 0).
    """
    from suite.api import Result

    pm, knobs = build(scenario)
    f = int(scenario.params["failed_devices"])
    n = pm.cluster.devices
    if f >= n:
        raise ParameterError(f"odyssey: parameter 'failed_devices': expected < {n} devices, got {f}")
    sim = JobSimulation(pm, scenario.variant, [], 3600.0, knobs)
    t0 = sim.iteration_time()
    rng = np.random.default_rng(scenario.seed)
    victims = [int(d) for d in rng.choice(n, size=f, replace=False)] if f else []
    cost = 0.0
    for d in victims:
        sim.busy_until = 0.0
        sim.on_event(TraceEvent(0.0, d, "fail"))
        if sim.records and math.isfinite(sim.records[-1]["cost_s"]):
            cost += sim.records[-1]["cost_s"]
    ckpt_over = 0.0
    if scenario.variant == "checkpoint-restart" and math.isfinite(sim.tau):
        cost += f * sim.tau / 2.0
        ckpt_over = sim.delta / sim.tau
    t1 = sim.iteration_time()
    per_failure, t_deg = _one_failure(pm, scenario, knobs, victims, cost, f, t1)
    exp_thr, avail = expected_throughput(pm.job.global_batch / t0, t0, t_deg, per_failure,
                                         math.inf if knobs.failure_free_mtbf else pm.cluster.device_mtbf / n,
                                         pm.cluster.repair_time, ckpt_over)
    r = Result()
    r.add("iteration_time", t0, "s", "lower")
    r.add("throughput", exp_thr, "samples/s", "higher")
    r.add("failure_free_throughput", pm.job.global_batch / t0, "samples/s", "higher")
    r.add("availability", avail, "1", "higher")
    r.add("post_failure_iteration_time", t1 if math.isfinite(t1) else 0.0, "s", "lower")
    r.add("post_recovery_relative", sim.ff_plan.iteration_time / t1 if math.isfinite(t1) else 0.0, "1", "higher")
    r.add("recovery_cost", cost, "s", "lower")
    r.add("checkpoint_overhead", ckpt_over, "1", "lower")
    r.artifacts["plan"] = sim.ff_plan.describe() if scenario.variant != "redundant" else sim.st.plan.describe()
    r.artifacts["failed_devices"] = victims
    r.artifacts["events"] = sim.records
    r.artifacts["workload"] = pm.job.name
    return r
