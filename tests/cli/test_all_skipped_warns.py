"""A run whose every case was skipped ended like a success with no word beyond the reasons (a
tryout: `suite run --technique poseidon --param nodes=64` on a 32-node profile, 4 cases skipped,
exit 0): it now says that nothing was computed."""

from __future__ import annotations


def test_a_run_of_skipped_cases_only_says_nothing_was_computed(suite_cli, tmp_path):
    r = suite_cli("run", "--technique", "poseidon", "--variant", "ps", "--param", "nodes=64", "--store",
                  tmp_path / "s.sqlite", "-q")
    assert r.exit_code == 0, r.output  # a skip is a declared outcome, not an error
    assert "skipped 1 case(s): " in r.output
    assert "warning: every case of run 1 was skipped: nothing was computed" in r.output


def test_a_run_with_a_computed_case_does_not_warn(suite_cli, tmp_path):
    r = suite_cli("run", "--technique", "poseidon", "--variant", "ps", "--param", "nodes=64,2", "--store",
                  tmp_path / "s.sqlite", "-q")
    assert r.exit_code == 0, r.output
    assert "skipped 1 case(s): " in r.output and "every case" not in r.output
