"""Stores as an older suite wrote them, from the SQL dumps in ``data/`` (the migration tests)."""

from __future__ import annotations

import gzip
import sqlite3
from pathlib import Path

DATA = Path(__file__).parent / "data"


def dump_text(name: str) -> str:
    """The SQL text of the store dump ``data/NAME`` (``.sql``, or gzip-compressed ``.sql.gz``)."""
    path = DATA / name
    return gzip.decompress(path.read_bytes()).decode() if name.endswith(".gz") else path.read_text()


def store_from_dump(path: Path, name: str) -> Path:
    """A store file at *path* holding the dump ``data/NAME`` as its old suite wrote it (not migrated)."""
    con = sqlite3.connect(path)
    con.executescript(dump_text(name))
    con.close()
    return path
