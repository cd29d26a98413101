"""Plots for the HTML report, chosen from the metrics and parameters a run holds.

Rules (a person would rather look than read where a metric moves with a swept number):

* x axis: every swept numeric dimension of a technique's cases, i.e. a ``param.NAME`` with at
  least two numeric values, or a profile override ``set.PATH`` (``--set``) whose values are
  numbers with one unit (``"10 Gbit/s"``). Scale-like names (nodes, workers, gpus, depth,
  layers, batch) come first.
* y axis: metrics with a direction (``higher``/``lower`` is better) that are not constant,
  chosen by what the x axis is: speed-up / throughput against nodes, iteration time against a
  bandwidth or latency, memory against depth; otherwise the first such metrics.
* one line per variant; when another dimension is swept too, one panel per value of it, every
  value, in a grid of small multiples (never a silent cut); any further swept dimension
  (profile, workload, other parameters) is held fixed at its most populated combination, named
  in the caption (values are never averaged).
* an x axis over geometrically spaced values (1, 2, 4, ... nodes) is drawn on a log scale
  (:func:`suite.report.units.geometric`).
* a bar chart of each variant relative to the technique's baseline variant, for every scenario:
  horizontal bars (the scenario labels stay readable), scenarios sorted by their swept values
  numerically, :data:`BARS_PER_PAGE` scenarios per figure, further pages as further figures
  whose captions say "page i of n".

Figures are rendered with matplotlib's Agg backend to PNG and returned as base64 text for
``<img src="data:image/png;base64,...">``.
"""

from __future__ import annotations

import base64
import io
import math
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure as MplFigure

from suite.report.axes import axis_candidates as _axis_candidates
from suite.report.axes import axis_caption, axis_slice, numeric_axis, varying_columns
from suite.report.axes import follows as _follows
from suite.report.axes import label as _label
from suite.report.axes import metric_candidates as _metric_candidates
from suite.report.axes import short as _short
from suite.report.axes import val as _val

__all__ = ["Figure", "choose_figures", "numeric_axis", "varying_columns", "render", "PANEL_COLUMNS",
           "BARS_PER_PAGE"]

_PREF_BY_X = [
    (re.compile(r"nodes|workers|gpus|devices|machines|ranks|servers", re.I),
     [r"speedup", r"throughput", r"scaling|efficiency", r"iteration_time|step_time|time"]),
    (re.compile(r"bandwidth|latency|network", re.I),
     [r"iteration_time|step_time", r"comm_time|communication", r"throughput", r"time"]),
    (re.compile(r"depth|layers|stages|seq|batch", re.I),
     [r"memory|peak|footprint|bytes", r"throughput", r"time"]),
]
_GENERIC = [r"speedup", r"throughput", r"iteration_time|step_time", r"time", r"memory|peak|bytes"]
#: panels per row of a small-multiples grid
PANEL_COLUMNS = 3
#: scenarios per bar-chart figure; more make further pages (figures), each caption says which
BARS_PER_PAGE = 18
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
_STYLES = ("-", "--", "-.", ":")


@dataclass
class Figure:
    """One chosen figure: what it plots and its rendered PNG (base64)."""

    kind: str  # "line" or "bars"
    title: str
    x: str | None
    y: str
    png: str
    caption: str


def _pick(metrics: list[str], prefs: list[str], n: int) -> list[str]:
    chosen: list[str] = []
    for p in prefs:
        for m in metrics:
            if m not in chosen and re.search(p, m, re.I):
                chosen.append(m)
                break
        if len(chosen) >= n:
            return chosen
    for m in metrics:
        if len(chosen) >= n:
            break
        if m not in chosen:
            chosen.append(m)
    return chosen


