"""suite compare across runs whose plugin changed a metric's unit, dropped a metric, or whose
overrides spell the same values differently (found by a hostile tryout: a 3x regression passed a
5% gate as "better -99.7%", a vanished gated metric exited 0, and "37 us" against "37e-6 s" was
"no scenario in common")."""

from __future__ import annotations

import pytest

from suite.results import Store
from suite.results.compare import CompareError, compare_runs
from suite.results.load import load
from session_context import session_context
from techniques_store import techniques_store
from suite.errors import StoreError


def _run(st, name, cases):
    """One run of *cases*: (key, overrides, metrics as [name, value, unit, direction])."""
    r = st.begin_run(name, plugins={})
    for key, overrides, metrics in cases:
        ident = {"key": key, "technique": "toy", "technique_version": "1.0", "variant": "v", "fidelity": "model",
                 "profile": "p", "profile_hash": "h-" + "-".join(f"{v}" for v in overrides.values()),
                 "workload": None, "workload_hash": None, "params": {"nodes": 4}, "seed": 0, "overrides": overrides}
        st.add_outcome(ident, {"status": "ok", "metrics": metrics, "duration": 0.1}, r)
    st.finish_run(r, "done", {"total": len(cases), "ok": len(cases)})
    return r


def _two_runs(tmp_path, metrics_a, metrics_b, name="s.sqlite"):
    path = tmp_path / name
    with Store(path) as st:
        ra = _run(st, "a", [("ka", {}, metrics_a)])
        rb = _run(st, "b", [("kb", {}, metrics_b)])
    return path, ra, rb


def test_a_unit_change_of_one_dimension_is_converted_and_gated(tmp_path, suite_cli):
    """comm_time 51.56 ms in A, 0.1547 s in B: B is 154.7 ms, 3.0x A (+200.0%), worse beyond 5%;
    before, B's 0.1547 was read as ms: "better -99.7%", exit 0."""
    path, ra, rb = _two_runs(tmp_path, [["comm_time", 51.56, "ms", "lower"]], [["comm_time", 0.1547, "s", "lower"]])
    cmp = compare_runs(path, ra, rb, threshold="5%", context=session_context())
    (r,) = cmp.rows
    assert (r.unit, r.unit_b, r.b) == ("ms", "s", pytest.approx(154.7))
    assert r.verdict == "worse" and r.change == pytest.approx(154.7 / 51.56 - 1) and r.regression
    assert cmp.exit_code == 1
    assert cmp.notes == [f"comm_time (toy): unit ms in run {ra}, s in run {rb}: B's values converted to ms"]
    out = suite_cli(["compare", str(ra), str(rb), "--store", str(path), "--threshold", "5%"])
    assert out.exit_code == 1 and "(B converted from s)" in out.output and "+200.0%" in out.output


def test_a_unit_change_of_dimension_is_unit_changed_and_fails_strict(tmp_path, suite_cli):
    """51.56 ms in A, 51.56 B in B: no conversion, verdict "unit changed"; a regression under
    --strict, reported only without it."""
    path, ra, rb = _two_runs(tmp_path, [["comm_time", 51.56, "ms", "lower"]], [["comm_time", 51.56, "B", "lower"]])
    (r,) = compare_runs(path, ra, rb, context=session_context()).rows
    assert (r.verdict, r.change, r.regression) == ("unit changed", None, False)
    strict = compare_runs(path, ra, rb, strict=True, context=session_context())
    assert strict.rows[0].regression and strict.exit_code == 1
    out = suite_cli(["compare", str(ra), str(rb), "--store", str(path), "--strict"])
    assert out.exit_code == 1 and "unit changed ms -> B" in out.output
    assert "1 metric value(s): 1 unit changed" in " ".join(out.output.split())  # the summary counted it too


