"""A case that writes its profile fails with ``InputMutated`` and the profile is put back; what the
core derived from the written values while the case ran must go with them.

Found by trying the product as a hostile plugin author would: a plugin that multiplied
``network[0].bandwidth`` by 1,000 through ``object.__setattr__`` and then priced an all-reduce was
failed and its write undone, but the collective model had cached that profile's derived levels
(keyed by the object's identity) with the written bandwidth, and every later case on the same
profile object in that process (``--in-process``, or a later case of the same package in a pool
worker) was priced with it and stored ``ok``: Poseidon's ``comm_time`` 1.75 ms against 345 ms.
"""

from __future__ import annotations

import copy
from pathlib import Path

from suite import Paper, Param, Result, Technique, Variant
from suite.api import collective_time, group_of
from suite.runner.evaluate import evaluate_outcome
from suite.technique import Scenario
from session_context import session_context

PROFILE = Path(__file__).resolve().parents[2] / "hardware_profiles" / "clusters" / "titanx-cluster-10gbe.toml"
NBYTES = 64e6  # B: a 64 MB all-reduce


def _allreduce_s(profile) -> float:
    return collective_time("allreduce", NBYTES, group_of(profile, 4), profile, algorithm="ring").time


def _price(s: Scenario) -> Result:
    if s.params["write"]:  # the hostile case: a write the freeze cannot stop, then a priced collective
        level = s.profile.network[0]
        object.__setattr__(level, "bandwidth", level.bandwidth * 1000)
    return Result().add("comm_time", _allreduce_s(s.profile), "s", "lower")


TECH = Technique(name="writer", title="writes its profile, then prices an all-reduce", category="communication",
                 paper=Paper("P", year=2024, venue="tests"), variants=[Variant("ring", "ring", baseline=True)],
                 fidelities={"model": _price}, parameters={"write": Param(bool, False)},
                 needs_profile=True, needs_workload=False)


def _scenario(profile, write: bool) -> Scenario:
    return Scenario(technique="writer", variant="ring", fidelity="model", profile=profile, params={"write": write})


def test_a_later_case_on_the_put_back_profile_is_priced_from_the_real_bandwidth():
    ctx = session_context()
    shipped = ctx.profile(str(PROFILE))
    # the reference: the shipped profile priced before anything was written
    reference = _allreduce_s(shipped)
    fresh = copy.deepcopy(shipped)  # an equal profile object no case has priced yet in this process
    assert fresh == shipped and fresh.network[0].bandwidth == 10e9 / 8  # B/s: 10 GbE, as the file says
    # ring all-reduce of 64 MB over 4 nodes at 1.25 GB/s moves 2 * 3/4 * 64 MB per node: > 76.8 ms
    assert reference > 2 * 0.75 * NBYTES / (10e9 / 8)

    hostile = evaluate_outcome(TECH, _scenario(fresh, True), "k" * 20)
    assert hostile["status"] == "failed" and hostile["error"].startswith("InputMutated: writer: "), hostile
    assert "network" in hostile["error"] and "bandwidth" in hostile["error"], hostile["error"]
    assert fresh.network[0].bandwidth == 10e9 / 8  # put back

    later = evaluate_outcome(TECH, _scenario(fresh, False), "j" * 20)
    assert later["status"] == "ok", later
    (row,) = later["metrics"]
    assert row[0] == "comm_time" and row[1] == reference  # not the 1,000x bandwidth's ~1,000x smaller time
