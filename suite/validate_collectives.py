"""The collective model against published nccl-tests measurements (``suite validate --collectives``).

Every row of ``validation/collectives/*.csv`` (one file per source: the source's URL and the
table or comment of every row, the system, the profile that describes it, nodes, GPUs per node,
message size, measured time and bus bandwidth) is priced through the same
:func:`suite.perf.collective_time` every technique calls, on the row's profile, with
``algorithm="auto"``:

    error = (predicted - measured) / measured          (time; busbw's error is its inverse)

Rows marked ``calibration = true`` informed a constant (column ``calibrates`` names which); they
are printed but left out of every error figure. The figures are the geometric mean, the median,
the mean and the largest |error| per group (:func:`group_of_row`: one node of 2, 4, 8 GPUs; 2 to
16 nodes) and size class (below / from 1 MiB), and per source table (:func:`summarize_sources`).
The geometric mean is what ASTRA-sim reports [Won23]; a few rows near 0 pull it down (7 of the
14 2-node rows within 1 % give 1.4 % where the mean is 5.7 %), so the median and mean stand beside
it. A group whose counted rows share profile, placement and size class with calibration rows
names the constants those rows set (``same setup as calibration of``): such rows are near
in-sample.

:func:`derive_efficiency` recomputes a Simple-protocol efficiency curve from its calibration
table, so ``suite.perf.network.nccl.SIMPLE_EFFICIENCY`` can be checked against the rows it came from.

References
----------
.. [Won23] W. Won et al., "ASTRA-sim2.0: Modeling Hierarchical Networks and Disaggregated
   Systems for Large-model Training at Scale", ISPASS 2023 (validation against measured
   all-reduce on HGX-H100 in the ASTRA-sim documentation).
"""

from __future__ import annotations

import csv
import math
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["CollectiveRow", "load_rows", "price_rows", "summarize", "summarize_sources", "derive_efficiency",
           "group_of_row", "error_stats", "BOUNDS", "TARGETS", "GROUPS", "SIZE_CLASSES"]

MIB = 1 << 20
#: one group per placement of the set: each node count its own (pooled, the 2-node rows would hide
#: the 8-node ones' miss, 11.9 % alone)
GROUPS = ("1 node x 2", "1 node x 4", "1 node x 8", "2 nodes", "4 nodes", "8 nodes")
SIZE_CLASSES = ("< 1 MiB", ">= 1 MiB")
#: documented bounds on the geomean |time error| per (group, size class), fractions (issue 40's
#: targets: 10 % from 1 MiB, 25 % below); tests/perf/test_validate_collectives.py keeps them
TARGETS = {"< 1 MiB": 0.25, ">= 1 MiB": 0.10}
BOUNDS = {(g, s): TARGETS[s] for g in GROUPS for s in SIZE_CLASSES}
#: a documented miss (docs/validation.md, "Where the model misses"): the only 2-GPU table (Azure
#: NC12s v3, 2 x V100 PCIe at nvidia-smi distance NODE, so NCCL's SHM transport through an Intel
#: root complex) levels off at 6.89 GB/s bus bandwidth, 0.72 of the 9.6 GB/s NCCL's own path figure
#: gives (12 GB/s / 1.2, times the ring curve); measured 12.0 %, bound 12.5 % (just above the
#: documented miss, so a regression shows), not tuned
BOUNDS[("1 node x 2", ">= 1 MiB")] = 0.125
#: a documented miss (docs/validation.md, "Where the model misses"): 8 x 8 H100 over NDR400
#: (nccl-tests issue #309, gj-aion's run) from 1 MiB, 2-8 MiB to -38 % (NCCL switches to NVLS-tree
#: later, and the network ramps slower, than the 2-node calibration table says; this run also peaks
#: 10-15 % below another user's on the same NIC count): measured 11.9 %, bound 12.5 % (as above), not tuned
BOUNDS[("8 nodes", ">= 1 MiB")] = 0.125


@dataclass(frozen=True)
class CollectiveRow:
    """One measured collective and what the model predicts for it (times in s, busbw in B/s)."""

    source: str  # csv file name
    system: str
    profile: str
    url: str
    figure: str
    nodes: int
    gpus_per_node: int
    op: str
    nbytes: int
    measured: float
    busbw: float
    calibration: bool
    calibrates: str
    predicted: float = math.nan
    algorithm: str = ""

    @property
    def error(self) -> float:
        return self.predicted / self.measured - 1.0

    @property
    def ranks(self) -> int:
        return self.nodes * self.gpus_per_node

    @property
    def predicted_busbw(self) -> float:
        """nccl-tests' bus bandwidth of the prediction: m / T x 2 (n-1)/n for all-reduce."""
        return self.nbytes / self.predicted * _bus_factor(self.op, self.ranks)


