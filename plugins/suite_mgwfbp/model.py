"""Cost model of MG-WFBP and its baselines: grouping rules and the wait-free-backprop timeline.

Everything here is a pure function of per-layer backward times, per-layer gradient sizes and an
all-reduce cost ``t_c(m) = a + b m`` (s, with m in bytes). Layers are numbered 0..L-1 in forward
order; backward runs from L-1 down to 0; a group of contiguous layers is all-reduced as one
message as soon as its lowest-index layer's gradient is ready and the (single, serial) link is
free (:func:`suite.perf.grouped_wfbp_timeline`).

Grouping rules (one per variant)
--------------------------------
``sync``     one group of all layers, all-reduced after backward (SyncEASGD-style) [Shi19 §I].
``wfbp``     one group per layer (wait-free backprop) [Zhang17 §3.1].
``bucket``   fixed-size buckets filled from the last layer down, closed once they hold at least
             the cap (PyTorch DDP's ``bucket_cap_mb``, default 25 MiB) [Li20 §3.2.3].
``mg-wfbp``  the paper's merge rule, as implemented in the authors' code [Shi19; R].

References
----------
.. [Shi19] S. Shi, X. Chu, B. Li, "MG-WFBP: Efficient Data Communication for Distributed
   Synchronous SGD Algorithms", IEEE INFOCOM 2019, pp. 172-180 (arXiv 1811.11141).
.. [R] The authors' code, github.com/HKBU-HPML/MG-WFBP @ 5b8ad54,
   ``distributed_optimizer.py::_generate_groups_mgwfbp`` (merge rule, alpha/beta tables) and
   ``_generate_groups_with_threshold`` (fixed-size groups).
.. [Zhang17] H. Zhang et al., "Poseidon", USENIX ATC 2017, §3.1 (wait-free backpropagation).
.. [Li20] S. Li et al., "PyTorch Distributed: Experiences on Accelerating Data Parallel
   Training", VLDB 2020, §3.2.3 (gradient bucketing, default bucket_cap_mb = 25).
.. [BC] The authors' INFOCOM implementation, B-Caffe, github.com/hclhkbu/B-Caffe @ fdb5595,
   ``src/caffe/distributed.cpp``: ``DistManager::ReduceLoop`` (the path of one message: wait for
   every GPU of the node, copy GPU -> host, ``MPI_Allreduce`` on host buffers, scale, copy host ->
   each GPU) and ``DistManager::allreduce_time`` (its price: ``2 n alpha + 2 (n-1) M beta / n``
   with ``alpha = alpha_p n``, ``alpha_p = 20`` us, ``beta = 8 / 10e9`` s/B, n MPI ranks). The
   profile ``k80-cluster-bcaffe-10gbe`` declares that testbed (8 ranks, 10 Gbit/s, a message
   start-up of alpha = 160 us), and :func:`suite.perf.collective_time` prices it like any other.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

from suite.api import ParameterError, Timeline, grouped_wfbp_timeline

__all__ = [
    "CommCost",
    "LayerCosts",
    "groups_sync",
    "groups_wfbp",
    "groups_bucket",
    "groups_mgwfbp",
    "groups_optimal",
    "group_comm_times",
    "schedule",
    "iteration_time",
    "all_contiguous_groupings",
    "brute_force_best",
    "comm_cost_from_profile",
    "comm_cost",
    "COMM_MODELS",
    "layer_costs",
    "GROUPERS",
]


# --------------------------------------------------------------------------- inputs


@dataclass(frozen=True)
class CommCost:
    """All-reduce time of one message of m bytes: ``t_c(m) = a + b m`` (0 for m = 0).

    Attributes
    ----------
    a : float
        Start-up time of one all-reduce (s).
    b : float
        Time per byte (s/B).
    source : str
        Where (a, b) came from: ``"fit"`` (the profile's published fit for this worker count) or
        ``"formula:<algorithm>"`` (derived from the alpha-beta formula of the network level).
    """

    a: float
    b: float
    source: str = ""

    def time(self, nbytes: float) -> float:
        if nbytes <= 0:
            return 0.0
        return self.a + self.b * nbytes


@dataclass(frozen=True)
class LayerCosts:
    """Per-layer inputs of the schedule (forward order), plus the forward time.

    Attributes
    ----------
    names : tuple of str
    fwd : float
        Total forward time (s).
    bwd : tuple of float
        Backward time of each gradient unit (s).
    nbytes : tuple of float
        Gradient bytes of each unit (B).
    """

    names: tuple[str, ...]
    fwd: float
    bwd: tuple[float, ...]
    nbytes: tuple[float, ...]

    def __post_init__(self):
        if not (len(self.names) == len(self.bwd) == len(self.nbytes)):
            raise ValueError("names, bwd and nbytes must have one entry per layer")
        if any(t < 0 for t in self.bwd) or any(m < 0 for m in self.nbytes) or self.fwd < 0:
            raise ValueError("times and sizes must be >= 0")

    @property
    def L(self) -> int:
        return len(self.bwd)


# --------------------------------------------------------------------------- grouping rules


def groups_sync(L: int) -> list[list[int]]:
    """One group with every layer (single all-reduce after backward)."""
    return [list(range(L))] if L else []


def groups_wfbp(L: int) -> list[list[int]]:
    """One group per layer, listed last layer first (the order they are communicated)."""
    return [[l] for l in range(L - 1, -1, -1)]


def groups_bucket(nbytes: Sequence[float], cap_bytes: float) -> list[list[int]]:
    """Fixed-size buckets, filled from the last layer down (PyTorch DDP / [R] threshold groups).

    A bucket takes layers in backward order and is closed as soon as it holds at least
    ``cap_bytes``; the remainder forms the last bucket [Li20 §3.2.3]. DDP's smaller first bucket
    (1 MiB) is not modelled.

    Parameters
    ----------
    nbytes : sequence of float, length L, forward order
        Gradient bytes of each layer.
    cap_bytes : float
        Bucket cap (B), > 0.

    Returns
    -------
    list of list of int
        Groups in communication order (last layer first); each group in ascending layer order.
    """
    if cap_bytes <= 0:
        raise ParameterError(f"parameter 'bucket_mb': expected > 0, got a cap of {cap_bytes} B")
    groups: list[list[int]] = []
    cur: list[int] = []
    size = 0.0
    for l in range(len(nbytes) - 1, -1, -1):
        cur.append(l)
        size += nbytes[l]
        if size >= cap_bytes:
            groups.append(sorted(cur))
            cur, size = [], 0.0
    if cur:
        groups.append(sorted(cur))
    return groups


def _comm_start(tb: Sequence[float], tc: Sequence[float], taub: Sequence[float]) -> list[float]:
    """tau_c[l]: when layer l's message starts [R]: tau_c[L-1] = tau_b[L-1] + t_b[L-1];
    tau_c[l] = max(tau_c[l+1] + t_c[l+1], tau_b[l] + t_b[l])."""
    L = len(tb)
    tauc = [0.0] * L
    tauc[L - 1] = taub[L - 1] + tb[L - 1]
    for l in range(L - 2, -1, -1):
        tauc[l] = max(tauc[l + 1] + tc[l + 1], taub[l] + tb[l])
    return tauc


def groups_mgwfbp(bwd: Sequence[float], nbytes: Sequence[float], comm: CommCost
                  ) -> tuple[list[list[int]], float]:
    """The MG-WFBP merge rule [Shi19; R ``_generate_groups_mgwfbp``].

    For l = L-1 down to 1, layer l joins layer l-1's message when :func:`_should_merge` says so;
    a merge sets ``p[l-1] += p[l]``, ``t_c[l] = 0``, ``t_c[l-1] = a + b p[l-1]`` and recomputes
    the message starts tau_c (:func:`_comm_start`). Without a merge, layer l closes its group.

    Each merge is locally optimal (it never delays the end of the merged message), so the result is
    never slower than WFBP; it is not always the best contiguous grouping, though (see
    :func:`groups_optimal`, and docs/techniques/mg-wfbp.md for a 3-layer counterexample).

    Parameters
    ----------
    bwd : sequence of float, length L, forward order
        Backward time of each layer (s).
    nbytes : sequence of float, length L
        Gradient bytes of each layer (B), all > 0 (a layer without parameters is not a gradient
        unit; see :func:`layer_costs`).
    comm : CommCost
        ``a`` (s) and ``b`` (s/B).

    Returns
    -------
    groups : list of list of int
        Contiguous groups in communication order (last layer first), ascending inside.
    predicted : float
        The rule's own end of communication after backward starts, ``tau_c[0] + t_c[0]`` (s);
        the timeline's ``max(backward, comm_end)`` when the last message is non-empty.

    Raises
    ------
    ValueError
        Lengths differ, or a layer has no gradient bytes.
    """
    L = len(bwd)
    if L == 0:
        return [], 0.0
    _check_rule_inputs(L, nbytes)
    tb = [float(x) for x in bwd]
    p = [float(x) for x in nbytes]
    tc = [comm.time(x) for x in p]
    taub = _backward_starts(tb)
    tauc = _comm_start(tb, tc, taub)
    groups: list[list[int]] = []
    group: list[int] = []
    for l in range(L - 1, 0, -1):
        group.append(l)
        if _should_merge(l, tb, tc, taub, tauc, comm.a):
            tc[l] = 0.0
            p[l - 1] += p[l]
            p[l] = 0.0
            tc[l - 1] = comm.time(p[l - 1])
            tauc = _comm_start(tb, tc, taub)
        else:
            groups.append(sorted(group))
            group = []
    group.append(0)
    groups.append(sorted(group))
    return groups, tauc[0] + tc[0]


def _check_rule_inputs(L: int, nbytes: Sequence[float]) -> None:
    """One positive gradient size per layer, or ValueError."""
    if len(nbytes) != L:
        raise ValueError("need one gradient size per layer")
    if any(m <= 0 for m in nbytes):
        raise ValueError("every layer of the merge rule must have a gradient (nbytes > 0)")


def _backward_starts(tb: Sequence[float]) -> list[float]:
    """tau_b[l]: when layer l's backward starts: tau_b[L-1] = 0, tau_b[l] = tau_b[l+1] + t_b[l+1]."""
    L = len(tb)
    taub = [0.0] * L
    for l in range(L - 2, -1, -1):
        taub[l] = taub[l + 1] + tb[l + 1]
    return taub


def _should_merge(l: int, tb: Sequence[float], tc: Sequence[float], taub: Sequence[float],
                  tauc: Sequence[float], a: float) -> bool:
    """The rule's test for layer l [R]: with ``e = tau_b[l-1] + t_b[l-1]`` (when layer l-1's
    gradient is ready), merge when ``e < tau_c[l] + t_c[l]`` (l's message would still be in
    flight) and either ``tau_c[l] > e`` (it has not started) or the wait ``e - tau_c[l] < a``
    (less than the start-up time saved)."""
    e = taub[l - 1] + tb[l - 1]
    if e >= tauc[l] + tc[l]:
        return False
    return tauc[l] > e or e - tauc[l] < a


def group_comm_times(groups: Sequence[Sequence[int]], nbytes: Sequence[float], comm: CommCost) -> list[float]:
    """``t_c`` of each group: ``a + b * sum(bytes of its layers)`` (0 for an empty message)."""
    return [comm.time(sum(nbytes[l] for l in g)) for g in groups]


def schedule(costs: LayerCosts, groups: Sequence[Sequence[int]], comm: CommCost) -> Timeline:
    """The wait-free-backprop timeline of a grouping (:func:`suite.perf.grouped_wfbp_timeline`).

    A group starts when its lowest-index layer's gradient is ready and the link is free; it takes
    ``a + b * bytes`` [Shi19 §III]. Returns the :class:`suite.perf.Timeline` (iteration time =
    forward + max(backward, end of communication)).
    """
    return grouped_wfbp_timeline(costs.fwd, costs.bwd, group_comm_times(groups, costs.nbytes, comm), groups)


def iteration_time(costs: LayerCosts, groups: Sequence[Sequence[int]], comm: CommCost) -> float:
    """Iteration time (s) of a grouping: ``t_f + max(sum t_b, end of the last all-reduce)``."""
    return schedule(costs, groups, comm).iteration_time


def groups_optimal(bwd: Sequence[float], nbytes: Sequence[float], comm: CommCost
                   ) -> tuple[list[list[int]], float]:
    """The best contiguous grouping, exactly, by dynamic programming (our oracle, not the paper's).

    Let ``r_k`` be when layer k's gradient is ready (``sum_{j >= k} t_b[j]``) and ``E[j]`` the
    earliest time the link can be done with layers j..L-1 under any contiguous grouping
    (``E[L] = 0``). A last group k..j starts at ``max(r_k, E[j+1])`` and lasts
    ``a + b * bytes(k..j)``, so

        ``E[k] = min_{j >= k} max(r_k, E[j+1]) + t_c(bytes(k..j))``.

    This is exact because the end of every later message is non-decreasing in the time the link
    becomes free (the schedule is monotone), so an optimal grouping of layers k..L-1 may use an
    earliest-finishing grouping of j+1..L-1. O(L^2).

    Returns
    -------
    groups : list of list of int
        An optimal grouping in communication order (last layer first).
    comm_end : float
        ``E[0]`` (s from the start of backward).
    """
    L = len(bwd)
    if L == 0:
        return [], 0.0
    ready = [0.0] * L
    t = 0.0
    for l in range(L - 1, -1, -1):
        t += bwd[l]
        ready[l] = t
    E = [0.0] * (L + 1)
    choice = [L - 1] * L
    for k in range(L - 1, -1, -1):
        best, arg = math.inf, k
        size = 0.0
        for j in range(k, L):
            size += nbytes[j]
            v = max(ready[k], E[j + 1]) + comm.time(size)
            if v < best:
                best, arg = v, j
        E[k], choice[k] = best, arg
    groups: list[list[int]] = []
    k = 0
    while k < L:
        j = choice[k]
        groups.append(list(range(k, j + 1)))
        k = j + 1
    groups.reverse()
    return groups, E[0]


def all_contiguous_groupings(L: int):
    """Every partition of 0..L-1 into contiguous groups (2^(L-1) of them), communication order."""
    if L == 0:
        yield []
        return
    for mask in range(1 << (L - 1)):
        groups, cur = [], [0]
        for l in range(1, L):
            if mask >> (l - 1) & 1:
                groups.append(cur)
                cur = [l]
            else:
                cur.append(l)
        groups.append(cur)
        yield groups[::-1]


def brute_force_best(costs: LayerCosts, comm: CommCost) -> tuple[list[list[int]], float]:
    """Best iteration time over all 2^(L-1) contiguous groupings (exhaustive; for L <= ~14)."""
    best, arg = math.inf, None
    for g in all_contiguous_groupings(costs.L):
        t = iteration_time(costs, g, comm)
        if t < best:
            best, arg = t, g
    return arg, best


GROUPERS = ("sync", "wfbp", "bucket", "mg-wfbp")


# --------------------------------------------------------------------------- from a profile


_ALGOS = ("ring", "tree", "rabenseifner", "hierarchical")


def comm_cost_from_profile(profile, workers: int, algorithm: str = "ring", use_fit: bool = True) -> CommCost:
    """All-reduce ``(a, b)`` for *workers* on a profile.

    1. With ``use_fit``, the profile's published fit for exactly this worker count
       (``suite.perf.allreduce_fit``, e.g. the authors' regression on the K80 clusters [R]).
       The fit replaces the network model: bandwidth, latency and topology of the profile are
       then NOT read (the source string and the ``comm_model`` artifact say so).
    2. Otherwise the linear coefficients of *algorithm*'s all-reduce priced by
       :func:`suite.perf.collective_time` over the workers packed onto the profile's nodes
       (``group_of``): every level the group crosses, its bandwidth, latency, NICs and
       topology, and the reduction term. ``ring``, ``tree``, ``rabenseifner`` and
       ``hierarchical`` (intra-node reduce-scatter, inter-node all-reduce, intra-node
       all-gather) as documented there. For a fixed algorithm the time is the maximum of
       affine pieces in m; ``a`` and ``b`` are read at m1 = 1 B and m2 = 1 MiB
       (``b = (T(m2) - T(m1)) / (m2 - m1)``, ``a = T(m1) - b m1``; exact for the one-piece
       algorithms, a chord for a ring through several levels whose slowest hop changes with m).

    Parameters
    ----------
    profile : suite.hardware.Profile
    workers : int
        Number of data-parallel workers P (>= 1).
    algorithm : {"ring", "tree", "rabenseifner", "hierarchical"}
    use_fit : bool

    Returns
    -------
    CommCost
        ``a`` (s), ``b`` (s/B) and where they came from. Zero for P = 1.

    Raises
    ------
    suite.Skip
        P > 1 and the profile has no network level.
    """
    from suite.api import Skip, allreduce_fit, collective_time, group_of

    if workers <= 1:
        return CommCost(0.0, 0.0, "single worker: no communication")
    if not profile.network:
        raise Skip(f"profile {profile.name!r} has no [[network]] level; {workers} workers need one")
    if use_fit:
        fit = allreduce_fit(profile, workers)
        if fit is not None:
            return CommCost(fit[0], fit[1], f"fit: published all-reduce fit of network level "
                                            f"{profile.network[-1].name!r} for {workers} workers "
                                            "(the profile's bandwidth, latency and topology are not read; "
                                            "use_fit=false prices the network model)")
    if algorithm not in _ALGOS:
        raise ParameterError(f"parameter 'algorithm': expected one of {list(_ALGOS)}, got {algorithm!r}")
    group = group_of(profile, workers)
    m1, m2 = 1.0, 2.0**20
    t1 = collective_time("allreduce", m1, group, profile, algorithm).time
    t2 = collective_time("allreduce", m2, group, profile, algorithm).time
    b = (t2 - t1) / (m2 - m1)
    a = t1 - b * m1
    return CommCost(max(a, 0.0), max(b, 0.0),
                    f"formula:{algorithm} by suite.perf.collective_time over {group.ranks_per_node} ranks/node x "
                    f"{group.nodes} nodes ({', '.join(l.name for l in profile.network)})")


#: Where the all-reduce ``(a, b)`` of the model fidelity come from (parameter ``comm_model``).
COMM_MODELS = ("profile", "b-caffe")


def comm_cost(params, profile, workers: int) -> CommCost:
    """The all-reduce ``(a, b)`` of a scenario: :func:`comm_cost_from_profile` with
    ``params['algorithm']`` and ``params['use_fit']``.

    ``params['comm_model']`` is deprecated (removed in 0.4.0): ``"b-caffe"`` priced the authors'
    B-Caffe formula outside the network model; it now warns and prices through the profile like
    ``"profile"``. The authors' testbed is the profile ``k80-cluster-bcaffe-10gbe``, whose declared
    network gives B-Caffe's host-staged path to :func:`suite.perf.collective_time` [BC].

    Raises
    ------
    suite.ParameterError
        An unknown ``comm_model``.
    suite.Skip
        As :func:`comm_cost_from_profile`.
    """
    source = params.get("comm_model", "profile")
    if source not in COMM_MODELS:
        raise ParameterError(f"parameter 'comm_model': expected one of {list(COMM_MODELS)}, got {source!r}")
    if source == "b-caffe":
        warnings.warn("mg-wfbp parameter comm_model='b-caffe' is deprecated and removed in 0.4.0: all-reduces are "
                      "priced by suite.perf.collective_time from the profile (as comm_model='profile'); for the "
                      "authors' B-Caffe testbed use profile 'k80-cluster-bcaffe-10gbe'", FutureWarning, stacklevel=2)
    comm = comm_cost_from_profile(profile, workers, params["algorithm"], params["use_fit"])
    if source == "b-caffe":  # said in the stored result too: a worker's warning reaches no terminal
        comm = replace(comm, source=f"{comm.source}; comm_model='b-caffe' is deprecated (removed in 0.4.0): "
                                    "priced from the profile")
    return comm


def layer_costs(table, batch: int, device, efficiency: float, dtype: str = "fp32",
                grad_bytes: int | None = None) -> LayerCosts:
    """Gradient units of a layer table with their backward times and gradient bytes.

    Per-layer forward/backward times come from :func:`suite.perf.layer_times` (roofline with one
    stated compute efficiency) for a per-worker batch. Every layer that owns parameters is one
    gradient unit; the backward time of parameter-free layers (pool, activation, ...) is added to
    the next parameter layer below them in backward order (the one whose gradient they delay);
    parameter-free layers before the first parameter layer are added to unit 0.

    Parameters
    ----------
    table : suite.workloads.LayerTable
    batch : int
        Per-worker batch size (samples).
    device : suite.hardware.Device
    efficiency : float
        Achieved fraction of peak FLOP/s, in (0, 1].
    dtype : str
        Which peak to use (``"fp32"``).
    grad_bytes : int or None
        Bytes per gradient element; the table's ``dtype_bytes`` when None.

    Returns
    -------
    LayerCosts

    Raises
    ------
    suite.Skip
        The table has no layer with parameters.
    """
    from suite.api import Skip, layer_times

    layers = list(table.layers)
    fwd, bwd = layer_times(layers, batch, device, dtype=dtype, efficiency=efficiency,
                           dtype_bytes=table.dtype_bytes)
    gb = table.dtype_bytes if grad_bytes is None else grad_bytes
    idx = [i for i, l in enumerate(layers) if l.params > 0]
    if not idx:
        raise Skip(f"workload {table.name!r} has no layer with parameters")
    names, tb, nb = [], [], []
    for u, i in enumerate(idx):
        end = idx[u + 1] if u + 1 < len(idx) else len(layers)
        start = 0 if u == 0 else i
        names.append(layers[i].name)
        tb.append(sum(bwd[start:end]))
        nb.append(float(layers[i].params * gb))
    return LayerCosts(tuple(names), float(sum(fwd)), tuple(tb), tuple(nb))


# --------------------------------------------------------------------------- evaluate


MIB = 1024 * 1024


def choose_groups(variant: str, costs: LayerCosts, comm: CommCost, bucket_mb: float = 25.0) -> list[list[int]]:
    """The grouping a variant uses (communication order, last layer first).

    Raises
    ------
    suite.ParameterError
        Unknown variant.
    """
    if variant == "sync":
        return groups_sync(costs.L)
    if variant == "wfbp":
        return groups_wfbp(costs.L)
    if variant == "bucket":
        return groups_bucket(costs.nbytes, bucket_mb * MIB)
    if variant == "mg-wfbp":
        return groups_mgwfbp(costs.bwd, costs.nbytes, comm)[0]
    raise ParameterError(f"mg-wfbp: unknown variant {variant!r}; expected one of {list(GROUPERS)}")


def resolve_workers(scenario) -> int:
    """``params['workers']``, or every device of the profile when it is None."""
    w = scenario.params.get("workers")
    prof = scenario.profile
    if w is None:
        return prof.num_devices if prof is not None else 1
    if prof is not None:
        from suite.api import require_devices

        require_devices(prof, w, "workers")
    return int(w)


def costs_from_scenario(scenario) -> tuple[LayerCosts, CommCost, int]:
    """Layer costs, all-reduce cost and worker count of a model scenario."""
    from suite.api import LayerTable, Skip

    prof = scenario.profile
    wl = scenario.workload
    if prof is None:
        raise Skip("the model fidelity needs a hardware profile")
    if not isinstance(wl, LayerTable):
        raise Skip(f"the model fidelity needs a layer-table workload, got {type(wl).__name__}")
    params = scenario.params
    workers = resolve_workers(scenario)
    costs = layer_costs(wl, params["batch"], prof.require_device(), params["efficiency"], params["dtype"])
    comm = comm_cost(params, prof, workers)
    return costs, comm, workers


def evaluate(scenario):
    """Model fidelity: iteration time, exposed communication, scaling efficiency, speedup.

    ``iteration_time = t_f + max(sum t_b, end of the last all-reduce)`` from the grouped
    wait-free-backprop timeline [Shi19 §III]; ``exposed_comm = max(0, comm_end - sum t_b)``;
    with one worker there is no communication, so (weak scaling, fixed per-worker batch)
    ``scaling_efficiency = T_1 / T_P`` with ``T_1 = t_f + sum t_b`` and ``speedup = P T_1 / T_P``
    (throughput over one worker's, the speed-up the authors' plotting script plots).
    ``optimality_gap = T / T_opt - 1`` against the exact optimum over contiguous groupings
    (:func:`groups_optimal`).
    """
    from suite.api import Result

    costs, comm, workers = costs_from_scenario(scenario)
    variant = scenario.variant
    groups = choose_groups(variant, costs, comm, scenario.params["bucket_mb"])
    tl = schedule(costs, groups, comm)
    T = tl.iteration_time
    T1 = costs.fwd + sum(costs.bwd)
    opt_groups, opt_end = groups_optimal(costs.bwd, costs.nbytes, comm)
    T_opt = costs.fwd + max(sum(costs.bwd), opt_end)
    batch = scenario.params["batch"]
    tc = group_comm_times(groups, costs.nbytes, comm)
    res = Result()
    res.add("iteration_time", T, "s", "lower")
    res.add("exposed_comm", tl.exposed_comm, "s", "lower")
    res.add("comm_time", sum(tc), "s", "lower")
    res.add("compute_time", T1, "s", "none")
    res.add("scaling_efficiency", T1 / T, "1", "higher")
    res.add("speedup", workers * T1 / T, "1", "higher")
    res.add("throughput", workers * batch / T, "samples/s", "higher")
    res.add("groups", len(groups), "1", "none")
    res.add("workers_used", workers, "1", "none")  # the resolved P: workers=None is every device
    res.add("optimal_iteration_time", T_opt, "s", "lower")
    res.add("optimality_gap", T / T_opt - 1.0, "1", "lower")
    res.artifacts.update({
        "workers": workers,
        "comm_model": {"a_s": comm.a, "b_s_per_byte": comm.b, "source": comm.source},
        "groups": [[costs.names[l] for l in g] for g in groups],
        "group_layers": groups,
        "group_comm_s": tc,
        "optimal_groups": opt_groups,
        "layers": [{"name": n, "bwd_s": b, "grad_bytes": m} for n, b, m in zip(costs.names, costs.bwd, costs.nbytes)],
        "timeline": tl.as_dict(),
        "assumptions": (f"per-layer times by roofline at {scenario.params['efficiency']:g} of "
                        f"{scenario.params['dtype']} peak, per-worker batch {batch}; one serial link; "
                        "all-reduce t_c = a + b*bytes"),
    })
    return res
