"""Wait-free backpropagation: layer-wise overlap of gradient communication with backward.

Backward runs from the last layer L down to layer 1. Layer l's gradient is ready when the
backward of layers L..l is done; its communication starts when it is ready and the (single,
serial) link is free:

    r_l = sum_{j >= l} b_j
    e_l = max(r_l, e_{l+1}) + c_l          (e_{L+1} = 0)
    T_iter = f + max(sum_l b_l, e_1)

Without overlap (communication after backward): ``T_iter = f + sum b + sum c``.

References
----------
.. [Zhang17] H. Zhang et al., "Poseidon: An Efficient Communication Architecture for Distributed
   Deep Learning on GPU Clusters", USENIX ATC 2017, §3.1 (wait-free backpropagation); the rule
   above as described by the abstract and a third-party summary (secondary source); the paper's
   section text was not read.
.. [Shi19] S. Shi, X. Chu, B. Li, "MG-WFBP: Efficient Data Communication for Distributed
   Synchronous SGD Algorithms", INFOCOM 2019 -- the same timeline with merged groups, where a
   group's communication starts when its earliest (lowest-index) layer's gradient is ready.
"""

from __future__ import annotations

from typing import Any

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Timeline", "wfbp_timeline", "sequential_iteration_time", "grouped_wfbp_timeline"]


@dataclass(frozen=True)
class Timeline:
    """Result of a wait-free backprop schedule (times in s, from the start of backward).

    ``ready[i]``, ``start[i]``, ``end[i]`` are per communication unit (a layer, or a group),
    ordered as communicated (last layer first).
    """

    forward: float
    backward: float
    ready: tuple[float, ...]
    start: tuple[float, ...]
    end: tuple[float, ...]

    @property
    def comm_end(self) -> float:
        return max(self.end) if self.end else 0.0

    @property
    def iteration_time(self) -> float:
        return self.forward + max(self.backward, self.comm_end)

    @property
    def exposed_comm(self) -> float:
        """Communication not hidden behind backward: ``max(0, e_1 - sum b)``."""
        return max(0.0, self.comm_end - self.backward)

    def as_dict(self) -> dict[str, Any]:
        return {"forward": self.forward, "backward": self.backward, "ready": list(self.ready),
                "start": list(self.start), "end": list(self.end), "iteration_time": self.iteration_time}


def _validate(bwd: Sequence[float], comm: Sequence[float]) -> None:
    if len(bwd) != len(comm):
        raise ValueError(f"need one communication time per layer: {len(bwd)} backward vs {len(comm)} comm")
    if any(x < 0 for x in bwd) or any(x < 0 for x in comm):
        raise ValueError("backward and communication times must be >= 0")


def wfbp_timeline(fwd: float, bwd: Sequence[float], comm: Sequence[float]) -> Timeline:
    """Wait-free backprop over one serial link [Zhang17 §3.1].

    Parameters
    ----------
    fwd : float
        Total forward time (s).
    bwd, comm : sequences of float, length L, forward order (index 0 = layer 1)
        Backward time and gradient-communication time of each layer (s).
    """
    _validate(bwd, comm)
    L = len(bwd)
    ready, start, end = [], [], []
    t_b = 0.0
    link_free = 0.0
    for l in range(L - 1, -1, -1):
        t_b += bwd[l]
        s = max(t_b, link_free) if comm[l] > 0 else t_b
        e = s + comm[l]
        if comm[l] > 0:
            link_free = e
        ready.append(t_b)
        start.append(s)
        end.append(e)
    # backward summed in the order it runs, as the ready times are: with no communication the last
    # end is the backward total to the bit (a sum in forward order could differ in the last place:
    # 5.55e-17 s of "exposed" communication at one node)
    return Timeline(fwd, t_b, tuple(ready), tuple(start), tuple(end))


def grouped_wfbp_timeline(fwd: float, bwd: Sequence[float], group_comm: Sequence[float],
                          groups: Sequence[Sequence[int]]) -> Timeline:
    """Wait-free backprop where layers are communicated in merged groups [Shi19].

    Parameters
    ----------
    groups : sequence of sequences of layer indices (0-based, forward order)
        Contiguous groups covering every layer exactly once.
    group_comm : sequence of float
        Communication time of each group (s), same order as ``groups``.

    Notes
    -----
    A group is ready when the backward of its lowest-index layer is done (backward runs from the
    last layer down); groups are communicated in the order they become ready, one at a time.
    """
    L = len(bwd)
    covered = sorted(i for g in groups for i in g)
    if covered != list(range(L)):
        raise ValueError("groups must cover every layer exactly once")
    if len(group_comm) != len(groups):
        raise ValueError("need one communication time per group")
    # time at which backward of layer l is complete
    done = [0.0] * L
    t = 0.0
    for l in range(L - 1, -1, -1):
        t += bwd[l]
        done[l] = t
    order = sorted(range(len(groups)), key=lambda g: done[min(groups[g])])
    ready, start, end = [], [], []
    link_free = 0.0
    for g in order:
        r = done[min(groups[g])]
        s = max(r, link_free)
        e = s + group_comm[g]
        link_free = e
        ready.append(r)
        start.append(s)
        end.append(e)
    return Timeline(fwd, t, tuple(ready), tuple(start), tuple(end))  # t: summed as it runs (wfbp_timeline)


def sequential_iteration_time(fwd: float, bwd: Sequence[float], comm: Sequence[float]) -> float:
    """No overlap: ``f + sum b + sum c`` [Zhang17]."""
    _validate(bwd, comm)
    return fwd + sum(bwd) + sum(comm)
