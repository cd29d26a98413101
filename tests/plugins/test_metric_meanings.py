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


def _default_metrics(tech: Technique, variant: str) -> dict[tuple[str, str], set[tuple[str, str]]]:
    """(fidelity, metric) -> the (unit, direction) pairs the default scenarios of *variant* return,
    at the model and simulate fidelities (a fidelity that declines the variant is left out)."""
    resolver = Resolver(context=session_context())
    seen: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for fid in ("model", "simulate"):
        if fid not in tech.fidelities:
            continue
        try:
            result = evaluate_case(tech, resolver.resolve(tech, ScenarioSpec(variant, fidelity=fid)))
        except (Skip, SuiteError):  # a variant that needs another fidelity or profile
            continue
        for m in result.metrics.values():
            seen.setdefault((fid, m.name), set()).add((m.unit, m.direction))
    return seen


def _undeclared(tech: Technique, seen: dict[tuple[str, str], set[tuple[str, str]]]) -> list[str]:
    """What of *seen* has no meaning at its fidelity, or one of another unit or direction."""
    out = []
    for (fid, metric), pairs in seen.items():
        d = tech.meaning(metric, fid)
        if d is None:
            out.append(f"{metric} ({fid}): no meaning declared")
        elif pairs != {(d.unit, d.direction)}:
            out.append(f"{metric} ({fid}): results give {sorted(pairs)}, declared {d}")
    return out


def test_the_built_in_techniques_are_the_21():
    assert tuple(sorted(t.name for t in session_context().techniques(None))) == BUILT_IN


@pytest.mark.parametrize("name, variant", CASES)
def test_every_metric_of_a_default_scenario_has_a_meaning(name, variant):
    tech = session_context().technique(name)
    seen = _default_metrics(tech, variant)
    assert (len(seen) >= 5) == ((name, variant) not in NO_DEFAULT), seen  # >= 5 metrics where it evaluates
    assert not _undeclared(tech, seen), f"{name} ({variant}): {_undeclared(tech, seen)}"


#: the techniques with an execute fidelity (all 21) and their execute smoke scenarios (one each,
#: two for hetseq: a hand count of the technique.toml files)
EXECUTE_SMOKE = [(name, i) for name in BUILT_IN for i, s in enumerate(session_context().technique(name).smoke)
                 if s.fidelity == "execute"]


def test_every_technique_has_an_execute_smoke_scenario():
    assert len(EXECUTE_SMOKE) == 22 and {n for n, _ in EXECUTE_SMOKE} == set(BUILT_IN)


@pytest.mark.parametrize("name, i", EXECUTE_SMOKE)
def test_every_metric_of_an_execute_smoke_scenario_has_a_meaning(name, i):
    """A real run's metrics (oracle errors, ledger bytes, per-layer times): each needs a meaning at
    the execute fidelity, shared, of that fidelity, included from a core helper or a pattern's."""
    tech = session_context().technique(name)
    result = evaluate_case(tech, Resolver(context=session_context()).resolve(tech, tech.smoke[i]))
    seen: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for m in result.metrics.values():
        seen.setdefault(("execute", m.name), set()).add((m.unit, m.direction))
    assert len(seen) >= 7, seen
    assert not _undeclared(tech, seen), f"{name} (execute smoke {i}): {_undeclared(tech, seen)}"


@pytest.fixture
def cli(suite_cli, monkeypatch):
    """``suite info`` without its profile-fields probe (a worker process per variant; not what is tested)."""
    import suite.cli.plugins as plugins

    monkeypatch.setattr(plugins, "_fields_read", lambda t, context: ({}, [], {}))
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


def _replace(name, meanings):
    import dataclasses

    return dataclasses.replace(session_context().technique(name), metric_meanings=meanings)


_M = {"unit": "s", "direction": "lower", "meaning": "seconds of layer i"}


def test_a_pattern_declares_every_index_and_nothing_else():
    tech = _replace("poseidon", {"layer_time.<i>": _M})
    assert tech.meaning("layer_time.0").meaning == "seconds of layer i"
    assert tech.meaning("layer_time.17", "execute").meaning == "seconds of layer i"
    assert tech.meaning("layer_time.") is None and tech.meaning("layer_time.x") is None
    assert tech.meaning("layer_time.1.2") is None and tech.meaning("xlayer_time.1") is None


