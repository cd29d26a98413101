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
name = sys.argv[1]
ep = [e for e in entry_points(group="suite.plugins") if e.name == name][0]
mod = ep.load()
techs = mod.suite_techniques() if hasattr(mod, "suite_techniques") else []
seen = []
for t in techs:
    # what `suite techniques` and `suite info` read
    [(v.name, v.description) for v in t.variants]
    [(k, p.default, p.help) for k, p in t.parameters.items()]
    [(c.id, c.source) for c in t.claims]
    [p.name for p in t.properties]
    seen.append({"name": t.name, "impl": t.implementation_modules})
heavy = sys.argv[2].split(",")
impl = {m for t in seen for m in t["impl"]}
loaded = sorted(m for m in sys.modules
                if any(m == h or m.startswith(h + ".") for h in heavy) or m in impl)
print(json.dumps({"techniques": seen, "loaded": loaded}))
"""

PLUGINS = sorted(e.name for e in entry_points(group="suite.plugins"))


@pytest.mark.parametrize("plugin", PLUGINS)
def test_declaration_imports_no_execute_code(plugin):
    out = subprocess.run([sys.executable, "-c", PROBE, plugin, ",".join(HEAVY)], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    impl = {m for t in got["techniques"] for m in t["impl"]}
    # libraries by top-level package, so the message stays one line; implementation modules by name
    tops = sorted({m if m in impl or m.startswith("suite.") else m.split(".")[0] for m in got["loaded"]})
    assert tops == [], f"plugin {plugin!r}: loading its declarations imported {tops}"
