"""Conformance kit for technique authors (see docs/plugin-authors.md, section 7).

* :func:`parametrize_with_checks` -- one pytest item per (technique, check), each in its own
  process with a time-out (like scikit-learn's ``parametrize_with_checks``);
* :func:`check_technique` -- every contract check on a Technique in this process (raises on the
  first failure); :func:`run_checks` -- every check isolated, outcomes collected;
* :func:`resolve_case` -- a scenario resolved as ``suite run`` resolves it (for a plugin's own tests);
* :mod:`suite.testing.strategies` -- hypothesis strategies: profiles, perturbations, layer tables,
  scenarios;
* the pytest plugin (:mod:`suite.testing.pytest_plugin`, auto-loaded once dlsys-suite is installed)
  gives the ``suite_check`` and ``suite_technique`` fixtures.
"""

from suite.testing.check import (DEFAULT_CHECK_TIMEOUT, FAMILY_CHECKS, CheckReport, Outcome, check_claims_nulls,
                                 check_ids, check_technique, parametrize_with_checks, run_check, run_checks)
from suite.testing.resolve import resolve_case

__all__ = ["check_technique", "parametrize_with_checks", "run_checks", "run_check", "check_ids",
           "check_claims_nulls", "resolve_case", "CheckReport", "Outcome", "FAMILY_CHECKS", "DEFAULT_CHECK_TIMEOUT"]
