"""Input limits: what no benchmark input needs, refused with one line before it costs anything.

A file under the user's control (a profile in the profile folder, an experiment file, a workload
file) must not be able to stop every command with a nameless ``RecursionError`` or take the
machine's memory while it is read. Each limit here is far above any real input and is checked
where the input is read, with a message naming the file, the field, what was expected and what
was given.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

__all__ = ["MAX_TOML_DEPTH", "MAX_LAYERS", "loads_toml", "check_layer_count", "TooDeep"]

#: tables and arrays nested deeper than this in a TOML file are refused (profiles nest 4 levels)
MAX_TOML_DEPTH = 32
#: layers of one workload (the largest real table, a 96-block transformer, has a few thousand)
MAX_LAYERS = 200_000


class TooDeep(ValueError):
    """A TOML document nested deeper than :data:`MAX_TOML_DEPTH` (the message is one line)."""


def _depth_error(where: str, path: str) -> TooDeep:
    return TooDeep(f"{where}: {path or 'document'}: expected tables and arrays nested at most {MAX_TOML_DEPTH} "
                   f"levels, got deeper nesting")


def loads_toml(text: str, where: str) -> dict[str, Any]:
    """Parse TOML *text* (of the file *where*) and check its nesting depth.

    Raises
    ------
    tomllib.TOMLDecodeError
        Invalid TOML (the callers' existing message).
    TooDeep
        Nested deeper than :data:`MAX_TOML_DEPTH` (tomllib recurses on nested arrays and inline
        tables, so this is found before it overflows the stack, by counting brackets).
    """
    _prescan(text, where)
    doc = tomllib.loads(text)
    stack: list[tuple[Any, int, str]] = [(doc, 0, "")]
    while stack:  # dotted keys ([a.b.c...]) nest without brackets: checked on the parsed document
        v, depth, path = stack.pop()
        if depth > MAX_TOML_DEPTH:
            raise _depth_error(where, path)
        if isinstance(v, dict):
            stack.extend((x, depth + 1, f"{path}.{k}" if path else str(k)) for k, x in v.items())
        elif isinstance(v, list):
            stack.extend((x, depth + 1, f"{path}[{i}]") for i, x in enumerate(v))
    return doc


#: the characters the bracket pre-scan acts on (the rest of a file, mostly letters and digits, is skipped)
_SPECIAL = re.compile(r"""[\\"'#\[\]{}\n]""")


def _prescan(text: str, where: str) -> None:
    """Refuse a value nested deeper than the limit by its brackets (outside strings and comments).

    Visits only the characters that matter (quotes, backslashes, ``#``, brackets, newlines),
    found by one regular expression: a character-by-character loop cost 0.03 s of CPU for the 79
    shipped profiles, on every command that reads them."""
    depth = 0
    quote = None
    skip = 0  # characters before this index are consumed (an escaped character, a comment)
    for m in _SPECIAL.finditer(text):
        i = m.start()
        if i < skip:
            continue
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                skip = i + 2
            elif c == quote or c == "\n":
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#":
            j = text.find("\n", i)
            skip = len(text) if j < 0 else j
        elif c in "[{":
            depth += 1
            if depth > MAX_TOML_DEPTH + 1:
                line = text.count("\n", 0, i) + 1
                raise _depth_error(where, f"line {line}")
        elif c in "]}":
            depth = max(0, depth - 1)


def check_layer_count(n: int, where: str) -> None:
    """Refuse a workload of more than :data:`MAX_LAYERS` layers before it is built.

    Raises
    ------
    ValueError
        One line naming *where*, the limit and the count given.
    """
    if n > MAX_LAYERS:
        raise ValueError(f"{where}: expected at most {MAX_LAYERS:,} layers, got {n:,}")
