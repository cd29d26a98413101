"""Conformance kit for technique authors (see docs/plugin-authors.md).

* :func:`check_technique` -- run every contract check on a Technique (raises on the first failure);
* :mod:`suite.testing.strategies` -- hypothesis strategies: profiles, perturbations, layer tables,
  scenarios;
* the pytest plugin (:mod:`suite.testing.pytest_plugin`, auto-loaded once dlsys-suite is installed)
  gives the ``suite_check`` fixture and the ``--suite-strict`` option.
"""

from suite.testing.check import FAMILY_CHECKS, CheckReport, check_technique

__all__ = ["check_technique", "CheckReport", "FAMILY_CHECKS"]
