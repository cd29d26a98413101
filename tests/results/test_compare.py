"""suite compare: scenario joins, better/worse by direction, the CI threshold, Mann-Whitney U on
raw samples, and the refusal of cross-profile / cross-version comparisons."""

from __future__ import annotations

import json
import math

import pytest

from suite.results import Store
from suite.results import compare as _compare
from suite.results.compare import CompareError, CompareRefused, parse_threshold
from suite.results.load import load

_CTX: list = []


@pytest.fixture(autouse=True, scope="module")
def _context(shared_context):
    """The context a command passes (profiles and plugins resolved through it): the session's one."""
    _CTX[:] = [shared_context]


def compare_runs(*args, **kwargs):
    """compare_runs with the context a command passes (profiles and plugins resolved through it)."""
    kwargs.setdefault("context", _CTX[0])
    return _compare.compare_runs(*args, **kwargs)


def test_changed_profile_is_refused_then_allowed_with_the_field_difference(sweep_store):
    path, a, b = sweep_store
    with pytest.raises(CompareRefused, match="different hardware profiles.*--allow-profile-change"):
        compare_runs(path, a, b)
    cmp = compare_runs(path, a, b, allow_profile_change=True)
    assert cmp.matched == 24 and not cmp.only_a and not cmp.only_b
    nic_latency = _CTX[0].profile("titanx-cluster-10gbe").network[-1].latency  # s, from the profile file
    assert len(cmp.profile_diffs) == 1
    d = cmp.profile_diffs[0]
    assert d.pairs == 24 and list(d.fields) == ["network.0.latency"]
    assert d.fields["network.0.latency"] == (pytest.approx(nic_latency), pytest.approx(50e-6))
    assert nic_latency != pytest.approx(50e-6)


def test_values_ratio_and_direction(sweep_store):
    path, a, b = sweep_store
    cmp = compare_runs(path, a, b, allow_profile_change=True)
    wa = load(path, run=a, wide=True).set_index("key")
    wb = load(path, run=b, wide=True).set_index("key")
    for r in cmp.rows:
        assert r.a == wa.loc[r.key_a, r.metric] and r.b == wb.loc[r.key_b, r.metric]
        # same scenario on both sides
        for col in ("variant", "param.nodes", "set.network.-1.bandwidth"):
            assert wa.loc[r.key_a, col] == wb.loc[r.key_b, col]
        if r.a == r.b:
            assert r.verdict == "same" and r.ratio == 1.0
            continue
        assert r.ratio == pytest.approx(r.b / r.a) and r.change == pytest.approx((r.b - r.a) / abs(r.a))
        expected = {"lower": "better" if r.b < r.a else "worse", "higher": "better" if r.b > r.a else "worse",
                    "none": "changed"}[r.direction]
        assert r.verdict == expected
    # a slower NIC (higher latency) never makes a time shorter or a throughput higher
    assert not [r for r in cmp.rows if r.verdict == "better"]
    # the bytes on the wire do not depend on latency
    assert {r.verdict for r in cmp.rows if r.metric in ("comm_bytes", "bytes_per_node")} == {"same"}


def test_threshold_gates_exactly_the_metrics_worse_beyond_it(sweep_store):
    path, a, b = sweep_store
    for thr in (0.05, 0.3, 0.5):
        cmp = compare_runs(path, a, b, allow_profile_change=True, threshold=thr)
        expected = {(r.key_a, r.metric) for r in cmp.rows if r.direction != "none" and r.a and
                    ((r.b - r.a) / abs(r.a) if r.direction == "lower" else (r.a - r.b) / abs(r.a)) > thr}
        assert {(r.key_a, r.metric) for r in cmp.regressions()} == expected
        assert cmp.exit_code == (1 if expected else 0)
    assert compare_runs(path, a, b, allow_profile_change=True, threshold=0.05).exit_code == 1
    assert compare_runs(path, a, b, allow_profile_change=True, threshold=0.5).exit_code == 0
    assert compare_runs(path, a, b, allow_profile_change=True).exit_code == 0  # no threshold: report only
    same = compare_runs(path, a, a, threshold="0%")
    assert {r.verdict for r in same.rows} == {"same"} and same.exit_code == 0 and not same.mismatches


