"""The caches of a cached ``suite reproduce`` (issue 19): judged outcomes in the store, zoo
workload content hashes on disk. Each is keyed by everything its value depends on: every input
changed here must miss."""

from __future__ import annotations

import importlib
import json
import sqlite3
from dataclasses import replace

import pytest

from suite.technique import Approx, Claim, Null, ScenarioSpec

R = importlib.import_module("suite.runner.reproduce")  # the module (suite.runner.reproduce is the function too)
import suite.runner.bootstrap as B  # noqa: E402
import suite.runner.judgement_cache as JC  # noqa: E402


def _ctx():
    """The context of the test: the fake plugin (the fake_registry fixture makes it the default)."""
    from suite.context import Context

    return Context.build()


SPEC = dict(profile="fake-cluster-a", workload="fake-wl")


def _measured(tech):
    """A measured claim on execute timings (samples: bootstrap) with a value and a variant null."""
    c = Claim("t-ratio", "fast is 2x base (timed)", "Table 9", True, Approx(2.0, rel=0.2),
              cases={"base": ScenarioSpec("base", fidelity="execute", **SPEC),
                     "fast": ScenarioSpec("fast", fidelity="execute", **SPEC)},
              derive=lambda r: r["fast"]["t"] / r["base"]["t"], measured=True,
              nulls=(Null("base for fast", variants={"fast": "base"}), Null("no gain", value=1.0)))
    return replace(tech, claims=[*tech.claims, c])


@pytest.fixture
def judged(spy):
    """The claim ids :func:`judge_unchanged` was called for (not served from the cache)."""
    return spy(R, "judge_unchanged", lambda claim, *a, **k: claim.id)


def test_cached_reproduce_judges_nothing_and_gives_the_same_outcomes(fake_registry, store, judged):
    tech = _measured(fake_registry.technique("fake"))
    first = R.reproduce([tech], store, context=_ctx())
    assert sorted(judged) == sorted(c.id for c in tech.claims)
    t_ratio = first.outcomes[-1]
    assert t_ratio.interval is not None and t_ratio.samples == 3 and t_ratio.nulls[0].interval is not None
    judged.clear()
    again = R.reproduce([tech], store, context=_ctx())
    # only the error rows are judged again (an exception may have decided them: never cached)
    errors = [o.claim for o in first.outcomes if o.verdict == R.ERROR]
    assert errors == ["derive-bad", "case-fails"] and judged == errors
    # the same values of the same types (numpy scalars, tuples, floats), field for field
    assert repr(again.outcomes) == repr(first.outcomes)
    assert [o.as_dict() for o in again.outcomes] == [o.as_dict() for o in first.outcomes]
    # --rerun judges every claim afresh
    judged.clear()
    R.reproduce([tech], store, rerun=True, context=_ctx())
    assert sorted(judged) == sorted(c.id for c in tech.claims)


def test_a_changed_stored_result_is_judged_again(fake_registry, store, judged):
    tech = fake_registry.technique("fake")
    first = R.reproduce([tech], store, context=_ctx())
    by = {o.claim: o for o in first.outcomes}
    assert by["y-abs"].ours == pytest.approx(10.0)
    # the stored metric changes under the same case key (as a --rerun of a changed measurement would)
    con = sqlite3.connect(store.path)
    (rid, text), = con.execute("SELECT r.id, r.metrics FROM results r JOIN cases c ON c.result_id = r.id "
                               "WHERE c.key = ?", (by["y-abs"].cases["main"],)).fetchall()
    ms = [[n, 100.0 if n == "y" else v, u, d] for n, v, u, d in json.loads(text)]
    con.execute("UPDATE results SET metrics = ? WHERE id = ?", (json.dumps(ms), rid))
    con.commit()
    con.close()
    judged.clear()
    again = {o.claim: o for o in R.reproduce([tech], store, context=_ctx()).outcomes}
    assert "y-abs" in judged and "ratio-2x" in judged  # both read that case
    assert again["y-abs"].ours == pytest.approx(100.0) and again["y-abs"].verdict == R.REPRODUCED_NO_NULL


