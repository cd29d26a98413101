"""A technique that reads no workload (``takes_workload=False``) refuses one (hostile15 finding 2).

``suite run -t cerebras-stencil --workload resnet-50,gpt2`` stored its ``wse`` case ``ok`` twice,
once under each name, with the same figures (compute_time 40.81 us both): the stencil is set by
parameters only. A profile of a kind outside ``profile_kinds`` was refused; a workload was taken
whatever it was. ``needs_workload=False`` alone still means "optional": transpose-conv runs on the
GAN generators it is given, so that case keeps its workload and its own key.
"""

from __future__ import annotations

import pytest

from suite.errors import ParameterError, TechniqueError
from suite.runner.case import Resolver
from suite.technique import Paper, Result, ScenarioSpec, Technique, Variant
from plugin_context import plugin_context


def _tech(name: str = "no-wl", **kw) -> Technique:
    kw = {"needs_profile": False, "needs_workload": False, **kw}
    return Technique(name=name, title="reads no workload", category="communication", paper=Paper(title="none"),
                     variants=[Variant("base", "baseline", baseline=True)],
                     fidelities={"model": lambda s: Result().add("comm_time", 1.0, "s", "lower")}, **kw)


def test_a_workload_given_to_a_technique_that_reads_none_is_refused_in_one_line():
    tech = _tech(takes_workload=False)
    resolver = Resolver(context=plugin_context(tech))
    with pytest.raises(ParameterError) as err:
        resolver.resolve(tech, ScenarioSpec("base", workload="resnet-50"))
    assert str(err.value) == ("no-wl: reads no workload (it declares takes_workload = false); expected no --workload, "
                              "got 'resnet-50'")
    case = resolver.resolve(tech, ScenarioSpec("base"))  # without one it runs as before
    assert (case.workload, case.workload_hash) == (None, None)


def test_an_optional_workload_is_still_taken_and_keyed():
    """needs_workload=False and takes_workload left True (transpose-conv, odyssey): the case runs
    on the workload given, under its name, one key per workload."""
    tech = _tech("opt-wl")
    resolver = Resolver(context=plugin_context(tech))
    a, b, none = (resolver.resolve(tech, ScenarioSpec("base", workload=w)) for w in ("resnet-50", "gpt2", None))
    assert (a.workload, b.workload, none.workload) == ("resnet-50", "gpt2", None)
    assert len({a.key, b.key, none.key}) == 3


def test_takes_workload_false_contradicts_a_required_or_default_workload():
    with pytest.raises(TechniqueError, match=r"^technique 'no-wl': takes_workload = false: expected needs_workload = "
                                             r"false and no default workload, got needs_workload = True$"):
        _tech(takes_workload=False, needs_workload=True)
    with pytest.raises(TechniqueError, match=r"got default_workload = 'resnet-50'$"):
        _tech(takes_workload=False, default_workload="resnet-50")
    # "" is no workload ([default_workloads] of a fidelity that runs its own data): no contradiction
    assert _tech(takes_workload=False, default_workloads={"model": ""}).takes_workload is False


def test_cerebras_stencil_refuses_a_workload_and_a_category_run_says_so(shared_context):
    from suite.runner.category import expand_category

    ctx = shared_context
    tech = ctx.technique("cerebras-stencil")
    with pytest.raises(ParameterError, match=r"^cerebras-stencil: reads no workload .* got 'gpt2'$"):
        Resolver(context=ctx).resolve(tech, ScenarioSpec("wse", workload="gpt2"))
    cases, notes, _warnings = expand_category("accelerators", context=ctx, resolver=Resolver(context=ctx),
                                              base={"workloads": ["resnet-50"]})
    assert not [c for c in cases if c.technique == "cerebras-stencil"]  # it stored 2 ok rows under resnet-50
    assert [n for n in notes if n.startswith("cerebras-stencil left out") and "takes_workload = false" in n]
    assert {c.workload for c in cases} == {"resnet-50"}  # the techniques that read it still run on it
