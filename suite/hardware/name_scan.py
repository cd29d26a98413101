"""The name a profile file declares, read without parsing its TOML, when a plain reading is certain.

A command that needs two or three profiles should not parse all ~80 files of the library (about
0.04 s of CPU with an empty cache; :class:`suite.hardware.profile_library.ProfileLibrary` parses a
file when one of its profiles is first asked for). To know which file holds which name, each
file's text is scanned line by line for its ``[profile]`` table and the ``name = "..."`` in it.

The scan answers only when the file's layout leaves no doubt (TOML 1.0: a table header is a line
of its own, a key is followed by ``=`` on its line, and only multi-line strings let a line be
part of a value that looks like a key or a header), and None otherwise, so the file is parsed at
once: a multi-line string, a backslash, a quoted header, a ``profile`` key outside a header
(``profile.name = ...``, an inline table), an array of ``[[profile]]`` tables, a second
``[profile]`` header, or a ``name`` line in the table that is not one plain ``name = "NAME"``.
A name is letters, digits and ``._+-`` (what the library accepts), so the scanned text is the
parsed value. What the scan does not check (the rest of the file's syntax) is checked when the
file is parsed.

:func:`scan_top_name` reads the same way the top-level ``name`` of a plugin's ``technique.toml``
(the lines above its first table header), so the registry knows which technique a plugin declares
before importing it (:class:`suite.registry.Registry`).
"""

from __future__ import annotations

import re

__all__ = ["scan_profile_name", "scan_top_name"]

_PROFILE_HEADER = re.compile(r"\[[ \t]*profile[ \t]*\][ \t]*(?:#.*)?")
_OTHER_PROFILE_HEADER = re.compile(r"\[[ \t]*\[?[ \t]*profile[ \t]*[\]\[]")  # [[profile]], [ profile ]]...
_NAME_KEY = re.compile(r"[ \t]*[\"']?name\b")
_NAME_LINE = re.compile(r"[ \t]*name[ \t]*=[ \t]*(?:\"([A-Za-z0-9][A-Za-z0-9._+-]*)\"|'([A-Za-z0-9][A-Za-z0-9._+-]*)')"
                        r"[ \t]*(?:#.*)?")
_TOP_PROFILE_KEY = re.compile(r"[ \t]*[\"']?profile\b")


def scan_profile_name(text: str) -> str | None:
    """``profile.name`` of the TOML document *text* when the line scan above is certain of it,
    else None (parse the file to know)."""
    if '"""' in text or "'''" in text or "\\" in text:
        return None
    name: str | None = None
    seen_profile = in_profile = False
    at_top = True
    for line in text.split("\n"):  # TOML's newlines (str.splitlines also splits at U+2028 and others)
        line = line.removesuffix("\r")
        head = line.lstrip(" \t")
        if head.startswith("["):
            if '"' in head or "'" in head:
                return None
            at_top = False
            in_profile = bool(_PROFILE_HEADER.fullmatch(head))
            if in_profile and seen_profile or not in_profile and _OTHER_PROFILE_HEADER.match(head):
                return None  # a second [profile], or [[profile]]: the parser decides
            seen_profile = seen_profile or in_profile
        elif at_top and _TOP_PROFILE_KEY.match(line):
            return None
        elif in_profile and _NAME_KEY.match(line):
            m = _NAME_LINE.fullmatch(line)
            if m is None or name is not None:
                return None
            name = m.group(1) or m.group(2)
    return name


def scan_top_name(text: str) -> str | None:
    """The top-level ``name`` of the TOML document *text* when one plain ``name = "NAME"`` line
    says it above every table header, multi-line string and backslash (the lines a reader takes
    as they are), else None (parse the file to know). A second ``name`` key further down is a
    syntax error, found when the file is parsed."""
    name: str | None = None
    for line in text.split("\n"):
        line = line.removesuffix("\r")
        if line.lstrip(" \t").startswith("[") or '"""' in line or "'''" in line or "\\" in line:
            break
        if _NAME_KEY.match(line):
            m = _NAME_LINE.fullmatch(line)
            if m is None or name is not None:
                return None
            name = m.group(1) or m.group(2)
    return name
