"""Computron's simulate fidelity: an event-level run of the serving engine.

Arrivals (AlpaServe's ``GammaProcess``, which the authors' ``experiments/sim.py`` uses): model
``i`` draws its inter-arrival times from a Gamma distribution of shape ``1 / CV^2`` and scale
``CV^2 / rate`` (mean ``1 / rate``, coefficient of variation ``CV``) with
``numpy.random.RandomState(seed_i)``, in batches of ``max(int(1.2 rate duration), 1)`` draws,
keeping the arrivals before ``duration`` (:func:`gamma_arrivals`).

Engine (the authors' code, repository ``dlzou/computron``, files ``computron/engine.py`` and
``controller.py``; not the paper's text): per-model FIFO queues; whenever the engine can act it
looks at the model with the oldest queued request, then the next oldest:

* loaded, and the first pipeline stage free: it takes up to ``batch`` of that model's queued
  requests as one batch and marks the model most recently used;
* not loaded: if fewer than ``max_loaded`` models are loaded or loading, it loads the model;
  else it evicts the least recently used loaded model (never one mid-transfer), whose offload
  first waits for that model's batches in flight (``flush``), and loads the new one at once: load
  and offload run on separate streams (the authors' worker), so they overlap. A load marks the
  model most recently used;
* loading or offloading: it moves on to the next model.

Every GPU has a compute, a load and an offload resource (a FIFO channel of capacity 1). A
batch holds the ``tp`` GPUs of stage 1 for the stage time, hands off, then stage 2, ... (so
batches pipeline across stages); a ``computron`` load holds all ``n`` load resources at once,
each for its shard's time; ``mp-serial`` takes them one after another; ``single-device`` has one
GPU. Stage and swap times come from :mod:`suite_computron.model`. All models start offloaded
(cold start; the authors' warm-up request per client is not simulated).

Outputs: latency (response time, arrival to completion) mean / p50 / p90 / p99 overall and per
model, SLO attainment (fraction of requests answered within ``slo`` s), loads, offloads, bytes
moved, the largest number of models resident (loaded or loading), GPU busy time, and an event log
(``batch``, ``load`` and ``evict`` when decided; ``loaded`` and ``offloaded`` when a transfer ends).
"""

from __future__ import annotations

import bisect
import heapq
import math
import time
from collections import OrderedDict

import numpy as np

from suite.api import ParameterError

from suite_computron import model

__all__ = ["gamma_arrivals", "Engine", "simulate", "evaluate", "MAX_REQUESTS"]

#: Requests beyond which a simulate case declines (Skip): a guard against a typo in the rates.
MAX_REQUESTS = 2_000_000


def gamma_arrivals(rate: float, cv: float, duration: float, seed: int, start: float = 0.0) -> np.ndarray:
    """Arrival times (s) of one Gamma renewal process, drawn as AlpaServe's ``GammaProcess``.

    Parameters
    ----------
    rate : float
        Mean requests per second (> 0).
    cv : float
        Coefficient of variation of the inter-arrival times (> 0).
    duration : float
        Seconds of arrivals; times lie in ``(start, start + duration)``.
    seed : int
        ``numpy.random.RandomState`` seed (0 <= seed < 2**32).

    Returns
    -------
    ndarray of float, increasing
    """
    if rate <= 0 or cv <= 0 or duration < 0:
        raise ValueError(f"gamma arrivals: rate and cv must be > 0 and duration >= 0, got {rate}, {cv}, {duration}")
    rs = np.random.RandomState(int(seed) % 2**32)
    shape, scale = 1.0 / (cv * cv), cv * cv / rate
    size = max(int(rate * duration * 1.2), 1)
    end = start + duration
    out, t = [], start
    while True:
        ts = t + np.cumsum(rs.gamma(shape, scale, size=size))
        keep = ts[ts < end]
        out.append(keep)
        if len(keep) < size:
            break
        t = float(ts[-1])
    return np.concatenate(out) if out else np.zeros(0)