def render(fig: MplFigure) -> str:
    """A matplotlib figure as base64 PNG text (the figure is closed)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _sandboxed_mpl_dir(environ: Mapping[str, str]) -> str | None:
    """``$SUITE_CACHE_DIR/matplotlib`` when *environ* sandboxes the suite's caches and sets no
    ``MPLCONFIGDIR`` of its own, else None (matplotlib's own default)."""
    import os

    cache = environ.get("SUITE_CACHE_DIR")
    return os.path.join(cache, "matplotlib") if cache and not environ.get("MPLCONFIGDIR") else None


def _plt() -> Any:
    """matplotlib's pyplot on the Agg backend. In a sandbox (``$SUITE_CACHE_DIR`` set) and with no
    ``$MPLCONFIGDIR`` of the user's, matplotlib keeps its font cache and config under
    ``$SUITE_CACHE_DIR/matplotlib``, not under ``~`` (docs/profiles.md: such a sandbox writes
    nothing under ``~``)."""
    import os

    folder = _sandboxed_mpl_dir(os.environ)
    if folder is not None and "matplotlib" not in sys.modules:
        os.environ["MPLCONFIGDIR"] = folder
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def line_figure(df: pd.DataFrame, x: str, xunit: str, y: str, yunit: str, facet: tuple[str, str] | None, title: str) -> str:
    """One line per variant of *y* against *x*; one panel per value of *facet* (every value, in a
    grid of :data:`PANEL_COLUMNS` columns, sorted numerically)."""
    from suite.report.units import column_scale, geometric, sort_key

    plt = _plt()
    panels: list[tuple[str, Any]] = [("", df)]
    if facet is not None:
        fcol, funit = facet
        vals = sorted(dict.fromkeys(df[fcol]), key=sort_key)
        panels = [(f"{_label(fcol, '')} = {_val(v)}", df[df[fcol] == v]) for v in vals]
    ncols = min(PANEL_COLUMNS, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(3.9 * ncols + 2.4, 3.0 * nrows + 0.6), squeeze=False,
                             sharey=True, sharex=True, layout="constrained")
    flat = [ax for row in axes for ax in row]
    for ax in flat[len(panels):]:
        ax.set_visible(False)
    factor, yshow = column_scale(list(df[y]), yunit)  # one display unit for every panel (ms, MiB)
    # one colour, marker and dash per variant across every panel
    index = {v: i for i, v in enumerate(sorted(set(map(str, df["variant"]))))}
    xs_every = sorted(set(numeric_axis(list(df[x]), xunit)[0] or []))
    for k, (ax, (ptitle, sub)) in enumerate(zip(flat, panels)):
        for variant, g in sub.groupby("variant", sort=True):
            vi = index[str(variant)]
            xs, _ = numeric_axis(list(g[x]), xunit)
            pts = sorted(zip(xs or [], g[y]), key=lambda t: t[0])
            # the caller holds every other dimension fixed, so one case per x; a mean otherwise
            agg: dict[float, list[float]] = {}
            for xv, yv in pts:
                if yv is not None and not (isinstance(yv, float) and math.isnan(yv)):
                    agg.setdefault(xv, []).append(float(yv) / factor)
            if not agg:
                continue
            xvs = sorted(agg)
            # distinct markers, shrinking sizes and dash styles: coinciding variants stay visible
            ax.plot(xvs, [sum(agg[v]) / len(agg[v]) for v in xvs], marker=_MARKERS[vi % len(_MARKERS)],
                    markersize=max(3.0, 9.0 - 1.5 * (vi % 4)), linestyle=_STYLES[vi % len(_STYLES)],
                    linewidth=max(1.0, 2.6 - 0.4 * (vi % 4)), color=f"C{vi % 10}", label=str(variant))
        if k >= len(panels) - ncols:
            ax.set_xlabel(_label(x, xunit))
        if ptitle:
            ax.set_title(ptitle, fontsize=9)
        ax.grid(True, alpha=0.3)
        if geometric(xs_every):
            ax.set_xscale("log", base=2 if all(float(v).is_integer() for v in xs_every) else 10)
        if 1 < len(xs_every) <= 10:
            ax.set_xticks(xs_every, [f"{v:g}" for v in xs_every])
            ax.minorticks_off()
    for row in axes:
        row[0].set_ylabel(_label(y, yshow))
    handles: dict[str, Any] = {}
    for ax in flat:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    order = sorted(handles, key=lambda lab: index.get(lab, 0))
    axes[0][ncols - 1].legend([handles[lab] for lab in order], order, fontsize=8, title="variant", title_fontsize=8,
                              loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(title, fontsize=10)
    return render(fig)


def bars_figure(df: pd.DataFrame, y: str, yunit: str, baseline: str, group_cols: list[str], title: str) -> list[str]:
    """Each variant's *y* divided by the baseline variant's, for every scenario (a group of
    bars per combination of *group_cols*, sorted numerically), as horizontal bars,
    :data:`BARS_PER_PAGE` scenarios per figure. Returns the pages' PNGs ([] when there is no
    baseline to divide by)."""
    pages = bars_pages(df, y, baseline, group_cols)
    out = []
    for i, (labels, data) in enumerate(pages):
        out.append(_bars_png(labels, data, y, baseline,
                             title + (f" (page {i + 1} of {len(pages)})" if len(pages) > 1 else "")))
    return out


def bars_pages(df: pd.DataFrame, y: str, baseline: str, group_cols: list[str], per_page: int | None = None
               ) -> list[tuple[list[str], dict[str, list[float]]]]:
    """The bar chart's data: a list of pages, each ``(labels, {variant: [ratio per label]})``;
    every scenario with a baseline value appears on exactly one page."""
    from suite.report.units import sort_key

    per_page = per_page or BARS_PER_PAGE
    if baseline not in set(df["variant"]):
        return []
    keycols = list(group_cols or [])
    variants = [v for v in sorted(set(df["variant"])) if v != baseline]
    if not variants:
        return []
    if keycols:
        groups = list(df.groupby(keycols, sort=False, dropna=False))
        groups.sort(key=lambda kg: [sort_key(v) for v in (kg[0] if isinstance(kg[0], tuple) else (kg[0],))])
    else:
        groups = [((), df)]
    labels: list[str] = []
    data: dict[str, list[float]] = {v: [] for v in variants}
    for gkey, g in groups:
        base = g.loc[g["variant"] == baseline, y]
        if base.empty or not base.iloc[0]:
            continue
        b = float(base.iloc[0])
        gk = gkey if isinstance(gkey, tuple) else (gkey,)
        labels.append(", ".join(f"{_label(c, '')}={_val(v)}" for c, v in zip(keycols, gk)) or "all")
        for v in variants:
            val = g.loc[g["variant"] == v, y]
            data[v].append(float(val.iloc[0]) / b if len(val) else float("nan"))
    pages = []
    for start in range(0, len(labels), per_page):
        pages.append((labels[start:start + per_page], {v: d[start:start + per_page] for v, d in data.items()}))
    return pages


def _bars_png(labels: list[str], data: dict[str, list[float]], y: str, baseline: str, title: str) -> str:
    plt = _plt()
    import numpy as np

    variants = list(data)
    n = len(labels)
    height = 0.8 / len(variants)
    longest = max((len(lab) for lab in labels), default=4)
    fig, ax = plt.subplots(figsize=(7.5 + 0.055 * longest, 1.2 + n * (0.17 * len(variants) + 0.1)),
                           layout="constrained")
    ys = np.arange(n)
    for i, v in enumerate(variants):
        ax.barh(ys - 0.4 + height * (i + 0.5), data[v], height, label=str(v), color=f"C{i % 10}")
    ax.axvline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_yticks(ys, labels, fontsize=7)
    ax.set_ylim(n - 0.5, -0.5)  # the first scenario on top, as in the table; no empty margin
    ax.set_xlabel(f"{y} / {baseline}")
    ax.legend(fontsize=8, title="variant", title_fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ax.grid(True, axis="x", alpha=0.3)
    fig.suptitle(title, fontsize=10)
    return render(fig)


def choose_figures(df: pd.DataFrame, directions: dict[str, str], units: dict[str, str], baseline: str | None,
                   technique: str, max_line: int = 4) -> list[Figure]:
    """The figures worth drawing for one technique's cases (wide form of :func:`suite.results.load`).

    Parameters
    ----------
    df : DataFrame
        One technique's ok cases, wide form.
    directions, units : dict
        Metric name -> direction / unit.
    baseline : str or None
        The technique's baseline variant (bars relative to it).
    technique : str
        For titles.
    max_line : int
        Most line figures.

    Returns
    -------
    list of Figure
    """
    if df.empty:
        return []
    metrics = _metric_candidates(df, directions)
    if not metrics:
        return []
    figs = _line_figures(df, metrics, directions, units, technique, max_line)
    if baseline and df["variant"].nunique() > 1:
        lines = [f.y for f in figs if f.kind == "line"]
        y = lines[0] if lines else _pick(metrics, _GENERIC, 1)[0]  # the headline metric of the first plot
        figs += _bar_figures(df, y, directions.get(y), baseline, technique)
    return figs


def _line_figures(df: pd.DataFrame, metrics: list[str], directions: dict[str, str], units: dict[str, str],
                  technique: str, max_line: int) -> list[Figure]:
    """Up to *max_line* line figures: two metrics (by the x axis's preferences) against each of
    the first two swept axes."""
    from suite.report.units import column_scale

    figs: list[Figure] = []
    axes = _axis_candidates(df)
    for x, xunit in axes[:2]:
        prefs = next((p for rx, p in _PREF_BY_X if rx.search(x)), _GENERIC)
        sub, fixed, facet = axis_slice(df, x, axes, varying_columns(df))
        if sub is None:
            continue
        along = [c for c in varying_columns(sub) if c not in (x, facet[0] if facet else None) and _follows(sub, c, x)]
        for y in _pick(metrics, prefs, 2):
            if len(figs) >= max_line:
                break
            title = f"{technique}: {y} vs {_label(x, '')}"
            png = line_figure(sub, x, xunit, y, units.get(y, ""), facet, title)
            yu = column_scale(list(sub[y]), units.get(y, ""))[1]  # the unit the axis is drawn in
            note = f" ({', '.join(_short(c) for c in along)} changing with it)" if along else ""
            figs.append(Figure("line", title, x, y, png,
                               axis_caption(y, yu, directions.get(y), x, xunit, facet, fixed, note)))
    return figs


def _bar_figures(df: pd.DataFrame, y: str, direction: str | None, baseline: str, technique: str) -> list[Figure]:
    """*y* of each variant relative to the *baseline* variant, per scenario, :data:`BARS_PER_PAGE` a figure."""
    groups = [c for c in varying_columns(df) if c != "variant"]
    title = f"{technique}: {y} of each variant relative to the baseline {baseline}"
    pages = bars_pages(df, y, baseline, groups)
    total = sum(len(lab) for lab, _d in pages)
    figs = []
    for i, (labels, data) in enumerate(pages):
        t = title + (f" (page {i + 1} of {len(pages)})" if len(pages) > 1 else "")
        first = i * BARS_PER_PAGE + 1
        figs.append(Figure("bars", t, None, y, _bars_png(labels, data, y, baseline, t),
                           f"{y} of each variant divided by the baseline variant {baseline}'s, per scenario "
                           f"({direction} is better; dashed line = baseline)"
                           + (f"; page {i + 1} of {len(pages)}: scenarios {first}-{first + len(labels) - 1} "
                              f"of {total}" if len(pages) > 1 else f"; all {total} scenario(s)")))
    return figs


def shared_metrics(df: pd.DataFrame, techniques: list[str], metrics: Mapping[str, str | None],
                   vocab_order: Sequence[str] = (),
                   meanings: Mapping[str, Mapping[str, str]] | None = None) -> list[str]:
    """Metrics with a direction (*metrics*: name -> direction) that at least two of *techniques*
    report in *df* (wide form): the vocabulary's metrics first, in *vocab_order*, then by name.

    With *meanings* (technique -> metric -> what it means, :meth:`suite.technique.Technique.meanings`),
    only a metric every technique reporting it declares with the same meaning: one name can mean two
    things (a speed-up over one device, or over another technique's time to target), and a bar chart
    of both on one axis would compare nothing."""
    have: dict[str, set[str]] = {}
    for t in techniques:
        sub = df[df["technique"] == t]
        for c, d in metrics.items():
            if d in ("lower", "higher") and c in sub.columns and sub[c].notna().any():
                have.setdefault(c, set()).add(t)
    names = [m for m, ts in have.items() if len(ts) >= 2
             and (meanings is None or len({meanings.get(t, {}).get(m) for t in ts} - {None}) == 1
                  and all(m in meanings.get(t, {}) for t in ts))]
    first = [m for m in vocab_order if m in names]
    return first + sorted(m for m in names if m not in first)


#: one colour per technique, by its place among every technique named in a report (never
#: reassigned after filtering, so a technique keeps its colour in every figure)
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")


def technique_colours(names: Iterable[Any]) -> dict[str, str]:
    """technique name -> colour, by the sorted order of *names* (every technique of the report)."""
    return {t: PALETTE[i % len(PALETTE)] for i, t in enumerate(sorted({str(n) for n in names}))}


def scale_text(tech: Any, record: Mapping[Any, Any], devices_per_node: int | None) -> str:
    """The scale a case ran at, from the technique's ``Param(role="scale")``: ``8 workers``,
    ``1 node = 8 GPUs``; ``""`` when the technique declares none."""
    from suite.declaration.params import devices_each, scale_factors, scale_parameter

    decl = scale_parameter(tech.parameters) if tech is not None else None
    if decl is None:
        return ""
    k, p = decl
    v = record.get(f"param.{k}")
    if v is None or v != v:
        return ""
    try:
        n = int(v)
    except (TypeError, ValueError):
        return f"{k}={v}"
    if p.unit == "nodes" or isinstance(p.devices_each, str):  # nodes, or replicas of a group of "tp*pp"
        got = {f: record.get(f"param.{f}") for f in scale_factors(tech.parameters, k)}  # devices: the case's own
        each = devices_each(tech.parameters, k, {f: v for f, v in got.items() if v is not None and v == v},
                            devices_per_node)
        return (f"{n} {'node' if n == 1 else 'nodes'}" if p.unit == "nodes" else f"{k}={n}") + (
            f" = {n * each} GPUs" if each else "")
    unit = p.unit or k
    return f"{n} {unit[:-1] if n == 1 and unit.endswith('s') else unit}" + ("" if unit == "GPUs" else
                                                                          f" = {n} GPU{'s' if n != 1 else ''}")


def category_figure(df: pd.DataFrame, metric: str, unit: str, direction: str, techs: dict[str, Any],
                    baselines: dict[str, set[str]], title: str, devices_per_node: dict[str, int] | None = None,
                    colours: dict[str, str] | None = None) -> str:
    """One metric of every technique of a category side by side: a horizontal bar per
    (technique, variant, scenario), coloured by technique, baselines hatched, one panel per
    profile; the legend names each technique's paper.

    Parameters
    ----------
    df : DataFrame
        Wide form of the ok cases of the category's techniques.
    metric, unit, direction : str
    techs : dict
        technique name -> Technique (or None when not installed: no paper in the legend).
    baselines : dict
        technique name -> names of its baseline variants.
    title : str
    devices_per_node : dict, optional
        profile name -> devices per node, for the scale labels (``1 node = 8 GPUs``).
    colours : dict, optional
        technique -> colour (:func:`technique_colours` of every technique in the report).

    Every bar's label and every legend entry names the scale the technique ran at
    (:func:`scale_text`); bar lengths are linear (a log axis would make a 4x and a 16x look alike).
    """
    from suite.report.units import column_scale, sort_key

    df = df[df[metric].notna()]
    names = sorted({str(t) for t in df["technique"]})
    colour = colours or technique_colours(techs or names)
    factor, shown = column_scale(list(df[metric]), unit)
    scales: dict[str, set[str]] = {}
    panels = [(prof, _category_rows(df[df["profile"].astype(str) == prof], names, metric, factor, techs, baselines,
                                    (devices_per_node or {}).get(prof), scales))
              for prof in sorted({str(p) for p in df["profile"]}, key=sort_key)]
    fig = _category_panels(panels, len(names), colour)
    fig.axes[-1].set_xlabel(_label(metric, shown) + f" ({direction} is better)")
    # below the panels, so long paper names never squeeze the bars
    fig.legend(handles=_category_legend(names, techs, scales, colour), fontsize=7, title="technique (paper)",
               title_fontsize=8, loc="outside lower center", ncols=1)
    fig.suptitle(title, fontsize=10)
    return render(fig)


#: one bar of a category figure: (label, value in the shown unit, technique, baseline?)
_Bar = tuple[str, float, str, bool]


def _category_rows(sub: pd.DataFrame, names: list[str], metric: str, factor: float, techs: dict[str, Any],
                   baselines: dict[str, set[str]], dpn: int | None, scales: dict[str, set[str]]) -> list[_Bar]:
    """The bars of one profile's panel: per technique, baselines first, then by swept values;
    each technique's scale texts are added to *scales*."""
    from suite.report.units import sort_key

    rows: list[_Bar] = []
    for t in names:
        tsub = sub[sub["technique"] == t]
        if tsub.empty:
            continue
        swept = [c for c in varying_columns(tsub) if c not in ("profile",)]
        base_of = baselines.get(t, set())
        recs = sorted(tsub.to_dict("records"),
                      key=lambda r: (r["variant"] not in base_of, str(r["variant"]), [sort_key(r[c]) for c in swept]))
        for r in recs:
            extra = ", ".join(f"{_short(c)}={_val(r[c])}" for c in swept)
            base = r["variant"] in base_of
            sc = scale_text(techs.get(t), r, dpn)
            scales.setdefault(t, set()).add(sc)
            rows.append((f"{t}: {r['variant']}{' (baseline)' if base else ''}" + (f" @ {sc}" if sc else "")
                         + (f" [{extra}]" if extra else ""), float(r[metric]) / factor, t, base))
    return rows


def _category_panels(panels: list[tuple[str, list[_Bar]]], n_techniques: int, colour: dict[str, str]) -> MplFigure:
    """One horizontal-bar panel per profile, coloured by technique, baselines hatched."""
    import numpy as np

    plt = _plt()
    n_rows = sum(len(r) for _p, r in panels)
    longest = max((len(lab) for _p, rows in panels for lab, *_ in rows), default=10)
    fig, axes = plt.subplots(len(panels), 1, figsize=(5.5 + 0.06 * longest, 2.0 + 0.9 * len(panels) + 0.26 * n_rows
                                                      + 0.16 * n_techniques),
                             squeeze=False, layout="constrained",
                             gridspec_kw={"height_ratios": [max(1, len(r)) for _p, r in panels]})
    for ax, (prof, rows) in zip(axes[:, 0], panels):
        ys = np.arange(len(rows))
        ax.barh(ys, [r[1] for r in rows], 0.7, color=[colour[r[2]] for r in rows],
                hatch=["//" if r[3] else "" for r in rows], edgecolor="white")
        ax.set_yticks(ys, [r[0] for r in rows], fontsize=7)
        ax.set_ylim(len(rows) - 0.5, -0.5)
        ax.set_title(f"profile {prof}", fontsize=9)
        ax.grid(True, axis="x", alpha=0.3)
    out: MplFigure = fig
    return out


def _category_legend(names: list[str], techs: dict[str, Any], scales: dict[str, set[str]],
                     colour: dict[str, str]) -> list[Any]:
    """One legend entry per technique (its paper: first author, venue, year; the scales it ran
    at), then the baseline hatch."""
    from matplotlib.patches import Patch

    handles = []
    for t in names:
        tech = techs.get(t)
        paper = ""
        if tech is not None:
            p = tech.paper
            who = p.who(surnames=True)
            paper = ": " + ", ".join(x for x in (who, p.venue, str(p.year or "")) if x)
        sc = sorted(x for x in scales.get(t, ()) if x)
        handles.append(Patch(color=colour[t], label=f"{t}{paper}" + (f" (at {' / '.join(sc)})" if sc else "")))
    handles.append(Patch(facecolor="white", edgecolor="grey", hatch="//", label="baseline variant"))
    return handles
