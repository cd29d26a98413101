"""Every metric a built-in technique returns has a declared meaning (issue: a new user read
``speedup = 1`` for S-SGD on 32 GPUs; cocod-sgd's speedup is over S-SGD's time to target, poseidon's
over one device, and ``suite info`` said what a metric means for 4 of 21 techniques).

Each technique's variants are evaluated at their default scenario, at the model and simulate
fidelities; every metric they return must be in ``Technique.meanings()`` (its vocabulary's or its
own ``[metric_meanings]``) with the unit and direction the result gives it. A metric added without a
meaning fails here."""

from __future__ import annotations

import json

import pytest
from session_context import session_context

from suite.errors import SuiteError, TechniqueError
from suite.runner.case import Resolver, evaluate_case
from suite.technique import ScenarioSpec, Skip, Technique

#: the 21 built-in techniques (a hand count of plugins/*/technique.toml)
BUILT_IN = ("cerebras-stencil", "clusterfusion", "cocod-sgd", "comet", "computron", "dflop", "dhelix", "hetseq",
            "hyscale-gnn", "kernel-kmeans", "mg-wfbp", "mixed-td", "node-aware-grids", "odyssey", "palsgd",
            "pfeddst", "poseidon", "superneurons", "theseus", "transpose-conv", "virtualflow")


#: the variants no default scenario evaluates at model or simulate fidelity (they need a CPU or a
#: multi-GPU node profile; the default is the wafer)
NO_DEFAULT = {("cerebras-stencil", "cpu-2s"), ("cerebras-stencil", "gpu-4x")}
CASES = [(name, v) for name in BUILT_IN for v in session_context().technique(name).variant_names]


def _default_metrics(tech: Technique, variant: str) -> dict[str, set[tuple[str, str]]]:
    """Metric -> the (unit, direction) pairs the default scenarios of *variant* return, at the
    model and simulate fidelities (a fidelity that declines the variant is left out)."""
    resolver = Resolver(context=session_context())
    seen: dict[str, set[tuple[str, str]]] = {}
    for fid in ("model", "simulate"):
        if fid not in tech.fidelities:
            continue
        try:
            result = evaluate_case(tech, resolver.resolve(tech, ScenarioSpec(variant, fidelity=fid)))
        except (Skip, SuiteError):  # a variant that needs another fidelity or profile
            continue
        for m in result.metrics.values():
            seen.setdefault(m.name, set()).add((m.unit, m.direction))
    return seen


def test_the_built_in_techniques_are_the_21():
    assert tuple(sorted(t.name for t in session_context().techniques(None))) == BUILT_IN


@pytest.mark.parametrize("name, variant", CASES)
def test_every_metric_of_a_default_scenario_has_a_meaning(name, variant):
    tech = session_context().technique(name)
    seen = _default_metrics(tech, variant)
    assert (len(seen) >= 5) == ((name, variant) not in NO_DEFAULT), seen  # >= 5 metrics where it evaluates
    declared = tech.meanings()
    missing = sorted(set(seen) - set(declared))
    assert not missing, f"{name} ({variant}): metrics without a declared meaning: {missing}"
    for metric, pairs in seen.items():
        d = declared[metric]
        assert pairs == {(d.unit, d.direction)}, f"{name}.{metric}: results give {pairs}, declared {d}"


@pytest.fixture
def cli(suite_cli, monkeypatch):
    """``suite info`` without its profile-fields probe (a worker process per variant; not what is tested)."""
    import suite.cli.plugins as plugins

    monkeypatch.setattr(plugins, "_fields_read", lambda t, context: ({}, []))
    monkeypatch.setattr(plugins, "_recorded_reads", lambda t, context: {})
    return suite_cli


def test_cocod_sgd_speedup_names_its_baseline_and_poseidon_its_one_device(cli):
    cocod = json.loads(cli("info", "cocod-sgd", "--format", "json").output)["metrics"]
    assert cocod["speedup"]["from"] == "technique" and "S-SGD" in cocod["speedup"]["meaning"]
    poseidon = json.loads(cli("info", "poseidon", "--format", "json").output)["metrics"]
    assert poseidon["speedup"]["from"] == "vocabulary data-parallel"
    assert "one device" in poseidon["speedup"]["meaning"]
    text = cli("info", "cocod-sgd").output
    assert "speedup (1, higher is better): " in text and "no meanings declared" not in text


def test_a_technique_without_meanings_says_so(cli, monkeypatch):
    tech = session_context().technique("cocod-sgd")
    monkeypatch.setattr(tech, "metric_meanings", {})
    out = cli("info", "cocod-sgd").output
    assert "metrics: no meanings declared" in out
    assert json.loads(cli("info", "cocod-sgd", "--format", "json").output)["metrics"] == {}


@pytest.mark.parametrize("meanings, message", [
    ({"speedup": {"unit": "1", "direction": "higher", "meaning": "x"}}, "outside the vocabulary 'data-parallel'"),
    ({"bytes": {"unit": "B", "direction": "fewer", "meaning": "x"}}, "direction: expected one of"),
    ({"bytes": {"unit": "B", "direction": "lower", "meaning": ""}}, "meaning: expected one non-empty line"),
    ({"bytes": {"unit": "B", "meaning": "x"}}, "expected the keys ['direction', 'meaning', 'unit']"),
])
def test_a_malformed_meaning_is_refused_naming_the_metric(meanings, message):
    import dataclasses

    poseidon = session_context().technique("poseidon")
    with pytest.raises(TechniqueError, match="metric_meanings") as e:
        dataclasses.replace(poseidon, metric_meanings=meanings)
    assert message in str(e.value) and "\n" not in str(e.value)
