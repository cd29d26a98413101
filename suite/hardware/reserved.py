"""The ``[ext.NAME]`` profile tables the core's own schemas validate, by name only (no pydantic).

:data:`suite.hardware.extensions.CORE_EXTENSIONS` holds the schemas and checks, when it loads,
that its names are these; :mod:`suite.registry` refuses a plugin that registers one of them. A
leaf module, so that both can read it without importing :mod:`suite.hardware` (whose lazy
exports lead back to the extension schemas).
"""

from __future__ import annotations

__all__ = ["CORE_EXTENSION_NAMES"]

#: names a plugin may not register for its own ``[ext.NAME]`` schema
CORE_EXTENSION_NAMES = frozenset({"fpga", "mix"})
