"""Profile hygiene (issue 20): `suite hardware validate` flags two profiles with identical figures
under different names unless one declares `extends` or `same_as` (with a reason); the shared
metric vocabularies and the kit's check of them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

SHIPPED = Path(__file__).resolve().parents[2] / "hardware_profiles"
H100 = SHIPPED / "devices" / "nvidia-h100-sxm5-80gb.toml"


@pytest.fixture
def validate(suite_cli):
    """The helper on the session's one context (tests/conftest.py `suite_cli`: these commands do not test
    plugin loading)."""
    def invoke(*paths):
        return suite_cli(["hardware", "validate", *map(str, paths), "--format", "json"])

    return invoke


def test_a_copied_h100_under_another_name_is_flagged(tmp_path, validate):
    copy = tmp_path / "my-h100.toml"
    copy.write_text(H100.read_text().replace('name = "nvidia-h100-sxm5-80gb"', 'name = "my-h100"', 1))
    r = validate(copy)
    assert r.exit_code == 0, r.output  # a warning, not an error: the file itself is valid
    warns = json.loads(r.stdout)["warnings"]
    hits = [w for w in warns if "'my-h100' and 'nvidia-h100-sxm5-80gb' have identical figures" in w]
    assert len(hits) == 1 and "same_as = { name" in hits[0]


def test_changing_one_figure_or_declaring_same_as_clears_it(tmp_path, validate):
    text = H100.read_text().replace('name = "nvidia-h100-sxm5-80gb"', 'name = "my-h100"', 1)
    other = tmp_path / "a" / "my-h100.toml"
    other.parent.mkdir()
    other.write_text(text.replace('memory = "80 GB"', 'memory = "96 GB"', 1))
    assert not [w for w in json.loads(validate(other).stdout)["warnings"] if "identical figures" in w]
    declared = tmp_path / "b" / "my-h100.toml"
    declared.parent.mkdir()
    declared.write_text(text.replace('[profile]\n', '[profile]\nsame_as = { name = "nvidia-h100-sxm5-80gb", '
                                     'reason = "our cluster runs the reference board" }\n', 1))
    warns = json.loads(validate(declared).stdout)["warnings"]
    assert not [w for w in warns if "'my-h100' and 'nvidia-h100-sxm5-80gb'" in w]


def test_same_as_needs_a_reason(tmp_path, validate):
    bad = tmp_path / "my-h100.toml"
    bad.write_text(H100.read_text().replace('name = "nvidia-h100-sxm5-80gb"', 'name = "my-h100"\nsame_as = '
                                            '{ name = "nvidia-h100-sxm5-80gb" }', 1))
    r = validate(bad)
    assert r.exit_code == 2
    errors = json.loads(r.stdout)["errors"]
    assert len(errors) == 1 and "profile.same_as.reason" in errors[0]


def test_shipped_library_has_no_undeclared_twins(validate):
    # A800 80GB declares same_as the A100 80GB; the H800 extends the H100
    r = validate(SHIPPED)
    assert r.exit_code == 0, r.output
    assert not [w for w in json.loads(r.stdout)["warnings"] if "identical figures" in w]


# --------------------------------------------------------------------------- vocabularies


def test_vocabulary_declarations(shared_context):
    from suite.errors import TechniqueError
    from suite.technique import VOCABULARIES, Technique

    reg = shared_context.registry
    assert reg.technique("poseidon").vocabulary == "data-parallel"
    assert reg.technique("mg-wfbp").vocabulary == "data-parallel"
    assert reg.technique("superneurons").vocabulary == "memory"
    assert reg.technique("poseidon").headline == ("iteration_time", "throughput", "speedup", "comm_time",
                                                  "exposed_comm")
    assert dict(VOCABULARIES["memory"].metrics) == {"peak_memory": ("B", "lower"), "iteration_time": ("s", "lower")}
    t = reg.technique("poseidon")
    with pytest.raises(TechniqueError, match="vocabulary: expected one of"):
        Technique(name="x", title="x", category="communication", paper=t.paper, variants=t.variants,
                  fidelities=t.fidelities, vocabulary="nope")
    # a technique that declares none keeps working and shows no headline
    assert reg.technique("computron").vocabulary is None and reg.technique("computron").headline == ()


def test_vocabularies_say_what_each_metric_means(suite_cli):
    from suite.technique import VOCABULARIES, Vocabulary

    for voc in VOCABULARIES.values():
        assert set(voc.meanings) == set(voc.metrics) and all(voc.meanings.values())
    # speedup is over ONE device at the same per-device batch, ideal N: comparable at equal GPUs
    assert VOCABULARIES["data-parallel"].meanings["speedup"].startswith(
        "aggregate throughput at N devices over one device's at the same per-device batch")
    authors = (SHIPPED.parent / "docs" / "plugin-authors.md").read_text()
    for voc in VOCABULARIES.values():  # the docs' table is the code's, row by row
        for m, (unit, direction) in voc.metrics.items():
            assert f"| `{voc.name}` | `{m}` | {unit} | {direction} | {voc.meanings[m]} |" in authors
    with pytest.raises(ValueError, match="meanings must name exactly its metrics"):
        Vocabulary("v", "memory", "d", {"a": ("s", "lower"), "b": ("B", "lower")}, {"a": "seconds"})
    # suite info shows them (text and JSON); a technique without a vocabulary shows none
    text = suite_cli("info", "hetseq").output
    assert "vocabulary data-parallel" in " ".join(text.split())
    assert "speedup (1, higher is better): aggregate throughput at N devices over one device's" in " ".join(text.split())
    data = json.loads(suite_cli("info", "superneurons", "--format", "json").output)["vocabulary"]
    assert data["name"] == "memory" and data["metrics"]["peak_memory"]["unit"] == "B"
    assert data["metrics"]["peak_memory"]["meaning"] == VOCABULARIES["memory"].meanings["peak_memory"]
    assert json.loads(suite_cli("info", "computron", "--format", "json").output)["vocabulary"] is None


def test_kit_checks_the_vocabulary(shared_context):
    from suite.technique import Result
    from suite.testing.check import check_vocabulary

    tech = shared_context.registry.technique("superneurons")
    good = Result().add("peak_memory", 1e9, "B", "lower").add("iteration_time", 0.1, "s", "lower")
    assert check_vocabulary(tech, {"k": good}) is None
    missing = Result().add("peak_memory", 1e9, "B", "lower")
    with pytest.raises(AssertionError, match="metric 'iteration_time' missing in case k"):
        check_vocabulary(tech, {"k": missing})
    mib = Result().add("peak_memory", 953.7, "MiB", "lower").add("iteration_time", 0.1, "s", "lower")
    with pytest.raises(AssertionError, match="expected unit 'B', direction 'lower', got 'MiB'"):
        check_vocabulary(tech, {"k": mib})