def test_a_fidelitys_meaning_overrides_the_shared_one_and_info_prints_both(cli, monkeypatch):
    """palsgd's model `allreduces` counts to the target, its execute one within the run."""
    tech = session_context().technique("palsgd")
    assert "to the target" in tech.meaning("allreduces", "model").meaning
    assert "within the run" in tech.meaning("allreduces", "execute").meaning
    assert tech.meaning("allreduces") == tech.meaning("allreduces", "model")  # None: the shared one
    assert tech.meaning("pseudo_syncs", "model") is None and tech.meaning("pseudo_syncs", "execute") is not None
    data = json.loads(cli("info", "palsgd", "--format", "json").output)["metrics"]["allreduces"]
    assert data["fidelities"] == ["model"] and data["from"] == "technique"
    assert data["by_fidelity"]["execute"]["from"] == "suite.api:WORKERS_RESULT_MEANINGS"
    text = cli("info", "palsgd").output
    assert "[fidelity]: at that fidelity only" in text
    lines = [ln for ln in text.splitlines() if ln.strip().startswith("allreduces ")]
    assert [ln.split("(")[0].strip() for ln in lines] == ["allreduces [model]", "allreduces [execute]"], lines


def test_the_core_helpers_meanings_are_declared_once_and_follow_its_results():
    """`Workers.result()`'s 7 metrics: one meaning in the core, the same for every technique including it."""
    from suite.api import Workers

    assert list(Workers.RESULT_MEANINGS) == ["final_loss", "final_accuracy", "allreduces", "grad_evals", "sim_time",
                                             "bytes_sent", "bytes_received"]
    from suite.api import WORKERS_RESULT_MEANINGS

    assert Workers.RESULT_MEANINGS is WORKERS_RESULT_MEANINGS
    users = [t for t in BUILT_IN if "suite.api:WORKERS_RESULT_MEANINGS"
             in session_context().technique(t).metric_meanings.get("execute", {}).get("include", ())]
    assert users == ["cocod-sgd", "hetseq", "palsgd"]  # the three execute.py calling w.result()
    for t in users:
        assert session_context().technique(t).meaning("sim_time", "execute") == Workers.RESULT_MEANINGS["sim_time"]


@pytest.mark.parametrize("meanings, message", [
    ({"layer_time.<n>": _M}, "expected a metric name, or a pattern writing <i> for an index, got 'layer_time.<n>'"),
    ({"simulate": {"bytes": _M}}, "expected a table of a fidelity the technique has (model, execute)"),
    ({"execute": {"execute": {}}}, "expected a table of a fidelity the technique has"),
    ({"execute": {"speedup": _M}}, "outside the vocabulary 'data-parallel'"),
    ({"include": "workers"}, "expected references 'package.module:NAME' to mappings of metric meanings, got 'workers'"),
])
def test_a_malformed_pattern_fidelity_or_include_is_refused_in_one_line(meanings, message):
    with pytest.raises(TechniqueError, match="metric_meanings") as e:
        _replace("poseidon", meanings)
    assert message in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("include, message", [
    ("suite.api:Workers.NO_SUCH", "technique 'poseidon': metric_meanings['execute']['include']: expected a reference "
                                  "'package.module:NAME' that imports (AttributeError: type object 'Workers' has no "
                                  "attribute 'NO_SUCH'), got 'suite.api:Workers.NO_SUCH'"),
    ("suite.no_such_module:X", "technique 'poseidon': metric_meanings['execute']['include']: expected a reference "
                               "'package.module:NAME' that imports (ModuleNotFoundError: No module named "
                               "'suite.no_such_module'), got 'suite.no_such_module:X'"),
    ("suite.api:Workers", "technique 'poseidon': metric_meanings['execute']['include']: expected a reference to a "
                          "mapping of metric name -> MetricMeaning (it names a type), got 'suite.api:Workers'"),
    ("suite.technique:VOCABULARIES", "technique 'poseidon': metric_meanings['execute']['include']: expected a reference to "
                               "a mapping of metric name -> MetricMeaning (suite.technique:VOCABULARIES['data-parallel']: "
                               "expected a MetricMeaning or a table of unit, direction and meaning, got Vocabulary), "
                               "got 'suite.technique:VOCABULARIES'"),
])
def test_an_include_that_names_no_mapping_is_refused_when_the_technique_is_built(include, message):
    """A misspelt include built, and `suite info`, `suite report` and the kit failed on it later,
    each lookup resolving it again; it is resolved once, when the technique is built."""
    with pytest.raises(TechniqueError) as e:
        _replace("poseidon", {"execute": {"include": [include]}})
    assert str(e.value) == message