def test_a_pure_number_and_a_currency_without_a_rate(tmp_path):
    """"" is a unit (a pure number): 85 % in A and 0.85 in B are the same (was "worse -99.0%", a
    regression at 5 %); USD against EUR has no rate in the registry (EUR = nan * USD): "unit
    changed", not a NaN shown as "missing" that a --strict gate let pass (a second reader)."""
    path, ra, rb = _two_runs(tmp_path, [["eff", 85.0, "%", "higher"]], [["eff", 0.85, "", "higher"]])
    (r,) = compare_runs(path, ra, rb, threshold="5%", context=session_context()).rows
    assert r.b == pytest.approx(85.0) and r.verdict == "same" and not r.regression
    path, ra, rb = _two_runs(tmp_path, [["cost", 10.0, "USD", "lower"]], [["cost", 9.0, "EUR", "lower"]], "c.sqlite")
    strict = compare_runs(path, ra, rb, strict=True, context=session_context())
    assert strict.rows[0].verdict == "unit changed" and strict.exit_code == 1


def _techniques(tmp_path, cases):
    path = tmp_path / "t.sqlite"
    techniques_store(path, cases)
    return path


def test_two_techniques_may_share_a_metric_name_in_other_dimensions(tmp_path):
    """throughput is samples/s in most plugins, tokens/s in dhelix: the wide form refused any run
    holding both ("units of different dimensions"), then held 100 samples/s and 200 tokens/s in one
    `throughput` column whose unit (attrs) named one of them. One column per dimension now."""
    from suite.results.load import metric_of

    path = _techniques(tmp_path, [("k1", "toy", [["throughput", 100.0, "samples/s", "higher"]]),
                                  ("k2", "other", [["throughput", 200.0, "tokens/s", "higher"]])])
    wide = load(path, wide=True).set_index("key")
    assert "throughput" not in wide.columns
    assert wide.loc["k1", "throughput [samples/s]"] == 100.0 and wide.loc["k2", "throughput [tokens/s]"] == 200.0
    assert wide[["throughput [samples/s]", "throughput [tokens/s]"]].notna().sum().tolist() == [1, 1]
    assert wide.attrs["units"] == {"throughput [samples/s]": "samples/s", "throughput [tokens/s]": "tokens/s"}
    assert wide.attrs["directions"] == {"throughput [samples/s]": "higher", "throughput [tokens/s]": "higher"}
    assert [metric_of(c) for c in wide.attrs["units"]] == ["throughput", "throughput"]
    long = load(path)  # the long form keeps the stored names and units
    assert sorted(zip(long["name"], long["unit"])) == [("throughput", "samples/s"), ("throughput", "tokens/s")]


def test_two_techniques_timing_one_metric_in_s_and_in_ms_share_one_column(tmp_path):
    """Technique a stores time 0.1547 s, b 51.56 ms (and a ratio 0.85 and 90 %): the wide column
    held 0.1547 and 51.56 with the unit "ms" (the last technique's), so a read 0.1547 ms, 1000x
    too fast. Now one column in the first row's unit: 0.1547 s and 0.05156 s; 0.85 and 0.9."""
    path = _techniques(tmp_path, [("ka", "a", [["time", 0.1547, "s", "lower"], ["eff", 0.85, "1", "higher"]]),
                                  ("kb", "b", [["time", 51.56, "ms", "lower"], ["eff", 90.0, "%", "higher"]])])
    wide = load(path, wide=True).set_index("key")
    assert wide.loc["ka", "time"] == pytest.approx(0.1547) and wide.loc["kb", "time"] == pytest.approx(0.05156)
    assert wide.loc["ka", "eff"] == pytest.approx(0.85) and wide.loc["kb", "eff"] == pytest.approx(0.9)
    assert wide.attrs["units"] == {"eff": "1", "time": "s"}


def test_a_metric_named_like_a_case_column_has_its_unit_under_its_column(tmp_path):
    """A metric `params` is the column `metric.params`; attrs named it `params`, a column of the
    cases (so the report, looking its columns up in attrs, never showed it)."""
    path = _techniques(tmp_path, [("k1", "toy", [["params", 3.0, "MB", "none"]])])
    wide = load(path, wide=True)
    assert wide["metric.params"].tolist() == [3.0] and wide.attrs["units"] == {"metric.params": "MB"}


