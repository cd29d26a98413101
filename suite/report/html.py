"""One self-contained HTML report of a run: provenance, a table and plots per technique, and the
reproduction scoreboard. Images are embedded (base64 PNG); there is no script and no external
resource. Every string that comes from a plugin, a profile, a workload or the command line is
escaped with :func:`html.escape`.
"""

from __future__ import annotations

import html
import json
import math
from datetime import datetime, timezone
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from suite.report.axes import short as _short
from suite.report.profile_values import fill_profile_values
from suite.results.runs import case_count

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["build_report", "write_report", "MAX_ROWS", "fill_profile_values"]

#: Most case rows shown per technique table (the rest: `suite results export`).
MAX_ROWS = 200

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2em auto;max-width:1180px;color:#222;
padding:0 1em;line-height:1.4}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:2px solid #ddd;padding-bottom:.2em;margin-top:2em}
h3{margin-top:1.4em}
table{border-collapse:collapse;margin:.6em 0;font-size:.85em}
th,td{border:1px solid #ccc;padding:.25em .5em;text-align:left;vertical-align:top}
th{background:#f3f3f3}td.num{text-align:right;font-variant-numeric:tabular-nums}
table.kv th{width:11em}
figure{margin:1em 1em 1em 0;display:inline-table;vertical-align:top}figure img{max-width:100%;border:1px solid #eee}
figcaption{display:table-caption;caption-side:bottom;font-size:.8em;color:#555;padding-top:.3em}
.reproduced{background:#e6f4e6}.not-reproduced{background:#fbeaea}.error{background:#fff4d6}
.not-discriminating{background:#eef0f7}.inconclusive{background:#f4f0e6}
.scroll{overflow-x:auto;max-width:100%}table.cases{white-space:nowrap}.muted{color:#777;font-size:.85em}nav ul{columns:2}code{background:#f6f6f6;padding:0 .2em}
"""


def e(v: Any) -> str:
    """Escaped text for HTML (None -> empty)."""
    return "" if v is None else html.escape(str(v), quote=True)


def _fmt(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return ""
        if v.is_integer() and abs(v) < 1e15 and abs(v) >= 1e4:
            return str(int(v))  # counts and sizes (a float only because another technique left it empty)
        return f"{v:.4g}"
    if isinstance(v, dict):
        return ", ".join(f"{k}={x}" for k, x in v.items())
    return str(v)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _column_format(values: list[Any], unit: str) -> tuple[Any, str]:
    """One number format for a whole column: (a formatter, the display unit). Values are
    divided by one factor (ms, MiB: :func:`suite.report.units.column_scale`) and shown with the
    same number of decimals, enough for 4 significant digits of the column's median magnitude;
    integers stay integers."""
    from suite.report.units import column_scale

    nums = [float(v) for v in values if _is_num(v) and math.isfinite(float(v))]
    factor, shown = column_scale(nums, unit)
    scaled = sorted(abs(v / factor) for v in nums if v)
    if nums and all(float(v).is_integer() for v in nums) and factor == 1.0:
        return (lambda v: "" if not _is_num(v) else f"{int(v):d}" if math.isfinite(v) else str(v)), shown
    med = scaled[len(scaled) // 2] if scaled else 1.0
    decimals = max(0, min(9, 3 - int(math.floor(math.log10(med))))) if med else 0

    def fmt(v: Any) -> str:
        if not _is_num(v) or (isinstance(v, float) and math.isnan(v)):
            return _fmt(v)
        x = float(v) / factor
        return f"{x:.{decimals}f}" if abs(x) < 1e9 else f"{x:.3e}"

    return fmt, shown


def _cases_table(header: list[str], rows: list[list[Any]], units: list[str | None]) -> str:
    """The cases table: one number format per column and its display unit in the header."""
    fmts, heads = [], []
    for i, (h, u) in enumerate(zip(header, units)):
        col = [r[i] for r in rows]
        if any(_is_num(v) for v in col):
            f, shown = _column_format(col, u or "")
            fmts.append(f)
            heads.append(f"{h} ({shown})" if shown not in (None, "", "1") else h)
        else:
            fmts.append(None)
            heads.append(h)
    out = ['<div class="scroll"><table class="cases"><thead><tr>' + "".join(f"<th>{e(c)}</th>" for c in heads)
           + "</tr></thead><tbody>"]
    for r in rows:
        out.append("<tr>" + "".join(f'<td class="num">{e(f(v))}</td>' if f is not None and _is_num(v)
                                    else f"<td>{e(_fmt(v))}</td>" for v, f in zip(r, fmts)) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _table(columns: list[str], rows: list[list[Any]], cls: str = "", row_classes: list[str] | None = None) -> str:
    out = [f'<div class="scroll"><table class="{e(cls)}"><thead><tr>' + "".join(f"<th>{e(c)}</th>" for c in columns) + "</tr></thead><tbody>"]
    for i, r in enumerate(rows):
        rc = f' class="{e(row_classes[i])}"' if row_classes else ""
        out.append(f"<tr{rc}>" + "".join(
            f'<td class="num">{e(_fmt(v))}</td>' if _is_num(v) else f"<td>{e(_fmt(v))}</td>" for v in r) + "</tr>")
    out.append("</tbody></table></div>")
    return "".join(out)


def _slug(s: str) -> str:
    return "".join(ch if ch.isalnum() or ch in "-_" else "-" for ch in str(s))


def _provenance(info: dict[str, Any], store_path: str) -> str:
    rows = [("run", info["id"]), ("status", info["status"]), ("started", info["started"]),
            ("finished", info.get("finished") or "-"), ("command", info.get("command")),
            ("cases", f"{case_count(info)}: computed {info['computed']}, cached {info['cached']}, ok {info['ok']}, "
                      f"failed {info['failed']}, skipped {info['skipped']}"),
            ("host", info.get("host")), ("platform", info.get("platform")), ("python", info.get("python")),
            ("git commit", info.get("git_commit") or "-"),
            ("packages", ", ".join(f"{k} {v}" for k, v in sorted((info.get("packages") or {}).items())) or "-"),
            ("plugins", ", ".join(f"{k} {v}" for k, v in sorted((info.get("plugins") or {}).items())) or "-"),
            ("store", store_path)]
    body = "".join(f"<tr><th>{e(k)}</th><td>{'<code>' + e(v) + '</code>' if k == 'command' else e(v)}</td></tr>"
                   for k, v in rows)
    return f'<section id="provenance"><h2>Run provenance</h2><table class="kv">{body}</table></section>'


def _varying(df: pd.DataFrame, cols: list[str]) -> list[str]:
    out = []
    for c in cols:
        if c not in df.columns:
            continue
        vals = {json.dumps(v, sort_keys=True, default=str) for v in df[c]}
        if len(vals) > 1:
            out.append(c)
    return out


def _technique_section(name: str, wide: pd.DataFrame, units: dict[str, str], directions: dict[str, str],
                       failed: pd.DataFrame, tech: Any) -> str:
    """One technique's section: what it is, its plots, its cases table, the cases not ok."""
    parts = [f'<section id="technique-{e(_slug(name))}" class="technique"><h2>Technique: {e(name)}</h2>',
             _technique_meta(wide, failed, tech)]
    baseline = tech.baselines[0].name if tech is not None and tech.baselines else None
    if len(wide):
        metric_names = [m for m in units if m in wide.columns]
        parts += _plots(wide, name, tech, baseline, {m: directions[m] for m in metric_names},
                        {m: units[m] for m in metric_names})
        parts += _cases_part(wide, metric_names, units, directions, tech)
    if len(failed):
        parts.append("<h3>Cases not ok</h3>")
        parts.append(_table(["variant", "status", "params", "error"],
                            [[r["variant"], r["status"], r["params"], r["error"]] for r in failed.to_dict("records")],
                            "failed"))
    parts.append("</section>")
    return "".join(parts)


def _technique_meta(wide: pd.DataFrame, failed: pd.DataFrame, tech: Any) -> str:
    """The section's first line: title, paper, versions, profiles, workloads, fidelities, counts."""
    meta = []
    if tech is not None:
        meta.append(f"<b>{e(tech.title)}</b>")
        try:
            meta.append(f"paper: {e(tech.paper.cite())}")
        except Exception:  # noqa: BLE001 - a malformed paper record must not stop the report
            pass
    if len(wide):
        for label, col in (("version", "technique_version"), ("profile", "profile"), ("workload", "workload"),
                           ("fidelity", "fidelity")):
            vals = sorted({str(v) for v in wide[col] if v is not None and v == v})
            meta.append(f"{label} " + e(", ".join(vals) or "-"))
    meta.append(f"{len(wide)} ok case(s), {len(failed)} not ok")
    return "<p>" + "; ".join(meta) + "</p>"


def _cases_part(wide: pd.DataFrame, metric_names: list[str], units: dict[str, str], directions: dict[str, str],
                tech: Any) -> list[str]:
    """The "Cases" table: swept columns then metrics (headline first), sorted by the swept values."""
    from suite.report.units import sort_key

    idcols = ["variant"] + _varying(wide, ["profile", "workload", "fidelity", "seed"])
    pcols = _varying(wide, [c for c in wide.columns if c.startswith("param.")])
    scols = _varying(wide, [c for c in wide.columns if c.startswith("set.")])
    head = list(tech.headline) if tech is not None else []
    mcols = [m for m in head if m in metric_names] + sorted(
        (m for m in metric_names if m not in head),
        key=lambda m: (0 if directions.get(m) in ("higher", "lower") else 1, m))
    const = {_short(c, mcols): wide[c].iloc[0] for c in wide.columns
             if c.startswith(("param.", "set.")) and c not in pcols + scols}
    sort_cols = [c for c in idcols + pcols + scols if c in wide.columns]
    # sorted by the swept values, numbers numerically ("10 Gbit/s" after "5 Gbit/s")
    records = sorted(wide.to_dict("records"), key=lambda r: [sort_key(r[c]) for c in sort_cols])
    header = idcols + [_short(c, mcols) for c in pcols + scols] + mcols
    col_units = [None] * (len(idcols) + len(pcols) + len(scols)) + [units.get(m) for m in mcols]
    rows = [[r[c] for c in idcols + pcols + scols + mcols] for r in records[:MAX_ROWS]]
    parts = ["<h3>Cases</h3>"]
    if const:
        parts.append('<p class="muted">the same in every case: '
                     + e(", ".join(f"{k}={'none' if v is None else _fmt(v)}" for k, v in const.items())) + "</p>")
    parts.append('<p class="muted">sorted by ' + e(", ".join(_short(c, mcols) for c in sort_cols) or "variant")
                 + "; each column in one unit (in its header) and one number format; values scaled for "
                   "reading, stored in the technique's units (<code>suite results show RUN --format csv</code>)"
                   "</p>")
    parts.append(_cases_table(header, rows, col_units))
    if len(wide) > MAX_ROWS:
        parts.append(f'<p class="muted">first {MAX_ROWS} of {len(wide)} cases; all of them: '
                     f"<code>suite results export</code></p>")
    dirs = ", ".join(f"{m}: {directions[m]} is better" for m in mcols if directions.get(m) in ("higher", "lower"))
    if dirs:
        parts.append(f'<p class="muted">{e(dirs)}</p>')
    return parts


#: scenarios above which a technique's bars relative to its baseline are not drawn (the lines
#: and the table show them): 3 pages of bars
MAX_BAR_SCENARIOS = 54


def _plots(wide: pd.DataFrame, name: str, tech: Any, baseline: str | None, directions: dict[str, str],
           units: dict[str, str]) -> list[str]:
    """The "Plots" part of a technique's section: interactive lines of its headline metrics against
    every swept axis, then (up to :data:`MAX_BAR_SCENARIOS` scenarios) bars relative to its
    baseline; a section with no figure says why."""
    from suite.report.interactive import technique_figures
    from suite.report.plots import choose_figures, varying_columns

    head = list(tech.headline) if tech is not None else []
    lines, why = technique_figures(wide, directions, units, head, name, f"fig-{_slug(name)}")
    out = ["<h3>Plots</h3>"] + lines
    groups = [c for c in varying_columns(wide) if c != "variant"]
    scenarios = len(wide.drop_duplicates(subset=groups)) if groups else 1
    notes = [why] if why else []
    if baseline and wide["variant"].nunique() > 1:
        if scenarios <= MAX_BAR_SCENARIOS:
            for f in choose_figures(wide, directions, units, baseline, name, max_line=0):
                out.append(f'<figure><img src="data:image/png;base64,{f.png}" alt="{e(f.title)}">'
                           f"<figcaption>{e(f.caption)}</figcaption></figure>")
        else:
            notes.append(f"bars of each variant relative to the baseline {baseline} are drawn up to "
                         f"{MAX_BAR_SCENARIOS} scenarios; this run has {scenarios} (the lines above and the "
                         f"table below show every case)")
    elif not lines:
        notes.append("no bars relative to a baseline: " + ("one variant only" if baseline else
                                                           "the technique declares no baseline variant"))
    out += [f'<p class="muted">{e(n)}</p>' for n in notes]
    return out if len(out) > 1 else []


def _meanings_at(tech: Any, fidelities: set[str], metrics: Iterable[str]) -> dict[str, str]:
    """Metric -> what *tech* means by it at *fidelities* (the rows' own; their meanings joined by
    `` | `` where they differ, so that only the same mix matches); a metric none declares is left out.
    A column split by unit (``throughput [tokens/s]``) means what its metric means."""
    from suite.results.load import metric_of

    out = {}
    for m in metrics:
        found = {d.meaning for f in sorted(fidelities) if (d := tech.meaning(metric_of(m), f)) is not None}
        if found:
            out[m] = " | ".join(sorted(found))
    return out


def _category_sections(wide: pd.DataFrame, units: dict[str, str], directions: dict[str, str], techs: dict[str, Any],
                       profile: Any = None) -> tuple[list[str], list[tuple[str, str]]]:
    """One "head to head" section per category with at least two techniques in the run: a figure
    per shared metric and a table of each technique's best variant against its best baseline.
    Returns (sections, nav entries)."""
    from suite.report.plots import category_figure, shared_metrics, technique_colours
    from suite.technique import VOCABULARIES

    colours = technique_colours(techs)  # every technique of the run: one colour each, in every figure
    dpn = _devices_per_node(wide, profile)

    by_cat: dict[str, list[str]] = {}
    for t, tech in techs.items():
        if tech is not None and (wide["technique"] == t).any():
            by_cat.setdefault(tech.category, []).append(t)
    out, nav = [], []
    for cat, names in sorted(by_cat.items()):
        if len(names) < 2:
            continue
        vocab = [m for v in VOCABULARIES.values() if v.category == cat for m in v.metrics]
        # only scenarios the techniques share: a (profile, workload) pair two or more of them ran
        # (a `suite reproduce` run holds each technique on its own paper's setup: nothing to pit)
        sub = _shared_scenarios(wide[wide["technique"].isin(names)])
        names = sorted(set(sub["technique"]))
        if len(names) < 2:
            continue
        meanings = {t: _meanings_at(techs[t], set(sub.loc[sub["technique"] == t, "fidelity"]), units) for t in names}
        metrics = shared_metrics(sub, names, {m: directions.get(m) for m in units}, vocab, meanings)
        if not metrics:
            continue
        baselines = {t: {v.name for v in techs[t].baselines} for t in names}
        anchor = f"category-{_slug(cat)}"
        nav.append((anchor, f"Head to head: {cat}"))
        parts = [f'<section id="{e(anchor)}" class="category"><h2>Head to head: {e(cat)}</h2>',
                 "<p>" + e(f"{len(names)} techniques of category {cat} on the same workload(s) and profile(s), "
                           f"each with its baselines: ") + ", ".join(
                     f"<b>{e(t)}</b> ({e(techs[t].paper.cite())})" for t in names) + ".</p>",
                 _split_note(sub, units)]
        for m in metrics:
            t = f"{cat}: {m}"
            png = category_figure(sub, m, units.get(m, ""), directions.get(m, ""), techs, baselines, t,
                                  devices_per_node=dpn, colours=colours)
            parts.append(f'<figure><img src="data:image/png;base64,{png}" alt="{e(t)}"><figcaption>'
                         f"{e(m)} of every variant of every technique, one panel per profile, bars on a linear "
                         f"axis; each bar and legend entry names the scale it ran at (@ GPUs); hatched = a "
                         f"technique's baseline; legend: each technique's paper</figcaption></figure>")
        parts.append(_best_table(sub, names, metrics[0], units.get(metrics[0], ""), directions.get(metrics[0]),
                                 baselines))
        parts.append("</section>")
        out.append("".join(parts))
    return out, nav


def _split_note(sub: pd.DataFrame, units: dict[str, str]) -> str:
    """A line naming each metric that techniques of *sub* store in units of different dimensions
    (one wide column per unit: ``throughput [tokens/s]``), so never drawn on one axis; "" if none."""
    from suite.results.load import metric_of

    split: dict[str, list[str]] = {}
    for c, unit in units.items():
        if metric_of(c) != c and c in sub.columns and sub[c].notna().any():
            ts = ", ".join(sorted(set(sub.loc[sub[c].notna(), "technique"])))
            split.setdefault(metric_of(c), []).append(f"{unit} ({ts})")
    said = [f"{m} in {' and in '.join(us)}" for m, us in split.items() if len(us) > 1]
    return (f'<p class="muted">{e("; ".join(said))}: units of different dimensions, not one quantity; each '
            "unit is compared only among the techniques that store it</p>") if said else ""


def _devices_per_node(wide: pd.DataFrame, profile: Any) -> dict[str, int]:
    """profile name -> devices per node, for the profiles that resolve (the scale labels of the others
    say nodes only)."""
    dpn: dict[str, int] = {}
    for p in {str(x) for x in wide["profile"]} if len(wide) and profile is not None else ():
        try:
            n = profile(p).devices_per_node
        except Exception:  # noqa: BLE001 - a profile no longer installed: the scale label says nodes only
            continue
        if n:
            dpn[p] = int(n)
    return dpn


def _shared_scenarios(sub: pd.DataFrame) -> pd.DataFrame:
    """The cases of the (profile, workload) pairs that two or more techniques of *sub* ran."""
    pair = [f"{p}\x00{w}" for p, w in zip(sub["profile"].astype(str), sub["workload"].astype(str))]
    sub = sub.assign(_pair=pair)
    counts = sub.groupby("_pair")["technique"].nunique()
    return sub[sub["_pair"].isin(set(counts[counts >= 2].index))].drop(columns="_pair")


def _best_table(df: pd.DataFrame, names: list[str], metric: str, unit: str, direction: str | None,
                baselines: dict[str, set[str]]) -> str:
    """Per profile and technique: the best variant by *metric*, the best baseline, and the gain."""
    from suite.report.units import format_value

    rows = []

    def better(a: float, b: float) -> bool:
        return a < b if direction == "lower" else a > b

    for prof in sorted({str(p) for p in df["profile"]}):
        for t in names:
            sub = df[(df["technique"] == t) & (df["profile"].astype(str) == prof) & df[metric].notna()]
            if sub.empty:
                continue
            best = bestb = None
            for r in sub.to_dict("records"):
                v = float(r[metric])
                if r["variant"] in baselines[t]:
                    if bestb is None or better(v, bestb[1]):
                        bestb = (r["variant"], v)
                elif best is None or better(v, best[1]):
                    best = (r["variant"], v)
            if best is None:
                continue
            gain = ""
            if bestb and bestb[1]:
                g = bestb[1] / best[1] if direction == "lower" else best[1] / bestb[1]
                gain = f"{g:.3g}x"
            rows.append([prof, t, best[0], format_value(best[1], unit), bestb[0] if bestb else "",
                         format_value(bestb[1], unit) if bestb else "", gain])
    return ("<h3>Best variant against best baseline, by " + e(metric) + "</h3>"
            + _table(["profile", "technique", "best variant", metric, "best baseline", f"baseline {metric}",
                      "gain"], rows, "best"))


def _scoreboard_section(board: Any, not_run: int, from_run: bool) -> str:
    from suite.report.scoreboard import format_nulls, format_ours, format_verdict
    from suite.runner.verdicts import VERDICTS

    parts = ['<section id="scoreboard"><h2>Reproduction scoreboard</h2>',
             '<p class="muted">Each claim\'s acceptance was fixed before our number was computed; a claim is '
             "<i>reproduced</i> when ours is inside its band and every null prediction (the baseline at the same "
             "scenario, a trivial predictor) is outside, <i>not discriminating</i> when a null is inside too, "
             "<i>inconclusive</i> when a measured interval straddles the band's edge. Values are read "
             "from the cases stored" + (" by this reproduce run" if from_run else " in this store (any run)")
             + (f"; {not_run} claim(s) of these techniques have no stored case (run <code>suite reproduce</code>)"
                if not_run else "") + ".</p>"]
    rows = []
    for label, v in (("verified", True), ("unverified", False), ("all", None)):
        c = board.counts(v)
        rows.append([label, c["total"], *[c[x] for x in VERDICTS]])
    parts.append(_table(["claims", "total", *VERDICTS], rows, "counts"))
    for tech in dict.fromkeys(o.technique for o in board.outcomes):
        parts.append(f"<h3>{e(tech)}</h3>")
        outs = [o for o in board.outcomes if o.technique == tech]
        outs.sort(key=lambda o: not o.verified)
        parts.append(_table(
            ["claim", "verified", "statement", "source", "paper", "ours", "null(s)", "ratio", "verdict"],
            [[o.claim, "yes" if o.verified else "no", o.statement, o.source, o.paper, format_ours(o),
              format_nulls(o), o.ratio, format_verdict(o)] for o in outs],
            "scoreboard", [o.verdict.replace(" ", "-") for o in outs]))
    parts.append("</section>")
    return "".join(parts)


def build_report(store: Any, run: Any = "latest", *, registry: Any = None, scoreboard: bool = True,
                 title: str | None = None, context: Any = None) -> str:
    """The HTML text of the report of *run*.

    Parameters
    ----------
    store : Store, str, Path or None
        As :func:`suite.results.load`.
    run : int or ``"latest"``
    registry : suite.registry.Registry, optional
        Where technique metadata (title, paper, baseline variant, claims) comes from; default:
        the installed plugins. A technique no longer installed is still reported, without them.
    scoreboard : bool
        Add the reproduction scoreboard (claims of the run's techniques whose cases the store
        holds).
    title : str, optional

    Returns
    -------
    str
        A complete HTML document (UTF-8), images embedded as base64 PNG.

    Raises
    ------
    StoreError
        Unknown store or run.
    """
    from suite.context import Context

    context = Context.given(context, "build_report()", registry=registry)
    return _page(_read_run(store, run, context, scoreboard), title)


@dataclass
class _Run:
    """What a report shows of one run, read from the store."""

    rid: int | None
    info: dict[str, Any]
    wide: pd.DataFrame  # ok cases, wide form, profile values filled in
    failed: pd.DataFrame  # cases not ok
    techniques: list[str]  # in the order the run asked for them
    techs: dict[str, Any]  # name -> Technique, or None when not installed now
    board: Any  # the scoreboard, or None
    not_run: int  # claims of these techniques with no stored case
    store_path: str
    profile: Any  # profile name -> Profile (the context's)


def _read_run(store: Any, run: Any, context: Any, scoreboard: bool) -> _Run:
    """The run's cases, metrics, techniques and (when asked) scoreboard."""
    from suite.errors import StoreError
    from suite.results.load import load_run, reading

    with reading(store) as st:
        rid, info, wide = load_run(st, run, wide=True, none_error=StoreError(
            "report: expected a run id, a run name or 'latest', got None"))
        wide = fill_profile_values(wide, profile=context.profile)
        cases = st.cases(rid)
        techniques = list(dict.fromkeys(list(cases["technique"])))
        techs: dict[str, Any] = {}
        for t in techniques:
            try:
                techs[t] = context.registry.technique(t)
            except Exception:  # noqa: BLE001 - not installed now: reported without metadata
                techs[t] = None
        board, not_run = None, 0
        if scoreboard and any(techs.values()):
            from suite.report.scoreboard import stored_scoreboard
            from suite.runner.case import Resolver

            board, not_run = stored_scoreboard([t for t in techs.values() if t is not None], st,
                                               resolver=Resolver(context=context))
        return _Run(rid, info, wide, cases[cases["status"] != "ok"], techniques, techs, board, not_run, str(st.path),
                    context.profile)


def _page(r: _Run, title: str | None) -> str:
    """The HTML document: provenance, head-to-head sections, one section per technique, scoreboard."""
    from suite.report.interactive import CSS as ICSS
    from suite.report.interactive import SCRIPT

    title = title or f"dlsys-suite report: run {r.rid}"
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    units, directions = r.wide.attrs["units"], r.wide.attrs["directions"]
    wide = r.wide.copy(deep=False)
    wide.attrs = {}  # pandas deep-copies attrs (the run's provenance) into every frame and row derived below
    sections = [_technique_section(t, *_own_columns(wide[wide["technique"] == t], units, directions),
                                   r.failed[r.failed["technique"] == t], r.techs.get(t))
                for t in r.techniques] or ["<p>This run has no cases.</p>"]
    cat_sections, cat_nav = (_category_sections(wide, units, directions, r.techs, profile=r.profile)
                             if len(wide) else ([], []))
    nav = ['<li><a href="#provenance">Run provenance</a></li>']
    # head to head first: it is why a category run was made
    nav += [f'<li><a href="#{e(a)}">{e(label)}</a></li>' for a, label in cat_nav]
    nav += [f'<li><a href="#technique-{e(_slug(t))}">Technique: {e(t)}</a></li>' for t in r.techniques]
    has_board = r.board is not None and r.board.outcomes
    if has_board:
        nav.append('<li><a href="#scoreboard">Reproduction scoreboard</a></li>')
    body = [f"<header><h1>{e(title)}</h1><p class=\"muted\">generated {e(now)} by <code>suite report</code> from "
            f"{e(r.store_path)}</p></header>", f"<nav><ul>{''.join(nav)}</ul></nav>",
            _provenance(r.info, r.store_path), *cat_sections, *sections]
    if has_board:
        from_run = str(r.info.get("command") or "").split()[1:2] == ["reproduce"]
        body.append(_scoreboard_section(r.board, r.not_run, from_run))
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{e(title)}</title>"
            f"<style>{_CSS}{ICSS}</style></head><body>" + "\n".join(body)
            + f"<script>{SCRIPT}</script></body></html>\n")


def _own_columns(tw: pd.DataFrame, units: dict[str, str], directions: dict[str, str]
                 ) -> tuple[pd.DataFrame, dict[str, str], dict[str, str]]:
    """A technique's cases without the (empty) columns of other techniques' parameters and metrics,
    and *units* and *directions* for them: a metric that techniques store in units of several
    dimensions, split by unit (``throughput [tokens/s]``), is named by the metric again (one
    technique stores a metric in one unit)."""
    from suite.results.load import metric_of

    tw = tw.drop(columns=[c for c in tw.columns if (c.startswith(("param.", "set.")) or c in units)
                          and tw[c].isna().all()])
    bare = {c: metric_of(c) for c in units if c in tw.columns}
    return (tw.rename(columns=bare), {bare.get(c, c): u for c, u in units.items()},
            {bare.get(c, c): d for c, d in directions.items()})


def write_report(store: Any, run: Any, path: str | Path, **kwargs: Any) -> Path:
    """Write :func:`build_report` to *path* (UTF-8); returns the path.

    Raises
    ------
    StoreError
        Unknown store or run, or the file cannot be written.
    """
    from suite.errors import StoreError

    text = build_report(store, run, **kwargs)
    out = Path(path)
    if not out.parent.is_dir():  # never create folders silently (as --store does not)
        raise StoreError(f"report: expected an existing folder for {str(out)!r}, got no folder "
                         f"{str(out.parent)!r} (create it first)")
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise StoreError(f"report: cannot write {str(out)!r}: {exc}") from None
    return out
