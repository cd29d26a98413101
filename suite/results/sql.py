"""SQL plumbing of the store: the write transaction and queries over many keys."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from itertools import chain
from types import TracebackType
from typing import Any

__all__ = ["Tx", "CHUNK", "ROWS", "select_in", "execute_in", "marks", "insert_rows", "rows_per_statement", "statement_chunks",
           "key_hash", "KEY_IN", "KEY_IS", "key_args", "key_lists", "select_keys"]

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


#: most rows one multi-row ``INSERT ... VALUES (...), (...)`` carries (:func:`insert_rows`)
ROWS = 500


@lru_cache(maxsize=32)
def _values_sql(head: str, width: int, n: int, tail: str) -> str:
    row = f"({marks(width)})"
    return f"{head} VALUES {','.join([row] * n)}{tail}"


def rows_per_statement(conn: sqlite3.Connection, width: int) -> int:
    """How many rows of *width* values one statement carries: :data:`ROWS`, or fewer where
    SQLite allows fewer host parameters (999 before SQLite 3.32)."""
    return max(1, min(ROWS, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) // width))


def statement_chunks(conn: sqlite3.Connection, rows: Sequence[Any], width: int) -> Iterator[Sequence[Any]]:
    """*rows* in the slices one statement carries (:func:`rows_per_statement` rows of *width*)."""
    per = rows_per_statement(conn, width)
    for i in range(0, len(rows), per):
        yield rows[i:i + per]


def insert_rows(conn: sqlite3.Connection, head: str, rows: Sequence[Sequence[Any]], tail: str = "") -> list[Any]:
    """Execute ``{head} VALUES (row), (row), ...{tail}`` for *rows* (each of the same width), up
    to :data:`ROWS` rows a statement (fewer when SQLite allows fewer host parameters); the rows
    the statements return (a ``RETURNING`` *tail*), in order.

    The rows are written in order, each as one ``executemany`` would write it (conflict clauses
    apply row by row), but SQLite runs a few statements, not one per row: an ``executemany`` from
    the writer's thread gave up and took back the GIL at each row, and with the runner busy on
    the main thread a row of ``results`` cost 5.3-5.7 us of CPU there against 3.4-3.6 us in
    statements of 500 rows (20,000 rows, 5 rounds alternated, load 3.5-3.8)."""
    if not rows:
        return []
    width = len(rows[0])
    out: list[Any] = []
    for chunk in statement_chunks(conn, rows, width):
        cur = conn.execute(_values_sql(head, width, len(chunk), tail), list(chain.from_iterable(chunk)))
        out.extend(cur.fetchall())
    return out


def _in_lists(conn: sqlite3.Connection, keys: Iterable[Any], before: Sequence[Any]) -> Iterator[list[Any]]:
    """*keys* in lists of :data:`CHUNK`, fewer where SQLite allows fewer host parameters than
    *before* and :data:`CHUNK` keys together."""
    keys = list(keys)
    per = max(1, min(CHUNK, conn.getlimit(sqlite3.SQLITE_LIMIT_VARIABLE_NUMBER) - len(before)))
    for i in range(0, len(keys), per):
        yield keys[i:i + per]


def select_in(conn: sqlite3.Connection, sql: str, keys: Iterable[Any], before: Sequence[Any] = ()) -> Iterator[Any]:
    """The rows of *sql* for every key of *keys*, :data:`CHUNK` keys a query (fewer where SQLite
    allows fewer host parameters).

    *sql* holds ``{marks}`` where the ``IN`` list's placeholders go; *before* are the parameters
    that come before that list in the query."""
    for chunk in _in_lists(conn, keys, before):
        yield from conn.execute(sql.format(marks=marks(len(chunk))), [*before, *chunk])


def execute_in(conn: sqlite3.Connection, sql: str, keys: Iterable[Any]) -> None:
    """Execute *sql* (a statement holding ``{marks}`` for an ``IN`` list, e.g. a ``DELETE``) for
    every key of *keys*, in the lists :func:`select_in` uses."""
    for chunk in _in_lists(conn, keys, ()):
        conn.execute(sql.format(marks=marks(len(chunk))), chunk)


def key_hash(key: str) -> int:
    """``cases.khash`` of case key *key* (schema 8), a signed 64-bit integer (SQLite's INTEGER).

    A case key (:func:`suite.runner.case.case_key`) is the hex text of a SHA-256 digest's start:
    its hash is the first 8 bytes of that digest (the key's first 16 hex digits, read by
    ``int(head, 16)``) minus 2^63, so hashes sort as their keys do and a batch written in key order
    walks the ``cases_khash`` index front to back (300k cases stored, 20k more in key order: in a
    random order each insert cost 2.5-3x the CPU). Any other text (a key a caller made up) hashes
    to the first 8 bytes of its BLAKE2b digest. Two keys may share a hash (a chance of about
    n^2 / 2^65 among n cases of a store): every look-up checks the key itself too (:data:`KEY_IN`).
    Keys made up to share their first 16 hex digits (``0000...0001``, ``0000...0002``) all share
    one hash, and a look-up of one reads every one of them: correct, but as slow as a scan of them."""
    head = key[:16]
    if len(head) == 16 and head.isalnum():  # no sign, space or "_" that int() would also take
        try:
            return int(head, 16) - (1 << 63)
        except ValueError:
            pass
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=8).digest(), "big", signed=True)


#: the cases (alias ``c``) of a list of keys: found through the ``cases_khash`` index on their
#: hashes, and checked against the keys themselves, so a hash two keys share never serves the other
#: key's row. Two parameters, JSON lists of the hashes and of the keys (:func:`key_lists`): one
#: query for any number of keys, where ``IN (?, ?, ...)`` lists took one per few hundred keys and
#: cost twice the CPU a key
KEY_IN = "c.khash IN (SELECT value FROM json_each(?)) AND c.key IN (SELECT value FROM json_each(?))"


#: one case of table ``cases`` (no alias) by its key: through the ``cases_khash`` index, the key
#: itself checked; its two parameters are :func:`key_args`
KEY_IS = "khash = ? AND key = ?"


def key_args(key: str) -> tuple[int, str]:
    """The two parameters of :data:`KEY_IS` for *key*: its hash and the key."""
    return key_hash(key), key


def hashed(keys: Iterable[str]) -> dict[str, int]:
    """key -> :func:`key_hash` of each of *keys*, computed once: :func:`key_lists` (every look-up
    by keys) and :meth:`suite.results.store.Store.link_cached` take the mapping as the keys (it
    iterates as them) and hash none of them again."""
    return {k: key_hash(k) for k in keys}


def key_lists(keys: Iterable[str]) -> tuple[str, str]:
    """The two parameters of :data:`KEY_IN` for *keys*: the JSON lists of their hashes and of them
    (*keys* a :func:`hashed` mapping: its hashes)."""
    if isinstance(keys, Mapping):
        return "[" + ",".join([str(h) for h in keys.values()]) + "]", json.dumps(list(keys))
    keys = list(keys)
    return "[" + ",".join([str(key_hash(k)) for k in keys]) + "]", json.dumps(keys)


def select_keys(conn: sqlite3.Connection, sql: str, keys: Iterable[str], before: Sequence[Any] = ()) -> Iterator[Any]:
    """The rows of *sql* for every case key of *keys*, in one query.

    *sql* ends with :data:`KEY_IN`'s two parameters (:func:`key_lists`); *before* are the
    parameters that come before them."""
    return conn.execute(sql, [*before, *key_lists(keys)])
