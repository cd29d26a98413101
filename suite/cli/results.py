"""``suite results list`` and ``suite results show RUN``."""

from __future__ import annotations

import json
import math
from typing import Any
from pathlib import Path

import click

from suite.cli import main
from suite.cli.common import SuiteGroup, emit, format_option, strict_json

__all__ = ["results_group", "run_rows"]


@main.group("results", cls=SuiteGroup)
def results_group() -> None:
    """Read the results store: runs and their cases."""


def wide_table(rows: list[dict], columns: list[str], title: str | None = None) -> None:
    """A rich table that is not squeezed to 80 columns when the output is not a terminal
    (a pipe or a file): there the table may be as wide as its content (up to 240 characters)."""
    import sys

    from rich.console import Console
    from rich.table import Table

    from suite.cli.common import _cell

    tty = sys.stdout.isatty()
    t = Table(title=title)
    for c in columns:
        t.add_column(c)
    for r in rows:
        t.add_row(*[_cell(r.get(c)) for c in columns])
    Console(highlight=False, width=None if tty else 240).print(t)


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
        click.echo(strict_json([{k: _clean(v) for k, v in r.items()} for r in rows], indent=2, default=str))
        return
    for r in rows:  # the table keeps what fits a terminal; --format json has everything
        r["started"] = (r["started"] or "")[:16].replace("T", " ")
        cmd = r["command"] or ""
        r["command"] = cmd if len(cmd) <= 60 else cmd[:57] + "..."
    wide_table(rows, ["run", "started", "status", "cases", "computed", "cached", "failed", "command"],
               title=f"runs in {store_path or 'the store'}")


def _s(v) -> str:
    return "" if v is None or (isinstance(v, float) and v != v) else str(v)


def _fmt(v) -> str:
    try:
        return f"{float(v):.4g}"
    except (TypeError, ValueError):
        return str(v)


def compact_rows(store, run, limit_metrics: int = 4) -> list[dict]:
    """One short row per case of *run* for a terminal table: identity, params and overrides in one
    column, status (with the error), and the main metrics (directional first) with units."""
    cases = store.cases(run)
    m = store.metrics(run, wide=False)
    per: dict[str, list[str]] = {}
    if not m.empty:
        m = m.assign(_o=[0 if d in ("lower", "higher") else 1 for d in m["direction"]]).sort_values(["_o", "name"])
        for k, n, v, u in zip(m["key"], m["name"], m["value"], m["unit"]):
            per.setdefault(k, []).append(f"{n}={_fmt(v)}{'' if u in ('1', '', None) else ' ' + u}")
    rows = []
    records = cases.to_dict("records")
    # show the parameters that vary within the run (the swept ones), not every default
    seen: dict[str, set] = {}
    for r in records:
        for k, v in r["params"].items():
            seen.setdefault(k, set()).add(repr(v))
    varying = {k for k, vs in seen.items() if len(vs) > 1}
    records.sort(key=lambda r: (r["technique"], r["variant"], _s(r["profile"]), _s(r["workload"]),
                                [(k, repr(r["params"].get(k))) for k in sorted(varying)],
                                sorted((r["overrides"] or {}).items())))
    for r in records:
        params = ",".join(f"{k}={v}" for k, v in sorted(r["params"].items()) if k in varying)
        if r["overrides"]:
            params = ";".join(filter(None, [params, ",".join(f"{k}={v}" for k, v in r["overrides"].items())]))
        ms = per.get(r["key"], [])
        status = r["status"] + (f": {r['error']}" if r["status"] != "ok" and _s(r["error"]) else "")
        rows.append({"key": r["key"][:10], "technique": r["technique"], "variant": r["variant"],
                     "fidelity": r["fidelity"],
                     "profile": _s(r["profile"]) + ("*" if r["overrides"] else ""), "workload": _s(r["workload"]),
                     "params": params, "status": status,
                     "metrics": "  ".join(ms[:limit_metrics]) + ("  ..." if len(ms) > limit_metrics else "")})
    return rows


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
        rows = run_rows(store, info["id"]) if fmt != "table" else compact_rows(store, info["id"])
        stale, notes = _other_code(store, info["id"])
        extra = _extrapolated(store, info["id"])
    for r in rows:  # table rows show a key prefix, csv/json rows the whole key
        other = bool(stale) and any(k.startswith(r["key"]) for k in stale)
        why = next((v for k, v in extra.items() if k.startswith(r["key"])), {}) if extra else {}
        if fmt == "table":
            if other:
                r["status"] = f"{r['status']} (other code)"
            if why:
                r["status"] = f"{r['status']} (extrapolated: {', '.join(f'{k} {v}' for k, v in why.items())})"
        else:
            r["other_code"] = other
            r["extrapolated"] = why or None
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


def _extrapolated(store, run_id) -> dict[str, dict[str, str]]:
    """key -> {parameter: why} for the cases of *run_id* whose parameters lie outside the range
    their paper measured (``Param.measured`` of the installed technique)."""
    from suite.cli.common import get_context

    ctx = get_context()
    techs: dict[str, Any] = {}
    out = {}
    for r in store.cases(run_id).to_dict("records"):
        t = r["technique"]
        if t not in techs:
            try:
                techs[t] = ctx.technique(t)
            except Exception:  # noqa: BLE001 - not installed now
                techs[t] = None
        why = techs[t].extrapolated(r["params"] or {}) if techs[t] is not None else {}
        if why:
            out[r["key"]] = why
    return out


def _other_code(store, run_id) -> tuple[set[str], list[str]]:
    """Keys of *run_id*'s cases computed by other code than the installed technique's (its code
    fingerprint differs: the plugin changed since), and one note per such technique."""
    from suite.cli.common import get_context
    from suite.runner.case import code_fingerprint

    ctx = get_context()
    current: dict[str, str | None] = {}
    stale: set[str] = set()
    codes = store.codes(run_id)
    for key, (tech, code) in codes.items():
        if tech not in current:
            try:
                current[tech] = code_fingerprint(ctx.technique(tech))
            except Exception:  # noqa: BLE001 - not installed now: nothing to compare with
                current[tech] = None
        if current[tech] is not None and code is not None and code != current[tech]:
            stale.add(key)
    techs = sorted({codes[k][0] for k in stale})
    notes = [f"note: {sum(codes[k][0] == t for k in stale)} case(s) of {t} were computed by "
             f"other code than the installed {t} (marked 'other code'; `suite run --rerun` recomputes them)"
             for t in techs]
    for n in notes:
        click.echo(n, err=True)
    return stale, notes


def _show(info, rows, columns, fmt, plain: bool = False) -> None:
    if fmt == "json":
        click.echo(strict_json({"run": {k: _clean(v) for k, v in info.items()}, "cases": rows}, indent=2, default=str))
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
    wide_table(rows, columns, title=f"run {info['id']}: {len(rows)} case(s) (* = profile with overrides; "
                                    f"every metric: --format csv or json)")
