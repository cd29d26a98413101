"""``suite.results.load``: a store's results as one pandas DataFrame (long or wide form).

This is the Python entry point for analysis; the CLI commands ``suite compare``, ``suite report``
and ``suite results export`` are built on it. It only reads the store (see
:mod:`suite.results.schema` for the tables).

The frame
---------
Case columns :data:`CASE_COLUMNS`:

``run`` (the run asked for, or None), ``key`` (the case key), ``technique``,
``technique_version``, ``variant``, ``fidelity`` (``model``/``simulate``/``execute``),
``profile`` (name), ``profile_hash`` (content hash of the profile with its overrides),
``workload``, ``workload_hash``, ``seed``, ``params`` (dict), ``overrides`` (dict: profile
field path -> value as given), ``duration`` (s, evaluation time), ``run_id`` (the run that
computed the case); then one ``param.NAME`` column per technique parameter and one
``set.PATH`` column per overridden profile field (the value as given, e.g. ``"10 Gbit/s"``).

Long form adds ``name, value, unit, direction`` (``lower``/``higher``/``none``) and
``n_samples`` (raw repeated measurements stored for that metric; 0 for model fidelity).
Wide form adds one float column per metric name (``metric.NAME`` when the name collides
with a case column), in one unit: a metric stored in several units of one dimension (runs of
a plugin that changed ``ms`` to ``s``, or two techniques, one in ``s`` and one in ``ms``) is
converted into the unit of its first row (rows in technique order). One technique's metric in
units of different dimensions is a :class:`~suite.errors.StoreError` naming the metric and
both; a name that different techniques store in units of different dimensions (``throughput``
in ``samples/s`` and in ``tokens/s``) is one column per dimension, ``NAME [UNIT]`` (``throughput
[samples/s]``, ``throughput [tokens/s]``; :func:`metric_of` gives the name back), so no column
holds two units.

``df.attrs`` holds ``store`` (path), ``run`` (the run's provenance dict, or None) and
``units`` / ``directions`` (long form: metric name -> unit / direction; wide form: metric
column -> the one unit of its values / direction).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from suite.errors import StoreError
from suite.results.sql import KEY_IN, select_keys
from suite.results.codec import is_missing

if TYPE_CHECKING:
    import pandas as pd

    from suite.results.store import Store

__all__ = ["load", "load_run", "open_store", "reading", "override_value", "metric_of", "CASE_COLUMNS"]

#: Case columns present in both forms, in this order (then ``param.NAME`` and ``set.PATH``).
CASE_COLUMNS = ("run", "key", "technique", "technique_version", "variant", "fidelity", "profile", "profile_hash",
                "workload", "workload_hash", "seed", "params", "overrides", "duration", "run_id")


def open_store(store: Any) -> tuple[Store, bool]:
    """A :class:`suite.results.Store` from a Store, a path, or None (the default store), read-only.

    Returns
    -------
    (Store, bool)
        The store and whether this call opened it (and so should close it).

    Raises
    ------
    StoreError
        The path does not exist or is not a store.
    """
    from suite.results.store import Store, default_store_path

    if isinstance(store, Store):
        return store, False
    if store is None:
        store = default_store_path()
    if not isinstance(store, (str, Path)):
        raise StoreError(f"store: expected a Store or a path to a .sqlite file, got {type(store).__name__}")
    return Store(store, readonly=True), True


@contextmanager
def reading(store: Any) -> Iterator[Store]:
    """``with reading(store) as st:`` the :class:`suite.results.Store` of :func:`open_store`,
    closed on leaving when this opened it.

    Raises
    ------
    StoreError
        As :func:`open_store`.
    """
    st, opened = open_store(store)
    try:
        yield st
    finally:
        if opened:
            st.close()


def load_run(st: Store, run: int | str | None, *, wide: bool, none_error: Exception
             ) -> tuple[int, dict[str, Any], pd.DataFrame]:
    """One run of an open store: its id, its provenance (:meth:`Store.run_info`) and its
    :func:`load` frame; *none_error* is raised when *run* is None (a run is needed, not the store).

    Raises
    ------
    StoreError
        Unknown run.
    """
    rid = st.resolve_run(run)
    if rid is None:
        raise none_error
    return rid, st.run_info(rid), load(st, run=rid, wide=wide)


_NUM_UNIT = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(.*?)\s*$")


def numeric_overrides(values: list[Any], unit: str | None = None) -> tuple[list[float | None], str] | None:
    """The numbers and the one unit of a column of profile-override values (``["2 Gbit/s",
    "10 Gbit/s", None]`` -> ``([2.0, 10.0, None], "Gbit/s")``), values in other units of one
    dimension converted into *unit* (default: the first value's; ``["1 GB/s", "4 Gbit/s"]`` ->
    ``([1.0, 0.5], "GB/s")``), or None when some value is no number or the units cannot be
    converted into one (such a column stays text). Missing values stay None."""
    from suite.hardware.units import convert

    nums: list[float | None] = []
    units: list[str] = []
    for v in values:
        num, u = (None, "") if is_missing(v) else override_value(v)
        if num is None and not is_missing(v):
            return None
        nums.append(num)
        units.append(u)
    given = [u for n, u in zip(nums, units) if n is not None]
    if not given:
        return None
    to = given[0] if unit is None else unit
    try:
        return [n if n is None or u == to else convert(n, u, to) for n, u in zip(nums, units)], to
    except ValueError:  # other dimensions, or a unit the registry does not know
        return None


def override_value(text: Any) -> tuple[float | None, str]:
    """Split a profile override value such as ``"10 Gbit/s"`` into ``(10.0, "Gbit/s")``.

    Parameters
    ----------
    text : str or number
        The value as given to ``suite run --set PATH=VALUE`` (stored verbatim).

    Returns
    -------
    (float or None, str)
        The number and its unit string (``""`` for a bare number); ``(None, text)`` when the
        value does not start with a number.
    """
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        return float(text), ""
    m = _NUM_UNIT.match(str(text))
    if not m:
        return None, str(text)
    return float(m.group(1)), m.group(2)


def load(store: Any = None, run: int | str | None = None, wide: bool = False, *,
         params: Mapping[str, Any] | None = None, metrics: Any = None, **filters: Any) -> pd.DataFrame:
    """Load the metrics of a store's ok cases into a :class:`pandas.DataFrame`.

    Failed, timed-out and skipped cases carry no metrics; :meth:`Store.cases` lists every case
    with its status and error.

    Parameters
    ----------
    store : Store, str, Path or None
        An open :class:`suite.results.Store`, or the path of a store file (opened read-only and
        closed again); None: ``$SUITE_STORE`` or ``results/suite.sqlite``.
    run : int, ``"latest"`` or None
        Only the cases this run asked for (computed or found already stored); None: every case
        in the store.
    wide : bool
        False (long form): one row per (case, metric), each in its stored unit. True: one row per
        case, one column per metric, each column in one unit (values only; units and directions
        are in the long form and in ``df.attrs``, keyed by column); a metric that techniques store
        in units of different dimensions is one ``NAME [UNIT]`` column per dimension.
    params : mapping, optional
        Keep cases whose technique parameters equal these values, e.g. ``{"nodes": 4}``.
    metrics : str or list of str, optional
        Keep only these metrics (long form: rows; wide form: columns).
    **filters
        Column = value (or list of values) on ``technique, variant, fidelity, profile,
        profile_hash, workload, seed, technique_version, key, run_id``.

    Returns
    -------
    DataFrame
        The frame described in :mod:`suite.results.load` ("The frame").

    Raises
    ------
    StoreError
        Unknown store, run or filter column (one line, naming it); *wide* and one technique's
        metric stored in units of different dimensions (naming the metric and both units).

    Examples
    --------
    >>> from suite.results import load                                   # doctest: +SKIP
    >>> df = load("results/suite.sqlite", run="latest", wide=True)      # doctest: +SKIP
    >>> df.groupby(["variant", "param.nodes"])["throughput"].mean()       # doctest: +SKIP
    """
    got = _read(store, run, filters)
    cases = _with_params(got.cases[got.cases["status"] == "ok"], params)
    long = got.long[got.long["key"].isin(set(cases["key"]))]
    if metrics is not None:
        long = long[long["name"].isin([metrics] if isinstance(metrics, str) else list(metrics))]
    base = _case_frame(cases, got.rid)
    if wide:
        long = _one_unit_each(long)
    df = _long_form(base, long, got.nsamp) if not wide else _wide_form(base, long)
    df = df.reset_index(drop=True)
    cols = [_column(n, base) if wide else n for n in long["name"]]  # wide: keyed by the column
    df.attrs = {"store": got.path, "run": got.info, "units": dict(zip(cols, long["unit"])),
                "directions": dict(zip(cols, long["direction"]))}
    return df


class _Read(NamedTuple):
    rid: int | None
    long: pd.DataFrame
    cases: pd.DataFrame
    info: dict[str, Any] | None
    nsamp: dict[tuple[str, str], int]
    path: str


def _read(store: Any, run: int | str | None, filters: Mapping[str, Any]) -> _Read:
    """What :func:`load` reads from the store (opened and closed here when given as a path)."""
    with reading(store) as st:
        rid = st.resolve_run(run)
        long = st.metrics(rid, wide=False, **filters)
        return _Read(rid, long, st.cases(rid, **filters), st.run_info(rid) if rid is not None else None,
                     _sample_counts(st, list(long["key"].unique())) if len(long) else {}, str(st.path))


def _with_params(cases: pd.DataFrame, params: Mapping[str, Any] | None) -> pd.DataFrame:
    """The cases whose technique parameters equal *params* (StoreError naming one no case has)."""
    for k, v in (params or {}).items():
        col = f"param.{k}"
        if col not in cases.columns:
            raise StoreError(f"params: no case has a parameter {k!r}")
        cases = cases[cases[col] == v]
    return cases


def _case_frame(cases: pd.DataFrame, rid: int | None) -> pd.DataFrame:
    """The case columns of both forms: :data:`CASE_COLUMNS`, ``param.NAME``, one ``set.PATH`` per
    overridden profile field."""
    base = cases.copy()
    base.insert(0, "run", rid)
    sets = sorted({k for ov in base["overrides"] for k in (ov or {})})
    for p in sets:
        base[f"set.{p}"] = [(ov or {}).get(p) for ov in base["overrides"]]
    pcols = [c for c in base.columns if c.startswith("param.")]
    scols = [f"set.{p}" for p in sets]
    return base[[c for c in CASE_COLUMNS if c in base.columns] + pcols + scols].reset_index(drop=True)


def _long_form(base: pd.DataFrame, long: pd.DataFrame, nsamp: Mapping[tuple[str, str], int]) -> pd.DataFrame:
    """One row per (case, metric), with ``n_samples``."""
    m = long[["key", "name", "value", "unit", "direction"]].copy()
    m["n_samples"] = [nsamp.get((k, n), 0) for k, n in zip(m["key"], m["name"])]
    return base.merge(m, on="key", how="inner")


def _wide_form(base: pd.DataFrame, long: pd.DataFrame) -> pd.DataFrame:
    """One row per case, one column per metric (``metric.NAME`` when it collides with a case column)."""
    if not len(long):
        return base
    w = long.pivot(index="key", columns="name", values="value")
    w.columns.name = None
    w = w.rename(columns={c: _column(c, base) for c in w.columns}).reset_index()
    return base.merge(w, on="key", how="left")


def _column(name: str, base: pd.DataFrame) -> str:
    """The wide column of metric *name*: ``metric.NAME`` when it collides with a case column of *base*."""
    return f"metric.{name}" if name in base.columns else name


def _one_unit_each(long: pd.DataFrame) -> pd.DataFrame:
    """*long* with each wide column in one unit: a technique's metric stored in another unit of the
    same dimension converted into its first row's (0.1547 s -> 154.7 ms); then, across techniques,
    a metric name in units of one dimension converted into the first row's, and one in units of
    several dimensions (throughput in samples/s and in tokens/s) split into one column per
    dimension, named ``NAME [UNIT]`` (:func:`metric_of` gives NAME back).

    Raises
    ------
    StoreError
        A technique's metric stored in units of different dimensions, or in one the unit registry
        does not know (one line naming the metric, the technique and both units).
    """
    # one technique's metric in two units: a plugin that changed it between runs
    mixed: list[tuple[str, str, list[str]]] = [(str(k[0]), str(k[1]), [str(u) for u in us])  # type: ignore[index]
                                               for k, us in long.groupby(["technique", "name"])["unit"].unique().items()
                                               if len(us) > 1]
    for tech, name, units in mixed:
        try:
            long = _convert_into(long, (long["technique"] == tech) & (long["name"] == name), units[0])
        except ValueError:
            bad = next(u for u in units[1:] if not _commensurable(u, units[0]))
            raise StoreError(f"metric {name!r} of {tech}: stored in {units[0]!r} and in {bad!r}, units of different "
                             "dimensions: one wide column cannot hold both (load it with wide=False)") from None
    for metric, us in long.groupby("name")["unit"].unique().items():
        if len(us) > 1:  # techniques sharing a name in other units (s and ms; samples/s and tokens/s)
            long = _across_techniques(long, str(metric), [str(u) for u in us])
    return long


def _across_techniques(long: pd.DataFrame, name: str, units: list[str]) -> pd.DataFrame:
    """*long* with metric *name*, stored by several techniques in *units* (first row's first), in
    one unit per dimension: each group of commensurable units converted into its first; when the
    groups are more than one, each group's rows renamed ``NAME [UNIT]``."""
    groups: list[list[str]] = []
    for u in units:
        group = next((g for g in groups if _commensurable(u, g[0])), None)
        if group is None:
            groups.append([u])
        else:
            group.append(u)
    rows = long["name"] == name
    for group in groups:
        long = _convert_into(long, rows & long["unit"].isin(group), group[0])
        if len(groups) > 1:
            long.loc[rows & (long["unit"] == group[0]), "name"] = f"{name} [{group[0]}]"
    return long


def _commensurable(unit: str, to: str) -> bool:
    """Whether a value in *unit* can be expressed in *to* (:func:`suite.hardware.units.convert`)."""
    from suite.hardware.units import convert

    try:
        convert(1.0, unit, to)
    except ValueError:
        return False
    return True


def _convert_into(long: pd.DataFrame, rows: Any, to: str) -> pd.DataFrame:
    """A copy of *long* with the values of *rows* converted into *to* (missing values stay missing).

    Raises
    ------
    ValueError
        A unit of *rows* cannot be converted into *to* (:func:`suite.hardware.units.convert`).
    """
    from suite.hardware.units import convert

    long = long.copy()
    for unit in long.loc[rows, "unit"].unique():
        at = rows & (long["unit"] == unit)
        long.loc[at, "value"] = [convert(v, str(unit), to) if v is not None and v == v else v
                                 for v in long.loc[at, "value"]]
        long.loc[at, "unit"] = to
    return long


_SPLIT = re.compile(r"^(.*) \[[^\[\]]*\]$")


def metric_of(column: str) -> str:
    """The metric name a column of the wide form holds: ``"throughput [tokens/s]"`` (a name that
    techniques store in units of several dimensions, split by unit) -> ``"throughput"``; any other
    column as it is (a metric name has no spaces or brackets, so the split is never ambiguous)."""
    m = _SPLIT.match(column)
    return m.group(1) if m else column


def _sample_counts(store: Store, keys: list[str]) -> dict[tuple[str, str], int]:
    return {(k, m): int(n) for k, m, n in select_keys(
        store.conn, f"SELECT c.key, s.metric, count(*) FROM cases c JOIN samples s ON s.case_id = c.id WHERE {KEY_IN} "
                    "GROUP BY c.key, s.metric", keys)}


def samples(store: Store, keys: list[str]) -> dict[tuple[str, str], list[float]]:
    """Raw samples: (case key, metric) -> values in index order (read-only query on ``samples``)."""
    out: dict[tuple[str, str], list[float]] = {}
    for k, m, v in select_keys(store.conn, f"SELECT c.key, s.metric, s.value FROM cases c JOIN samples s "
                                           f"ON s.case_id = c.id WHERE {KEY_IN} ORDER BY c.key, s.metric, s.idx", keys):
        if v is not None:
            out.setdefault((k, m), []).append(float(v))
    return out
