"""``suite plugin new NAME``: scaffold an installable third-party technique plugin.

The generated package is small but real, and ships: it compares ring and binomial-tree
all-reduce, priced through the suite's one network model over every level of the profile
(:func:`suite.api.collective_time` on the group :func:`suite.api.group_of` places), with an
execute path that really all-reduces numpy arrays across simulated workers and checks them
against the dense sum (its oracle), a claim with a computed null, a property, its plain data in
``technique.toml`` read by :func:`suite.api.declare_technique` and its own hardware profile, both
shipped as package data, and tests: hand calculations, the conformance kit, and a slow
one that builds the wheel, installs it in a fresh virtual environment and checks that the plugin
loads and its profile is found there. Its tests pass as generated.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

from suite.errors import SuiteError

__all__ = ["scaffold_plugin", "package_name", "scaffold_files"]


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
dependencies = ["dlsys-suite>={suite_min}"]

[project.optional-dependencies]
# `python -m build` makes the wheel and sdist you publish
dev = ["build"]

[project.entry-points."suite.plugins"]
{name} = "{pkg}"

[tool.setuptools]
packages = ["{pkg}"]

[tool.setuptools.package-data]
# the technique's declaration and the hardware profiles the plugin ships: without this line the
# wheel has neither, and an installed (not editable) plugin is quarantined ("data file
# 'technique.toml': expected a file inside the package") and cannot find its own profile
{pkg} = ["technique.toml", "profiles/*.toml"]

[tool.pytest.ini_options]
testpaths = ["tests"]
markers = ["slow: builds the wheel and installs it in a fresh virtual environment"]
'''

_INIT = '''\
"""dlsys-suite plugin {name}: registers the technique and its hardware profiles (nothing else here)."""

from importlib.resources import files

from suite.api import hookimpl, lazy_hook

# the technique, imported only when a command asks for it (technique.toml names it, so `suite
# techniques` lists it, and every other command starts, without importing this plugin's code)
suite_techniques = lazy_hook("{pkg}.technique:TECHNIQUE", listed=True)


@hookimpl
def suite_hardware_profiles():
    # the folder is package data (pyproject.toml [tool.setuptools.package-data]): found in a wheel too
    return [files("{pkg}") / "profiles"]
'''

_PROFILE = '''\
# A hardware profile this plugin ships (package data): the testbed of the claim. Every figure is a
# string with a unit; give the source of each in [sources]. Replace with your paper's testbed.
nodes = 8

[profile]
name = "{name}-testbed"
kind = "cluster"
source = "scaffold example: 8 single-GPU nodes on 10 Gb Ethernet (replace with your paper's testbed)"
description = "8 nodes with one GTX TITAN X each on a 10 Gbit/s switch"

[node]
device = "nvidia-titan-x-maxwell"   # a device profile shipped with dlsys-suite
devices_per_node = 1

[[network]]                          # one entry per level, innermost first
name = "ethernet-10g"
topology = "switch"
size = 8
bandwidth = "10 Gbit/s"
latency = "37 us"

[sources]
"network.0.bandwidth" = "replace: where the 10 Gbit/s comes from"
"network.0.latency" = "replace: where the 37 us per message comes from"
'''

_MODEL = '''\
"""Cost model: all-reduce time of ring vs binomial tree, over every network level of the profile.

Communication is priced through the suite's one network model, :func:`suite.api.collective_time`,
on the group :func:`suite.api.group_of` places on the profile's nodes: the same model every
technique uses, over all levels (intra-node links, NICs, inter-node fabric), so a profile field
changes this technique exactly as it changes the others.

References
----------
.. [Patarasuk09] P. Patarasuk, X. Yuan, "Bandwidth optimal all-reduce algorithms for clusters of
   workstations", JPDC 69(2), 2009: ring T = 2(p-1) alpha + 2(p-1)/p m beta.
.. [Thakur05] R. Thakur et al., "Optimization of Collective Communication Operations in MPICH",
   IJHPCA 19(1), 2005, §4.4: binomial tree reduce + broadcast T = 2 ceil(log2 p)(alpha + m beta).
