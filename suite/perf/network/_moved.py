"""The deprecated aliases of the modules that moved into :mod:`suite.perf.network` in 0.3.0.

Each old module (``suite.perf.collective``, ``suite.perf.comm``, ``suite.perf.nccl``,
``suite.perf.netsim``) warns once on import (DeprecationWarning naming its replacement and
"removed in 0.4.0") and resolves every name, public or not, from the modules that now hold it.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Callable
from types import ModuleType
from typing import Any

__all__ = ["moved"]


def moved(old: str, new: tuple[str, ...]) -> tuple[Callable[[str], Any], list[str]]:
    """Warn that *old* moved to ``new[0]`` and return ``(__getattr__, __all__)`` for the alias
    module: a lookup through the modules *new* in order (AttributeError naming *old* when none
    has the name), and the public names of ``new[0]``."""
    warnings.warn(f"{old} is deprecated: import from {new[0]} instead (or suite.perf.network); "
                  "the alias is removed in 0.4.0", DeprecationWarning, stacklevel=3)
    mods: list[ModuleType] = [importlib.import_module(n) for n in new]

    def lookup(name: str) -> Any:
        for mod in mods:
            if hasattr(mod, name):
                return getattr(mod, name)
        raise AttributeError(f"module {old!r} has no attribute {name!r} (it moved to {new[0]})")

    return lookup, list(getattr(mods[0], "__all__", ()))
