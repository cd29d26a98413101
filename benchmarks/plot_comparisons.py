"""Regenerate docs/comparisons.md's figures and report: the communication techniques head to head
on ResNet-50, on two shipped clusters, in a temporary store.

    python benchmarks/plot_comparisons.py            # writes docs/img/comparison-*.png, prints tables
    python benchmarks/plot_comparisons.py --report /tmp/comparison.html   # and the full report

It runs exactly what the page shows on the command line::

    suite run --category communication --workload resnet-50 \\
        --profile k80-cluster-10gbe,h100-ndr-fat-tree \\
        --param nodes=8 --param workers=8 --param efficiency=0.5 --name head-to-head
    suite report head-to-head -o comparison.html

and then draws one figure per shared metric with :func:`suite.report.plots.category_figure`
(the same function the report uses, each bar labelled with its scale in GPUs) and prints, per
cluster, each technique's scale and metrics by variant as a Markdown table.
"""

from __future__ import annotations

import argparse
import base64
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PROFILES = ["k80-cluster-10gbe", "h100-ndr-fat-tree"]
ARGS = ["--category", "communication", "--workload", "resnet-50", "--profile", ",".join(PROFILES),
        "--param", "nodes=8", "--param", "workers=8", "--param", "efficiency=0.5"]
METRICS = ["iteration_time", "exposed_comm", "speedup"]
#: the tables' columns: the figures' metrics, then compute_time (its models differ: docs/comparisons.md)
TABLE_METRICS = [*METRICS, "compute_time"]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img", help="folder for the figures")
    ap.add_argument("--report", type=Path, default=None,
                    help="also write the full report here (not kept in the repository: a self-contained page "
                         "embeds the report's script, and a committed copy goes stale when the script changes)")
    ns = ap.parse_args(argv)
    from click.testing import CliRunner

    from suite.cli import main as suite_main
    from suite.context import Context
    from suite.report import plots
    from suite.report.units import format_value
    from suite.results.load import load

    ns.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "s.sqlite"
        r = CliRunner().invoke(suite_main, ["run", *ARGS, "--name", "head-to-head", "-q", "--store", str(store)])
        print(r.output, file=sys.stderr)
        if r.exit_code:
            return r.exit_code
        if ns.report is not None:
            r = CliRunner().invoke(suite_main, ["report", "head-to-head", "-o", str(ns.report), "--no-scoreboard",
                                                "--title", "Communication techniques head to head (docs/comparisons.md)",
                                                "--store", str(store), "--force"])
            print(r.output, file=sys.stderr)
            if r.exit_code:  # asked for: an error is not a warning
                return r.exit_code
        wide = load(store, run="head-to-head", wide=True)
    ctx = Context.build()
    reg = ctx.registry
    dpn = {p: ctx.profile(p).devices_per_node for p in PROFILES}  # for "8 nodes = 64 GPUs"
    names = sorted(set(wide["technique"]))
    techs = {t: reg.technique(t) for t in names}
    base = {t: {v.name for v in techs[t].baselines} for t in names}
    units, dirs = wide.attrs["units"], wide.attrs["directions"]
    for m in METRICS:
        png = plots.category_figure(wide, m, units[m], dirs[m], techs, base,
                                    f"communication techniques: {m}, ResNet-50, --param nodes=8 workers=8",
                                    devices_per_node=dpn)
        (ns.out / f"comparison-{m}.png").write_bytes(base64.b64decode(png))
        print(f"wrote {ns.out / f'comparison-{m}.png'}", file=sys.stderr)
    for prof in PROFILES:
        print(f"\n#### {prof}\n")
        print("| technique | variant | scale | " + " | ".join(TABLE_METRICS) + " |")
        print("|---|---|---|" + "---|" * len(TABLE_METRICS))
        sub = wide[wide["profile"] == prof]
        for rec in sorted(sub.to_dict("records"), key=lambda r: (r["technique"], r["variant"] not in base[r["technique"]],
                                                                  r["variant"])):
            b = " (baseline)" if rec["variant"] in base[rec["technique"]] else ""
            scale = plots.scale_text(techs[rec["technique"]], rec, dpn[prof])
            print(f"| {rec['technique']} | {rec['variant']}{b} | {scale} | "
                  + " | ".join(format_value(rec[m], units[m]) for m in TABLE_METRICS) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
