"""The profile fields each evaluation was seen to read (:mod:`suite.hardware.tracking`): per
(technique, code fingerprint, variant, fidelity) in ``fields_read``, and per result in
``results.fields_id`` (a ``field_sets`` row: each distinct set stored once)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable

from suite.results.sql import KEY_IN, Tx, select_keys

__all__ = ["add_fields_read", "case_fields_read", "fields_read", "run_fields_read"]


def add_fields_read(tx: Tx, technique: str, code: str, variant: str, fidelity: str, fields: Iterable[str]) -> None:
    """Record (a union with what is stored) the profile fields an evaluation of this technique
    code, variant and fidelity read."""
    with tx as conn:
        row = conn.execute("SELECT fields FROM fields_read WHERE technique=? AND code=? AND variant=? "
                           "AND fidelity=?", (technique, code or "", variant, fidelity)).fetchone()
        have = set(json.loads(row[0])) if row else set()
        new = have | set(fields)
        if row is None or new != have:
            conn.execute("INSERT OR REPLACE INTO fields_read VALUES (?, ?, ?, ?, ?)",
                         (technique, code or "", variant, fidelity, json.dumps(sorted(new))))


def fields_read(conn: sqlite3.Connection, technique: str, code: str | None = None) -> dict[tuple[str, str], set[str]]:
    """(variant, fidelity) -> the profile fields stored as read by *technique* (its *code*
    fingerprint only, when given)."""
    q = "SELECT variant, fidelity, fields FROM fields_read WHERE technique = ?"
    args: list[str] = [technique]
    if code is not None:
        q += " AND code = ?"
        args.append(code)
    out: dict[tuple[str, str], set[str]] = {}
    for v, f, fields in conn.execute(q, args):
        out.setdefault((v, f), set()).update(json.loads(fields))
    return out


def run_fields_read(conn: sqlite3.Connection, rid: int | None) -> dict[tuple[str, str], set[str]] | None:
    """(technique, code fingerprint) -> the profile fields recorded as read by the results run
    *rid* produced or reused (its own record); None when none of them recorded its reads."""
    out: dict[tuple[str, str], set[str]] = {}
    for t, code, fields in conn.execute(
            "SELECT DISTINCT c.technique, json_extract(c.identity, '$.code'), f.fields FROM run_cases rc "
            "JOIN results r ON r.id = rc.result_id JOIN field_sets f ON f.id = r.fields_id "
            "JOIN cases c ON c.id = rc.case_id WHERE rc.run_id = ?", (rid,)):
        out.setdefault((t, code or ""), set()).update(json.loads(fields))
    return out or None


def case_fields_read(conn: sqlite3.Connection, keys: Iterable[str]) -> dict[str, list[str]]:
    """Case key -> the profile fields its stored result recorded as read, for those of *keys*
    whose result recorded its reads (one query)."""
    out: dict[str, list[str]] = {}
    parsed: dict[str, list[str]] = {}  # a sweep's results share a few field sets: each parsed once
    for k, f in select_keys(conn, "SELECT c.key, f.fields FROM cases c JOIN results r ON r.id = c.result_id "
                                  f"JOIN field_sets f ON f.id = r.fields_id WHERE {KEY_IN}", keys):
        if f not in parsed:
            parsed[f] = json.loads(f)
        out[k] = parsed[f]
    return out
