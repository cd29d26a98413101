"""Write ``experiments/papers.toml``: one entry per technique running every claim's scenarios.

Usage::

    python -m suite.runner.gen_papers [OUTPUT]      # default: the shipped experiments/papers.toml

Entries use ``claims = true`` (the runner expands each claim's ``specs()``), so the file stays
right when a plugin adds or changes a claim; regenerate it when a technique is added. Entries are
``optional``: a technique that is not installed is skipped with a note, not an error.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The techniques shipped with dlsys-suite (pyproject entry points); installed third-party
# techniques are added after them.
BUILTIN = ("poseidon", "mg-wfbp", "superneurons", "odyssey", "cocod-sgd", "palsgd", "kernel-kmeans", "transpose-conv")


def render(registry=None) -> str:
    """The TOML text: the built-in techniques plus every installed one, each with its paper as a comment."""
    if registry is None:
        from suite.registry import get_registry

        registry = get_registry()
    installed = {t.name: t for t in registry.techniques()}
    names = list(BUILTIN) + sorted(n for n in installed if n not in BUILTIN)
    lines = ['description = "Every scenario behind every paper claim of each technique '
             '(`suite reproduce --all` runs the same cases and judges them)"', ""]
    for name in names:
        t = installed.get(name)
        lines.append(f"[{name}]")
        if t is not None:  # the claims themselves: `suite info NAME` (kept out of here so this never goes stale)
            lines.append("# " + " ".join(t.paper.cite().split()))
        lines += [f'technique = "{name}"', "claims = true", "optional = true", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        out = Path(argv[0])
    else:
        from suite.resources import builtin_dir

        out = builtin_dir("experiments") / "papers.toml"
    out.write_text(render(), encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
