"""A batch-streaming distributed query engine over K simulated GPU workers (the execute fidelity).

What it re-implements of Theseus (Aramburu et al., arXiv 2508.05029, abstract): data move in
batches between memory tiers (device HBM, page-locked host memory handed out in pages of one size,
disk); every shuffle and broadcast between workers is a real message. The seven TPC-H queries
:data:`suite_theseus.tpch.QUERIES` are hand-written physical plans (scan -> filter -> hash join /
shuffle / broadcast -> two-phase aggregation -> top-k), operators on numpy columns.

Placement (the "storage layout"): ``lineitem`` and ``orders`` are hash-partitioned on the order
key (co-partitioned, so their join is local), ``customer`` on the customer key, ``part`` on the
part key, ``supplier`` on the supplier key; ``nation`` and ``region`` live on worker 0 and are
broadcast when a plan needs them. Worker of a key: :func:`owner` (a multiplicative hash).

Memory tiers per worker (:class:`Tiers`): a byte budget for device memory (``hbm_budget``);
intermediate batches (received shuffle data, partial aggregates) are kept there while they fit.
When one does not fit, the least recently stored resident batches are spilled to the host pool
(:class:`PagePool`: fixed-size pages in one numpy buffer, Theseus's design; or
:class:`FirstFitPool`: variable-size first-fit blocks, the ``variable-host-alloc`` variant), and
when the pool has no room, to a file in a temporary folder. ``in-memory`` has no spill tier:
exceeding the budget raises :class:`OutOfDeviceMemory`.

Every message goes through :func:`suite.collectives.send` / :func:`~suite.collectives.recv`
into one :class:`~suite.collectives.Ledger` with tags ``shuffle``, ``broadcast`` and ``gather``.
The byte counters of :class:`Stats` (scanned, shuffled, broadcast, gathered, spilled) are what the
model's coefficient table is measured from (:mod:`suite_theseus.calibrate`).
"""

from __future__ import annotations

import os
import tempfile
from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from suite.api import Ledger, recv, send

from suite_theseus import tpch

__all__ = ["owner", "PagePool", "FirstFitPool", "Tiers", "OutOfDeviceMemory", "Stats", "Engine", "run_query"]

Batch = dict  # column name -> 1-d numpy array, all of one length

_HASH = np.uint64(0x9E3779B97F4A7C15)  # Knuth's multiplicative constant (2^64 / golden ratio)


def owner(keys: np.ndarray, k: int) -> np.ndarray:
    """Worker of each key: ``((key * 0x9E3779B97F4A7C15 mod 2^64) >> 32) mod k`` (Knuth, TAOCP
    vol. 3, 6.4, multiplicative hashing). Shape of *keys*, dtype int64."""
    if k == 1:
        return np.zeros(keys.shape, dtype=np.int64)
    h = (keys.astype(np.uint64) * _HASH) >> np.uint64(32)
    return (h % np.uint64(k)).astype(np.int64)


def nbytes(batch: Batch) -> int:
    """Bytes of a batch's columns."""
    return int(sum(a.nbytes for a in batch.values()))


def nrows(batch: Batch) -> int:
    return int(next(iter(batch.values())).shape[0]) if batch else 0


def take(batch: Batch, idx) -> Batch:
    return {k: v[idx] for k, v in batch.items()}


def concat(batches: list[Batch], like: Batch | None = None) -> Batch:
    batches = [b for b in batches if b]
    if not batches:
        return {k: v[:0] for k, v in (like or {}).items()}
    return {k: np.concatenate([b[k] for b in batches]) for k in batches[0]}


# --------------------------------------------------------------------------- host memory pools


class OutOfDeviceMemory(RuntimeError):
    """A batch does not fit in device memory and the variant has no spill tier (``in-memory``)."""