class _Keyed:
    """A measured claim of the fake plugin, resolved, and its judgement key as a function of
    each input (defaults: the claim as resolved); ``differs`` checks a key is new."""

    def __init__(self, fake_registry):
        from suite.runner.case import Resolver

        self.tech = _measured(fake_registry.technique("fake"))
        self.claim = self.tech.claims[-1]
        resolver = Resolver(context=_ctx())
        self.cases = {label: resolver.resolve(self.tech, spec) for label, spec in self.claim.specs().items()}
        self.nc = R.null_cases(self.tech, self.claim, resolver)
        keys = {c.key for c in self.cases.values()} | {c.key for _n, ncs, _w in self.nc if ncs for c in ncs.values()}
        self.digests = {k: f"d-{k}" for k in keys}
        self.base = self.key()
        assert self.base and self.base == self.key()  # deterministic
        self.seen = {self.base}

    def key(self, t=None, c=None, cs=None, n=None, d=None):
        return JC.judgement_key(t or self.tech, c or self.claim, cs or self.cases, self.nc if n is None else n,
                                self.digests if d is None else d)

    def differs(self, k):
        assert k and k not in self.seen
        self.seen.add(k)


def test_the_judgement_key_changes_with_the_claims_declaration(fake_registry, store):
    kd = _Keyed(fake_registry)
    claim = kd.claim
    kd.differs(kd.key(c=replace(claim, statement="other")))
    kd.differs(kd.key(c=replace(claim, source="Table 10")))
    kd.differs(kd.key(c=replace(claim, verified=False)))
    kd.differs(kd.key(c=replace(claim, note="a note")))
    kd.differs(kd.key(c=replace(claim, expect=Approx(2.0, rel=0.1))))
    kd.differs(kd.key(c=replace(claim, measured=False)))
    kd.differs(kd.key(c=replace(claim, derive=lambda r: r["fast"]["t"] / r["base"]["t"] * 1.0)))
    k = 3.0
    kd.differs(kd.key(c=replace(claim, derive=lambda r: k)))  # a closure's value
    kd.differs(kd.key(c=replace(claim, nulls=claim.nulls[:1])))
    kd.differs(kd.key(c=replace(claim, nulls=(claim.nulls[0], Null("no gain", value=1.5)))))


def _tree_null(r):
    return 0.3


def test_the_judgement_key_changes_with_a_null_derive(fake_registry, store, monkeypatch):
    """tryout11 #2: a null's ``derive`` is left out of its repr; editing the function (its body, a
    value it closes over, or another file of the package defining it) served the old verdict."""
    kd = _Keyed(fake_registry)
    claim = kd.claim
    with_null = replace(claim, nulls=(*claim.nulls, Null("tree estimate", derive=_tree_null)))
    kd.differs(kd.key(c=with_null))
    kd.differs(kd.key(c=replace(claim, nulls=(*claim.nulls, Null("tree estimate", derive=lambda r: 1.0)))))
    v = 0.3
    closing = replace(claim, nulls=(*claim.nulls, Null("tree estimate", derive=lambda r: v)))
    kd.differs(kd.key(c=closing))
    v = 1.0
    kd.differs(kd.key(c=closing))  # the same function, the value it closes over changed
    # a helper package edited (the derive's own code unchanged): its fingerprint is in the key
    helper = type(_tree_null)(_tree_null.__code__, {}, "_tree_null")
    helper.__module__ = "halohelpers_v11"
    from_pkg = replace(claim, nulls=(*claim.nulls, Null("tree estimate", derive=helper)))
    fps = importlib.import_module("suite.runner.fingerprint")._FINGERPRINTS
    monkeypatch.setitem(fps, "halohelpers_v11", ((), "a" * 16))
    before = kd.key(c=from_pkg)
    kd.differs(before)
    monkeypatch.setitem(fps, "halohelpers_v11", ((), "b" * 16))
    kd.differs(kd.key(c=from_pkg))


def test_the_judgement_key_changes_with_the_code(fake_registry, store, monkeypatch):
    from suite.runner.case import code_fingerprint

    kd = _Keyed(fake_registry)
    # the technique: version, code fingerprint
    kd.differs(kd.key(t=replace(kd.tech, version="9.9")))
    fp = code_fingerprint(kd.tech)
    with monkeypatch.context() as m:
        m.setitem(importlib.import_module("suite.runner.fingerprint")._FINGERPRINTS, kd.tech.package, fp + "x")
        kd.differs(kd.key())
    assert kd.key() == kd.base
    # the core's source (every file of the suite package), numpy's version
    with monkeypatch.context() as m:
        m.setitem(importlib.import_module("suite.runner.fingerprint")._FINGERPRINTS, "suite", "changed")
        kd.differs(kd.key())
    with monkeypatch.context() as m:  # (read from the installed metadata, as the case keys read it)
        m.setattr(importlib.import_module("suite.runner.fingerprint"), "_library_versions", lambda: "numpy=0.0;scipy=0.0")
        kd.differs(kd.key())
    assert kd.key() == kd.base


