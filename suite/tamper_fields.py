"""Objects' fields, two levels down, compared and put back: another plugin's technique, already built.

:mod:`suite.tamper` compares the shared modules' names and tables; an object held by the registry
(a :class:`suite.technique.Technique` another plugin built) is not a namespace. :class:`Fields`
takes its fields before a plugin's code runs and puts back what changed after.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import chain
from operator import is_
from typing import Any

__all__ = ["Fields", "same_items_dict"]


class Fields:
    """The fields of some objects (another plugin's :class:`suite.technique.Technique`, already
    built), three objects down (containers cost no level): each object's ``vars()``, the items of
    each dict, list or tuple it holds, and so on (a parameter, a variant, a claim, its band, its
    scenarios and their parameters). A plugin's hook that rewrote another plugin's technique past its freeze
    (``object.__setattr__(technique, "fidelities", {...})``, a parameter's unit, a claim's band)
    changed every number and verdict of that technique without rebinding any name
    (:func:`suite.tamper.snapshot` compares namespaces and their tables, not objects). :meth:`put_back`
    compares by identity, restores what changed and names it."""

    __slots__ = ("_saved", "_fast", "_objects", "_own")

    def __init__(self, objects: Iterable[tuple[str, Any]],
                 own: Callable[[dict[Any, Any], dict[Any, Any]], bool] | None = None) -> None:
        """*own(now, then)*: whether a dict whose items changed from *then* to *now* was changed by
        its owner's own code (a technique's fidelity reference resolved on first use,
        :meth:`suite.technique.Technique.changed_by_itself`): taken again, not reported."""
        self._objects, self._own = list(objects), own
        self._take_all()

    def _take_all(self) -> None:
        self._saved: list[tuple[str, Any, Any]] = []
        for label, obj in self._objects:
            self._take(label, obj, depth=3)
        dicts = [(now, then) for _label, now, then in self._saved if isinstance(now, dict)]
        lists = [(now, then) for _label, now, then in self._saved if not isinstance(now, dict)]
        # the same, laid out for one C loop per test (a load compares every technique built before it)
        self._fast = ([n for n, _t in dicts], [len(t) for _n, t in dicts],
                      tuple(chain.from_iterable(t.keys() for _n, t in dicts)),
                      tuple(chain.from_iterable(t.values() for _n, t in dicts)),
                      [n for n, _t in lists], [len(t) for _n, t in lists], tuple(chain.from_iterable(t for _n, t in lists)))

    def unchanged(self) -> bool:
        """Whether every object, dict and list holds what it held when taken (the same objects, in order)."""
        dicts, dlens, keys, values, lists, llens, items = self._fast
        return (list(map(len, dicts)) == dlens and list(map(len, lists)) == llens
                and all(map(is_, chain.from_iterable(map(dict.keys, dicts)), keys))
                and all(map(is_, chain.from_iterable(map(dict.values, dicts)), values))
                and all(map(is_, chain.from_iterable(lists), items)))

    def _take(self, label: str, obj: Any, depth: int) -> None:
        """Save *obj* (an object's fields, a dict's or a list's items) and what it holds: an object
        costs a level of *depth*, a container none (technique -> its claims -> a claim -> its band
        and scenarios -> a scenario's parameters)."""
        if depth < 0:
            return
        d = getattr(obj, "__dict__", None)
        if isinstance(d, dict):
            self._saved.append((label, d, dict(d)))
            items: Iterable[tuple[Any, Any]] = d.items()
            depth -= 1
        elif isinstance(obj, dict):
            self._saved.append((label, obj, dict(obj)))
            items = obj.items()
        elif isinstance(obj, (list, tuple)):
            if isinstance(obj, list):
                self._saved.append((label, obj, list(obj)))
            items = enumerate(obj)
        else:
            return
        for k, v in items:
            if isinstance(v, (dict, list, tuple)) or hasattr(v, "__dict__") and not callable(v):
                self._take(f"{label}.{k}", v, depth)

    def _settled(self) -> bool:
        """Whether every change is its owner's own (then each is taken again as the state to keep)."""
        own = self._own
        if own is None:
            return False
        for _label, now, then in self._saved:
            if isinstance(now, dict):
                if not same_items_dict(now, then) and not own(now, then):
                    return False
            elif len(now) != len(then) or not all(map(is_, now, then)):
                return False
        self._take_all()
        return True

    def put_back(self) -> list[str]:
        """What changed since the snapshot (``technique 'x'.fidelities``), each put back."""
        changed: list[str] = []
        if self.unchanged() or self._settled():
            return changed
        for label, now, then in self._saved:
            if isinstance(now, dict):
                if same_items_dict(now, then):
                    continue
                changed += [f"{label}.{k}" for k in dict.fromkeys([*now, *then])
                            if k not in now or k not in then or now[k] is not then[k]] or [label]
                dict.clear(now)
                dict.update(now, then)
            elif len(now) != len(then) or not all(map(is_, now, then)):
                now[:] = then
                changed.append(label)
        return changed


def same_items_dict(now: dict[Any, Any], then: dict[Any, Any]) -> bool:
    """The same keys bound to the same objects, in order."""
    return len(now) == len(then) and all(map(is_, dict.keys(now), then)) and all(map(is_, dict.values(now),
                                                                                  then.values()))
