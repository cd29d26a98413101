"""Every malformed profile in tests/hardware/malformed/ gives ONE clear line naming the file, the
field path, what was expected and what was given, and `suite hardware validate` exits 2 without a
traceback. The expected lines are written here by hand from the corpus files."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from pydantic import BaseModel

from suite.cli import main
from suite.errors import ProfileError
from suite.hardware import ProfileLibrary, profile_dirs
from suite.hardware.units import BandwidthQ
from suite.hardware.file_check import validate_paths
from session_context import session_context

HERE = Path(__file__).parent / "malformed"

# file -> (field path or None for a syntax error, fragment of "expected ...", fragment of "got ...")
CASES: dict[str, tuple[str | None, str, str]] = {
    "missing-field.toml": ("device.memory_bandwidth", "expected a bandwidth in bytes or bits per second",
                           "got nothing (required field missing)"),
    "wrong-dimension.toml": ("device.memory", 'expected a size in bytes like "80 GiB"', "got '900 GB/s' (wrong dimension"),
    "bits-for-bytes.toml": ("device.memory", "expected a size in bytes", "got '128 Gbit' (bits: a size must be given in bytes"),
    "bare-number.toml": ("device.memory_bandwidth", "expected a bandwidth", "got 900 (a bare number"),
    "no-unit-string.toml": ("device.memory_bandwidth", "expected a bandwidth", "got '900' (no unit)"),
    "unknown-dtype.toml": ("device.peak_flops", "expected dtype keys among ['fp64', 'fp64_tensor', 'fp32',",
                           "got 'fp99'"),
    "zero-flops.toml": ("device.peak_flops.fp32", "expected a compute rate > 0", "got '0 TFLOP/s'"),
    "zero-bandwidth.toml": ("network.0.bandwidth", "expected a bandwidth in bytes or bits per second > 0", "got '0 Gbit/s'"),
    "negative-bandwidth.toml": ("network.0.bandwidth", "> 0", "got '-100 Gbit/s'"),
    "unknown-key.toml": ("device.memroy", "expected a key of [device] (type, name, vendor, memory,",
                         "got unknown key 'memroy'; did you mean 'memory'?"),
    "wrong-type-literal.toml": ("device.type", "expected 'gpu', 'cpu', 'tpu', 'wafer', 'fpga' or 'accelerator'",
                                "got 'quantum'"),
    "wrong-kind.toml": ("profile.kind", "expected 'device', 'node', 'cluster' or 'measured'", "got 'rack'"),
    "duplicate-name.toml": ("profile.name", "expected a name no other profile uses",
                            "got 'nvidia-a100-sxm4-80gb' (already defined in "),
    "bad-source-path.toml": ("sources.device.memroy", "expected the path of a field of this profile", "got 'device.memroy'"),
    "bad-syntax.toml": (None, "expected valid TOML", "got "),
    "unknown-reference.toml": ("node.device", "expected the name of a device profile",
                               "got 'nvidia-a100-sxm9-80gb'; did you mean nvidia-a100-sxm4-80gb"),
    "cpu-is-a-gpu.toml": ("node.cpu", "expected a profile whose [device] type is 'cpu'", "got 'nvidia-k40c' (type 'gpu')"),
    "zero-nodes.toml": ("nodes", "expected an integer >= 1", "got 0"),
    "cluster-without-network.toml": ("network", "expected at least one [[network]] level", "got nothing"),
    "nodes-in-node-table.toml": ("node.nodes", "expected a key of [node]",
                                 "got unknown key 'nodes'; `nodes` is a top-level key"),
    "unknown-extends.toml": ("profile.extends", "expected the name of a profile in the library",
                             "got 'dgx-a1000'; did you mean dgx-a100"),
    "self-extends.toml": ("profile.extends", "expected a chain without cycles", "got self-extends -> self-extends"),
    "missing-name.toml": ("profile.name", "expected a string", "got nothing (required field missing)"),
    # counts and shapes a model read as something else: 0 NICs or cores as 1, -8 NICs as -8 x the
    # bandwidth, a 0 extent dropped, an infinite taper as a 0 B/s bisection
    "zero-nics.toml": ("node.nics_per_node", "expected an integer >= 1", "got 0"),
    "negative-nics.toml": ("node.nics_per_node", "expected an integer >= 1", "got -8"),
    "zero-cores.toml": ("device.cores", "expected an integer >= 1", "got 0"),
    "zero-extent-dims.toml": ("network.0.dims", "expected extents >= 1", "got [0, 8]"),
    "infinite-oversubscription.toml": ("network.0.oversubscription", "expected a finite number >= 1", "got inf"),
    "zero-mtbf.toml": ("reliability.device_mtbf", 'expected a time > 0 like "2 us"', "got '0 h'"),
    # a NaN or infinite abscissa passed "in increasing order" (every comparison with NaN is false)
    "infinite-efficiency-size.toml": ("device.efficiency", "each size finite and > 0", "got [[1000000000.0, 0.3], [inf, 0.8]]"),
    "nan-communication-curve.toml": ("communication.efficiency", "each seconds finite and > 0",
                                     "got [[1e-06, 0.5], [nan, 0.9]]"),
}


def test_corpus_is_complete():
    """Every file in the corpus has an expected message here, and vice versa."""
    assert sorted(p.name for p in HERE.glob("*.toml")) == sorted(CASES)


def _check_line(line: str, fname: str, field: str | None, expected: str, given: str) -> None:
    assert "\n" not in line.strip()
    path = str(HERE / fname)
    assert line.startswith(path + ": "), line
    rest = line[len(path) + 2:]
    if field is None:
        assert re.match(r"line \d+, column \d+: expected valid TOML, got .+", rest), rest
    else:
        assert rest.startswith(f"field {field}: expected "), rest
    assert expected in rest, (expected, rest)
    assert given in rest, (given, rest)
    assert rest.index("expected") < rest.index(given.split()[0]), rest


@pytest.mark.parametrize("fname", sorted(CASES))
def test_validate_paths_one_line(fname):
    field, expected, given = CASES[fname]
    report = validate_paths([HERE / fname])
    assert report["ok"] == []
    assert len(report["errors"]) == 1
    _check_line(report["errors"][0], fname, field, expected, given)


@pytest.mark.parametrize("fname", sorted(CASES))
def test_cli_validate_exit_2_no_traceback(fname, suite_cli):
    field, expected, given = CASES[fname]
    res = suite_cli("hardware", "validate", HERE / fname)  # the session's context: plugin loading is not tested
    assert res.exit_code == 2, res.output
    assert "Traceback" not in res.output
    lines = [ln for ln in res.output.splitlines() if ln.startswith("error: ")]
    assert len(lines) == 1, res.output
    _check_line(lines[0][len("error: "):], fname, field, expected, given)


def test_extends_cycle_across_two_files():
    report = validate_paths([HERE / "cycle"])
    assert len(report["errors"]) == 2
    a = str(HERE / "cycle" / "cycle-a.toml")
    assert f"{a}: field profile.extends: expected a chain without cycles, got cycle-a -> cycle-b -> cycle-a" in report["errors"]


def test_cli_validate_good_and_bad_together_exits_2(suite_cli):
    good = profile_dirs()[0] / "devices" / "nvidia-k40c.toml"
    res = suite_cli("hardware", "validate", good, HERE / "zero-flops.toml")
    assert res.exit_code == 2
    assert "ok: nvidia-k40c (device)" in res.output
    assert res.output.count("error: ") == 1


def test_duplicate_names_across_folders(tmp_path):
    for sub in ("one", "two"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "x.toml").write_text((HERE.parent / "malformed" / "missing-name.toml").read_text()
                                               .replace('[profile]', '[profile]\nname = "twin"'))
    with pytest.raises(ProfileError) as exc:
        ProfileLibrary([tmp_path / "one", tmp_path / "two"])
    msg = str(exc.value)
    assert msg == (f"{tmp_path / 'two' / 'x.toml'}: field profile.name: expected a name no other profile uses, "
                   f"got 'twin' (already defined in {tmp_path / 'one' / 'x.toml'})")


def test_unknown_profile_name_suggests():
    with pytest.raises(ProfileError, match=r"expected a known profile name, got 'nvidia-a100'; did you mean "):
        session_context().profiles.get("nvidia-a100")


def test_profile_of_missing_file():
    with pytest.raises(ProfileError, match=r"nope\.toml: expected an existing profile file"):
        session_context().profile("nope.toml")


def test_a_profile_file_whose_name_the_library_has_is_refused_not_replaced(tmp_path):
    """`--profile ./k80-slow.toml` (the shipped k80-cluster-10gbe at 1 Gbit/s, its name kept) warned
    "skipped" and then ran the shipped profile: Poseidon's 8 nodes at 446.1 ms where 1 Gbit/s gives
    1.734 s, stored ok (a hostile tryout). The file given is refused, as a workload file of a taken name is."""
    ctx = session_context()
    shipped = ctx.profiles.path("k80-cluster-10gbe")
    slow = tmp_path / "k80-slow.toml"
    slow.write_text(Path(shipped).read_text().replace('"10 Gbit/s"', '"1 Gbit/s"'))
    with pytest.raises(ProfileError) as exc:
        ctx.profile(str(slow))
    assert str(exc.value) == (f"{slow}: profile.name: 'k80-cluster-10gbe' is already a profile of the library "
                              f"({shipped}); expected a new name (rename the profile in the file)")
    renamed = tmp_path / "k80-slow2.toml"
    renamed.write_text(slow.read_text().replace('name = "k80-cluster-10gbe"', 'name = "k80-slow"'))
    assert ctx.profile(str(renamed)).network[-1].bandwidth == 1.25e8  # its own figures, 1 Gbit/s
    assert ctx.profile(str(shipped)).network[-1].bandwidth == 1.25e9  # the shipped file given by path is itself


# ---------------------------------------------------------------------------- extensions

class HopperExt(BaseModel):
    model_config = {"extra": "forbid"}
    dsmem_bandwidth: BandwidthQ
    max_cluster_size: int


EXT_PROFILE = """[profile]
name = "ext-test"
kind = "device"

