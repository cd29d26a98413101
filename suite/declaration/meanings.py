"""A technique's declared metric meanings (``Technique.metric_meanings``, ``[metric_meanings]``):
checking the declaration and looking a metric up in it.

The declaration is a mapping that mirrors the ``technique.toml`` table::

    {"NAME": MetricMeaning | {"unit", "direction", "meaning"},   # at every fidelity
     "layer_time.<i>": ...,              # a pattern: "<i>" stands for one or more digits
     "include": ["package.module:ATTR"], # mappings of name -> MetricMeaning a core helper exports
     "execute": {"NAME": ..., "include": [...]}}   # one fidelity's own: over the shared ones

At a fidelity, a metric's meaning is, from the weakest: the vocabulary's, the shared entries
(their includes, then their own), that fidelity's (its includes, then its own).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

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


def layers(declared: Mapping[str, Any], fidelity: str | None, where: str,
           vocabulary: Vocabulary | None) -> list[tuple[str, dict[str, MetricMeaning]]]:
    """(source, name -> meaning) of a checked declaration, weakest first: the shared includes
    (source: the reference), the shared entries (``"technique"``), then *fidelity*'s includes and
    entries (``"technique, FIDELITY"``); None: the shared ones only.

    Raises
    ------
    TechniqueError
        An include that does not import, is not a mapping of name -> MetricMeaning, or defines
        a metric of *vocabulary* (one line naming ``where`` and the reference).
    """
    out = []
    tables = [(declared, "technique")]
    if fidelity is not None:  # (a slice of the shared layers dropped the technique's own with two includes)
        tables.append((declared.get(fidelity, {}), f"technique, {fidelity}"))
    for table, own in tables:
        out += [(ref, _included(ref, where, vocabulary)) for ref in table.get(INCLUDE, ())]
        out.append((own, {k: v for k, v in table.items() if isinstance(v, MetricMeaning)}))
    return out


def _included(ref: str, where: str, vocabulary: Vocabulary | None) -> dict[str, MetricMeaning]:
    """The meanings *ref* names, checked like a technique's own entries."""
    try:
        value = resolve_reference(ref)
    except (ImportError, AttributeError) as e:
        raise TechniqueError(f"{where}[{INCLUDE!r}]: expected an importable reference, got {ref!r} ({e})") from None
    if not isinstance(value, Mapping):
        raise TechniqueError(f"{where}[{INCLUDE!r}]: expected {ref!r} to be a mapping of metric name -> "
                             f"MetricMeaning, got {type(value).__name__}")
    return {k: _entry(k, v, f"{where}[{INCLUDE!r}] {ref}[{k!r}]", vocabulary) for k, v in value.items()}


def find(meanings: Mapping[str, MetricMeaning], metric: str) -> str | None:
    """The key of *meanings* that declares *metric*: the name itself, else a pattern whose
    ``<i>`` parts match one or more digits each (``layer_time.<i>`` declares ``layer_time.0``);
    None: none does."""
    if metric in meanings:
        return metric
    for key in meanings:
        if INDEX in key and re.fullmatch(r"\d+".join(map(re.escape, key.split(INDEX))), metric):
            return key
    return None
