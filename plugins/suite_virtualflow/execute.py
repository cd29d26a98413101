"""VirtualFlow's reference implementation on real arrays, checked against a full-batch oracle.

Virtual node processing [Or22, abstract; ``virtual/virtual_helper.py`` of the authors' code]:
every step draws one global batch of B samples and cuts it into V virtual nodes of B/V
(:func:`suite.collectives.dataparallel.virtual_node_split`); the P simulated devices
(:class:`suite.collectives.dataparallel.Workers`, each holding a real parameter vector) run
their virtual nodes one after another, summing per-sample gradients; one real ring all-reduce
of the sums and the sample count gives every device the union's gradient; each applies the same
SGD step. A device with 0 virtual nodes holds a dummy batch (it joins the all-reduce with zeros).

Variants at this fidelity
-------------------------
* ``virtual``: ``V / P`` virtual nodes on each of P devices (P dividing V); ``resize`` changes P
  between steps (elasticity: ``"4,2,8"`` runs a third of the steps on each), V and B fixed.
* ``heterogeneous`` / ``fast-only``: the virtual nodes per device of the cost model's plan on the
  scenario's profile (:func:`suite_virtualflow.model.search_plan` /
  :func:`~suite_virtualflow.model.fast_only_plan`), every other device of the profile holding a
  dummy batch. The plan prices the layer table of the classifier that is trained
  (:func:`classifier_table`), or the scenario's layer table when it names a network.
* ``physical`` (baseline): no virtual nodes: P devices each run one batch of B/V, so the global
  batch is P B / V and the trajectory follows the hardware.

The oracle (independent of the substrate): plain full-batch gradient descent on the same B
samples per step, ``theta <- theta - lr * grad L_B(theta)`` with :meth:`FlatModel.loss_grad` on
the whole batch at once. ``trajectory_error`` is the largest ``|theta_device - theta_oracle|``
over every step and device; it is ~1e-16 for the virtual-node variants (summation order only)
and large for ``physical`` when P != V.

References
----------
.. [Or22] A. Or, H. Zhang, M. J. Freedman, VirtualFlow, MLSys 2022.
"""

from __future__ import annotations

import time

import numpy as np

from suite.api import CNNBuilder, Clock, FlatModel, LayerTable, ParameterError, Workers, load_problem, \
    virtual_node_split

__all__ = ["parse_resize", "classifier_table", "device_counts", "oracle_trajectory", "run", "evaluate"]

#: the variants that place their virtual nodes by the cost model's plan
PLANNERS = ("heterogeneous", "fast-only")


def parse_resize(text: str, virtual_nodes: int, devices: int) -> list[int]:
    """Device counts of the phases: ``""`` -> ``[devices]``; ``"4,2,8"`` -> ``[4, 2, 8]``.

    Raises
    ------
    ParameterError
        A count that is not a positive divisor of V (one line naming the parameter).
    """
    if not text or not str(text).strip():
        phases = [int(devices)]
        name = "devices"
    else:
        try:
            phases = [int(x) for x in str(text).replace(" ", "").split(",") if x]
        except ValueError:
            raise ParameterError(f"virtualflow: parameter 'resize': expected comma-separated device counts, "
                                 f"got {text!r}") from None
        name = "resize"
    for p in phases:
        if p < 1 or virtual_nodes % p:
            raise ParameterError(f"virtualflow: parameter {name!r}: expected a divisor of virtual_nodes "
                                 f"({virtual_nodes}), got {p}")
    return phases


def classifier_table(fm: FlatModel, dataset: str) -> LayerTable:
    """The layer table of the classifier *fm* trains, for the cost model to plan its virtual nodes.

    ``fc (d -> hidden)``, ``relu``, ``fc (hidden -> k)``, ``softmax`` (``hidden = 0``: ``fc (d -> k)``,
    ``softmax``), per-sample fp32 figures by :class:`suite.api.CNNBuilder`'s conventions; its
    ``params`` equal ``fm.size`` (digits, 16 hidden: 64 x 16 + 16 + 16 x 10 + 10 = 1,210). Named
    ``"<dataset>-mlp-<d>-<hidden>-<k>"`` (``"digits-mlp-64-16-10"``), kind ``"mlp"``.
    """
    widths = [fm.d, fm.hidden, fm.k] if fm.hidden else [fm.d, fm.k]
    b = CNNBuilder(f"{dataset}-mlp-" + "-".join(map(str, widths)), (fm.d,))
    x = b.input
    if fm.hidden:
        x = b.relu(b.fc(x, fm.hidden))
    b.softmax(b.fc(x, fm.k))
    return b.build(kind="mlp", description=f"the MLP classifier virtualflow's execute fidelity trains on {dataset}")


