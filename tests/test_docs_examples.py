"""Every code example of docs/plugin-authors.md is a tested file: each Python or TOML block is
preceded by ``<!-- from: PATH -->`` and is an exact excerpt of PATH, and each file under
docs/examples/ runs (its ``demo()`` checks a hand calculation). The quickstart's files are those
of examples/suite-allreduce-demo, which tests/testing/test_example_plugin.py checks against the
kit and (slow) installs from its wheel."""

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
    for check in ("metadata", "imports", "vocabulary", "network-sensitivity", "oracle-agreement", "units"):
        assert f"| `{check}` |" in text, check
    assert "python -m build" in text and "outer_network.bandwidth" in text  # and why not to use the latter


@pytest.mark.parametrize("name", sorted(p.stem for p in (ROOT / "docs" / "examples").glob("*.py")))
def test_docs_example_runs(name):
    spec = importlib.util.spec_from_file_location(f"docs_example_{name}", ROOT / "docs" / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.demo()
