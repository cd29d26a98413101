"""`suite compare` of two runs that differ by one `--set` refuses (the profiles differ) and used to
show only the profile's two hashes: the field that differs was shown only with
--allow-profile-change (found by a new user's tryout). The refusal's one line names it."""

from __future__ import annotations


def test_the_refusal_names_the_field_that_differs_in_its_files_unit(tmp_path, monkeypatch, suite_cli):
    monkeypatch.setenv("SUITE_STORE", str(tmp_path / "s.sqlite"))
    sweep = ["run", "--technique", "poseidon", "--variant", "ps", "--param", "nodes=16", "--profile",
             "titanx-cluster-10gbe", "-q"]
    assert suite_cli(*sweep).exit_code == 0
    assert suite_cli(*sweep, "--set", "network.-1.bandwidth=40 Gbit/s").exit_code == 0
    r = suite_cli("compare", "1", "2")
    assert r.exit_code == 2
    (line,) = r.output.strip().splitlines()
    assert line.startswith("error: compare refused: 1 case pair(s) were computed on different hardware profiles")
    assert line.endswith("(the profiles differ in network.0.bandwidth: 10 Gbit/s -> 40 Gbit/s)")
