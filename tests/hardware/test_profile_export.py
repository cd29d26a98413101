"""Round trip: a resolved profile written with `suite hardware show --format toml` loads back to
the same figures and the same content hash (shipped profiles, and hypothesis-generated ones from
the conformance kit's strategies)."""

from __future__ import annotations

import tomllib

import pytest
from hypothesis import HealthCheck, given, settings

from suite.hardware import ProfileLibrary
from suite.hardware.export import to_toml, toml_dumps
from suite.resources import builtin_dir
from suite.testing.strategies import profiles

SHIPPED = builtin_dir("hardware_profiles")
LIB = ProfileLibrary([SHIPPED])
CPU = SHIPPED / "devices" / "amd-epyc-7763.toml"  # referenced by the Perlmutter nodes


def _reload(tmp_path, prof, name="x.toml"):
    f = tmp_path / name
    f.write_text(to_toml(prof, extensions={}))
    # node.cpu and the [ext.mix] devices stay references (resolved by the loading library)
    extra = [LIB.get(prof.node.cpu).path] if prof.node is not None and prof.node.cpu else []
    extra += sorted({LIB.get(g.name).path for g in prof.groups})
    return ProfileLibrary([f, *extra], extensions={}).get(prof.name)


@pytest.mark.parametrize("name", LIB.names())
def test_shipped_round_trip(tmp_path, name):
    prof = LIB.get(name)
    back = _reload(tmp_path, prof)
    assert back.content_hash() == prof.content_hash()
    assert back.device == prof.device and back.network == prof.network and back.sources == prof.sources


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(profiles())
def test_generated_round_trip(tmp_path, prof):
    back = _reload(tmp_path, prof)
    assert back.normalized() == prof.normalized()


def test_export_is_exact_strings_with_units():
    raw = tomllib.loads(to_toml(LIB.get("gtx1080ti-6x3-ib56"), extensions={}))
    assert raw["nodes"] == 6
    assert raw["network"][1]["bandwidth"] == "7000000000.0 B/s"  # 56 Gbit/s
    assert raw["device"]["memory"] == "11000000000.0 B"


def test_toml_dumps_nested():
    text = toml_dumps({"a": 1, "t": {"x": "y", "sub": {"z": [1.5, 2.0]}}, "arr": [{"k": 1, "n": [{"q": True}]}]})
    assert tomllib.loads(text) == {"a": 1, "t": {"x": "y", "sub": {"z": [1.5, 2.0]}}, "arr": [{"k": 1, "n": [{"q": True}]}]}


def test_cli_show_toml_with_override(tmp_path, suite_cli):
    res = suite_cli(["hardware", "show", "titanx-cluster-10gbe", "--set", "network.-1.bandwidth=40 Gbit/s",
                     "--format", "toml"])
    assert res.exit_code == 0, res.output
    raw = tomllib.loads(res.output)
    assert raw["network"][0]["bandwidth"] == "5000000000.0 B/s"
    assert '# overrides applied: {"network.-1.bandwidth": "40 Gbit/s"}' in res.output


# ------------------------------------------------------------------ error paths across the schema
from hypothesis import strategies as st  # noqa: E402

from suite.hardware.derived import flatten  # noqa: E402
from suite.hardware.units import DIMENSIONS  # noqa: E402
from suite.hardware.file_check import validate_paths  # noqa: E402

WRONG = {"bytes": "5 s", "bandwidth": "5 GB", "flop_rate": "5 GB/s", "time": "5 GB", "per_byte_time": "5 s",
         "power": "5 s", "money": "5 s", "frequency": "5 GB"}
QUANTITY_FIELDS = [(p.name, f.path, f.dimension) for p in LIB.all() for f in flatten(p) if f.dimension]


def _set(raw, path, value):
    parts = path.split(".")
    cur = raw
    for p in parts[:-1]:
        cur = cur[int(p)] if isinstance(cur, list) else cur[p]
    cur[parts[-1]] = value


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(QUANTITY_FIELDS), st.sampled_from(["wrong-dimension", "bare-number"]))
def test_error_names_the_field_anywhere_in_the_schema(tmp_path, case, how):
    """Break any quantity of any shipped profile (resolved export): the one error line names that
    exact field path and the expected dimension."""
    name, path, dim = case
    raw = tomllib.loads(to_toml(LIB.get(name), extensions={}))
    raw["profile"]["name"] = f"broken-{name}"  # not a duplicate of the shipped profile
    _set(raw, path, WRONG[dim] if how == "wrong-dimension" else 5.0)
    f = tmp_path / f"{name}.toml"
    f.write_text(toml_dumps(raw))
    report = validate_paths([f], extensions={})
    assert len(report["errors"]) == 1, report
    line = report["errors"][0]
    assert line.startswith(f"{f}: field {path}: expected {DIMENSIONS[dim][1]}"), line
    assert ("wrong dimension" in line) if how == "wrong-dimension" else ("a bare number" in line)
