"""Execute fidelity: PALSGD, DiLoCo, Local SGD and DDP on K simulated workers with real arrays.

Built on :class:`suite.collectives.dataparallel.Workers` (own parameter copies, shards of the
scenario's dataset workload, ``digits`` by default, a layer table being Skipped; seeded
mini-batch streams, relative speeds, ring all-reduce with a ledger). Every worker has its own
inner optimizer (AdamW or plain SGD). ``T`` steps, of which the local variants run the
first ``warmup`` as DDP steps [authors' code, ``local_sgd_start_iter``]:

* ``s-sgd`` (DDP): the gradients' weighted mean by all-reduce, then an inner-optimizer step on
  every worker (identical states). Clock ``+= max_i t_c,i + T_ar``.
* ``local-sgd``: inner steps; every H steps the models' mean by all-reduce replaces every model.
* ``diloco`` [Douillard23]: inner steps; every H steps ``Δ = mean_i(x̄ - x_i)`` by all-reduce,
  an outer Nesterov step on x̄ with Δ as its gradient, then every ``x_i <- x̄``.
* ``palsgd`` [Naganuma25, Algorithm 1 and the authors' code]: as DiLoCo, but at
  each inner step worker i draws ``b ~ U[0,1]``; if ``b < p`` it takes a pseudo-synchronization
  step ``x_i <- x_i - (γ η / p)(x_i - x̄)`` toward its (stale) copy of x̄, with no data and no
  communication; otherwise an inner-optimizer step with learning rate ``γ / (1 - p)``.

Between synchronizations the workers run independently: a round's time is the slowest worker's
busy time (its compute steps ``t_c,i`` and pseudo-syncs ``T_ps``) plus one all-reduce.

References
----------
.. [Naganuma25] H. Naganuma et al., TMLR 2025 (arXiv 2504.18454) and the authors' code
   ``postadaptive_localsgd_decoupled.py`` (Hiroki11x/Pseudo-Asynchronous-LocalSGD @ 2c37c48).
.. [Douillard23] A. Douillard et al., "DiLoCo", arXiv 2311.08455.
.. [Loshchilov19] I. Loshchilov, F. Hutter, "Decoupled Weight Decay Regularization", ICLR 2019 (AdamW).
.. [Sutskever13] I. Sutskever et al., ICML 2013 (Nesterov momentum as in torch.optim.SGD).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from suite.api import (FlatModel, ParameterError, Result, Scenario, Skip, Workers, clock_for, load_problem,
                       relative_speeds, require_dataset)

__all__ = ["AdamW", "SGD", "Nesterov", "pseudo_sync", "Setup", "setup", "run", "evaluate"]


# --------------------------------------------------------------------------- optimizers


@dataclass
class SGD:
    """Plain SGD: ``x <- x - lr g``."""

    lr: float

    def step(self, x: np.ndarray, g: np.ndarray, lr_scale: float = 1.0) -> np.ndarray:
        return x - self.lr * lr_scale * g


@dataclass
class AdamW:
    """AdamW [Loshchilov19] as torch.optim.AdamW: ``x <- x (1 - lr wd) - lr m̂ / (sqrt(v̂) + eps)``."""

    lr: float
    weight_decay: float = 0.0
    beta1: float = 0.9
    beta2: float = 0.999
    eps: float = 1e-8
    t: int = 0
    m: np.ndarray | None = None
    v: np.ndarray | None = None

    def step(self, x: np.ndarray, g: np.ndarray, lr_scale: float = 1.0) -> np.ndarray:
        if self.m is None:
            self.m, self.v = np.zeros_like(x), np.zeros_like(x)
        self.t += 1
        self.m = self.beta1 * self.m + (1 - self.beta1) * g
        self.v = self.beta2 * self.v + (1 - self.beta2) * g * g
        mh = self.m / (1 - self.beta1 ** self.t)
        vh = self.v / (1 - self.beta2 ** self.t)
        lr = self.lr * lr_scale
        return x * (1 - lr * self.weight_decay) - lr * mh / (np.sqrt(vh) + self.eps)


@dataclass
class Nesterov:
    """SGD with Nesterov momentum as torch.optim.SGD(nesterov=True) [Sutskever13]:
    ``buf <- mu buf + g`` (``buf = g`` at the first step), ``x <- x - lr (g + mu buf)``;
    with ``mu = 0``, plain SGD."""

    lr: float
    momentum: float = 0.9
    buf: np.ndarray | None = None

    def step(self, x: np.ndarray, g: np.ndarray) -> np.ndarray:
        if self.momentum == 0:
            return x - self.lr * g
        self.buf = g.copy() if self.buf is None else self.momentum * self.buf + g
        return x - self.lr * (g + self.momentum * self.buf)


def pseudo_sync(x: np.ndarray, xbar: np.ndarray, lr: float, eta: float, p: float) -> np.ndarray:
    """PALSGD's pseudo-synchronization step: ``x - (lr eta / p)(x - xbar)`` [Naganuma25, Alg. 1].

    A contraction toward ``xbar`` with factor ``|1 - lr eta / p|`` (<= 1 for ``0 < lr eta/p <= 2``);
    ``xbar`` is its fixed point.
    """
    return x - (lr * eta / p) * (x - xbar)


# --------------------------------------------------------------------------- runs


@dataclass
class Setup:
    """One execute run (built by :func:`setup`)."""

    variant: str
    workers: Workers
    steps: int
    H: int
    warmup: int
    p: float
    eta: float
    inner: list = field(default_factory=list)
    outer: Nesterov | None = None
    t_ps: float = 0.0
    seed: int = 0


def _inner(params) -> object:
    if params["inner"] == "sgd":
        return SGD(float(params["lr"]))
    return AdamW(float(params["lr"]), float(params["weight_decay"]))


def setup(variant: str, params, profile=None, seed: int = 0, dataset=None, clock_workload=None) -> Setup:
    """Build the workers and optimizers of one run from the technique's parameters.

    *dataset* is data other than the digits, as :func:`suite.api.require_dataset` passes it (the
    one check that it is a dataset with a loader is there, in :func:`evaluate`); *clock_workload*
    the resolved ``clock_workload`` layer table.
    """
    from suite.api import LayerTable

    K = int(params["workers"] or 4)
    prob = load_problem(K, params["split"], float(params["alpha"]), seed, dataset=dataset)
    model = FlatModel(prob.d, prob.classes, int(params["hidden"]))
    speeds = relative_speeds(K, float(params["hetero"]))
    b = int(params["batch"])
    F, nbytes = model.flops_per_sample, 8.0 * model.size
    cw = params.get("clock_workload") or ""
    if cw:
        wl = clock_workload  # resolved through the command's context: scenario.input("clock_workload")
        if wl is None:
            raise ParameterError(f"palsgd: parameter 'clock_workload': expected the workload {cw!r} resolved by "
                                 f"the runner (scenario.input('clock_workload')), got only its name")
        if not isinstance(wl, LayerTable):
            raise Skip(f"clock_workload {cw!r} is not a layer table")
        F, nbytes = 3.0 * wl.fwd_flops, 4.0 * wl.params
    if profile is not None and K > 1 and not profile.network:
        raise Skip(f"profile {profile.name!r} has no network for {K} workers")
    dtype = params["dtype"]
    if profile is not None:
        from suite_palsgd.model import peak_dtype

        dtype = peak_dtype(profile.require_device(), dtype)
    clock = clock_for(profile, F, nbytes, [b] * K, speeds, float(params["efficiency"]), dtype,
                      params.get("algorithm", "ring"))
    t_ps = 3.0 * nbytes / profile.require_device().memory_bandwidth if profile is not None else 0.0
    w = Workers(prob, model, [b] * K, clock, seed)
    return Setup(variant, w, int(params["steps"]), int(params["H"]), int(params["warmup"]), float(params["p"]),
                 float(params["eta"]), [_inner(params) for _ in range(K)],
                 Nesterov(float(params["outer_lr"]), float(params["outer_momentum"])), t_ps, seed)


def run(s: Setup) -> dict:
    """Run *s* in place. Returns ``{"pseudo_syncs": n, "synced_identical": bool}``."""
    w, T, H, v = s.workers, s.steps, s.H, s.variant
    K, c = w.K, w.clock
    p = s.p if v == "palsgd" else 0.0
    rng = np.random.default_rng([s.seed, 99])  # Bernoulli draws of the pseudo-sync steps
    extra = {"pseudo_syncs": 0, "synced_identical": True}
    w.record(0)
    warm = T if v == "s-sgd" else min(s.warmup, T)
    for t in range(warm):  # DDP steps
        grads = [w.gradient(i) for i in range(K)]
        g = w.allreduce_mean(grads, tag="grad")
        w.params = [s.inner[i].step(w.params[i], g[i]) for i in range(K)]
        w.advance(c.slowest + c.allreduce)
        w.record(t + 1)
    if v == "s-sgd":
        return extra
    xbar = w.average()  # the outer model (every replica equal after DDP)
    busy = np.zeros(K)
    t0 = w.time
    for t in range(warm, T):
        for i in range(K):
            if p > 0 and rng.random() < p:
                w.params[i] = pseudo_sync(w.params[i], xbar, s.inner[i].lr, s.eta, p)
                busy[i] += s.t_ps
                extra["pseudo_syncs"] += 1
            else:
                g = w.gradient(i)
                w.params[i] = s.inner[i].step(w.params[i], g, 1.0 / (1.0 - p))
                busy[i] += c.step[i]
        w.time = t0 + float(busy.max())
        if (t + 1 - warm) % H == 0:
            if v == "local-sgd":
                w.params = w.allreduce_mean(w.params, tag="model")
                xbar = w.params[0].copy()
            else:
                delta = w.allreduce_mean([xbar - x for x in w.params], tag="outer")
                xbar = s.outer.step(xbar, delta[0])
                w.params = [xbar.copy() for _ in range(K)]
            extra["synced_identical"] &= w.identical()
            w.advance(c.allreduce)
            busy[:] = 0.0
            t0 = w.time
        w.record(t + 1)
    return extra


#: what execute runs, as its Skip line names it (the workload is the data, never the network)
RUNS = ("palsgd execute trains a softmax classifier on a classification dataset workload (e.g. digits); "
        "--param clock_workload=<layer table> times its steps as that network's")


def evaluate(scenario: Scenario) -> Result:
    """Execute fidelity: train with the scenario's variant on the scenario's dataset workload;
    metrics and curves.

    Raises
    ------
    suite.Skip
        A workload that is not a classification dataset with a local loader (a layer table such
        as ``resnet-50``: its numbers would be the classifier's under the network's name;
        ``clock_workload`` times the steps as that network's), or a profile without a network
        for several workers.
    """
    s = setup(scenario.variant, scenario.params, scenario.profile, scenario.seed,
              require_dataset(scenario.workload, RUNS), scenario.input("clock_workload"))
    extra = run(s)
    w = s.workers
    res = w.result()
    res.add("pseudo_syncs", extra["pseudo_syncs"], "1", "none")
    res.add("oracle_error", w.allreduce_error, "1", "lower")
    res.add("synced_identical", 1.0 if extra["synced_identical"] else 0.0, "1", "none")
    res.artifacts["allreduce_time"] = w.clock.allreduce
    return res
