"""The execute fidelities that train a classifier on real arrays store only the dataset they train on.

Review: each trained the digits whatever the workload and stored the run under the scenario's
workload name: hetseq's 0.44 ms / 869,158 samples/s step as 'bert-base@seq128', cocod-sgd's 312,000
B as 'resnet-18-cifar', palsgd's 374,400 B as 'resnet-50', superneurons' 667,544 B peak as
'alexnet-caffe', pfeddst's FedAvg run (3 rounds, 20 clients: best accuracy 0.1682, 2.206 MiB
received) and virtualflow's 1,162,560 B (virtual, 20 steps) as 'resnet-50' as well as 'digits';
'higgs' (a dataset without a loader) crashed ('NoneType' object is not callable). Now each default
execute workload is the digits, a layer table or a dataset without a loader is Skipped with one line
naming what execute runs, and another dataset (iris) is really trained on. Every case here runs
through the runner into a store and is read back from it.

The figures are counted by hand from the classifier's parameters (digits: 64 features, 10 classes;
iris: 4 features, 3 classes) and the ring all-reduce's ``2 (K - 1) x floats x 8 B`` per
all-reduce over K ranks.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from session_context import session_context

from suite.errors import ParameterError
from suite.results import Store
from suite.runner import ExecOptions, expand_entry, run_cases
from suite.technique import ScenarioSpec
from suite.testing import resolve_case
from suite_cocodsgd import execute as cocod_execute
from suite_cocodsgd.technique import TECHNIQUE as cocod_tech
from suite_palsgd import execute as palsgd_execute
from suite_palsgd.technique import TECHNIQUE as palsgd_tech


@dataclass(frozen=True)
class Fidelity:
    """One technique's execute run: what its Skip line says it runs, and its figure on the digits
    and on iris, counted by hand."""

    technique: str
    variant: str
    params: dict
    runs: str
    digits: object
    iris: object
    figure: str = "bytes_sent"  # a metric, or "artifact:<name>"
    priced: str = " (the model fidelity prices it)"  # the Skip line's end on a layer table
    table: object = None  # the figure on resnet-50, where a layer table runs (None: it is Skipped)


_TRAINS = "trains a softmax classifier on a classification dataset workload (e.g. digits)"
_CLOCK = "; --param clock_workload=<layer table> times its steps as that network's"

FIDELITIES = [
    # 5 steps, K = 4 ranks, one all-reduce of the gradient and the sample count a step:
    # digits 64 x 10 + 10 + 1 = 651 floats, iris 4 x 3 + 3 + 1 = 16
    Fidelity("hetseq", "hetseq", {"exec_ranks": 4, "steps": 5}, f"hetseq execute {_TRAINS}",
             5 * 2 * 3 * 651 * 8, 5 * 2 * 3 * 16 * 8),
    # K = 4 workers, 40 steps / k = 4: 10 model all-reduces of 650 (digits) or 15 (iris) floats
    Fidelity("cocod-sgd", "cocod-sgd", {"workers": 4, "steps": 40, "batch": 16, "k": 4, "split": "iid"},
             f"cocod-sgd execute {_TRAINS}{_CLOCK}", 10 * 2 * 3 * 650 * 8, 10 * 2 * 3 * 15 * 8),
    # K = 4, 8 warm-up DDP steps + (40 - 8) / H = 4 syncs: 12 all-reduces of 650 or 15 floats
    Fidelity("palsgd", "palsgd", {"workers": 4, "steps": 40, "batch": 16, "H": 8, "warmup": 8, "p": 0.2,
                                  "split": "iid"},
             f"palsgd execute {_TRAINS}{_CLOCK}", 12 * 2 * 3 * 650 * 8, 12 * 2 * 3 * 15 * 8),
    # the MLP's widths: features -> 64 -> 64 -> classes
    Fidelity("superneurons", "liveness", {"batch": 64, "mlp_hidden": 64, "mlp_layers": 2},
             "superneurons execute measures one training step of an fc+bn+relu MLP on a classification dataset "
             "workload (e.g. digits)", [64, 64, 64, 10], [4, 64, 64, 3], figure="artifact:widths"),
    # FedAvg: 2 rounds x 4 clients x (the server's model down + the client's up) of an MLP with 8
    # hidden units: digits 64 x 8 + 8 + 8 x 10 + 10 = 610 floats, iris 4 x 8 + 8 + 8 x 3 + 3 = 67
    Fidelity("pfeddst", "fedavg", {"clients": 4, "rounds": 2, "hidden": 8},
             "pfeddst execute trains per-client MLPs on a classification dataset workload (e.g. digits)",
             2 * 4 * 2 * 610 * 8, 2 * 4 * 2 * 67 * 8, priced=""),
    # 5 steps on P = 4 devices, one all-reduce of the gradient sums and the count a step, MLP with
    # 16 hidden units: digits 64 x 16 + 16 + 16 x 10 + 10 + 1 = 1211 floats, iris 4 x 16 + 16 + 16 x 3 + 3 + 1 = 132
    Fidelity("virtualflow", "virtual", {"batch": 64, "virtual_nodes": 8, "devices": 4, "steps": 5},
             "virtualflow execute trains an MLP classifier on a classification dataset workload (e.g. digits); "
             "'heterogeneous' and 'fast-only' take a layer table to plan their virtual nodes",
             5 * 2 * 3 * 1211 * 8, 5 * 2 * 3 * 132 * 8),
    # heterogeneous plans its virtual nodes with the cost model and runs them on all 8 V100s of the
    # DGX-1 (a device the plan leaves idle joins the ring with a dummy batch): 5 steps, K = 8,
    # digits 1211 floats, iris 132. On a dataset the plan prices the trained MLP's own layers; a
    # layer table (resnet-50) is planned on and the digits MLP runs it, so resnet-50 runs too.
    Fidelity("virtualflow", "heterogeneous", {"batch": 64, "virtual_nodes": 8, "steps": 5},
             "virtualflow execute trains an MLP classifier on a classification dataset workload (e.g. digits); "
             "'heterogeneous' and 'fast-only' take a layer table to plan their virtual nodes",
             5 * 2 * 7 * 1211 * 8, 5 * 2 * 7 * 132 * 8, table=5 * 2 * 7 * 1211 * 8),
]


def _stored(tmp_path, f: Fidelity) -> dict:
    """workload -> (status, error, figure) of the execute cases of *f* run through the runner into a
    store: its default workload, iris, resnet-50 (a layer table) and higgs (a dataset without a loader)."""
    ctx = session_context()
    entry = {"technique": f.technique, "variants": [f.variant], "fidelities": ["execute"],
             "params": {k: [v] for k, v in f.params.items()}}
    cases = [*expand_entry(entry, context=ctx).cases,
             *expand_entry({**entry, "workloads": ["iris", "resnet-50", "higgs"]}, context=ctx).cases]
    with Store(tmp_path / "s.sqlite") as st:
        run_cases(cases, st, options=ExecOptions(jobs=1, isolate=False), context=ctx)
        out = {}
        for c in cases:
            status, error = st.statuses([c.key])[c.key]
            figure = None
            if status == "ok":
                r = st.result(c.key)
                figure = (r.artifacts[f.figure.split(":", 1)[1]] if f.figure.startswith("artifact:")
                          else r.metrics[f.figure].value)
            out[st.case(c.key)["workload"]] = (status, error, figure)
    return out


@pytest.mark.parametrize("f", FIDELITIES, ids=lambda f: f"{f.technique}-{f.variant}")
def test_execute_stores_only_the_dataset_it_trains_on(tmp_path, f):
    stored = _stored(tmp_path, f)
    assert sorted(stored) == ["digits", "higgs", "iris", "resnet-50"]  # the default is the digits
    assert stored["digits"] == ("ok", None, f.digits)  # the default runs
    assert stored["iris"] == ("ok", None, f.iris)
    assert stored["higgs"] == ("skipped", f"{f.runs}; 'higgs' is a dataset without a local loader or classes", None)
    assert stored["resnet-50"] == (("skipped", f"{f.runs}; 'resnet-50' is a cnn{f.priced}", None) if f.table is None
                                   else ("ok", None, f.table))


@pytest.mark.parametrize("tech, execute", [(cocod_tech, cocod_execute), (palsgd_tech, palsgd_execute)],
                         ids=["cocod-sgd", "palsgd"])
def test_clock_workload_named_but_not_resolved_is_one_line(tech, execute):
    """setup() called with a clock_workload name and no resolved workload raised NameError
    (ParameterError was never imported); now the one line it was written to give."""
    spec = ScenarioSpec(variant=tech.variant_names[0], fidelity="execute")
    params = {**resolve_case(tech, spec).scenario.params, "clock_workload": "resnet-50"}
    with pytest.raises(ParameterError, match=rf"^{tech.name.replace('-', '')}: parameter 'clock_workload': "
                                             r"expected the workload 'resnet-50' resolved by the runner"):
        execute.setup(spec.variant, params, None, 0)


def test_odyssey_execute_runs_no_workload_and_stores_none(tmp_path):
    """Audit reader15 #3: odyssey's execute trains its own 5-layer MLP (8 -> 24 x 4 -> 3) on its own
    regression data and never read the workload, yet stored every variant under the name asked for
    (llama2-7b by default, digits, iris, resnet-50), every metric but wall_time identical (final_loss
    0.22152374). Now its default case names no workload and runs (its recovery matches dense numpy
    gradient descent: oracle_error is float64 rounding), and any workload named is Skipped, one line."""
    ctx = session_context()
    entry = {"technique": "odyssey", "variants": ["odyssey"], "fidelities": ["execute"]}
    cases = [*expand_entry(entry, context=ctx).cases,
             *expand_entry({**entry, "workloads": ["llama2-7b", "iris", "resnet-50"]}, context=ctx).cases]
    runs = "odyssey execute trains its own 5-layer MLP on its own regression data and runs no workload"
    with Store(tmp_path / "s.sqlite") as st:
        run_cases(cases, st, options=ExecOptions(jobs=1, isolate=False), context=ctx)
        got = {st.case(c.key)["workload"]: st.statuses([c.key])[c.key] for c in cases}
        assert got == {None: ("ok", None),
                       **{w: ("skipped", f"{runs}; {w!r} is not run (leave --workload out)")
                          for w in ("llama2-7b", "iris", "resnet-50")}}
        assert st.result(cases[0].key).metrics["oracle_error"].value < 1e-12
