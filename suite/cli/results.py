"""``suite results list`` and ``suite results show RUN``."""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from suite.cli import main
from suite.cli.common import SuiteGroup, format_option, strict_json
from suite.results.codec import is_missing
from suite.results.runs import case_count

if TYPE_CHECKING:
    from suite.results.store import Store

__all__ = ["results_group", "run_rows"]

_F = TypeVar("_F", bound=Callable[..., Any])


@main.group("results", cls=SuiteGroup)
def results_group() -> None:
    """Read the results store: runs and their cases."""


def wide_table(rows: list[dict[str, Any]], columns: list[str], title: str | None = None) -> None:
    """A rich table that is not squeezed to 80 columns when the output is not a terminal
    (a pipe or a file): there the table may be as wide as its content (up to 240 characters)."""
    import sys

    from rich.table import Table

    from suite.cli.common import _cell, console

    tty = sys.stdout.isatty()
    t = Table(title=title)
    for c in columns:
        t.add_column(c)
    for r in rows:
        t.add_row(*[_cell(r.get(c)) for c in columns])
    console(width=None if tty else 240).print(t)


def _store_option(f: _F) -> _F:
    out: _F = click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path),
                           help="SQLite store (default: $SUITE_STORE or results/suite.sqlite).")(f)
    return out


def _open(store_path: Path | None) -> Store:
    from suite.results import Store
    from suite.results.store import default_store_path

    return Store(store_path or default_store_path(), readonly=True)


def _clean(v: Any) -> Any:
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
def list_cmd(store_path: Path | None, fmt: str) -> None:
    """Runs in the store, oldest first, with their counts."""
    with _open(store_path) as store:
        df = store.runs()
        names = store.run_names()
    rows: list[dict[str, Any]] = []
    for run in df.to_dict("records"):
        rows.append({"run": run["id"], "name": names.get(int(run["id"])), "started": run["started"],
                     "status": run["status"], "cases": run["total"], "planned": run["planned"], "computed": run["computed"],
                     "cached": run["cached"], "ok": run["ok"], "failed": run["failed"], "skipped": run["skipped"],
                     "git": (run["git_commit"] or "")[:12], "command": run["command"]})
    if fmt == "json":
        click.echo(strict_json([{k: _clean(v) for k, v in r.items()} for r in rows], indent=2, default=str))
        return
    for r in rows:  # the table keeps what fits a terminal; --format json has everything
        r["started"] = (r["started"] or "")[:16].replace("T", " ")
        cmd = r["command"] or ""
        r["command"] = cmd if len(cmd) <= 60 else cmd[:57] + "..."
        r["cases"] = case_count({"total": r["cases"], "planned": r.pop("planned")})
    wide_table(rows, ["run", "name", "started", "status", "cases", "computed", "cached", "failed", "command"],
               title=f"runs in {store_path or 'the store'}")


def _s(v: Any) -> str:
    return "" if is_missing(v) else str(v)


from suite.report.units import sort_key  # noqa: E402 - numbers sort numerically in every table


def _declared(registry: Any, techniques: Iterable[str]) -> tuple[dict[str, tuple[str, ...]], set[tuple[str, str]]]:
    """Each technique's headline metrics, and its (technique, parameter) pairs declared with a
    role (``scale``, ``efficiency``): shown in every row of a run of several techniques, since they
    say what a case's numbers are for (a category run's one case per technique varies nothing)."""
    heads: dict[str, tuple[str, ...]] = {}
    roles: set[tuple[str, str]] = set()
    for t in techniques:
        try:
            tech = registry.technique(t) if registry is not None else None
        except Exception:  # noqa: BLE001 - not installed now: no declared headline
            tech = None
        heads[t] = tuple(tech.headline) if tech is not None else ()
        if tech is not None:
            roles.update((t, k) for k, p in tech.parameters.items() if getattr(p, "role", None))
    return heads, roles


def ordered_metrics(names: Iterable[str], headline: Iterable[str], directions: Mapping[str, str | None]) -> list[str]:
    """*names* with the *headline* metrics first (in their declared order), then the metrics
    with a direction, then the rest, each group by name."""
    names = list(names)
    first = [m for m in headline if m in names]
    rest = sorted((m for m in names if m not in first), key=lambda m: (directions.get(m) not in ("lower", "higher"), m))
    return first + rest


def resolved_params(params: Mapping[str, Any], metrics: Mapping[str, tuple[float, str, str]]) -> list[str]:
    """``NAME=VALUE (default)`` for each parameter of a case left unset (None) whose value the model
    resolved and reported as the metric ``NAME_used`` (every device of the profile: ``workers=32
    (default)``), so a default run's table says the scale it ran at; by name."""
    out = []
    for k, v in sorted(params.items()):
        m = metrics.get(f"{k}_used")
        if v is None and m is not None:
            out.append(f"{k}={m[0]:g} (default)")
    return out


