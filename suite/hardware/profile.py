"""The resolved hardware profile that techniques read, and the profile library.

A :class:`Profile` is what a plugin's evaluate function receives in ``scenario.profile``: the
``[profile]`` metadata flattened, references resolved (a node's ``device = "name"`` becomes the
device's table in ``profile.device``), every quantity in SI units.
"""

from __future__ import annotations

import copy
import hashlib
import json
import tomllib
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from suite.errors import ProfileError
from suite.hardware.schema import Cost, Device, Node, NetworkLevel, ProfileDoc, Reliability

__all__ = ["Profile", "ProfileLibrary", "load_file", "format_validation_error"]


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
    network : list of NetworkLevel
        Innermost level first.
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
    nodes: int | None = None
    network: tuple[NetworkLevel, ...] = ()
    reliability: Reliability | None = None
    cost: Cost | None = None
    sources: dict[str, str] = Field(default_factory=dict)
    measured: dict[str, Any] = Field(default_factory=dict)
    ext: dict[str, Any] = Field(default_factory=dict)
    path: str | None = None
    overrides: dict[str, str] = Field(default_factory=dict)

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
        """The content that defines this profile's results (no path, no prose)."""
        d = self.model_dump(mode="json", exclude={"path", "description", "source", "sources", "measured", "verified"})
        return d

    def content_hash(self) -> str:
        """Stable SHA-256 (hex, 16 chars) of the normalized profile; part of every case key."""
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
        data = self.model_dump(mode="python")
        for path, value in overrides.items():
            parts = path.split(".")
            cur: Any = data
            try:
                for p in parts[:-1]:
                    cur = cur[int(p)] if isinstance(cur, (list, tuple)) else cur[p]
                last = parts[-1]
                if isinstance(cur, (list, tuple)):
                    raise KeyError(last)
                if last not in cur:
                    raise KeyError(last)
            except (KeyError, IndexError, ValueError, TypeError):
                raise ProfileError(f"profile {self.name!r}: override {path!r}: no such field") from None
            if isinstance(cur, dict) and isinstance(cur.get(last), BaseModel):
                raise ProfileError(f"profile {self.name!r}: override {path!r}: is a table, give a leaf field")
            cur[last] = value
        data["overrides"] = {**self.overrides, **{k: str(v) for k, v in overrides.items()}}
        try:
            return Profile.model_validate(_to_plain(data))
        except ValidationError as exc:
            raise ProfileError(format_validation_error(exc, f"profile {self.name!r} (override)")) from None


def _to_plain(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return _to_plain(obj.model_dump(mode="python"))
    if isinstance(obj, dict):
        return {k: _to_plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_to_plain(v) for v in obj]
    return obj


def format_validation_error(exc: ValidationError, where: str) -> str:
    """One line: ``<where>: field <a.b.c>: <message>, got <value>``."""
    err = exc.errors()[0]
    loc = ".".join(str(x) for x in err["loc"])
    msg = err["msg"]
    if msg.startswith("Value error, "):
        msg = msg[len("Value error, "):]
    given = err.get("input")
    if err["type"] == "extra_forbidden":
        return f"{where}: field {loc}: unknown key (not in the schema; extensions go under [ext.NAME])"
    if err["type"] == "missing":
        return f"{where}: field {loc}: required field is missing"
    if "got" in msg:
        return f"{where}: field {loc}: {msg}"
    return f"{where}: field {loc}: {msg}, got {given!r}"


def load_file(path: str | Path) -> tuple[ProfileDoc, dict]:
    """Parse and validate one TOML file (references not resolved). Returns (doc, raw dict)."""
    path = Path(path)
    try:
        raw = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ProfileError(f"{path}: invalid TOML: {exc}") from None
    except OSError as exc:
        raise ProfileError(f"{path}: cannot read: {exc.strerror}") from None
    return _validate_doc(raw, str(path)), raw


def _validate_doc(raw: dict, where: str) -> ProfileDoc:
    try:
        return ProfileDoc.model_validate(raw)
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


class ProfileLibrary:
    """All profiles found in a set of folders/files, addressable by name.

    Parameters
    ----------
    paths : iterable of Path
        Folders (searched recursively for ``*.toml``) or files.

    Raises
    ------
    ProfileError
        Two files declare the same name (both paths named).
    """

    def __init__(self, paths: Iterable[str | Path]):
        self._raw: dict[str, tuple[Path, dict]] = {}
        self._cache: dict[str, Profile] = {}
        for p in paths:
            p = Path(p)
            files = sorted(p.rglob("*.toml")) if p.is_dir() else [p]
            for f in files:
                try:
                    raw = tomllib.loads(f.read_text(encoding="utf-8"))
                except tomllib.TOMLDecodeError as exc:
                    raise ProfileError(f"{f}: invalid TOML: {exc}") from None
                name = (raw.get("profile") or {}).get("name")
                if not isinstance(name, str) or not name:
                    raise ProfileError(f"{f}: field profile.name: required field is missing")
                if name in self._raw:
                    raise ProfileError(f"{f}: profile name {name!r} is already defined in {self._raw[name][0]}")
                self._raw[name] = (f, raw)

    def names(self) -> list[str]:
        return sorted(self._raw)

    def __contains__(self, name: str) -> bool:
        return name in self._raw

    def path(self, name: str) -> Path:
        return self._raw[name][0]

    def _merged_raw(self, name: str, chain: tuple[str, ...] = ()) -> dict:
        if name not in self._raw:
            where = f"{self._raw[chain[-1]][0]}: field profile.extends" if chain else "profile"
            raise ProfileError(f"{where}: unknown profile {name!r}")
        if name in chain:
            raise ProfileError(f"{self._raw[name][0]}: field profile.extends: cycle {' -> '.join(chain + (name,))}")
        path, raw = self._raw[name]
        parent = (raw.get("profile") or {}).get("extends")
        if parent:
            base = self._merged_raw(parent, chain + (name,))
            base.get("profile", {}).pop("tags", None)
            merged = _merge(base, raw)
            merged["profile"]["kind"] = raw["profile"].get("kind", base["profile"].get("kind"))
            return merged
        return copy.deepcopy(raw)

    def get(self, name: str) -> Profile:
        """The resolved profile *name* (extends applied, device reference resolved)."""
        if name in self._cache:
            return self._cache[name]
        if name not in self._raw:
            close = [n for n in self._raw if name.lower() in n.lower()][:5]
            hint = f"; did you mean {', '.join(close)}?" if close else "; see `suite hardware list`"
            raise ProfileError(f"unknown hardware profile {name!r}{hint}")
        path = self._raw[name][0]
        merged = self._merged_raw(name)
        doc = _validate_doc(merged, str(path))
        device = doc.device
        node = doc.node
        sources = dict(doc.sources)
        if node is not None and device is None:
            ref = node.device
            if ref not in self._raw:
                raise ProfileError(f"{path}: field node.device: unknown profile {ref!r}")
            dev_prof = self.get(ref)
            if dev_prof.device is None:
                raise ProfileError(f"{path}: field node.device: profile {ref!r} has no [device] table")
            device = dev_prof.device
            if not device.name:
                device = device.model_copy(update={"name": ref})
            sources = {**{f"device.{k}" if not k.startswith("device.") else k: v for k, v in dev_prof.sources.items()}, **sources}
        if doc.profile.kind in ("node", "cluster") and node is None:
            raise ProfileError(f"{path}: field node: required for kind {doc.profile.kind!r}")
        if doc.profile.kind == "device" and device is None:
            raise ProfileError(f"{path}: field device: required for kind 'device'")
        if doc.profile.kind == "cluster" and not doc.network:
            raise ProfileError(f"{path}: field network: a cluster needs at least one [[network]] level")
        prof = Profile(
            name=doc.profile.name,
            kind=doc.profile.kind,
            source=doc.profile.source,
            verified=doc.profile.verified,
            description=doc.profile.description,
            vendor=doc.profile.vendor,
            tags=tuple(doc.profile.tags),
            device=device,
            node=node,
            nodes=doc.nodes,
            network=tuple(doc.network),
            reliability=doc.reliability,
            cost=doc.cost,
            sources=sources,
            measured=doc.measured,
            ext=doc.ext,
            path=str(path),
        )
        self._cache[name] = prof
        return prof

    def all(self) -> list[Profile]:
        return [self.get(n) for n in self.names()]
