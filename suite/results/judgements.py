"""The judgement cache: ``suite reproduce``'s judged claim outcomes (JSON text), keyed by
everything a judgement depends on (:mod:`suite.runner.reproduce` builds the key: the claim, the
technique's and the core's code, the case keys and the content digests of their results), so a
cached reproduce re-derives nothing and an entry is never stale."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping

from suite.results.codec import now
from suite.results.sql import Tx, select_in

__all__ = ["judgements", "add_judgements"]


def judgements(conn: sqlite3.Connection, keys: Iterable[str]) -> dict[str, str]:
    """key -> the stored judgement (JSON text) for the given judgement keys that are stored."""
    return {k: v for k, v in select_in(conn, "SELECT key, data FROM judgements WHERE key IN ({marks})", keys)}


def add_judgements(tx: Tx, items: Mapping[str, str]) -> None:
    """Store judgements (judgement key -> JSON text) in one transaction, replacing any under the same key."""
    if not items:
        return
    created = now()
    with tx as conn:
        conn.executemany("INSERT OR REPLACE INTO judgements VALUES (?, ?, ?)",
                         [(k, v, created) for k, v in items.items()])