def test_the_judgement_key_changes_with_the_cases_and_the_nulls(fake_registry, store):
    kd = _Keyed(fake_registry)
    cases, nc, digests = kd.cases, kd.nc, kd.digests
    # the case keys, the stored results' content and status
    other = {**cases, "base": replace(cases["base"], key="0" * 20)}
    kd.differs(kd.key(cs=other, d={**digests, "0" * 20: digests[cases["base"].key]}))
    kd.differs(kd.key(d={**digests, cases["fast"].key: "changed"}))
    # a null's cases (here both are the claim's base case: its "fast" is run as base)
    assert {c.key for c in nc[0][1].values()} == {cases["base"].key}
    moved = [(nc[0][0], {**nc[0][1], "fast": replace(nc[0][1]["fast"], key="1" * 20)}, ""), nc[1]]
    kd.differs(kd.key(n=moved, d={**digests, "1" * 20: digests[cases["base"].key]}))
    kd.differs(kd.key(n=moved, d={**digests, "1" * 20: "changed"}))
    # a null that does not resolve, and why
    kd.differs(kd.key(n=[(nc[0][0], None, "null scenario does not resolve: x"), nc[1]]))
    kd.differs(kd.key(n=[(nc[0][0], None, "null scenario does not resolve: y"), nc[1]]))
    # a case not stored: not cached at all
    assert kd.key(d={k: v for k, v in digests.items() if k != cases["fast"].key}) == ""


def test_outcome_encoding_round_trips_types():
    import numpy as np

    o = R.ClaimOutcome("t", "c", "s", "src", True, "2 ± 20%", ours=np.float64(2.5), ratio=1.25,
                       interval=(1.0, float("inf")), samples=3,
                       nulls=[R.NullOutcome("n", "value", value={"a": (1, 2.0), 3: [np.int64(4)]}, inside=False,
                                            interval=(0.5, 0.75)),
                              R.NullOutcome("m", "variants", value=float("nan"), reason="why")])
    back = R.ClaimOutcome("x", "x", "x", "x", False, "x")
    JC.restore_outcome(back, JC.encode_outcome(o))
    assert repr(back) == repr(o)
    with pytest.raises(JC.Uncacheable):
        JC.encode_outcome(replace(o, ours=object()))


def test_content_digests(store):
    r = store.begin_run()
    ident = dict(technique="t", technique_version="1", variant="v", fidelity="model", profile=None,
                 profile_hash=None, workload=None, workload_hash=None, params={}, overrides={}, seed=0)

    def put(key, value=1.0, samples=(1.0, 2.0), art='{"a": 1}', status="ok", unit="s"):
        store.add_outcome({**ident, "key": key}, {"status": status, "metrics": [["m", value, unit, "lower"]],
                                                  "samples": {"m": list(samples)}, "artifacts": art,
                                                  "error": None if status == "ok" else "boom"}, r)
        store.flush()
        return store.content_digests([key])[key]

    base = put("k1")
    assert put("k2") == base  # content, not the key
    assert store.content_digests(["k1", "k2", "nope"]) == {"k1": base, "k2": base}
    seen = {base}
    for kw in (dict(value=2.0), dict(unit="ms"), dict(samples=(1.0, 2.5)), dict(samples=(1.0, 2.0, 3.0)),
               dict(art='{"a": 2}'), dict(art=None)):
        d = put("k3", **kw)
        assert d not in seen, kw
        seen.add(d)
        put("k3")  # back to the base content
        assert store.content_digests(["k3"])["k3"] == base
    # a failed outcome never replaces an ok one; a failed case digests its status and error
    assert put("k4", status="failed") not in seen


