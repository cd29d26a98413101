"""Start-up stays cheap: listing a technique imports its declaration, never its execute code.

Issue 19 sets `suite techniques`, `suite info NAME` and `suite hardware list` under 0.3 s. What
makes them slow is measured by ``benchmarks/bench_cli.py``; what this file pins is the structure
that keeps them fast, which a timing assertion could not (the machine is shared): building the
registry and reading every declaration (variants, parameters, claims, properties) imports none of
the libraries a fidelity needs and none of the technique's own implementation modules.
"""

from __future__ import annotations

import json
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

#: Imported by some fidelity, never by a declaration. numpy is allowed (the contract uses it).
HEAVY = ("scipy", "pydantic", "pint", "dask", "distributed", "torch", "duckdb", "numba", "networkx",
         "sklearn", "pandas", "matplotlib", "submitit", "simpy", "suite.perf", "suite.hardware.profile",
         "suite.collectives", "suite.runner")

PROBE = r"""
import json, sys
from importlib.metadata import entry_points
heavy = sys.argv[1].split(",")
eps = {e.name: e for e in entry_points(group="suite.plugins")}
out = {}
for name in sys.argv[2:]:
    before = set(sys.modules)
    mod = eps[name].load()
    techs = mod.suite_techniques() if hasattr(mod, "suite_techniques") else []
    seen = []
    for t in techs:
        # what `suite techniques` and `suite info` read
        [(v.name, v.description) for v in t.variants]
        [(k, p.default, p.help) for k, p in t.parameters.items()]
        [(c.id, c.source) for c in t.claims]
        [p.name for p in t.properties]
        seen.append({"name": t.name, "impl": t.implementation_modules})
    impl = {m for t in seen for m in t["impl"]}
    # a library counts for the plugin whose declarations first imported it; its own implementation
    # modules count whenever they are loaded
    loaded = sorted({m for m in set(sys.modules) - before if any(m == h or m.startswith(h + ".") for h in heavy)}
                    | {m for m in sys.modules if m in impl})
    out[name] = {"techniques": seen, "loaded": loaded}
print(json.dumps(out))
"""

PLUGINS = sorted(e.name for e in entry_points(group="suite.plugins"))


@pytest.fixture(scope="module")
def probed():
    """What loading each plugin's declarations imported, all plugins in ONE child process (one
    interpreter start instead of one per plugin, ~0.4 s CPU each): each plugin is charged the heavy
    libraries first imported while its declarations load, so a library any declaration imports
    still fails the test of the first plugin that imports it."""
    out = subprocess.run([sys.executable, "-c", PROBE, ",".join(HEAVY), *PLUGINS], capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("plugin", PLUGINS)
def test_declaration_imports_no_execute_code(plugin, probed):
    got = probed[plugin]
    impl = {m for t in got["techniques"] for m in t["impl"]}
    # libraries by top-level package, so the message stays one line; implementation modules by name
    tops = sorted({m if m in impl or m.startswith("suite.") else m.split(".")[0] for m in got["loaded"]})
    assert tops == [], f"plugin {plugin!r}: loading its declarations imported {tops}"