"""

from __future__ import annotations

from suite.api import Result, Scenario, Skip, collective_time, group_of


def evaluate(scenario: Scenario) -> Result:
    """Predict one all-reduce of ``message_size`` bytes among ``workers`` ranks.

    Metrics: ``comm_time`` (s); ``comm_bytes`` (B: what one worker sends over all network levels
    together, the kit's definition); ``efficiency`` (1: the time the busiest level needs to carry
    its bytes at its bandwidth, over ``comm_time``; 1 is bandwidth-optimal).
    """
    profile = scenario.profile
    if not profile.network:
        raise Skip(f"profile {{profile.name!r}} has no network level")
    group = group_of(profile, scenario.params["workers"])
    m = scenario.params["message_size"]  # declared in MB: the suite hands it over in MB
    cost = collective_time("allreduce", m * 1e6, group, profile, algorithm=scenario.variant)
    busiest = max(b / level.bandwidth for b, level in zip(cost.bytes_per_level, profile.network))
    return (Result()
            .add("comm_time", cost.time, "s", "lower")
            .add("comm_bytes", sum(cost.bytes_per_level), "B", "none")
            .add("efficiency", busiest / cost.time if cost.time > 0 else 1.0, "1", "higher"))
'''

_EXECUTE = '''\
"""Execute: really all-reduce numpy arrays across simulated workers and check the oracle."""

from __future__ import annotations

import numpy as np

from suite.api import Ledger, Result, Scenario, allreduce


def evaluate(scenario: Scenario) -> Result:
    """Each of ``workers`` simulated workers holds a random float64 vector of ``elements``;
    all-reduce them with the variant's algorithm; compare with the dense sum (the oracle).
    ``oracle_error`` is the largest absolute difference: the runner fails the case above the
    technique's ``oracle_tolerance``."""
    p = scenario.params["workers"]
    n = scenario.params["elements"]
    rng = np.random.default_rng(scenario.seed)
    arrays = [rng.standard_normal(n) for _ in range(p)]
    ledger = Ledger()
    out = allreduce(arrays, scenario.variant, ledger)
    oracle = np.sum(arrays, axis=0)
    err = max(float(np.max(np.abs(o - oracle))) for o in out)
    return (Result()
            .add("oracle_error", err, "1", "lower")
            .add("messages", ledger.count, "1", "lower")
            .add("bytes_sent", sum(ledger.sent_by().values()), "B", "lower")
            .add("bytes_received", sum(ledger.received_by().values()), "B", "lower"))
'''

_TECHNIQUE_TOML = '''\
# The plain data of the {name} technique, read by declare_technique() in technique.py: name, paper,
# variants, parameters, fidelities, defaults, smoke scenarios and the properties' names. What is
# Python (the claims, the properties' checks) stays in technique.py. The file is package data
# (pyproject.toml) and part of the code fingerprint: editing it makes new cases. A bad entry
# quarantines the plugin with one line naming this file and the field. Schema: dlsys-suite's
# docs/plugin-api.md, "technique.toml".

name = "{name}"
# bump on every change of behaviour; stored results also record a fingerprint of this
# package's source, so results of changed code are never served under the old key
version = "0.1.0"
title = "Ring vs tree all-reduce (scaffold: replace with your technique)"
category = "communication"
default_profile = "{profile}"
needs_workload = false
# the model reads no workload: a --workload given is refused, not stored under a name never read
# (delete this line when a scenario's workload changes the figures)
takes_workload = false
profile_kinds = ["cluster"]
# the kit's family checks that apply (network sensitivity, oracle agreement and units run by default)
capabilities = ["bytes-conserved", "alpha-beta-bound"]
# execute: largest |all-reduced - dense sum| accepted (float64 sums of 8 vectors)
oracle_tolerance = 1e-9

# what each metric means (`suite info` prints them; the kit's `meanings` check compares the unit and
# direction with the results): one line each, with the baseline of a ratio; a fidelity's own table
# ([metric_meanings.execute]) holds the metrics only it reports, or means otherwise
[metric_meanings]
comm_time = {{ unit = "s", direction = "lower", meaning = "seconds of one all-reduce of message_size MB over the profile's network" }}
comm_bytes = {{ unit = "B", direction = "none", meaning = "bytes one worker sends over every network level together" }}
efficiency = {{ unit = "1", direction = "higher", meaning = "the busiest level's time at its bandwidth over comm_time (1: bandwidth-optimal)" }}

