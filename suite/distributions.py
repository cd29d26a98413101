"""Installed distributions' core metadata, read without the e-mail parser: their names, versions
and headers (the registry's plugin provenance, the case key's declared libraries)."""

from __future__ import annotations

from typing import Any

__all__ = ["metadata_headers", "name_and_version", "dist_cached"]

_DISTS: dict[str, tuple[str, str]] = {}


def dist_cached(path: str, dist: Any) -> tuple[str, str]:
    """(name, version) of the distribution *dist* found at *path*, read once per process (what is
    installed does not change while the process runs)."""
    hit = _DISTS.get(path)
    if hit is None:
        hit = _DISTS[path] = name_and_version(dist)
    return hit


def metadata_headers(dist: Any) -> dict[str, list[str]]:
    """Header name -> its values, in order, of *dist*'s core metadata file (packaging.python.org,
    "Core metadata specifications"), read up to the long description without parsing it as an
    e-mail message (~5 ms)."""
    text = dist.read_text("METADATA") or dist.read_text("PKG-INFO") or ""
    found: dict[str, list[str]] = {}
    for line in text.split("\n"):
        if not line:  # the empty line before the long description
            break
        if line[0] in " \t":  # a folded header's continuation (a License text's blank lines are " " or "\t")
            continue
        key, sep, value = line.partition(":")
        if sep:
            found.setdefault(key, []).append(value.strip())
    return found


def name_and_version(dist: Any) -> tuple[str, str]:
    """``(dist.metadata["Name"], dist.version)`` from :func:`metadata_headers`; the e-mail parse
    where a header line is missing."""
    found = metadata_headers(dist)
    if "Name" not in found or "Version" not in found:
        return dist.metadata["Name"] or "<unknown>", dist.version or ""
    return found["Name"][0] or "<unknown>", found["Version"][0]
