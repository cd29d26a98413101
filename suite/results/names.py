"""Run names (``suite run --name LABEL``): one spelling per name, nothing that hides or reorders text.

A name is NFKC-normalised (a full-width ``ｂａｓｅ`` or a ligature names the same run as ``base``)
and refused if it holds a control or format character: the bidirectional controls (U+202A-U+202E,
U+2066-U+2069, U+200E/U+200F, U+061C) make a terminal show a name in another order than it is
typed (a right-to-left override turns ``run-lave`` into what reads as ``evalnur``), and zero-width
characters make two names that print alike differ.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize_run_name"]

_RESERVED = re.compile(r"(latest|last)(~\d+)?")


def normalize_run_name(name: object) -> str:
    """The canonical spelling of run name *name*.

    Raises
    ------
    ValueError
        One line: an empty name, all digits, ``latest``/``latest~N``, whitespace, or a control,
        format (bidirectional, zero-width) or unassigned character (its code point named).
    """
    if not isinstance(name, str) or not name:
        raise ValueError(f"--name: expected a non-empty label, got {name!r}")
    from suite.textsafe import hides

    for ch in name:
        if hides(ch) or ch in "\n\t":
            what = unicodedata.name(ch, "unnamed character")
            raise ValueError(f"--name: expected printable characters only, got U+{ord(ch):04X} ({what}) in "
                             f"{name.encode('unicode_escape').decode()!r}")
    norm = unicodedata.normalize("NFKC", name)
    if norm.isdigit() or re.search(r"\s", norm) or _RESERVED.fullmatch(norm.lower()):
        raise ValueError(f"--name: expected a label that is not a number, 'latest' or 'latest~N' and has no "
                         f"spaces, got {name!r}")
    return norm
