"""Locate the data that ships with dlsys-suite (hardware profiles, experiment files).

In a wheel the folders live inside the package (`suite/data/<name>`, see setup.py) and are found
with :mod:`importlib.resources`; in a source checkout (editable install) they are the top-level
folders of the repository. Never resolved relative to the current working directory.
"""

from __future__ import annotations

import importlib.resources
from pathlib import Path

__all__ = ["builtin_dir"]


def builtin_dir(name: str) -> Path:
    """Return the folder of shipped data called *name*.

    Parameters
    ----------
    name : str
        ``"hardware_profiles"``, ``"experiments"`` or ``"validation"`` (published measurements the
        cost models are checked against, ``suite validate --collectives``).

    Raises
    ------
    FileNotFoundError
        If neither the packaged copy nor the checkout copy exists.
    """
    packaged = Path(str(importlib.resources.files("suite") / "data" / name))
    if packaged.is_dir():
        return packaged
    checkout = Path(__file__).resolve().parent.parent / name
    if checkout.is_dir():
        return checkout
    raise FileNotFoundError(f"shipped data folder {name!r} not found (looked in {packaged} and {checkout})")