def compact_rows(store: Store, run: int | str | None, limit_metrics: int = 4, *, all_metrics: bool = False,
                 registry: Any = None) -> list[dict[str, Any]]:
    """One short row per case of *run* for a terminal table: identity, the swept parameters and
    overrides in one column (``nodes=4;set.nodes=8``: an override named ``set.PATH`` as in the csv
    and json, never mistaken for a parameter), status (with the error), and the metrics: each technique's headline
    metrics first (:attr:`Technique.headline`; without one, the first *limit_metrics* metrics with
    a direction), every metric with *all_metrics*; values scaled for people (ms, MiB:
    :mod:`suite.report.units`). Rows are sorted by technique, variant, profile, workload and the
    swept values, numbers numerically."""
    from suite.report.units import format_value

    if registry is None:
        from suite.cli.common import get_context

        registry = get_context().registry
    records = store.case_records(run, with_metrics=True)  # no pandas: 0.3-0.5 s of a small `suite run`
    heads, roles = _declared(registry, {r["technique"] for r in records})
    tech_of = {r["key"]: r["technique"] for r in records}
    per: dict[str, dict[str, tuple[float, str, str]]] = {}
    for r in records:
        for n, v, u, d in r["metrics"]:
            per.setdefault(r["key"], {})[n] = (v, u, d)
    # show each technique's parameters that vary among its cases (the swept ones) and, in a run of
    # several techniques (a category run), those it declares a role for (its scale), not every default
    seen: dict[tuple[str, str], set[str]] = {}
    for r in records:
        for k, v in r["params"].items():
            seen.setdefault((r["technique"], k), set()).add(repr(v))
    shown_params = {tk for tk, vs in seen.items() if len(vs) > 1} | (roles & set(seen) if len(heads) > 1 else set())
    varying = {k for _t, k in shown_params}
    records.sort(key=lambda r: (r["technique"], r["variant"], _s(r["profile"]), _s(r["workload"]),
                                [(k, sort_key(r["params"].get(k))) for k in sorted(varying)],
                                [(k, sort_key(v)) for k, v in sorted((r["overrides"] or {}).items())]))
    rows = []
    for r in records:
        got = per.get(r["key"], {})
        params = ",".join([f"{k}={v}" for k, v in sorted(r["params"].items()) if (r["technique"], k) in shown_params]
                          + resolved_params(r["params"], got))
        if r["overrides"]:
            params = ";".join(filter(None, [params, ",".join(f"set.{k}={v}" for k, v in r["overrides"].items())]))
        head = heads.get(tech_of[r["key"]], ())
        order = ordered_metrics(got, head, {n: d for n, (_v, _u, d) in got.items()})
        shown = order if all_metrics else ([x for x in order if x in head] if any(x in got for x in head)
                                           else order[:limit_metrics])
        ms = [f"{n}={format_value(got[n][0], got[n][1])}" for n in shown]
        hidden = len(order) - len(shown)
        status = r["status"] + (f": {r['error']}" if r["status"] != "ok" and _s(r["error"]) else "")
        rows.append({"key": r["key"][:10], "technique": r["technique"], "variant": r["variant"],
                     "fidelity": r["fidelity"],
                     "profile": _s(r["profile"]) + ("*" if r["overrides"] else ""), "workload": _s(r["workload"]),
                     "params": params, "status": status,
                     "metrics": "  ".join(ms) + (f"  (+{hidden} more)" if hidden else "")})
    return rows


def run_rows(store: Store, run: int | str | None) -> list[dict[str, Any]]:
    """One dict per case of *run*: identity, status, params as ``param.NAME``, and every metric
    value in the unit the technique reported (:func:`run_units` gives them), sorted by
    technique, variant, profile, workload and parameter values (numbers numerically)."""
    cases = store.cases(run)
    metrics = store.metrics(run, wide=False)
    by_key: dict[str, dict[str, Any]] = {}
    for r in metrics.to_dict("records"):
        by_key.setdefault(r["key"], {})[r["name"]] = r["value"]
    rows = []
    for r in cases.to_dict("records"):
        row = {"key": r["key"], "technique": r["technique"], "variant": r["variant"], "fidelity": r["fidelity"],
               "profile": r["profile"], "workload": r["workload"], "seed": r["seed"], "status": r["status"],
               "outcome": r.get("outcome"), "error": r["error"], "duration": r["duration"]}
        row["overrides"] = r["overrides"] or None
        row.update({f"param.{k}": v for k, v in (r["params"] or {}).items()})  # as given, not pandas-widened
        row.update(by_key.get(r["key"], {}))
        rows.append({k: _clean(v) for k, v in row.items()})
    _numeric_overrides(rows)
    pcols = sorted({k for r in rows for k in r if k.startswith("param.")})
    rows.sort(key=lambda r: (r["technique"], r["variant"], _s(r["profile"]), _s(r["workload"]),
                             [sort_key(r.get(c)) for c in pcols],
                             [(k, sort_key(v)) for k, v in sorted((r["overrides"] or {}).items())], r["seed"] or 0))
    return rows


