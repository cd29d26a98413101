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
