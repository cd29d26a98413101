"""Execute fidelity: the stencils for real on numpy arrays, decomposed as each platform does it.

What runs, on a periodic check box of the scenario's grid (at most :data:`CHECK_MAX` points
per axis):

1. the single domain by shifted slices (:func:`suite_cerebras_stencil.kernels.apply`), its
   FLOPs counted by :class:`~suite_cerebras_stencil.kernels.Ops` and checked against
   :func:`~suite_cerebras_stencil.kernels.flop_count`;
2. the same by correlations (:func:`~suite_cerebras_stencil.kernels.apply_correlate`,
   :func:`scipy.ndimage.correlate`, TF's convolutions' stand-in) and the float64 ``np.roll``
   oracle (:func:`~suite_cerebras_stencil.kernels.apply_roll`): their relative errors are
   metrics;
3. the variant's decomposition: ``cpu-2s`` 2 x slabs, ``gpu-4x`` 4 x slabs, ``wse`` a 2-D grid
   of blocks of columns (up to 4 x 4), every halo plane, face and corner column moved with
   :func:`suite.collectives.send` into a :class:`~suite.collectives.Ledger`. The assembled
   result must equal the single domain bit for bit, and the ledger's bytes the model's
   :func:`~suite_cerebras_stencil.model.halo_bytes` summed over the ranks (otherwise a
   :class:`~suite.api.OracleMismatch`: a bug).

Then the shifted-slice kernel is timed on the scenario's grid (or a box of at most
:data:`TIME_MAX` points per axis when the grid holds more than :data:`TIME_MAX_POINTS`), on one
pinned core, ``repeats`` times (``step_time`` is their median): diffusion7 as the compiled loop
nest :func:`~suite_cerebras_stencil.kernels.diffusion7_jit` (float16:
:func:`~suite_cerebras_stencil.kernels.diffusion7_blocked`), advection in the cache-blocked form
:func:`~suite_cerebras_stencil.kernels.advection_blocked`. A STREAM triad [McCalpin95] on
the same core in the same run, interleaved with the repeats, gives ``stencil_efficiency`` =
(compulsory bytes / s of the fastest step) / (bytes / s of the fastest triad), best of each being
the least disturbed on a shared machine: the quantity behind the model's
:data:`~suite_cerebras_stencil.model.CPU_STENCIL_EFFICIENCY`.

References
----------
See :mod:`suite_cerebras_stencil.kernels` and :mod:`suite_cerebras_stencil.model`.
"""

from __future__ import annotations

import contextlib
import os
import statistics
import time

import numpy as np

from suite.api import Ledger, send

from suite_cerebras_stencil import kernels as K
from suite_cerebras_stencil.model import DTYPE_BYTES, halo_bytes

__all__ = ["CHECK_MAX", "TIME_MAX", "TIME_MAX_POINTS", "NP_DTYPES", "slab_run", "block_run", "stream_triad",
           "pinned", "time_kernel", "measure_efficiency", "evaluate"]

#: points per axis of the box the oracle / decomposition checks run on
CHECK_MAX = 32
#: grids above this many points are timed on a box of TIME_MAX points per axis
TIME_MAX_POINTS = 1 << 22
TIME_MAX = 160
NP_DTYPES = {"fp32": np.float32, "fp16": np.float16}


# --------------------------------------------------------------------------- decompositions


