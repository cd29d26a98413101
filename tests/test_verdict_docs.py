"""Issue 42: the rules and the deciding assumptions are on the project's own pages.

Every technique page lists, in its "Assumptions that decide verdicts" section, each assumption
its claims declare; no code, test or page cites a design file outside the project.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _techniques():
    """The installed techniques whose claims declare assumptions, from the session's context
    (tests/session_context.py: a fresh Registry() here loaded every plugin again at collection)."""
    from session_context import session_context

    return [t for t in session_context().registry.techniques() if any(c.assumptions for c in t.claims)]


@pytest.mark.parametrize("tech", _techniques(), ids=lambda t: t.name)
def test_each_declared_assumption_is_on_the_technique_page(tech):
    page = (ROOT / tech.docs).read_text(encoding="utf-8")
    assert "## Assumptions that decide verdicts" in page, tech.docs
    section = page.split("## Assumptions that decide verdicts", 1)[1]
    for c in tech.claims:
        for a in c.assumptions:
            assert a.name.replace("|", "\\|") in section, (tech.name, c.id, a.name)


def test_no_design_file_outside_the_project_is_cited():
    hits = []
    for sub in ("suite", "plugins", "docs", "tests"):
        for p in (ROOT / sub).rglob("*"):
            if p.suffix in (".py", ".md") and p.is_file() and p.name != Path(__file__).name:
                if re.search(r"\bDESIGN\.md\b", p.read_text(encoding="utf-8", errors="replace")):
                    hits.append(str(p.relative_to(ROOT)))
    assert hits == [], "cite docs/verdicts.md (or another page of docs/) instead: " + ", ".join(hits)


def _scoreboard_rows() -> dict[str, dict[str, str]]:
    """technique -> claim id -> its row in docs/reproductions.md (the regenerated scoreboard)."""
    rows: dict[str, dict[str, str]] = {}
    tech = None
    for line in (ROOT / "docs" / "reproductions.md").read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            tech = line[3:].strip()
        elif tech and line.startswith("| ") and not line.startswith(("| claim |", "|---")):
            rows.setdefault(tech, {})[line.split(" | ", 1)[0][2:]] = line
    return rows


def _cells(line: str) -> int:
    return len(re.split(r"(?<!\\)\|", line))


@pytest.mark.parametrize("page", sorted((ROOT / "docs" / "techniques").glob("*.md")), ids=lambda p: p.stem)
def test_a_page_s_scoreboard_rows_are_the_scoreboard_s(page):
    """A technique page that copies a claim's scoreboard row (same columns as docs/reproductions.md)
    copies it as the scoreboard has it now: dhelix's page said 'reproduced' for a claim defect. Run
    with SUITE_SYNC_PAGES=1 to rewrite such rows from docs/reproductions.md."""
    import os

    rows = _scoreboard_rows().get(page.stem.replace("_", "-"), {})
    lines = page.read_text(encoding="utf-8").splitlines()
    stale = []
    for i, line in enumerate(lines):
        want = rows.get(line.split(" | ", 1)[0][2:]) if line.startswith("| ") else None
        if want is not None and line != want and _cells(line) == _cells(want):
            stale.append((i + 1, line[:120], want[:120]))
            lines[i] = want
    if stale and os.environ.get("SUITE_SYNC_PAGES") == "1":  # rewritten, and still reported: rerun to pass
        page.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert not stale, f"{page.name}: rows differ from docs/reproductions.md (SUITE_SYNC_PAGES=1 rewrites them): {stale}"
