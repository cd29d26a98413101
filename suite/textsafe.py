"""Plugin text on a terminal or in a CSV file: what could act instead of being read is made visible.

A plugin names its variants, parameters and units, and a result carries its own units: that text
reaches ``suite run``, ``suite results show``, ``suite compare`` and ``suite info``. A control
character in it (ESC starts a terminal sequence: ``\\x1b[2J`` clears the screen, ``\\x1bc`` resets the
terminal; BEL rings; CR overwrites the line) or a bidirectional override (U+202A-U+202E,
U+2066-U+2069: the rest of the line reads in another order) is shown as its escape (``\\x1b``,
``\\u202e``) by :func:`visible`. A CSV cell that a spreadsheet would run as a formula (text starting
with ``=``, ``+``, ``-``, ``@``, a tab or CR) gets a leading ``'`` from :func:`csv_cell`.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["visible", "hidden_characters", "csv_cell"]

#: C0 and C1 controls and DEL, except the line feed and tab a table cell may hold, and the
#: bidirectional embeddings, overrides and isolates
_HIDING = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: text a spreadsheet reads as a formula (OWASP "CSV injection")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _escape(m: re.Match[str]) -> str:
    code = ord(m.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """*text* with each control character (but line feed and tab) and bidirectional control shown
    as its Python escape: ``"a\\x1b[2Jb"`` -> ``"a\\\\x1b[2Jb"`` (the four characters ``\\x1b``).
    Other text, and so every built-in name, is returned unchanged."""
    return _HIDING.sub(_escape, text)


def hidden_characters(text: str) -> list[str]:
    """The characters of *text* that :func:`visible` would escape, as ``U+XXXX`` (empty: none)."""
    return [f"U+{ord(ch):04X}" for ch in _HIDING.findall(text)]


def csv_cell(value: Any) -> Any:
    """One CSV cell: a string starting with ``= + - @``, a tab or CR gets a leading ``'`` (a
    spreadsheet shows it as text instead of running it) unless it is a number (``-1.5``, ``+3``
    stay numbers); control characters are shown by :func:`visible`. Non-strings are returned as
    they are."""
    if not isinstance(value, str):
        return value
    if value.startswith(_FORMULA_START) and not _is_number(value):
        value = "'" + value
    return visible(value)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text
