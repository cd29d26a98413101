"""``suite plugin new NAME``: scaffold an installable third-party technique plugin.

The generated package is small but real: it compares ring and binomial-tree all-reduce, with an
alpha-beta cost model on a hardware profile (``model``) and an execute path that really
all-reduces numpy arrays across simulated workers (``execute``), a claim, a declared property,
and tests that use the conformance kit. Its tests pass as generated.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from suite.errors import SuiteError

__all__ = ["scaffold_plugin", "package_name"]


def package_name(name: str) -> str:
    return "suite_" + name.replace("-", "_")


_PYPROJECT = '''\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "suite-{name}"
version = "0.1.0"
description = "dlsys-suite plugin: {name} (ring vs tree all-reduce; replace with your technique)"
requires-python = ">=3.11"
dependencies = ["dlsys-suite>=0.1"]

[project.entry-points."suite.plugins"]
{name} = "{pkg}"

[tool.setuptools]
packages = ["{pkg}"]

[tool.pytest.ini_options]
testpaths = ["tests"]
'''

_INIT = '''\
"""dlsys-suite plugin {name}: registers the technique with the suite (nothing else here)."""

from suite import hookimpl


@hookimpl
def suite_techniques():
    from {pkg}.technique import TECHNIQUE

    return [TECHNIQUE]
'''

_MODEL = '''\
"""Cost model: all-reduce time of ring vs binomial tree on a hardware profile (alpha-beta).

References
----------
.. [Patarasuk09] P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
   workstations", JPDC 69(2), 2009: ring T = 2(p-1) alpha + 2(p-1)/p m beta.
.. [Thakur05] R. Thakur et al., "Optimization of Collective Communication Operations in MPICH",
   IJHPCA 19(1), 2005, §4.4: binomial tree reduce + broadcast T = 2 ceil(log2 p)(alpha + m beta).
"""

from __future__ import annotations

import math

from suite import Result, Scenario, Skip
from suite.perf import alpha_beta, allreduce_lower_bound, ring_allreduce_time, tree_allreduce_time


def evaluate(scenario: Scenario) -> Result:
    """Predict the all-reduce time of ``scenario.params["message_mb"]`` MB over the profile's
    outermost network level for ``workers`` workers. Metrics: comm_time (s), comm_bytes (B sent
    per worker), efficiency (bandwidth lower bound / time)."""
    p = scenario.params["workers"]
    m = scenario.params["message_mb"] * 1e6
    net = scenario.profile.outer_network
    if net is None:
        raise Skip(f"profile {{scenario.profile.name!r}} has no network level")
    alpha, beta = alpha_beta(net)
    if scenario.variant == "ring":
        t = ring_allreduce_time(m, p, alpha, beta)
        sent = 2 * (p - 1) / p * m
    else:
        t = tree_allreduce_time(m, p, alpha, beta)
        sent = 2 * math.ceil(math.log2(p)) * m if p > 1 else 0.0
    bound = allreduce_lower_bound(m, p, beta)
    return (Result()
            .add("comm_time", t, "s", "lower")
            .add("comm_bytes", sent, "B", "none")
            .add("efficiency", bound / t if t > 0 else 1.0, "1", "higher"))
'''

_EXECUTE = '''\
"""Execute: really all-reduce numpy arrays across simulated workers and check the oracle."""

from __future__ import annotations

import numpy as np

from suite import Result, Scenario
from suite.collectives import Ledger, allreduce


def evaluate(scenario: Scenario) -> Result:
    """Each of ``workers`` simulated workers holds a random float64 vector of ``elements``;
    all-reduce them with the variant's algorithm; compare with the dense sum (the oracle)."""
    p = scenario.params["workers"]
    n = scenario.params["elements"]
    rng = np.random.default_rng(scenario.seed)
    arrays = [rng.standard_normal(n) for _ in range(p)]
    ledger = Ledger()
    out = allreduce(arrays, scenario.variant, ledger)
    oracle = np.sum(arrays, axis=0)
    err = max(float(np.max(np.abs(o - oracle))) for o in out)
    sent = sum(ledger.sent_by().values())
    received = sum(ledger.received_by().values())
    return (Result()
            .add("oracle_error", err, "1", "lower")
            .add("messages", ledger.count, "1", "lower")
            .add("bytes_sent", sent, "B", "lower")
            .add("bytes_received", received, "B", "lower"))
'''

_TECHNIQUE = '''\
"""Declaration of the {name} technique: paper, variants, parameters, claims, properties."""

from __future__ import annotations

from suite import Approx, Claim, Null, Paper, Param, Property, ScenarioSpec, Technique, Variant

# The declaration imports no model or execute code: the fidelities below are references, imported
# the first time one runs, so `suite techniques` lists this plugin without loading them.


def _faster_network_is_never_slower(technique, scenario):
    net = scenario.profile.outer_network
    if net is None:
        return
    base = technique.evaluate(scenario)["comm_time"]
    faster = scenario.profile.with_overrides({{"network.-1.bandwidth": net.bandwidth * 2}})
    from dataclasses import replace

    again = technique.evaluate(replace(scenario, profile=faster))["comm_time"]
    assert again <= base * (1 + 1e-12), f"comm_time rose from {{base}} to {{again}} when bandwidth doubled"