[metric_meanings.execute]
oracle_error = {{ unit = "1", direction = "lower", meaning = "largest |all-reduced - dense sum| over every worker's result" }}
messages = {{ unit = "1", direction = "lower", meaning = "point-to-point messages the simulated workers sent" }}
bytes_sent = {{ unit = "B", direction = "lower", meaning = "bytes all simulated workers sent" }}
bytes_received = {{ unit = "B", direction = "lower", meaning = "bytes all simulated workers received" }}

# references, imported the first time one runs: `suite techniques` lists the plugin without them
[fidelities]
model = "{pkg}.model:evaluate"
execute = "{pkg}.execute:evaluate"

[paper]
title = "Bandwidth optimal all-reduce algorithms for clusters of workstations"
authors = ["P. Patarasuk", "X. Yuan"]
venue = "JPDC 69(2)"
year = 2009
doi = "10.1016/j.jpdc.2008.09.002"

[[variants]]
name = "tree"
description = "binomial-tree reduce then broadcast"
baseline = true

[[variants]]
name = "ring"
description = "ring reduce-scatter then all-gather"

# role = "scale": the technique's size (one device per worker), which `suite run --category` sets
# so every technique of the category runs on the same number of GPUs
[parameters.workers]
type = "int"
default = 8
minimum = 1
maximum = 4096
unit = "workers"
role = "scale"
help = "number of workers"

# a unit the suite converts: `--param message_size="2 GiB"` reaches the model in MB
[parameters.message_size]
type = "float"
default = 64.0
minimum = 0.0
maximum = 1e6
unit = "MB"
help = "all-reduced size"

[parameters.elements]
type = "int"
default = 1000
minimum = 1
maximum = 10_000_000
help = "execute: vector length"

[[properties]]
name = "bandwidth-monotone"
description = "comm_time never increases when every level's bandwidth doubles"
check = "_faster_network_is_never_slower"  # a function of technique.py, defined above declare_technique()

[[smoke]]
variant = "ring"
profile = "{profile}"
params = {{ workers = 4, message_size = 8.0 }}

[[smoke]]
variant = "ring"
profile = "{profile}"
fidelity = "execute"
params = {{ workers = 4, elements = 64 }}
'''

_TECHNIQUE = '''\
"""Declaration of the {name} technique: its claims and its properties' checks (Python). The plain
data (paper, variants, parameters, fidelities, defaults, smoke scenarios) is in technique.toml."""

from __future__ import annotations

from dataclasses import replace

from suite.api import Approx, Claim, Null, ScenarioSpec, declare_technique

# The declaration imports no model or execute code: technique.toml names the fidelities by
# reference, imported the first time one runs, so `suite techniques` lists this plugin without them.


def _faster_network_is_never_slower(technique, scenario):
    """Doubling every network level's bandwidth never raises the communication time."""
    profile = scenario.profile
    if not profile.network:
        return
    base = technique.evaluate(scenario)["comm_time"]
    faster = profile.with_overrides({{f"network.{{i}}.bandwidth": f"{{level.bandwidth * 2!r}} B/s"
                                     for i, level in enumerate(profile.network)}})
    again = technique.evaluate(replace(scenario, profile=faster))["comm_time"]
    if again > base * (1 + 1e-12):  # raised, not asserted: a property check must hold under python -O
        raise AssertionError(f"comm_time rose from {{base}} to {{again}} when bandwidth doubled")


CLAIMS = [
    Claim(
        id="ring-bandwidth-optimal",
        statement="For large messages the ring all-reduce time approaches the bandwidth lower bound",
        source="Patarasuk & Yuan 2009, §3 (not re-read for this scaffold)",
        verified=False,
        expect=Approx(1.0, rel=0.05),
        scenario=ScenarioSpec("ring", profile="{profile}", params={{"workers": 8, "message_size": 1000.0}}),
        metric="efficiency",
        # the null: the other algorithm at the same point, computed; it must fall outside the band
        nulls=(Null("binomial tree at the same point", variants={{"ring": "tree"}}),),
    ),
]

