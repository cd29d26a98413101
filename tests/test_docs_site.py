"""The documentation site builds with ``mkdocs build --strict`` (links, nav, docstrings checked).

Skipped where mkdocs is absent (it is in the [docs] and [test] extras, so CI builds the site).
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs", reason="mkdocs is not installed (the [docs] extra)")
pytest.importorskip("material", reason="mkdocs-material is not installed (the [docs] extra)")
pytest.importorskip("mkdocstrings", reason="mkdocstrings is not installed (the [docs] extra)")
yaml = pytest.importorskip("yaml", reason="PyYAML (a dependency of mkdocs) is not installed")

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}


def _nav_pages(nav) -> list[str]:
    out: list[str] = []
    for item in nav:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, dict):
            for v in item.values():
                out += _nav_pages(v) if isinstance(v, list) else [v]
    return out


def _config() -> dict:
    return yaml.safe_load((ROOT / "mkdocs.yml").read_text())


def test_every_page_is_in_the_nav():
    """A new page (a technique's, say) must be added to mkdocs.yml's nav, or the strict build fails."""
    listed = set(_nav_pages(_config()["nav"]))
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    missing = sorted(pages - listed)
    assert not missing, f"mkdocs.yml: nav: add {', '.join(missing)} (under Techniques for docs/techniques/)"
    assert not listed - pages, f"mkdocs.yml: nav names pages that do not exist: {sorted(listed - pages)}"


#: the site's Markdown extensions that decide which text is a link and which ids a page has (mkdocs.yml;
#: the highlighters only colour code, they add no link and no id)
_LINK_EXTENSIONS = ["admonition", "attr_list", "tables", "toc", "pymdownx.superfences", "pymdownx.details"]


@functools.cache
def _rendered_pages() -> dict[str, tuple[str, set[str], list[str]]]:
    """(rendered once: ~1.5 s CPU for the ~1 MB of pages) Each docs page (path under docs/) -> (its HTML as Python-Markdown renders it with the site's
    extensions, the ids in it, the objects its ``::: name`` blocks document)."""
    import markdown

    pages = {}
    for p in sorted((ROOT / "docs").rglob("*.md")):
        rel = p.relative_to(ROOT / "docs").as_posix()
        if rel.startswith("hooks/"):  # exclude_docs
            continue
        text = p.read_text()
        html = markdown.Markdown(extensions=_LINK_EXTENSIONS).convert(text)
        pages[rel] = (html, set(re.findall(r'\sid="([^"]+)"', html)), re.findall(r"(?m)^::: (\S+)", text))
    return pages


def _object_exists(path: str) -> bool:
    """Whether the dotted *path* names a module, or an attribute chain of one (what mkdocstrings
    renders for a ``:::`` block, each member under an id equal to its full path)."""
    import importlib

    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for name in parts[i:]:
            if not hasattr(obj, name):
                return False
            obj = getattr(obj, name)
        return True
    return False


def _broken_links(pages) -> list[str]:
    from urllib.parse import unquote, urlsplit

    docs = (ROOT / "docs").resolve()
    bad = []
    for rel, (html, _, _) in pages.items():
        for href in re.findall(r'<(?:a|img)\s[^>]*?(?:href|src)="([^"]*)"', html):
            u = urlsplit(href)
            if u.scheme or href.startswith("//"):
                continue
            target = rel
            if u.path:
                full = ((ROOT / "docs" / rel).parent / unquote(u.path)).resolve()
                if not full.is_relative_to(docs) or not full.exists():
                    bad.append(f"docs/{rel}: link {href!r}: no such file under docs/")
                    continue
                target = full.relative_to(docs).as_posix()
            if not u.fragment or target not in pages:
                continue
            _, ids, objects = pages[target]
            documented = any(u.fragment == o or u.fragment.startswith(o + ".") for o in objects)
            if u.fragment not in ids and not (documented and _object_exists(u.fragment)):
                bad.append(f"docs/{rel}: link {href!r}: no anchor #{u.fragment} in docs/{target}")
    return bad


def test_every_link_and_anchor_resolves():
    """The strict build's link checks (validation.links not_found / anchors), without the build:
    every relative link of a page, as Python-Markdown parses it with the site's extensions (so a
    link inside a code block is no link), names a file under docs/ and an id of that page (a
    heading's, an attr_list's, or an object a ``:::`` block documents). The full build is
    test_site_builds_strictly (slow)."""
    pages = _rendered_pages()
    assert "user-guide.md" in pages and "techniques/poseidon.md" in pages
    assert _broken_links(pages) == []
    # the check finds what the build would refuse
    html, ids, objects = pages["index.md"]
    extra = html + '<a href="user-guide.md#no-such-heading">x</a><a href="missing.md">y</a>'
    broken = _broken_links({**pages, "index.md": (extra, ids, objects)})
    assert broken == ["docs/index.md: link 'user-guide.md#no-such-heading': no anchor #no-such-heading in "
                      "docs/user-guide.md", "docs/index.md: link 'missing.md': no such file under docs/"]


def test_every_api_page_documents_objects_that_exist():
    """mkdocstrings fails the strict build on a ``::: name`` it cannot find; the fast check imports each."""
    objects = [o for _, _, objs in _rendered_pages().values() for o in objs]
    assert "suite.perf.network.collective" in objects
    assert [o for o in objects if not _object_exists(o)] == []
    assert not _object_exists("suite.perf.network.collective.no_such_function")


@pytest.mark.slow
def test_site_builds_strictly(tmp_path):
    """The whole site, strictly (slow: ~7 s CPU, most in mkdocstrings rendering every docstring);
    the links and the API pages' objects are checked fast by the two tests above."""
    out = tmp_path / "site"
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"),
                        "-d", str(out)], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, f"mkdocs build --strict failed:\n{r.stdout}\n{r.stderr}"
    # the pages the issue asks for are there, and the API reference was rendered from the docstrings
    for page in ("user-guide", "plugin-authors", "profiles", "reproductions", "techniques/poseidon"):
        assert (out / page / "index.html").is_file(), page
    api = (out / "api" / "suite" / "index.html").read_text()
    assert 'id="suite.Technique"' in api and 'id="suite.Claim"' in api
    coll = (out / "api" / "perf-collective" / "index.html").read_text()
    assert 'id="suite.perf.network.collective.collective_time"' in coll
    repro = (out / "reproductions" / "index.html").read_text()
    assert "verified" in repro and "poseidon" in repro


def test_the_strict_config_rejects_a_broken_link(tmp_path):
    """The site's link validation, on a two-page site: a link to a missing page fails the build.
    (Never pass -q: mkdocs 1.6 then stops counting warnings and --strict passes anything.)"""
    cfg = _config()
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n\nSee [the guide](guide.md) and [nothing](missing.md).\n")
    (docs / "guide.md").write_text("# Guide\n")
    small = {"site_name": "t", "docs_dir": str(docs), "strict": True, "validation": cfg["validation"],
             "nav": ["index.md", "guide.md"]}
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(small))
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(tmp_path / "mkdocs.yml"),
                        "-d", str(tmp_path / "site")], cwd=tmp_path, env=ENV, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode != 0 and "missing.md" in (r.stdout + r.stderr)
