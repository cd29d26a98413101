"""Round trip: a resolved profile written with `suite hardware show --format toml` loads back to
the same figures and the same content hash (shipped profiles, and hypothesis-generated ones from
the conformance kit's strategies)."""

from __future__ import annotations

import tomllib

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings

from suite.cli import main
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
    extra = [CPU] if prof.node is not None and prof.node.cpu else []
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


def test_cli_show_toml_with_override(tmp_path):
    res = CliRunner().invoke(main, ["hardware", "show", "titanx-cluster-10gbe", "--set", "network.-1.bandwidth=40 Gbit/s",
                                    "--format", "toml"])
    assert res.exit_code == 0, res.output
    raw = tomllib.loads(res.output)
    assert raw["network"][0]["bandwidth"] == "5000000000.0 B/s"
    assert '# overrides applied: {"network.-1.bandwidth": "40 Gbit/s"}' in res.output
