"""A scale left unset to "every device of the profile" is shown resolved in `suite results show`:
a new user's mg-wfbp and cocod-sgd on 4 nodes x 8 GPUs (h800-4x8 here: 32 H800) stored
``param.workers`` empty, and nothing said how many GPUs ran. Model fidelity, milliseconds a case."""

from __future__ import annotations

import json

import pytest


@pytest.fixture(scope="module")
def show(suite_cli, tmp_path_factory):
    """``show(technique, profile)``: the json cases of one default run, by variant."""
    store = tmp_path_factory.mktemp("workers") / "s.sqlite"

    def run(technique, profile):
        r = suite_cli("run", "-t", technique, "--profile", profile, "-q", "--store", store)
        assert r.exit_code == 0, r.output
        r = suite_cli("results", "show", "latest", "--format", "json", "--store", store)
        assert r.exit_code == 0, r.output
        return {c["variant"]: c for c in json.loads(r.output)["cases"]}

    return run


@pytest.mark.parametrize("technique", ["mg-wfbp", "cocod-sgd", "palsgd"])
def test_every_device_default_shows_the_worker_count(show, technique):
    got = show(technique, "h800-4x8")  # 4 nodes x 8 GPUs
    assert {c["status"] for c in got.values()} == {"ok"}
    assert {c["param.workers"] for c in got.values()} == {None}  # left unset: every device ...
    assert {c["workers_used"] for c in got.values()} == {32}  # ... which is 4 x 8 = 32, now in the results


def test_the_table_says_the_scale_a_default_ran_at(suite_cli, tmp_path):
    """The terminal table's params column was empty for a default run; it now gives the resolved
    count, marked as the default (4 nodes x 8 GPUs = 32 workers), and an explicit value as before."""
    store = tmp_path / "s.sqlite"
    for more in ((), ("--param", "workers=8")):
        r = suite_cli("run", "-t", "mg-wfbp", "--variant", "sync", "--profile", "h800-4x8", *more, "-q", "--store", store)
        assert r.exit_code == 0, r.output
    from suite.cli.results import compact_rows
    from suite.results.store import Store

    with Store(store) as st:
        assert [row["params"] for row in compact_rows(st, 1)] == ["workers=32 (default)"]
        assert [row["params"] for row in compact_rows(st, 2)] == [""]  # one explicit value: not swept, not shown
    r = suite_cli("results", "show", "1", "--store", store)
    assert "workers=32 (default)" in r.output