def _bus_factor(op: str, n: int) -> float:
    """nccl-tests' busbw / algbw (NVIDIA/nccl-tests doc/PERFORMANCE.md)."""
    if op == "allreduce":
        return 2 * (n - 1) / n
    if op in ("reduce-scatter", "allgather", "alltoall"):
        return (n - 1) / n
    return 1.0


def group_of_row(row: CollectiveRow) -> tuple[str, str]:
    """(group, size class) of a row; a group outside :data:`GROUPS` is named as it is."""
    g = f"1 node x {row.gpus_per_node}" if row.nodes == 1 else f"{row.nodes} nodes"
    return g, ("< 1 MiB" if row.nbytes < MIB else ">= 1 MiB")


def validation_dir() -> Path:
    from suite.resources import builtin_dir

    return builtin_dir("validation") / "collectives"


def load_rows(folder: Path | None = None) -> list[CollectiveRow]:
    """Every row of every ``*.csv`` in *folder* (default: the shipped ``validation/collectives``).

    Raises
    ------
    SuiteError
        A file without a required column, or a row whose number does not parse (one line naming
        the file, the row, the field, expected and given).
    """
    from suite.errors import SuiteError

    folder = Path(folder) if folder is not None else validation_dir()
    out = []
    for path in sorted(folder.glob("*.csv")):
        with path.open(newline="") as f:
            for i, r in enumerate(csv.DictReader(f), start=2):
                try:
                    out.append(CollectiveRow(
                        source=path.name, system=r["system"], profile=r["profile"], url=r["source_url"],
                        figure=r["figure"], nodes=int(r["n_nodes"]), gpus_per_node=int(r["gpus_per_node"]),
                        op=r["collective"], nbytes=int(r["bytes"]), measured=float(r["time_us"]) * 1e-6,
                        busbw=float(r["busbw_gbps"]) * 1e9, calibration=r["calibration"].strip().lower() == "true",
                        calibrates=r.get("calibrates", "") or ""))
                except KeyError as exc:
                    raise SuiteError(f"{path}: column {exc.args[0]!r}: expected in the header, got "
                                     f"{sorted(r)}") from None
                except ValueError as exc:
                    raise SuiteError(f"{path}: row {i}: expected numbers in n_nodes, gpus_per_node, bytes, "
                                     f"time_us, busbw_gbps, got {exc}") from None
    return out


def price_rows(rows: Sequence[CollectiveRow], get_profile: Callable[[str], Any] | None = None) -> list[CollectiveRow]:
    """Each row with ``predicted`` (s) and ``algorithm`` from :func:`suite.perf.collective_time`
    (``auto``) on the row's profile (looked up with *get_profile*: the command's context's
    :meth:`~suite.context.Context.profile`; without one, a new context's, with a DeprecationWarning)."""
    from dataclasses import replace

    from suite.perf.network import Group, collective_time

    if get_profile is None:
        from suite.context import Context

        get_profile = Context.given(None, "price_rows()").profile
    cache: dict[str, Any] = {}
    out = []
    for r in rows:
        prof = cache.get(r.profile)
        if prof is None:
            prof = cache[r.profile] = get_profile(r.profile)
        c = collective_time(r.op, r.nbytes, Group(r.gpus_per_node, r.nodes), prof)
        out.append(replace(r, predicted=c.time, algorithm=c.algorithm))
    return out


def _geomean(errors: Iterable[float]) -> float:
    xs = [max(abs(x), 1e-9) for x in errors]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else math.nan


def error_stats(errors: Sequence[float]) -> dict[str, float | None]:
    """Geometric mean, median, mean and largest of |error| (fractions; all None without errors)."""
    if not errors:
        return dict.fromkeys(("geomean |error|", "median |error|", "mean |error|", "max |error|"))
    xs = [abs(e) for e in errors]
    return {"geomean |error|": _geomean(xs), "median |error|": statistics.median(xs),
            "mean |error|": statistics.fmean(xs), "max |error|": max(xs)}


def _setup(r: CollectiveRow) -> tuple[str, int, int, str]:
    return r.profile, r.nodes, r.gpus_per_node, group_of_row(r)[1]


