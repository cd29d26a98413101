"""Plots for the HTML report, chosen from the metrics and parameters a run holds.

Rules (a person would rather look than read where a metric moves with a swept number):

* x axis: every swept numeric dimension of a technique's cases, i.e. a ``param.NAME`` with at
  least two numeric values, or a profile override ``set.PATH`` (``--set``) whose values are
  numbers with one unit (``"10 Gbit/s"``). Scale-like names (nodes, workers, gpus, depth,
  layers, batch) come first.
* y axis: metrics with a direction (``higher``/``lower`` is better) that are not constant,
  chosen by what the x axis is: speed-up / throughput against nodes, iteration time against a
  bandwidth or latency, memory against depth; otherwise the first such metrics.
* one line per variant; when another dimension is swept too, one panel per value of it
  (at most 4); any further swept dimension (profile, workload, other parameters) is held fixed
  at its most populated combination, named in the caption (values are never averaged).
* a bar chart of each variant relative to the technique's baseline variant, per scenario.

Figures are rendered with matplotlib's Agg backend to PNG and returned as base64 text for
``<img src="data:image/png;base64,...">``.
"""

from __future__ import annotations

import base64
import io
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["Figure", "choose_figures", "numeric_axis", "render"]

_SCALE = re.compile(r"(nodes|workers|gpus|devices|machines|ranks|procs|servers|depth|layers|stages|batch|size|seq)",
                    re.I)
_PREF_BY_X = [
    (re.compile(r"nodes|workers|gpus|devices|machines|ranks|servers", re.I),
     [r"speedup", r"throughput", r"scaling|efficiency", r"iteration_time|step_time|time"]),
    (re.compile(r"bandwidth|latency|network", re.I),
     [r"iteration_time|step_time", r"comm_time|communication", r"throughput", r"time"]),
    (re.compile(r"depth|layers|stages|seq|batch", re.I),
     [r"memory|peak|footprint|bytes", r"throughput", r"time"]),
]
_GENERIC = [r"speedup", r"throughput", r"iteration_time|step_time", r"time", r"memory|peak|bytes"]
MAX_PANELS = 4
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


def numeric_axis(values: Sequence[Any]) -> tuple[list[float] | None, str]:
    """Numbers for an axis column, or (None, "") when the column is not numeric.

    Numbers stay as they are; override strings like ``"10 Gbit/s"`` become 10.0 with the unit
    ``"Gbit/s"`` when every value carries the same unit.
    """
    from suite.results.load import override_value

    out: list[float] = []
    units = set()
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return None, ""
        if isinstance(v, bool):
            return None, ""
        if isinstance(v, (int, float)):
            out.append(float(v))
            units.add("")
            continue
        num, unit = override_value(v)
        if num is None:
            return None, ""
        out.append(num)
        units.add(unit)
    if len(units) != 1:
        return None, ""
    return out, units.pop()


def _axis_candidates(df) -> list[tuple[str, str]]:
    """Swept numeric columns of *df*: (column, unit), scale-like names first."""
    cands = []
    for c in df.columns:
        if not c.startswith(("param.", "set.")):
            continue
        nums, unit = numeric_axis(list(df[c]))
        if nums is None or len(set(nums)) < 2:
            continue
        cands.append((c, unit))
    cands.sort(key=lambda cu: (0 if _SCALE.search(cu[0]) else 1, cu[0]))
    return cands


def _metric_candidates(df, directions: dict[str, str]) -> list[str]:
    out = []
    for name, d in directions.items():
        if d not in ("higher", "lower") or name not in df.columns:
            continue
        vals = df[name].dropna()
        if len(vals) and vals.nunique() > 1:
            out.append(name)
    return sorted(out)


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


def _label(col: str, unit: str) -> str:
    name = col.split(".", 1)[1] if col.startswith(("param.", "set.")) else col
    return f"{name} ({unit})" if unit and unit != "1" else name


