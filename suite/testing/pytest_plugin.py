"""pytest plugin of dlsys-suite, registered under the ``pytest11`` entry point, so a plugin
author's test suite gets it just by having dlsys-suite installed.

Fixtures
--------
suite_check
    ``suite_check(technique_or_name, **kw) -> CheckReport``: runs
    :func:`suite.testing.check_technique` (every check in the test's process, the first failure
    raised; ``require_nulls=False`` leaves out ``claims-nulls``), resolving a technique name
    through the registry.
suite_technique
    ``suite_technique(name) -> Technique`` from the installed plugins (strict: a quarantined
    plugin fails the test with its reason).

For one pytest item per check, each in its own process with a time-out, decorate a test with
:func:`suite.testing.parametrize_with_checks` instead (docs/plugin-authors.md, section 7).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from suite.technique import Technique


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "suite_conformance: a dlsys-suite technique conformance test")


@pytest.fixture
def suite_technique() -> Callable[[str], Technique]:
    from suite.registry import Registry

    def get(name: str) -> Technique:
        reg = Registry()
        for p in reg.quarantined():
            pytest.fail(f"plugin {p.name!r} is quarantined: {p.reason}")
        return reg.technique(name)

    return get


@pytest.fixture
def suite_check(suite_technique: Callable[[str], Technique]) -> Callable[..., None]:
    from suite.testing import check_technique

    def run(technique: str | Technique, **kw: Any) -> None:
        tech = suite_technique(technique) if isinstance(technique, str) else technique
        check_technique(tech, **kw)

    return run
