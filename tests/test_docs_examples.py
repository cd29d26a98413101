"""Every code example of docs/plugin-authors.md is a tested file: each Python or TOML block is
preceded by ``<!-- from: PATH -->`` and is an exact excerpt of PATH, and each file under
docs/examples/ runs (its ``demo()`` checks a hand calculation). The quickstart's files are those
of examples/suite-allreduce-demo, which tests/testing/test_example_plugin.py checks against the
kit and (slow) installs from its wheel. The experiment file of docs/user-guide.md expands as
written (the tests above read only plugin-authors.md, so a tryout found it failing)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "plugin-authors.md"
BLOCK = re.compile(r"(?:<!-- from: (?P<path>[^ ]+) -->\n)?```(?P<lang>python|toml)\n(?P<code>.*?)```", re.S)


def _blocks():
    return [(m.group("path"), m.group("lang"), m.group("code")) for m in BLOCK.finditer(GUIDE.read_text())]


def test_every_code_example_is_an_excerpt_of_a_tested_file():
    blocks = _blocks()
    assert len(blocks) >= 12
    for path, lang, code in blocks:
        assert path, f"docs/plugin-authors.md: a ```{lang} block without <!-- from: FILE -->: {code[:80]!r}"
        text = (ROOT / path).read_text()
        assert code in text, f"docs/plugin-authors.md: the block from {path} is not in that file: {code[:120]!r}"


def test_the_guide_teaches_the_network_model_and_names_every_verdict():
    text = GUIDE.read_text()
    quick = text[:text.index("# Reference")]
    assert "collective_time" in quick and "group_of" in quick and "package data" in quick
    for verdict in ("reproduced", "reproduced (no null)", "not discriminating", "not reproduced", "inconclusive",
                    "claim defect", "error"):
        assert f"| `{verdict}` |" in text, verdict
    for check in ("metadata", "imports", "vocabulary", "network-sensitivity", "oracle-agreement", "units", "meanings"):
        assert f"| `{check}` |" in text, check
    assert "python -m build" in text and "outer_network.bandwidth" in text  # and why not to use the latter


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "docs" / "examples").glob("*.py")))
def test_docs_example_runs(name):
    spec = importlib.util.spec_from_file_location(f"docs_example_{name}", ROOT / "docs" / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.demo()


def _user_guide_experiment() -> str:
    text = (ROOT / "docs" / "user-guide.md").read_text()
    section = text[text.index("## Experiment files"):]
    return re.search(r"```toml\n(.*?)```", section, re.S).group(1)


def test_the_user_guide_experiment_file_expands_as_written(tmp_path, shared_context):
    """Its [defaults] fidelities = ["model"] was merged into the claims and smoke entries, which take
    no axis keys: `suite run` refused the file as the guide printed it."""
    from suite.runner.experiment import expand_experiment

    f = tmp_path / "guide.toml"
    f.write_text(_user_guide_experiment())
    exp = expand_experiment(f, context=shared_context)
    assert list(exp.entries) == ["poseidon-scaling", "poseidon-claims", "everything-smoke"]
    # 1 profile x 2 workloads x 3 variants x 6 node counts x 3 bandwidths = 108; the exclude drops ps at
    # 1 node (2 workloads x 3 bandwidths = 6), the include adds sfb at 16 nodes (6)
    assert exp.entries["poseidon-scaling"] == 108 and exp.entries["poseidon-claims"] > 0
    scaling = [c for c in exp.cases if c.technique == "poseidon" and c.params.get("batch_per_node") == 32
               and c.overrides.get("network.-1.bandwidth") == "10 Gbit/s"]
    assert len(scaling) == 36 and {c.fidelity for c in scaling} == {"model"}  # the default reached it


def test_an_axis_written_in_a_claims_entry_is_still_refused(tmp_path, shared_context):
    from suite.errors import ExperimentError
    from suite.runner.experiment import expand_experiment

    f = tmp_path / "e.toml"
    f.write_text('[c]\ntechnique = "poseidon"\nclaims = true\nfidelities = ["model"]\n')
    with pytest.raises(ExperimentError, match=r"entry \[c\]: key 'fidelities' cannot be combined with 'claims'"):
        expand_experiment(f, context=shared_context)


def test_defaults_that_reach_no_entry_are_named(tmp_path, shared_context):
    """A [defaults] axis passes a smoke or claims entry by: when every entry is one, it changes nothing,
    and the run says so instead of running as if it applied (the guide's file, whose sweep takes them, says nothing)."""
    from suite.runner.experiment import expand_experiment

    f = tmp_path / "e.toml"
    f.write_text('[defaults]\nfidelities = ["model"]\nseeds = [1, 2]\n\n[c]\ntechnique = "poseidon"\nclaims = true\n')
    exp = expand_experiment(f, context=shared_context)
    assert exp.warnings == [f"{f}: [defaults] fidelities, seeds: taken by no entry (each entry runs given scenarios, "
                            "smoke or claims, which take no axis); they change nothing"]
    guide = tmp_path / "guide.toml"
    guide.write_text(_user_guide_experiment())
    assert expand_experiment(guide, context=shared_context).warnings == []


def test_the_profiles_page_names_every_shipped_profile():
    """docs/profiles.md's table of the shipped library named 49 of 79 profiles (the validation
    systems, the COMET, HetSeq, HyScale, Theseus and VirtualFlow clusters, the Cerebras and edge
    devices were missing): each shipped file's profile is named in it."""
    import tomllib

    table = (ROOT / "docs" / "profiles.md").read_text(encoding="utf-8").split("| kind | profiles |", 1)[1]
    table = table.split("\n\n", 1)[0]
    named = set(re.findall(r"[a-z0-9][a-z0-9.\-]+", table))
    docs = [tomllib.loads(f.read_text(encoding="utf-8")) for f in (ROOT / "hardware_profiles").rglob("*.toml")]
    shipped = {d.get("name") or d["profile"]["name"] for d in docs}  # top level, or a [profile] table
    assert len(shipped) >= 79 and not shipped - named, sorted(shipped - named)  # 79 at 0.3.12
