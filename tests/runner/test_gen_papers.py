"""papers.toml generation: valid TOML whose entries expand to exactly the claims' scenarios."""

from __future__ import annotations

import tomllib

from suite.runner.experiment import expand_experiment
from suite.runner.gen_papers import BUILTIN, main, render


def test_render_and_expand(fake_registry, tmp_path):
    text = render(fake_registry)
    doc = tomllib.loads(text)
    assert list(doc)[1:len(BUILTIN) + 1] == list(BUILTIN)
    assert doc["fake"] == {"technique": "fake", "claims": True, "optional": True}
    out = tmp_path / "papers.toml"
    assert main([str(out)]) == 0
    exp = expand_experiment(out, registry=fake_registry)
    want = [spec for c in fake_registry.technique("fake").claims for spec in c.specs().values()]
    # 5 specs; the base scenario is shared by three claims, so 3 distinct cases (the runner runs each once)
    assert len(exp.cases) == 5 and len({c.key for c in exp.cases}) == 3
    assert exp.entries["fake"] == sum(len(c.specs()) for c in fake_registry.technique("fake").claims)
    assert {(c.variant, c.params["mode"]) for c in exp.cases if c.technique == "fake"} == \
        {(s.variant, s.params.get("mode", "ok")) for s in want}
    # built-in techniques absent from this registry are skipped with a note, not an error
    assert sum("skipped" in n for n in exp.notes) == len(BUILTIN)


def test_shipped_papers_file_parses():
    from suite.resources import builtin_dir

    doc = tomllib.loads((builtin_dir("experiments") / "papers.toml").read_text())
    for name in BUILTIN:
        assert doc[name]["technique"] == name and doc[name]["claims"] is True
