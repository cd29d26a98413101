"""Expansion of sweeps and experiment files: products, include/exclude, globs, tags, errors."""

from __future__ import annotations

import textwrap

import pytest

from suite.context import Context
from suite.errors import ExperimentError
from suite.runner.experiment import expand_entry, expand_experiment, find_experiment


def _ctx():
    """The context of the test: the fake plugin (the fake_registry fixture makes it the default)."""
    from suite.context import Context

    return Context.build()


def combos(exp):
    return sorted((c.variant, c.profile, c.params["x"], c.params["n"], c.seed, c.fidelity,
                   tuple(sorted(c.overrides.items()))) for c in exp.cases)


def test_product_counts_and_defaults(fake_registry):
    exp = expand_entry({"technique": "fake", "params": {"x": [1, 2, 3], "n": [1, 2]}, "seeds": [0, 1]}, context=_ctx())
    # 2 variants (default: all) x 3 x 2 x 2 seeds; default profile/workload/fidelity
    assert len(exp.cases) == 2 * 3 * 2 * 2
    assert {c.profile for c in exp.cases} == {"fake-cluster-a"}
    assert {c.workload for c in exp.cases} == {"fake-wl"}
    assert {c.fidelity for c in exp.cases} == {"model"}
    assert len({c.key for c in exp.cases}) == len(exp.cases)


def test_scalars_and_singular_keys(fake_registry):
    exp = expand_entry({"technique": "fake", "variant": "fast", "seed": 3, "fidelity": "execute", "params": {"x": 2}}, context=_ctx())
    [c] = exp.cases
    assert (c.variant, c.seed, c.fidelity, c.params["x"]) == ("fast", 3, "execute", 2.0)


def test_set_overrides_make_distinct_profiles(fake_registry):
    exp = expand_entry({"technique": "fake", "variants": ["base"],
                        "set": {"network.-1.bandwidth": ["2 Gbit/s", "10 Gbit/s", "40 Gbit/s"]}}, context=_ctx())
    assert len(exp.cases) == 3
    assert len({c.profile_hash for c in exp.cases}) == 3
    bws = sorted(c.scenario.profile.network[-1].bandwidth for c in exp.cases)
    assert bws == pytest.approx([2e9 / 8, 10e9 / 8, 40e9 / 8])
    # 10 Gbit/s is the file's own value: the same content, so the same profile hash as the plain profile
    plain = expand_entry({"technique": "fake", "variants": ["base"]}, context=_ctx()).cases[0]
    same = next(c for c in exp.cases if c.scenario.profile.network[-1].bandwidth == pytest.approx(10e9 / 8))
    assert plain.profile_hash == same.profile_hash and plain.key == same.key


def test_overrides_hash_their_si_value_not_their_text(fake_registry):
    """1.25 GB/s and 10 Gbit/s are one bandwidth: one case (issue 16: the text was hashed)."""
    a = expand_entry({"technique": "fake", "variants": ["base"], "set": {"network.-1.bandwidth": "1.25 GB/s"}}, context=_ctx())
    b = expand_entry({"technique": "fake", "variants": ["base"], "set": {"network.-1.bandwidth": "10 Gbit/s"}}, context=_ctx())
    c = expand_entry({"technique": "fake", "variants": ["base"], "set": {"network.-1.bandwidth": "10 GB/s"}}, context=_ctx())
    assert a.cases[0].key == b.cases[0].key != c.cases[0].key


def test_exclude_and_include(fake_registry):
    exp = expand_entry({"technique": "fake", "params": {"x": [1, 2], "n": [1, 2]},
                        "exclude": [{"variant": "fast", "params": {"n": 2}}, {"x": 1, "n": 1}],
                        "include": [{"variant": "fast", "params": {"x": 9, "n": [5, 6]}}]}, context=_ctx())
    got = {(c.variant, c.params["x"], c.params["n"]) for c in exp.cases}
    product = {(v, x, n) for v in ("base", "fast") for x in (1.0, 2.0) for n in (1, 2)}
    excluded = {(v, x, n) for (v, x, n) in product if (v == "fast" and n == 2) or (x == 1.0 and n == 1)}
    assert got == (product - excluded) | {("fast", 9.0, 5), ("fast", 9.0, 6)}