def render(fig) -> str:
    """A matplotlib figure as base64 PNG text (the figure is closed)."""
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90)
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _plt():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def line_figure(df, x: str, xunit: str, y: str, yunit: str, facet: tuple[str, str] | None, title: str) -> str:
    """One line per variant of *y* against *x*; one panel per value of *facet* (at most 4)."""
    plt = _plt()
    panels: list[tuple[str, Any]] = [("", df)]
    if facet is not None:
        fcol, funit = facet
        vals = list(dict.fromkeys(df[fcol]))
        nums, _ = numeric_axis(vals)
        order = sorted(range(len(vals)), key=lambda i: nums[i]) if nums else range(len(vals))
        vals = [vals[i] for i in order][:MAX_PANELS]
        panels = [(f"{_label(fcol, '')} = {_val(v)}", df[df[fcol] == v]) for v in vals]
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels) + 2.2, 3.4), squeeze=False, sharey=True,
                             layout="constrained")
    # one colour, marker and dash per variant across every panel
    index = {v: i for i, v in enumerate(sorted(set(map(str, df["variant"]))))}
    for ax, (ptitle, sub) in zip(axes[0], panels):
        for variant, g in sub.groupby("variant", sort=True):
            vi = index[str(variant)]
            xs, _ = numeric_axis(list(g[x]))
            pts = sorted(zip(xs, g[y]), key=lambda t: t[0])
            # the caller holds every other dimension fixed, so one case per x; a mean otherwise
            agg: dict[float, list[float]] = {}
            for xv, yv in pts:
                if yv is not None and not (isinstance(yv, float) and math.isnan(yv)):
                    agg.setdefault(xv, []).append(float(yv))
            if not agg:
                continue
            xv = sorted(agg)
            # distinct markers, shrinking sizes and dash styles: coinciding variants stay visible
            ax.plot(xv, [sum(agg[v]) / len(agg[v]) for v in xv], marker=_MARKERS[vi % len(_MARKERS)],
                    markersize=max(3.0, 9.0 - 1.5 * (vi % 4)), linestyle=_STYLES[vi % len(_STYLES)],
                    linewidth=max(1.0, 2.6 - 0.4 * (vi % 4)), color=f"C{vi % 10}", label=str(variant))
        ax.set_xlabel(_label(x, xunit))
        if ptitle:
            ax.set_title(ptitle, fontsize=9)
        ax.grid(True, alpha=0.3)
        xs_all = sorted(set(numeric_axis(list(sub[x]))[0] or []))
        if len(xs_all) > 1 and xs_all[0] > 0 and xs_all[-1] / xs_all[0] >= 16:
            ax.set_xscale("log", base=2)
        if 1 < len(xs_all) <= 10:
            ax.set_xticks(xs_all, [f"{v:g}" for v in xs_all])
    axes[0][0].set_ylabel(_label(y, yunit))
    handles: dict[str, Any] = {}
    for ax in axes[0]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    order = sorted(handles, key=lambda lab: index.get(lab, 0))
    axes[0][-1].legend([handles[lab] for lab in order], order, fontsize=8, title="variant", title_fontsize=8,
                       loc="upper left", bbox_to_anchor=(1.02, 1.0))
    fig.suptitle(title, fontsize=10)
    return render(fig)


def bars_figure(df, y: str, yunit: str, baseline: str, group_cols: list[str], title: str) -> str | None:
    """Each variant's *y* divided by the baseline variant's, per scenario (at most 8 groups)."""
    plt = _plt()
    import numpy as np

    if baseline not in set(df["variant"]):
        return None
    keycols = group_cols or []
    if keycols:
        groups = list(df.groupby(keycols, sort=True))
    else:
        groups = [((), df)]
    groups = groups[-8:]
    variants = [v for v in sorted(set(df["variant"])) if v != baseline]
    if not variants:
        return None
    labels, data = [], {v: [] for v in variants}
    for gkey, g in groups:
        base = g.loc[g["variant"] == baseline, y]
        if base.empty or not base.iloc[0]:
            continue
        b = float(base.iloc[0])
        gk = gkey if isinstance(gkey, tuple) else (gkey,)
        labels.append("\n".join(f"{_label(c, '')}={v}" for c, v in zip(keycols, gk)) or "all")
        for v in variants:
            val = g.loc[g["variant"] == v, y]
            data[v].append(float(val.iloc[0]) / b if len(val) else float("nan"))
    if not labels:
        return None
    fig, ax = plt.subplots(figsize=(max(5.0, 1.1 * len(labels) * max(1, len(variants)) / 2 + 2), 3.6),
                           layout="constrained")
    width = 0.8 / len(variants)
    xs = np.arange(len(labels))
    for i, v in enumerate(variants):
        ax.bar(xs + i * width - 0.4 + width / 2, data[v], width, label=str(v))
    ax.axhline(1.0, color="black", linewidth=0.8, linestyle="--")
    ax.set_xticks(xs, labels, fontsize=7)
    ax.set_ylabel(f"{y} / {baseline}")
    ax.legend(fontsize=8, title="variant", title_fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0))
    ax.grid(True, axis="y", alpha=0.3)
    fig.suptitle(title, fontsize=10)
    return render(fig)


_CONTEXT = ("profile", "workload", "fidelity", "seed")


def _val(v: Any) -> str:
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:g}"
    return str(v)


