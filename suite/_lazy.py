"""Module attributes imported on first use (PEP 562), for packages whose light functions must not
import their heavy dependencies (pydantic, pint) and for names kept importable after a move."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(module: str, table: Mapping[str, str], namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module ``__getattr__``: name -> ``getattr(import_module(table[name]), name)``, kept in
    *namespace* (the module's ``globals()``) so the next access is a plain lookup.

    Raises
    ------
    AttributeError
        A name not in *table* (as a module without it would).
    """
    def getattr_(name: str) -> Any:
        source = table.get(name)
        if source is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source), name)
        namespace[name] = value
        return value

    return getattr_
