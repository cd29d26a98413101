"""Issue 5's done-criterion on the installed techniques: `suite run smoke -j 2` and
`suite run smoke --executor dask` complete and agree case for case."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from suite.cli import main


@pytest.mark.slow
def test_smoke_local_and_dask_agree(tmp_path):
    pytest.importorskip("distributed")
    from suite.context import Context

    if not any(t.smoke for t in Context.build().techniques()):
        pytest.skip("no installed technique declares smoke scenarios")
    from suite.results import Store

    frames = {}
    for name, args in (("local", ["-j", "2"]), ("dask", ["--executor", "dask", "-j", "2"])):
        store = tmp_path / f"{name}.sqlite"
        r = CliRunner().invoke(main, ["run", "smoke", "-q", "--store", str(store), *args], catch_exceptions=False)
        assert r.exit_code in (0, 1), r.output  # 1: a plugin's own smoke case failed (reported, not ours)
        with Store(store) as st:
            frames[name] = (st.cases("latest"), st.metrics("latest"))
    (lc, lm), (dc, dm) = frames["local"], frames["dask"]
    assert sorted(lc["key"]) == sorted(dc["key"])
    model = set(lc[lc["fidelity"] == "model"]["key"])
    # model-fidelity outcomes are deterministic; an execute case may measure differently
    assert {k: s for k, s in zip(lc["key"], lc["status"]) if k in model} == \
        {k: s for k, s in zip(dc["key"], dc["status"]) if k in model}
    a = {(k, n): v for k, n, v in zip(lm["key"], lm["name"], lm["value"]) if k in model}
    b = {(k, n): v for k, n, v in zip(dm["key"], dm["name"], dm["value"]) if k in model}
    assert a == b and a
    # execute-fidelity cases ok on both sides report the same metric names (values are measurements)
    ok_both = set(lc[lc["status"] == "ok"]["key"]) & set(dc[dc["status"] == "ok"]["key"])
    ex = ok_both - model
    assert {(k, n) for k, n in zip(lm["key"], lm["name"]) if k in ex} == \
        {(k, n) for k, n in zip(dm["key"], dm["name"]) if k in ex}
