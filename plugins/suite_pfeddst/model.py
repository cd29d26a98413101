"""PFedDST's cost model: the time of one synchronous round on a heterogeneous edge profile.

Round time (our model; the paper gives no timing model or hardware: not found in the sources
read, its abstract and secondary summaries):

``T = max_i (C_i + M_i)``, the slowest client (the straggler) [a synchronous round waits for it],

* ``C_i = F_i / (eff * peak_fp32(class_i))``: client i's FLOPs of the round over the fp32 peak of
  its device class (roofline compute roof, [Williams09]); ``eff`` the achieved fraction of peak
  (the device's ``gemm_fp32`` efficiency curve at the round's GEMM size when the profile has one,
  else the parameter ``efficiency``, an assumption);
* ``M_i = sum over message types and peers j of count * (t_wifi(bytes) + [site_j != site_i] t_wan(bytes))``:
  each message priced by :func:`suite.perf.collective.collective_time` (``p2p``) on its path: the
  client's site Wi-Fi level ``network[0]`` (topology ``bus``: one medium, so the message is slowed
  by the ratio of the site's bytes to the client's bytes, the fair share while the site's clients
  send at once), plus the WAN level when the peer (or the ``fedavg`` server, at site 0) sits at
  another site, where the site's clients share its uplink (``Group(ranks_per_node=c_site, nodes=2)``).

FLOPs per local sample, with d inputs, h hidden units, q classes, 2 FLOPs per multiply-add and the
elementwise terms left out (matrix products of a one-hidden-layer MLP):

* forward: ``2(dh + hq)``;
* joint step (``local-only``, ``fedavg``): forward + dW2 + dH + dW1 = ``2(2dh + 3hq)``;
* phase 1 (extractor, header frozen): forward + dH + dW1 = ``2(2dh + 2hq)``;
* phase 2 (header, extractor frozen): forward + dW2 = ``2(dh + 2hq)``;
* scoring, ``cross`` reading: each client evaluates its ``deg`` neighbours' models on its data
  (``deg`` forwards) and ``deg`` cosine distances of headers (``3|h|`` each); ``gap``: one forward.

Messages per round (the execute fidelity's ledger has the same totals, in float64 there and in the
model's ``bytes_per_param`` here):

* ``fedavg``: the server sends the model ``|theta|`` to every client and receives ``|theta|`` back;
* ``random-peers`` / ``pfeddst``: ``k`` extractors ``|e|`` received per client (and, on a regular
  graph with picks spread evenly, ``k`` sent), each from a neighbour, so a fraction of them
  crosses the WAN (the neighbours' sites, taken from the seeded peer graph);
* ``pfeddst`` scoring, per neighbour pair: header ``|h|``, and ``cross``: the model ``|theta|`` plus a
  scalar loss; ``gap``: a scalar loss.

References
----------
.. [Williams09] S. Williams, A. Waterman, D. Patterson, "Roofline", CACM 52(4), 2009.
.. [Fan25] arXiv 2502.07750v2 (the algorithm; no timing model in the parts read).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from suite.api import Group, ParameterError, ProfileError, Result, Skip, collective_time

# DEFAULT_EFFICIENCY (achieved fraction of fp32 peak when a device has no gemm_fp32 curve, an
# assumption) is defined in suite_pfeddst.constants, so the declaration reads it without this module.
from suite_pfeddst.constants import DEFAULT_EFFICIENCY

__all__ = ["sizes", "flops_per_round", "placement", "messages", "round_model", "RoundModel", "evaluate",
           "DEFAULT_EFFICIENCY"]



def sizes(d: int, hidden: int, classes: int, bytes_per_param: int = 4) -> dict[str, int]:
    """Bytes of the extractor ``[W1 (d, h), b1 (h)]``, the header ``[W2 (h, q), b2 (q)]`` and the model."""
    e = (d * hidden + hidden) * bytes_per_param
    h = (hidden * classes + classes) * bytes_per_param
    return {"extractor": e, "header": h, "model": e + h, "scalar": bytes_per_param}


def flops_per_round(variant: str, d: int, h: int, q: int, samples: float, phase1: int, phase2: int,
                    degree: int, reading: str) -> float:
    """One client's FLOPs in one round (formulas in the module docstring)."""
    fwd = 2.0 * (d * h + h * q)
    if variant in ("local-only", "fedavg"):
        return samples * (phase1 + phase2) * 2.0 * (2 * d * h + 3 * h * q)
    f = samples * (phase1 * 2.0 * (2 * d * h + 2 * h * q) + phase2 * 2.0 * (d * h + 2 * h * q))
    if variant == "pfeddst":
        if reading == "cross":
            f += degree * samples * fwd + degree * 3.0 * (h * q + q)
        else:
            f += samples * fwd + degree * 3.0 * (h * q + q)
    return f


