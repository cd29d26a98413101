"""Measured vs predicted iteration time of the training validation set (docs/img/validation-training.png).

Usage::

    python benchmarks/plot_training_validation.py [-o docs/img/validation-training.png]
"""

from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-o", "--out", default="docs/img/validation-training.png")
    a = ap.parse_args(argv)

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from suite.context import Context
    from suite.perf.training_validation import validate_training

    rep = validate_training(Context.build())
    fig, ax = plt.subplots(figsize=(5.2, 4.6))
    lo = min(min(r.measured_time, r.predicted_time) for r in rep.rows) * 0.8
    hi = max(max(r.measured_time, r.predicted_time) for r in rep.rows) * 1.25
    ax.plot([lo, hi], [lo, hi], color="0.5", lw=1, label="exact")
    ax.fill_between([lo, hi], [lo * 0.9, hi * 0.9], [lo * 1.1, hi * 1.1], color="0.9", label="±10 %")
    for r in rep.rows:
        style = dict(marker="s", facecolors="none", edgecolors="tab:gray") if r.calibration else \
            dict(marker="o", color="tab:blue" if r.source.startswith("narayanan") else "tab:orange")
        ax.scatter([r.measured_time], [r.predicted_time], s=30, **style)
        ax.annotate(r.row, (r.measured_time, r.predicted_time), fontsize=7, xytext=(4, -8), textcoords="offset points")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(lo, hi)
    ax.set_xlabel("published iteration time (s)")
    ax.set_ylabel("suite.perf.training (s)")
    ax.set_title("Training model vs published runs\n(squares: calibration rows; orange: BLOOM)", fontsize=9)
    ax.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(a.out, dpi=130)
    print(a.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
