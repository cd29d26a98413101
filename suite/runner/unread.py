"""Overrides a run's cases did not read: the warnings at the end of ``suite run``.

A ``--set`` of a profile field that no evaluation reads changes a case's key but not its result.
Two checks, both from the reads each case recorded (``fields_read``): a technique that read the
field in no case of the run (:func:`unread_overrides`, over the run's own record and the store's),
and one that read it in some of the run's cases (computed, or reused with the reads their stored
results recorded) but not in others (:class:`OverrideReads`: a model that takes another path for
some parameters, e.g. a published fit in place of the network model).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from suite.hardware.tracking import covers, normalize_path

if TYPE_CHECKING:
    from suite.results.store import Store
    from suite.runner.case import Case

__all__ = ["Reads", "unread_overrides", "OverrideReads"]

#: (technique, code, variant, fidelity) -> the profile fields its evaluations read
Reads = dict[tuple[str, str, str, str], set[str]]


def unread_overrides(cases: Sequence[Case], store: Store, seen: Reads, run_id: int | None = None,
                     warned: set[tuple[str, str]] | None = None) -> list[str]:
    """One warning per (technique, overridden field) that no evaluation of that technique's code
    was seen to read: the run's own record (the reads of the results it computed, *seen*, and of
    those it reused, :meth:`Store.run_fields_read` of *run_id*: None when it reused none, so the
    store is not asked what *seen* holds); only for a technique of which that record has none, the
    store's for the same code. *warned* (when given) gains each (technique, field) warned about."""
    out: list[str] = []
    if not cases:  # no case overrides a field: nothing to warn of (and no query)
        return out
    done: set[tuple[str, str]] = set() if warned is None else warned
    known: dict[tuple[str, str], set[str] | None] = {}
    own = (store.run_fields_read(run_id) if run_id is not None else None) or {}
    for c in cases:
        if not c.overrides:
            continue
        kc = (c.technique, c.code or "")
        if kc not in known:
            reads = set(own.get(kc, ()))
            for (t, code, _v, _f), r in seen.items():
                if (t, code) == kc:
                    reads |= r
            if not reads:  # the run recorded none (every case reused from before reads were kept)
                for r in store.fields_read(c.technique, c.code or "").values():
                    reads |= r
            known[kc] = reads or None
        known_reads = known[kc]
        if known_reads is None:  # nothing recorded (every case cached from an older store, or failed)
            continue
        for k in c.overrides:
            if (c.technique, k) in done:  # already warned: not re-checked for every case of a sweep
                continue
            path = normalize_path(k, c.scenario.profile if c.scenario is not None else None)
            if not covers(known_reads, path):
                done.add((c.technique, k))
                out.append(f"--set {k}: {c.technique} never read profile field {path!r} in this run, so its "
                           f"results do not depend on it (the cases differ only in their keys); see "
                           f"`suite info {c.technique}` for the fields it reads")
    return out


class OverrideReads:
    """Per (technique, overridden field): how many cases of a run (computed or reused from the
    store) asked for the override, how many of them did not read the field, and one of those
    (described) as an example."""

    __slots__ = ("tally", "_memo", "_paths")

    def __init__(self) -> None:
        self.tally: dict[tuple[str, str], list[Any]] = {}  # -> [missed, total, path, example]
        # (reads, profile name, technique, overridden fields) -> the tally rows of those fields, each
        # with 1 when the reads miss it: a sweep repeats a few. The profile's name stands for its
        # network's levels (what a path's negative index needs): overrides never add or remove one
        self._memo: dict[tuple[Any, ...], tuple[tuple[list[Any], int], ...]] = {}
        # (profile name, overridden field) -> its path: the profile is read from a case's scenario,
        # which a case reused from the store builds only here, once per pair
        self._paths: dict[tuple[str | None, str], str] = {}

    def note(self, case: Case, reads: Sequence[str]) -> None:
        """Count one case with overrides and the profile fields *reads* it recorded (computing it
        now, or when it was stored)."""
        key = (tuple(reads), case.profile, case.technique, tuple(case.overrides))
        rows = self._memo.get(key)
        if rows is None:
            if len(self._memo) > 4096:
                self._memo.clear()
            rows = self._memo[key] = self._rows(case, reads)
        for t, miss in rows:
            t[1] += 1
            if miss:
                t[0] += 1
                if t[3] is None:
                    t[3] = case.describe()

    def _rows(self, case: Case, reads: Sequence[str]) -> tuple[tuple[list[Any], int], ...]:
        """The tally rows of *case*'s overridden fields, each with 1 when *reads* miss its field."""
        got = set(reads)
        rows = []
        for k in case.overrides:
            path = self._paths.get((case.profile, k))
            if path is None:
                prof = case.scenario.profile if case.scenario is not None else None
                path = self._paths[(case.profile, k)] = normalize_path(k, prof)
            t = self.tally.get((case.technique, k))
            if t is None:
                t = self.tally[(case.technique, k)] = [0, 0, path, None]
            rows.append((t, int(not covers(got, path))))
        return tuple(rows)

    def warnings(self, warned: set[tuple[str, str]]) -> list[str]:
        """One line per (technique, field) that cases of the run did not read, unless
        :func:`unread_overrides` warned that the technique never read it (*warned*)."""
        out = []
        for (tech, k), (missed, total, path, example) in self.tally.items():
            if missed and (tech, k) not in warned:
                out.append(f"--set {k}: {missed} of {total} {tech} cases of this run did not read profile "
                           f"field {path!r}, so their results do not depend on it (e.g. {example}); see "
                           f"`suite info {tech}` for the fields it reads")
        return out