def _run_padded(kernel: str, padded: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    if kernel == "diffusion7":
        return (K.diffusion7_padded(padded[0]),)
    return K.advection_padded(*padded)


def slab_run(kernel: str, fields: tuple[np.ndarray, ...], parts: int, ledger: Ledger | None = None,
             tag: str = "halo") -> tuple[np.ndarray, ...]:
    """The kernel on *parts* x-slabs exchanging halo planes, reassembled.

    Rank r holds ``np.array_split`` slab r of every field, sends its first x-plane to rank
    r-1 and its last to rank r+1 (periodic), pads itself with the two planes it received
    (y and z wrap locally), and runs the padded kernel.

    Parameters
    ----------
    kernel : str
    fields : tuple of ndarray, shape (nx, ny, nz) each
    parts : int
        1 <= parts <= nx.
    ledger : Ledger, optional
        Records every plane sent.

    Returns
    -------
    tuple of ndarray, shape (nx, ny, nz)
    """
    nx = fields[0].shape[0]
    if not 1 <= parts <= nx:
        raise ValueError(f"parts must be in [1, nx={nx}], got {parts}")
    slabs = [np.array_split(f, parts, axis=0) for f in fields]
    outs: list[list[np.ndarray]] = [[] for _ in fields]
    for r in range(parts):
        left, right = (r - 1) % parts, (r + 1) % parts
        padded = []
        for fi, f in enumerate(fields):
            own = slabs[fi][r]
            lo = send(ledger, left, r, slabs[fi][left][-1:], f"{tag}:f{fi}:+x") if parts > 1 else own[-1:]
            hi = send(ledger, right, r, slabs[fi][right][:1], f"{tag}:f{fi}:-x") if parts > 1 else own[:1]
            block = np.concatenate([lo, own, hi], axis=0)
            padded.append(np.pad(block, ((0, 0), (1, 1), (1, 1)), mode="wrap"))
        for fi, o in enumerate(_run_padded(kernel, tuple(padded))):
            outs[fi].append(o)
    return tuple(np.concatenate(o, axis=0) for o in outs)


def _split_bounds(n: int, p: int) -> list[tuple[int, int]]:
    b = np.linspace(0, n, p + 1).round().astype(int)
    return [(int(b[i]), int(b[i + 1])) for i in range(p)]


def block_run(kernel: str, fields: tuple[np.ndarray, ...], px: int, py: int, ledger: Ledger | None = None,
              tag: str = "halo") -> tuple[np.ndarray, ...]:
    """The kernel on a px x py grid of blocks of (x, y) columns (the wafer's layout), reassembled.

    Block (I, J) receives from its four neighbours the face rows/columns of every input field
    next to it (x faces: ``by x nz``, y faces: ``bx x nz``) and, for advection, the two corner
    columns the kernel reads (:func:`~suite_cerebras_stencil.kernels.halo_corners`: v from
    (I+1, J-1), u from (I-1, J+1)); z wraps locally (a column lives in one PE).

    Parameters
    ----------
    px, py : int
        Blocks along x and y, 2 <= p <= n (so no block is its own neighbour).

    Returns
    -------
    tuple of ndarray, shape (nx, ny, nz)
    """
    nx, ny, nz = fields[0].shape
    if not (2 <= px <= nx and 2 <= py <= ny):
        raise ValueError(f"px, py must be in [2, n], got {px} x {py} for {nx} x {ny}")
    xb, yb = _split_bounds(nx, px), _split_bounds(ny, py)
    names = ("u", "v", "w")
    corners = {(names.index(f), dx, dy) for f, dx, dy in K.halo_corners(kernel)}

    def blk(f, I, J):
        (x0, x1), (y0, y1) = xb[I % px], yb[J % py]
        return f[x0:x1, y0:y1]

    out = [np.empty_like(f) for f in fields]
    for I in range(px):
        for J in range(py):
            rank = I * py + J
            padded = []
            for fi, f in enumerate(fields):
                own = blk(f, I, J)
                bx, by = own.shape[:2]
                p = np.zeros((bx + 2, by + 2, nz), dtype=f.dtype)
                p[1:-1, 1:-1] = own

                def recv(dI, dJ, part, what):
                    src = ((I + dI) % px) * py + (J + dJ) % py
                    return send(ledger, src, rank, part, f"{tag}:f{fi}:{what}")

                p[0, 1:-1] = recv(-1, 0, blk(f, I - 1, J)[-1], "-x")
                p[-1, 1:-1] = recv(+1, 0, blk(f, I + 1, J)[0], "+x")
                p[1:-1, 0] = recv(0, -1, blk(f, I, J - 1)[:, -1], "-y")
                p[1:-1, -1] = recv(0, +1, blk(f, I, J + 1)[:, 0], "+y")
                for (cf, dx, dy) in corners:
                    if cf == fi:
                        nb = blk(f, I + dx, J + dy)
                        col = nb[0 if dx > 0 else -1, 0 if dy > 0 else -1]
                        p[0 if dx < 0 else -1, 0 if dy < 0 else -1] = recv(dx, dy, col, f"corner{dx:+d}{dy:+d}")
                padded.append(np.pad(p, ((0, 0), (0, 0), (1, 1)), mode="wrap"))
            (x0, x1), (y0, y1) = xb[I], yb[J]
            for fi, o in enumerate(_run_padded(kernel, tuple(padded))):
                out[fi][x0:x1, y0:y1] = o
    return tuple(out)


def block_halo_expected(kernel: str, nx: int, ny: int, nz: int, px: int, py: int, d: int) -> int:
    """Ledger bytes of one :func:`block_run` step from the model's per-PE formula, summed."""
    tot = 0
    for (x0, x1) in _split_bounds(nx, px):
        for (y0, y1) in _split_bounds(ny, py):
            tot += int(halo_bytes(kernel, x1 - x0, y1 - y0, nz, d, "wse"))
    return tot


# --------------------------------------------------------------------------- timing


@contextlib.contextmanager
def pinned(core: int | None = None):
    """Pin this process to one CPU core (the last it may use) while timing; restore afterwards."""
    if not hasattr(os, "sched_getaffinity"):
        yield None
        return
    before = os.sched_getaffinity(0)
    use = core if core is not None else max(before)
    try:
        os.sched_setaffinity(0, {use})
        yield use
    finally:
        os.sched_setaffinity(0, before)


def stream_triad(nbytes: int, block: int = 1 << 15) -> float:
    """One STREAM triad ``a = b + s c`` on float64 arrays of *nbytes* each, blocked so ``s c``
    stays in cache; returns bytes/s counted the STREAM way (3 x 8 B per element) [McCalpin95]."""
    n = max(block, nbytes // 8)
    a, b, c = np.zeros(n), np.full(n, 2.0), np.full(n, 0.5)
    tmp = np.empty(block)
    t0 = time.perf_counter()
    for i in range(0, n, block):
        j = min(i + block, n)
        t = tmp[: j - i]
        np.multiply(c[i:j], 3.0, out=t)
        np.add(b[i:j], t, out=a[i:j])
    return 24.0 * n / (time.perf_counter() - t0)


def timed_path(kernel: str, dtype: str) -> str:
    """The kernel function :func:`time_kernel` times for *kernel* in *dtype*."""
    if kernel == "diffusion7":
        return "diffusion7_jit" if dtype in ("fp32", "fp64") else "diffusion7_blocked"
    return "advection_blocked"


def _timed_step(kernel: str, fields: tuple[np.ndarray, ...]):
    """A closure running one step of the timed kernel (cache-blocked, into preallocated outputs)."""
    if kernel == "diffusion7":
        p = K.pad_wrap(fields[0])
        out = np.empty_like(fields[0])
        if p.dtype in (np.float32, np.float64):
            K.diffusion7_jit(p[:3, :3, :3], out[:1, :1, :1])  # compile (or load the cache) before timing
            return lambda: K.diffusion7_jit(p, out)
        tmp = np.empty((4,) + fields[0].shape[1:], dtype=fields[0].dtype)
        return lambda: K.diffusion7_blocked(p, out, tmp=tmp)
    padded = tuple(K.pad_wrap(f) for f in fields)
    outs = tuple(np.empty_like(f) for f in fields)
    return lambda: K.advection_blocked(*padded, out=outs)


def time_kernel(kernel: str, shape: tuple[int, int, int], dtype: str = "fp32", repeats: int = 5, seed: int = 0,
                triad_bytes: int | None = None) -> dict:
    """Time one step of *kernel* on *shape* and a STREAM triad, interleaved, on one pinned core.

    Returns
    -------
    dict
        ``samples`` (s per step), ``step_time`` (median), ``step_min``, ``triad_samples`` and
        ``triad`` (B/s, the best repeat), ``bytes_per_s`` (compulsory bytes per point x points /
        step_min), ``efficiency`` (bytes_per_s / triad: best of each, the least disturbed repeats
        on a shared machine), ``core``.
    """
    rng = np.random.default_rng(seed)
    fields = K.random_fields(kernel, shape, rng, NP_DTYPES[dtype])
    n = int(np.prod(shape))
    d = DTYPE_BYTES[dtype]
    step = _timed_step(kernel, fields)
    # triad arrays as large as the grid's fields (in cache with a small grid, like the stencil),
    # between 8 MiB and 64 MiB each
    tb = triad_bytes or min(64 << 20, max(8 << 20, n * d * (K.FIELDS_IN[kernel] + K.FIELDS_OUT[kernel])))
    samples, triads = [], []
    with pinned() as core:
        step()
        stream_triad(tb)  # warm-up: page in
        for _ in range(max(1, repeats)):
            t0 = time.perf_counter()
            step()
            samples.append(time.perf_counter() - t0)
            triads.append(stream_triad(tb))
    st = statistics.median(samples)
    bpp = K.bytes_per_point(kernel, d) * n
    # the efficiency compares the least disturbed repeat of each (best of, as timeit advises on a
    # shared machine): the fastest step over the fastest triad
    best_bps, best_triad = bpp / min(samples), max(triads)
    return {"samples": samples, "step_time": st, "step_min": min(samples), "triad_samples": triads,
            "triad": best_triad, "bytes_per_s": best_bps, "efficiency": best_bps / best_triad, "core": core,
            "points": n}


def measure_efficiency(n: int = 256, repeats: int = 7, kernel: str = "diffusion7", dtype: str = "fp32") -> dict:
    """The CPU stencil efficiency as :data:`~suite_cerebras_stencil.model.CPU_STENCIL_EFFICIENCY`
    defines it: :func:`time_kernel` on an n^3 grid (default 256^3 fp32 diffusion7)."""
    return time_kernel(kernel, (n, n, n), dtype, repeats)


# --------------------------------------------------------------------------- evaluate


def _rel_err(xs, ref) -> float:
    scale = max(float(np.max(np.abs(r))) for r in ref) or 1.0
    return max(float(np.max(np.abs(np.asarray(x, dtype=np.float64) - r))) for x, r in zip(xs, ref)) / scale


#: oracle tolerance (relative to the largest |value|) per dtype
TOL = {"fp32": 1e-5, "fp16": 5e-3}


def _decomposed_check(kernel: str, fields, single, variant: str, box, d: int, ledger: Ledger) -> tuple[str, int]:
    """Run the variant's decomposition (WSE: blocks of columns; CPU: x-slabs) on the check box;
    it must equal the single domain bit for bit and its ledger the model's halo bytes.

    Returns
    -------
    (layout description, model halo bytes per step over all ranks)

    Raises
    ------
    suite.api.OracleMismatch
        The decomposition differs from the single domain, or the ledger from the model.
    """
    from suite.api import OracleMismatch

    if variant == "wse":
        px, py = min(4, box[0]), min(4, box[1])
        dec = block_run(kernel, fields, px, py, ledger)
        expect = block_halo_expected(kernel, *box, px, py, d)
        layout = f"{px} x {py} blocks of columns"
    else:
        parts = 2 if variant == "cpu-2s" else 4
        dec = slab_run(kernel, fields, parts, ledger)
        expect = parts * int(halo_bytes(kernel, 0, box[1], box[2], d, variant))
        layout = f"{parts} x-slabs"
    if not all(np.array_equal(a, b) for a, b in zip(dec, single)):
        raise OracleMismatch(f"cerebras-stencil execute: {layout} differ from the single domain")
    if ledger.total_bytes != expect:
        raise OracleMismatch(f"cerebras-stencil execute: ledger {ledger.total_bytes} B != model {expect} B ({layout})")
    return layout, expect


def _checked_step(kernel: str, dtype: str, box: tuple[int, ...], seed: int):
    """One step of *kernel* on random fields of shape *box* in *dtype*, checked against its oracles.

    Returns ``(fields, single, ops, f_model, oracle_err, corr_err)``: the input fields, the
    single-domain result, its :class:`kernels.Ops` (FLOPs counted), the model's FLOP count, and
    the relative errors of the slices and of the correlate form against the float64 roll oracle.

    Raises
    ------
    suite.api.OracleMismatch
        The counted FLOPs differ from the model's, or an error exceeds :data:`TOL`.
    """
    from suite.api import OracleMismatch

    rng = np.random.default_rng(seed)
    fields = K.random_fields(kernel, box, rng, NP_DTYPES[dtype])
    ops = K.Ops()
    single = K.apply(kernel, fields, ops=ops)
    f_model = K.flop_count(kernel, *box)
    if ops.flops != f_model:
        raise OracleMismatch(f"cerebras-stencil execute: counted {ops.flops} FLOPs, model says {f_model}")
    ref = K.apply_roll(kernel, tuple(f.astype(np.float64) for f in fields))
    oracle_err = _rel_err(single, ref)
    corr = K.apply_correlate(kernel, fields)
    corr_err = _rel_err(corr, ref)
    if oracle_err > TOL[dtype] or corr_err > TOL[dtype]:
        raise OracleMismatch(f"cerebras-stencil execute: {kernel} differs from the float64 oracle "
                             f"(slices {oracle_err:.3g}, correlate {corr_err:.3g}; tolerance {TOL[dtype]:g})")
    return fields, single, ops, f_model, oracle_err, corr_err


def evaluate(scenario, repeats: int = 5):
    """Execute fidelity (see the module docstring).

    Parameters
    ----------
    scenario : suite.Scenario
        ``params``: ``kernel``, ``nx``, ``ny``, ``nz``, ``dtype`` (``steps`` and ``io`` do not
        change what runs: one step is timed); ``variant`` picks the decomposition.
    repeats : int
        Timed repeats.

    Returns
    -------
    suite.Result
        ``step_time`` (s, median, samples), ``points_per_s``, ``bytes_per_s``, ``stream_triad``
        (B/s), ``stencil_efficiency``, ``oracle_error`` and ``correlate_error`` (relative),
        ``decomposed_equal`` (1 = bit for bit), ``ledger_halo_bytes`` / ``model_halo_bytes``
        (B per step, all ranks), ``flops_counted`` / ``flops_model`` (one step on the check box).

    Raises
    ------
    suite.api.OracleMismatch
        A result differs from its oracle beyond :data:`TOL`, the decomposition differs from the
        single domain, or the ledger or the FLOP count disagrees with the model (a bug).
    """
    from suite.api import Result

    p = scenario.params
    kernel, dtype = p["kernel"], p["dtype"]
    grid = (int(p["nx"]), int(p["ny"]), int(p["nz"]))
    d = DTYPE_BYTES[dtype]
    box = tuple(min(n, CHECK_MAX) for n in grid)
    fields, single, ops, f_model, oracle_err, corr_err = _checked_step(kernel, dtype, box, scenario.seed)
    ledger = Ledger()
    layout, expect = _decomposed_check(kernel, fields, single, scenario.variant, box, d, ledger)
    equal = True  # _decomposed_check raised otherwise

    n = grid[0] * grid[1] * grid[2]
    tshape = grid if n <= TIME_MAX_POINTS else tuple(min(g, TIME_MAX) for g in grid)
    tm = time_kernel(kernel, tshape, dtype, repeats, scenario.seed)
    res = Result()
    res.add("step_time", tm["step_time"], "s", "lower", samples=tm["samples"])
    res.add("points_per_s", tm["points"] / tm["step_time"], "1/s", "higher")
    res.add("bytes_per_s", tm["bytes_per_s"], "B/s", "higher")
    res.add("stream_triad", tm["triad"], "B/s", "higher", samples=tm["triad_samples"])
    res.add("stencil_efficiency", tm["efficiency"], "1", "higher")
    res.add("oracle_error", oracle_err, "1", "lower")
    res.add("correlate_error", corr_err, "1", "lower")
    res.add("decomposed_equal", 1.0 if equal else 0.0, "1", "higher")
    res.add("ledger_halo_bytes", ledger.total_bytes, "B", "none")
    res.add("model_halo_bytes", expect, "B", "none")
    res.add("flops_counted", ops.flops, "FLOP", "none")
    res.add("flops_model", f_model, "FLOP", "none")
    res.artifacts["setup"] = {"kernel": kernel, "dtype": dtype, "grid": list(grid), "check_box": list(box),
                              "timed_grid": list(tshape), "layout": layout, "repeats": repeats,
                              "pinned_core": tm["core"], "messages": ledger.count,
                              "timed_path": timed_path(kernel, dtype)}
    return res
