"""One-line messages for invalid profile files and extension tables.

Every problem a :class:`pydantic.ValidationError` holds is worded as
``<file>: field <a.b.c>: expected <what>, got <given> (<why>)`` (the project's rule for bad input),
the expected value described from the field's annotation (a quantity's dimension and an example
with its unit, a literal's choices, a table).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from suite.hardware.schema import ProfileDoc
from suite.errors import did_you_mean
from suite.hardware.units import DIMENSIONS, dimension_of

__all__ = ["FILE_CONTEXT", "MAX_LISTED", "format_validation_error"]

#: Validation context for profile files: quantities must be strings with a unit.
FILE_CONTEXT = {"strict_units": True}


def _unwrap(ann: Any) -> list[Any]:
    """The concrete types inside Optional/Union/list/tuple/dict/Annotated annotations."""
    origin = get_origin(ann)
    if origin is None or origin is Literal or origin is Annotated:
        return [ann]
    args = get_args(ann)
    if origin is dict:
        return _unwrap(args[1]) if len(args) == 2 else [Any]
    out: list[Any] = []
    for a in args:
        if a is type(None) or a is Ellipsis:
            continue
        out += _unwrap(a)
    return out


def _describe(ann: Any, metadata: list[Any]) -> str:
    dim = dimension_of(metadata) or next((dimension_of(list(getattr(a, "__metadata__", ()))) for a in
                                          get_args(ann) if getattr(a, "__metadata__", None)), None)
    if dim is None:
        for a in _unwrap(ann):
            md = getattr(a, "__metadata__", None)
            if md and dimension_of(list(md)):
                dim = dimension_of(list(md))
                break
    if dim:
        _si, what, example = DIMENSIONS[dim]
        return f"{what} like {example}"
    kinds = _unwrap(ann)
    for k in kinds:
        if get_origin(k) is Literal:
            return "one of " + ", ".join(repr(x) for x in get_args(k))
    for k in kinds:
        if isinstance(k, type) and issubclass(k, BaseModel):
            return "a table"
    names = {int: "an integer", float: "a number", str: "a string", bool: "true or false"}
    for k in kinds:
        if k in names:
            return names[k]
    return "a value"


def _field_at(model: type[BaseModel], loc: tuple[Any, ...]) -> tuple[type[BaseModel] | None, Any, list[Any]] | None:
    """Walk *loc* through *model*'s fields: returns (parent model, annotation, metadata) of the leaf."""
    cur: Any = model
    parent: type[BaseModel] | None = None
    ann: Any = None
    meta: list[Any] = []
    for part in loc:
        if isinstance(part, int) or (isinstance(part, str) and part.lstrip("-").isdigit() and
                                     isinstance(cur, type) and issubclass(cur, BaseModel)):
            continue  # a list index: the element's model was entered at the list field
        if isinstance(cur, type) and issubclass(cur, BaseModel):
            if not isinstance(part, str) or part not in cur.model_fields:
                return None
            parent = cur
            f = cur.model_fields[part]
            ann, meta = f.annotation, list(f.metadata)
            models = [k for k in _unwrap(ann) if isinstance(k, type) and issubclass(k, BaseModel)]
            cur = models[0] if models else ann
        else:  # inside a list/dict: the element keeps the annotation of its container
            ann_inner = [k for k in _unwrap(ann)]
            models = [k for k in ann_inner if isinstance(k, type) and issubclass(k, BaseModel)]
            if models:
                cur = models[0]
            else:
                inner = get_args(ann)
                ann = inner[-1] if inner else ann
                meta = list(getattr(ann, "__metadata__", ())) or meta
    return parent, ann, meta


def _loc_str(loc: tuple[Any, ...]) -> str:
    return ".".join(str(x) for x in loc) or "(top level)"


def format_validation_error(exc: ValidationError, where: str, model: type[BaseModel] | None = None) -> str:
    """One line: ``<where>: field <a.b.c>: expected <what>, got <given> (<why>)``, then every
    other problem of the file after ``; also`` (at most :data:`MAX_LISTED`), so a file is fixed in
    one pass, not one field per run.
    """
    model = model or ProfileDoc
    # an unknown key is usually the cause of a "missing" one (a typo): reported first
    errs = sorted(exc.errors(), key=lambda e: e["type"] != "extra_forbidden")
    lines = [_format_one(e, where, model) for e in errs[:MAX_LISTED]]
    rest = [ln[len(where) + 2:] if ln.startswith(f"{where}: ") else ln for ln in lines[1:]]
    more = f"; and {len(errs) - MAX_LISTED} more problem(s)" if len(errs) > MAX_LISTED else ""
    return lines[0] + "".join(f"; also {r}" for r in rest) + more


#: problems of one file listed by :func:`format_validation_error`
MAX_LISTED = 10


def _format_one(err: ErrorDetails, where: str, model: type[BaseModel]) -> str:
    """One problem of a validation error, as :func:`format_validation_error` words it."""
    loc = tuple(err["loc"])
    path = _loc_str(loc)
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    given = err.get("input")
    typ = err["type"]
    if typ == "extra_forbidden":
        parent_loc, key = loc[:-1], loc[-1]
        allowed: list[str] = []
        if parent_loc:
            walked = _field_at(model, parent_loc)
            if walked is not None:
                kinds = [k for k in _unwrap(walked[1]) if isinstance(k, type) and issubclass(k, BaseModel)]
                allowed = list(kinds[0].model_fields) if kinds else []
        else:
            allowed = list(model.model_fields)
        table = f"[{_loc_str(parent_loc)}]" if parent_loc else "the top level"
        hint = ""
        if loc == ("node", "nodes"):
            hint = "; `nodes` is a top-level key: put `nodes = N` before the first [table]"
        else:
            hint = did_you_mean(str(key), allowed)
        return (f"{where}: field {path}: expected a key of {table} ({', '.join(allowed)}), got unknown key "
                f"{key!r}{hint} (extensions go under [ext.NAME])")
    walked = _field_at(model, loc)
    expected = _describe(walked[1], walked[2]) if walked else "a valid value"
    if typ == "missing":
        return f"{where}: field {path}: expected {expected}, got nothing (required field missing)"
    if msg.startswith("expected "):  # our quantity validator already says expected/got
        return f"{where}: field {path}: {msg}"
    if msg.startswith("Input should be "):
        msg = msg[len("Input should be "):]
        for words, sym in (("greater than or equal to ", ">= "), ("less than or equal to ", "<= "),
                           ("greater than ", "> "), ("less than ", "< ")):
            if msg.startswith(words):  # the bound before a quantity's example, as the quantity's own errors put it
                head, like, example = expected.partition(" like ")
                msg = f"{head} {sym}{msg[len(words):]}{like}{example}"
                break
        return f"{where}: field {path}: expected {msg}, got {given!r}"
    return f"{where}: field {path}: expected {expected}, got {given!r} ({msg})"
