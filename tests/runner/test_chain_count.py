"""An experiment file whose entries share cases announced more cases than it computes ("run: 9
case(s) ... 9 to compute", then "7 case(s) ... 7 computed"; found by a newcomer): the runner runs a
key once, so the count it announces is the distinct keys."""

from __future__ import annotations

import io

from suite.results import Store
from suite.runner import ExecOptions, run_cases
from suite.runner.experiment import expand_experiment
from suite.runner.progress import PlainProgress
from session_context import session_context


def test_entries_that_share_a_case_announce_it_once(tmp_path):
    exp = tmp_path / "twice.toml"
    exp.write_text('[a]\ntechnique = "poseidon"\nvariants = ["poseidon"]\nparams = { nodes = [16, 32] }\n'
                   '[b]\ntechnique = "poseidon"\nvariants = ["poseidon"]\nparams = { nodes = [32] }\n')
    ctx = session_context()
    cases = expand_experiment(exp, context=ctx, stream=True).cases
    listed = list(cases)
    assert len(listed) == 3 and len({c.key for c in listed}) == 2  # nodes=32 twice, one key
    out = io.StringIO()
    with Store(tmp_path / "s.sqlite") as st:
        s = run_cases(cases, st, options=ExecOptions(isolate=False), progress=PlainProgress(out, every=1e9),
                      context=ctx)
    assert out.getvalue().splitlines()[0] == "run: 2 case(s): 0 already stored, 2 to compute"
    assert (s.total, s.computed, s.ok) == (2, 2, 2)



def test_a_first_chunk_as_long_as_the_count_is_not_taken_for_the_whole_sweep(tmp_path):
    # x twice and y in the first chunk of 3, z after it: 3 distinct keys, and so 3 announced (the first
    # chunk is as long as the count, but it is not the whole sweep; the second read's case)
    from suite.runner.experiment import CaseChain

    exp = tmp_path / "three.toml"
    exp.write_text('[a]\ntechnique = "poseidon"\nvariants = ["poseidon"]\nparams = { nodes = [8, 16, 32] }\n')
    ctx = session_context()
    x, y, z = list(expand_experiment(exp, context=ctx).cases)
    out = io.StringIO()
    with Store(tmp_path / "s.sqlite") as st:
        s = run_cases(CaseChain([[x, x], [y, z]]), st, options=ExecOptions(isolate=False),
                      progress=PlainProgress(out, every=1e9), context=ctx, chunk_size=3)
    assert (s.total, s.computed) == (3, 3)
    assert out.getvalue().splitlines()[0] == "run: 3 case(s): 0 already stored, 3 to compute"
