"""A technique's declared metric meanings (``Technique.metric_meanings``, ``[metric_meanings]``):
checking the declaration and looking a metric up in it.

The declaration is a mapping that mirrors the ``technique.toml`` table::

    {"NAME": MetricMeaning | {"unit", "direction", "meaning"},   # at every fidelity
     "layer_time.<i>": ...,              # a pattern: "<i>" stands for one or more digits
     "include": ["package.module:ATTR"], # mappings of name -> MetricMeaning a core helper exports
     "execute": {"NAME": ..., "include": [...]}}   # one fidelity's own: over the shared ones

At a fidelity, a metric's meaning is, from the weakest: the vocabulary's, the shared entries
(their includes, then their own), that fidelity's (its includes, then its own). The includes are
resolved once, when the technique is built (:func:`lookups`): a bad one is refused then, and a
lookup reads a dict.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from suite.declaration.vocabulary import FIDELITIES, MetricMeaning, Vocabulary, is_reference, resolve_reference
from suite.errors import TechniqueError

#: the key that lists references to shared meaning mappings (``include = ["suite.api:..."]``)
INCLUDE = "include"
#: what a pattern key writes for an index: one or more decimal digits (``layer_time.<i>``)
INDEX = "<i>"


def check_declared(declared: Mapping[str, Any], where: str, fidelities: Iterable[str],
                   vocabulary: Vocabulary | None) -> dict[str, Any]:
    """The declaration *declared* with every entry a :class:`MetricMeaning`, each include a
    tuple of references and each fidelity key (one of *fidelities*) a checked sub-mapping.

    Raises
    ------
    TechniqueError
        One line, naming ``where[KEY]``: an entry neither a MetricMeaning nor a table of unit,
        direction and meaning; a metric of *vocabulary* (its meaning is the vocabulary's); a key
        with ``<`` or ``>`` other than ``<i>``; an include not a reference (or list of them); a
        fidelity the technique does not have, or one nested in another.
    """
    out: dict[str, Any] = {}
    for name, value in dict(declared).items():
        at = f"{where}[{name!r}]"
        if name in FIDELITIES:
            if name not in fidelities or not isinstance(value, Mapping) or set(value) & set(FIDELITIES):
                raise TechniqueError(f"{at}: expected a table of a fidelity the technique has "
                                     f"({', '.join(fidelities)}) holding metrics, got {value!r}"[:300])
            out[name] = check_declared(value, at, (), vocabulary)
        elif name == INCLUDE:
            refs = (value,) if isinstance(value, str) else tuple(value) if isinstance(value, (list, tuple)) else ()
            if not refs or not all(is_reference(r) for r in refs):
                raise TechniqueError(f"{at}: expected references 'package.module:NAME' to mappings of metric "
                                     f"meanings, got {value!r}")
            out[name] = refs
        else:
            out[name] = _entry(name, value, at, vocabulary)
    from suite.frozen import FrozenDict

    return FrozenDict(out)  # read-only: another plugin cannot rewrite what a technique's metrics mean


def _entry(name: str, value: Any, at: str, vocabulary: Vocabulary | None) -> MetricMeaning:
    """One checked entry of :func:`check_declared`."""
    if vocabulary is not None and name in vocabulary.metrics:
        raise TechniqueError(f"{at}: expected a metric outside the vocabulary {vocabulary.name!r} (its meaning "
                             f"is the vocabulary's), got {name!r}")
    if re.search(r"[<>]", name.replace(INDEX, "")):
        raise TechniqueError(f"{at}: expected a metric name, or a pattern writing {INDEX} for an index, "
                             f"got {name!r}")
    if isinstance(value, Mapping):
        fields = {"unit", "direction", "meaning"}
        if set(value) != fields:
            raise TechniqueError(f"{at}: expected the keys {sorted(fields)}, got {sorted(value)}")
        try:
            value = MetricMeaning(**value)
        except ValueError as e:
            raise TechniqueError(f"{at}.{e}") from None
    if not isinstance(value, MetricMeaning):
        raise TechniqueError(f"{at}: expected a MetricMeaning or a table of unit, direction and "
                             f"meaning, got {type(value).__name__}")
    return value


#: what turns an include's fault into the one-line error of its caller: (expected, given) -> the error
Fail = Callable[[str, Any], Exception]


class Lookup(NamedTuple):
    """What a technique's metrics mean at one fidelity, its includes resolved once (when the
    technique is built): :meth:`suite.technique.Technique.meaning` is then a dict lookup."""

    #: metric name or ``<i>`` pattern -> (where declared, the meaning): the vocabulary's first, each later over an earlier
    sources: Mapping[str, tuple[str, MetricMeaning]]
    #: every name and pattern of :attr:`sources` -> what :func:`lookups`' search gives it
    names: Mapping[str, MetricMeaning]
    #: (the pattern's regular expression, its meaning), the strongest layer's first: for a name not in :attr:`names`
    patterns: tuple[tuple[re.Pattern[str], MetricMeaning], ...]


def lookups(declared: Mapping[str, Any], fidelities: Iterable[str], where: str,
            vocabulary: Vocabulary | None) -> Mapping[str | None, Lookup]:
    """Fidelity (None: the shared meanings only) -> its :class:`Lookup`, of a declaration
    :func:`check_declared` checked, every include resolved (:func:`included`) once.

    At a fidelity the layers are, from the weakest: the vocabulary's, the shared includes (source:
    the reference), the shared entries (``"technique"``), that fidelity's includes and its own
    entries (``"technique, FIDELITY"``). A metric's meaning is the strongest layer's that declares
    it, a name before a pattern in each (a shared ``layer_time.0`` does not beat the fidelity's own
    ``layer_time.<i>``); a vocabulary's metric means what the vocabulary says.

    Raises
    ------
    TechniqueError
        An include that does not import, is not a mapping of name -> MetricMeaning, or defines
        a metric of *vocabulary*: one line naming ``where[FIDELITY]['include']`` and the reference.
    """
    from suite.frozen import FrozenDict

    shared = _layers(declared, "technique", where, vocabulary)
    out: dict[str | None, Lookup] = {None: _lookup(shared, vocabulary)}
    for f in fidelities:
        if f in declared:
            out[f] = _lookup(shared + _layers(declared[f], f"technique, {f}", f"{where}[{f!r}]", vocabulary),
                             vocabulary)
    return FrozenDict(out, what=f"{where} (resolved)")


def _layers(table: Mapping[str, Any], own: str, where: str,
            vocabulary: Vocabulary | None) -> list[tuple[str, Mapping[str, MetricMeaning]]]:
    """(source, name -> meaning) of one table of a declaration: its includes, then its own entries."""
    def fail(expected: str, given: Any) -> TechniqueError:
        return TechniqueError(f"{where}[{INCLUDE!r}]: expected {expected}, got {given!r}")

    out: list[tuple[str, Mapping[str, MetricMeaning]]] = [(ref, included(ref, fail, vocabulary))
                                                          for ref in table.get(INCLUDE, ())]
    return out + [(own, {k: v for k, v in table.items() if isinstance(v, MetricMeaning)})]


def _lookup(layers: list[tuple[str, Mapping[str, MetricMeaning]]], vocabulary: Vocabulary | None) -> Lookup:
    """The :class:`Lookup` of *layers* (weakest first) over *vocabulary*'s metrics."""
    from suite.frozen import FrozenDict

    voc: dict[str, tuple[str, MetricMeaning]] = {} if vocabulary is None else {
        m: (f"vocabulary {vocabulary.name}", MetricMeaning(u, d, vocabulary.meanings[m]))
        for m, (u, d) in vocabulary.metrics.items()}
    sources = dict(voc)
    for source, table in layers:
        sources.update({m: (source, d) for m, d in table.items()})
    strongest = layers[::-1]
    names = {m: _search(strongest, m) for m in sources if m not in voc}
    patterns = tuple((_pattern(k), d) for _source, table in strongest for k, d in table.items() if INDEX in k)
    return Lookup(FrozenDict(sources), FrozenDict({**names, **{m: d for m, (_s, d) in voc.items()}}), patterns)


