"""Declaration of the allreduce-demo technique: paper, variants, parameters, claims, properties."""

from __future__ import annotations

from dataclasses import replace

from suite.api import Approx, Claim, Null, Paper, Param, Property, ScenarioSpec, Technique, Variant

# The declaration imports no model or execute code: the fidelities below are references, imported
# the first time one runs, so `suite techniques` lists this plugin without loading them.


def _faster_network_is_never_slower(technique, scenario):
    """Doubling every network level's bandwidth never raises the communication time."""
    profile = scenario.profile
    if not profile.network:
        return
    base = technique.evaluate(scenario)["comm_time"]
    faster = profile.with_overrides({f"network.{i}.bandwidth": f"{level.bandwidth * 2!r} B/s"
                                     for i, level in enumerate(profile.network)})
    again = technique.evaluate(replace(scenario, profile=faster))["comm_time"]
    if again > base * (1 + 1e-12):  # raised, not asserted: a property check must hold under python -O
        raise AssertionError(f"comm_time rose from {base} to {again} when bandwidth doubled")


TECHNIQUE = Technique(
    name="allreduce-demo",
    # bump on every change of behaviour; stored results also record a fingerprint of this
    # package's source, so results of changed code are never served under the old key
    version="0.1.0",
    title="Ring vs tree all-reduce (scaffold: replace with your technique)",
    category="communication",
    paper=Paper(
        title="Bandwidth optimal all-reduce algorithms for clusters of workstations",
        authors=("P. Patarasuk", "X. Yuan"), venue="JPDC 69(2)", year=2009,
        doi="10.1016/j.jpdc.2008.09.002",
    ),
    variants=[
        Variant("tree", "binomial-tree reduce then broadcast", baseline=True),
        Variant("ring", "ring reduce-scatter then all-gather"),
    ],
    parameters={
        "workers": Param(int, default=8, minimum=1, maximum=4096, unit="workers", help="number of workers"),
        # a unit the suite converts: `--param message_size="2 GiB"` reaches the model in MB
        "message_size": Param(float, default=64.0, minimum=0.0, maximum=1e6, unit="MB", help="all-reduced size"),
        "elements": Param(int, default=1000, minimum=1, maximum=10_000_000, help="execute: vector length"),
    },
    fidelities={"model": "suite_allreduce_demo.model:evaluate", "execute": "suite_allreduce_demo.execute:evaluate"},
    claims=[
        Claim(
            id="ring-bandwidth-optimal",
            statement="For large messages the ring all-reduce time approaches the bandwidth lower bound",
            source="Patarasuk & Yuan 2009, §3 (not re-read for this scaffold)",
            verified=False,
            expect=Approx(1.0, rel=0.05),
            scenario=ScenarioSpec("ring", profile="allreduce-demo-testbed", params={"workers": 8, "message_size": 1000.0}),
            metric="efficiency",
            # the null: the other algorithm at the same point, computed; it must fall outside the band
            nulls=(Null("binomial tree at the same point", variants={"ring": "tree"}),),
        ),
    ],
    properties=[Property("bandwidth-monotone", "comm_time never increases when every level's bandwidth doubles",
                         _faster_network_is_never_slower)],
    default_profile="allreduce-demo-testbed",
    needs_workload=False,
    profile_kinds=("cluster",),
    # the kit's family checks that apply (network sensitivity, oracle agreement and units run by default)
    capabilities=frozenset({"bytes-conserved", "alpha-beta-bound"}),
    oracle_tolerance=1e-9,  # execute: largest |all-reduced - dense sum| accepted (float64 sums of 8 vectors)
    smoke=[ScenarioSpec("ring", profile="allreduce-demo-testbed", params={"workers": 4, "message_size": 8.0}),
           ScenarioSpec("ring", profile="allreduce-demo-testbed", fidelity="execute", params={"workers": 4, "elements": 64})],
)