def test_exclude_list_value_matches_any(fake_registry):
    exp = expand_entry({"technique": "fake", "variants": ["base"], "params": {"n": [1, 2, 3, 4]},
                        "exclude": [{"n": [2, 4]}]}, context=_ctx())
    assert sorted(c.params["n"] for c in exp.cases) == [1, 3]


def test_profile_globs_tags_kinds(fake_registry):
    def profiles(pats):
        return sorted({c.profile for c in expand_entry({"technique": "fake", "variants": ["base"],
                                                        "profiles": pats}, context=_ctx()).cases})

    assert profiles(["fake-cluster-*"]) == ["fake-cluster-a", "fake-cluster-b"]
    assert profiles(["tag:fake-ib"]) == ["fake-cluster-b"]
    assert profiles(["tag:fake"]) == ["fake-cluster-a", "fake-cluster-b"]  # fake-gpu is a device
    clusters = profiles(["kind:cluster"])
    assert {"fake-cluster-a", "fake-cluster-b"} <= set(clusters)
    ctx = _ctx()
    assert {ctx.profile(n).kind for n in clusters} == {"cluster"}
    # a glob only picks profiles of kinds the technique accepts (fake-gpu is a device)
    assert profiles(["fake-*"]) == ["fake-cluster-a", "fake-cluster-b"]
    # duplicates collapse
    assert profiles(["fake-cluster-a", "tag:fake-eth"]) == ["fake-cluster-a"]


def test_technique_star_and_smoke_and_claims(fake_registry):
    exp = expand_entry({"technique": "*", "smoke": True}, context=_ctx())
    assert sorted({c.technique for c in exp.cases}) == ["fake"]
    assert any("fake-two declares no smoke" in n for n in exp.notes)
    claims = expand_entry({"technique": "fake", "claims": ["ratio-2x"]}, context=_ctx())
    assert sorted(c.variant for c in claims.cases) == ["base", "fast"]


@pytest.mark.parametrize("entry, fragment", [
    ({"technique": "fake", "variants": ["nope"]}, "no variant 'nope'"),
    ({"technique": "fake", "params": {"zz": [1]}}, "no parameter 'zz'"),
    ({"technique": "fake", "fidelities": ["simulate"]}, "no fidelity 'simulate'"),
    ({"technique": "fake", "profiles": ["tag:nothing"]}, "'tag:nothing' matches no profile"),
    ({"technique": "fake", "colour": "red"}, "unknown key 'colour'"),
    ({"technique": "fake", "exclude": [{"colour": 1}]}, "exclude[0]: unknown key 'colour'"),
    ({"technique": "nope"}, "key 'technique': unknown technique 'nope'"),
    ({"technique": "fake", "params": {"n": [0]}}, "parameter 'n': expected >= 1"),
    ({"technique": "fake", "smoke": True, "variants": ["base"]}, "cannot be combined with 'smoke'"),
])
def test_entry_errors_name_the_key(fake_registry, entry, fragment):
    with pytest.raises(ExperimentError) as ei:
        expand_entry(entry, where="x.toml: entry [e]", context=_ctx())
    msg = str(ei.value)
    assert msg.startswith("x.toml: entry [e]")
    assert fragment in msg
    assert "\n" not in msg


def test_optional_entry_skipped(fake_registry):
    exp = expand_entry({"technique": "not-installed", "optional": True}, context=_ctx())
    assert exp.cases == [] and "skipped" in exp.notes[0]


def test_experiment_file(fake_registry, tmp_path):
    f = tmp_path / "exp.toml"
    f.write_text(textwrap.dedent("""
        description = "test"
        [defaults]
        seeds = [0, 1]
        [one]
        technique = "fake"
        variants = ["base"]
        params = { x = [1, 2] }
        [two]
        technique = "fake-two"
        seeds = [7]
    """))
    exp = expand_experiment(f, context=_ctx())
    assert exp.entries == {"one": 4, "two": 1}
    assert {c.seed for c in exp.cases if c.technique == "fake-two"} == {7}
    only = expand_experiment(f, only=["two"], context=_ctx())
    assert len(only.cases) == 1
    with pytest.raises(ExperimentError, match=r"no entry 'three'"):
        expand_experiment(f, only=["three"], context=_ctx())


