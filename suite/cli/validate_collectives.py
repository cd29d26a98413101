"""``suite validate --collectives``: the collective model against published measurements."""

from __future__ import annotations

from typing import Any

import click

from suite.cli.common import console, emit, strict_json


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}"


def run_collectives(fmt: str, plot_dir: str | None) -> None:
    """Price, print (table / json / markdown) and optionally plot the validation set."""
    from suite.validate_collectives import TARGETS, load_rows, price_rows, summarize

    from suite.cli.common import get_context

    rows = price_rows(load_rows(), get_profile=get_context().profile)
    summary = summarize(rows)
    if fmt == "json":
        click.echo(strict_json({"rows": [_row_dict(r) for r in rows], "summary": summary}, indent=2, default=str))
    else:
        table = [{"system": r.profile, "nodes x GPUs": f"{r.nodes}x{r.gpus_per_node}", "bytes": r.nbytes,
                  "measured us": f"{r.measured * 1e6:.1f}", "predicted us": f"{r.predicted * 1e6:.1f}",
                  "error %": f"{100 * r.error:+.1f}", "algorithm": r.algorithm,
                  "cal": "yes" if r.calibration else ""} for r in rows]
        cols = ["system", "nodes x GPUs", "bytes", "measured us", "predicted us", "error %", "algorithm", "cal"]
        summ = [{"group": s["group"], "size": s["size"], "rows": s["rows"], "calibration rows": s["calibration rows"],
                 "geomean |error| %": _pct(s["geomean |error|"]), "max |error| %": _pct(s["max |error|"]),
                 "bound %": _pct(s["bound"])} for s in summary]
        scols = ["group", "size", "rows", "calibration rows", "geomean |error| %", "max |error| %", "bound %"]
        if fmt == "markdown":
            click.echo(_markdown(summ, scols))
            click.echo()
            click.echo(_markdown(table, cols))
        else:
            emit(table, "table", cols, title="collectives: nccl-tests (measured) vs collective_time (predicted)")
            emit(summ, "table", scols, title="geomean |time error| per group (calibration rows not counted)")
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
    if plot_dir:
        from suite.report.collectives_plot import plot_systems

        for path in plot_systems(rows, plot_dir):
            click.echo(f"wrote {path}", err=True)


def _row_dict(r: Any) -> dict[str, Any]:
    return {"source": r.source, "system": r.system, "profile": r.profile, "url": r.url, "figure": r.figure,
            "nodes": r.nodes, "gpus_per_node": r.gpus_per_node, "op": r.op, "bytes": r.nbytes,
            "measured_s": r.measured, "predicted_s": r.predicted, "error": r.error, "algorithm": r.algorithm,
            "calibration": r.calibration, "calibrates": r.calibrates}


def _markdown(rows: list[dict[str, Any]], cols: list[str]) -> str:
    out = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    out += ["| " + " | ".join(str(r[c]) for c in cols) + " |" for r in rows]
    return "\n".join(out)