def _short(col: str) -> str:
    return col.split(".", 1)[1] if col.startswith(("param.", "set.")) else col


def varying_columns(df) -> list[str]:
    """Scenario columns (profile, workload, fidelity, seed, ``param.*``, ``set.*``) with more
    than one value in *df*."""
    import json

    out = []
    for c in df.columns:
        if c in _CONTEXT or c.startswith(("param.", "set.")):
            if len({json.dumps(v, sort_keys=True, default=str) for v in df[c]}) > 1:
                out.append(c)
    return out


def _follows(df, col: str, x: str) -> bool:
    """Whether the parameter or profile field *col* is a function of *x* in *df* (they are swept
    together): it then moves along the x axis and needs no fixing. A profile, workload, fidelity
    or seed never moves along an axis."""
    if not col.startswith(("param.", "set.")):
        return False
    pairs = {(str(a), str(b)) for a, b in zip(df[x], df[col])}
    return len({a for a, _b in pairs}) == len(pairs)


def _has_line(df, x: str, facet: str | None) -> bool:
    """Whether some variant (in some panel) has at least two distinct x values."""
    keys = [facet, "variant"] if facet else ["variant"]
    return any(g[x].astype(str).nunique() >= 2 for _k, g in df.groupby(keys, sort=False))


def _slice(df, context: list[str], x: str, facet: str | None = None):
    """The rows of the most populated combination of *context* values in which some variant has
    at least two x values, and that combination as (column, value) pairs; (None, []) if none."""
    if not context:
        return (df, []) if _has_line(df, x, facet) else (None, [])
    keys = [tuple(str(v) for v in row) for row in df[context].itertuples(index=False, name=None)]
    counts: dict[tuple, int] = {}
    for k in keys:
        counts[k] = counts.get(k, 0) + 1
    for k, _n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        mask = [kk == k for kk in keys]
        sub = df[mask]
        if _has_line(sub, x, facet):
            return sub, list(zip(context, sub[context].iloc[0].tolist()))
    return None, []


def choose_figures(df, directions: dict[str, str], units: dict[str, str], baseline: str | None,
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
    figs: list[Figure] = []
    if df.empty:
        return figs
    metrics = _metric_candidates(df, directions)
    if not metrics:
        return figs
    axes = _axis_candidates(df)
    for i, (x, xunit) in enumerate(axes[:2]):
        prefs = next((p for rx, p in _PREF_BY_X if rx.search(x)), _GENERIC)
        others = [a for a in axes if a[0] != x]
        # one panel per value of the next swept number; if that gives no line (the two move
        # together), no panels. Every other varying dimension is held fixed, never averaged.
        sub = None
        for facet in ([others[0]] if others else []) + [None]:
            context = [c for c in varying_columns(df) if c not in (x, facet[0] if facet else None)
                       and not _follows(df, c, x)]
            sub, fixed = _slice(df, context, x, facet[0] if facet else None)
            if sub is not None:
                break
        if sub is None:
            continue
        along = [c for c in varying_columns(sub) if c not in (x, facet[0] if facet else None) and _follows(sub, c, x)]
        for y in _pick(metrics, prefs, 2):
            if len(figs) >= max_line:
                break
            title = f"{technique}: {y} vs {_label(x, '')}"
            png = line_figure(sub, x, xunit, y, units.get(y, ""), facet, title)
            yu = units.get(y, "")
            cap = (f"{y} ({yu + ', ' if yu not in ('', '1') else ''}{directions.get(y)} is better) against "
                   f"{_label(x, xunit)}"
                   + (f" ({', '.join(_short(c) for c in along)} changing with it)" if along else "")
                   + ", one line per variant"
                   + (f", one panel per {_label(facet[0], facet[1])}" if facet else "")
                   + ("; the other swept dimensions fixed at " + ", ".join(f"{_short(c)}={_val(v)}" for c, v in fixed)
                      if fixed else ""))
            figs.append(Figure("line", title, x, y, png, cap))
    if baseline and df["variant"].nunique() > 1:
        lines = [f.y for f in figs if f.kind == "line"]
        y = lines[0] if lines else _pick(metrics, _GENERIC, 1)[0]  # the headline metric of the first plot
        groups = [c for c in varying_columns(df) if c != "variant"]
        title = f"{technique}: {y} of each variant relative to the baseline {baseline}"
        png = bars_figure(df, y, units.get(y, ""), baseline, groups, title)
        if png:
            figs.append(Figure("bars", title, None, y, png,
                               f"{y} of each variant divided by the baseline variant {baseline}'s, per scenario "
                               f"({directions.get(y)} is better; dashed line = baseline)"))
    return figs
