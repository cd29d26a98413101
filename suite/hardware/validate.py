"""Deprecated alias of :mod:`suite.hardware.file_check` (profile files checked against the library,
``suite hardware validate``), which this module was until 0.3.0; removed in 0.4.0."""

from __future__ import annotations

import warnings

from suite.hardware.file_check import figures_key, identical_profiles, validate_paths

__all__ = ["validate_paths", "figures_key", "identical_profiles"]

warnings.warn("suite.hardware.validate is deprecated and will be removed in dlsys-suite 0.4.0: import from "
              "suite.hardware.file_check", DeprecationWarning, stacklevel=2)
