"""Interactive figures for the HTML report: SVG drawn in the browser by one small script embedded
once per page, so a report still works offline from one file and stays small at 10,000 cases.

Each technique's headline metrics (:attr:`suite.technique.Technique.headline`) are drawn against
every swept numeric axis (a ``--param`` or a profile field set with ``--set``, in its unit; a log
axis for geometrically spaced values; values of one dimension written in other units drawn in the
first's), one line per variant; when a second numeric axis is swept, one panel per value of it
(small multiples), and when none is, one panel per value of a swept text parameter or profile
field (``communication.library`` = mpi, nccl: each library is shown, not only the most populated
one); any further swept dimension is held fixed at its most populated combination, named in the
caption (values are never averaged). In the page: hover a
point for the case's values, drag a rectangle to zoom (double-click to reset), tick a variant in
the legend to show or hide it in every panel.

The data of a figure is JSON in a ``<script type="application/json">`` element; the rows it
points at (one per case, the swept values and the headline metrics) are stored once per
technique section.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["SCRIPT", "CSS", "technique_figures", "MAX_METRICS"]

#: headline metrics drawn per axis
MAX_METRICS = 3


def _clean(v: Any) -> Any:
    if v is None:
        return None
    if hasattr(v, "item") and not isinstance(v, (str, bytes)):
        try:
            v = v.item()
        except (AttributeError, ValueError):
            pass
    if isinstance(v, float):
        return None if not math.isfinite(v) else float(f"{v:.6g}")
    if isinstance(v, (int, bool, str)):
        return v
    return str(v)


def _headline(df: pd.DataFrame, directions: dict[str, str], headline: Sequence[str]) -> list[str]:
    from suite.report.axes import metric_candidates

    varying = set(metric_candidates(df, directions))
    chosen = [m for m in headline if m in varying]
    return (chosen or sorted(varying, key=lambda m: (m not in ("speedup", "throughput", "iteration_time"), m)))[
        :MAX_METRICS]


def technique_figures(df: pd.DataFrame, directions: dict[str, str], units: dict[str, str], headline: Sequence[str],
                      technique: str, fid: str) -> tuple[list[str], str]:
    """The interactive figures of one technique's ok cases (wide form) as HTML, or ([], why none).

    Parameters
    ----------
    df : DataFrame
        One technique's ok cases, wide form (:func:`suite.results.load`).
    directions, units : dict
        metric -> direction / unit.
    headline : sequence of str
        The technique's headline metrics (drawn first; the varying metrics with a direction when
        none of them varies).
    technique : str
    fid : str
        A prefix unique in the page for the elements' ids.

    Returns
    -------
    (list of str, str)
        The figures' HTML (the section's data table first) and, when there is none, why.
    """
    from suite.report.axes import axis_candidates, varying_columns

    if df.empty:
        return [], "no case of this technique finished ok"
    df = df.copy(deep=False)
    df.attrs = {}  # pandas deep-copies attrs on every derived frame: costly at 10,000 rows
    axes = axis_candidates(df)
    if not axes:
        return [], ("no numeric parameter or profile field is swept in this run (one value each), so there "
                    "is no axis to draw a metric against; the cases table below has every value")
    metrics = _headline(df, directions, headline)
    if not metrics:
        return [], "no metric with a direction (higher or lower is better) changes across these cases"
    rows: dict[Any, int] = {}  # case (df index) -> its row in the section's data table
    varying = varying_columns(df)
    figs = [f for x, xunit in axes for f in _axis_figures(df, x, xunit, axes, varying, metrics, directions, units,
                                                          technique, rows)]
    if not figs:
        return [], "the swept values never give one variant two points on an axis with the rest held fixed"
    out = [f'<script type="application/json" id="{fid}-data">{_json(_data_table(df, rows, varying, metrics, units))}'
           "</script>"]
    for i, f in enumerate(figs):
        f["d"] = f"{fid}-data"
        out.append(f'<figure class="ifig-wrap"><div class="ifig" data-spec="{fid}-{i}"></div>'
                   f'<script type="application/json" id="{fid}-{i}">{_json(f)}</script>'
                   f"<figcaption>{_esc(f['cap'])}; hover a point for its case, drag to zoom (double-click "
                   f"resets), tick variants to filter</figcaption></figure>")
    return out, ""


def _axis_figures(df: pd.DataFrame, x: str, xunit: str, axes: list[tuple[str, str]], varying: list[str],
                  metrics: list[str], directions: dict[str, str], units: dict[str, str], technique: str,
                  rows: dict[Any, int]) -> list[dict[str, Any]]:
    """The figure specs of every metric against axis *x* (none when no slice gives a line); the
    cases drawn are numbered in *rows*."""
    from suite.report.axes import axis_caption, axis_slice, label, numeric_axis, val
    from suite.report.units import column_scale, geometric, sort_key

    sub, fixed, facet = axis_slice(df, x, axes, varying)
    if sub is None:
        return []
    xlog = geometric(numeric_axis(list(sub[x]), xunit)[0] or [])
    panels = [("", sub)]
    if facet is not None:
        vals = sorted(dict.fromkeys(sub[facet[0]]), key=sort_key)
        panels = [(f"{label(facet[0], '')} = {val(v)}", sub[sub[facet[0]] == v]) for v in vals]
    variants = sorted({str(v) for v in sub["variant"]})
    figs = []
    for y in metrics:
        if y not in sub.columns:
            continue
        factor, shown = column_scale(list(sub[y]), units.get(y, ""))
        out_panels = [{"t": ptitle, "s": _series(p, x, xunit, y, factor, rows)} for ptitle, p in panels]
        cap = axis_caption(y, shown, directions.get(y), x, xunit, facet, fixed,
                           " (log axis: geometric values)" if xlog else "")
        figs.append({"t": f"{technique}: {y} vs {label(x, '')}", "xl": label(x, xunit), "yl": label(y, shown),
                     "xlog": bool(xlog), "v": variants, "p": out_panels, "cap": cap})
    return figs


def _series(p: pd.DataFrame, x: str, xunit: str, y: str, factor: float, rows: dict[Any, int]
            ) -> dict[str, list[list[Any]]]:
    """variant -> its points ``[x (in *xunit*), y / factor, data-table row]`` in one panel, sorted by x."""
    from suite.report.axes import numeric_axis

    series: dict[str, list[list[Any]]] = {}
    nums = numeric_axis(list(p[x]), xunit)[0] or []
    for idx, variant, yv, xv in zip(p.index, p["variant"].tolist(), p[y].tolist(), nums):
        if yv is None or (isinstance(yv, float) and not math.isfinite(yv)):
            continue
        r = rows.setdefault(idx, len(rows))
        series.setdefault(str(variant), []).append([_clean(xv), _clean(float(yv) / factor), r])
    for pts in series.values():
        pts.sort(key=lambda t: t[0])
    return series


def _data_table(df: pd.DataFrame, rows: dict[Any, int], varying: list[str], metrics: list[str],
                units: dict[str, str]) -> dict[str, Any]:
    """The section's data table: the cases drawn (in *rows* order), their swept values and metrics."""
    from suite.report.axes import short

    cols = ["variant"] + [c for c in varying if c != "variant"] + [m for m in metrics if m in df.columns]
    cols = list(dict.fromkeys(cols))
    heads = [f"{short(c)}" + (f" [{units[c]}]" if c in units and units[c] not in ("", "1") else "") for c in cols]
    by_row = sorted(rows.items(), key=lambda kv: kv[1])
    table = df.loc[[idx for idx, _r in by_row], cols]
    return {"cols": heads, "rows": [[_clean(v) for v in row] for row in table.itertuples(index=False, name=None)]}


