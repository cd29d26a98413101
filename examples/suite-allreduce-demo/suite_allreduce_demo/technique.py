"""Declaration of the allreduce-demo technique: its claims and its properties' checks (Python). The plain
data (paper, variants, parameters, fidelities, defaults, smoke scenarios) is in technique.toml."""

from __future__ import annotations

from dataclasses import replace

from suite.api import Approx, Claim, Null, ScenarioSpec, declare_technique

# The declaration imports no model or execute code: technique.toml names the fidelities by
# reference, imported the first time one runs, so `suite techniques` lists this plugin without them.


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


CLAIMS = [
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
]

# technique.toml's fields plus the claims: the property's check is found above by its name
TECHNIQUE = declare_technique(__name__, claims=CLAIMS)
