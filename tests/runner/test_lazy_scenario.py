"""A case's scenario is built on first read (issue 44: a fully cached ``suite reproduce`` builds no
workload): a zoo workload whose content hash the on-disk cache holds is hashed into the case key
without being built, and built, once, when the case is evaluated (or pickled to a worker)."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

import suite.workloads as W
from suite.context import Context, WorkloadLibrary
from suite.runner.case import Case, Resolver
from suite.technique import Scenario, ScenarioSpec
from suite.workloads import Workload

ZOO = "cifar10-quick"  # a zoo workload built by the zoo's own builder (its hash is cached on disk)


def _new_process(monkeypatch) -> None:
    """Forget the workloads built and the hashes read in this process (the disk cache stays)."""
    monkeypatch.setattr(W, "_HASHES", None)
    monkeypatch.setattr(W, "_CACHE", {})


@pytest.fixture
def cached_hash(tmp_path, monkeypatch) -> str:
    """The content hash of ZOO, written to a fresh on-disk cache by building it once; then, as in a
    new process, nothing is built."""
    monkeypatch.setenv("SUITE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SUITE_NO_WORKLOAD_CACHE", raising=False)
    _new_process(monkeypatch)
    h = W._zoo_get(ZOO).content_hash()
    _new_process(monkeypatch)
    return h


def _resolve(registry, **spec) -> Case:
    tech = registry.technique("fake")
    return Resolver(context=Context.build(registry=registry)).resolve(tech, ScenarioSpec("base", **spec))


def test_a_cached_zoo_workload_is_hashed_without_building_it_and_built_on_first_read(cached_hash, fake_registry):
    case = _resolve(fake_registry, workload=ZOO)
    assert ZOO not in W._CACHE  # resolved and keyed: nothing built
    assert (case.workload, case.workload_hash) == (ZOO, cached_hash)
    sc = case.scenario
    assert ZOO in W._CACHE and isinstance(sc, Scenario)
    assert sc.workload.name == ZOO and sc.workload.content_hash() == cached_hash
    assert case.scenario is sc  # built once
    # fakeplugin.y_of: x * n * (Gbit/s of fake-cluster-a's network) = 1 * 1 * 10
    assert fake_registry.technique("fake").evaluate(sc)["y"] == pytest.approx(10.0)


def test_the_key_is_the_one_of_the_built_workload(cached_hash, fake_registry, monkeypatch):
    lazy = _resolve(fake_registry, workload=ZOO)
    monkeypatch.setenv("SUITE_NO_WORKLOAD_CACHE", "1")  # no cached hash: built at resolve, as before
    _new_process(monkeypatch)
    eager = _resolve(fake_registry, workload=ZOO)
    assert ZOO in W._CACHE
    assert lazy.key == eager.key and lazy.identity() == eager.identity()
    assert lazy == eager  # the scenario is no part of a case's equality: comparing builds nothing


def test_a_pickled_case_carries_its_scenario_built(cached_hash, fake_registry):
    case = dataclasses.replace(_resolve(fake_registry, workload=ZOO), tech=None)  # replace reads (builds) it
    back = pickle.loads(pickle.dumps(case))
    assert back.key == case.key and back.scenario.workload.name == ZOO
    fresh = _resolve(fake_registry, workload=ZOO)
    assert pickle.loads(pickle.dumps(fresh)).scenario.params == fresh.scenario.params


def test_a_case_given_no_scenario_or_a_built_one_reads_it_back(fake_registry):
    bare = Case(key="k", technique="t", technique_version="1", variant="v", fidelity="model", profile=None,
                profile_hash=None, workload=None, workload_hash=None, params={}, seed=0)
    assert bare.scenario is None
    sc = Scenario("t", "v", "model")
    assert dataclasses.replace(bare, scenario=sc).scenario is sc
    with pytest.raises(dataclasses.FrozenInstanceError):
        bare.scenario = sc  # type: ignore[misc]


def test_context_workload_hash_only_for_a_zoo_workload_no_plugin_provides(cached_hash, fake_registry):
    plug = Workload(name="plug-wl", kind="synthetic", source="test fixture")
    clash = Workload(name=ZOO, kind="synthetic", source="test fixture")
    ctx = Context(registry=fake_registry, _workloads=WorkloadLibrary([("tests", plug), ("tests", clash)]))
    assert ctx.workload_hash(ZOO) is None  # a plugin provides it too: looking it up raises, as before
    assert ctx.workload_hash("plug-wl") is None  # a plugin's: built
    assert ctx.workload_hash("wl.toml") is None and ctx.workload_hash("no-such-workload") is None
    # after a plugin workload was built (the library's zoo fast path is off), a zoo name is still hashed
    ctx = Context(registry=fake_registry, _workloads=WorkloadLibrary(lambda: [("tests", plug)]))
    assert ctx.workload_hash(ZOO) == cached_hash
    assert ctx.workload("plug-wl") is not None
    assert ctx.workload_hash(ZOO) == cached_hash and ZOO not in W._CACHE


def test_an_uncached_workload_is_built_at_resolve_and_errors_there(fake_registry, tmp_path, monkeypatch):
    monkeypatch.setenv("SUITE_CACHE_DIR", str(tmp_path / "empty"))
    _new_process(monkeypatch)
    case = _resolve(fake_registry, workload=ZOO)
    assert ZOO in W._CACHE and case.workload_hash == W._CACHE[ZOO].content_hash()
    with pytest.raises(Exception, match="no-such-workload"):
        _resolve(fake_registry, workload="no-such-workload")
