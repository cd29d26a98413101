"""Stores shared by the report tests: the README's sweep and a category comparison."""

from __future__ import annotations

import pytest

NODES = [1, 2, 4, 8, 16, 32]
BANDWIDTHS = ["2 Gbit/s", "5 Gbit/s", "10 Gbit/s", "20 Gbit/s", "30 Gbit/s", "40 Gbit/s"]


@pytest.fixture(scope="session")
def report_context(shared_context):
    """The session's context (tests/conftest.py) for the report tests that only read it (building one
    loads every plugin, ~0.3 s)."""
    return shared_context


@pytest.fixture(scope="session")
def tour_store(tmp_path_factory, report_context):
    """The README's sweep: poseidon, 6 node counts x 6 bandwidths x 4 variants = 144 cases. Run once
    for the session (~1 s) and only read by the report modules (each loads its own wide form)."""
    from suite.results import Store
    from suite.runner.engine import run_cases
    from suite.runner.experiment import expand_entry

    path = tmp_path_factory.mktemp("report") / "s.sqlite"
    ctx = report_context
    exp = expand_entry({"technique": "poseidon", "workloads": ["vgg19-22k"],
                        "params": {"nodes": [str(n) for n in NODES]}, "set": {"network.-1.bandwidth": BANDWIDTHS}},
                       context=ctx)
    with Store(path) as st:
        s = run_cases(exp.cases, st, command="suite run (README sweep)", context=ctx)
        assert s.ok == 144
        st.name_run(s.run_id, "sweep")
    return path


def _fingerprint(df):
    """Frame *df* as bytes (columns, dtypes, index, every value, dict cells included) and its ``attrs``."""
    import pickle

    return pickle.dumps(df, protocol=5), repr(df.attrs)


@pytest.fixture(scope="session")
def wide(tour_store):
    """The sweep's wide form, loaded once for the session (it was once per module: test_interactive
    and test_report_figures, ~0.4-0.5 s CPU a load); the tests only read it. Checked unchanged at
    the session's end: a test writing into it fails there instead of changing what later ones read."""
    from suite.results.load import load

    df = load(tour_store, run="sweep", wide=True)
    before = _fingerprint(df)
    yield df
    assert _fingerprint(df) == before, "a test changed the session's `wide` frame in place (copy it first)"


@pytest.fixture(scope="module")
def category_store(tmp_path_factory, report_context):
    from click.testing import CliRunner

    from suite.cli import main

    path = tmp_path_factory.mktemp("cat") / "c.sqlite"
    r = CliRunner().invoke(main, ["run", "--category", "communication", "--workload", "resnet-50", "--profile",
                                  "k80-cluster-10gbe,h100-ndr-fat-tree", "--param", "nodes=8", "--param",
                                  "workers=8", "--name", "two", "-q", "--store", str(path)],
                           obj={"context": report_context})  # reused by the command (get_context)
    assert r.exit_code == 0, r.output
    return path
