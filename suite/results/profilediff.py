"""Which fields differ between the hardware profiles two compared runs used (:func:`profile_diff`),
and the merging of case pairs that differ the same way (:func:`merge_diffs`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from suite.errors import SuiteError

__all__ = ["ProfileDiff", "profile_diff", "merge_diffs", "fmt"]


@dataclass
class ProfileDiff:
    """The fields that differ between the profiles of side A and side B of some pairs."""

    profile_a: str
    profile_b: str
    hash_a: str | None
    hash_b: str | None
    fields: dict[str, tuple[Any, Any]]  # dotted path -> (a, b), SI units
    notes: list[str] = field(default_factory=list)
    pairs: int = 0  # how many case pairs differ this way
    unresolved: tuple[str, ...] = ()  # the sides ("A", "B") whose profile cannot be resolved now

    def lines(self) -> list[str]:
        out = [f"profile {self.profile_a} [{self.hash_a}] vs {self.profile_b} [{self.hash_b}] "
               f"({self.pairs} case pair(s)):"]
        for path, (a, b) in self.fields.items():
            out.append(f"  {path}: {fmt(a)} -> {fmt(b)}")
        if not self.fields:
            out.append(self.no_fields_line())
        out += [f"  note: {n}" for n in self.notes]
        return out

    def no_fields_line(self) -> str:
        """The line shown when ``fields`` is empty: which sides' fields are unknown (a profile that
        cannot be resolved now), else that no field differs."""
        if not self.unresolved:
            return "  (no field differs in the current profile files)"
        names = " and ".join(f"{self.profile_a if s == 'A' else self.profile_b!r} (side {s})" for s in self.unresolved)
        files = "their files" if len(self.unresolved) > 1 else "its file"
        return f"  (fields unknown: profile {names} cannot be resolved now; pass --profiles DIR holding {files})"


def fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.6g}"
    return "(absent)" if v is None else str(v)


def _flatten(d: Any, prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    if isinstance(d, Mapping):
        for k, v in d.items():
            out.update(_flatten(v, f"{prefix}{k}."))
    elif isinstance(d, (list, tuple)):
        for i, v in enumerate(d):
            out.update(_flatten(v, f"{prefix}{i}."))
    else:
        out[prefix[:-1]] = d
    return out


def _fields_of(prof: Any, side: str, notes: list[str]) -> dict[str, Any]:
    """*prof*'s figures flattened (:meth:`Profile.normalized`, less the ``overrides`` record); the levels
    whose published fits its overrides set aside, which are no field of the file, go to *notes*."""
    d = prof.normalized()
    d.pop("overrides", None)
    aside = d.pop("fits_set_aside_on", None)
    if aside:
        notes.append(f"side {side}: its overrides name network level(s) {', '.join(map(str, aside))}: a published "
                     f"all-reduce fit whose workers cross one is set aside (suite.perf.allreduce_fit) and the model "
                     f"prices that collective")
    return _flatten(d)


def profile_diff(name_a: str, overrides_a: Mapping[str, Any], name_b: str, overrides_b: Mapping[str, Any],
                 *, hash_a: str | None = None, hash_b: str | None = None, profile_dirs: tuple[Any, ...] = (),
                 context: Any = None) -> ProfileDiff:
    """Which fields differ between two resolved profiles (name + overrides), in SI units.

    Parameters
    ----------
    name_a, name_b : str
        Profile names (or paths) as stored with the cases.
    overrides_a, overrides_b : mapping
        The stored overrides (field path -> value as given).
    hash_a, hash_b : str, optional
        The stored content hashes; when the current profile files give another hash, a note
        says the profile changed since the run.
    profile_dirs : tuple of path
        Extra profile folders.
    context : suite.context.Context
        Where the profiles are resolved now; without one, no profile is resolved (a note says
        so).

    Returns
    -------
    ProfileDiff
        ``fields``: dotted path -> (value in A, value in B), for every figure of
        :meth:`Profile.normalized` that differs (the ``overrides`` record itself is left out:
        its effect is in the figures; the levels whose published fits an override set aside are
        in ``notes``).
    """
    lookup = context.with_profile_dirs(tuple(profile_dirs)).profile if context is not None else None
    notes: list[str] = []
    flat: list[dict[str, Any] | None] = []
    unresolved: list[str] = []
    for side, name, ov, stored in (("A", name_a, overrides_a, hash_a), ("B", name_b, overrides_b, hash_b)):
        try:
            if lookup is None:
                raise SuiteError("no context given to resolve it (pass context=)")
            prof = lookup(name)
            if ov:
                prof = prof.with_overrides(dict(ov))
        except SuiteError as exc:
            notes.append(f"side {side}: profile {name!r} cannot be resolved now: {exc}")
            flat.append(None)
            unresolved.append(side)
            continue
        now = prof.content_hash()
        if stored and now != stored:
            notes.append(f"side {side}: profile {name!r} now hashes to {now}, the run stored {stored}: the profile "
                         f"file changed since; the differences below are against the current file")
        flat.append(_fields_of(prof, side, notes))
    fields: dict[str, tuple[Any, Any]] = {}
    fa, fb = flat
    if fa is not None and fb is not None:
        for k in sorted(set(fa) | set(fb)):
            va, vb = fa.get(k), fb.get(k)
            if va != vb:
                fields[k] = (va, vb)
    return ProfileDiff(name_a, name_b, hash_a, hash_b, fields, notes, unresolved=tuple(unresolved))


def merge_diffs(diffs: Iterable[ProfileDiff]) -> list[ProfileDiff]:
    """Pairs that differ the same way (e.g. the same latency change at every swept bandwidth) as
    one :class:`ProfileDiff`: pairs summed, notes united, a hash that varies shown as ``several``."""
    merged: dict[str, ProfileDiff] = {}
    for d in diffs:
        sig = json.dumps([d.profile_a, d.profile_b, {k: [fmt(x) for x in v] for k, v in d.fields.items()},
                          d.unresolved], sort_keys=True)
        m = merged.get(sig)
        if m is None:
            merged[sig] = d
            continue
        m.pairs += d.pairs
        m.notes = sorted(set(m.notes) | set(d.notes))
        if m.hash_a != d.hash_a:
            m.hash_a = "several"
        if m.hash_b != d.hash_b:
            m.hash_b = "several"
    return list(merged.values())
