"""SQL plumbing of the store: the write transaction and queries over many keys."""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Iterable, Iterator, Sequence
from types import TracebackType
from typing import Any

__all__ = ["Tx", "CHUNK", "select_in", "marks"]

#: keys per ``IN (...)`` list: below SQLite's default limit of 999 host parameters
CHUNK = 900


class Tx:
    """``with Tx(conn, lock):`` one ``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on an error),
    holding *lock* (the store's write lock) for its duration."""

    def __init__(self, conn: sqlite3.Connection, lock: threading.RLock) -> None:
        self.conn, self.lock = conn, lock

    def __enter__(self) -> sqlite3.Connection:
        self.lock.acquire()
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except BaseException:
            self.lock.release()
            raise
        return self.conn

    def __exit__(self, et: type[BaseException] | None, ev: BaseException | None,
                 tb: TracebackType | None) -> None:
        try:
            self.conn.execute("COMMIT" if et is None else "ROLLBACK")
        finally:
            self.lock.release()


def marks(n: int) -> str:
    """``?,?,...`` with *n* placeholders."""
    return ",".join("?" * n)


def select_in(conn: sqlite3.Connection, sql: str, keys: Iterable[Any], before: Sequence[Any] = ()) -> Iterator[Any]:
    """The rows of *sql* for every key of *keys*, :data:`CHUNK` keys a query.

    *sql* holds ``{marks}`` where the ``IN`` list's placeholders go; *before* are the parameters
    that come before that list in the query."""
    keys = list(keys)
    for i in range(0, len(keys), CHUNK):
        chunk = keys[i:i + CHUNK]
        yield from conn.execute(sql.format(marks=marks(len(chunk))), [*before, *chunk])
