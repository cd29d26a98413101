"""Plugin text on a terminal or in a CSV file: what could act instead of being read is made visible.

A plugin names its variants, parameters and units, and a result carries its own units: that text
reaches ``suite run``, ``suite results show``, ``suite compare`` and ``suite info``. A control
character in it (ESC starts a terminal sequence: ``\\x1b[2J`` clears the screen, ``\\x1bc`` resets the
terminal; BEL rings; CR overwrites the line), a format character (a bidirectional override such as
U+202E: the rest of the line reads in another order; a zero-width space: "fast" and "fa\\u200bst"
look alike) or a line separator is shown as its escape (``\\x1b``, ``\\u202e``) by :func:`visible`. A CSV cell that a spreadsheet would run as a formula (text starting
with ``=``, ``+``, ``-``, ``@``, a tab or CR) gets a leading ``'`` from :func:`csv_cell`.
"""

from __future__ import annotations

import unicodedata
from typing import Any

__all__ = ["visible", "hidden_characters", "hides", "csv_cell"]

#: the Unicode categories of a character that acts or hides instead of being read: controls (Cc),
#: format characters (Cf: the bidirectional marks, embeddings, overrides and isolates, zero-width
#: spaces and joiners, the byte-order mark), surrogates, private use, unassigned, and the line and
#: paragraph separators; the line feed and tab a table cell may hold are kept
_HIDING_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_KEPT = frozenset("\n\t")


def hides(ch: str) -> bool:
    """Whether the character *ch* acts or hides instead of being read (:data:`_HIDING_CATEGORIES`,
    the line feed and tab aside): what :func:`visible` escapes, and what a run name refuses."""
    return ch not in _KEPT and unicodedata.category(ch) in _HIDING_CATEGORIES
#: text a spreadsheet reads as a formula (OWASP "CSV injection")
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(text: str) -> str:
    """*text* with each control character (but line feed and tab) and bidirectional control shown
    as its Python escape: ``"a\\x1b[2Jb"`` -> ``"a\\\\x1b[2Jb"`` (the four characters ``\\x1b``).
    Other text, and so every built-in name, is returned unchanged."""
    if text.isprintable():  # every name of the suite's own: no character to look at
        return text
    return "".join(_escape(ch) if hides(ch) else ch for ch in text)


def hidden_characters(text: str) -> list[str]:
    """The characters of *text* that :func:`visible` would escape, as ``U+XXXX`` (empty: none)."""
    return [] if text.isprintable() else [f"U+{ord(ch):04X}" for ch in text if hides(ch)]


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