def _numeric_overrides(rows: list[dict[str, Any]]) -> None:
    """Add to each row one ``set.PATH`` cell per profile field the run overrides: a number in the
    unit of the field's first value, values in other units of its dimension converted
    (``set.network.-1.bandwidth`` = 0.5 for ``"4 Gbit/s"`` beside ``"1 GB/s"``: :func:`swept_units`
    names the unit), or, for a field whose values are no numbers of one dimension
    (``communication.library``), the value as given (text; ``overrides`` keeps every value as given)."""
    from suite.results.load import numeric_overrides

    paths = sorted({p for r in rows for p in (r.get("overrides") or {})})
    for p in paths:
        given = [(r.get("overrides") or {}).get(p) for r in rows]
        got = numeric_overrides(given)
        for r, v in zip(rows, got[0] if got is not None else given):
            r.setdefault(f"set.{p}", v)  # a metric of that name keeps its column (deprecated name)


def swept_units(store: Store, run: int | str | None) -> dict[str, str]:
    """``set.PATH`` -> unit of every profile field *run* overrides with numbers of one dimension
    (the unit of its first value, :func:`_numeric_overrides`'s), and
    ``param.NAME`` -> unit of every parameter the installed technique declares with a unit."""
    from suite.results.load import numeric_overrides

    cases = store.cases(run).to_dict("records")
    out: dict[str, str] = {}
    for p in sorted({p for r in cases for p in (r["overrides"] or {})}):
        got = numeric_overrides([(r["overrides"] or {}).get(p) for r in cases])
        if got is not None and got[1]:
            out[f"set.{p}"] = got[1]
    try:
        from suite.cli.common import get_context

        ctx = get_context()
        for t in sorted({r["technique"] for r in cases}):
            for k, prm in ctx.technique(t).parameters.items():
                if prm.unit and prm.type in (int, float):
                    out.setdefault(f"param.{k}", prm.unit)
    except Exception:  # noqa: BLE001 - a technique no longer installed: its parameters without units
        pass
    return out


def run_units(store: Store, run: int | str | None) -> tuple[dict[str, str], dict[str, str]]:
    """metric name -> unit, and metric name -> direction, of *run*'s metrics (one unit per
    name: a name two techniques report in different units is listed as ``"MIXED: u1, u2"``
    so a consumer never silently adds them)."""
    metrics = store.metrics(run, wide=False)
    units: dict[str, set[str]] = {}
    dirs: dict[str, str] = {}
    for n, u, d in zip(metrics["name"], metrics["unit"], metrics["direction"]) if not metrics.empty else ():
        units.setdefault(n, set()).add(u)
        dirs.setdefault(n, d)
    return ({n: (next(iter(us)) if len(us) == 1 else "MIXED: " + ", ".join(sorted(map(str, us))))
             for n, us in sorted(units.items())}, dict(sorted(dirs.items())))


def long_rows(store: Store, run: int | str | None) -> list[dict[str, Any]]:
    """Long form: one row per case and metric, ``name, value, unit, direction`` beside the case's
    identity (``key, technique, variant, fidelity, profile, workload, seed, params`` as JSON,
    ``overrides``)."""
    cases = {r["key"]: r for r in store.cases(run).to_dict("records")}
    out = []
    for r in store.metrics(run, wide=False).to_dict("records"):
        c = cases.get(r["key"])
        if c is None:
            continue
        out.append({"key": c["key"], "technique": c["technique"], "variant": c["variant"], "fidelity": c["fidelity"],
                    "profile": c["profile"], "workload": c["workload"], "seed": c["seed"],
                    "params": c["params"], "overrides": c["overrides"] or None,
                    "name": r["name"], "value": _clean(r["value"]), "unit": r["unit"], "direction": r["direction"]})
    out.sort(key=lambda x: (x["technique"], x["variant"], _s(x["profile"]), _s(x["workload"]),
                            [(k, sort_key(v)) for k, v in sorted((x["params"] or {}).items())],
                            [(k, sort_key(v)) for k, v in sorted((x["overrides"] or {}).items())], x["name"]))
    return out


def csv_header(column: str, units: dict[str, str]) -> str:
    """The CSV header of a wide-form column: a metric as ``NAME [UNIT]`` (``iteration_time [s]``;
    dimensionless ``1`` stays bare), every other column as it is."""
    u = units.get(column)
    return column if u in (None, "", "1") else f"{column} [{u}]"