def _search(strongest: list[tuple[str, Mapping[str, MetricMeaning]]], metric: str) -> MetricMeaning:
    """The meaning of *metric* (declared in some layer) in the strongest layer declaring it."""
    return next(table[key] for _source, table in strongest if (key := find(table, metric)) is not None)


def included(ref: str, fail: Fail, vocabulary: Vocabulary | None = None) -> dict[str, MetricMeaning]:
    """The meanings the include *ref* (``"package.module:NAME"``) names, checked like a technique's
    own entries (a metric of *vocabulary* is refused).

    Raises
    ------
    Exception
        ``fail(expected, ref)``: the reference does not import (whatever its module raised, named),
        names no mapping, or a value of it is no :class:`MetricMeaning` (the key named).
    """
    try:
        value = resolve_reference(ref)
    except Exception as e:  # noqa: BLE001 - whatever the module raises on import: one line naming the include
        raise fail(f"a reference 'package.module:NAME' that imports ({type(e).__name__}: {e})", ref) from None
    what = "a reference to a mapping of metric name -> MetricMeaning"
    if not isinstance(value, Mapping):
        raise fail(f"{what} (it names a {type(value).__name__})", ref)
    try:
        return {k: _entry(k, v, f"{ref}[{k!r}]", vocabulary) for k, v in value.items()}
    except TechniqueError as e:
        raise fail(f"{what} ({e})", ref) from None


def _pattern(key: str) -> re.Pattern[str]:
    """The expression a pattern key matches: each ``<i>`` one or more digits."""
    return re.compile(r"\d+".join(map(re.escape, key.split(INDEX))))


def find(meanings: Mapping[str, MetricMeaning], metric: str) -> str | None:
    """The key of *meanings* that declares *metric*: the name itself, else a pattern whose
    ``<i>`` parts match one or more digits each (``layer_time.<i>`` declares ``layer_time.0``);
    None: none does."""
    if metric in meanings:
        return metric
    for key in meanings:
        if INDEX in key and _pattern(key).fullmatch(metric):
            return key
    return None