class Engine:
    """The serving engine on ``n = tp x pp`` GPUs (module docstring).

    Every GPU has three FIFO channels -- compute, load (host to GPU) and offload (GPU to host) --
    each a timeline of when it is next free (a capacity-1 resource whose users arrive in order,
    so its waits are computed when a job is issued). A plain event loop is the clock
    (:meth:`run`): the scheduler sleeps until the next arrival or the next channel event (a stage
    frees, a transfer ends). It replaced a simpy process that did nothing but sleep (a timeout per
    event); the clock advances by the same arithmetic, so every time is the same to the bit.

    Parameters
    ----------
    arrivals : list of ndarray
        Arrival times per model.
    max_loaded : int
    batch : int
    tp, pp : int
    stage_times : sequence of float
        ``stage_times[k]`` = one stage's time for a batch of ``k`` requests (index 0 unused).
    handoff : float
        s per pipeline hand-off.
    load_shards, offload_shards : tuple of float
        s each shard's copy holds its GPU's load / offload channel.
    parallel : bool
        Shards copied at once (``computron``) or one after another (``mp-serial``).
    swaps : bool
        False for ``resident``: every model is loaded from the start, nothing moves.
    model_bytes : float
        B per model (for the byte counts).
    """

    def __init__(self, arrivals, max_loaded, batch, tp, pp, stage_times, handoff, load_shards, offload_shards,
                 parallel, swaps, model_bytes):
        self.now = 0.0  # the simulated clock (s)
        self.M = len(arrivals)
        self.arrivals = [np.asarray(a, float) for a in arrivals]
        self._arr = [a.tolist() for a in self.arrivals]  # Python floats for the scalar hot path
        self._len = [len(a) for a in self._arr]
        self._models = range(len(self._arr))
        self.max_loaded, self.batch, self.tp, self.pp = int(max_loaded), int(batch), int(tp), int(pp)
        self.n = self.tp * self.pp
        self.stage_times, self.handoff = list(stage_times), float(handoff)
        self.load_shards, self.offload_shards = tuple(load_shards), tuple(offload_shards)
        self.parallel, self.swaps, self.S = bool(parallel), bool(swaps), float(model_bytes)
        # channel timelines: when each GPU's compute / load / offload channel is next free
        self.compute_free = [0.0] * self.n
        self.load_free = [0.0] * self.n
        self.offload_free = [0.0] * self.n
        self.state = ["loaded" if not swaps else "offloaded" for _ in range(self.M)]
        self.lru: OrderedDict[int, float] = OrderedDict((m, 0.0) for m in range(self.M)) if not swaps else OrderedDict()
        self.last_done = [0.0] * self.M  # completion of each model's last batch (offload flushes to it)
        # per-model FIFO queue = arrivals[m][head[m]:admitted[m]]
        self.head = [0] * self.M
        self.admitted = [0] * self.M
        self.offset = np.cumsum([0] + [len(a) for a in self.arrivals])
        self._base = self.offset.tolist()
        self._issued: list[tuple[int, int, float, float, float]] = []  # (first request, count, start, done, service)
        total = int(self.offset[-1])
        self.start_t = np.full(total, np.nan)
        self.done_t = np.full(total, np.nan)
        self.service_t = np.full(total, np.nan)  # the request's own batch's service (no waiting)
        self.loads = self.offloads = 0
        self.bytes_loaded = self.bytes_offloaded = 0.0
        self.max_resident = sum(1 for s in self.state if s == "loaded")
        self.busy = [0.0] * self.n
        self.batches = 0
        self.log: list[tuple[float, str, int]] = []
        self._pending: list[tuple[float, int, str, int]] = []  # (time, seq, kind, model): transfers ending
        self._seq = 0
        self._queued = False  # some model had queued requests at the last scheduling pass

    # -- channels
    def _transfer(self, free: list[float], shards: tuple[float, ...], ready: float) -> float:
        """Issue one model's shard copies on the channels *free* at or after *ready*; returns the end."""
        if self.parallel:
            end = ready
            for g, t in enumerate(shards):
                s = max(ready, free[g])
                free[g] = s + t
                end = max(end, free[g])
            return end
        t_at = ready
        for g, t in enumerate(shards):
            s = max(t_at, free[g])
            free[g] = t_at = s + t
        return t_at

    def _push(self, t: float, kind: str, m: int) -> None:
        heapq.heappush(self._pending, (t, self._seq, kind, m))
        self._seq += 1

    def _start_load(self, m: int, ready: float) -> None:
        now = self.now
        self.state[m] = "loading"
        self.lru[m] = now
        self.lru.move_to_end(m)
        self.loads += 1
        self.log.append((now, "load", m))
        resident = self.state.count("loaded") + self.state.count("loading")
        self.max_resident = max(self.max_resident, resident)
        self._push(self._transfer(self.load_free, self.load_shards, ready), "loaded", m)

    def _start_offload(self, m: int) -> None:
        now = self.now
        self.state[m] = "offloading"
        self.lru.pop(m, None)
        self.offloads += 1
        self.log.append((now, "evict", m))
        flush = max(now, self.last_done[m])  # the model's batches in flight finish first
        self._push(self._transfer(self.offload_free, self.offload_shards, flush), "offloaded", m)

    def _issue_batch(self, m: int) -> None:
        now = self.now
        a = self.head[m]
        b = min(self.admitted[m], a + self.batch)
        self.head[m] = b
        t_stage = self.stage_times[b - a]
        t = now
        free, busy, tp = self.compute_free, self.busy, self.tp
        last = self.pp - 1
        for s in range(self.pp):
            lo = s * tp
            f = free[lo]  # = max(free[lo:lo + tp]): a batch holds all of a stage's GPUs, so they free together
            t = (f if f > t else t) + t_stage  # max(t, f), t when equal
            for g in range(lo, lo + tp):
                free[g] = t
                busy[g] += t_stage
            if s < last:
                t += self.handoff
        # the requests' times are written into the arrays when the run ends (_write_times)
        self._issued.append((self._base[m] + a, b - a, now, t, self.pp * t_stage + last * self.handoff))
        if t > self.last_done[m]:
            self.last_done[m] = t
        self.lru[m] = now
        self.lru.move_to_end(m)
        self.batches += 1
        self.log.append((now, "batch", m))

    def _write_times(self) -> None:
        """Each issued batch's start, completion and service time into its requests' entries of
        ``start_t``, ``done_t`` and ``service_t`` (one vectorised write per array, not three
        slice writes per batch)."""
        issued, self._issued = self._issued, []
        if not issued:
            return
        first, count, start, done, service = (np.array(c) for c in zip(*issued))
        before = np.cumsum(count) - count  # requests of the batches issued earlier
        at = np.arange(int(count.sum())) + np.repeat(first - before, count)
        self.start_t[at] = np.repeat(start, count)
        self.done_t[at] = np.repeat(done, count)
        self.service_t[at] = np.repeat(service, count)

    # -- the scheduler
    def _schedule(self, now: float) -> None:
        """The scheduling decisions at *now* (module docstring), one after another until none can
        start: each looks at the queued models, oldest queued request first, and takes the first
        action one of them allows (:meth:`_act`)."""
        head, admitted, state, arrs = self.head, self.admitted, self.state, self._arr
        free, models = self.compute_free, self._models
        while True:
            queued = [m for m, h, a in zip(models, head, admitted) if h < a]
            self._queued = bool(queued)
            if not queued:
                return
            stage0_free = free[0] <= now  # the first stage's GPUs free together (_issue_batch)
            if not stage0_free and "offloaded" not in [state[m] for m in queued]:
                return  # no queued model can be batched or loaded
            order = queued if len(queued) == 1 else [m for _t, m in sorted([(arrs[m][head[m]], m) for m in queued])]
            for m in order:
                if self._act(m, stage0_free, now):
                    break
            else:
                return

    def _act(self, m: int, stage0_free: bool, now: float) -> bool:
        """Model *m*'s action at *now*, if it has one: a batch (loaded, the first stage free), a
        load (offloaded), after evicting the least recently used loaded model when ``max_loaded``
        are resident; False when it can do nothing (loaded with the first stage busy, or
        mid-transfer, or no loaded model to evict)."""
        state = self.state
        st = state[m]
        if st == "loaded":
            if stage0_free:
                self._issue_batch(m)
                return True
        elif st == "offloaded":
            resident = state.count("loaded") + state.count("loading")
            if resident < self.max_loaded:
                self._start_load(m, now)
                return True
            victim = next((v for v in self.lru if state[v] == "loaded"), None)
            if victim is not None:
                self._start_offload(victim)
                self._start_load(m, now)  # its own stream: overlaps the offload
                return True
        return False

    def _admit(self, now: float) -> float:
        """Admit every arrival up to *now*; return the first arrival after it (inf when none)."""
        arrs, lens, admitted = self._arr, self._len, self.admitted
        nxt = math.inf
        for m in range(self.M):
            j, n = admitted[m], lens[m]
            if j < n:
                arr = arrs[m]
                if arr[j] <= now:
                    j = admitted[m] = bisect.bisect_right(arr, now, lo=j)
                    if j == n:
                        continue
                if arr[j] < nxt:
                    nxt = arr[j]
        return nxt

    def _finish_transfers(self, now: float) -> None:
        """Every load or offload that has ended by *now* takes effect (in order of its end)."""
        pending = self._pending
        while pending and pending[0][0] <= now:
            t_end, _s, kind, m = heapq.heappop(pending)
            self.state[m] = kind
            self.log.append((t_end, kind, m))
            if kind == "loaded":
                self.bytes_loaded += self.S
            else:
                self.bytes_offloaded += self.S

    def run(self) -> "Engine":
        """Run to the end: at each event time, finish the transfers that ended, admit the arrivals,
        schedule until nothing more can start, then sleep until the next event (the clock advances
        as a discrete-event kernel's timeout does, ``now + (next - now)``, e.g. simpy's)."""
        now = self.now
        pending, free = self._pending, self.compute_free
        arrival = -math.inf  # the first arrival not yet admitted (scheduling admits none)
        while True:
            if pending and pending[0][0] <= now:
                self._finish_transfers(now)
            # the next event: that arrival, the next transfer's end, or (while requests wait) the
            # first stage's next free time; before that arrival there is nothing to admit
            if arrival <= now:
                arrival = self._admit(now)
            nxt = arrival
            self._schedule(now)
            if pending:
                nxt = min(nxt, pending[0][0])
            if self._queued:
                f = free[0]  # the first stage's GPUs free together (_issue_batch)
                if f > now:
                    nxt = min(nxt, f)
            if not math.isfinite(nxt):
                self._write_times()
                return self
            now = self.now = now + (nxt - now)


