"""mkdocs hook: show Sphinx cross-reference roles in docstrings as code.

The suite's docstrings are numpydoc and cite other objects Sphinx-style (:func:`collective_time`,
:class:`LayerTable`); mkdocstrings renders the role's text literally (":func:" before the code).
This hook drops the role prefix from the rendered pages, keeping the code span, and turns a
numpydoc ``.. [1]`` reference label into ``[1]``.
"""

from __future__ import annotations

import re

_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|attr|data|exc|obj|const|term|ref):(?=<code>)")
_CITE = re.compile(r"(?m)(^|<p>|<li>)\.\. (\[\d+\])")


def on_page_content(html: str, **_kwargs) -> str:
    """Rewrite one rendered page (mkdocs ``on_page_content`` event)."""
    return _CITE.sub(r"\1\2", _ROLE.sub("", html))
