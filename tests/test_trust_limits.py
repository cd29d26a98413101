"""Issue 43, inputs that stopped everything: nesting, layer counts. Each is refused with one line
naming the file (a deeply nested TOML raised a nameless RecursionError that blocked every
`suite run` and `hardware list`; a workload of 10^6 layers was still building at 60 s, 3.4 GB)."""

from __future__ import annotations

import functools
import json

import pytest

from suite.limits import MAX_LAYERS, MAX_TOML_DEPTH


@pytest.fixture
def cli(suite_cli):
    """``cli(*args)``: ``suite ARGS`` on the session's one context (no plugin loading tested here)."""
    return functools.partial(suite_cli, catch_exceptions=False)


NESTED = {
    "arrays": "x = " + "[" * 5000 + "]" * 5000 + "\n",
    "inline": "x = " + "{a = " * 5000 + "1" + "}" * 5000 + "\n",
    "dotted": "[" + ".".join(["t"] * 2000) + "]\nx = 1\n",
}


@pytest.mark.parametrize("kind", sorted(NESTED))
def test_deeply_nested_profile_is_named_and_skipped_by_hardware_list(tmp_path, kind, cli):
    d = tmp_path / "profiles"
    d.mkdir()
    (d / "deep.toml").write_text('[profile]\nname = "deep"\nkind = "device"\n' + NESTED[kind])
    r = cli("hardware", "list", "--profiles", str(d), "--format", "json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)  # the shipped profiles are still listed
    (warning,) = [ln for ln in r.stderr.splitlines() if "deep.toml" in ln]
    assert warning.startswith(f"warning: {d / 'deep.toml'}: ")
    assert f"expected tables and arrays nested at most {MAX_TOML_DEPTH} levels, got deeper nesting; skipped" in warning


def test_deeply_nested_experiment_file_is_one_line(tmp_path, cli):
    exp = tmp_path / "deep.toml"
    exp.write_text('[e]\ntechnique = "poseidon"\n' + NESTED["arrays"])
    r = cli("run", str(exp), "--dry-run")
    assert r.exit_code == 2
    (line,) = r.output.strip().splitlines()
    assert line.startswith(f"error: {exp}: line 3: expected tables and arrays nested at most {MAX_TOML_DEPTH} levels")


def test_deeply_nested_workload_file_is_one_line(tmp_path):
    from suite.errors import WorkloadError
    from suite.workloads.importer.tomlfile import load_workload_file

    wl = tmp_path / "deep.toml"
    wl.write_text('format = "dlsys-suite-workload/1"\n' + NESTED["inline"])
    with pytest.raises(WorkloadError, match=r"deep.toml: line 2: expected tables and arrays nested at most 32"):
        load_workload_file(wl)


def test_workload_with_a_million_layers_is_refused_before_it_is_built(tmp_path, cli):
    from suite.errors import WorkloadError
    from suite.workloads.importer.tomlfile import load_workload_file

    wl = tmp_path / "huge.toml"
    wl.write_text('format = "dlsys-suite-workload/1"\n[workload]\nname = "huge"\n'
                  '[transformer]\nlayers = 1000000\nhidden = 64\nheads = 4\nvocab = 100\nseq = 16\n')
    with pytest.raises(WorkloadError) as err:
        load_workload_file(wl)
    assert str(err.value) == f"{wl}: transformer.layers: expected at most {MAX_LAYERS:,} layers, got 1,000,000"
    r = cli("run", "--technique", "poseidon", "--workload", "resnet-3000002", "--dry-run")
    assert r.exit_code == 2
    assert r.output.strip().splitlines()[-1].endswith(f"expected at most {MAX_LAYERS:,} layers, got 3,000,002")


def test_every_problem_of_a_profile_is_listed(tmp_path, cli):
    """Issue 43: profile file 13 reported only the first of its three problems."""
    f = tmp_path / "three.toml"
    f.write_text('[profile]\nname = "three"\nkind = "device"\nsource = "t"\n'
                 '[device]\ntype = "gpu"\nname = "g"\nmemroy = "16 GiB"\nmemory_bandwidth = "fast"\n'
                 'peak_flops = { fp32 = "10 TFLOP/s" }\n')
    r = cli("hardware", "validate", str(f))
    assert r.exit_code == 2
    (line,) = [ln for ln in r.output.strip().splitlines() if "three.toml" in ln]
    assert "field device.memroy: expected a key of [device]" in line and "did you mean 'memory'?" in line
    assert "; also field device.memory_bandwidth: expected a bandwidth" in line
    assert "; also field device.memory: expected" in line and "got nothing (required field missing)" in line
    assert line.count("; also ") == 2


def test_experiment_file_streams_like_flags(tmp_path):
    """Issue 43: an experiment file expanded eagerly (8.6 GB after 60 s, nothing stored) where the
    same sweep as flags streams. A large entry is counted from its axes and resolved as the run
    goes (each axis value is checked once up front, as for flags); an entry with include/exclude beside it is still expanded, in file order."""
    import itertools

    from suite.context import Context
    from suite.runner.experiment import expand_experiment

    f = tmp_path / "big.toml"
    nodes = ", ".join(str(i) for i in range(1, 5_001))
    f.write_text(f'[big]\ntechnique = "poseidon"\nparams = {{ nodes = [{nodes}] }}\n'
                 '[small]\ntechnique = "poseidon"\nvariants = ["poseidon"]\nparams = { nodes = [2, 4] }\n'
                 'exclude = [{ nodes = 4 }]\n')
    exp = expand_experiment(f, max_cases=2_000_000, stream=True, context=Context.build())
    assert len(exp.cases) == 4 * 5_000 + 1
    first = list(itertools.islice(iter(exp.cases), 3))
    assert [c.params["nodes"] for c in first] == [1, 2, 3] and len({c.variant for c in first}) == 1
    assert exp.entries == {"big": 20_000, "small": 1}