class PagePool:
    """Page-locked host memory as pages of one size in one numpy buffer (Theseus's allocator).

    A batch of ``s`` bytes takes ``ceil(s / page_size)`` pages, any free ones: no external
    fragmentation, internal waste < one page per batch. Columns are really copied into the pages
    (:meth:`put`) and out again (:meth:`get`).

    Parameters
    ----------
    page_size : int
        Bytes per page (>= 1).
    pages : int
        Pages in the pool (>= 0); the buffer holds ``page_size * pages`` bytes.
    """

    kind = "fixed-pages"

    def __init__(self, page_size: int, pages: int):
        if page_size < 1 or pages < 0:
            raise ValueError(f"page pool: page_size >= 1 and pages >= 0 expected, got {page_size}, {pages}")
        self.page_size, self.pages = int(page_size), int(pages)
        self.buf = np.empty(self.page_size * self.pages, dtype=np.uint8)
        self._free = list(range(self.pages - 1, -1, -1))  # a stack of free page numbers
        self._held: dict[int, tuple[list[int], list[tuple], int]] = {}
        self._next = 0
        self.peak_used = 0
        self.failures = 0

    @property
    def free_pages(self) -> int:
        return len(self._free)

    @property
    def used_pages(self) -> int:
        return self.pages - len(self._free)

    @property
    def used_bytes(self) -> int:
        return sum(s for _, _, s in self._held.values())

    @property
    def waste_bytes(self) -> int:
        """Bytes held in pages but not used by the batches in them (internal fragmentation)."""
        return sum(len(p) * self.page_size - s for p, _, s in self._held.values())

    @property
    def held(self) -> int:
        return len(self._held)

    def pages_for(self, size: int) -> int:
        return -(-int(size) // self.page_size)

    def _segments(self, pages: list[int], size: int) -> list[tuple[int, int]]:
        """The batch's bytes as (buffer offset, length) segments: runs of consecutive pages merged,
        so a batch in contiguous pages is one copy per column."""
        ps, segs = self.page_size, []
        left = size
        for p in pages:
            n = min(ps, left)
            if segs and segs[-1][0] + segs[-1][1] == p * ps:
                segs[-1][1] += n
            else:
                segs.append([p * ps, n])
            left -= n
        return segs

    def _copy(self, cols: list[np.ndarray], segs, into_pool: bool) -> None:
        """Copy the byte views *cols*, back to back, into (or out of) the segments."""
        buf, si, so = self.buf, 0, 0
        for v in cols:
            done, n = 0, v.size
            while done < n:
                off, length = segs[si]
                chunk = min(length - so, n - done)
                if into_pool:
                    buf[off + so:off + so + chunk] = v[done:done + chunk]
                else:
                    v[done:done + chunk] = buf[off + so:off + so + chunk]
                done += chunk
                so += chunk
                if so == length:
                    si, so = si + 1, 0

    def put(self, batch: Batch) -> int | None:
        """Copy *batch* into free pages; its handle, or None when too few pages are free."""
        size = nbytes(batch)
        need = self.pages_for(size)
        if need > len(self._free):
            self.failures += 1
            return None
        pages = [self._free.pop() for _ in range(need)]
        meta = []
        segs = self._segments(pages, size)
        cols = []
        for name, col in batch.items():
            meta.append((name, col.dtype, col.shape[0]))
            cols.append(np.ascontiguousarray(col).reshape(-1).view(np.uint8))
        self._copy(cols, segs, into_pool=True)
        h = self._next
        self._next += 1
        self._held[h] = (pages, meta, size)
        self.peak_used = max(self.peak_used, self.used_pages)
        return h

    def get(self, handle: int, free: bool = True) -> Batch:
        """Copy the batch out of its pages (and free them)."""
        pages, meta, size = self._held[handle]
        out = {name: np.empty(length, dtype=dtype) for name, dtype, length in meta}
        self._copy([a.view(np.uint8) for a in out.values()], self._segments(pages, size), into_pool=False)
        if free:
            self.free(handle)
        return out

    def free(self, handle: int) -> None:
        pages, _, _ = self._held.pop(handle)
        self._free.extend(reversed(pages))


class FirstFitPool:
    """Variable-size host buffers, first fit in one numpy buffer (the ``variable-host-alloc``
    baseline): a batch takes one contiguous block of exactly its size; freed blocks merge with
    free neighbours. External fragmentation can refuse a batch although enough bytes are free.

    Parameters
    ----------
    capacity : int
        Bytes in the pool.
    """

    kind = "first-fit"

    def __init__(self, capacity: int):
        self.capacity = int(capacity)
        self.buf = np.empty(self.capacity, dtype=np.uint8)
        self._holes: list[list[int]] = [[0, self.capacity]] if self.capacity else []  # sorted [offset, size]
        self._held: dict[int, tuple[int, list[tuple], int]] = {}
        self._next = 0
        self.peak_used = 0
        self.failures = 0
        self.page_size = 1

    @property
    def used_bytes(self) -> int:
        return sum(s for _, _, s in self._held.values())

    @property
    def free_bytes(self) -> int:
        return sum(s for _, s in self._holes)

    @property
    def largest_hole(self) -> int:
        return max((s for _, s in self._holes), default=0)

    @property
    def waste_bytes(self) -> int:
        return 0

    @property
    def held(self) -> int:
        return len(self._held)

    def put(self, batch: Batch) -> int | None:
        size = nbytes(batch)
        for hole in self._holes:
            if hole[1] >= size:
                off = hole[0]
                hole[0] += size
                hole[1] -= size
                if hole[1] == 0:
                    self._holes.remove(hole)
                break
        else:
            self.failures += 1
            return None
        meta, o = [], off
        for name, col in batch.items():
            src = np.ascontiguousarray(col).reshape(-1).view(np.uint8)
            self.buf[o:o + src.size] = src
            meta.append((name, col.dtype, col.shape[0]))
            o += src.size
        h = self._next
        self._next += 1
        self._held[h] = (off, meta, size)
        self.peak_used = max(self.peak_used, self.used_bytes)
        return h

    def get(self, handle: int, free: bool = True) -> Batch:
        off, meta, size = self._held[handle]
        out, o = {}, off
        for name, dtype, length in meta:
            dst = np.empty(length, dtype=dtype)
            v = dst.view(np.uint8)
            v[:] = self.buf[o:o + v.size]
            o += v.size
            out[name] = dst
        if free:
            self.free(handle)
        return out

    def free(self, handle: int) -> None:
        off, _, size = self._held.pop(handle)
        if size == 0:
            return
        holes = self._holes
        holes.append([off, size])
        holes.sort()
        merged = [holes[0]]
        for h in holes[1:]:
            last = merged[-1]
            if last[0] + last[1] == h[0]:
                last[1] += h[1]
            else:
                merged.append(h)
        self._holes = merged


# --------------------------------------------------------------------------- tiers


@dataclass
class Stats:
    """Byte counters of one query run (all workers). Units: bytes."""

    scanned: int = 0  # columns read from the stored tables
    shuffled: int = 0  # bytes hash-routed to other workers (ledger tag "shuffle")
    shuffle_routed: int = 0  # bytes hash-routed in total, to other workers and to itself
    broadcast: int = 0  # bytes sent by broadcasts (ledger tag "broadcast")
    gathered: int = 0  # bytes sent to the coordinator (ledger tag "gather")
    to_host: int = 0  # spilled device -> host pool
    from_host: int = 0
    to_disk: int = 0  # spilled to spill files
    from_disk: int = 0
    build: int = 0  # whole partitions scanned at once (the build sides of joins, held in device memory)
    kept: int = 0  # intermediate bytes stored in the tiers (received shuffle data, partial aggregates)
    peak_device: int = 0  # the largest resident bytes on one worker
    batches: int = 0  # scan batches over all workers

    def as_dict(self) -> dict:
        return dict(self.__dict__)


class Tiers:
    """The memory tiers of one worker: a device budget, a host pool, spill files.

    Parameters
    ----------
    hbm_budget : int
        Bytes of device memory for intermediate batches.
    pool : PagePool, FirstFitPool or None
        The host tier; None: no spill tier (``in-memory``).
    spill_dir : str or None
        Folder for spill files (a temporary folder the engine owns).
    stats : Stats
    """

    def __init__(self, hbm_budget: int, pool, spill_dir: str | None, stats: Stats):
        self.budget = int(hbm_budget)
        self.pool = pool
        self.spill_dir = spill_dir
        self.stats = stats
        self.resident: OrderedDict[int, Batch] = OrderedDict()
        self.where: dict[int, tuple[str, object]] = {}
        self.used = 0
        self._next = 0

    def _spill_one(self, h: int) -> None:
        batch = self.resident.pop(h)
        size = nbytes(batch)
        self.used -= size
        ph = self.pool.put(batch)
        if ph is not None:
            self.where[h] = ("host", ph)
            self.stats.to_host += size
            return
        path = os.path.join(self.spill_dir, f"spill-{id(self)}-{h}.npz")
        np.savez(path, **batch)
        self.where[h] = ("disk", path)
        self.stats.to_disk += size

    def store(self, batch: Batch) -> int:
        """Keep *batch*; its handle. Spills the oldest resident batches when it does not fit."""
        size = nbytes(batch)
        self.stats.kept += size
        h = self._next
        self._next += 1
        if self.used + size > self.budget:
            if self.pool is None:
                raise OutOfDeviceMemory(f"batch of {size} B does not fit: {self.used} of {self.budget} B device "
                                        "memory in use and no spill tier (in-memory)")
            while self.resident and self.used + size > self.budget:
                self._spill_one(next(iter(self.resident)))
        self.resident[h] = batch
        self.where[h] = ("device", None)
        self.used += size
        if self.used > self.budget:  # one batch larger than the whole budget: straight down a tier
            self._spill_one(h)
        self.stats.peak_device = max(self.stats.peak_device, self.used)
        return h

    def take(self, h: int) -> Batch:
        """The batch of handle *h*, brought back from wherever it is, and released."""
        tier, ref = self.where.pop(h)
        if tier == "device":
            batch = self.resident.pop(h)
            self.used -= nbytes(batch)
            return batch
        if tier == "host":
            batch = self.pool.get(ref)
            self.stats.from_host += nbytes(batch)
            return batch
        with np.load(ref) as z:
            batch = {k: z[k] for k in z.files}
        os.remove(ref)
        self.stats.from_disk += nbytes(batch)
        return batch

    def take_all(self, handles: list[int]) -> list[Batch]:
        return [self.take(h) for h in handles]


# --------------------------------------------------------------------------- operators


def join_unique(probe: Batch, pkey: str, build: Batch, bkey: str, cols: tuple[str, ...]) -> Batch:
    """Inner equi-join of *probe* with *build* whose key column *bkey* is unique: the probe rows
    with a match, with the build columns *cols* attached (a sort-based hash-join stand-in:
    ``searchsorted`` on the sorted build keys)."""
    bk = build[bkey]
    if bk.size == 0 or nrows(probe) == 0:
        out = take(probe, slice(0, 0))
        out.update({c: build[c][:0] for c in cols})
        return out
    order = np.argsort(bk, kind="stable")
    sk = bk[order]
    pk = probe[pkey]
    pos = np.searchsorted(sk, pk)
    pos[pos >= sk.size] = 0
    hit = sk[pos] == pk
    out = take(probe, hit)
    src = order[pos[hit]]
    for c in cols:
        out[c] = build[c][src]
    return out


def group_sum(batch: Batch, keys: tuple[str, ...], sums: tuple[str, ...]) -> Batch:
    """GROUP BY *keys* with exact int64 SUM of *sums* and a ``_count`` column (partial aggregate;
    re-aggregating partials sums their ``_count`` too). Sort-based: lexsort + ``np.add.reduceat``."""
    n = nrows(batch)
    if n == 0:
        out = {k: batch[k][:0] for k in keys}
        out.update({s: batch[s][:0].astype(np.int64) for s in sums})
        out["_count"] = np.zeros(0, dtype=np.int64)
        return out
    order = np.lexsort([batch[k] for k in reversed(keys)])
    sk = [batch[k][order] for k in keys]
    change = np.zeros(n, dtype=bool)
    change[0] = True
    for a in sk:
        change[1:] |= a[1:] != a[:-1]
    starts = np.flatnonzero(change)
    out = {k: a[starts] for k, a in zip(keys, sk)}
    for s in sums:
        out[s] = np.add.reduceat(batch[s][order].astype(np.int64), starts)
    cnt = batch["_count"][order] if "_count" in batch else np.ones(n, dtype=np.int64)
    out["_count"] = np.add.reduceat(cnt.astype(np.int64), starts)
    return out


def top_k(batch: Batch, k: int, desc: str, asc: str | None = None) -> Batch:
    """The first *k* rows ordered by *desc* descending, then *asc* ascending."""
    if nrows(batch) == 0:
        return batch
    cols = [batch[asc]] if asc else []
    order = np.lexsort(cols + [-batch[desc]])
    return take(batch, order[:k])


# --------------------------------------------------------------------------- engine


@dataclass
class Engine:
    """K simulated workers with memory tiers, a ledger, and the stored tables partitioned.

    Parameters
    ----------
    data : tpch.TpchData
    workers : int
        K >= 1.
    batch_rows : int
        Rows per scan batch of the streamed (largest) table.
    hbm_budget : int
        Device bytes per worker for intermediate batches.
    host_pool : int
        Host pool bytes per worker (0 with ``spill=False``).
    page_size : int
        Bytes per host page (fixed pages) -- ignored by ``first-fit``.
    allocator : str
        ``"fixed-pages"`` or ``"first-fit"``.
    spill : bool
        False: no spill tier (``in-memory``).
    """

    data: "tpch.TpchData"
    workers: int = 4
    batch_rows: int = 8192
    hbm_budget: int = 1 << 30
    host_pool: int = 1 << 30
    page_size: int = 1 << 16
    allocator: str = "fixed-pages"
    spill: bool = True
    ledger: Ledger = field(default_factory=Ledger)
    stats: Stats = field(default_factory=Stats)

    def __post_init__(self):
        if self.workers < 1:
            raise ValueError(f"engine: workers must be >= 1, got {self.workers}")
        self._tmp = tempfile.TemporaryDirectory(prefix="theseus-spill-") if self.spill else None
        self.tiers = []
        for _ in range(self.workers):
            if not self.spill:
                pool = None
            elif self.allocator == "first-fit":
                pool = FirstFitPool(self.host_pool)
            else:
                pool = PagePool(self.page_size, self.host_pool // self.page_size)
            self.tiers.append(Tiers(self.hbm_budget, pool, self._tmp.name if self._tmp else None, self.stats))
        self._parts: dict[str, list[np.ndarray]] = {}

    def close(self) -> None:
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    # -- stored tables
    _KEYS = {"lineitem": "l_orderkey", "orders": "o_orderkey", "customer": "c_custkey", "part": "p_partkey",
             "supplier": "s_suppkey"}

    def _rows_of(self, table: str, w: int) -> np.ndarray:
        if table not in self._parts:
            t = self.data.tables[table]
            if table in self._KEYS:
                own = owner(t[self._KEYS[table]], self.workers)
                self._parts[table] = [np.flatnonzero(own == i) for i in range(self.workers)]
            else:  # nation, region: on worker 0
                n = next(iter(t.values())).shape[0]
                self._parts[table] = [np.arange(n)] + [np.arange(0)] * (self.workers - 1)
        return self._parts[table][w]

    def scan(self, table: str, w: int, cols: tuple[str, ...]) -> Batch:
        """Worker *w*'s partition of *table*, columns *cols* (counted as scanned)."""
        idx = self._rows_of(table, w)
        t = self.data.tables[table]
        out = {c: t[c][idx] for c in cols}
        size = nbytes({c: v for c, v in out.items() if v.dtype != object})
        self.stats.scanned += size
        self.stats.build += size
        return out

    def scan_batches(self, table: str, w: int, cols: tuple[str, ...]):
        """Worker *w*'s partition of *table* in batches of ``batch_rows`` rows."""
        idx = self._rows_of(table, w)
        t = self.data.tables[table]
        for s in range(0, idx.size, self.batch_rows):
            sel = idx[s:s + self.batch_rows]
            b = {c: t[c][sel] for c in cols}
            self.stats.scanned += nbytes(b)
            self.stats.batches += 1
            yield b

    # -- data movement
    def shuffle(self, outputs: list[list[Batch]], key: str) -> list[list[int]]:
        """Hash-route every batch of every worker on column *key* (:func:`owner`); the received
        pieces are stored in the receiver's tiers. Returns per worker the handles received."""
        k = self.workers
        got: list[list[int]] = [[] for _ in range(k)]
        for src, batches in enumerate(outputs):
            for b in batches:
                if nrows(b) == 0:
                    continue
                dest = owner(b[key], k)
                order = np.argsort(dest, kind="stable")
                bounds = np.searchsorted(dest[order], np.arange(k + 1))
                for dst in range(k):
                    sel = order[bounds[dst]:bounds[dst + 1]]
                    if sel.size == 0:
                        continue
                    piece = take(b, sel)
                    self.stats.shuffle_routed += nbytes(piece)
                    if dst != src:
                        self.stats.shuffled += nbytes(piece)
                        piece = {c: recv(self.ledger, src, dst, send(self.ledger, src, dst, a, "shuffle"), "shuffle")
                                 for c, a in piece.items()}
                    got[dst].append(self.tiers[dst].store(piece))
        return got

    def broadcast(self, pieces: list[Batch]) -> Batch:
        """Every worker's piece to every other worker (an all-gather of a small table): the
        whole table, the same on every worker (returned once)."""
        k = self.workers
        for src, b in enumerate(pieces):
            for dst in range(k):
                if dst != src and nrows(b):
                    self.stats.broadcast += nbytes(b)
                    for c, a in b.items():
                        recv(self.ledger, src, dst, send(self.ledger, src, dst, a, "broadcast"), "broadcast")
        return concat(pieces)

    def gather(self, pieces: list[Batch]) -> Batch:
        """Every worker's piece to worker 0."""
        for src, b in enumerate(pieces):
            if src != 0 and nrows(b):
                self.stats.gathered += nbytes(b)
                for c, a in b.items():
                    recv(self.ledger, src, 0, send(self.ledger, src, 0, a, "gather"), "gather")
        return concat(pieces)

    def keep(self, w: int, batch: Batch) -> int:
        """Store an intermediate batch in worker *w*'s tiers."""
        return self.tiers[w].store(batch)


# --------------------------------------------------------------------------- query plans

_L_DISC = "disc_price"  # extendedprice * (100 - discount): revenue in units of 1e-4


def _revenue(b: Batch) -> np.ndarray:
    return b["l_extendedprice"] * (100 - b["l_discount"])


def _merge_partials(e: Engine, handles: list[list[int]], keys, sums) -> list[Batch]:
    out = []
    for w in range(e.workers):
        parts = e.tiers[w].take_all(handles[w])
        out.append(group_sum(concat(parts), keys, sums) if parts else {})
    return out


def _two_phase(e: Engine, partial_handles: list[list[int]], keys, sums, route_key: str) -> Batch:
    """Merge each worker's partials, hash-route them on *route_key*, merge again at the owners,
    gather at worker 0."""
    local = _merge_partials(e, partial_handles, keys, sums)
    routed = e.shuffle([[b] if b else [] for b in local], route_key)
    final = _merge_partials(e, routed, keys, sums)
    return e.gather([b for b in final if b])


def q1(e: Engine) -> Batch:
    cut = tpch.day("1998-09-02")  # DATE '1998-12-01' - INTERVAL 90 DAY
    cols = ("l_returnflag", "l_linestatus", "l_quantity", "l_extendedprice", "l_discount", "l_tax", "l_shipdate")
    handles = []
    for w in range(e.workers):
        hs = []
        for b in e.scan_batches("lineitem", w, cols):
            b = take(b, b["l_shipdate"] <= cut)
            dp = _revenue(b)
            b = {"l_returnflag": b["l_returnflag"], "l_linestatus": b["l_linestatus"],
                 "sum_qty": b["l_quantity"], "sum_base_price": b["l_extendedprice"], "sum_disc_price": dp,
                 "sum_charge": dp * (100 + b["l_tax"]), "sum_disc": b["l_discount"]}
            hs.append(e.keep(w, group_sum(b, ("l_returnflag", "l_linestatus"),
                                          ("sum_qty", "sum_base_price", "sum_disc_price", "sum_charge", "sum_disc"))))
        handles.append(hs)
    keys = ("l_returnflag", "l_linestatus")
    sums = ("sum_qty", "sum_base_price", "sum_disc_price", "sum_charge", "sum_disc")
    local = _merge_partials(e, handles, keys, sums)
    for b in local:
        if b:
            b["_route"] = b["l_returnflag"].astype(np.int64) * 256 + b["l_linestatus"]
    routed = e.shuffle([[b] if b else [] for b in local], "_route")
    final = [group_sum(concat(e.tiers[w].take_all(routed[w])), keys, sums) if routed[w] else {}
             for w in range(e.workers)]
    res = e.gather([b for b in final if b])
    return take(res, np.lexsort([res["l_linestatus"], res["l_returnflag"]]))


def q6(e: Engine) -> Batch:
    lo, hi = tpch.day("1994-01-01"), tpch.day("1995-01-01")
    cols = ("l_shipdate", "l_discount", "l_quantity", "l_extendedprice")
    parts = []
    for w in range(e.workers):
        hs = []
        for b in e.scan_batches("lineitem", w, cols):
            m = ((b["l_shipdate"] >= lo) & (b["l_shipdate"] < hi) & (b["l_discount"] >= 5) & (b["l_discount"] <= 7)
                 & (b["l_quantity"] < 2400))
            hs.append(e.keep(w, {"revenue": np.array([np.sum(b["l_extendedprice"][m] * b["l_discount"][m],
                                                             dtype=np.int64)])}))
        parts.append({"revenue": np.array([sum(int(x["revenue"][0]) for x in e.tiers[w].take_all(hs))],
                                          dtype=np.int64)})
    res = e.gather(parts)
    return {"revenue": np.array([res["revenue"].sum()], dtype=np.int64)}


def q3(e: Engine) -> Batch:
    cut = tpch.day("1995-03-15")
    seg = tpch.SEGMENTS.index("BUILDING")
    cust = []
    for w in range(e.workers):
        c = e.scan("customer", w, ("c_custkey", "c_mktsegment"))
        cust.append({"c_custkey": c["c_custkey"][c["c_mktsegment"] == seg]})
    keys = e.broadcast(cust)["c_custkey"]
    out = []
    for w in range(e.workers):
        o = e.scan("orders", w, ("o_orderkey", "o_custkey", "o_orderdate", "o_shippriority"))
        o = take(o, (o["o_orderdate"] < cut) & np.isin(o["o_custkey"], keys))
        hs = []
        for b in e.scan_batches("lineitem", w, ("l_orderkey", "l_extendedprice", "l_discount", "l_shipdate")):
            b = take(b, b["l_shipdate"] > cut)
            j = join_unique({"l_orderkey": b["l_orderkey"], "revenue": _revenue(b)}, "l_orderkey", o, "o_orderkey",
                            ("o_orderdate", "o_shippriority"))
            hs.append(e.keep(w, group_sum(j, ("l_orderkey", "o_orderdate", "o_shippriority"), ("revenue",))))
        parts = e.tiers[w].take_all(hs)
        agg = group_sum(concat(parts), ("l_orderkey", "o_orderdate", "o_shippriority"), ("revenue",)) if parts else {}
        if agg:
            agg.pop("_count")
            out.append(top_k(agg, 10, "revenue", "o_orderdate"))
    res = e.gather(out)
    return top_k(res, 10, "revenue", "o_orderdate")


def q5(e: Engine) -> Batch:
    lo, hi = tpch.day("1994-01-01"), tpch.day("1995-01-01")
    reg = e.scan("region", 0, ("r_regionkey", "r_name"))
    asia = reg["r_regionkey"][reg["r_name"] == "ASIA"]
    nat = e.scan("nation", 0, ("n_nationkey", "n_name", "n_regionkey"))
    nat = take(nat, np.isin(nat["n_regionkey"], asia))
    nkeys = e.broadcast([{"n_nationkey": nat["n_nationkey"]}] + [{}] * (e.workers - 1))["n_nationkey"]
    # suppliers of the region, to every worker
    sup = []
    for w in range(e.workers):
        s = e.scan("supplier", w, ("s_suppkey", "s_nationkey"))
        sup.append(take(s, np.isin(s["s_nationkey"], nkeys)))
    sup_all = e.broadcast(sup)
    # orders of 1994 -> customer owners -> back to the order owners with the customer's nation
    sent = []
    for w in range(e.workers):
        o = e.scan("orders", w, ("o_orderkey", "o_custkey", "o_orderdate"))
        o = take(o, (o["o_orderdate"] >= lo) & (o["o_orderdate"] < hi))
        sent.append([{"o_orderkey": o["o_orderkey"], "o_custkey": o["o_custkey"]}])
    at_cust = e.shuffle(sent, "o_custkey")
    back = []
    for w in range(e.workers):
        c = e.scan("customer", w, ("c_custkey", "c_nationkey"))
        c = take(c, np.isin(c["c_nationkey"], nkeys))
        got = concat(e.tiers[w].take_all(at_cust[w]), {"o_orderkey": np.zeros(0, np.int64),
                                                       "o_custkey": np.zeros(0, np.int64)})
        j = join_unique(got, "o_custkey", c, "c_custkey", ("c_nationkey",))
        back.append([{"o_orderkey": j["o_orderkey"], "c_nationkey": j["c_nationkey"]}])
    at_order = e.shuffle(back, "o_orderkey")
    handles = []
    for w in range(e.workers):
        o = concat(e.tiers[w].take_all(at_order[w]), {"o_orderkey": np.zeros(0, np.int64),
                                                      "c_nationkey": np.zeros(0, np.int64)})
        hs = []
        for b in e.scan_batches("lineitem", w, ("l_orderkey", "l_suppkey", "l_extendedprice", "l_discount")):
            j = join_unique({"l_orderkey": b["l_orderkey"], "l_suppkey": b["l_suppkey"], "revenue": _revenue(b)},
                            "l_orderkey", o, "o_orderkey", ("c_nationkey",))
            j = join_unique(j, "l_suppkey", sup_all, "s_suppkey", ("s_nationkey",))
            j = take(j, j["s_nationkey"] == j["c_nationkey"])
            hs.append(e.keep(w, group_sum({"n_nationkey": j["s_nationkey"], "revenue": j["revenue"]},
                                          ("n_nationkey",), ("revenue",))))
        handles.append(hs)
    res = _two_phase(e, handles, ("n_nationkey",), ("revenue",), "n_nationkey")
    res = join_unique(res, "n_nationkey", nat, "n_nationkey", ("n_name",))
    return top_k(res, len(res["revenue"]), "revenue")


def q10(e: Engine) -> Batch:
    lo, hi = tpch.day("1993-10-01"), tpch.day("1994-01-01")
    r = ord("R")
    nat = e.scan("nation", 0, ("n_nationkey", "n_name"))
    nat_all = e.broadcast([nat] + [{}] * (e.workers - 1))
    handles = []
    for w in range(e.workers):
        o = e.scan("orders", w, ("o_orderkey", "o_custkey", "o_orderdate"))
        o = take(o, (o["o_orderdate"] >= lo) & (o["o_orderdate"] < hi))
        hs = []
        for b in e.scan_batches("lineitem", w, ("l_orderkey", "l_extendedprice", "l_discount", "l_returnflag")):
            b = take(b, b["l_returnflag"] == r)
            j = join_unique({"l_orderkey": b["l_orderkey"], "revenue": _revenue(b)}, "l_orderkey", o, "o_orderkey",
                            ("o_custkey",))
            hs.append(e.keep(w, group_sum({"c_custkey": j["o_custkey"], "revenue": j["revenue"]},
                                          ("c_custkey",), ("revenue",))))
        handles.append(hs)
    local = _merge_partials(e, handles, ("c_custkey",), ("revenue",))
    routed = e.shuffle([[b] if b else [] for b in local], "c_custkey")
    out = []
    for w in range(e.workers):
        parts = e.tiers[w].take_all(routed[w])
        if not parts:
            continue
        agg = group_sum(concat(parts), ("c_custkey",), ("revenue",))
        c = e.scan("customer", w, ("c_custkey", "c_nationkey", "c_acctbal"))
        j = join_unique({"c_custkey": agg["c_custkey"], "revenue": agg["revenue"]}, "c_custkey", c, "c_custkey",
                        ("c_nationkey", "c_acctbal"))
        j = join_unique(j, "c_nationkey", nat_all, "n_nationkey", ("n_name",))
        out.append(top_k(j, 20, "revenue"))
    res = e.gather(out)
    return top_k(res, 20, "revenue")


def q12(e: Engine) -> Batch:
    lo, hi = tpch.day("1994-01-01"), tpch.day("1995-01-01")
    modes = (tpch.SHIP_MODES.index("MAIL"), tpch.SHIP_MODES.index("SHIP"))
    urgent = (tpch.PRIORITIES.index("1-URGENT"), tpch.PRIORITIES.index("2-HIGH"))
    handles = []
    for w in range(e.workers):
        o = e.scan("orders", w, ("o_orderkey", "o_orderpriority"))
        hs = []
        for b in e.scan_batches("lineitem", w, ("l_orderkey", "l_shipmode", "l_commitdate", "l_receiptdate",
                                                 "l_shipdate")):
            m = (np.isin(b["l_shipmode"], modes) & (b["l_commitdate"] < b["l_receiptdate"])
                 & (b["l_shipdate"] < b["l_commitdate"]) & (b["l_receiptdate"] >= lo) & (b["l_receiptdate"] < hi))
            b = take(b, m)
            j = join_unique({"l_orderkey": b["l_orderkey"], "l_shipmode": b["l_shipmode"]}, "l_orderkey", o,
                            "o_orderkey", ("o_orderpriority",))
            high = np.isin(j["o_orderpriority"], urgent).astype(np.int64)
            hs.append(e.keep(w, group_sum({"l_shipmode": j["l_shipmode"], "high_line_count": high,
                                           "low_line_count": 1 - high}, ("l_shipmode",),
                                          ("high_line_count", "low_line_count"))))
        handles.append(hs)
    res = _two_phase(e, handles, ("l_shipmode",), ("high_line_count", "low_line_count"), "l_shipmode")
    names = np.array(tpch.SHIP_MODES, dtype=object)[res["l_shipmode"]]
    return take({**res, "mode_name": names}, np.argsort(names, kind="stable"))


def q14(e: Engine) -> Batch:
    lo, hi = tpch.day("1995-09-01"), tpch.day("1995-10-01")
    promo = np.array([i for i, t in enumerate(tpch.PART_TYPES) if t.startswith("PROMO")], dtype=np.int16)
    sent = []
    for w in range(e.workers):
        out = []
        for b in e.scan_batches("lineitem", w, ("l_partkey", "l_extendedprice", "l_discount", "l_shipdate")):
            b = take(b, (b["l_shipdate"] >= lo) & (b["l_shipdate"] < hi))
            out.append({"l_partkey": b["l_partkey"], "revenue": _revenue(b)})
        sent.append(out)
    at_part = e.shuffle(sent, "l_partkey")
    parts = []
    for w in range(e.workers):
        p = e.scan("part", w, ("p_partkey", "p_type"))
        got = e.tiers[w].take_all(at_part[w])
        j = join_unique(concat(got, {"l_partkey": np.zeros(0, np.int64), "revenue": np.zeros(0, np.int64)}),
                        "l_partkey", p, "p_partkey", ("p_type",))
        isp = np.isin(j["p_type"], promo)
        parts.append({"promo": np.array([j["revenue"][isp].sum()], dtype=np.int64),
                      "total": np.array([j["revenue"].sum()], dtype=np.int64)})
    res = e.gather(parts)
    promo_rev, total = int(res["promo"].sum()), int(res["total"].sum())
    return {"promo_revenue": np.array([100.0 * promo_rev / total if total else float("nan")]),
            "promo": np.array([promo_rev]), "total": np.array([total])}


PLANS = {1: q1, 3: q3, 5: q5, 6: q6, 10: q10, 12: q12, 14: q14}


def run_query(data, query: int, **engine_kw) -> tuple[Batch, Engine]:
    """Run TPC-H *query* on *data* with an :class:`Engine` built from *engine_kw*; the result
    batch (the query's columns, engine encodings) and the engine (ledger, stats, tiers).

    Raises
    ------
    OutOfDeviceMemory
        ``spill=False`` and an intermediate batch does not fit the device budget.
    """
    e = Engine(data, **engine_kw)
    try:
        res = PLANS[int(query)](e)
    finally:
        e.close()
    return res, e
