"""Deprecated alias of :mod:`suite.model_validation` (a technique's cost model against execution on
this machine, ``suite validate``), which this module was until 0.3.0; removed in 0.4.0. The
name said "validate" where three things validate: this, the profile files
(:mod:`suite.hardware.file_check`) and the collectives model (:mod:`suite.validate_collectives`)."""

from __future__ import annotations

import warnings

from suite.model_validation import (
    DEFAULT_PROFILE,
    ValidationReport,
    ValidationRow,
    compare_results,
    validate,
    validation_specs,
)

__all__ = ["ValidationRow", "ValidationReport", "validate", "validation_specs", "compare_results", "DEFAULT_PROFILE"]

warnings.warn("suite.validate is deprecated and will be removed in dlsys-suite 0.4.0: import from "
              "suite.model_validation", DeprecationWarning, stacklevel=2)
