"""A claim with computed nulls (docs/plugin-authors.md, "Claims, nulls and verdicts")."""

from __future__ import annotations

from suite.api import Claim, Gain, Null, ScenarioSpec


def speedup(results):
    """The technique's speed-up over the parameter server, from the two cases' results."""
    return results["ps"]["iteration_time"] / results["mytech"]["iteration_time"]


CLAIM = Claim(
    id="vgg19-16n-10gbe", statement="15.5x faster than the parameter server on 16 nodes over 10 GbE",
    source="abstract", verified=True,            # verified: the number was read in the paper itself
    expect=Gain(15.5, rel=0.20),                   # an "x-times faster" claim is judged on the gain (x - 1)
    cases={"ps": ScenarioSpec("ps", profile="titanx-cluster-10gbe", params={"nodes": 16}),
           "mytech": ScenarioSpec("mytech", profile="titanx-cluster-10gbe", params={"nodes": 16})},
    derive=speedup,
    nulls=(
        # the baseline in the technique's place: the same ratio with WFBP alone; must land outside the band
        Null("WFBP without the technique", variants={"mytech": "wfbp"}),
        # a trivial predictor: no gain at all
        Null("no gain", value=1.0),
    ),
)


def demo() -> None:
    """Checked by tests/test_docs_examples.py: the band, and what each null substitutes."""
    assert CLAIM.expect.describe()
    subst = CLAIM.nulls[0].substitute(CLAIM.specs())
    assert subst["mytech"].variant == "wfbp" and subst["ps"].variant == "ps"
    assert CLAIM.nulls[1].value == 1.0


if __name__ == "__main__":
    demo()