# technique.toml's fields plus the claims: the property's check is found above by its name
TECHNIQUE = declare_technique(__name__, claims=CLAIMS)
'''

_TESTS = '''\
"""Tests of {name}: a hand calculation, the oracle, and the dlsys-suite conformance kit."""

from __future__ import annotations

import pytest

from suite.api import ScenarioSpec
from suite.testing import parametrize_with_checks, resolve_case

from {pkg}.technique import TECHNIQUE


@parametrize_with_checks([TECHNIQUE], max_examples=5, timeout=120)
def test_conforms(technique, check):
    """One item per conformance check, each in a forked process with a time-out: a check that
    crashes or hangs fails only its own item, never the test session."""
    check(technique)


def _figure(profile, path):
    """A profile figure the hand calculation below assumes, or one line saying it is missing."""
    value = profile
    for part in path.split("."):
        value = value[int(part)] if part.isdigit() else getattr(value, part, None)
        if value is None:
            pytest.fail(f"profile {{profile.name!r}}: {{path}} is not set; the hand calculation needs it "
                        f"({{profile.path}})", pytrace=False)
    return value


def test_ring_model_hand_value():
    """8 workers, 1000 MB, the shipped testbed (10 Gbit/s = 1.25e9 B/s, 37 us, 336.5 GB/s memory):
    ring T = 2(p-1) alpha + 2(p-1)/p m / bw + (p-1)/p m * 3 / memory_bandwidth (the reduction)
      = 14 * 37e-6 + 1.75e9 / 1.25e9 + 0.875e9 * 3 / 336.5e9 = 1.408319 s."""
    case = resolve_case(TECHNIQUE, ScenarioSpec("ring", params={{"workers": 8, "message_size": 1000.0}}))
    profile = case.scenario.profile
    assert _figure(profile, "network.0.bandwidth") == 1.25e9 and _figure(profile, "network.0.latency") == 37e-6
    assert _figure(profile, "device.memory_bandwidth") == 336.5e9
    result = TECHNIQUE.evaluate(case.scenario)
    assert result["comm_time"] == pytest.approx(1.408319, rel=1e-6)
    assert result["comm_bytes"] == pytest.approx(1.75e9)


def test_execute_equals_oracle():
    for variant in ("ring", "tree"):
        case = resolve_case(TECHNIQUE, ScenarioSpec(variant, fidelity="execute", params={{"workers": 5}}))
        assert TECHNIQUE.evaluate(case.scenario)["oracle_error"] < 1e-9
'''

_TEST_WHEEL = '''\
"""The wheel ships: build it, install it in a fresh virtual environment, and check that the plugin
loads and finds its own hardware profile there (what an editable install hides). Slow: run with
``pytest -m slow``."""

from __future__ import annotations

import importlib.util
import json
import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow

_PROBE = """
import json
from suite.context import Context
ctx = Context.build(strict=True)  # a quarantined plugin is an error here
tech = ctx.technique("{name}")
profile = ctx.profile("{profile}")
import {pkg}
print(json.dumps({{"module": {pkg}.__file__, "profile": str(profile.path), "claims": len(tech.claims)}}))
"""


def _run(cmd, **kw):
    env = {{k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "SUITE_STRICT_PLUGINS")}}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, **kw)


def _isolation() -> list[str]:
    """``--no-build-isolation`` when setuptools >= 68 (pyproject.toml's build requirement) and
    wheel are importable here, else nothing (an isolated build)."""
    if importlib.util.find_spec("wheel") is None or importlib.util.find_spec("setuptools") is None:
        return []
    from importlib.metadata import version

    return ["--no-build-isolation"] if int(version("setuptools").split(".")[0]) >= 68 else []