def _sites(profile) -> int:
    """Sites = nodes of the profile when it has an inter-node level (2+ levels), else 1."""
    if len(profile.network) >= 2 and profile.kind == "cluster":
        return int(profile.nodes or 1)
    return 1


def placement(profile, clients: int) -> tuple[np.ndarray, list[str]]:
    """(site of each client, device-class name of each client).

    Clients are spread evenly over the sites in order (``site = i * sites // clients``). Device
    classes come from ``[ext.mix]`` groups expanded in order and stretched over the clients
    (``class = groups[i * total // clients]``); without ``[ext.mix]``, the profile's own device.
    """
    sites = _sites(profile)
    site = (np.arange(clients) * sites) // clients
    if profile.groups:
        names: list[str] = []
        for g in profile.groups:
            names += [g.name] * g.count
        cls = [names[(i * len(names)) // clients] for i in range(clients)]
    else:
        dev = profile.require_device()
        cls = [dev.name or profile.name] * clients
    return site, cls


def _peak_and_eff(profile, cls: str, gemm_flops: float, efficiency: float) -> tuple[float, float]:
    # [ext.mix] devices are resolved by the library that loaded the profile (profile.groups)
    groups = {g.name: g.device for g in profile.groups}
    if groups:
        if cls not in groups:
            raise ProfileError(f"profile {profile.name!r}: ext.mix: no group with device {cls!r}")
        dev = groups[cls]
    else:
        dev = profile.require_device()
    peak = dev.flops("fp32")
    curve = dev.efficiency_at("gemm_fp32", gemm_flops) if dev.efficiency else None
    return peak, (curve if curve else efficiency)


def messages(variant: str, sz: dict[str, int], k: int, degree: int, reading: str) -> list[tuple[str, float, float]]:
    """Per client and round: ``(kind, count per neighbour, bytes)`` for peer traffic, or
    ``("server", count, bytes)`` for fedavg; count per neighbour is an expectation for the picks."""
    if variant == "local-only":
        return []
    if variant == "fedavg":
        return [("server", 2.0, sz["model"])]
    if degree == 0:
        return []
    out = [("peer", 2.0 * k / degree, sz["extractor"])]  # k received + k sent, spread over neighbours
    if variant == "pfeddst" and k > 0:
        out.append(("peer", 2.0, sz["header"]))  # own header out, neighbour's header in
        out.append(("peer", 2.0, sz["scalar"]))
        if reading == "cross":
            out.append(("peer", 2.0, sz["model"]))
    return out


@dataclass(frozen=True)
class RoundModel:
    round_time: float
    straggler: int
    straggler_class: str
    compute: tuple[float, ...]
    comm: tuple[float, ...]
    bytes_per_client_round: float
    wan_fraction: float


def _p2p(nbytes: float, group: Group, profile) -> float:
    return collective_time("p2p", nbytes, group, profile).time if nbytes > 0 else 0.0


def round_model(profile, *, variant: str, clients: int, d: int, classes: int, samples: float, hidden: int,
                degree: int, k: int, phase1: int, phase2: int, reading: str, efficiency: float,
                bytes_per_param: int = 4, seed: int = 0) -> RoundModel:
    """Round time of *variant* on *profile* (module docstring); neighbours from the seeded peer graph."""
    from suite_pfeddst.execute import peer_graph

    sz = sizes(d, hidden, classes, bytes_per_param)
    site, cls = placement(profile, clients)
    nbrs = peer_graph(clients, degree, seed)
    deg = len(nbrs[0]) if clients else 0
    if variant in ("random-peers", "pfeddst") and k > deg:
        raise ParameterError(f"pfeddst: parameter 'k': expected <= {deg} (degree of the peer graph), got {k}")
    msgs = messages(variant, sz, k, deg, reading)
    # bytes each client moves per round, and per site (the shared Wi-Fi medium), vectorised
    if deg > 0:
        nb = np.array(nbrs, dtype=np.int64)
        far_peers = (site[nb] != site[:, None]).sum(axis=1)
    else:
        far_peers = np.zeros(clients, dtype=np.int64)
    far_server = (site != 0).astype(np.int64)
    per_peer = sum(cnt * b for kind, cnt, b in msgs if kind == "peer")
    per_srv = sum(cnt * b for kind, cnt, b in msgs if kind == "server")
    own = np.full(clients, per_peer * deg + per_srv, dtype=float)
    wan_bytes = float((far_peers * per_peer).sum() + (far_server * per_srv).sum())
    peaks: dict = {}
    gemm = 2.0 * samples * d * hidden
    F = flops_per_round(variant, d, hidden, classes, samples, phase1, phase2, deg, reading)
    for name in set(cls):
        peaks[name] = _peak_and_eff(profile, name, gemm, efficiency)
    compute = np.array([F / (peaks[c][1] * peaks[c][0]) for c in cls], dtype=float)
    comm = np.zeros(clients)
    if msgs and profile.network:
        comm = _comm_times(profile, msgs, deg, site, own, far_peers, far_server)
    total = compute + comm
    s = int(np.argmax(total)) if clients else 0
    moved = own.sum() / 2.0  # each message counted at both ends above
    if variant == "fedavg":
        moved = own.sum()  # server's end not in `own`
    return RoundModel(float(total[s]), s, cls[s], tuple(compute), tuple(comm), float(moved / max(1, clients)),
                      float(wan_bytes / own.sum()) if own.sum() else 0.0)


def _comm_times(profile, msgs, deg: int, site: np.ndarray, own: np.ndarray, far_peers: np.ndarray,
                far_server: np.ndarray) -> np.ndarray:
    """Per client, the round's communication time (s). Per site: the Wi-Fi price of every message
    (a fair share of the medium: the message grows by the site's bytes over the client's) and the
    WAN price of one far message (the site's clients share its uplink); a client adds its far
    counts."""
    n_sites = int(site.max()) + 1 if site.size else 1
    site_bytes = np.array([own[site == s].sum() for s in range(n_sites)])
    per_site = np.array([(site == s).sum() for s in range(n_sites)])
    multi_level = len(profile.network) >= 2
    wifi = Group(ranks_per_node=2, nodes=1)
    wifi_s = np.zeros(n_sites)
    wan_peer_s = np.zeros(n_sites)
    wan_srv_s = np.zeros(n_sites)
    for s_ in range(n_sites):
        if per_site[s_] == 0:
            continue
        share = site_bytes[s_] / own[site == s_][0] if own[site == s_][0] > 0 else 1.0
        wan = Group(ranks_per_node=max(1, int(per_site[s_])), nodes=2)
        for kind, cnt, b_ in msgs:
            npeers = 1 if kind == "server" else deg
            wifi_s[s_] += cnt * npeers * _p2p(b_ * share, wifi, profile)
            if multi_level:
                t_wan = cnt * _p2p(b_, wan, profile)
                if kind == "server":
                    wan_srv_s[s_] += t_wan
                else:
                    wan_peer_s[s_] += t_wan
    return wifi_s[site] + far_peers * wan_peer_s[site] + far_server * wan_srv_s[site]


def _shape(scenario) -> tuple[int, int, float]:
    """``(features, classes, samples per client)`` of the scenario's dataset workload (None: the
    digits' 1797 x 64, 10 classes).

    Raises
    ------
    suite.Skip
        A workload that is not a dataset (a layer table has no features or classes: its round
        would be the digits MLP's under the network's name).
    """
    wl = scenario.workload
    if wl is not None and wl.kind != "dataset":
        raise Skip(f"pfeddst model prices per-client MLPs on a dataset workload's features and classes (e.g. digits); "
                   f"{wl.name!r} is a {wl.kind}")
    p = scenario.params
    n = getattr(wl, "n", None) or 1797
    d = getattr(wl, "d", None) or 64
    q = getattr(wl, "classes", None) or 10
    samples = n * (1.0 - float(p["test_fraction"])) / int(p["clients"])
    return int(d), int(q), samples


def evaluate(scenario) -> Result:
    """Model fidelity: round time, the straggler's class and bytes per client per round.

    Raises
    ------
    suite.ProfileError
        No profile.
    suite.Skip
        A workload that is not a dataset (``resnet-50``), whose shape the MLP cannot take.
    """
    prof = scenario.profile
    if prof is None:
        raise ProfileError("pfeddst model: needs a hardware profile")
    p = scenario.params
    d, q, samples = _shape(scenario)
    rm = round_model(prof, variant=scenario.variant, clients=int(p["clients"]), d=d, classes=q, samples=samples,
                     hidden=int(p["hidden"]), degree=int(p["degree"]), k=int(p["k"]), phase1=int(p["phase1_steps"]),
                     phase2=int(p["phase2_steps"]), reading=p["loss_reading"], efficiency=float(p["efficiency"]),
                     seed=scenario.seed)
    res = Result()
    res.add("round_time", rm.round_time, "s", "lower")
    res.add("straggler_compute_time", rm.compute[rm.straggler], "s", "lower")
    res.add("straggler_comm_time", rm.comm[rm.straggler], "s", "lower")
    res.add("comm_time", max(rm.comm) if rm.comm else 0.0, "s", "lower")
    res.add("bytes_per_client_round", rm.bytes_per_client_round, "B", "lower")
    res.add("wan_fraction", rm.wan_fraction, "1", "none")
    res.add("straggler", rm.straggler, "1", "none")
    res.artifacts["straggler_class"] = rm.straggler_class
    res.artifacts["classes"] = sorted(set(placement(prof, int(p["clients"]))[1]))
    return res