def _stage_times(table, batch: int, tp: int, pp: int, profile, st) -> tuple[list[float], float]:
    """One stage's time for a batch of k = 1..batch requests (index 0 unused) and the hand-off
    time, from :func:`suite_computron.model.service_cost`, priced by each case itself."""
    times = [0.0]
    handoff = 0.0
    for k in range(1, batch + 1):
        svc = model.service_cost(table, k, tp, pp, profile, prompt_tokens=st["prompt_tokens"],
                                 output_tokens=st["output_tokens"], efficiency=st["efficiency"])
        times.append(svc.stage_time)
        handoff = svc.handoff
    return times, handoff


def simulate(scenario) -> tuple[Engine, dict]:
    """Build and run the engine of a simulate scenario; returns it and the settings used.

    Raises
    ------
    suite.errors.ParameterError
        A layer table instead of a serving workload; a layout or ``max_loaded`` that does not
        fit (:func:`suite_computron.model.check_fits`).
    """
    wl = scenario.workload
    if getattr(wl, "kind", "") != "serving":
        raise ParameterError(f"computron: simulate needs a serving workload (computron-c00 ... computron-c18), "
                             f"got the layer table {getattr(wl, 'name', wl)!r}")
    st = model.settings(scenario)
    prof = scenario.profile
    table = model.layer_table_of(wl)
    S = model.model_bytes(table)
    tp, pp, n = st["tp"], st["pp"], st["n"]
    _uses, parallel, swaps = model.VARIANTS[scenario.variant]
    model.check_fits(prof, table.name, S, tp, pp, st["max_loaded"], check_memory=swaps)
    ep = model.host_endpoint(prof)
    cost = model.swap_time(S, n, ep, parallel) if swaps else model.SwapCost(0.0, (0.0,) * n, "none", 0.0)
    stage_times, handoff = _stage_times(table, st["batch"], tp, pp, prof, st)
    duration = float(scenario.params.get("duration") or wl.duration)
    arrivals = [gamma_arrivals(r, wl.cv, duration, seed=(int(scenario.seed) * 1009 + i) % 2**32)
                for i, r in enumerate(wl.rates)]
    total = sum(len(a) for a in arrivals)
    if total > MAX_REQUESTS:
        from suite.api import Skip

        raise Skip(f"computron simulate: {total} requests > {MAX_REQUESTS}")
    eng = Engine(arrivals, st["max_loaded"], st["batch"], tp, pp, stage_times, handoff, cost.shard_times,
                 cost.shard_times, parallel, swaps, S).run()
    st.update(duration=duration, swap_time=cost.time, service_time=pp * stage_times[-1] + (pp - 1) * handoff,
              model_bytes=S)
    return eng, st