[device]
type = "gpu"
memory = "80 GB"
memory_bandwidth = "3.35 TB/s"
peak_flops = {{ fp32 = "67 TFLOP/s" }}

[ext.{name}]
{body}
"""


def _write(tmp_path, name, body):
    f = tmp_path / "ext.toml"
    f.write_text(EXT_PROFILE.format(name=name, body=body))
    return f


def test_registered_extension_validated_into_si(tmp_path):
    f = _write(tmp_path, "hopper", 'dsmem_bandwidth = "3.3 TB/s"\nmax_cluster_size = 16')
    lib = ProfileLibrary([f], extensions={"hopper": HopperExt})
    prof = lib.get("ext-test")
    assert prof.ext["hopper"] == {"dsmem_bandwidth": 3.3e12, "max_cluster_size": 16}
    assert lib.warnings == []


def test_registered_extension_error_names_ext_path(tmp_path):
    f = _write(tmp_path, "hopper", 'dsmem_bandwidth = "3.3 TB"\nmax_cluster_size = 16')
    report = validate_paths([f], extensions={"hopper": HopperExt})
    assert len(report["errors"]) == 1
    assert report["errors"][0].startswith(f"{f}: field ext.hopper.dsmem_bandwidth: expected a bandwidth")
    assert "got '3.3 TB' (wrong dimension" in report["errors"][0]


def test_registered_extension_bare_number_rejected(tmp_path):
    f = _write(tmp_path, "hopper", "dsmem_bandwidth = 3.3e12\nmax_cluster_size = 16")
    with pytest.raises(ProfileError, match=r"field ext\.hopper\.dsmem_bandwidth: .*a bare number"):
        ProfileLibrary([f], extensions={"hopper": HopperExt}).get("ext-test")


def test_unknown_extension_kept_and_warned(tmp_path):
    f = _write(tmp_path, "fpga", "dsp_slices = 9024")
    report = validate_paths([f], extensions={})
    assert report["errors"] == []
    assert [o["name"] for o in report["ok"]] == ["ext-test"]
    assert report["warnings"] == [f"{f}: field ext.fpga: no installed plugin registers extension 'fpga' "
                                  f"(suite_profile_extensions); kept unvalidated"]
    prof = ProfileLibrary([f], extensions={}).get("ext-test")
    assert prof.ext == {"fpga": {"dsp_slices": 9024}}


def test_cli_validate_shows_extension_warning(tmp_path, suite_cli):
    f = _write(tmp_path, "nosuchplugin", "x = 1")
    res = suite_cli(["hardware", "validate", str(f)])
    assert res.exit_code == 0, res.output
    assert "warning: " in res.output and "ext.nosuchplugin" in res.output


def test_network_size_mismatch_is_an_error_naming_both_fields(tmp_path):
    f = tmp_path / "c.toml"
    f.write_text('nodes = 4\n[profile]\nname = "size-mismatch"\nkind = "cluster"\n[node]\n'
                 'device = "nvidia-a100-sxm4-80gb"\ndevices_per_node = 8\n[[network]]\nname = "nvl"\n'
                 'topology = "switch"\nsize = 4\nbandwidth = "300 GB/s"\n[[network]]\nname = "ib"\n'
                 'topology = "fat-tree"\nsize = 2\nbandwidth = "200 Gbit/s"\n')
    report = validate_paths([f], extensions={})
    assert report["ok"] == []
    assert report["errors"] == [
        f"{f}: field network.1.size: expected the node count (field nodes = 4) for the outermost level of a "
        f"cluster, got 2"]
    f.write_text(f.read_text().replace("size = 2", "size = 4"))
    report = validate_paths([f], extensions={})
    assert report["errors"] == [
        f"{f}: field network.0.size: expected devices_per_node (field node.devices_per_node = 8) for the "
        f"intra-node level, got 4"]


def test_cli_validate_without_files_checks_the_whole_library(tmp_path, monkeypatch):
    """`suite hardware validate` alone validates every library folder: the shipped profiles pass,
    and a broken file in a $SUITE_PROFILES folder is found and named."""
    (tmp_path / "bad.toml").write_text((HERE / "zero-flops.toml").read_text())
    monkeypatch.setenv("SUITE_PROFILES", str(tmp_path))
    res = CliRunner().invoke(main, ["hardware", "validate"])
    assert res.exit_code == 2, res.output
    assert "ok: nvidia-k40c (device)" in res.output
    assert res.output.count("error: ") == 1 and "bad.toml" in res.output


_TWIN = """[profile]
name = "twin"
kind = "device"
source = "test"
[device]
type = "gpu"
name = "twin"
memory = "16 GB"
memory_bandwidth = {bw}
peak_flops = {{ fp32 = "10 TFLOP/s" }}
"""


@pytest.mark.parametrize("bad_first", [True, False])
def test_a_name_two_files_declare_is_refused_naming_both_when_errors_are_collected(tmp_path, bad_first):
    """--profiles with an invalid bad1.toml and a valid mycluster.toml of one name: the CLI's library
    warned, skipped the valid file and served the invalid one, so `hardware show NAME` failed on
    bad1's error (a new user's tryout). docs/profiles.md: two files of one name are an error naming
    both; neither serves the name now, whichever is broken."""
    bad, good = ("a.toml", "b.toml") if bad_first else ("b.toml", "a.toml")
    (tmp_path / bad).write_text(_TWIN.format(bw="900"))  # a bare number: invalid
    (tmp_path / good).write_text(_TWIN.format(bw='"900 GB/s"'))
    said: list[str] = []
    lib = ProfileLibrary([tmp_path], collect_errors=True, warn=said.append)
    with pytest.raises(ProfileError) as exc:
        lib.get("twin")
    assert str(exc.value) == (f"hardware profile 'twin': expected one file declaring it, got {tmp_path / 'a.toml'} "
                              f"and {tmp_path / 'b.toml'} (rename or remove one)")
    assert said == [f"{tmp_path / 'b.toml'}: field profile.name: expected a name no other profile uses, got 'twin' "
                    f"(already defined in {tmp_path / 'a.toml'}; the name is refused until one is renamed or removed)"]
    (tmp_path / bad).unlink()
    assert ProfileLibrary([tmp_path], collect_errors=True).get("twin").device.memory_bandwidth == 900e9


def _twins(tmp_path):
    """Two valid files declaring profile ``twin`` and the refusal both `suite hardware list` (its ERROR
    row) and `suite run --profile twin` print for the name."""
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text(_TWIN.format(bw='"900 GB/s"'))
    b.write_text(_TWIN.format(bw='"2 TB/s"'))
    return a, b, f"hardware profile 'twin': expected one file declaring it, got {a} and {b} (rename or remove one)"


def test_a_refused_duplicate_name_is_listed_once_and_every_lookup_refuses_it(tmp_path):
    """get() refused a name two files declare, but path() returned the first file as if it served the
    name (calibrate --name twin -o a.toml went on to measure and wrote a file still refused). Now the
    library agrees with `suite hardware list`: the name listed once; get, raw and path refuse it alike."""
    a, b, refused = _twins(tmp_path)
    lib = ProfileLibrary([tmp_path], collect_errors=True)
    assert lib.names() == ["twin"] and len(lib) == 1 and "twin" in lib
    for lookup in (lib.get, lib.raw, lib.path):
        with pytest.raises(ProfileError) as exc:
            lookup("twin")
        assert str(exc.value) == refused, lookup
    assert lib.files("twin") == (a, b)
    assert list(lib.file_errors) == [str(b)]
    b.unlink()
    lib = ProfileLibrary([tmp_path], collect_errors=True)
    assert lib.path("twin") == a and lib.files("twin") == (a,)


def test_calibrate_refuses_a_duplicate_name_before_measuring(tmp_path, monkeypatch):
    """`suite hardware calibrate --name twin -o a.toml` passed its shadow check (path() said a.toml
    serves twin) and measured; it now stops with the refusal, before measuring."""
    from suite.hardware import calibrate as cal

    a, _b, refused = _twins(tmp_path)
    monkeypatch.setenv("SUITE_PROFILES", str(tmp_path))
    measured: list[bool] = []
    monkeypatch.setattr(cal, "calibrate", lambda **kw: measured.append(True) or 1 / 0)
    res = CliRunner().invoke(main, ["hardware", "calibrate", "--name", "twin", "-o", str(a)])
    assert res.exit_code != 0 and measured == [], res.output
    assert refused in res.output
    assert a.read_text() == _TWIN.format(bw='"900 GB/s"') and not (tmp_path / "a.toml.bak").exists()


def test_validate_of_both_files_of_a_duplicate_name_reports_each(tmp_path):
    """`suite hardware validate a.toml b.toml` (one name): one error per file, the refusal for the first."""
    a, b, refused = _twins(tmp_path)
    res = validate_paths([str(a), str(b)])
    assert res["ok"] == []
    assert res["errors"] == [refused, f"{b}: field profile.name: expected a name no other profile uses, got 'twin' "
                                      f"(already defined in {a}; the name is refused until one is renamed or removed)"]