def test_zoo_workload_hashes_are_cached_by_the_zoo_source(tmp_path, monkeypatch):
    import suite.workloads as W

    monkeypatch.setenv("SUITE_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("SUITE_NO_WORKLOAD_CACHE", raising=False)
    monkeypatch.setattr(W, "_HASHES", None)
    name = "resnet-18-cifar"

    def fresh():
        W._load_plugins()
        monkeypatch.delitem(W._CACHE, name, raising=False)
        return W._zoo_get(name)  # what a context's workload library builds a zoo name with

    wl = fresh()
    assert "_content_hash" not in wl.__dict__  # nothing cached yet
    h = wl.content_hash()
    files = list(tmp_path.glob("workload-hashes-*.json"))
    assert len(files) == 1 and list(json.loads(files[0].read_text()).values()) == [h]
    monkeypatch.setattr(W, "_HASHES", None)  # a new process
    wl2 = fresh()
    assert wl2.__dict__.get("_content_hash") == h
    # the same hash as hashing it: the case keys do not move
    monkeypatch.setenv("SUITE_NO_WORKLOAD_CACHE", "1")
    monkeypatch.setattr(W, "_HASHES", None)
    wl3 = fresh()
    assert "_content_hash" not in wl3.__dict__ and wl3.content_hash() == h
    monkeypatch.delenv("SUITE_NO_WORKLOAD_CACHE")
    # the zoo's source changed: another file, a miss
    monkeypatch.setattr(W, "_ZOO_FP", "changed")
    monkeypatch.setattr(W, "_HASHES", None)
    assert "_content_hash" not in fresh().__dict__
    # a builder that is not the zoo's own is never cached
    assert W._builder_key("x", lambda: None) is None
    from functools import partial

    from suite.workloads import architectures as A

    assert W._builder_key("vgg19", partial(A.vgg, 19)) != W._builder_key("vgg19", partial(A.vgg, 16))
    # a corrupt file is ignored
    monkeypatch.setattr(W, "_ZOO_FP", None)
    files[0].write_text("not json")
    monkeypatch.setattr(W, "_HASHES", None)
    assert "_content_hash" not in fresh().__dict__


def _reference_bootstrap(claim, results, replicates=R.BOOTSTRAP_REPLICATES, seed=0):
    """The bootstrap as written before issue 19's rewrite: one draw and one Metric per replicate
    and timed metric (the draws and floats the rewrite must reproduce exactly)."""
    import numpy as np

    from suite.technique import Metric, Result

    timed = B.timed_metrics(results)
    if not timed:
        return []
    rng = np.random.default_rng(seed)
    stats = {k: (B.point_statistic(m) is np.median, np.asarray(m.samples, dtype=float)) for k, m in timed.items()}
    out = []
    for _ in range(replicates):
        res = {label: Result(dict(r.metrics), r.artifacts) for label, r in results.items()}
        for (label, name), (median, s) in stats.items():
            m = res[label].metrics[name]
            x = s[rng.integers(0, s.size, size=s.size)]
            if median:
                v = sorted(x.tolist())
                k = len(v) // 2
                value = v[k] if len(v) % 2 else (v[k - 1] + v[k]) / 2
            else:
                value = float(np.mean(x))
            res[label].metrics[name] = Metric(m.name, value, m.unit, m.direction, m.samples)
        out.append(claim.value(res))
    return out


@pytest.mark.parametrize("sizes", [(5, 5, 5), (4, 4), (7, 2, 10), (3,), (1000, 1000)])
def test_bootstrap_draws_and_values_are_those_of_the_call_by_call_loop(sizes):
    import numpy as np

    from suite.technique import Approx, Metric, Result

    gen = np.random.default_rng(42)
    results = {}
    for i, n in enumerate(sizes):
        s = tuple(float(x) for x in gen.lognormal(0.0, 0.3, n))
        # medians and means (the statistic the stored value is of), an untimed metric beside them
        value = float(np.median(s)) if i % 2 == 0 else float(np.mean(s))
        results[f"c{i}"] = Result({"t": Metric("t", value, "s", "lower", s), "u": Metric("u", 3.0, "1", "none")},
                                  {"trace": [i]})
    results["plain"] = Result({"u": Metric("u", 1.0)})
    claim = Claim("x", "x", "x", True, Approx(1.0), cases={k: ScenarioSpec("base") for k in results},
                  derive=lambda r: sum(r[k]["t"] for k in r if "t" in r[k]) / r["plain"]["u"] + r["c0"]["u"])
    for reps in (0, 1, 50):
        assert repr(R.bootstrap_interval(claim, results, replicates=reps, seed=3)) == \
            repr(_reference_bootstrap(claim, results, replicates=reps, seed=3))
    assert repr(R.bootstrap_interval(claim, results)) == repr(_reference_bootstrap(claim, results))
    # the inputs are untouched
    assert all(r.metrics["t"].value == r.metrics["t"].value for r in results.values() if "t" in r.metrics)