def _pcts(x: np.ndarray, qs: tuple[float, ...]) -> list[float]:
    """The qs-th percentiles of x (0 for no sample), from one ``numpy.percentile`` call: one
    partition of x for all of them, each value the float a call per q gives (the same order
    statistics and interpolation; checked on every simulate case of ``suite reproduce``)."""
    return [float(v) for v in np.percentile(x, qs)] if x.size else [0.0] * len(qs)


def _per_model_latencies(res, eng, lat: np.ndarray, rates) -> list[dict]:
    """Add each model's mean, p90 and p99 latency (s) to *res*; return one row per model."""
    rows = []
    for m in range(eng.M):
        a, b = int(eng.offset[m]), int(eng.offset[m + 1])
        x = lat[a:b]
        mean = float(x.mean()) if x.size else 0.0
        p90, p99 = _pcts(x, (90, 99))
        res.add(f"latency_mean_m{m}", mean, "s", "lower")
        res.add(f"latency_p90_m{m}", p90, "s", "lower")
        res.add(f"latency_p99_m{m}", p99, "s", "lower")
        rows.append({"model": m, "rate": float(rates[m]), "requests": int(b - a), "latency_mean": mean,
                     "latency_p90": p90, "latency_p99": p99})
    return rows


def evaluate(scenario):
    """Simulate fidelity (module docstring).

    Returns
    -------
    suite.Result
        ``latency_mean``, ``latency_p50``, ``latency_p90``, ``latency_p99`` (s; samples = every
        request's latency, for CDFs), the same per model (``latency_p90_m0``, ...),
        ``slo_attainment`` (1), ``requests``, ``batches``, ``loads``, ``offloads``,
        ``bytes_loaded``, ``bytes_offloaded``, ``bytes_moved``, ``resident_bytes`` (B, at the
        end), ``max_resident`` (models), ``gpu_busy_time`` (s, all GPUs), ``gpu_utilization``,
        ``makespan`` (s), ``load_time`` and ``service_time`` (s, from the model); artifacts
        ``per_model``, ``wall_s`` (the simulation's wall time),
        ``events`` (the first 5,000 (time, kind, model) records).
    """
    from suite.api import Result

    t0 = time.perf_counter()
    eng, st = simulate(scenario)
    wall = time.perf_counter() - t0
    lat = eng.done_t - np.concatenate(eng.arrivals) if eng.done_t.size else np.zeros(0)
    slo = float(scenario.params["slo"])
    res = Result()
    res.add("latency_mean", float(lat.mean()) if lat.size else 0.0, "s", "lower",
            samples=lat.tolist())
    p50, p90, p99 = _pcts(lat, (50, 90, 99))
    res.add("latency_p50", p50, "s", "lower")
    res.add("latency_p90", p90, "s", "lower")
    res.add("latency_p99", p99, "s", "lower")
    res.add("slo_attainment", float(np.mean(lat <= slo)) if lat.size else 1.0, "1", "higher")
    per_model = _per_model_latencies(res, eng, lat, scenario.workload.rates)
    resident = sum(1 for s in eng.state if s == "loaded")
    makespan = float(np.nanmax(eng.done_t)) if eng.done_t.size else 0.0
    res.add("requests", float(lat.size), "1", "none")
    res.add("batches", eng.batches, "1", "none")
    res.add("loads", eng.loads, "1", "lower")
    res.add("offloads", eng.offloads, "1", "lower")
    res.add("bytes_loaded", eng.bytes_loaded, "B", "lower")
    res.add("bytes_offloaded", eng.bytes_offloaded, "B", "lower")
    res.add("bytes_moved", eng.bytes_loaded + eng.bytes_offloaded, "B", "lower")
    res.add("resident_bytes", resident * eng.S if eng.swaps else 0.0, "B", "none")
    res.add("max_resident", eng.max_resident, "1", "none")
    res.add("gpu_busy_time", sum(eng.busy), "s", "none")
    res.add("gpu_utilization", sum(eng.busy) / (eng.n * makespan) if makespan > 0 else 0.0, "1", "none")
    res.add("makespan", makespan, "s", "none")
    res.add("load_time", st["swap_time"], "s", "lower")
    res.add("service_time", st["service_time"], "s", "lower")
    res.artifacts["per_model"] = per_model
    res.artifacts["events"] = [[round(t, 9), kind, m] for t, kind, m in eng.log[:5000]]
    res.artifacts["setup"] = {k: st[k] for k in ("tp", "pp", "max_loaded", "batch", "prompt_tokens", "duration")}
    res.artifacts["wall_s"] = wall  # simulated requests per wall second = requests / wall_s (not a metric: timing)
    return res