def test_cli_refuses_then_gates(sweep_store, suite_cli):
    path, a, b = sweep_store
    res = suite_cli(["compare", str(a), str(b), "--store", str(path)])
    assert res.exit_code == 2
    assert res.output.count("\n") == 1 and res.output.startswith("error: compare refused")
    res = suite_cli(["compare", str(a), str(b), "--store", str(path), "--allow-profile-change",
                     "--threshold", "5%"])
    assert res.exit_code == 1, res.output
    assert "network.0.latency: " in res.output  # the profile field that differs
    assert f"worse than run {a} by more than 5.0%" in res.output  # the gate's one-line reason
    res = suite_cli(["compare", str(a), str(b), "--store", str(path), "--allow-profile-change",
                     "--threshold", "50%", "--format", "json", "--metric", "iteration_time"])
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["matched_cases"] == 24 and len(doc["rows"]) == 24
    assert doc["profile_diffs"][0]["fields"]["network.0.latency"][1] == pytest.approx(50e-6)


@pytest.mark.parametrize("text,value", [("5%", 0.05), ("0.05", 0.05), ("0%", 0.0), ("12.5%", 0.125), (None, None)])
def test_parse_threshold(text, value):
    assert parse_threshold(text) == value


@pytest.mark.parametrize("text", ["5", "five", "-1%", "abc%"])
def test_parse_threshold_errors(text):
    with pytest.raises(CompareError, match="--threshold"):
        parse_threshold(text)


# ----------------------------------------------------------------- hand-built stores (samples, versions)

