"""The bracket pre-scan of `suite.limits.loads_toml` (run on every profile file a command reads)
visits only the characters that matter; it must refuse exactly what the character-by-character
scan it replaced refused, at the same line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from suite.limits import MAX_TOML_DEPTH, TooDeep, _prescan


def _reference(text: str) -> int | None:
    """The scan as it was (0.3.0): the line of the first bracket past the limit, or None."""
    depth, quote, i, n = 0, None, 0, len(text)
    while i < n:
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
            elif c == "\n" and quote in ("'", '"'):
                quote = None
        elif c in "\"'":
            quote = c
        elif c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif c in "[{":
            depth += 1
            if depth > MAX_TOML_DEPTH + 1:
                return text.count("\n", 0, i) + 1
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return None


def _new(text: str) -> int | None:
    try:
        _prescan(text, "f.toml")
    except TooDeep as exc:
        return int(str(exc).split("line ")[1].split(":")[0])
    return None


PIECES = st.sampled_from(["[", "]", "{", "}", "\"", "'", "\\", "#", "\n", "a", " = ", "x", "[" * 20, "]" * 5])


@settings(max_examples=400, deadline=None)
@given(st.lists(PIECES, max_size=120).map("".join))
def test_prescan_refuses_what_the_character_loop_refused_at_the_same_line(text):
    assert _new(text) == _reference(text)


@pytest.mark.parametrize("text,line", [
    ("x = " + "[" * 40, 1),
    ('s = "[[[[' + "[" * 40 + '"\nok = 1\n', None),  # inside a string
    ("# " + "[" * 40 + "\nok = 1\n", None),  # inside a comment
    ('s = "\\"' + "[" * 40 + '"\n', None),  # an escaped quote keeps the string open
    ("s = 'a\\'\n" + "[" * 40, 2),  # a literal string ends at its quote: the backslash escapes nothing
])
def test_prescan_cases_by_hand(text, line):
    assert _reference(text) == line and _new(text) == line
