"""What a figure of a technique's cases is drawn against: the swept numeric axes, the metrics that
move, the slice of cases with every other swept dimension held fixed, and the captions that say so
(shared by the PNG figures of :mod:`suite.report.plots` and the interactive ones of
:mod:`suite.report.interactive`)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["numeric_axis", "axis_candidates", "metric_candidates", "label", "val", "short", "varying_columns",
           "follows", "has_line", "slice_rows", "axis_slice", "categorical_columns", "axis_caption"]

_SCALE = re.compile(r"(nodes|workers|gpus|devices|machines|ranks|procs|servers|depth|layers|stages|batch|size|seq)",
                    re.I)

def numeric_axis(values: Sequence[Any], unit: str | None = None) -> tuple[list[float] | None, str]:
    """Numbers for an axis column, or (None, "") when the column is not numeric (a value missing,
    a bool, text, units of different dimensions).

    Numbers stay as they are; override strings like ``"10 Gbit/s"`` become 10.0 with the unit
    ``"Gbit/s"``, values in other units of one dimension converted into *unit* (default: the
    first value's: ``"1 GB/s"``, ``"4 Gbit/s"`` -> 1.0, 0.5 in ``"GB/s"``), so every panel of a
    figure passes the unit of its axis
    (:func:`suite.results.load.numeric_overrides`).
    """
    from suite.results.load import numeric_overrides

    got = numeric_overrides(list(values), unit)
    if got is None or any(v is None for v in got[0]):
        return None, ""
    return [float(v) for v in got[0] if v is not None], got[1]


def axis_candidates(df: pd.DataFrame) -> list[tuple[str, str]]:
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


def metric_candidates(df: pd.DataFrame, directions: dict[str, str]) -> list[str]:
    out = []
    for name, d in directions.items():
        if d not in ("higher", "lower") or name not in df.columns:
            continue
        vals = df[name].dropna()
        if len(vals) and vals.nunique() > 1:
            out.append(name)
    return sorted(out)


def label(col: str, unit: str) -> str:
    name = col.split(".", 1)[1] if col.startswith(("param.", "set.")) else col
    return f"{name} ({unit})" if unit and unit != "1" else name


_CONTEXT = ("profile", "workload", "fidelity", "seed")


def val(v: Any) -> str:
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 1e15 else f"{v:g}"
    return str(v)


def short(col: str, metrics: Iterable[str] = ()) -> str:
    """A column's heading: a profile path without ``set.``, a parameter without ``param.`` unless
    its name is a case column or one of *metrics* (:func:`suite.declaration.results.param_column`)."""
    from suite.declaration.results import param_column

    if col.startswith("param."):
        return param_column(col[len("param."):], metrics)
    return col.split(".", 1)[1] if col.startswith("set.") else col


def varying_columns(df: pd.DataFrame) -> list[str]:
    """Scenario columns (profile, workload, fidelity, seed, ``param.*``, ``set.*``) with more
    than one value in *df*."""
    out = []
    for c in df.columns:
        if c in _CONTEXT or c.startswith(("param.", "set.")):
            col = df[c].tolist()
            first = col[0] if col else None
            if all(type(v) is type(first) and v == first for v in col):  # noqa: E721 - cheap pass first
                continue
            if len({json.dumps(v, sort_keys=True, default=str) for v in col}) > 1:
                out.append(c)
    return out


def follows(df: pd.DataFrame, col: str, x: str) -> bool:
    """Whether the parameter or profile field *col* is a function of *x* in *df* (they are swept
    together): it then moves along the x axis and needs no fixing. A profile, workload, fidelity
    or seed never moves along an axis."""
    if not col.startswith(("param.", "set.")):
        return False
    pairs = {(str(a), str(b)) for a, b in zip(df[x], df[col])}
    return len({a for a, _b in pairs}) == len(pairs)


def has_line(df: pd.DataFrame, x: str, facet: str | None) -> bool:
    """Whether some variant (in some panel) has at least two distinct x values."""
    keys = [facet, "variant"] if facet else ["variant"]
    return any(g[x].astype(str).nunique() >= 2 for _k, g in df.groupby(keys, sort=False))


def slice_rows(df: pd.DataFrame, context: list[str], x: str, facet: str | None = None
               ) -> tuple[pd.DataFrame | None, list[tuple[str, Any]]]:
    """The rows of the most populated combination of *context* values in which some variant has
    at least two x values, and that combination as (column, value) pairs; (None, []) if none."""
    if not context:
        return (df, []) if has_line(df, x, facet) else (None, [])
    keys = [tuple(str(v) for v in row) for row in df[context].itertuples(index=False, name=None)]
    counts: dict[tuple[str, ...], int] = {}
    for k in keys:
        counts[k] = counts.get(k, 0) + 1
    for k, _n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])):
        mask = [kk == k for kk in keys]
        sub = df[mask]
        if has_line(sub, x, facet):
            return sub, list(zip(context, sub[context].iloc[0].tolist()))
    return None, []


def axis_slice(df: pd.DataFrame, x: str, axes: list[tuple[str, str]], varying: list[str]
               ) -> tuple[pd.DataFrame | None, list[tuple[str, Any]], tuple[str, str] | None]:
    """The rows to draw against axis *x*: one panel per value of the next swept number (*facet*),
    or, when no other number is swept, of a swept text parameter or profile field
    (:func:`categorical_columns`: ``communication.library`` = nccl, mpi), so every value is shown;
    if that gives no line (the two move together), no panels. Every other varying dimension that
    does not move with *x* is held fixed (never averaged), at :func:`slice_rows`'s combination.

    Returns
    -------
    (DataFrame or None, list of (column, value), (column, unit) or None)
        The rows (None: no variant has two x values however sliced), the fixed values, the facet.
    """
    others = [a for a in axes if a[0] != x]
    sub: pd.DataFrame | None = None
    fixed: list[tuple[str, Any]] = []
    facet: tuple[str, str] | None = None
    facets = [others[0]] if others else [(c, "") for c in categorical_columns(df, varying, axes, x)]
    for facet in facets + [None]:
        fcol = facet[0] if facet else None
        context = [c for c in varying if c not in (x, fcol) and not follows(df, c, x)]
        sub, fixed = slice_rows(df, context, x, fcol)
        if sub is not None:
            break
    return sub, fixed, facet


def categorical_columns(df: pd.DataFrame, varying: list[str], axes: list[tuple[str, str]], x: str) -> list[str]:
    """The swept parameters and profile fields of *varying* that are no axis (not in *axes*) and
    hold text or booleans in every row (``set.communication.library``, ``param.algorithm``), that do
    not move with *x*: the dimensions a figure can give one panel per value."""
    on_axis = {c for c, _u in axes}
    return [c for c in varying if c.startswith(("param.", "set.")) and c not in on_axis
            and all(isinstance(v, (str, bool)) for v in df[c]) and not follows(df, c, x)]


def axis_caption(y: str, shown: str, direction: str | None, x: str, xunit: str, facet: tuple[str, str] | None,
                 fixed: list[tuple[str, Any]], note: str = "") -> str:
    """A line figure's caption: *y* (in the unit *shown*) against *x*, *note* (what moves with x,
    or the log axis), the panels and the dimensions held fixed."""
    return (f"{y} ({shown + ', ' if shown not in ('', '1') else ''}{direction} is better) against "
            f"{label(x, xunit)}{note}, one line per variant"
            + (f", one panel per {label(facet[0], facet[1])}" if facet else "")
            + ("; the other swept dimensions fixed at " + ", ".join(f"{short(c)}={val(v)}" for c, v in fixed)
               if fixed else ""))