TECHNIQUE = Technique(
    name="{name}",
    # bump on every change of behaviour; stored results also record a fingerprint of this
    # package's source, so results of changed code are never served under the old key
    version="0.1.0",
    title="Ring vs tree all-reduce (scaffold: replace with your technique)",
    category="communication",
    paper=Paper(
        title="Bandwidth optimal all-reduce algorithms for clusters of workstations",
        authors=("P. Patarasuk", "X. Yuan"), venue="JPDC 69(2)", year=2009,
        doi="10.1016/j.jpdc.2008.09.002",
    ),
    variants=[
        Variant("tree", "binomial-tree reduce then broadcast", baseline=True),
        Variant("ring", "ring reduce-scatter then all-gather"),
    ],
    parameters={{
        "workers": Param(int, default=8, minimum=1, maximum=4096, unit="workers", help="number of workers"),
        "message_mb": Param(float, default=64.0, minimum=0.0, maximum=1e6, unit="MB", help="all-reduced size"),
        "elements": Param(int, default=1000, minimum=1, maximum=10_000_000, help="execute: vector length"),
    }},
    fidelities={{"model": "{pkg}.model:evaluate", "execute": "{pkg}.execute:evaluate"}},
    claims=[
        Claim(
            id="ring-bandwidth-optimal",
            statement="For large messages the ring all-reduce time approaches the bandwidth lower bound",
            source="Patarasuk & Yuan 2009, §3 (not re-read for this scaffold)",
            verified=False,
            expect=Approx(1.0, rel=0.05),
            scenario=ScenarioSpec("ring", profile="{profile}", params={{"workers": 8, "message_mb": 1000.0}}),
            metric="efficiency",
            # the null: the other algorithm at the same point must fall outside the band
            nulls=(Null("binomial tree at the same point", variants={{"ring": "tree"}}),),
        ),
    ],
    properties=[Property("bandwidth-monotone", "comm_time never increases when bandwidth doubles",
                         _faster_network_is_never_slower)],
    default_profile="{profile}",
    needs_workload=False,
    profile_kinds=("cluster",),
    capabilities=frozenset({{"bytes-conserved", "alpha-beta-bound", "oracle-exact"}}),
    smoke=[ScenarioSpec("ring", profile="{profile}", params={{"workers": 4, "message_mb": 8.0}}),
           ScenarioSpec("ring", profile="{profile}", fidelity="execute", params={{"workers": 4, "elements": 64}})],
)
'''

_TESTS = '''\
"""Tests of {name}: hand calculations and the dlsys-suite conformance kit."""

from __future__ import annotations

import pytest

from suite import ScenarioSpec
from suite.runner.case import resolve_case
from suite.testing import parametrize_with_checks

from {pkg}.technique import TECHNIQUE


@parametrize_with_checks([TECHNIQUE], max_examples=5, timeout=120)
def test_conforms(technique, check):
    """One item per conformance check, each in a forked process with a time-out: a check that
    crashes or hangs fails only its own item, never the test session."""
    check(technique)


def test_ring_model_hand_value():
    case = resolve_case(TECHNIQUE, ScenarioSpec("ring", params={{"workers": 4, "message_mb": 100.0}}))
    net = case.scenario.profile.outer_network
    expected = 2 * 3 * net.latency + 2 * 3 / 4 * 100e6 / net.bandwidth
    assert TECHNIQUE.evaluate(case.scenario)["comm_time"] == pytest.approx(expected)


def test_execute_equals_oracle():
    for variant in ("ring", "tree"):
        case = resolve_case(TECHNIQUE, ScenarioSpec(variant, fidelity="execute", params={{"workers": 5}}))
        assert TECHNIQUE.evaluate(case.scenario)["oracle_error"] < 1e-9
'''

_README = '''\
# suite-{name}

A [dlsys-suite](https://pypi.org/project/dlsys-suite/) technique plugin, generated by
`suite plugin new {name}`. It compares ring and binomial-tree all-reduce: replace it with your
technique (keep the shape: `technique.py` declares, `model.py` predicts, `execute.py` computes
for real and checks an oracle).

```bash
pip install -e .          # registers the entry point `{name} = "{pkg}"` in group suite.plugins
suite techniques          # lists {name}
suite reproduce {name}    # the claim scoreboard
pytest                    # hand calculations + the conformance kit (suite_check fixture)
```
'''


def scaffold_plugin(name: str, out_dir: str | Path = ".", profile: str = "titanx-cluster-10gbe") -> Path:
    """Write a new plugin package for technique *name* under ``out_dir/suite-<name>/``.

    Raises
    ------
    SuiteError
        Bad name, or the target folder exists.
    """
    if not re.fullmatch(r"[a-z][a-z0-9-]*[a-z0-9]", name or ""):
        raise SuiteError(f"plugin name: expected lower-case letters, digits and '-', starting with a letter and at "
                         f"least two characters long, got {name!r}")
    pkg = package_name(name)
    import importlib.util

    from suite.context import Context

    if name in {t.name for t in Context.build().techniques()}:
        raise SuiteError(f"plugin name {name!r}: a technique of that name is already installed; choose another")
    if importlib.util.find_spec(pkg) is not None:
        raise SuiteError(f"plugin name {name!r}: the package {pkg!r} already exists on this Python path; choose another")
    root = Path(out_dir) / f"suite-{name}"
    if root.exists():
        raise SuiteError(f"{root}: already exists; choose another name or -o DIR")
    fmt = {"name": name, "pkg": pkg, "profile": profile}
    files = {
        "pyproject.toml": _PYPROJECT,
        "README.md": _README,
        f"{pkg}/__init__.py": _INIT,
        f"{pkg}/technique.py": _TECHNIQUE,
        f"{pkg}/model.py": _MODEL,
        f"{pkg}/execute.py": _EXECUTE,
        f"tests/test_{pkg}.py": _TESTS,
    }
    for rel, template in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(template).format(**fmt), encoding="utf-8")
    return root
