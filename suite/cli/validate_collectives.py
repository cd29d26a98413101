"""``suite validate --collectives``: the collective model against published measurements."""

from __future__ import annotations

from typing import Any

import click

from suite.cli.common import console, emit, markdown_table, strict_json


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


#: the error columns of both summaries: (summary key, column title)
#: (no "|" in a title: it would split a Markdown table's header cell)
_STATS = (("geomean |error|", "geomean %"), ("median |error|", "median %"), ("mean |error|", "mean %"),
          ("max |error|", "max %"))
_SAME = "same setup as calibration of"


def _summary_table(summary: list[dict[str, Any]], keys: list[str], bound: bool) -> tuple[list[dict[str, Any]], list[str]]:
    """Rows and columns of a summary for print: *keys* as they are, the error figures in %."""
    cols = keys + [t for _k, t in _STATS] + (["bound %"] if bound else []) + [_SAME]
    out = [{**{k: s[k] for k in keys}, **{t: _pct(s[k]) for k, t in _STATS},
            **({"bound %": _pct(s["bound"])} if bound else {}),
            _SAME: ", ".join(s[_SAME]) or "-"} for s in summary]
    return out, cols


def run_collectives(fmt: str, plot_dir: str | None) -> None:
    """Price, print (table / json / markdown) and optionally plot the validation set."""
    from suite.validate_collectives import load_rows, price_rows, summarize, summarize_sources

    from suite.cli.common import get_context

    rows = price_rows(load_rows(), get_profile=get_context().profile)
    summary, sources = summarize(rows), summarize_sources(rows)
    if fmt == "json":
        click.echo(strict_json({"rows": [_row_dict(r) for r in rows], "summary": summary, "sources": sources},
                               indent=2, default=str))
    else:
        table = [{"system": r.profile, "nodes x GPUs": f"{r.nodes}x{r.gpus_per_node}", "bytes": r.nbytes,
                  "measured us": f"{r.measured * 1e6:.1f}", "predicted us": f"{r.predicted * 1e6:.1f}",
                  "error %": f"{100 * r.error:+.1f}", "algorithm": r.algorithm,
                  "cal": "yes" if r.calibration else ""} for r in rows]
        cols = ["system", "nodes x GPUs", "bytes", "measured us", "predicted us", "error %", "algorithm", "cal"]
        summ, scols = _summary_table(summary, ["group", "size", "rows", "calibration rows"], bound=True)
        src, srcols = _summary_table(sources, ["system", "nodes x GPUs", "source figure", "size", "rows"], bound=False)
        if fmt == "markdown":
            click.echo("\n\n".join(markdown_table(t, c) for t, c in ((summ, scols), (src, srcols), (table, cols))))
        else:
            emit(table, "table", cols, title="collectives: nccl-tests (measured) vs collective_time (predicted)")
            emit(src, "table", srcols, title="|time error| per source table (calibration rows not counted)")
            emit(summ, "table", scols, title="|time error| per group (calibration rows not counted)")
            _print_verdict(summary)
    if plot_dir:
        from suite.report.collectives_plot import plot_systems

        for path in plot_systems(rows, plot_dir):
            click.echo(f"wrote {path}", err=True)


def _print_verdict(summary: list[dict[str, Any]]) -> None:
    """Which groups are over their bound, and which over the target within a documented bound."""
    from suite.validate_collectives import TARGETS

    c = console()
    over = [s for s in summary if s["bound"] is not None and s["geomean |error|"] is not None
            and s["geomean |error|"] > s["bound"]]
    c.print("every group within its bound" if not over else
            "over the bound: " + ", ".join(f"{s['group']} {s['size']}" for s in over))
    missed = [s for s in summary if s not in over and s["geomean |error|"] is not None
              and s["geomean |error|"] > TARGETS[s["size"]]]
    if missed:
        target = ", ".join(f"{_pct(t)} % {size}" for size, t in TARGETS.items())
        c.print(f"over the target ({target}), within a documented bound: " + ", ".join(
            f"{s['group']} {s['size']} ({_pct(s['geomean |error|'])} %)" for s in missed)
                + " (docs/validation.md, Where the model misses)")


def _row_dict(r: Any) -> dict[str, Any]:
    return {"source": r.source, "system": r.system, "profile": r.profile, "url": r.url, "figure": r.figure,
            "nodes": r.nodes, "gpus_per_node": r.gpus_per_node, "op": r.op, "bytes": r.nbytes,
            "measured_s": r.measured, "predicted_s": r.predicted, "error": r.error, "algorithm": r.algorithm,
            "calibration": r.calibration, "calibrates": r.calibrates}