def test_a_gated_metric_missing_from_b_fails_the_gate(tmp_path, suite_cli):
    """comm_time renamed comm_time_s in B: with --strict (or named by --metric under a threshold) the
    missing comm_time is a regression; --metric comm_time alone pairs the scenario and shows it
    missing, not "no scenario in common"."""
    path, ra, rb = _two_runs(tmp_path, [["comm_time", 0.05, "s", "lower"], ["efficiency", 0.9, "1", "higher"]],
                             [["comm_time_s", 0.5, "s", "lower"], ["efficiency", 0.9, "1", "higher"]])
    ctx = session_context()
    assert compare_runs(path, ra, rb, threshold="1%", context=ctx).exit_code == 0  # report only: as before
    cmp = compare_runs(path, ra, rb, threshold="1%", strict=True, metrics=["comm_time", "efficiency"], context=ctx)
    assert [(r.metric, r.verdict, r.regression) for r in cmp.rows] == [("comm_time", "missing", True),
                                                                        ("efficiency", "same", False)]
    assert cmp.exit_code == 1
    assert compare_runs(path, ra, rb, threshold="1%", metrics=["comm_time"], context=ctx).exit_code == 1
    only = compare_runs(path, ra, rb, metrics=["comm_time"], context=ctx)
    assert only.matched == 1 and [r.verdict for r in only.rows] == ["missing"] and only.exit_code == 0
    out = suite_cli(["compare", str(ra), str(rb), "--store", str(path), "--strict", "--metric", "comm_time"])
    assert out.exit_code == 1 and f"comm_time missing in run {rb}" in out.output
    with pytest.raises(CompareError, match="--metric comm_tme: no ok case"):
        compare_runs(path, ra, rb, metrics=["comm_tme"], context=ctx)


@pytest.mark.parametrize("spell_a, spell_b", [(["37 us", "100 us"], ["37e-6 s", "0.1 ms"]),
                                              (["10 Gbit/s", "40 Gbit/s"], ["1.25 GB/s", "5 GB/s"])])
def test_the_same_swept_values_spelled_differently_pair(tmp_path, spell_a, spell_b):
    """The same two latencies (bandwidths) written in other units are the same scenarios: 2 matched,
    labelled as A writes them."""
    path = tmp_path / "s.sqlite"
    path_key = "network.0.latency"
    with Store(path) as st:
        ra = _run(st, "a", [(f"a{i}", {path_key: v}, [["t", 1.0 + i, "s", "lower"]]) for i, v in enumerate(spell_a)])
        rb = _run(st, "b", [(f"b{i}", {path_key: v}, [["t", 1.0 + i, "s", "lower"]]) for i, v in enumerate(spell_b)])
        for i, (va, vb) in enumerate(zip(spell_a, spell_b)):  # the same profile: the same content hash
            st.conn.execute("UPDATE cases SET profile_hash = ? WHERE key IN (?, ?)", (f"h{i}", f"a{i}", f"b{i}"))
        st.conn.commit()
    cmp = compare_runs(path, ra, rb, strict=True, context=session_context())
    assert cmp.matched == 2 and cmp.unpaired == 0 and cmp.exit_code == 0
    assert [r.scenario for r in cmp.rows] == [f"latency={v}" for v in spell_a]
    assert [r.verdict for r in cmp.rows] == ["same", "same"]


