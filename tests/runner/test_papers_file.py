"""experiments/papers.toml: one `technique = "*"` entry whose expansion is exactly the claims' scenarios."""

from __future__ import annotations

import tomllib

from suite.context import Context
from suite.resources import builtin_dir
from suite.runner.experiment import expand_experiment


def test_papers_file_expands_to_every_claim_scenario(fake_registry):
    path = builtin_dir("experiments") / "papers.toml"
    doc = tomllib.loads(path.read_text())
    assert doc["papers"] == {"technique": "*", "claims": True}
    exp = expand_experiment(path, context=Context.build(registry=fake_registry))
    tech = fake_registry.technique("fake")
    want = [spec for c in tech.claims for spec in c.specs().values()]
    # 5 specs; the base scenario is shared by three claims, so 3 distinct cases (each runs once)
    assert len(exp.cases) == 5 and len({c.key for c in exp.cases}) == 3
    assert {(c.variant, c.params["mode"]) for c in exp.cases} == {(s.variant, s.params.get("mode", "ok")) for s in want}