def test_experiment_file_errors_name_file_entry_key(fake_registry, tmp_path):
    f = tmp_path / "bad.toml"
    f.write_text('[sweep]\ntechnique = "fake"\nparams = { x = [1, "a"] }\n')
    with pytest.raises(ExperimentError) as ei:
        expand_experiment(f, context=_ctx())
    assert str(ei.value).startswith(f"{f}: entry [sweep]: fake")
    assert "parameter 'x': expected float, got 'a'" in str(ei.value)
    g = tmp_path / "bad2.toml"
    g.write_text('x = 1\n')
    with pytest.raises(ExperimentError, match="top-level key 'x'"):
        expand_experiment(g, context=_ctx())
    h = tmp_path / "bad3.toml"
    h.write_text('[a\n')
    with pytest.raises(ExperimentError, match="invalid TOML"):
        expand_experiment(h, context=_ctx())


def test_shipped_experiments_found_by_name():
    assert find_experiment("smoke").name == "smoke.toml"
    assert find_experiment("papers").name == "papers.toml"
    with pytest.raises(ExperimentError, match="shipped: .*smoke"):
        find_experiment("no-such-experiment")


def test_product_and_exclude_property(fake_registry):
    """Hypothesis: the expansion equals an itertools oracle of the same product minus the rule."""
    import itertools

    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=25, deadline=None)
    @given(xs=st.lists(st.integers(0, 50), min_size=1, max_size=4, unique=True),
           ns=st.lists(st.integers(1, 9), min_size=1, max_size=3, unique=True),
           variants=st.sets(st.sampled_from(["base", "fast"]), min_size=1),
           seeds=st.lists(st.integers(0, 3), min_size=1, max_size=2, unique=True),
           drop_n=st.integers(1, 9))
    def check(xs, ns, variants, seeds, drop_n):
        variants = sorted(variants)
        entry = {"technique": "fake", "variants": variants, "seeds": seeds, "params": {"x": xs, "n": ns},
                 "exclude": [{"variant": "fast", "n": drop_n}]}
        got = sorted((c.variant, c.params["x"], c.params["n"], c.seed) for c in expand_entry(entry, context=_ctx()).cases)
        want = sorted((v, float(x), n, s) for v, x, n, s in itertools.product(variants, xs, ns, seeds)
                      if not (v == "fast" and n == drop_n))
        assert got == want

    check()


def test_star_entry_skips_a_technique_whose_scenario_does_not_resolve(fake_registry):
    from dataclasses import replace

    from suite.technique import ScenarioSpec

    import fakeplugin
    from plugin_context import plugin_context, technique_module

    broken = replace(fakeplugin.TECHNIQUE2, name="fake-broken", smoke=(ScenarioSpec("only", profile="no-such-profile"),))
    ctx = plugin_context(("fake", fakeplugin), ("broken", technique_module(broken, name="broken")))
    exp = expand_entry({"technique": "*", "smoke": True}, context=ctx, where="smoke.toml: entry [smoke]")
    assert {c.technique for c in exp.cases} == {"fake"}
    [note] = exp.warnings
    assert note.startswith("smoke.toml: entry [smoke]: fake-broken (variant=only, profile=no-such-profile): ")
    assert note.endswith("; fake-broken skipped")
    # naming the technique explicitly keeps it an error
    with pytest.raises(ExperimentError, match="no-such-profile"):
        expand_entry({"technique": "fake-broken", "smoke": True}, context=ctx)


def test_the_smoke_experiment_is_one_case_per_technique(shared_context):
    """README: `suite run smoke` is "one small case per technique": the shipped experiment asks for
    the first smoke scenario of each (smoke = "first"); `smoke = true` keeps all of them."""
    from collections import Counter

    from suite.context import Context
    from suite.runner.experiment import expand_experiment

    reg = shared_context.registry
    exp = expand_experiment("smoke", context=Context.build(registry=reg))
    per = Counter(c.technique for c in exp.cases)
    with_smoke = {t.name for t in reg.techniques() if t.smoke}
    assert set(per) == with_smoke and set(per.values()) == {1}
    every = expand_entry({"technique": "*", "smoke": True}, context=Context.build(registry=reg))
    assert len(every.cases) == sum(len(t.smoke) for t in reg.techniques() if t.smoke) > len(exp.cases)
    with pytest.raises(ExperimentError, match="key 'smoke': expected true .* or \"first\""):
        expand_entry({"technique": "poseidon", "smoke": "all"}, context=Context.build(registry=reg))
