"""The judgement cache: a judged outcome stored in the results store, keyed by everything the
judgement reads, so a reproduce whose cases are all stored re-derives nothing.

The key (:func:`judgement_key`) covers the claim's declaration, the code that computes and judges
it, the case keys and the stored results' content; error rows are never cached
(:func:`cacheable`) and ``--rerun`` judges afresh. The value is the outcome as JSON that restores
every field with its type (:func:`encode_outcome`, :func:`restore_outcome`).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from suite.declaration.vocabulary import unwrap_partial
from suite.runner.verdicts import BOOTSTRAP_REPLICATES, CONFIDENCE, ERROR, ClaimOutcome, NullOutcome, safe_text

if TYPE_CHECKING:
    from suite.runner.case import Case
    from suite.runner.judging import NullCases
    from suite.technique import Claim, Technique

__all__ = ["judgement_key", "cacheable", "encode_outcome", "restore_outcome", "Uncacheable"]

#: bump when the meaning of a cached judgement changes in a way no fingerprint below sees
JUDGEMENT_FORMAT = 2


def _package_fingerprint(module: str | None) -> str:
    """:func:`~suite.runner.fingerprint.package_fingerprint` of the top-level package of *module*."""
    from suite.runner.fingerprint import package_fingerprint

    return str(package_fingerprint((module or "").split(".")[0]))


def _claim_identity(claim: Claim) -> dict[str, Any]:
    """The parts of the key that come from the claim's declaration and the code it names: the
    claim's ``derive`` and ``domain`` and each null's ``derive`` (``Null.derive`` is left out of
    the null's ``repr``), by their packages' fingerprints and their own code and closure values."""
    called = (unwrap_partial(claim.derive), type(claim.expect), unwrap_partial(claim.domain),
              *(unwrap_partial(n.derive) for n in claim.nulls))
    return {
        "claim": [claim.id, claim.statement, claim.source, claim.verified, claim.note, claim.null_reason,
                  bool(claim.measured), claim.metric, safe_text(claim.expect.describe), repr(claim.expect),
                  repr(claim.specs()), [repr(n) for n in claim.nulls], claim.defect, claim.reason_class,
                  claim.reason, [repr(a) for a in claim.assumptions]],
        "code": sorted({_package_fingerprint(getattr(f, "__module__", None)) for f in called
                        if f is not None and callable(f)}),
        "derive": _function_identity(claim.derive),
        "null_derive": [_function_identity(n.derive) for n in claim.nulls],
        "domain": _function_identity(claim.domain) if callable(claim.domain) else repr(claim.domain),
    }


def judgement_key(tech: Technique, claim: Claim, cases: Mapping[str, Case], nulls: Sequence[NullCases],
                  digests: Mapping[str, str]) -> str:
    """The cache key of *claim*'s judgement: a SHA-256 of everything :func:`~suite.runner.judging.judge` reads.

    That is the claim's declaration (statement, source, band, scenarios, nulls, ...); the code
    that computes and judges it (the technique's version and code fingerprint, the packages that
    define its ``derive`` and acceptance, every source file of the ``suite`` package, the numpy
    and Python versions: the bootstrap's draws and quantiles); the case keys of the claim and of
    every null (or the reason a null does not resolve); and each case's stored status and
    content (:meth:`Store.content_digests`). Empty (not cached) when a case is not stored.
    """
    import hashlib
    import json
    import sys

    # the numpy and scipy versions as the case keys read them (installed metadata, read once per
    # process): importing numpy for its __version__ was 0.1 s of a fully cached `suite reproduce`
    from suite.runner.fingerprint import _library_versions, code_fingerprint

    def digest(cs: Mapping[str, Case]) -> dict[str, list[str]]:
        out = {}
        for label, c in cs.items():
            d = digests.get(c.key)
            if d is None:
                raise KeyError(c.key)
            out[label] = [c.key, d]
        return out

    try:
        ident = {
            "format": JUDGEMENT_FORMAT, "python": sys.version, "libraries": _library_versions(),
            "core": _package_fingerprint(__name__),
            "technique": [tech.name, tech.version, code_fingerprint(tech)],
            **_claim_identity(claim),
            "cases": digest(cases),
            "nulls": [[n.label, digest(nc) if nc else None, why] for n, nc, why in nulls],
            "replicates": BOOTSTRAP_REPLICATES, "confidence": CONFIDENCE,
        }
        blob = json.dumps(ident, sort_keys=True, separators=(",", ":"), default=repr)
    except Exception:  # noqa: BLE001 - a case not stored, an identity that does not hash: not cached
        return ""
    return hashlib.sha256(blob.encode()).hexdigest()


def _function_identity(f: Any, depth: int = 0) -> Any:
    """What a ``derive`` function computes with, beyond its package's source (two lambdas of one
    module differ here): its qualified name, byte code, constants, names, defaults and closure
    values (nested functions and ``functools.partial`` likewise). Anything else is its ``repr``
    (one that names an address never hits the cache: safe, only slower)."""
    if f is None:
        return None
    if isinstance(f, functools.partial):
        return ["partial", _function_identity(f.func, depth + 1), repr(f.args), repr(sorted(f.keywords.items()))]
    code = f if hasattr(f, "co_code") else getattr(f, "__code__", None)
    if code is None or depth > 3:
        return repr(f)

    def const(c: Any) -> Any:
        return _function_identity(c, depth + 1) if hasattr(c, "co_code") else repr(c)

    def cell(c: Any) -> Any:
        try:
            v = c.cell_contents
        except ValueError:
            return "<empty>"
        return _function_identity(v, depth + 1) if callable(v) and hasattr(v, "__code__") else repr(v)

    if not hasattr(f, "co_code"):  # a function: its code object and what it closes over
        return [getattr(f, "__module__", None), getattr(f, "__qualname__", None), _function_identity(code, depth),
                repr(getattr(f, "__defaults__", None)), [cell(c) for c in (getattr(f, "__closure__", None) or ())]]
    return [code.co_code.hex(), [const(c) for c in code.co_consts], list(code.co_names)]


def cacheable(o: ClaimOutcome) -> bool:
    """Whether a judged outcome may be cached: not when an exception decided it (an error row,
    or a null whose value raised), which may be passing (a locked store, memory); errors are
    cheap to judge again."""
    return o.verdict != ERROR and not any(n.reason.startswith("null value could not be derived") for n in o.nulls)


class Uncacheable(Exception):
    """An outcome holds a value of a type the cache cannot round-trip (it is judged each time)."""


def _enc(v: Any) -> Any:
    """*v* as JSON that :func:`_dec` turns back into an equal value of the same types (tuples,
    non-string keys, numpy scalars and non-finite floats included)."""
    t = type(v)
    if v is None or t is bool or t is str or t is int:
        return v
    if t is float:
        return v if math.isfinite(v) else {"~f": repr(v)}
    if t is list:
        return [_enc(x) for x in v]
    if t is tuple:
        return {"~t": [_enc(x) for x in v]}
    if t is dict:
        return {"~d": [[_enc(k), _enc(x)] for k, x in v.items()]}
    import numpy as np

    if isinstance(v, np.generic) and t in (np.float64, np.float32, np.int64, np.int32, np.bool_):
        return {"~n": np.dtype(t).str, "v": _enc(v.item())}
    raise Uncacheable(t.__name__)


def _dec(v: Any) -> Any:
    if isinstance(v, list):
        return [_dec(x) for x in v]
    if isinstance(v, dict):
        if "~f" in v:
            return float(v["~f"])
        if "~t" in v:
            return tuple(_dec(x) for x in v["~t"])
        if "~d" in v:
            return {_dec(k): _dec(x) for k, x in v["~d"]}
        if "~n" in v:
            import numpy as np

            return np.dtype(v["~n"]).type(_dec(v["v"]))
        raise ValueError(f"unknown encoding {sorted(v)}")
    return v


def encode_outcome(o: ClaimOutcome) -> str:
    """*o* as JSON text (every field; :class:`Uncacheable` when a value cannot round-trip)."""
    import dataclasses
    import json

    d = {f.name: _enc(getattr(o, f.name)) for f in dataclasses.fields(o) if f.name != "nulls"}
    d["nulls"] = [{f.name: _enc(getattr(n, f.name)) for f in dataclasses.fields(n)} for n in o.nulls]
    return json.dumps(d, separators=(",", ":"))


def restore_outcome(o: ClaimOutcome, text: str) -> None:
    """Fill *o* from :func:`encode_outcome`'s text (every field: the cached judgement).

    Raises ValueError (or a JSON or type error) when *text* is not an outcome of this version."""
    import dataclasses
    import json

    d = json.loads(text)
    names = {f.name for f in dataclasses.fields(o)}
    if set(d) != names:
        raise ValueError("fields differ")
    values = {k: _dec(v) for k, v in d.items() if k != "nulls"}
    nulls = [NullOutcome(**{k: _dec(v) for k, v in n.items()}) for n in d["nulls"]]
    for k, v in values.items():
        setattr(o, k, v)
    o.nulls = nulls
