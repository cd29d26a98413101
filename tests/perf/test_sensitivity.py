"""The communication family's conformance check (suite.perf.sensitivity)."""

from dataclasses import dataclass

from suite.perf import Group, collective_time
from suite.perf.sensitivity import check_network_sensitivity
from suite.technique import Result
from session_context import session_context


@dataclass
class _Scenario:
    profile: object
    params: dict


class _Tech:
    """An all-reduce of 100 MB over 8 ranks per node on `nodes` nodes, priced by collective_time."""

    name = "toy"

    def __init__(self, nodes=1, flat_alpha_beta=False, reads_level=None):
        self.nodes, self.flat, self.reads_level = nodes, flat_alpha_beta, reads_level

    def evaluate(self, scenario):
        p = scenario.profile
        if self.flat:  # a hand-rolled formula on the outer level: the network model never sees it
            lv = p.network[-1]
            t = 2 * 7 * lv.latency + 2 * 7 / 8 * 1e8 / lv.bandwidth
        else:
            t = collective_time("allreduce", 1e8, Group(8, self.nodes), p).time
        if self.reads_level is not None:  # a level's latency changes the result directly
            t += 1e-9 * p.network[self.reads_level].latency
        r = Result()
        r.add("comm_time", t, "s", "lower")
        r.add("iteration_time", 1.0 + t, "s", "lower")
        return r


def test_a_technique_pricing_through_the_model_passes():
    sc = _Scenario(session_context().profile("selene-dgx-a100"), {})
    assert check_network_sensitivity(_Tech(nodes=4), sc) == []
    assert check_network_sensitivity(_Tech(nodes=1), sc) == []  # one node: the fabric is not crossed


def test_a_level_read_but_not_crossed_is_reported():
    sc = _Scenario(session_context().profile("selene-dgx-a100"), {})
    # an 8-GPU group stays in its node: network.0 is read and crossed, fine
    assert check_network_sensitivity(_Tech(nodes=1, reads_level=0), sc) == []
    # reading the fabric's (network.1) latency, which the group does not cross, is a problem
    problems = check_network_sensitivity(_Tech(nodes=1, reads_level=1), sc)
    assert any("network.1" in p and "latency x 10" in p and "does not cross" in p for p in problems), problems
    problems = check_network_sensitivity(_Tech(nodes=1, flat_alpha_beta=True), sc)
    # the hand-rolled formula reads network.1, which an 8-GPU group does not cross
    assert any("no collective was priced" in p for p in problems)
    assert any("network.1" in p and "does not cross" in p for p in problems)


def test_a_real_technique_passes():
    from suite.testing import resolve_case
    from suite.technique import ScenarioSpec
    from suite_cocodsgd.technique import TECHNIQUE

    sc = resolve_case(TECHNIQUE, ScenarioSpec(variant="cocod-sgd", profile="gtx1080ti-6x3-ib56",
                                              params={"workers": 16})).scenario
    assert check_network_sensitivity(TECHNIQUE, sc) == []