def device_counts(variant: str, virtual_nodes: int, devices: int, profile=None, workload=None,
                  batch: int | None = None, reference=None) -> list[int]:
    """Virtual nodes per simulated device for one phase of *variant*.

    ``virtual``: ``[V/P] * P``; ``physical``: ``[1] * P``; ``heterogeneous`` / ``fast-only``: the
    model's plan on *profile* and *workload*, one entry per device of the profile (0 = dummy).
    """
    if variant == "virtual":
        return [virtual_nodes // devices] * devices
    if variant == "physical":
        return [1] * devices
    from suite_virtualflow import model

    if profile is None or workload is None or not getattr(workload, "layers", None):
        raise ParameterError(f"virtualflow: variant {variant!r} at execute fidelity needs a profile and a "
                             f"layer table to plan the virtual nodes, got profile "
                             f"{getattr(profile, 'name', None)!r} and workload {getattr(workload, 'name', None)!r}")
    sm = model.step_model(workload, profile, variant, int(batch), virtual_nodes, devices, reference=reference)
    slots = model.device_slots(profile)
    out: list[int] = []
    for s, per in zip(slots, sm.plan.per_device()):
        out += per + [0] * (s.count - len(per))
    return out


def oracle_trajectory(fm: FlatModel, X: np.ndarray, y: np.ndarray, batches: list[np.ndarray], lr: float,
                      seed: int) -> list[np.ndarray]:
    """Full-batch gradient descent: the parameters after each step (same init as Workers)."""
    theta = fm.init(np.random.default_rng(seed))
    out = []
    for idx in batches:
        _, g = fm.loss_grad(theta, X[idx], y[idx])
        theta = theta - lr * g
        out.append(theta.copy())
    return out


def run(variant: str, batch: int, virtual_nodes: int, devices: int, steps: int, lr: float = 0.5,
        hidden: int = 16, resize: str = "", seed: int = 0, profile=None, workload=None, dataset=None,
        vn_counts: str = "", reference=None) -> dict:
    """Train with virtual nodes on simulated devices and compare with the oracle.

    Parameters
    ----------
    variant : {"virtual", "physical", "heterogeneous", "fast-only"}
    batch, virtual_nodes, devices, steps : int
        B (a multiple of V), V, P (a divisor of V for ``virtual``), steps (>= 1).
    lr, hidden : float, int
        SGD step size; hidden width of :class:`FlatModel` (0: logistic regression).
    resize : str
        ``""`` or device counts of equal-length phases (``"4,2,8"``), ``virtual`` only.
    seed : int
    vn_counts : str
        ``""`` or explicit virtual nodes per device (``"5,3,0,8"``, summing to V) for
        ``heterogeneous`` / ``fast-only`` instead of the model's plan.
    profile, workload : optional
        The plan's inputs: the profile, and a layer table (else the trained classifier's, :func:`classifier_table`).
    dataset : suite.workloads.Dataset, optional
        What is trained on. Default: scikit-learn's digits.

    Returns
    -------
    dict
        ``trajectory_error``, ``first_grad_error``, ``final_loss``, ``allreduces``,
        ``allreduce_error``, ``bytes_sent``, ``samples``, ``resizes``, ``phases``,
        ``counts`` (virtual nodes per device, per phase), ``wall`` (s per step), ``global_batch``,
        ``theta`` (device 0's final parameters), ``draws`` (the samples of each step),
        ``plan_workload`` (the name of the layer table the plan priced; None without a plan).

    Raises
    ------
    ParameterError
        B not a multiple of V; P not dividing V; a resize for another variant.
    """
    _check_batch_and_resize(variant, batch, virtual_nodes, resize)
    phases = parse_resize(resize, virtual_nodes, devices) if variant == "virtual" else [devices]
    prob = load_problem(workers=1, seed=seed, dataset=dataset)
    X, y = prob.X_train, prob.y_train
    if batch > len(y):
        raise ParameterError(f"virtualflow: parameter 'batch': expected <= {len(y)} (training samples), got {batch}")
    fm = FlatModel(prob.d, prob.classes, hidden=hidden)
    draws = _draw_batches(len(y), batch, steps, seed)
    b = batch // virtual_nodes
    plan = _plan_table(variant, vn_counts, workload, fm, dataset)
    counts = _phase_counts(variant, virtual_nodes, phases, vn_counts, profile, plan, batch, reference)
    V_eff = [sum(c) for c in counts]  # virtual nodes per step (P for physical)
    used = [d[: V_eff[_phase_of(s, len(phases), steps)] * b] for s, d in enumerate(draws)]
    w, err, first, wall = _train(prob, fm, counts, len(phases), b, draws, used, lr, seed)
    loss, _ = fm.loss_acc(w.params[0], X, y)
    return {
        "trajectory_error": err, "first_grad_error": first, "final_loss": loss, "allreduces": w.allreduces,
        "allreduce_error": w.allreduce_error, "bytes_sent": float(sum(w.ledger.sent_by().values())),
        "bytes_received": float(sum(w.ledger.received_by().values())),
        "samples": int(w.samples), "resizes": int(w.resizes), "phases": phases, "counts": counts,
        "wall": wall, "global_batch": V_eff[-1] * b, "identical": w.identical(), "theta": w.params[0].copy(),
        "draws": used, "plan_workload": plan.name if plan is not None else None,
    }


def _plan_table(variant: str, vn_counts: str, workload, fm: FlatModel, dataset) -> LayerTable | None:
    """The layer table the cost model plans the virtual nodes on: None for no plan (``virtual``,
    ``physical``, or explicit ``vn_counts``); *workload* when it is a layer table (a network's
    plan, run with the classifier); else the classifier's own, :func:`classifier_table` of *fm* on
    *dataset* (None: the digits), so that the plan and the training are the same model."""
    if variant not in PLANNERS or (vn_counts and str(vn_counts).strip()):
        return None
    if getattr(workload, "layers", None):
        return workload
    return classifier_table(fm, dataset.name if dataset is not None else "digits")


def _check_batch_and_resize(variant: str, batch: int, virtual_nodes: int, resize: str) -> None:
    """Refuse a batch B that is not a multiple of V, and a ``resize`` for another variant than ``virtual``.

    Raises
    ------
    ParameterError
        One line naming the parameter.
    """
    if batch % virtual_nodes:
        raise ParameterError(f"virtualflow: parameter 'batch': expected a multiple of virtual_nodes "
                             f"({virtual_nodes}), got {batch}")
    if resize and variant != "virtual":
        raise ParameterError(f"virtualflow: parameter 'resize': only the 'virtual' variant resizes, got "
                             f"variant {variant!r}")


def _draw_batches(n: int, batch: int, steps: int, seed: int) -> list[np.ndarray]:
    """The B sample indices (of *n* training samples) of each step: without replacement within a step."""
    rng = np.random.default_rng([seed, 7])
    return [rng.choice(n, size=batch, replace=False) for _ in range(steps)]


def _phase_counts(variant: str, virtual_nodes: int, phases: list[int], vn_counts: str, profile, workload,
                  batch: int, reference) -> list[list[int]]:
    """Virtual nodes per device of each phase: the explicit ``vn_counts`` (one phase), else
    :func:`device_counts` for each phase's device count."""
    if vn_counts and str(vn_counts).strip():
        return [_explicit_counts(vn_counts, variant, virtual_nodes)]
    return [device_counts(variant, virtual_nodes, p, profile, workload, batch, reference) for p in phases]


def _phase_of(s: int, n_phases: int, steps: int) -> int:
    """The phase (index into the resize phases) step *s* of *steps* belongs to: equal-length phases."""
    return min(s * n_phases // steps, n_phases - 1)


def _clock(c) -> Clock:
    """The simulated clock of devices running *c* virtual nodes each (1 ms per virtual node, 1 ms per all-reduce)."""
    return Clock(step=np.asarray(c, float) * 1e-3, allreduce=1e-3)


def _train(prob, fm: FlatModel, counts: list[list[int]], n_phases: int, b: int, draws: list[np.ndarray],
           used: list[np.ndarray], lr: float, seed: int) -> tuple[Workers, float, float | None, list[float]]:
    """Run the steps on simulated devices, resizing between phases, and measure against the oracle.

    *counts* are the virtual nodes per device of each of the *n_phases* phases, *b* = B/V the
    samples of one virtual node, *draws* the oracle's B samples per step and *used* the samples the
    devices run (the first ``sum(counts) * b`` of each draw). Returns the :class:`Workers` after the last step,
    ``trajectory_error`` (max |theta_device - theta_oracle| over steps and devices),
    ``first_grad_error`` (max |g - g_oracle| of step 0) and the measured wall time of each step (s).
    """
    X, y = prob.X_train, prob.y_train
    steps = len(draws)
    V_eff = [sum(c) for c in counts]
    oracle = oracle_trajectory(fm, X, y, draws, lr, seed)
    w = Workers(prob if len(counts[0]) == 1 else _reshape(prob, len(counts[0])), fm,
                [c * b for c in counts[0]], _clock(counts[0]), seed)
    err, first, wall = 0.0, None, []
    phase = 0
    for s in range(steps):
        ph = _phase_of(s, n_phases, steps)
        if ph != phase:
            phase = ph
            w.resize([c * b for c in counts[ph]], _clock(counts[ph]))
        split = virtual_node_split(used[s], V_eff[ph], counts[ph])
        t0 = time.perf_counter()
        g = w.sgd_step(lr, idx=split)
        wall.append(time.perf_counter() - t0)
        if s == 0:
            theta0 = fm.init(np.random.default_rng(seed))
            _, g_ref = fm.loss_grad(theta0, X[draws[0]], y[draws[0]])
            first = float(np.max(np.abs(g - g_ref)))
        err = max(err, max(float(np.max(np.abs(p - oracle[s]))) for p in w.params))
    return w, err, first, wall


def _explicit_counts(vn_counts: str, variant: str, virtual_nodes: int) -> list[int]:
    """Parse ``vn_counts`` ("5,3,0,8"): non-negative virtual nodes per device summing to V.

    Raises
    ------
    ParameterError
        Another variant than heterogeneous / fast-only, not integers, negative, or a wrong sum.
    """
    if variant not in PLANNERS:
        raise ParameterError(f"virtualflow: parameter 'vn_counts': only 'heterogeneous' and 'fast-only' take "
                             f"explicit counts, got variant {variant!r}")
    try:
        explicit = [int(x) for x in str(vn_counts).replace(" ", "").split(",") if x]
    except ValueError:
        raise ParameterError(f"virtualflow: parameter 'vn_counts': expected comma-separated integers, "
                             f"got {vn_counts!r}") from None
    if any(c < 0 for c in explicit) or sum(explicit) != virtual_nodes:
        raise ParameterError(f"virtualflow: parameter 'vn_counts': expected non-negative counts summing to "
                             f"virtual_nodes ({virtual_nodes}), got {vn_counts!r}")
    return explicit


def _reshape(prob, k: int):
    from suite.api import reshard

    return reshard(prob, k, 0)


#: what execute runs, as its Skip line names it (the workload is the data, never the trained network)
RUNS = ("virtualflow execute trains an MLP classifier on a classification dataset workload (e.g. digits); "
        "'heterogeneous' and 'fast-only' take a layer table to plan their virtual nodes")


def evaluate(scenario):
    """Execute fidelity: one training run of the scenario's variant against the oracle.

    Reads ``batch``, ``virtual_nodes``, ``devices``, ``steps``, ``lr``, ``hidden``, ``resize``,
    ``vn_counts`` and the workload. A dataset (None: the digits) is trained on; ``heterogeneous`` /
    ``fast-only`` plan their virtual nodes on that classifier's own layer table
    (:func:`classifier_table`, artifact ``plan_workload`` ``"digits-mlp-64-16-10"``), so the plan
    and the training are one model. On a layer table they plan on the network's layers and train
    the digits (the classifier, not the network, runs: its bytes and times are the classifier's).

    Returns
    -------
    suite.Result
        ``trajectory_error`` (max |theta - theta_oracle| over steps and devices),
        ``first_grad_error``, ``final_loss``, ``allreduces``, ``allreduces_per_step``,
        ``allreduce_error``, ``bytes_sent`` (B), ``samples``, ``resizes``, ``global_batch``,
        ``replicas_identical`` (1/0), ``step_wall_time`` (s, measured, with samples); artifacts
        ``counts``, ``phases``, ``dataset`` (what was trained on) and, for a plan, ``plan_workload``.

    Raises
    ------
    suite.Skip
        ``elastic`` / ``static`` (simulate fidelity only); ``resize`` on another variant than
        ``virtual``; a planning variant given ``vn_counts`` and a layer table (no plan reads the
        table, so the digits would run under the network's name); any other run on a workload
        that is not a classification dataset with a local loader (``resnet-50`` for ``virtual``).
    """
    from suite_virtualflow.model import EFFICIENCY_INPUT, devices_of

    p = scenario.params
    ds = _trained_dataset(scenario)
    out = run(scenario.variant, int(p["batch"]), int(p["virtual_nodes"]), devices_of(p, scenario.profile),
              int(p["steps"]), float(p["lr"]), int(p["hidden"]), str(p.get("resize") or ""), int(scenario.seed),
              scenario.profile, scenario.workload, ds, str(p.get("vn_counts") or ""),
              reference=scenario.inputs.get(EFFICIENCY_INPUT))
    res = _result(out, scenario.variant, int(p["steps"]))
    res.artifacts["counts"] = out["counts"]
    res.artifacts["phases"] = out["phases"]
    res.artifacts["dataset"] = ds.name if ds is not None else "digits"
    if out["plan_workload"] is not None:
        res.artifacts["plan_workload"] = out["plan_workload"]
    return res


def _trained_dataset(scenario):
    """The dataset *scenario*'s run trains on (None: the digits), or the :class:`suite.api.Skip` of a
    case execute does not run (see :func:`evaluate`)."""
    from suite.api import Skip, require_dataset

    variant, p, wl = scenario.variant, scenario.params, scenario.workload
    if variant in ("elastic", "static"):
        raise Skip(f"virtualflow: variant {variant!r} is a scheduler: use --fidelity simulate")
    if p.get("resize") and variant != "virtual":
        raise Skip(f"virtualflow: 'resize' applies to the 'virtual' variant only, not {variant!r}")
    if variant in PLANNERS and getattr(wl, "layers", None):
        if not p.get("vn_counts"):
            return None  # the network's layer table plans; the digits classifier runs the plan
        raise Skip(f"virtualflow: 'vn_counts' replaces the plan of {variant!r}, so the workload is what is trained: "
                   f"give a dataset workload (e.g. digits) or drop vn_counts to plan on the layer table of {wl.name!r}")
    return require_dataset(wl, RUNS)


def _result(out: dict, variant: str, steps: int):
    """The metrics of :func:`run`'s *out* for *variant* over *steps* steps (see :func:`evaluate`)."""
    from suite.api import Result

    res = Result()
    res.add("trajectory_error", out["trajectory_error"], "1", "lower")
    res.add("first_grad_error", out["first_grad_error"], "1", "lower")
    res.add("final_loss", out["final_loss"], "1", "lower")
    res.add("allreduces", out["allreduces"], "1", "none")
    res.add("allreduces_per_step", out["allreduces"] / steps, "1", "none")
    res.add("allreduce_error", out["allreduce_error"], "1", "lower")
    res.add("bytes_sent", out["bytes_sent"], "B", "lower")
    res.add("bytes_received", out["bytes_received"], "B", "lower")
    if variant != "physical":  # physical's batch follows P: it is not the oracle's run
        res.add("oracle_error", out["trajectory_error"], "1", "lower")
    res.add("samples", out["samples"], "samples", "none")
    res.add("resizes", out["resizes"], "1", "none")
    res.add("global_batch", out["global_batch"], "samples", "none")
    res.add("replicas_identical", 1.0 if out["identical"] else 0.0, "1", "higher")
    wall = out["wall"]
    res.add("step_wall_time", float(np.median(wall)), "s", "lower", samples=wall)
    return res
