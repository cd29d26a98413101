"""Theseus' constants that the declaration needs at import time, in a module that imports
nothing, so listing the technique does not import the TPC-H data module, the model or DuckDB
(:mod:`suite_theseus.tpch` imports and re-exports them; this is their one definition)."""

from __future__ import annotations

__all__ = ["QUERIES"]

#: the queries the engine implements (the issue's list)
QUERIES = (1, 3, 5, 6, 10, 12, 14)