def test_wide_load_puts_one_metric_in_one_unit(tmp_path):
    """Across both runs comm_time is 51.56 ms and 0.1547 s: one column in ms (51.56, 154.7), units
    ms; a metric in ms and in B is refused naming both."""
    path, _ra, _rb = _two_runs(tmp_path, [["comm_time", 51.56, "ms", "lower"]], [["comm_time", 0.1547, "s", "lower"]])
    df = load(path, wide=True).set_index("key")
    assert df.loc["ka", "comm_time"] == pytest.approx(51.56) and df.loc["kb", "comm_time"] == pytest.approx(154.7)
    assert df.attrs["units"]["comm_time"] == "ms"
    bad, _a, _b = _two_runs(tmp_path, [["comm_time", 1.0, "ms", "lower"]], [["comm_time", 1.0, "B", "lower"]], "x.sqlite")
    with pytest.raises(StoreError, match="metric 'comm_time' of toy: stored in 'ms' and in 'B'"):
        load(bad, wide=True)


def test_other_code_at_the_same_version_is_named(tmp_path):
    """A plugin edited between two runs without a version bump computes new case keys for the same
    scenarios: compare paired them and showed the differences with no word of their cause (a hostile
    tryout). A note names the technique and both code fingerprints; equal code says nothing."""
    path = tmp_path / "s.sqlite"
    with Store(path) as st:
        runs = []
        for name, key, code, t in (("a", "ka", "c0de-a", 1.0), ("b", "kb", "c0de-b", 2.0), ("c", "kc", "c0de-b", 2.0)):
            r = st.begin_run(name, plugins={})
            ident = {"key": key, "technique": "toy", "technique_version": "1.0", "variant": "v", "fidelity": "model",
                     "profile": "p", "profile_hash": "h", "workload": None, "workload_hash": None,
                     "params": {"nodes": 4}, "seed": 0, "overrides": {}, "code": code}
            st.add_outcome(ident, {"status": "ok", "metrics": [["t", t, "s", "lower"]], "duration": 0.1}, r)
            st.finish_run(r, "done", {"total": 1, "ok": 1})
            runs.append(r)
    ra, rb, rc = runs
    cmp = compare_runs(path, ra, rb, context=session_context())
    assert (f"technique toy: computed by other code in run {rb} than in run {ra} (code c0de-a vs c0de-b, the same "
            "version): its plugin changed between the runs, and the differences may be its doing") in cmp.notes
    assert not any("other code" in n for n in compare_runs(path, rb, rc, context=session_context()).notes)


def test_a_metric_unit_in_millibits_is_refused_not_converted():
    """`convert(1, "mb/s", "Mb/s")` gave 1e-09 (millibits): "every sub-unit prefix on bits/bytes refused"
    held for quantities only; a metric whose unit changed from Mb/s to mb/s was scaled by 10^-9 in
    compare and the wide load (a second reader). Refused like a quantity; a converted column costs one
    parse per unit pair."""
    from suite.hardware.units import convert

    with pytest.raises(ValueError, match=r"'m' is milli: there is no millibit; did you mean Mb \(mega\)\?"):
        convert(1.0, "mb/s", "Mb/s")
    assert convert(1.0, "Mb/s", "MB/s") == pytest.approx(0.125) and convert(0.1547, "s", "ms") == pytest.approx(154.7)


def _hashed_run(st, name, cases):
    """One run of *cases*: (key, overrides, profile content hash, value of metric t in s)."""
    r = st.begin_run(name, plugins={})
    for key, overrides, h, t in cases:
        ident = {"key": key, "technique": "toy", "technique_version": "1.0", "variant": "v", "fidelity": "model",
                 "profile": "p", "profile_hash": h, "workload": None, "workload_hash": None, "params": {"nodes": 4},
                 "seed": 0, "overrides": overrides}
        st.add_outcome(ident, {"status": "ok", "metrics": [["t", t, "s", "lower"]], "duration": 0.1}, r)
    st.finish_run(r, "done", {"total": len(cases), "ok": len(cases)})
    return r


