"""Interactive report figures: headline metrics against every swept axis, data embedded once,
reasons stated when a section has no figure; `suite report` never overwrites silently."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner

from suite.cli import main


def _specs(html: str) -> list[dict]:
    return [json.loads(m) for m in re.findall(r'<script type="application/json" id="fig-[^"]+-\d+">(.*?)</script>',
                                              html)]


def test_headline_metrics_against_every_swept_axis(wide):
    """The README sweep (poseidon, nodes 1..32 x bandwidth 2..40 Gbit/s): its three headline
    metrics against nodes and against the bandwidth (a profile field, numeric, in Gbit/s), both
    on log axes (geometric values), one panel per value of the other axis (small multiples)."""
    from suite.report.interactive import technique_figures
    from suite.technique import Technique  # noqa: F401 - the headline comes from the declaration

    units, directions = wide.attrs["units"], wide.attrs["directions"]
    parts, why = technique_figures(wide, directions, units, ("iteration_time", "throughput", "speedup"), "poseidon",
                                   "fig-p")
    assert why == ""
    specs = _specs("".join(parts))
    assert [(s["t"], s["xlog"], len(s["p"])) for s in specs] == [
        ("poseidon: iteration_time vs nodes", True, 6), ("poseidon: throughput vs nodes", True, 6),
        ("poseidon: speedup vs nodes", True, 6),
        # 2, 5, 10, 20, 30, 40: log gaps more even than linear ones (suite.report.units.geometric)
        ("poseidon: iteration_time vs network.-1.bandwidth", True, 6),
        ("poseidon: throughput vs network.-1.bandwidth", True, 6),
        ("poseidon: speedup vs network.-1.bandwidth", True, 6)]
    assert specs[3]["xl"] == "network.-1.bandwidth (Gbit/s)" and specs[0]["yl"] == "iteration_time (ms)"
    # every case once in the section's table, each point pointing at its row
    data = json.loads(re.search(r'id="fig-p-data">(.*?)</script>', "".join(parts)).group(1))
    assert len(data["rows"]) == 144 and data["cols"][0] == "variant"
    # ideal scaling at one node: poseidon's speed-up is 1 at nodes=1 in every panel, variant by variant
    for panel in specs[2]["p"]:
        assert all(pts[0][:2] == [1.0, 1.0] for pts in panel["s"].values())


def test_a_section_without_an_axis_says_why(wide):
    from suite.report.interactive import technique_figures

    one = wide[(wide["param.nodes"] == 16) & (wide["set.network.-1.bandwidth"] == "10 Gbit/s")]
    parts, why = technique_figures(one, wide.attrs["directions"], wide.attrs["units"], ("speedup",), "poseidon", "f")
    assert parts == [] and why.startswith("no numeric parameter or profile field is swept")


def test_report_refuses_to_overwrite_without_force(tmp_path, report_context):
    st, out = str(tmp_path / "s.sqlite"), tmp_path / "r.html"
    obj = {"context": report_context}  # the commands reuse it (get_context): plugin loading is not tested here
    r = CliRunner().invoke(main, ["run", "--technique", "poseidon", "--variant", "ps", "--param", "nodes=2", "-q",
                                  "--store", st], obj=dict(obj))
    assert r.exit_code == 0, r.output
    r = CliRunner().invoke(main, ["report", "-o", str(out), "--store", st, "--no-scoreboard"], obj=dict(obj))
    assert r.exit_code == 0
    out.write_text("mine", encoding="utf-8")
    r = CliRunner().invoke(main, ["report", "-o", str(out), "--store", st, "--no-scoreboard"], obj=dict(obj))
    assert r.exit_code == 2 and "exists; give --force to overwrite it" in r.output
    assert out.read_text(encoding="utf-8") == "mine"
    r = CliRunner().invoke(main, ["report", "-o", str(out), "--store", st, "--no-scoreboard", "--force"],
                           obj=dict(obj))
    assert r.exit_code == 0 and out.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