def _case(store, run, key, version, samples, variant="v", value=None, n=1):
    ident = {"key": key, "technique": "toy", "technique_version": version, "variant": variant, "fidelity": "execute",
             "profile": None, "profile_hash": None, "workload": None, "workload_hash": None,
             "params": {"n": n}, "seed": 0, "overrides": {}}
    med = value if value is not None else sorted(samples)[len(samples) // 2]
    store.add_outcome(ident, {"status": "ok", "metrics": [["wall_time", med, "s", "lower"]],
                              "samples": {"wall_time": samples}, "duration": 0.1}, run)


def _store(tmp_path, name, a_samples, b_samples, version_b="1.0", variant="v"):
    path = tmp_path / name
    with Store(path) as st:
        ra = st.begin_run("a", plugins={})
        _case(st, ra, "ka" + name, "1.0", a_samples, variant)
        st.finish_run(ra, "done", {"total": 1, "ok": 1})
        rb = st.begin_run("b", plugins={})
        _case(st, rb, "kb" + name, version_b, b_samples, variant)
        st.finish_run(rb, "done", {"total": 1, "ok": 1})
    return path, ra, rb


def test_mann_whitney_separated_samples_are_significant(tmp_path):
    # 5 vs 5 samples, every B above every A: exact two-sided p = 2 / C(10, 5) = 2 / 252
    path, ra, rb = _store(tmp_path, "sep.sqlite", [1.0, 1.1, 1.2, 1.3, 1.4], [2.0, 2.1, 2.2, 2.3, 2.4])
    cmp = compare_runs(path, ra, rb, threshold="5%")
    (row,) = cmp.rows
    assert row.p_value == pytest.approx(2 / math.comb(10, 5))
    assert row.significant is True and row.verdict == "worse" and row.regression and cmp.exit_code == 1
    assert row.change == pytest.approx((2.2 - 1.2) / 1.2)


def test_mann_whitney_overlapping_samples_are_not_significant(tmp_path):
    # medians 1.2 -> 1.32 (+10%, beyond 5%) but the samples interleave: not significant, no regression
    a = [1.0, 1.1, 1.2, 1.5, 1.6]
    b = [0.9, 1.25, 1.32, 1.45, 1.7]
    from scipy.stats import mannwhitneyu

    p = mannwhitneyu(a, b, alternative="two-sided").pvalue
    assert p >= 0.05
    path, ra, rb = _store(tmp_path, "ovl.sqlite", a, b)
    cmp = compare_runs(path, ra, rb, threshold="5%")
    (row,) = cmp.rows
    assert row.verdict == "worse" and row.change == pytest.approx(0.1)
    assert row.p_value == pytest.approx(p) and row.significant is False
    assert not row.regression and cmp.exit_code == 0
    assert "not significant" in row.label(cmp.threshold)


def test_technique_version_change_is_refused(tmp_path):
    path, ra, rb = _store(tmp_path, "ver.sqlite", [1.0, 1.1, 1.2], [1.0, 1.1, 1.2], version_b="2.0")
    with pytest.raises(CompareRefused, match="technique toy: version 1.0 in run 1, 2.0 in run 2"):
        compare_runs(path, ra, rb)
    assert compare_runs(path, ra, rb, allow_profile_change=True).rows[0].verdict == "same"


def test_nothing_in_common_is_an_error(tmp_path):
    path, ra, rb = _store(tmp_path, "none.sqlite", [1.0, 1.1], [1.0, 1.1])
    with Store(path) as st:
        rc = st.begin_run("c", plugins={})
        _case(st, rc, "kc", "1.0", [1.0, 1.2], variant="other")
        st.finish_run(rc, "done", {"total": 1, "ok": 1})
    with pytest.raises(CompareError, match="no scenario in common"):
        compare_runs(path, ra, rc)
    # what keeps them apart is named (run 1's cases are of variant 'v', run 3's of 'other')
    with pytest.raises(CompareError, match=r"; apart on variant: run 1 v, run 3 other$"):
        compare_runs(path, ra, rc)


def test_apart_values_are_listed_in_numeric_order(tmp_path):
    # run 1 holds n = 9 and n = 10, run 2 n = 20: as text "10" sorted before "9"
    path = tmp_path / "apart.sqlite"
    with Store(path) as st:
        ra = st.begin_run("a", plugins={})
        for n in (10, 9):
            _case(st, ra, f"ka{n}", "1.0", [1.0, 1.1], n=n)
        st.finish_run(ra, "done", {"total": 2, "ok": 2})
        rb = st.begin_run("b", plugins={})
        _case(st, rb, "kb20", "1.0", [1.0, 1.1], n=20)
        st.finish_run(rb, "done", {"total": 1, "ok": 1})
    with pytest.raises(CompareError, match=r"; apart on params\.n: run 1 9, 10, run 2 20$"):
        compare_runs(path, ra, rb)


def test_run_b_from_a_second_store(tmp_path, suite_cli):
    pa, ra, _ = _store(tmp_path, "base.sqlite", [1.0, 1.05, 1.1, 1.15, 1.2], [1.0] * 5)
    pb, _, rb = _store(tmp_path, "new.sqlite", [5.0] * 5, [1.5, 1.55, 1.6, 1.65, 1.7])
    cmp = compare_runs(pa, ra, rb, store_b=pb, threshold="5%")
    (row,) = cmp.rows
    assert (row.a, row.b) == (1.1, 1.6) and row.significant and row.regression
    # 3 samples a side can never reach p < 0.05 (the smallest two-sided p is 2 / C(6, 3) = 0.1)
    p3, r3a, r3b = _store(tmp_path, "three.sqlite", [1.0, 1.1, 1.2], [2.0, 2.1, 2.2])
    (row3,) = compare_runs(p3, r3a, r3b, threshold="5%").rows
    assert row3.p_value == pytest.approx(0.1) and row3.significant is False and not row3.regression
    res = suite_cli(["compare", str(ra), str(rb), "--store", str(pa), "--store-b", str(pb),
                     "--threshold", "5%"])
    assert res.exit_code == 1 and "wall_time +45.5%" in res.output.splitlines()[-1]


def test_real_execute_runs_carry_samples_and_are_tested(tmp_path, sweep):
    # two real execute-fidelity runs of poseidon (timed aggregation on arrays, 3 repeats each)
    # into two stores; their timings differ by chance, and 3 samples a side cannot be significant
    from scipy.stats import mannwhitneyu

    run_sweep = sweep[0]
    entry = {"technique": "poseidon", "variants": ["sfb"], "fidelities": ["execute"],
             "params": {"nodes": ["2"], "batch_per_node": ["4"]}}
    paths = [tmp_path / "x1.sqlite", tmp_path / "x2.sqlite"]
    runs = []
    for p in paths:
        with Store(p) as st:
            runs.append(run_sweep(st, entry, "execute run"))
    cmp = compare_runs(paths[0], runs[0], runs[1], store_b=paths[1], threshold="0%", metrics="aggregate_time")
    (row,) = cmp.rows
    with Store(paths[0], readonly=True) as sa, Store(paths[1], readonly=True) as sb:
        xa = sa.result(row.key_a).metrics["aggregate_time"].samples
        xb = sb.result(row.key_b).metrics["aggregate_time"].samples
    assert len(xa) == len(xb) == 3
    assert row.p_value == pytest.approx(mannwhitneyu(xa, xb, alternative="two-sided").pvalue)
    assert row.p_value >= 0.1 and row.significant is False and not row.regression and cmp.exit_code == 0


def _two_values(tmp_path, a: float, b: float, name: str = "tol.sqlite"):
    """One model case per run, its `wall_time` a then b (no samples: no statistics)."""
    path = tmp_path / name
    with Store(path) as st:
        for run_label, key, value in (("a", "ka", a), ("b", "kb", b)):
            r = st.begin_run(run_label, plugins={})
            ident = {"key": key, "technique": "toy", "technique_version": "1.0", "variant": "v", "fidelity": "model",
                     "profile": None, "profile_hash": None, "workload": None, "workload_hash": None,
                     "params": {"n": 1}, "seed": 0, "overrides": {}}
            st.add_outcome(ident, {"status": "ok", "metrics": [["wall_time", value, "s", "lower"]], "duration": 0.1}, r)
            st.finish_run(r, "done", {"total": 1, "ok": 1})
    return path


def test_floating_point_noise_is_same_not_infinitely_worse(tmp_path):
    """0 against 5.55e-17 s (poseidon's exposed_comm at one node, seen in the issue) is 'same'
    under any threshold: |b - a| = 5.55e-17 <= the absolute tolerance 1e-12."""
    path = _two_values(tmp_path, 0.0, 5.551115123125783e-17)
    (row,) = compare_runs(path, 1, 2, threshold="0%").rows
    assert row.verdict == "same" and row.label(0.0) == "same" and not row.regression
    assert compare_runs(path, 1, 2, threshold="0%").exit_code == 0
    # a tolerance of 0 makes it a change again: from 0, worse by an unbounded fraction
    strict = compare_runs(path, 1, 2, threshold="0%", abs_tol=0.0)
    assert strict.rows[0].verdict == "worse" and strict.exit_code == 1
    with pytest.raises(CompareError, match="--abs-tol"):
        compare_runs(path, 1, 2, abs_tol=-1.0)


def test_per_metric_thresholds_override_the_default(tmp_path, suite_cli):
    """wall_time 1.00 s -> 1.03 s is 3% worse: beyond a 2% threshold for wall_time, within the
    default 5%; a per-metric threshold alone gates too."""
    path = _two_values(tmp_path, 1.0, 1.03)
    assert compare_runs(path, 1, 2, threshold="5%").exit_code == 0
    cmp = compare_runs(path, 1, 2, threshold="5%", thresholds={"wall_time": "2%"})
    assert cmp.exit_code == 1 and cmp.rows[0].change == pytest.approx(0.03)
    assert compare_runs(path, 1, 2, thresholds={"wall_time": "2%"}).exit_code == 1
    r = suite_cli(["compare", "1", "2", "--store", str(path), "--threshold", "5%",
                   "--threshold", "wall_time=2%"])
    assert r.exit_code == 1 and ("1 metric value(s) wall_time worse than run 1 by more than 2.0%, any other metric "
                                 "by more than 5.0%: ") in r.output


def test_a_threshold_for_a_metric_no_case_has_is_an_error_not_a_pass(tmp_path, suite_cli):
    """wall_time 1.00 s -> 1.03 s with --threshold wal_time=2% (a typo): exit 2 naming the option,
    the name given, the metrics there are and the near one; before, the typo gated nothing and the
    3% regression exited 0 (the tryout: iteratoin_time=1% passed a 65% worse run)."""
    path = _two_values(tmp_path, 1.0, 1.03)
    with pytest.raises(CompareError, match=r"^compare: --threshold wal_time=2%: expected a metric of an ok case "
                                           r"of run 1 or run 2 \(wall_time\), got 'wal_time'; "
                                           r"did you mean 'wall_time'\?$"):
        compare_runs(path, 1, 2, thresholds={"wal_time": "2%"})
    with pytest.raises(CompareError, match="got 'other'$"):  # nothing near: no hint
        compare_runs(path, 1, 2, threshold="5%", thresholds={"wall_time": "2%", "other": "2%"})
    r = suite_cli(["compare", "1", "2", "--store", str(path), "--threshold", "wal_time=2%"])
    assert r.exit_code == 2 and "did you mean 'wall_time'?" in r.output


def test_fits_set_aside_are_a_note_not_a_profile_field():
    """An override equal to a fitted profile's own value changes no figure but sets its published fits
    aside (the model prices those collectives): `suite compare` listed `fits_set_aside_on.0` among the
    profile's differing fields, as if the file had one (a second reader); a note says it now."""
    from suite.context import Context
    from suite.results.profilediff import profile_diff

    d = profile_diff("k80-cluster-ib56", {}, "k80-cluster-ib56", {"network.0.bandwidth": "15.75 GB/s"},
                     context=Context.build())
    assert d.fields == {}
    assert d.notes == ["side B: its overrides name network level(s) 0: a published all-reduce fit whose workers "
                       "cross one is set aside (suite.perf.allreduce_fit) and the model prices that collective"]


def test_a_side_not_resolved_now_is_fields_unknown_not_no_difference():
    """profile_diff of a resolvable profile against one that cannot be resolved now listed no field and
    said "(no field differs in the current profile files)"; the line names the unknown side now."""
    from suite.context import Context
    from suite.results.profilediff import profile_diff

    d = profile_diff("k80-cluster-ib56", {}, "no-such-profile-here", {}, hash_a="a1", hash_b="b2",
                     context=Context.build())
    assert d.fields == {} and d.unresolved == ("B",)
    assert d.lines()[1] == ("  (fields unknown: profile 'no-such-profile-here' (side B) cannot be resolved now; "
                            "pass --profiles DIR holding its file)")
    same = profile_diff("k80-cluster-ib56", {}, "k80-cluster-ib56", {}, context=Context.build())
    assert same.lines()[1] == "  (no field differs in the current profile files)"



def test_a_metrics_own_threshold_is_named_before_worse(sweep_store, suite_cli):
    """newuser14 finding 6: `--threshold iteration_time=50%` said "worse than run 1 by more than
    iteration_time 50.0%" (the metric inside the figure). Sweep B's 50 us NIC latency makes poseidon's
    exposed_comm 31-34% worse in 6 scenarios, its comm_time 2.5% worse in 2 (the rest under 2%)."""
    path, a, b = sweep_store
    res = suite_cli(["compare", str(a), str(b), "--store", str(path), "--allow-profile-change",
                     "--threshold", "exposed_comm=30%"])
    assert res.exit_code == 1, res.output
    assert f"error: 6 metric value(s) exposed_comm worse than run {a} by more than 30.0%: " in res.output
    res = suite_cli(["compare", str(a), str(b), "--store", str(path), "--allow-profile-change",
                     "--threshold", "90%", "--threshold", "exposed_comm=30%", "--threshold", "comm_time=2%"])
    assert (f"error: 8 metric value(s) exposed_comm worse than run {a} by more than 30.0%, comm_time by more than "
            f"2.0%, any other metric by more than 90.0%: ") in res.output