def _calibrated_alike(counted: Sequence[CollectiveRow], rows: Sequence[CollectiveRow]) -> list[str]:
    """The constants (last dotted name of each ``calibrates`` entry) set by calibration rows of the
    same profile, placement and size class as any of *counted*."""
    setups = {_setup(r) for r in counted}
    names = {part.split()[-1].rsplit(".", 1)[-1] for r in rows if r.calibration and _setup(r) in setups
             for part in r.calibrates.split(";") if part.strip()}
    return sorted(names)


def summarize(rows: Sequence[CollectiveRow]) -> list[dict[str, Any]]:
    """Per (group, size class): rows counted (calibration rows left out), :func:`error_stats` of
    their |time error|, the documented bound, the calibration rows left out and the constants set
    on the same setup (:func:`_calibrated_alike`)."""
    table = []
    keys = [(g, s) for g in GROUPS for s in SIZE_CLASSES]
    extra = sorted({group_of_row(r) for r in rows} - set(keys))
    for key in keys + extra:
        mine = [r for r in rows if group_of_row(r) == key]
        counted = [r for r in mine if not r.calibration]
        table.append({"group": key[0], "size": key[1], "rows": len(counted),
                      "calibration rows": len(mine) - len(counted), **error_stats([r.error for r in counted]),
                      "bound": BOUNDS.get(key), "same setup as calibration of": _calibrated_alike(counted, rows)})
    return table


def source_label(figure: str) -> str:
    """A source table's short name: its figure text up to the first " (" or ":"."""
    return figure.split(" (")[0].split(":")[0]


def summarize_sources(rows: Sequence[CollectiveRow]) -> list[dict[str, Any]]:
    """Per source table (profile, placement, :func:`source_label`) and size class with counted rows:
    the rows counted, :func:`error_stats` and the constants set on the same setup; sorted by
    system, placement, figure and size."""
    keys: dict[tuple[str, str, str, str], list[CollectiveRow]] = {}
    for r in rows:
        key = (r.profile, f"{r.nodes}x{r.gpus_per_node}", source_label(r.figure), group_of_row(r)[1])
        keys.setdefault(key, []).append(r)
    table = []
    for (profile, placement, label, size), mine in sorted(keys.items(), key=lambda kv: kv[0]):
        counted = [r for r in mine if not r.calibration]
        if counted:
            table.append({"system": profile, "nodes x GPUs": placement, "source figure": label, "size": size,
                          "rows": len(counted), **error_stats([r.error for r in counted]),
                          "same setup as calibration of": _calibrated_alike(counted, rows)})
    return table


def derive_efficiency(rows: Sequence[CollectiveRow], profile: Any, family: str,
                      sizes: Sequence[int] | None = None) -> tuple[tuple[float, float], ...]:
    """The efficiency curve of *family* (``ring``, ``nvls``, ``multi-node``) that
    makes :mod:`suite.perf.network.nccl`'s candidate of that family meet the measured time of each row:
    ``eff = (m / algbw) / (T - lat)`` at the abscissa ``m / algbw`` (s, 4 significant digits), for
    sizes 1 MiB x 4^k (those of *rows* by default), at least 0.05, rounded to 3 digits; a size
    measured faster than Simple could run it (another protocol did) gives no point.

    Parameters
    ----------
    rows : list of CollectiveRow
        The calibration table (one system, one placement).
    profile : Profile
        Its profile (launch overhead, levels).
    """
    import suite.perf.network.nccl as nccl
    from suite.perf.network.collective import _nccl_topo
    from suite.perf.network.placement import Group, _dims, _prepare

    r0 = rows[0]
    group = Group(r0.gpus_per_node, r0.nodes)
    lv, intra, _g, _t = _prepare(profile)
    topo = _nccl_topo(profile, group, _dims(lv, intra, group), lv)
    algo = {"ring": "ring", "nvls": "nvls", "multi-node": "nvls-tree"}[family]
    cand = next(c for c in nccl.candidates(r0.op, topo, algo) if c.protocol == "Simple")
    want = sizes or [MIB << (2 * k) for k in range(12)]
    out = []
    for r in sorted(rows, key=lambda r: r.nbytes):
        if r.nbytes not in want:
            continue
        spare = r.measured - cand.lat
        if spare <= r.nbytes / cand.algbw:
            continue  # faster than Simple could run it: another protocol did (LL / LL128)
        out.append((float(f"{r.nbytes / cand.algbw:.4g}"), round(max(0.05, (r.nbytes / cand.algbw) / spare), 3)))
    return tuple(out)
