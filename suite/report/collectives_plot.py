"""Measured vs predicted bus bandwidth of the collective validation set, one PNG per system
(``suite validate --collectives --plots DIR``; the figures of docs/validation.md)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["plot_systems"]


def plot_systems(rows: Iterable[Any], out_dir: str | Path) -> list[Path]:
    """Write ``collectives-<profile>.png`` for every profile of *rows* (priced
    :class:`suite.validate_collectives.CollectiveRow`): bus bandwidth against message size,
    measured as markers (hollow: calibration rows), predicted as a line, one colour per placement
    (nodes x GPUs and source figure). Returns the paths written."""
    from suite.report.plots import _plt

    plt = _plt()

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    by_profile: dict[str, list[Any]] = defaultdict(list)
    for r in rows:
        by_profile[r.profile].append(r)
    paths = []
    for prof, rs in sorted(by_profile.items()):
        fig, ax = plt.subplots(figsize=(7, 4.2))
        series: dict[tuple[Any, ...], list[Any]] = defaultdict(list)
        for r in rs:
            series[(r.nodes, r.gpus_per_node, r.figure)].append(r)
        for i, ((nodes, gpn, figure), pts) in enumerate(sorted(series.items())):
            pts.sort(key=lambda r: r.nbytes)
            colour = f"C{i % 10}"
            label = f"{nodes}x{gpn}" + (f" ({figure.split(':')[0][:40]})" if len(series) > 1 else "")
            xs = [r.nbytes for r in pts]
            ax.plot(xs, [r.predicted_busbw / 1e9 for r in pts], "-", color=colour, label=f"{label} model")
            for cal in (False, True):
                sel = [r for r in pts if r.calibration == cal]
                if sel:
                    ax.plot([r.nbytes for r in sel], [r.busbw / 1e9 for r in sel], "o", color=colour, ms=4,
                            mfc="none" if cal else colour,
                            label=f"{label} measured" + (" (calibration)" if cal else ""))
        ax.set_xscale("log", base=2)
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel("bus bandwidth (GB/s)")
        ax.set_title(f"all-reduce, {prof}: nccl-tests vs collective_time", fontsize=10)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=7, loc="upper left")
        fig.tight_layout()
        path = out / f"collectives-{prof}.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths
