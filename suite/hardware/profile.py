"""The resolved hardware profile that techniques read, and the profile library.

A :class:`Profile` is what a plugin's evaluate function receives in ``scenario.profile``: the
``[profile]`` metadata flattened, references resolved (a node's ``device = "name"`` becomes the
device's table in ``profile.device``), every quantity in SI units.
"""

from __future__ import annotations

import copy
import difflib
import hashlib
import json
import re
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Annotated, Any, Literal, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from suite.errors import ProfileError
from suite.hardware.schema import Communication, Cost, Device, Link, Node, NetworkLevel, ProfileDoc, Reliability
from suite.hardware.units import DIMENSIONS, dimension_of

__all__ = ["Profile", "DeviceGroup", "ProfileLibrary", "load_file", "read_toml", "format_validation_error", "FILE_CONTEXT"]


class DeviceGroup(BaseModel):
    """One ``[ext.mix]`` group resolved: the device profile's *name*, its :class:`Device` and
    how many of it the mix has."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    device: Device
    count: int = Field(ge=1)


class Profile(BaseModel):
    """A resolved, validated hardware profile (SI units).

    Attributes
    ----------
    name, kind, source, verified, description, vendor, tags
        From ``[profile]``.
    device : Device or None
        The device (resolved from ``[node] device = "..."`` for nodes and clusters).
    node : Node or None
    nodes : int or None
        Number of nodes of a cluster.
    cpu : Device or None
        The host CPU named by ``node.cpu``, resolved when the profile loads (by the library
        that loads it, so a ``--profile-dir`` device is found like a shipped one).
    groups : tuple of DeviceGroup
        The ``[ext.mix]`` groups, each device resolved like ``node.device`` when the profile
        loads; empty without ``[ext.mix]``.
    network : list of NetworkLevel
        Innermost level first.
    communication : Communication or None
        ``[communication]``: the collectives' library and its constants (suite.perf.nccl).
    reliability, cost : optional tables
    sources : dict
        Field path -> source of that figure (datasheet, paper section, measurement).
    ext : dict
        Namespaced extension tables (``[ext.NAME]``).
    path : str or None
        The file it was loaded from.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: str
    source: str = ""
    verified: bool = False
    description: str = ""
    vendor: str = ""
    tags: tuple[str, ...] = ()
    device: Device | None = None
    node: Node | None = None
    cpu: Device | None = None
    groups: tuple[DeviceGroup, ...] = ()
    nodes: int | None = Field(default=None, ge=1)
    network: tuple[NetworkLevel, ...] = ()
    communication: Communication | None = None
    reliability: Reliability | None = None
    cost: Cost | None = None
    sources: dict[str, str] = Field(default_factory=dict)
    measured: dict[str, Any] = Field(default_factory=dict)
    ext: dict[str, Any] = Field(default_factory=dict)
    path: str | None = None
    overrides: dict[str, str] = Field(default_factory=dict)

    def __setattr__(self, name: str, value: Any) -> None:
        from suite.frozen import ImmutableError

        raise ImmutableError(f"profile {self.name!r}: field {name} is read-only: profiles are immutable "
                             f"(derive one with profile.with_overrides({{...}}))")

    def model_post_init(self, __context: Any) -> None:
        # deeply read-only: one profile object serves every case of a sweep (suite.frozen)
        from suite.frozen import freeze_fields

        freeze_fields(self, f"profile {self.name!r}")

    # -- derived figures
    @property
    def devices_per_node(self) -> int:
        return self.node.devices_per_node if self.node is not None else 1

    @property
    def num_nodes(self) -> int:
        if self.kind == "cluster":
            return self.nodes or 1
        return 1

    @property
    def num_devices(self) -> int:
        """Devices in the whole profile (cluster: nodes x devices per node)."""
        return self.num_nodes * self.devices_per_node

    @property
    def outer_network(self) -> NetworkLevel | None:
        """The outermost network level (the NIC fabric of a cluster), or None."""
        return self.network[-1] if self.network else None

    def require_device(self) -> Device:
        if self.device is None:
            raise ProfileError(f"profile {self.name!r}: has no device (kind {self.kind!r})")
        return self.device

    def require_network(self) -> NetworkLevel:
        if not self.network:
            raise ProfileError(f"profile {self.name!r}: has no [[network]] level")
        return self.network[-1]

    # -- identity
    def normalized(self) -> dict:
        """The content that defines this profile's results: every figure (SI floats rounded to 12
        significant digits, so "10 Gbit/s" and "1.25 GB/s" agree), the name, kind, references
        and extensions, overridden figures included; no override text, path, prose, sources, tags or verification flags."""
        # the overridden figures themselves are in the dump (in SI units); the override text is not
        # hashed, so "10 Gbit/s" and "1.25 GB/s" give one case
        d = self.model_dump(mode="json", exclude={"path", "description", "source", "sources", "measured",
                                                  "verified", "tags", "vendor", "overrides"})
        # resolved references are hashed (a changed host CPU or mix device changes the results);
        # absent ones are left out so the hashes of profiles without them stay as they were
        if d.get("cpu") is None:
            d.pop("cpu", None)
        if not d.get("groups"):
            d.pop("groups", None)
        if d.get("communication") is None:
            d.pop("communication", None)
        for level in d.get("network") or ():  # the NCCL fields, absent: hashes as before they existed
            for key in ("link", "efficiency", "reduction", "reduction_bandwidth"):
                if level.get(key) is None:
                    level.pop(key, None)
        return _round_floats(d)

    def content_hash(self) -> str:
        """Stable SHA-256 (hex, 16 chars) of :meth:`normalized`; part of every case key.

        Independent of key order in the file and of where the file lives; any figure changed
        gives a different hash.
        """
        blob = json.dumps(self.normalized(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]

    def with_overrides(self, overrides: Mapping[str, Any]) -> "Profile":
        """Return a copy with fields replaced, e.g. ``{"network.-1.bandwidth": "10 Gbit/s"}``.

        Paths are dotted; list items are addressed by index (negative counts from the end).
        Values are parsed with units like a TOML file. The new profile records its overrides and
        so has a different content hash.

        Raises
        ------
        ProfileError
            Unknown path, or a value of the wrong dimension (names the path, expected, given).
        """
        if not overrides:
            return self
        writes = {**overrides, **self._device_on_groups(overrides)}
        data = _to_plain(self.model_dump(mode="python"))
        for path, value in writes.items():
            parts = str(path).split(".")
            cur: Any = data
            bad = ProfileError(f"profile {self.name!r}: override {path!r}: expected the dotted path of a field of this "
                               f"profile (e.g. network.-1.bandwidth, device.peak_flops.fp32, nodes), got {path!r}")
            created: type[BaseModel] | None = None
            try:
                for p in parts[:-1]:
                    nxt = cur[int(p)] if isinstance(cur, list) else cur[p]
                    if nxt is None and isinstance(cur, dict) and p in _OPTIONAL_TABLES:
                        nxt = cur[p] = {}  # e.g. reliability.device_mtbf on a profile without [reliability]
                        created = _OPTIONAL_TABLES[p]
                    cur = nxt
                last = parts[-1]
                free = len(parts) >= 2 and (parts[-2] in _FREE_TABLES or parts[0] == "ext")
                free = free or (created is not None and last in created.model_fields)
                if not isinstance(cur, dict) or (last not in cur and not free):
                    raise KeyError(last)
            except (KeyError, IndexError, ValueError, TypeError):
                raise bad from None
            if isinstance(cur.get(last), dict) and not isinstance(value, dict):
                raise ProfileError(f"profile {self.name!r}: override {path!r}: expected the path of a single figure, "
                                   f"got the table {path!r}")
            cur[last] = value
        data["overrides"] = {**self.overrides, **{k: str(v) for k, v in overrides.items()}}
        self._resync_references(data, overrides)
        try:
            return Profile.model_validate(_to_plain(data))
        except ValidationError as exc:
            line = format_validation_error(exc, f"profile {self.name!r} (override)", model=Profile)
            # name the override as the user wrote it (network.-1.bandwidth, not network.1.bandwidth)
            loc = ".".join(str(x) for x in exc.errors()[0]["loc"])
            for key in overrides:
                parts = str(key).split(".")
                norm = [str(len(self.network) + int(p)) if (i == 1 and parts[0] == "network" and p.lstrip("-").isdigit()
                                                         and int(p) < 0) else p for i, p in enumerate(parts)]
                if ".".join(norm) == loc:
                    line = line.replace(f" (override): field {loc}:", f": override {key!r}:", 1)
                    break
            raise ProfileError(line) from None

    def _device_on_groups(self, overrides: Mapping[str, Any]) -> dict[str, Any]:
        """What a ``device.*`` override means on a profile with device groups (``[ext.mix]``; issue 42).

        When the groups hold several devices of the top-level device's type (``vf-mix``: V100
        and RTX 2080 Ti), "the device" is ambiguous and the models read each group's device, so
        the override would change a device nothing reads: it is refused, in one line naming the
        groups and the path that changes one (``groups.N.device.FIELD``). Otherwise the top-level
        device is the one group of its type (``hyscale-cpu-gpu``: the GPU beside the CPU sockets)
        and the override is applied to that group's device too, so the two stay one device.

        Returns
        -------
        dict
            The extra ``groups.N.device.FIELD`` writes.

        Raises
        ------
        ProfileError
            The refusal.
        """
        paths = [str(p) for p in overrides if str(p).split(".")[0] == "device" and "." in str(p)]
        if not self.groups or not paths or self.device is None:
            return {}
        same = [(i, g) for i, g in enumerate(self.groups) if g.device.type == self.device.type]
        if len({g.name for _i, g in same}) > 1:
            names = ", ".join(f"groups.{i} = {g.name} x {g.count}" for i, g in enumerate(self.groups))
            raise ProfileError(f"profile {self.name!r}: override {paths[0]!r}: expected a path into one device group "
                               f"(groups.N.device.FIELD) on a profile with several {self.device.type} groups ({names}), "
                               f"got the top-level device, which no model reads here")
        return {f"groups.{i}.device.{p.split('.', 1)[1]}": overrides[p] for p in paths for i, g in same
                if g.device.name == self.device.name}

    def _resync_references(self, data: dict, overrides: Mapping[str, Any]) -> None:
        """Keep the references the library resolved (``device`` from ``node.device``, ``cpu`` from
        ``node.cpu``, ``groups`` from ``[ext.mix]``) in step with an override of their source: a group's ``count`` follows
        ``ext.mix.groups.N.count`` (so ``--set ext.mix.groups.0.count=8`` changes what
        :attr:`groups` says); renaming a referenced profile needs the library and is refused.

        Raises
        ------
        ProfileError
            An override of ``node.device``, ``node.cpu`` or a mix group's ``device`` that names
            another profile (the old device would stay in place).
        """
        keys = [str(k) for k in overrides]
        for ref, table in (("cpu", "cpu"), ("device", "device")):
            if f"node.{ref}" in keys and self.node is not None and data["node"].get(ref) != getattr(self.node, ref):
                raise ProfileError(f"profile {self.name!r}: override 'node.{ref}': expected {getattr(self.node, ref)!r} "
                                   f"as in the profile file (a reference is resolved when the file loads), got "
                                   f"{data['node'][ref]!r}; override the figures instead ({table}.peak_flops.fp32, ...)")
        if not self.groups or not any(k == "ext" or k.startswith("ext.mix") for k in keys):
            return
        mix = (data.get("ext") or {}).get("mix") or {}
        new = list(mix.get("groups") or ())
        if len(new) != len(self.groups) or any(str(g.get("device")) != old.name for g, old in zip(new, self.groups)):
            raise ProfileError(f"profile {self.name!r}: override of ext.mix: expected the groups' devices of the "
                               f"profile file {[g.name for g in self.groups]} (references are resolved when the file "
                               f"loads), got {[g.get('device') for g in new]}; override a group's count instead")
        data["groups"] = [{**old, "count": g.get("count", old["count"])} for g, old in zip(new, data["groups"])]


# Tables that may be absent (None) and are created by an override of one of their fields.
_OPTIONAL_TABLES: dict[str, type[BaseModel]] = {"reliability": Reliability, "cost": Cost, "host_link": Link,
                                                "communication": Communication}
# Free-form tables whose keys are not fixed by the schema (an override may add a key).
_FREE_TABLES = frozenset({"peak_flops", "efficiency"})


def _round_floats(obj: Any) -> Any:
    if isinstance(obj, float):
        return float(f"{obj:.12g}")
    if isinstance(obj, dict):
        return {k: _round_floats(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_round_floats(v) for v in obj]
    return obj


def _to_plain(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return _to_plain(obj.model_dump(mode="python"))
    if isinstance(obj, dict):
        return {k: _to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_to_plain(v) for v in obj]
    return obj


# --------------------------------------------------------------------------------------------
# One-line error messages: "<file>: field <a.b.c>: expected <what>, got <given> (<why>)"

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


def _describe(ann: Any, metadata: list) -> str:
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


def _field_at(model: type[BaseModel], loc: tuple) -> tuple[type[BaseModel] | None, Any, list] | None:
    """Walk *loc* through *model*'s fields: returns (parent model, annotation, metadata) of the leaf."""
    cur: Any = model
    parent: type[BaseModel] | None = None
    ann: Any = None
    meta: list = []
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


def _loc_str(loc: tuple) -> str:
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


def _format_one(err: dict, where: str, model: type[BaseModel]) -> str:
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
            close = difflib.get_close_matches(str(key), allowed, n=1)
            if close:
                hint = f"; did you mean {close[0]!r}?"
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
            if msg.startswith(words):
                msg = f"{expected} {sym}{msg[len(words):]}"
                break
        return f"{where}: field {path}: expected {msg}, got {given!r}"
    return f"{where}: field {path}: expected {expected}, got {given!r} ({msg})"


def _toml_error(path: Path, exc: tomllib.TOMLDecodeError) -> ProfileError:
    text = str(exc)
    m = re.search(r"\(at line (\d+), column (\d+)\)", text)
    where = f"line {m.group(1)}, column {m.group(2)}" if m else "syntax"
    what = re.sub(r"\s*\(at line \d+, column \d+\)", "", text) or "a syntax error"
    return ProfileError(f"{path}: {where}: expected valid TOML, got {what[0].lower() + what[1:]}")


def read_toml(path: str | Path) -> dict:
    """Read one TOML file; a syntax or I/O problem is a one-line :class:`ProfileError`."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ProfileError(f"{path}: expected a readable TOML file, got {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ProfileError(f"{path}: expected a UTF-8 text file, got undecodable bytes at offset {exc.start}") from None
    from suite.limits import TooDeep, loads_toml

    try:
        return loads_toml(text, str(path))
    except tomllib.TOMLDecodeError as exc:
        raise _toml_error(path, exc) from None
    except TooDeep as exc:
        raise ProfileError(str(exc)) from None


def load_file(path: str | Path) -> tuple[ProfileDoc, dict]:
    """Parse and validate one TOML file (references not resolved). Returns (doc, raw dict).

    A file that ``extends`` another may omit required fields; use :class:`ProfileLibrary` to
    validate it resolved.
    """
    path = Path(path)
    raw = read_toml(path)
    return _validate_doc(raw, str(path)), raw


def _validate_doc(raw: dict, where: str) -> ProfileDoc:
    try:
        return ProfileDoc.model_validate(raw, context=FILE_CONTEXT)
    except ValidationError as exc:
        raise ProfileError(format_validation_error(exc, where)) from None


def _merge(base: dict, over: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in over.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def _path_exists(data: Any, path: str) -> bool:
    cur = data
    for part in path.split("."):
        if isinstance(cur, dict):
            if part not in cur:
                return False
            cur = cur[part]
        elif isinstance(cur, (list, tuple)):
            try:
                cur = cur[int(part)]
            except (ValueError, IndexError):
                return False
        else:
            return False
    return True


def _registry_extensions() -> dict[str, type]:
    """The core's extension schemas (a context adds the plugins': suite.context.Context.extensions)."""
    from suite.hardware.extensions import CORE_EXTENSIONS

    return dict(CORE_EXTENSIONS)


class ProfileLibrary:
    """All profiles found in a set of folders/files, addressable by name.

    Parameters
    ----------
    paths : iterable of Path
        Folders (searched recursively for ``*.toml``) or files. A file reached twice (the same
        resolved path) is read once.
    extensions : dict, optional
        ``{"NAME": pydantic model}`` schemas for ``[ext.NAME]`` tables; default: the core's
        (:data:`suite.hardware.extensions.CORE_EXTENSIONS`). A context passes the plugins' too.
    collect_errors : bool
        False (default): the first unreadable file or duplicate name raises. True: such files are
        skipped and their one-line messages kept in :attr:`file_errors` (``suite hardware validate``).

    Attributes
    ----------
    warnings : list of str
        One line per problem that is not an error (an ``[ext.NAME]`` no installed plugin knows:
        kept unvalidated), filled as profiles are resolved.
    file_errors : dict
        Path -> one-line error, for files skipped with ``collect_errors=True``.

    Raises
    ------
    ProfileError
        Invalid TOML, a missing ``profile.name``, or two files declaring the same name (both named).
    """

    def __init__(self, paths: Iterable[str | Path], *, extensions: Mapping[str, type] | None = None,
                 collect_errors: bool = False):
        self._raw: dict[str, tuple[Path, dict]] = {}
        self._cache: dict[str, Profile] = {}
        self._extensions = dict(extensions) if extensions is not None else None
        self.warnings: list[str] = []
        self.file_errors: dict[str, str] = {}
        seen: set[Path] = set()
        for p in paths:
            p = Path(p)
            if p.is_dir():
                files = sorted(p.rglob("*.toml"))
            elif p.exists():
                files = [p]
            else:
                msg = f"{p}: expected an existing profile folder or file, got a path that does not exist"
                if not collect_errors:
                    raise ProfileError(msg)
                self.file_errors[str(p)] = msg
                continue
            for f in files:
                key = f.resolve()
                if key in seen:
                    continue
                seen.add(key)
                try:
                    self._add_file(f)
                except ProfileError as exc:
                    if not collect_errors:
                        raise
                    self.file_errors[str(f)] = str(exc)

    def _add_file(self, f: Path) -> None:
        raw = read_toml(f)
        meta = raw.get("profile")
        if not isinstance(meta, dict):
            raise ProfileError(f"{f}: field profile: expected a [profile] table with name and kind, got "
                               f"{'nothing (required table missing)' if meta is None else repr(meta)}")
        name = meta.get("name")
        if name is None:
            raise ProfileError(f"{f}: field profile.name: expected a string, got nothing (required field missing)")
        if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._+-]*", name):
            raise ProfileError(f"{f}: field profile.name: expected a name of letters, digits, '.', '_', '+', '-', "
                               f"got {name!r}")
        if name in self._raw:
            raise ProfileError(f"{f}: field profile.name: expected a name no other profile uses, got {name!r} "
                               f"(already defined in {self._raw[name][0]})")
        self._raw[name] = (f, raw)

    @property
    def extensions(self) -> dict[str, type]:
        if self._extensions is None:
            self._extensions = _registry_extensions()
        return self._extensions

    def names(self) -> list[str]:
        return sorted(self._raw)

    def __contains__(self, name: str) -> bool:
        return name in self._raw

    def __len__(self) -> int:
        return len(self._raw)

    def path(self, name: str) -> Path:
        return self._raw[name][0]

    def raw(self, name: str) -> dict:
        """The file's own table (before ``extends`` is applied)."""
        return copy.deepcopy(self._raw[name][1])

    def _hint(self, name: str) -> str:
        close = difflib.get_close_matches(name, list(self._raw), n=3, cutoff=0.6)
        close += [n for n in self._raw if name.lower() in n.lower() and n not in close][: 3 - len(close)]
        return f"; did you mean {', '.join(close)}?" if close else "; see `suite hardware list`"

    def _merged_raw(self, name: str, chain: tuple[str, ...] = ()) -> dict:
        path, raw = self._raw[name]
        if name in chain:
            cyc = " -> ".join(chain + (name,))
            raise ProfileError(f"{self._raw[chain[0]][0]}: field profile.extends: expected a chain without "
                               f"cycles, got {cyc}")
        parent = (raw.get("profile") or {}).get("extends")
        if parent is None:
            return copy.deepcopy(raw)
        if not isinstance(parent, str) or parent not in self._raw:
            raise ProfileError(f"{path}: field profile.extends: expected the name of a profile in the library, "
                               f"got {parent!r}{self._hint(str(parent))}")
        base = self._merged_raw(parent, chain + (name,))
        for k in ("tags", "extends", "verified"):
            base.get("profile", {}).pop(k, None)
        merged = _merge(base, raw)
        merged["profile"]["kind"] = raw.get("profile", {}).get("kind", base.get("profile", {}).get("kind"))
        return merged

    def get(self, name: str) -> Profile:
        """The resolved profile *name* (extends applied, device reference resolved).

        Raises
        ------
        ProfileError
            Unknown name (with close matches), or anything wrong in the file or what it extends or
            references, as one line naming file, field path, expected and given.
        """
        if name in self._cache:
            return self._cache[name]
        if name not in self._raw:
            raise ProfileError(f"hardware profile: expected a known profile name, got {name!r}{self._hint(name)}")
        path, own = self._raw[name]
        parent = (own.get("profile") or {}).get("extends")
        if isinstance(parent, str) and parent in self._raw and parent != name:
            self._merged_raw(name)  # cycles first, so the message names the cycle
            self.get(parent)  # the parent's own errors are reported against the parent's file
        merged = self._merged_raw(name)
        doc = _validate_doc(merged, str(path))
        prof = self._resolve(name, path, doc)
        self._cache[name] = prof
        return prof

    def _resolve(self, name: str, path: Path, doc: ProfileDoc) -> Profile:
        kind = doc.profile.kind
        device, node = doc.device, doc.node
        sources = dict(doc.sources)
        if node is not None and device is None:
            ref = node.device
            if ref not in self._raw or ref == name:
                raise ProfileError(f"{path}: field node.device: expected the name of a device profile, got "
                                   f"{ref!r}{self._hint(ref)}")
            dev_prof = self.get(ref)
            if dev_prof.device is None:
                raise ProfileError(f"{path}: field node.device: expected a profile with a [device] table, got "
                                   f"{ref!r} (kind {dev_prof.kind!r}, no [device])")
            device = dev_prof.device if dev_prof.device.name else dev_prof.device.model_copy(update={"name": ref})
            sources = {**{(k if k.startswith("device.") else f"device.{k}"): v
                          for k, v in dev_prof.sources.items() if k.startswith("device.")}, **sources}
        if node is not None and node.cpu is not None:
            if node.cpu not in self._raw:
                raise ProfileError(f"{path}: field node.cpu: expected the name of a cpu device profile, got "
                                   f"{node.cpu!r}{self._hint(node.cpu)}")
            cpu = self.get(node.cpu).device
            if cpu is None or cpu.type != "cpu":
                raise ProfileError(f"{path}: field node.cpu: expected a profile whose [device] type is 'cpu', got "
                                   f"{node.cpu!r} ({'no [device]' if cpu is None else 'type ' + repr(cpu.type)})")
            host = cpu if cpu.name else cpu.model_copy(update={"name": node.cpu})
        else:
            host = None
        if kind in ("node", "cluster") and node is None:
            raise ProfileError(f"{path}: field node: expected a [node] table for kind {kind!r}, got nothing "
                               f"(required table missing)")
        if kind in ("device", "measured") and device is None:
            raise ProfileError(f"{path}: field device: expected a [device] table for kind {kind!r}, got nothing "
                               f"(required table missing)")
        if kind == "cluster" and doc.nodes is None:
            raise ProfileError(f"{path}: field nodes: expected an integer >= 1 (top-level, before the first "
                               f"[table]) for kind 'cluster', got nothing (required field missing)")
        if kind == "cluster" and not doc.network:
            raise ProfileError(f"{path}: field network: expected at least one [[network]] level for kind "
                               f"'cluster', got nothing (required table missing)")
        if kind in ("device",) and (doc.nodes is not None):
            raise ProfileError(f"{path}: field nodes: expected no node count for kind {kind!r}, got {doc.nodes!r}")
        if kind == "cluster" and doc.network and doc.nodes is not None and doc.network[-1].size != doc.nodes:
            raise ProfileError(f"{path}: field network.{len(doc.network) - 1}.size: expected the node count "
                               f"(field nodes = {doc.nodes}) for the outermost level of a cluster, "
                               f"got {doc.network[-1].size}")
        if (node is not None and len(doc.network) >= (2 if kind == "cluster" else 1)
                and doc.network[0].size != node.devices_per_node):
            raise ProfileError(f"{path}: field network.0.size: expected devices_per_node (field "
                               f"node.devices_per_node = {node.devices_per_node}) for the intra-node level, "
                               f"got {doc.network[0].size}")
        ext = self._validate_ext(path, doc.ext)
        groups = self._mix_groups(name, path, ext.get("mix"))
        prof = Profile(
            name=doc.profile.name, kind=kind, source=doc.profile.source, verified=doc.profile.verified,
            description=doc.profile.description, vendor=doc.profile.vendor, tags=tuple(doc.profile.tags),
            device=device, node=node, cpu=host, groups=groups, nodes=doc.nodes, network=tuple(doc.network), reliability=doc.reliability,
            communication=doc.communication,
            cost=doc.cost, sources=sources, measured=doc.measured, ext=ext, path=str(path),
        )
        dumped = prof.model_dump(mode="python")
        for key in doc.sources:
            if not _path_exists(dumped, key):
                raise ProfileError(f"{path}: field sources.{key}: expected the path of a field of this profile "
                                   f"(e.g. device.memory, network.0.bandwidth), got {key!r}")
        return prof

    def _mix_groups(self, name: str, path: Path, mix: Any) -> tuple[DeviceGroup, ...]:
        """``[ext.mix]`` groups with their devices resolved in this library (like node.device)."""
        if not mix:
            return ()
        out = []
        for n, g in enumerate(mix.get("groups", ())):
            ref = str(g["device"])
            if ref not in self._raw or ref == name:
                raise ProfileError(f"{path}: field ext.mix.groups.{n}.device: expected the name of a device "
                                   f"profile, got {ref!r}{self._hint(ref)}")
            dev = self.get(ref).device
            if dev is None:
                raise ProfileError(f"{path}: field ext.mix.groups.{n}.device: expected a profile with a [device] "
                                   f"table, got {ref!r} (no [device])")
            out.append(DeviceGroup(name=ref, device=dev if dev.name else dev.model_copy(update={"name": ref}),
                                   count=int(g["count"])))
        return tuple(out)

    def _warn(self, msg: str) -> None:
        if msg not in self.warnings:
            self.warnings.append(msg)

    def _validate_ext(self, path: Path, ext: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, table in ext.items():
            if not isinstance(table, dict):
                raise ProfileError(f"{path}: field ext.{key}: expected a table [ext.{key}], got {table!r}")
            schema = self.extensions.get(key)
            if schema is None:
                msg = (f"{path}: field ext.{key}: no installed plugin registers extension {key!r} "
                       f"(suite_profile_extensions); kept unvalidated")
                if msg not in self.warnings:
                    self.warnings.append(msg)
                out[key] = copy.deepcopy(table)
                continue
            try:
                model = schema.model_validate(table, context=FILE_CONTEXT)
            except ValidationError as exc:
                one = format_validation_error(exc, str(path), model=schema)
                # prefix the field path with ext.NAME
                one = one.replace(f"{path}: field ", f"{path}: field ext.{key}.", 1)
                raise ProfileError(one) from None
            out[key] = model.model_dump(mode="python")
        return out

    def all(self) -> list[Profile]:
        return [self.get(n) for n in self.names()]

    def check_all(self) -> dict[str, str]:
        """Resolve every profile; returns name -> one-line error for those that fail."""
        errors: dict[str, str] = {}
        for n in self.names():
            try:
                self.get(n)
            except ProfileError as exc:
                errors[n] = str(exc)
        return errors
