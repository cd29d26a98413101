"""`suite compare` of two runs that differ by one `--set` refuses (the profiles differ) and used to
show only the profile's two hashes: the field that differs was shown only with
--allow-profile-change (found by a new user's tryout). The refusal's one line names it, and with
`--format json` it is a document too."""

from __future__ import annotations

import json


def _two_runs(tmp_path, monkeypatch, suite_cli) -> None:
    """Runs 1 and 2: the same case on titanx-cluster-10gbe, the second at 40 Gbit/s."""
    monkeypatch.setenv("SUITE_STORE", str(tmp_path / "s.sqlite"))
    sweep = ["run", "--technique", "poseidon", "--variant", "ps", "--param", "nodes=16", "--profile",
             "titanx-cluster-10gbe", "-q"]
    assert suite_cli(*sweep).exit_code == 0
    assert suite_cli(*sweep, "--set", "network.-1.bandwidth=40 Gbit/s").exit_code == 0


def test_the_refusal_names_the_field_that_differs_in_its_files_unit(tmp_path, monkeypatch, suite_cli):
    _two_runs(tmp_path, monkeypatch, suite_cli)
    r = suite_cli("compare", "1", "2")
    assert r.exit_code == 2
    (line,) = r.output.strip().splitlines()
    assert line.startswith("error: compare refused: 1 case pair(s) were computed on different hardware profiles")
    assert line.endswith("(the profiles differ in network.0.bandwidth: 10 Gbit/s -> 40 Gbit/s)")


def test_a_json_refusal_is_a_document_with_the_differences(tmp_path, monkeypatch, suite_cli):
    _two_runs(tmp_path, monkeypatch, suite_cli)
    r = suite_cli("compare", "1", "2", "--format", "json")
    assert r.exit_code == 2
    doc = json.loads(r.stdout)
    assert doc["refused"].startswith("compare refused: 1 case pair(s) were computed on different hardware profiles")
    (d,) = doc["profile_diffs"]
    assert d["fields_written"] == {"network.0.bandwidth": ["10 Gbit/s", "40 Gbit/s"]}
    assert d["fields"]["network.0.bandwidth"] == [1.25e9, 5e9]  # B/s: 10 and 40 Gbit/s
    assert r.stderr.strip().splitlines()[-1].startswith("error: compare refused")


_MINE = """nodes = 4
[profile]
name = "{name}"
kind = "cluster"
source = "test"
[node]
device = "nvidia-h100-sxm5-80gb"
devices_per_node = 8
nics_per_node = 2
[[network]]
name = "nvlink4-nvswitch"
topology = "switch"
size = 8
bandwidth = "450 GB/s"
[[network]]
name = "infiniband"
topology = "fat-tree"
size = 4
bandwidth = "{bw}"
[sources]
"nodes" = "test"
"""


def test_unresolvable_profiles_say_fields_unknown_not_that_none_differs(tmp_path, monkeypatch, suite_cli):
    """Two runs on `--profile FILE.toml` profiles that differ in one bandwidth: compare, without
    --profiles, resolved neither side now and printed "(no field differs in the current profile
    files)" under two different hashes (a new user's tryout)."""
    monkeypatch.setenv("SUITE_STORE", str(tmp_path / "s.sqlite"))
    (tmp_path / "p").mkdir()
    for name, bw in (("mine-a", "200 Gbit/s"), ("mine-b", "400 Gbit/s")):
        (tmp_path / "p" / f"{name}.toml").write_text(_MINE.format(name=name, bw=bw))
        assert suite_cli("run", "-q", "-t", "poseidon", "--variant", "ps", "--param", "nodes=4",
                         "--profile", str(tmp_path / "p" / f"{name}.toml")).exit_code == 0
    out = suite_cli("compare", "1", "2", "--allow-profile-change").output
    assert "no field differs" not in out
    assert ("(fields unknown: profile 'mine-a' (side A) and 'mine-b' (side B) cannot be resolved now; "
            "pass --profiles DIR holding their files)") in out
    known = suite_cli("compare", "1", "2", "--allow-profile-change", "--profiles", str(tmp_path / "p")).output
    assert "network.1.bandwidth: 200 Gbit/s -> 400 Gbit/s" in known and "fields unknown" not in known