def _json(obj: Any) -> str:
    # inside <script>: no "<" at all ("</script" would end the element, "<!--" change its parsing)
    return json.dumps(obj, separators=(",", ":"), allow_nan=False).replace("<", "\\u003c")


def _esc(s: str) -> str:
    import html

    return html.escape(s, quote=True)


CSS = """
.ifig{display:flex;flex-wrap:wrap;gap:6px;align-items:flex-start}
.ifig svg{background:#fff;border:1px solid #ddd;cursor:crosshair;user-select:none}
.ifig .legend{font-size:12px;min-width:150px}
.ifig .legend label{display:block;white-space:nowrap;cursor:pointer}
.ifig .legend .sw{display:inline-block;width:12px;height:12px;margin:0 4px -2px 2px}
.ifig-title{font-weight:bold;font-size:13px;margin:4px 0}
.itip{position:fixed;pointer-events:none;background:rgba(255,255,255,.96);border:1px solid #888;
 font:12px sans-serif;padding:4px 6px;z-index:10;display:none;max-width:420px}
.itip td{padding:0 4px}
"""

#: The figure script, embedded once per page (no library, no network): SVG panels with axes and
#: ticks, a legend whose boxes filter variants, hover with the case's values, drag-to-zoom.
SCRIPT = r"""
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  var PAL = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
             "#bcbd22", "#17becf"];
  var W = 380, H = 250, ML = 62, MR = 12, MT = 24, MB = 40;
  var tip = null;
  function el(tag, attrs, parent) {
    var e = document.createElementNS(NS, tag);
    for (var k in attrs) { if (Object.prototype.hasOwnProperty.call(attrs, k)) { e.setAttribute(k, attrs[k]); } }
    if (parent) { parent.appendChild(e); }
    return e;
  }
  function fmt(v) {
    var a = Math.abs(v);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) { return v.toExponential(2); }
    return String(+v.toPrecision(4));
  }
  function ticks(lo, hi, log, data) {
    var out = [], v;
    if (log) {
      if (data.length && data.length <= 12) { return data.filter(function (d) { return d >= lo && d <= hi; }); }
      for (v = Math.pow(10, Math.floor(Math.log10(lo))); v <= hi * 1.0001; v *= 10) { if (v >= lo) { out.push(v); } }
      return out;
    }
    var span = (hi - lo) || Math.abs(hi) || 1, step = Math.pow(10, Math.floor(Math.log10(span / 5)));
    var err = span / 5 / step;
    if (err >= 5) { step *= 5; } else if (err >= 2) { step *= 2; }
    for (v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) { out.push(+v.toPrecision(12)); }
    return out;
  }
  function extent(spec, hidden, p) {
    var xs = [], ys = [];
    spec.p.forEach(function (panel, i) {
      if (p !== undefined && p !== i) { return; }
      Object.keys(panel.s).forEach(function (name) {
        if (hidden[name]) { return; }
        panel.s[name].forEach(function (pt) { xs.push(pt[0]); ys.push(pt[1]); });
      });
    });
    if (!xs.length) { return null; }
    var x0 = Math.min.apply(null, xs), x1 = Math.max.apply(null, xs);
    var y0 = Math.min.apply(null, ys), y1 = Math.max.apply(null, ys);
    if (!spec.xlog) { var dx = (x1 - x0) * 0.04 || Math.abs(x0) * 0.1 || 1; x0 -= dx; x1 += dx; }
    else { x0 /= 1.15; x1 *= 1.15; }
    var dy = (y1 - y0) * 0.06 || Math.abs(y0) * 0.1 || 1;
    return [x0, x1, y0 - dy, y1 + dy];
  }
  function showTip(ev, spec, data, name, pt) {
    if (!tip) { tip = document.createElement("div"); tip.className = "itip"; document.body.appendChild(tip); }
    // text nodes only: a parameter value or a variant name is data, never markup
    var row = data.rows[pt[2]] || [], head = document.createElement("b"), table = document.createElement("table");
    head.textContent = name;
    data.cols.forEach(function (c, i) {
      var v = row[i], tr = table.insertRow();
      tr.insertCell().textContent = c;
      tr.insertCell().textContent = typeof v === "number" ? fmt(v) : String(v);
    });
    while (tip.firstChild) { tip.removeChild(tip.firstChild); }
    tip.appendChild(head); tip.appendChild(table);
    tip.style.display = "block";
    tip.style.left = (ev.clientX + 14) + "px";
    tip.style.top = (ev.clientY + 10) + "px";
  }
  function hideTip() { if (tip) { tip.style.display = "none"; } }
  function drawPanel(svg, spec, data, panel, hidden, dom, colour) {
    while (svg.firstChild) { svg.removeChild(svg.firstChild); }
    var tx = spec.xlog ? Math.log10 : function (v) { return v; };
    var sx = function (v) { return ML + (tx(v) - tx(dom[0])) / ((tx(dom[1]) - tx(dom[0])) || 1) * (W - ML - MR); };
    var sy = function (v) { return H - MB - (v - dom[2]) / ((dom[3] - dom[2]) || 1) * (H - MT - MB); };
    var allx = [];
    Object.keys(panel.s).forEach(function (n) { panel.s[n].forEach(function (pt) { allx.push(pt[0]); }); });
    allx = allx.filter(function (v, i, a) { return a.indexOf(v) === i; }).sort(function (a, b) { return a - b; });
    el("rect", {x: ML, y: MT, width: W - ML - MR, height: H - MT - MB, fill: "none", stroke: "#999"}, svg);
    ticks(dom[0], dom[1], spec.xlog, allx).forEach(function (t) {
      var X = sx(t);
      if (X < ML - 0.5 || X > W - MR + 0.5) { return; }
      el("line", {x1: X, x2: X, y1: MT, y2: H - MB, stroke: "#eee"}, svg);
      el("text", {x: X, y: H - MB + 14, "text-anchor": "middle", "font-size": 10}, svg).textContent = fmt(t);
    });
    ticks(dom[2], dom[3], false, []).forEach(function (t) {
      var Y = sy(t);
      if (Y < MT - 0.5 || Y > H - MB + 0.5) { return; }
      el("line", {x1: ML, x2: W - MR, y1: Y, y2: Y, stroke: "#eee"}, svg);
      el("text", {x: ML - 4, y: Y + 3, "text-anchor": "end", "font-size": 10}, svg).textContent = fmt(t);
    });
    el("text", {x: (ML + W - MR) / 2, y: H - 6, "text-anchor": "middle", "font-size": 11}, svg).textContent = spec.xl;
    el("text", {x: 12, y: (MT + H - MB) / 2, "text-anchor": "middle", "font-size": 11,
                transform: "rotate(-90 12 " + ((MT + H - MB) / 2) + ")"}, svg).textContent = spec.yl;
    if (panel.t) { el("text", {x: (ML + W - MR) / 2, y: 15, "text-anchor": "middle", "font-size": 11}, svg).textContent = panel.t; }
    var clip = "c" + Math.random().toString(36).slice(2);
    var cp = el("clipPath", {id: clip}, el("defs", {}, svg));
    el("rect", {x: ML, y: MT, width: W - ML - MR, height: H - MT - MB}, cp);
    var g = el("g", {"clip-path": "url(#" + clip + ")"}, svg);
    var pts = [];
    spec.v.forEach(function (name) {
      var s = panel.s[name];
      if (!s || hidden[name]) { return; }
      el("polyline", {points: s.map(function (p) { return sx(p[0]) + "," + sy(p[1]); }).join(" "), fill: "none",
                      stroke: colour[name], "stroke-width": 1.6}, g);
      s.forEach(function (p) {
        el("circle", {cx: sx(p[0]), cy: sy(p[1]), r: 3, fill: colour[name]}, g);
        pts.push([sx(p[0]), sy(p[1]), name, p]);
      });
    });
    svg._pts = pts;
    svg._inv = function (X, Y) {
      var fx = (X - ML) / (W - ML - MR), fy = (H - MB - Y) / (H - MT - MB);
      var xv = spec.xlog ? Math.pow(10, tx(dom[0]) + fx * (tx(dom[1]) - tx(dom[0]))) : dom[0] + fx * (dom[1] - dom[0]);
      return [xv, dom[2] + fy * (dom[3] - dom[2])];
    };
  }
  function render(holder) {
    var spec = JSON.parse(document.getElementById(holder.getAttribute("data-spec")).textContent);
    var data = JSON.parse(document.getElementById(spec.d).textContent);
    var hidden = {}, colour = {}, zoom = {};
    spec.v.forEach(function (n, i) { colour[n] = PAL[i % PAL.length]; });
    var title = document.createElement("div");
    title.className = "ifig-title";
    title.textContent = spec.t;
    holder.parentNode.insertBefore(title, holder);
    var svgs = spec.p.map(function () {
      return el("svg", {width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img"}, holder);
    });
    function redraw() {
      var shared = extent(spec, hidden);
      svgs.forEach(function (svg, i) {
        var dom = zoom[i] || shared;
        if (!dom) { while (svg.firstChild) { svg.removeChild(svg.firstChild); } return; }
        drawPanel(svg, spec, data, spec.p[i], hidden, dom, colour);
      });
    }
    svgs.forEach(function (svg, i) {
      var start = null, box = null;
      function pos(ev) { var r = svg.getBoundingClientRect(); return [(ev.clientX - r.left) * W / r.width, (ev.clientY - r.top) * H / r.height]; }
      svg.addEventListener("mousedown", function (ev) { start = pos(ev); ev.preventDefault(); });
      svg.addEventListener("mousemove", function (ev) {
        var p = pos(ev);
        if (start) {
          if (!box) { box = el("rect", {fill: "rgba(30,100,200,.15)", stroke: "#36c"}, svg); }
          box.setAttribute("x", Math.min(start[0], p[0])); box.setAttribute("y", Math.min(start[1], p[1]));
          box.setAttribute("width", Math.abs(p[0] - start[0])); box.setAttribute("height", Math.abs(p[1] - start[1]));
          return;
        }
        var best = null, bd = 100;
        (svg._pts || []).forEach(function (q) {
          var d = (q[0] - p[0]) * (q[0] - p[0]) + (q[1] - p[1]) * (q[1] - p[1]);
          if (d < bd) { bd = d; best = q; }
        });
        if (best) { showTip(ev, spec, data, best[2], best[3]); } else { hideTip(); }
      });
      svg.addEventListener("mouseleave", function () { hideTip(); start = null; if (box) { box.remove(); box = null; } });
      svg.addEventListener("mouseup", function (ev) {
        var p = pos(ev);
        if (start && Math.abs(p[0] - start[0]) > 6 && Math.abs(p[1] - start[1]) > 6 && svg._inv) {
          var a = svg._inv(Math.min(start[0], p[0]), Math.max(start[1], p[1]));
          var b = svg._inv(Math.max(start[0], p[0]), Math.min(start[1], p[1]));
          zoom[i] = [a[0], b[0], a[1], b[1]];
        }
        start = null; box = null;
        redraw();
      });
      svg.addEventListener("dblclick", function () { delete zoom[i]; redraw(); });
    });
    var legend = document.createElement("div");
    legend.className = "legend";
    legend.appendChild(document.createElement("b")).textContent = "variant";
    spec.v.forEach(function (n) {
      var lab = document.createElement("label"), box = document.createElement("input"), sw = document.createElement("span");
      box.type = "checkbox"; box.checked = true;
      box.addEventListener("change", function () { hidden[n] = !box.checked; redraw(); });
      sw.className = "sw"; sw.style.background = colour[n];
      lab.appendChild(box); lab.appendChild(sw); lab.appendChild(document.createTextNode(n));
      legend.appendChild(lab);
    });
    holder.appendChild(legend);
    redraw();
    holder.setAttribute("data-rendered", String(svgs.length));
  }
  function all() {
    var figs = document.querySelectorAll(".ifig[data-spec]");
    for (var i = 0; i < figs.length; i++) { render(figs[i]); }
    document.body.setAttribute("data-figures", String(figs.length));
  }
  if (document.readyState === "loading") { document.addEventListener("DOMContentLoaded", all); } else { all(); }
}());
"""