def test_wheel_installs_in_a_fresh_venv(tmp_path):
    # 1. build the wheel: with this environment's setuptools and wheel when it has them (offline),
    #    else in pip's isolated build environment (pip fetches setuptools from your index)
    r = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", *_isolation(), "-w", str(tmp_path / "dist"), str(ROOT)])
    assert r.returncode == 0, r.stdout + r.stderr
    wheel = next((tmp_path / "dist").glob("*.whl"))

    # 2. a fresh venv that sees dlsys-suite and its dependencies from this one (nothing downloaded),
    #    but not this project's source tree
    venv = tmp_path / "venv"
    r = _run([getattr(sys, "_base_executable", sys.executable), "-m", "venv", "--without-pip", str(venv)])
    assert r.returncode == 0, r.stderr
    py = venv / "bin" / "python"
    child_site = Path(_run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip())
    parents = dict.fromkeys([sysconfig.get_paths()["purelib"], *site.getsitepackages()])
    (child_site / "_parent_env.pth").write_text("".join(f"import site; site.addsitedir({{p!r}})\\n" for p in parents))
    # --ignore-installed: the copy this environment has (editable, say) must not count as installed
    r = _run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", "--ignore-installed", "-q", str(wheel)],
             cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr

    # 3. the installed copy loads and finds its profile inside the venv (package data in the wheel)
    r = _run([str(py), "-c", _PROBE], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert Path(got["module"]).is_relative_to(venv), got
    assert Path(got["profile"]).is_relative_to(venv), got
    assert got["claims"] >= 1
'''

_README = '''\
# suite-{name}

A [dlsys-suite](https://pypi.org/project/dlsys-suite/) technique plugin, generated by
`suite plugin new {name}`. It compares ring and binomial-tree all-reduce: replace it with your
technique, keeping the shape: `technique.toml` declares the plain data (paper, variants,
parameters, smoke scenarios), `technique.py` the claims and property checks (Python), `model.py`
predicts (communication through `suite.api.collective_time` over every network level),
`execute.py` computes for real and reports its `oracle_error`, `profiles/` holds the hardware
profiles it ships.

```bash
pip install -e .              # registers the entry point `{name} = "{pkg}"` in group suite.plugins
suite techniques              # lists {name}
suite reproduce {name}        # the claim scoreboard
pytest -m "not slow"          # hand calculation, oracle, conformance kit (one item per check)
pytest -m slow                # builds the wheel and installs it in a fresh virtual environment
pip install build && python -m build   # the wheel and sdist to publish
```
'''


def scaffold_files(name: str, profile: str | None = None) -> dict[str, str]:
    """The files of a new plugin for technique *name*: relative path -> text."""
    from suite._version import __version__

    pkg = package_name(name)
    # the plugin needs the contract of the suite that generated it: this minor version or later
    suite_min = ".".join(__version__.split(".")[:2])
    fmt = {"name": name, "pkg": pkg, "profile": profile or f"{name}-testbed", "suite_min": suite_min}
    files = {
        "pyproject.toml": _PYPROJECT,
        "README.md": _README,
        f"{pkg}/__init__.py": _INIT,
        f"{pkg}/technique.toml": _TECHNIQUE_TOML,
        f"{pkg}/technique.py": _TECHNIQUE,
        f"{pkg}/model.py": _MODEL,
        f"{pkg}/execute.py": _EXECUTE,
        f"{pkg}/profiles/{name}-testbed.toml": _PROFILE,
        f"tests/test_{pkg}.py": _TESTS,
        "tests/test_wheel.py": _TEST_WHEEL,
    }
    return {rel: textwrap.dedent(t).format(**fmt) for rel, t in files.items()}


def scaffold_plugin(name: str, out_dir: str | Path = ".", profile: str | None = None) -> Path:
    """Write a new plugin package for technique *name* under ``out_dir/suite-<name>/``.

    Parameters
    ----------
    name : str
        The technique's name (lower-case letters, digits, '-').
    out_dir : str or Path
    profile : str, optional
        The profile the claim and the smoke scenarios name; default the one the plugin ships,
        ``<name>-testbed``.

    Raises
    ------
    SuiteError
        Bad name, a technique or package of that name already installed, or the target folder exists.
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
    for rel, text in scaffold_files(name, profile).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root
