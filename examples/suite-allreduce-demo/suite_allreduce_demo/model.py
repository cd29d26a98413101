"""Cost model: all-reduce time of ring vs binomial tree, over every network level of the profile.

Communication is priced through the suite's one network model, :func:`suite.api.collective_time`,
on the group :func:`suite.api.group_of` places on the profile's nodes: the same model every
technique uses, over all levels (intra-node links, NICs, inter-node fabric), so a profile field
changes this technique exactly as it changes the others.

References
----------
.. [Patarasuk09] P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
   workstations", JPDC 69(2), 2009: ring T = 2(p-1) alpha + 2(p-1)/p m beta.
.. [Thakur05] R. Thakur et al., "Optimization of Collective Communication Operations in MPICH",
   IJHPCA 19(1), 2005, §4.4: binomial tree reduce + broadcast T = 2 ceil(log2 p)(alpha + m beta).
"""

from __future__ import annotations

from suite.api import Result, Scenario, Skip, collective_time, group_of


def evaluate(scenario: Scenario) -> Result:
    """Predict one all-reduce of ``message_size`` bytes among ``workers`` ranks.

    Metrics: ``comm_time`` (s); ``comm_bytes`` (B: what one worker sends over all network levels
    together, the kit's definition); ``efficiency`` (1: the time the busiest level needs to carry
    its bytes at its bandwidth, over ``comm_time``; 1 is bandwidth-optimal).
    """
    profile = scenario.profile
    if not profile.network:
        raise Skip(f"profile {profile.name!r} has no network level")
    group = group_of(profile, scenario.params["workers"])
    m = scenario.params["message_size"]  # declared in MB: the suite hands it over in MB
    cost = collective_time("allreduce", m * 1e6, group, profile, algorithm=scenario.variant)
    busiest = max(b / level.bandwidth for b, level in zip(cost.bytes_per_level, profile.network))
    return (Result()
            .add("comm_time", cost.time, "s", "lower")
            .add("comm_bytes", sum(cost.bytes_per_level), "B", "none")
            .add("efficiency", busiest / cost.time if cost.time > 0 else 1.0, "1", "higher"))
