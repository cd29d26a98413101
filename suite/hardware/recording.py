"""Which fields of a hardware profile one evaluation reads, recorded in the profile itself.

The view of :mod:`suite.hardware.tracking` costs a Python call and a new view object per access
(3.4x a cheap model evaluation). The runner records every case instead by hiding, for the length of
one case, the field values of the profile's own objects: each model's class is swapped for a
recording subclass (same name, same module) whose fields are non-data descriptors, and its
``__dict__`` keeps only the fields that hold models or tables. The first read of a field finds no
instance value, so the descriptor runs once: it records the read and puts the value back, and
every later read of that field is an ordinary attribute read. Mappings of the profile
(``peak_flops``) are swapped for a FrozenDict subclass whose lookups record their key. At the end
of the case every object gets its fields (in their order) and its class back.

The plugin sees the profile's own objects throughout (``object.__setattr__``, ``vars()`` and the
input guard behave as in any case); ``vars()``, ``__dict__``, ``model_dump``, ``==``, copies and
pickling see every field (a whole-object read, recorded as the object's path, ``"*"`` for the
profile). Paths follow :mod:`suite.hardware.tracking` (``network.1.bandwidth``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator, Mapping
from itertools import chain
from operator import is_
from typing import Any

from suite.frozen import FrozenDict
from suite.hardware.tracking import _join

__all__ = ["recording", "Recording", "ReadPlan", "is_recording", "unrecorded", "first_in_case", "written_in_case",
           "RECORDED", "CASE_SEEN"]


def _base_dict() -> Any:
    from pydantic import BaseModel

    return BaseModel.__dict__["__dict__"]


_DICT = _base_dict()
#: run an iterator of calls for their effect, in C (``deque(it, maxlen=0)``)
_drain: Any = deque(maxlen=0).extend
_dict_of = _DICT.__get__
#: ``map`` as the function of another ``map`` (a map per model, all run in one C loop)
_map_each: Any = map
_set_class = object.__dict__["__class__"].__set__

#: the recording's own state (emptied by every case): the load-time tamper check leaves it be
__caches__ = ('_HIDDEN', '_ACTIVE', '_READS', 'CASE_SEEN')
#: id(object) -> its fields before the case (None for a table) while a case records: only the
#: recording under way's objects (a recording starts after the previous one is restored)
_HIDDEN: dict[int, dict[str, Any] | None] = {}
_WHOLE_READ = "*"
#: the recording under way in this process (at most one)
_ACTIVE: list[Recording] = []
#: the reads of the recording under way ((object id, field or key) pairs; its ``reads``)
_READS: set[tuple[int, Any]] = set()
#: what :func:`first_in_case` has seen in the recording under way (empty when none
#: is: a caller may test ``key not in CASE_SEEN`` before the call)
CASE_SEEN: set[Any] = set()


class _Fault:
    """A hidden field of a recording class: its first read in a case records it and puts the
    value back in the instance (a non-data descriptor: the instance's value wins afterwards)."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        name = self.name
        oid = id(obj)
        try:
            value = _HIDDEN[oid][name]  # type: ignore[index]  # None (a table, a class) raises TypeError
        except (KeyError, TypeError):
            what = f"type object {cls.__name__!r}" if obj is None else f"{type(obj).__name__!r} object"
            raise AttributeError(f"{what} has no attribute {name!r}") from None
        _dict_of(obj)[name] = value
        _READS.add((oid, name))
        return value


def _whole(obj: Any) -> dict[str, Any]:
    """*obj*'s ``__dict__`` with every hidden field back (a read of the whole object)."""
    d: dict[str, Any] = _dict_of(obj)
    hidden = _HIDDEN.get(id(obj))
    if hidden is not None:
        _READS.add((id(obj), _WHOLE_READ))
        _refill(d, hidden)
    return d


def _refill(d: dict[str, Any], saved: dict[str, Any]) -> None:
    """Put *saved*'s fields back into *d* in their order; what the case wrote stays (the input
    guard sees it)."""
    if d:
        merged = dict(saved)
        merged.update(d)
        d.clear()
        d.update(merged)
    else:
        d.update(saved)


def _set_whole(obj: Any, value: Any) -> None:
    _DICT.__set__(obj, value)


def _real_class(obj: Any) -> type:
    cls: type = getattr(type(obj), "__suite_recording__", type(obj))
    return cls


def _reduce_ex(self: Any, protocol: Any) -> Any:
    _whole(self)
    return (_rebuild, (_real_class(self),), self.__getstate__())  # pickled as its real class


def _rebuild(cls: Any) -> Any:
    return cls.__new__(cls)


def _copier(name: str) -> Any:
    def copy(self: Any, *memo: Any) -> Any:
        _whole(self)
        real = _real_class(self)
        out = getattr(real, name)(self, *memo)
        if type(out) is type(self):
            _set_class(out, real)  # a copy is an ordinary object of the real class
        return out

    copy.__name__ = name
    return copy


_RECORDING_CLASSES: dict[type, type] = {}


def _recording_class(cls: type) -> type:
    """The recording subclass of model class *cls* (made once; not a pydantic model build)."""
    rc = _RECORDING_CLASSES.get(cls)
    if rc is None:
        ns: dict[str, Any] = {"__slots__": (), "__module__": cls.__module__, "__qualname__": cls.__qualname__,
                              "__doc__": cls.__doc__, "__suite_recording__": cls,
                              "__dict__": property(_whole, _set_whole), "__reduce_ex__": _reduce_ex,
                              "__copy__": _copier("__copy__"), "__deepcopy__": _copier("__deepcopy__")}
        meta = getattr(cls, "__pydantic_generic_metadata__", None)
        if meta is not None:  # pydantic's == compares this origin, not the class: equal to the real class
            ns["__pydantic_generic_metadata__"] = {**meta, "origin": meta.get("origin") or cls}
        ns.update({name: _Fault(name) for name in getattr(cls, "model_fields", {})})
        rc = type.__new__(type(cls), cls.__name__, (cls,), ns)
        _RECORDING_CLASSES[cls] = rc
    return rc


def _note(table: Any, key: Any) -> None:
    oid = id(table)
    if oid in _HIDDEN:
        _READS.add((oid, key))


def _recording_dict() -> type:
    from suite.frozen import FrozenDict

    class RecordingDict(FrozenDict):
        """A profile table while a case records: each key looked up is recorded; iterating or
        copying the table records the whole table."""

        __slots__ = ()

        def __getitem__(self, key: Any) -> Any:
            oid = id(self)
            if oid in _HIDDEN:  # _note, inlined: the lookups of a table are the hottest reads
                _READS.add((oid, key))
            return dict.__getitem__(self, key)

        def get(self, key: Any, default: Any = None) -> Any:
            oid = id(self)
            if oid in _HIDDEN:  # looked for: its absence is a reading too
                _READS.add((oid, key))
            return dict.get(self, key, default)

        def __contains__(self, key: object) -> bool:
            oid = id(self)
            if oid in _HIDDEN:
                _READS.add((oid, key))
            return dict.__contains__(self, key)

        def _all(self) -> dict[Any, Any]:
            _note(self, _WHOLE_READ)
            return self

        def __iter__(self) -> Iterator[Any]:
            return dict.__iter__(self._all())

        def keys(self) -> Any:
            return dict.keys(self._all())

        def values(self) -> Any:
            return dict.values(self._all())

        def items(self) -> Any:
            return dict.items(self._all())

        def copy(self) -> dict[Any, Any]:
            return dict(dict.items(self._all()))

        def __eq__(self, other: object) -> bool:
            return dict.__eq__(self._all(), other)

        __hash__ = FrozenDict.__hash__

        def __repr__(self) -> str:
            return dict.__repr__(self._all())

    RecordingDict.__name__ = RecordingDict.__qualname__ = "FrozenDict"
    RecordingDict.__module__ = FrozenDict.__module__
    return RecordingDict


_RecordingDict = _recording_dict()


def _is_container(value: Any) -> bool:
    """A value whose fields are recorded one by one (a model, a table, a sequence of models)."""
    from pydantic import BaseModel

    if isinstance(value, (BaseModel, Mapping)):
        return True
    return isinstance(value, (list, tuple)) and bool(value) and isinstance(value[0], BaseModel)


class ReadPlan:
    """The objects of one profile a case records through (built once per profile object, kept by
    the executor loop: :class:`suite.runner.evaluate.InputSnapshots`).

    ``models``: (object, its class, its recording class, its fields as loaded, those of its
    fields that hold models, tables or sequences of models: never hidden, since their own fields
    are recorded) for every model; ``tables``: every frozen mapping; ``prefix``: id -> the dotted
    paths an object is found at.
    """

    __slots__ = ("profile", "models", "tables", "prefix", "hidden", "objs", "classes", "rcs", "fields", "holders", "kept",
                 "table_items", "_getitems", "_table_lens", "_table_keys", "_table_values", "_paths", "_sorted",
                 "_swapped", "_recording_classes", "_real_classes")

    def __init__(self, profile: Any) -> None:
        self.profile = profile  # held: the ids below stay this profile's
        self.models: list[tuple[Any, type, type, dict[str, Any], dict[str, Any]]] = []
        self.tables: list[Any] = []
        self.prefix: dict[int, list[str]] = {}
        self._paths: dict[tuple[int, Any], tuple[str, ...]] = {}
        self._sorted: dict[frozenset[tuple[int, Any]], list[str]] = {}
        self.hidden: dict[int, dict[str, Any] | None] = {}  # what a recording puts in _HIDDEN (built below)
        todo: list[tuple[Any, str]] = [(profile, "")]
        while todo:
            obj, path = todo.pop()
            seen = self.prefix.get(id(obj))
            if seen is None:
                self.prefix[id(obj)] = [path]
            elif path in seen:
                continue
            else:  # one object at two paths (a device that is also a group's): a read records both
                seen.append(path)
            todo.extend((v, _join(path, str(k))) for k, v in self._items(obj, first=seen is None) if _is_container(v))
        self.hidden.update({id(m[0]): m[3] for m in self.models})
        self.hidden.update(dict.fromkeys(map(id, self.tables)))
        self.objs: list[Any] = [m[0] for m in self.models]
        self.classes: list[type] = [m[1] for m in self.models]
        self.rcs: list[type] = [m[2] for m in self.models]
        self.fields: list[dict[str, Any]] = [m[3] for m in self.models]
        self.holders, self.kept = [m[0] for m in self.models if m[4]], [m[4] for m in self.models if m[4]]
        self.table_items: list[dict[Any, Any]] = [dict(t) for t in self.tables]  # as loaded (Recording.stop_checked)
        # the same, laid out for unchanged()'s C loops
        self._getitems = [f.__getitem__ for f in self.fields]
        self._table_lens = [len(t) for t in self.table_items]
        self._table_keys = tuple(chain.from_iterable(self.table_items))
        self._table_values = tuple(chain.from_iterable(t.values() for t in self.table_items))
        # every object whose class a recording swaps, with its class while recording and after:
        # one C loop each way
        self._swapped: list[Any] = self.objs + self.tables
        self._recording_classes: list[type] = self.rcs + [_RecordingDict] * len(self.tables)
        self._real_classes: list[type] = self.classes + [FrozenDict] * len(self.tables)

    def _items(self, obj: Any, first: bool) -> Any:
        """The (name, value) pairs under *obj*; on its *first* visit it joins ``models`` or ``tables``."""
        from pydantic import BaseModel

        from suite.frozen import FrozenDict

        if isinstance(obj, BaseModel):
            fields = dict(_dict_of(obj))
            if first:
                kept = {k: v for k, v in fields.items() if _is_container(v)}
                self.models.append((obj, type(obj), _recording_class(type(obj)), fields, kept))
            return ((k, fields[k]) for k in type(obj).model_fields if k in fields)
        if type(obj) is FrozenDict:
            if first:
                self.tables.append(obj)
            return obj.items()
        return ((str(i), x) for i, x in enumerate(obj))  # a sequence of models

    def unchanged(self, dicts: list[dict[str, Any]]) -> bool:
        """Whether each model's ``__dict__`` (*dicts*, in :attr:`objs`' order) holds only fields
        of its saved :attr:`fields`, each the same object (what a case that wrote nothing leaves:
        its fields read back in, its models and tables kept; a field added, replaced or written
        while hidden is not), and each table holds the keys and values of its copy in
        :attr:`table_items`, the same objects in the same order (read through ``dict``'s own
        methods: no read of a recording table is noted). Each test one C loop over all objects."""
        # each model's values against its saved fields' values for the same keys, in the same
        # order (a key the saved fields lack raises KeyError: not unchanged)
        saved = chain.from_iterable(map(_map_each, self._getitems, dicts))
        try:
            if not all(map(is_, chain.from_iterable(map(dict.values, dicts)), saved)):
                return False
        except KeyError:
            return False
        tables = self.tables
        return (list(map(len, tables)) == self._table_lens
                and all(map(is_, chain.from_iterable(map(dict.keys, tables)), self._table_keys))
                and all(map(is_, chain.from_iterable(map(dict.values, tables)), self._table_values)))

    def rehide(self, reads: set[tuple[int, Any]]) -> None:
        """Hide again the model fields of *reads* (read while not recording: :class:`unrecorded`)."""
        byid = {id(m[0]): m for m in self.models}
        for oid, name in reads:
            m = byid.get(oid)
            if m is not None:
                d = _dict_of(m[0])
                if name == _WHOLE_READ:
                    d.clear()
                    d.update(m[4])
                elif name not in m[4]:
                    d.pop(name, None)

    def sorted_paths(self, reads: set[tuple[int, Any]]) -> list[str]:
        """:meth:`paths` sorted; the same list object for the same *reads* (most cases of a sweep
        read the same fields: one list, pickled once per batch, for all of them). Do not change it."""
        key = frozenset(reads)
        hit = self._sorted.get(key)
        if hit is None:
            if len(self._sorted) >= 256:
                self._sorted.clear()
            hit = self._sorted[key] = sorted(self.paths(reads))
        return hit

    def paths(self, reads: set[tuple[int, Any]]) -> set[str]:
        """The dotted paths of *reads* ((object id, field or key) pairs; ``"*"``: the whole object)."""
        out: set[str] = set()
        cache = self._paths
        for r in reads:
            hit = cache.get(r)
            if hit is None:
                hit = cache[r] = self._path_of(*r)
            out.update(hit)
        return out

    def _path_of(self, oid: int, name: Any) -> tuple[str, ...]:
        prefixes = self.prefix.get(oid, ())
        if name == _WHOLE_READ:
            return tuple(p or "*" for p in prefixes)
        holder = next((m[3] for m in self.models if id(m[0]) == oid), None)
        if holder is None:
            holder = next((t for t in self.tables if id(t) == oid), {})
        if name in holder and _is_container(holder[name]):
            return ()  # its own fields are recorded as they are read
        return tuple(_join(p, str(name)) for p in prefixes)


class Recording:
    """One case's recording through a :class:`ReadPlan`: :meth:`start` hides the profile's fields,
    :meth:`stop` puts them back and returns the dotted paths read (a ``set`` of ``str``)."""

    __slots__ = ("plan", "reads")

    def __init__(self, plan: ReadPlan) -> None:
        self.plan = plan
        self.reads: set[tuple[int, Any]] = set()

    def start(self) -> Recording:
        global _READS
        if _ACTIVE:  # one left behind (its stop interrupted) or an enclosing one: it ends here
            _ACTIVE[0]._restore()
        _ACTIVE.append(self)  # before the first object is hidden: stop() restores a partial start
        _READS = self.reads
        CASE_SEEN.clear()  # what first_in_case has seen in this case
        plan = self.plan
        _HIDDEN.update(plan.hidden)
        # C loops over the plan's objects (a Python loop here cost more than the reads it records)
        _drain(map(dict.clear, map(_dict_of, plan.objs)))
        _drain(map(dict.update, map(_dict_of, plan.holders), plan.kept))
        _drain(map(_set_class, plan._swapped, plan._recording_classes))
        return self

    def stop(self) -> set[str]:
        """Every object back as it was before :meth:`start` (what the case wrote stays, for the
        input guard to see); the dotted paths read."""
        self._restore()
        return self.plan.paths(self.reads)

    def stop_sorted(self) -> list[str]:
        """:meth:`stop`, the paths sorted (a list shared by every case that read the same fields)."""
        self._restore()
        return self.plan.sorted_paths(self.reads)

    def stop_checked(self) -> tuple[list[str], bool]:
        """:meth:`stop_sorted`, and whether the case left every object of the plan as
        :meth:`start` found it (True: each model holds only its own fields' objects, each table
        the same keys and values in the same order; the per-case input guard need not walk the
        profile again: :class:`suite.runner.evaluate.InputSnapshots`). False when anything was
        written, added or replaced (then every write is kept, for the guard to name and undo),
        or when this recording was ended by another one."""
        clean = self._restore(check=True)
        return self.plan.sorted_paths(self.reads), clean

    def _restore(self, check: bool = False) -> bool:
        if not _ACTIVE or _ACTIVE[0] is not self:
            return False
        plan = self.plan
        dicts = list(map(_dict_of, plan.objs))
        clean = check and plan.unchanged(dicts)
        if clean:  # each model gets its fields back in their order: in C, no merge of what the case wrote
            _drain(map(dict.clear, dicts))
            _drain(map(dict.update, dicts, plan.fields))
        else:
            _drain(map(_refill, dicts, plan.fields))
        _drain(map(_set_class, plan._swapped, plan._real_classes))
        _HIDDEN.clear()  # only this recording's objects (start() restores the one before)
        CASE_SEEN.clear()  # empty while nothing records
        _ACTIVE.clear()
        return clean

    def __enter__(self) -> Recording:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def recording(profile: Any, plan: ReadPlan | None = None) -> Recording:
    """A recording of the fields one evaluation reads from *profile* itself (no view): use as
    ``with recording(p) as r: ...`` then ``r.stop()`` (idempotent) for the dotted paths. *plan*:
    a :class:`ReadPlan` of *profile* kept from an earlier case (default: built now)."""
    return Recording(plan if plan is not None and plan.profile is profile else ReadPlan(profile))


def is_recording(obj: Any) -> bool:
    """Whether *obj* (a profile) is being recorded in place right now (a hot path may test
    ``RECORDED and id(obj) in RECORDED`` instead: no call when nothing records)."""
    return id(obj) in _HIDDEN


#: ids of the objects being recorded in place now (empty when nothing records): read-only
RECORDED = _HIDDEN


def written_in_case(profile: Any) -> bool:
    """Whether the recording under way holds *profile* with a field or table entry that is not the
    one it was loaded with (the case wrote it, with ``object.__setattr__`` or ``vars()``, and may put
    it back before it ends: the input guard then sees nothing). A cache derived from the profile's
    objects must not keep what it derives now (:func:`suite.perf.network.placement._prepare`). False
    when nothing records *profile*. One C loop over the plan's objects (a cache's miss only)."""
    if not _ACTIVE or _ACTIVE[0].plan.profile is not profile:
        return False
    plan = _ACTIVE[0].plan
    return not plan.unchanged(list(map(_dict_of, plan.objs)))


def first_in_case(key: Any) -> bool:
    """True the first time *key* is asked about during the recording under way (a caller that
    reads the same fields for the same arguments reads them once per case); True when none is."""
    if not _ACTIVE:
        return True
    if key in CASE_SEEN:
        return False
    CASE_SEEN.add(key)
    return True


class unrecorded:  # noqa: N801 - used like a function: ``with unrecorded(): ...``
    """Reads inside this block are not recorded (a cache filled from the whole profile on its
    first use, whose users record what they depend on themselves: suite.perf.network.placement).
    Fields first read inside it are hidden again afterwards, so the case's own reads still count."""

    __slots__ = ("_before",)

    def __enter__(self) -> None:
        self._before = set(_ACTIVE[0].reads) if _ACTIVE else None

    def __exit__(self, *exc: Any) -> None:
        before = self._before
        if before is None or not _ACTIVE:
            return
        rec = _ACTIVE[0]
        new = rec.reads - before
        rec.reads.intersection_update(before)
        if new:
            rec.plan.rehide(new)