@results_group.command("show")
@click.argument("run", default="latest")
@_store_option
@format_option("table", "csv", "json")
@click.option("-o", "--output", type=click.Path(dir_okay=False, path_type=Path), help="Write to this file.")
@click.option("--all-metrics", is_flag=True, help="Table: every metric, not only each technique's headline metrics.")
@click.option("--long", "long_form", is_flag=True,
              help="csv/json: one row per case and metric with name, value, unit, direction (long form).")
def show_cmd(run: str, store_path: Path | None, fmt: str, output: Path | None, all_metrics: bool,
             long_form: bool) -> None:
    """The cases of RUN (an id, a name given with `suite run --name`, `latest` or `latest~N`):
    status, parameters and metrics; with provenance.

    \b
    Units: the table scales values for reading (ms, MiB); csv and json keep each metric in the
    unit its technique reported (bytes in B, times in s) and say which; every profile field set
    with --set is a column set.PATH: a number in the unit of its first value (1 GB/s,4 Gbit/s
    -> 1, 0.5 GB/s), or the text as given (nccl, mpi); parameters declared with a unit say it:
      json: a top-level "units" object (metric or column -> unit) beside "cases"
      csv:  columns headed NAME [UNIT], e.g. "iteration_time [s]", "set.network.-1.bandwidth [Gbit/s]",
            "duration [s]"
      --long: one row per metric with its "unit" column
    """
    with _open(store_path) as store:
        info = store.run_info(run)
        info["name"] = store.run_names().get(info["id"])
        units, directions = run_units(store, info["id"])
        if fmt != "table":  # swept fields beside the metrics: "set.network.-1.bandwidth [Gbit/s]"
            units = {"duration": "s", **swept_units(store, info["id"]), **units}
        if fmt != "table" and long_form:
            rows = long_rows(store, info["id"])
        else:
            rows = run_rows(store, info["id"]) if fmt != "table" else compact_rows(store, info["id"],
                                                                                   all_metrics=all_metrics)
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
            r.setdefault("other_code", other)  # a metric of that name keeps its column (deprecated name)
            r.setdefault("extrapolated", why or None)
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
            _show(info, rows, columns, fmt, plain=True, units=units, directions=directions, long_form=long_form)
        output.write_text(buf.getvalue(), encoding="utf-8")
        click.echo(f"wrote {len(rows)} {'metric row' if long_form else 'case'}(s) of run {info['id']} to {output}",
                   err=True)
        return
    _show(info, rows, columns, fmt, units=units, directions=directions, long_form=long_form)


def _extrapolated(store: Store, run_id: int) -> dict[str, dict[str, str]]:
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


def _other_code(store: Store, run_id: int) -> tuple[set[str], list[str]]:
    """Keys of *run_id*'s cases computed by other code than the installed technique's (its code
    fingerprint differs: the plugin changed since), and one note per such technique."""
    from suite.cli.common import get_context
    from suite.runner.fingerprint import code_fingerprint

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


def _show(info: dict[str, Any], rows: list[dict[str, Any]], columns: list[str], fmt: str, plain: bool = False,
          units: dict[str, str] | None = None, directions: dict[str, str] | None = None, long_form: bool = False) -> None:
    units = units or {}
    if fmt == "json":
        doc: dict[str, Any] = {"run": {k: _clean(v) for k, v in info.items()}}
        if not long_form:
            doc["units"] = units
            doc["directions"] = directions or {}
        doc["cases" if not long_form else "metrics"] = rows
        click.echo(strict_json(doc, indent=2, default=str))
        return
    if fmt == "csv":
        import csv
        import sys

        from suite.textsafe import csv_cell

        def cell(v: Any) -> Any:
            return csv_cell(json.dumps(v) if isinstance(v, dict) else v)

        w = csv.writer(sys.stdout)
        w.writerow([csv_cell(c if long_form else csv_header(c, units)) for c in columns])
        for r in rows:
            w.writerow([cell(r.get(c)) for c in columns])
        return
    name = f" ({info['name']})" if info.get("name") else ""
    click.echo(f"run {info['id']}{name}: {info['status']}, started {info['started']}, "
               f"finished {info['finished'] or '-'}")
    click.echo(f"  command: {info['command']}")
    click.echo(f"  host {info['host']}, {info['platform']}, python {info['python']}, git {info['git_commit'] or '-'}")
    plugins = ", ".join(f"{k} {v}" for k, v in sorted(info["plugins"].items())) or "-"
    click.echo(f"  plugins: {plugins}")
    click.echo(f"  cases {case_count(info)}: computed {info['computed']}, cached {info['cached']}, ok {info['ok']}, "
               f"failed {info['failed']}, skipped {info['skipped']}")
    wide_table(rows, columns, title=f"run {info['id']}: {len(rows)} case(s) (* = profile with overrides; headline "
                                    f"metrics, values scaled for reading; every metric: --all-metrics, in stored "
                                    f"units: --format csv or json)")
