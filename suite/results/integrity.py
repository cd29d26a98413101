"""The store's health: an integrity check on open, and every SQLite error named with its file.

* :func:`check_on_open`: ``PRAGMA quick_check`` when the store file changed since this machine
  last closed it (size or modification time differ from what :func:`remember` recorded in the
  cache folder), so a store whose interior pages were damaged (a copy cut short, a disk fault)
  is refused before anything is written to it, at no cost when nothing changed.
* :func:`store_error`: a :class:`~suite.errors.StoreError` naming the store for any
  ``sqlite3`` error, saying what it is: a lock held by another process (not "not a store"), a
  full disk, a damaged file.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

from suite.errors import StoreError

__all__ = ["check_on_open", "remember", "store_error", "StoreSQLiteError"]


def _seen_file(path: Path) -> Path:
    from suite.cache import cache_dir

    key = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    return cache_dir() / "stores" / f"{key}.json"


def _stamp(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns]


def remember(path: Path) -> None:
    """Record the store's size and modification time as this machine last left it (best effort)."""
    stamp = _stamp(path)
    if stamp is None:
        return
    f = _seen_file(path)
    try:
        f.parent.mkdir(parents=True, exist_ok=True)
        tmp = f.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps(stamp))
        os.replace(tmp, f)
    except OSError:  # a cache that cannot be written: the next open checks again
        pass


def _changed(path: Path) -> bool:
    try:
        seen = json.loads(_seen_file(path).read_text())
    except (OSError, ValueError):
        return True
    return bool(seen != _stamp(path))


def check_on_open(conn: sqlite3.Connection, path: Path) -> None:
    """``PRAGMA quick_check`` of a store that changed since it was last closed here.

    Raises
    ------
    StoreError
        The check found damage: one line naming the store and SQLite's first finding.
    """
    if not _changed(path):
        return
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        raise store_error(path, exc) from None
    found = [ln.strip() for r in rows if r and r[0] != "ok" for ln in str(r[0]).splitlines() if ln.strip()]
    if found:
        more = f" and {len(found) - 1} more" if len(found) > 1 else ""
        raise StoreError(f"store {str(path)!r}: expected an intact SQLite file, got a damaged one "
                         f"(quick_check: {found[0]}{more}); restore a copy or give another --store")


class StoreSQLiteError(StoreError, sqlite3.OperationalError):
    """A SQLite error of the store, named (still an ``sqlite3.OperationalError`` for callers that
    catch SQLite's own errors)."""


def store_error(path: Any, exc: BaseException) -> Exception:
    """The :class:`StoreError` for *exc* raised by SQLite on the store at *path*: one line naming
    the file and saying what happened (also an ``sqlite3.OperationalError``): a store it cannot
    create, or whose journals it cannot create, in a folder this user may not write names the folder."""
    where = f"store {str(path)!r}"
    msg = str(exc) or type(exc).__name__
    low = msg.lower()
    if "locked" in low or "busy" in low:
        return StoreSQLiteError(f"{where}: locked by another process for more than 60 s ({msg}); wait for the other "
                          "`suite` command to finish, or give another --store")
    if "full" in low:
        return StoreSQLiteError(f"{where}: the disk holding it is full ({msg}); free space and run the command again "
                          "(stored cases are kept)")
    if "malformed" in low or "corrupt" in low or "not a database" in low:
        return StoreSQLiteError(f"{where}: expected an intact SQLite file, got a damaged one ({msg}); restore a copy "
                          "or give another --store")
    if "readonly" in low or "read-only" in low or "permission" in low:
        return StoreSQLiteError(f"{where}: not writable ({msg})")
    folder = Path(path).parent
    if "unable to open" in low and folder.is_dir() and not os.access(folder, os.W_OK):
        # SQLite cannot create the file (a new store) or its -wal / -shm journals beside it
        what = "cannot write it" if Path(path).exists() else "cannot create it"
        return StoreSQLiteError(f"{where}: {what}: the folder {str(folder)!r} is not writable")
    return StoreSQLiteError(f"{where}: {msg}")
