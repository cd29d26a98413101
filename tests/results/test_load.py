"""suite.results.load: long and wide forms of a real poseidon sweep, checked against the store's
own per-case read path (Store.result) and a hand relation between metrics."""

from __future__ import annotations

import math

import pytest

from suite.errors import StoreError
from suite.results import Store
from suite.results.load import CASE_COLUMNS, load, numeric_overrides, override_value

# poseidon: 4 variants x nodes {1, 2, 4} x bandwidth {10, 40} Gbit/s
N_CASES = 4 * 3 * 2


def test_wide_form_one_row_per_case_with_param_and_set_columns(sweep_store):
    path, a, _b = sweep_store
    df = load(path, run=a, wide=True)
    assert len(df) == N_CASES
    assert list(df.columns[:len(CASE_COLUMNS)]) == list(CASE_COLUMNS)
    assert set(df["run"]) == {a}
    assert sorted(set(df["param.nodes"])) == [1, 2, 4]
    assert sorted(set(df["set.network.-1.bandwidth"])) == ["10 Gbit/s", "40 Gbit/s"]
    assert sorted(set(df["variant"])) == ["poseidon", "ps", "sfb", "wfbp"]
    # the set.* column is the stored override itself
    for ov, s in zip(df["overrides"], df["set.network.-1.bandwidth"]):
        assert ov == {"network.-1.bandwidth": s}


def test_values_agree_with_store_result(sweep_store):
    path, a, _b = sweep_store
    df = load(path, run=a, wide=False)
    with Store(path, readonly=True) as st:
        for key, g in df.groupby("key"):
            res = st.result(key)
            assert sorted(g["name"]) == sorted(res.metrics)
            for name, value, unit, direction in zip(g["name"], g["value"], g["unit"], g["direction"]):
                m = res.metrics[name]
                assert (value, unit, direction) == (m.value, m.unit, m.direction)


def test_throughput_is_samples_over_iteration_time(sweep_store):
    # hand relation: throughput = nodes * batch_per_node / iteration_time (samples/s)
    path, a, _b = sweep_store
    df = load(path, run=a, wide=True)
    for _, r in df.iterrows():
        expected = r["param.nodes"] * r["param.batch_per_node"] / r["iteration_time"]
        assert math.isclose(r["throughput"], expected, rel_tol=1e-9)
    one = df[df["param.nodes"] == 1]
    assert (one["speedup"] == 1.0).all()


def test_long_form_pivots_to_the_wide_form(sweep_store):
    path, a, _b = sweep_store
    long = load(path, run=a)
    wide = load(path, run=a, wide=True).set_index("key")
    assert len(long) == N_CASES * long["name"].nunique()
    assert set(long["direction"]) <= {"lower", "higher", "none"}
    assert (long["n_samples"] == 0).all()  # model fidelity: no raw samples
    for key, name, value in zip(long["key"], long["name"], long["value"]):
        assert wide.loc[key, name] == value
    assert long.attrs["units"]["throughput"] == "samples/s"
    assert long.attrs["directions"]["iteration_time"] == "lower"
    assert "test sweep A" in long.attrs["run"]["command"]


def test_filters(sweep_store):
    path, a, b = sweep_store
    df = load(path, run=a, wide=False, params={"nodes": 4}, metrics="throughput", variant=["ps", "wfbp"])
    assert len(df) == 2 * 2  # 2 variants x 2 bandwidths
    assert set(df["name"]) == {"throughput"} and set(df["param.nodes"]) == {4}
    # every case of the store (both runs), open Store accepted
    with Store(path, readonly=True) as st:
        all_cases = load(st, wide=True)
    assert len(all_cases) == 2 * N_CASES
    assert set(all_cases["run"].isna()) == {True}
    assert load(path, run="latest", wide=True)["run"].iloc[0] == b


def test_errors_are_one_line(sweep_store, tmp_path):
    path, _a, _b = sweep_store
    with pytest.raises(StoreError, match="no run with id 99"):
        load(path, run=99)
    with pytest.raises(StoreError, match="filter 'colour'"):
        load(path, colour="red")
    with pytest.raises(StoreError, match="parameter 'nope'"):
        load(path, params={"nope": 1})
    with pytest.raises(StoreError, match="does not exist"):
        load(tmp_path / "missing.sqlite")


@pytest.mark.parametrize("text,expected", [("10 Gbit/s", (10.0, "Gbit/s")), ("2.5e-6 s", (2.5e-6, "s")),
                                           ("7", (7.0, "")), (3, (3.0, "")), ("fast", (None, "fast"))])
def test_override_value(text, expected):
    assert override_value(text) == expected


def test_numeric_overrides_of_one_dimension_in_the_first_values_unit():
    """A sweep written "1 GB/s,4 Gbit/s,20 Gbit/s" was no number column at all (units differ)."""
    # 4 Gbit/s = 0.5 GB/s, 20 Gbit/s = 2.5 GB/s (1 byte = 8 bits)
    assert numeric_overrides(["1 GB/s", "4 Gbit/s", None, "20 Gbit/s"]) == ([1.0, 0.5, None, 2.5], "GB/s")
    assert numeric_overrides(["1 GB/s", "4 Gbit/s"], "Gbit/s") == ([8.0, 4.0], "Gbit/s")
    assert numeric_overrides(["37 us", "0.1 ms"]) == ([37.0, 100.0], "us")
    # other dimensions, a bare number beside a quantity, text: no number column
    assert numeric_overrides(["1 GB/s", "5 us"]) is None
    assert numeric_overrides(["1 GB/s", "8"]) is None
    assert numeric_overrides(["nccl", "mpi"]) is None
    assert numeric_overrides([None, None]) is None
