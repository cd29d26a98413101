"""Communication over every level of a profile (docs/plugin-authors.md, "Communication").

``group_of`` places the ranks on the profile's nodes; ``collective_time`` prices the collective on
every network level the group crosses (NVLink inside a node, the NICs and the fabric between
nodes) with the suite's one network model, and says how many bytes went over each level.
"""

from __future__ import annotations

from suite.api import Result, collective_time, group_of


def allreduce_metrics(profile, ranks: int, nbytes: float) -> Result:
    """One all-reduce of *nbytes* bytes among *ranks* ranks, as a model reports it."""
    cost = collective_time("allreduce", nbytes, group_of(profile, ranks), profile)  # algorithm="auto"
    return (Result()
            .add("comm_time", cost.time, "s", "lower")
            # comm_bytes: what one worker sends over ALL levels together (the kit's definition)
            .add("comm_bytes", sum(cost.bytes_per_level), "B", "none"))


def demo() -> None:
    """Checked by tests/test_docs_examples.py against a hand calculation."""
    from suite.context import Context  # a test may build a context; plugin code never does

    dgx = Context.build().profile("selene-dgx-a100")  # 8 A100/node, NVLink 300 GB/s, 8 x 200 Gbit/s NICs
    one_node = collective_time("allreduce", 1e9, group_of(dgx, 8), dgx, algorithm="ring")
    assert one_node.bytes_per_level == (1.75e9, 0.0)  # 2 (p-1)/p m over NVLink, nothing over the NICs
    # ring: 2 (p-1) latency + 2 (p-1)/p m / bandwidth + (p-1)/p m * 3 / memory_bandwidth (the reduction)
    hand = 14 * 1e-6 + 1.75e9 / 300e9 + 0.875e9 * 3 / 2039e9
    assert abs(one_node.time - hand) < 1e-9 * hand
    two_nodes = collective_time("allreduce", 1e9, group_of(dgx, 16), dgx, algorithm="ring")
    assert two_nodes.bytes_per_level[1] > 0 and two_nodes.time > one_node.time  # now the NICs are crossed
    r = allreduce_metrics(dgx, 8, 1e9)
    # algorithm="auto" prices what the profile's library runs: NCCL's ring with the Simple protocol at
    # 1 GB, at a bus bandwidth (2 (p-1)/p m / t) near the ~230 GB/s nccl-tests measures on 8 A100
    bus_bandwidth = r["comm_bytes"] / r["comm_time"]
    assert r["comm_bytes"] == 1.75e9 and 200e9 < bus_bandwidth < 245e9 and r["comm_time"] > one_node.time


if __name__ == "__main__":
    demo()
