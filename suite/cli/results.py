"""``suite results list`` and ``suite results show RUN``."""

from __future__ import annotations

import json
import math
from pathlib import Path

import click

from suite.cli import main
from suite.cli.common import SuiteGroup, emit, format_option

__all__ = ["results_group", "run_rows"]


@main.group("results", cls=SuiteGroup)
def results_group() -> None:
    """Read the results store: runs and their cases."""


def _store_option(f):
    return click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path),
                        help="SQLite store (default: $SUITE_STORE or results/suite.sqlite).")(f)


def _open(store_path):
    from suite.results import Store
    from suite.results.store import default_store_path

    return Store(store_path or default_store_path(), readonly=True)


def _clean(v):
    if isinstance(v, float) and math.isnan(v):
        return None
    if hasattr(v, "item") and not isinstance(v, (list, dict, str)):
        try:
            return v.item()
        except (AttributeError, ValueError):
            return v
    return v


@results_group.command("list")
@_store_option
@format_option("table", "json")
def list_cmd(store_path, fmt) -> None:
    """Runs in the store, oldest first, with their counts."""
    with _open(store_path) as store:
        df = store.runs()
    rows = []
    for r in df.to_dict("records"):
        rows.append({"run": r["id"], "started": r["started"], "status": r["status"], "cases": r["total"],
                     "computed": r["computed"], "cached": r["cached"], "ok": r["ok"], "failed": r["failed"],
                     "skipped": r["skipped"], "git": (r["git_commit"] or "")[:12], "command": r["command"]})
    if fmt == "json":
        click.echo(json.dumps([{k: _clean(v) for k, v in r.items()} for r in rows], indent=2, default=str))
        return
    emit(rows, fmt, ["run", "started", "status", "cases", "computed", "cached", "ok", "failed", "skipped", "git",
                     "command"], title=f"runs in {store_path or 'the store'}")


def run_rows(store, run) -> list[dict]:
    """One dict per case of *run*: identity, status, params as ``param.NAME``, and every metric value."""
    cases = store.cases(run)
    metrics = store.metrics(run, wide=False)
    by_key: dict[str, dict] = {}
    for r in metrics.to_dict("records"):
        by_key.setdefault(r["key"], {})[r["name"]] = r["value"]
    rows = []
    for r in cases.to_dict("records"):
        row = {"key": r["key"], "technique": r["technique"], "variant": r["variant"], "fidelity": r["fidelity"],
               "profile": r["profile"], "workload": r["workload"], "seed": r["seed"], "status": r["status"],
               "outcome": r.get("outcome"), "error": r["error"], "duration": r["duration"]}
        row["overrides"] = r["overrides"] or None
        row.update({k: v for k, v in r.items() if k.startswith("param.")})
        row.update(by_key.get(r["key"], {}))
        rows.append({k: _clean(v) for k, v in row.items()})
    return rows


@results_group.command("show")
@click.argument("run", default="latest")
@_store_option
@format_option("table", "csv", "json")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write to this file.")
def show_cmd(run, store_path, fmt, output) -> None:
    """The cases of RUN (an id or `latest`): status, parameters and metrics; with provenance."""
    with _open(store_path) as store:
        info = store.run_info(run)
        rows = run_rows(store, info["id"])
    columns: list[str] = []
    for r in rows:
        for k in r:
            if k not in columns:
                columns.append(k)
    if output is not None:
        import contextlib
        import io

        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            _show(info, rows, columns, fmt, plain=True)
        output.write_text(buf.getvalue(), encoding="utf-8")
        click.echo(f"wrote {len(rows)} case(s) of run {info['id']} to {output}", err=True)
        return
    _show(info, rows, columns, fmt)


def _show(info, rows, columns, fmt, plain: bool = False) -> None:
    if fmt == "json":
        click.echo(json.dumps({"run": {k: _clean(v) for k, v in info.items()}, "cases": rows}, indent=2, default=str))
        return
    if fmt == "csv":
        emit([{k: (json.dumps(v) if isinstance(v, dict) else v) for k, v in r.items()} for r in rows], "csv", columns)
        return
    click.echo(f"run {info['id']}: {info['status']}, started {info['started']}, finished {info['finished'] or '-'}")
    click.echo(f"  command: {info['command']}")
    click.echo(f"  host {info['host']}, {info['platform']}, python {info['python']}, git {info['git_commit'] or '-'}")
    plugins = ", ".join(f"{k} {v}" for k, v in sorted(info["plugins"].items())) or "-"
    click.echo(f"  plugins: {plugins}")
    click.echo(f"  cases {info['total']}: computed {info['computed']}, cached {info['cached']}, ok {info['ok']}, "
               f"failed {info['failed']}, skipped {info['skipped']}")
    shown = [c for c in columns if c not in ("key", "outcome", "duration", "overrides") or c == "key"]
    emit(rows, "table", shown, title=None)
