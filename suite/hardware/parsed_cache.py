"""The profile files as parsed, cached on disk, so a command that reads the library does not parse
~80 TOML files again (0.05 s of CPU at every start, most of a warm command's profile cost).

One JSON document in the cache folder (:func:`suite.cache.cache_dir`) named after the reading
code: the files of :mod:`suite.limits` and :mod:`suite.hardware.profile_library` by stamp and the
Python version (``tomllib`` is the standard library's). In it, each file's parsed table under the
SHA-256 of the file's bytes: any edit is a new entry, even one that keeps the file's size and
modification time (a filesystem with coarse timestamps), so a stale parse never reaches a
profile's content hash and the case keys built from it. What is cached is what :func:`read_toml`
returned, exactly: a file holding a TOML date or time (no JSON equivalent) is not cached, and a
file that does not parse is never cached (its error is reported on every read, as without the
cache). A damaged or unwritable cache is ignored: the files are parsed.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["ParsedFiles"]

WHAT = "profile-toml"


def _digest(f: Path) -> str | None:
    """SHA-256 of *f*'s bytes (None when it cannot be read: the reader then reports why)."""
    try:
        return hashlib.sha256(f.read_bytes()).hexdigest()
    except OSError:
        return None


def _code_key(what: str = WHAT) -> str:
    """SHA-256 (24 hex) of the reading code's stamps and the Python version: for profile files this
    module, suite/limits.py and suite/hardware/profile_library.py (found by path: importing the
    library here would be an import circle); for another kind (*what*), this module (the parse is
    then tomllib's, which the Python version names)."""
    from suite.cache import _stamp

    here = Path(__file__).resolve()
    h = hashlib.sha256(f"{what}\0{sys.version}\n".encode())
    extra = (here.with_name("profile_library.py"), here.parent.parent / "limits.py") if what == WHAT else ()
    for f in (here, *extra):
        _stamp(h, f)
    return h.hexdigest()[:24]


def _plain(v: Any) -> bool:
    """Whether *v* round-trips through JSON unchanged (tables, arrays, strings, numbers, booleans)."""
    if isinstance(v, dict):
        return all(isinstance(k, str) and _plain(x) for k, x in v.items())
    if isinstance(v, list):
        return all(_plain(x) for x in v)
    if isinstance(v, float):
        return not math.isnan(v)  # NaN != NaN: a table holding one would never compare equal
    return isinstance(v, (str, int, bool))


class ParsedFiles:
    """The cache as one command uses it: :meth:`read` each file, then :meth:`save` once.

    Parameters
    ----------
    parse : callable
        ``parse(path) -> dict``: the reader (:func:`suite.hardware.profile_library.read_toml`);
        what it raises passes through, and that file is not cached.
    """

    def __init__(self, parse: Callable[[Path], dict[str, Any]], what: str = WHAT):
        from suite.cache import load_listing

        self._parse, self._what = parse, what
        self._key = _code_key(what)
        doc = load_listing(self._key, what, ("files",))
        files = doc.get("files") if doc is not None else None
        self._have: dict[str, Any] = files if isinstance(files, dict) else {}
        self._used: dict[str, Any] = {}
        self._new = False

    def read(self, f: Path) -> dict[str, Any]:
        """The parsed table of *f* (the caller may keep it; it is not shared)."""
        digest = _digest(f)
        hit = self._have.get(digest) if digest is not None else None
        if isinstance(hit, dict):  # (this document is this object's own: the table is not shared)
            self._used[str(digest)] = hit
            return hit
        return self._parsed(digest, self._parse(f))

    def read_text(self, text: str, parse: Callable[[str], dict[str, Any]]) -> dict[str, Any]:
        """``parse(text)``, or the table cached under the text's SHA-256 (a copy: the same text may
        be read again by this object); what *parse* raises passes through."""
        digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
        hit = self._have.get(digest)
        if isinstance(hit, dict):
            self._used[digest] = hit
            return copy.deepcopy(hit)
        return self._parsed(digest, parse(text))

    def _parsed(self, digest: str | None, raw: dict[str, Any]) -> dict[str, Any]:
        """*raw*, just parsed, kept for :meth:`save` when JSON holds it exactly."""
        if digest is not None and _plain(raw):
            self._used[digest] = json.loads(json.dumps(raw))
            self._new = True
        return raw

    def save(self) -> None:
        """Write the entries of the files read (when one was parsed): entries of files no longer
        read (edited, removed) are dropped, unless other folders' entries keep the document
        small enough to carry them (a command with ``--profiles DIR`` does not evict the rest)."""
        if not self._new:
            return
        from suite.cache import save_listing

        keep = dict(self._used)
        if len(self._have) + len(keep) <= 4 * max(len(keep), 64):
            keep = {**self._have, **keep}
        save_listing(self._key, {"what": self._what, "files": keep}, self._what)
        self._new = False
