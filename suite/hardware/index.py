"""Deprecated alias of :mod:`suite.cache` (the cache folder, JSON-object files and cached
listings), which this module was until 0.3.0; removed in 0.4.0."""

from __future__ import annotations

import warnings

from suite.cache import (
    cache_dir,
    listing_key,
    load_listing,
    merge_json_dict,
    package_files,
    read_json_dict,
    save_listing,
)

__all__ = ["cache_dir", "listing_key", "load_listing", "merge_json_dict", "package_files", "read_json_dict",
           "save_listing"]

warnings.warn("suite.hardware.index is deprecated and will be removed in dlsys-suite 0.4.0: import from "
              "suite.cache", DeprecationWarning, stacklevel=2)
