"""dlsys-suite: a plugin-based benchmark suite for distributed deep-learning and HPC techniques.

Plugins import the contract from :mod:`suite.api` (every name a plugin may use, documented in
docs/plugin-api.md)::

    from suite.api import hookimpl, Technique, Variant, Paper, Param, Claim, Result

This package keeps the 0.2 names (``from suite import Technique, ...``) for existing code; the
conformance kit warns about them in a plugin. The core never imports a plugin by name; plugins
are found through the ``suite.plugins`` entry-point group (see :mod:`suite.hookspecs`).
"""

from suite.errors import (
    ExperimentError,
    ParameterError,
    PluginError,
    ProfileError,
    StoreError,
    SuiteError,
    TechniqueError,
    WorkloadError,
)
from suite.hookspecs import hookimpl, hookspec
from suite.technique import (
    Approx,
    Assumption,
    AtLeast,
    AtMost,
    Between,
    Claim,
    Exact,
    Gain,
    Null,
    Ordered,
    Metric,
    Paper,
    Param,
    Property,
    Result,
    Scenario,
    ScenarioSpec,
    Skip,
    Technique,
    Variant,
    with_reasons,
    read_data,
)

from suite._version import __version__

__all__ = [
    "__version__",
    "hookimpl",
    "hookspec",
    "Approx",
    "Assumption",
    "AtLeast",
    "AtMost",
    "Between",
    "Claim",
    "Exact",
    "Gain",
    "Null",
    "Ordered",
    "Metric",
    "Paper",
    "Param",
    "Property",
    "Result",
    "Scenario",
    "ScenarioSpec",
    "Skip",
    "Technique",
    "Variant",
    "with_reasons",
    "read_data",
    "SuiteError",
    "ParameterError",
    "TechniqueError",
    "PluginError",
    "ProfileError",
    "WorkloadError",
    "ExperimentError",
    "StoreError",
]