def test_a_default_run_pairs_with_the_sweep_value_equal_to_its_profile(tmp_path):
    """Run A without --set (profile hash h37: the profile's own 37 us), run B sweeping 37 us (hash
    h37: one computation) and 100 us: the 37 us scenario pairs, labelled as B wrote it; before, "no
    scenario in common ... run 1 null, run 2 0.0001 second, 3.7e-05 second" (exit 2). A sweep
    without the profile's value names A's side "not set", B's values as written, never pint's."""
    path = tmp_path / "s.sqlite"
    lat = "network.-1.latency"
    with Store(path) as st:
        ra = _hashed_run(st, "base", [("k37", {}, "h37", 2.0)])
        rb = _hashed_run(st, "lat", [("k37", {lat: "37 us"}, "h37", 2.0), ("k100", {lat: "100 us"}, "h100", 2.5)])
        rc = _hashed_run(st, "far", [("k50", {lat: "50 us"}, "h50", 2.1), ("k100", {lat: "0.1 ms"}, "h100", 2.5)])
    cmp = compare_runs(path, ra, rb, context=session_context())
    assert cmp.matched == 1 and [(r.scenario, r.a, r.b, r.verdict) for r in cmp.rows] == [("latency=37 us", 2.0,
                                                                                          2.0, "same")]
    assert cmp.only_a == [] and cmp.only_b == ["latency=100 us [toy/v]"]
    assert compare_runs(path, rb, ra, context=session_context()).matched == 1  # either way round
    with pytest.raises(CompareError) as err:
        compare_runs(path, ra, rc, context=session_context())
    assert str(err.value).endswith(f"; apart on --set {lat}: run {ra} not set (the profile's own value), "
                                   f"run {rc} 50 us, 0.1 ms")  # by value, not as text


def test_an_equal_override_on_another_profile_content_does_not_pair(tmp_path):
    """The same 37 us on a profile whose content hash differs (another figure changed, or published
    fits set aside by the override) is not the default run's scenario: nothing is guessed."""
    path = tmp_path / "s.sqlite"
    lat = "network.-1.latency"
    with Store(path) as st:
        ra = _hashed_run(st, "base", [("k0", {}, "h-file", 2.0)])
        rb = _hashed_run(st, "lat", [("k37", {lat: "37 us"}, "h-aside", 2.0), ("k100", {lat: "100 us"}, "h100", 2.5)])
    with pytest.raises(CompareError, match="no scenario in common"):
        compare_runs(path, ra, rb, context=session_context())


def test_real_default_run_pairs_with_a_latency_sweep_through_its_value(tmp_path, shared_context, suite_cli):
    """The tryout's runs: poseidon on its cluster (network latency 37 us in
    hardware_profiles/clusters/titanx-cluster-10gbe.toml) without --set, then with
    --set network.-1.latency=37 us,100 us: the 37 us case is the stored one (one case key), and
    `suite compare` pairs it (exit 0; was exit 2, "no scenario in common")."""
    from suite.runner.engine import run_cases
    from suite.runner.experiment import expand_entry

    path = tmp_path / "s.sqlite"
    entry = {"technique": "poseidon", "variants": ["sfb"], "params": {"nodes": ["2"]}}
    with Store(path) as st:
        ra = run_cases(expand_entry(entry, context=shared_context).cases, st, command="base",
                       context=shared_context).run_id
        lat = expand_entry({**entry, "set": {"network.-1.latency": ["37 us", "100 us"]}}, context=shared_context)
        got = run_cases(lat.cases, st, command="lat", context=shared_context)
    assert (got.cached, got.ok) == (1, 1)  # "1 already stored": the 37 us case is base's
    rb = got.run_id
    cmp = compare_runs(path, ra, rb, context=session_context())
    assert cmp.matched == 1 and {r.scenario for r in cmp.rows} == {"latency=37 us"}
    assert {r.verdict for r in cmp.rows} == {"same"} and cmp.rows[0].key_a == cmp.rows[0].key_b
    assert len(cmp.only_b) == 1 and cmp.only_b[0].startswith("latency=100 us")
    out = suite_cli(["compare", str(ra), str(rb), "--store", str(path), "--threshold", "1%"])
    assert out.exit_code == 0, out.output
