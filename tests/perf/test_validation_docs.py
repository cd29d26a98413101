"""docs/validation.md embeds the tables ``suite validate --collectives --format markdown`` and
``suite validate --training --format markdown`` print, verbatim: a change of the model, the data or
the statistics fails here until the page is regenerated from the command (an audit found the
documented figures pinned by nothing: a model 3x worse on one group passed every test)."""

from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs" / "validation.md"


@pytest.mark.parametrize("flag", ["--collectives", "--training"])
def test_docs_tables_are_the_commands_output(suite_cli, flag):
    res = suite_cli(["validate", flag, "--format", "markdown"])
    assert res.exit_code == 0, res.output
    docs = DOCS.read_text().splitlines()
    blocks = [b.splitlines() for b in res.output.strip().split("\n\n")]
    assert len(blocks) == (3 if flag == "--collectives" else 2)
    for block in blocks:
        starts = [i for i, line in enumerate(docs) if line == block[0]]
        assert starts, f"docs/validation.md: no line {block[0][:100]!r} (regenerate: suite validate {flag} --format markdown)"
        got = max((docs[i:i + len(block)] for i in starts), key=lambda d: sum(a == b for a, b in zip(d, block)))
        wrong = [(a, b) for a, b in zip(block, got) if a != b]
        assert got == block, (f"docs/validation.md differs from `suite validate {flag} --format markdown`: "
                              f"command {wrong[0][0]!r}, docs {wrong[0][1]!r}" if wrong else "docs table is shorter")
