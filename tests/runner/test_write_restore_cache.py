"""A case that writes its profile, prices a collective and puts the field back leaves no priced
collective for the next case (a hostile tryout: the next case of the same profile was served an
all-reduce priced at 1 B/s, 2.6e9 s where 0.0105 s is right; 0.3.8 keeps no price derived
from a profile the case has written)."""

from __future__ import annotations

import pytest

from suite.api import collective_time, group_of
from suite.results import Store
from suite.runner import ExecOptions, expand_entry, run_cases
from suite.technique import Paper, Param, Result, Technique, Variant

from plugin_context import plugin_context


def _allreduce(profile) -> float:
    return collective_time("allreduce", 1e9, group_of(profile, 16), profile).time


def _evaluate(scenario):
    p = scenario.profile
    if scenario.params["mode"] == "restore":  # a what-if done by writing the input and putting it back
        old = p.network[0].bandwidth
        object.__setattr__(p.network[0], "bandwidth", 1.0)
        _allreduce(p)
        object.__setattr__(p.network[0], "bandwidth", old)
    return Result().add("ar_time", _allreduce(p), "s", "lower")


WRITER = Technique(
    name="writer", title="writes its profile and puts it back", category="communication",
    paper=Paper(title="none"), variants=[Variant("base", "baseline", baseline=True)],
    fidelities={"model": _evaluate}, parameters={"mode": Param(str, "probe")},
    default_profile="selene-dgx-a100", needs_workload=False,
)


@pytest.mark.parametrize("isolate", [False, True])
def test_a_write_put_back_within_a_case_does_not_price_the_next_case(tmp_path, isolate):
    ctx = plugin_context(WRITER)
    clean = _allreduce(ctx.profile("selene-dgx-a100"))  # the same call on the profile as loaded, before any case
    # a 1 GB all-reduce over 16 A100s (2 DGX nodes, NVLink then 8 x 200 Gb/s IB per node): each node
    # exchanges at least 1 GB with the other (2 (n-1)/n x 1 GB, n = 2 nodes) through 8 x 25 GB/s = 200
    # GB/s: >= 5 ms, not the ~1e9 s of a 1 B/s NVLink
    assert 5e-3 < clean < 0.1
    cases = expand_entry({"technique": "writer", "params": {"mode": ["restore", "probe"]}}, context=ctx).cases
    assert [c.params["mode"] for c in cases] == ["restore", "probe"]  # the writer first, one worker
    with Store(tmp_path / "s.sqlite") as st:
        s = run_cases(cases, st, options=ExecOptions(jobs=1, isolate=isolate), context=ctx)
        got = {st.case(c.key)["params"]["mode"]: st.result(c.key).metrics["ar_time"].value for c in cases}
    assert s.ok == 2, s.message()
    assert got == {"restore": clean, "probe": clean}