def test_a_lookup_resolves_no_include(monkeypatch):
    """Each `meaning()` resolved the technique's includes again (~14 us a lookup here, 42 us on the
    lead's machine); they are resolved when the technique is built, a lookup reads a dict."""
    from suite.declaration import meanings

    tech = session_context().technique("cocod-sgd")
    final_loss = tech.meaning("final_loss", "execute")
    monkeypatch.setattr(meanings, "resolve_reference", lambda ref: pytest.fail(f"{ref} resolved at a lookup"))
    assert tech.meaning("final_loss", "execute") is final_loss and final_loss.unit == "1"
    assert tech.meaning("speedup", "model").unit == "1" and tech.meaning("no_such", "execute") is None
    assert tech.meanings("execute")["sim_time"].unit == "s"
    assert tech.meaning_sources("execute")["final_loss"][0] == "suite.api:WORKERS_RESULT_MEANINGS"


def test_the_report_compares_meanings_at_the_rows_fidelities():
    """The head-to-head section reads each technique's meaning at the fidelities its rows hold:
    palsgd's and cocod-sgd's execute `final_loss` is the core helper's one meaning (one axis), and a
    pattern declares transpose-conv's `layer_time.0`."""
    from suite.report.html import _meanings_at

    pal, cocod = session_context().technique("palsgd"), session_context().technique("cocod-sgd")
    metrics = ["final_loss", "allreduces", "layer_time.0"]
    assert _meanings_at(pal, {"model"}, metrics) == {"allreduces": pal.meaning("allreduces", "model").meaning}
    at_execute = _meanings_at(pal, {"execute"}, metrics)
    assert at_execute == _meanings_at(cocod, {"execute"}, metrics) and set(at_execute) == {"final_loss", "allreduces"}
    both = _meanings_at(pal, {"model", "execute"}, ["allreduces"])["allreduces"]
    assert both.count(" | ") == 1 and "to the target" in both and "within the run" in both
    tc = session_context().technique("transpose-conv")
    assert set(_meanings_at(tc, {"execute"}, metrics)) == {"layer_time.0"}


def test_what_a_metric_means_cannot_be_rewritten_by_another_plugin():
    """A hostile plugin wrote, at import, `VOCABULARIES["data-parallel"].meanings["speedup"] = ...`
    and `.metrics["speedup"] = ("1", "lower")`: `suite info mg-wfbp` then said a built-in's speed-up
    was lower-is-better over the global batch. The vocabularies' tables and every technique's
    declared meanings are read-only."""
    from suite.frozen import ImmutableError
    from suite.technique import VOCABULARIES

    voc = VOCABULARIES["data-parallel"]
    with pytest.raises(TypeError):
        voc.meanings["speedup"] = "one device's time over N devices' (ideal 1)"
    with pytest.raises(TypeError):
        dict.__setitem__(voc.meanings, "speedup", "forged")  # not a dict at all: no way around
    with pytest.raises(TypeError):
        voc.metrics["speedup"] = ("1", "lower")
    assert voc.metrics["speedup"] == ("1", "higher")
    tech = session_context().technique("cocod-sgd")
    with pytest.raises(ImmutableError):
        tech.metric_meanings["speedup"] = "anything"


def test_two_includes_keep_the_techniques_own_meanings_and_a_fidelitys_pattern_beats_a_shared_name():
    """A second reader: with two includes, the fidelity-less meanings were the includes only (the
    technique's own entries were sliced away); and a shared exact `layer_time.0` beat the execute
    table's own `layer_time.<i>`, though a fidelity's entries are the stronger."""
    inc = "suite.api:Workers.RESULT_MEANINGS"
    tech = _replace("cocod-sgd", {"include": [inc, inc], "own_metric": _M})
    assert tech.meaning("own_metric") is not None and tech.meaning("final_loss") is not None
    shared = {**_M, "meaning": "the shared one"}
    own = {**_M, "meaning": "the execute one"}
    tech = _replace("cocod-sgd", {"layer_time.0": shared, "execute": {"layer_time.<i>": own}})
    assert tech.meaning("layer_time.0", "execute").meaning == "the execute one"
    assert tech.meaning("layer_time.0", "model").meaning == "the shared one"
