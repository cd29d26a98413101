"""The resolved hardware profile that techniques read.

A :class:`Profile` is what a plugin's evaluate function receives in ``scenario.profile``: the
``[profile]`` metadata flattened, references resolved (a node's ``device = "name"`` becomes the
device's table in ``profile.device``), every quantity in SI units. The library that reads and
resolves profile files is :mod:`suite.hardware.profile_library`; the one-line messages for invalid
tables are :mod:`suite.hardware.field_errors` (both names are still importable from here).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from suite._lazy import lazy_attributes
from suite.errors import ProfileError, did_you_mean
from suite.hardware.field_errors import (  # noqa: F401  (_field_at, _unwrap: read by the profile exporters)
    FILE_CONTEXT,
    _field_at,
    _unwrap,
    format_validation_error,
)
from suite.hardware.schema import Communication, Cost, Device, Link, Node, NetworkLevel, Reliability

__all__ = ["Profile", "DeviceGroup", "ProfileLibrary", "load_file", "read_toml", "format_validation_error", "FILE_CONTEXT"]


class DeviceGroup(BaseModel):
    """One ``[ext.mix]`` group resolved: the device profile's *name*, its :class:`Device` and
    how many of it the mix has."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    device: Device
    count: int = Field(ge=1)


def network_level(path: Any, levels: int) -> tuple[int, list[str]] | None:
    """``(index, rest)`` of a dotted path into a profile of *levels* network levels that names one
    (``network.-1.bandwidth`` of 2 levels: ``(-1, ["bandwidth"])``, the index as written; in range or
    not), or None for a path that names no network level."""
    parts = str(path).split(".")
    if len(parts) < 2 or parts[0] != "network" or not parts[1].lstrip("-").isdigit():
        return None
    return int(parts[1]), parts[2:]


def field_path(path: Any, levels: int) -> str:
    """A dotted path into a profile of *levels* network levels with its level index counted from
    the start, as the schema's errors and ``flatten`` spell it (``network.-1.bandwidth`` of 2
    levels: ``network.1.bandwidth``); any other path, and an index out of range, as given."""
    named = network_level(path, levels)
    if named is None or not -levels <= named[0] < 0:
        return str(path)
    return ".".join(["network", str(named[0] + levels), *named[1]])


#: overrides outside the network that move where a collective's ranks sit (the placement a published
#: fit was measured under): they set aside the fits of every level
_PLACEMENT_FIELDS = ("node.devices_per_node", "node.nics_per_node")


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
        ``[communication]``: the collectives' library and its constants (suite.perf.network.nccl).
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
    def normalized(self) -> dict[str, Any]:
        """The content that defines this profile's results: every figure (SI floats rounded to 12
        significant digits, so "10 Gbit/s" and "1.25 GB/s" agree), the name, kind, references
        and extensions, overridden figures included, and on a profile with published fits the levels
        an override set their fits aside on (:meth:`overridden_levels`); no override text, path,
        prose, sources, tags or verification flags."""
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
            for key in ("link", "efficiency", "reduction", "reduction_bandwidth", "path"):
                if level.get(key) is None:
                    level.pop(key, None)
        aside = self.overridden_levels()[0]
        if aside and any(level.fits for level in self.network):
            # which levels' fits an override set aside (suite.perf.allreduce_fit): results differ from
            # the same figures loaded from a file, whose fits stand
            d["fits_set_aside_on"] = sorted(aside)
        out: dict[str, Any] = _round_floats(d)
        return out

    def _no_level(self, path: Any) -> ProfileError | None:
        """The error of an override naming a network level the profile lacks (its levels listed), or None."""
        n = len(self.network)
        named = network_level(path, n)
        if named is None or -n <= named[0] < n:
            return None
        have = ", ".join(f"network.{i} ({level.name})" for i, level in enumerate(self.network)) or "none"
        return ProfileError(f"profile {self.name!r}: override {path!r}: expected a network level of this profile "
                            f"({n} level(s): {have}; network.-1 is the outermost), got network.{named[0]}")

    def overridden_levels(self) -> tuple[frozenset[int], frozenset[int]]:
        """``(levels, fits)``: the network levels (indices from 0) an override of this profile names
        a field of, other than ``fits`` (every level for an override of the devices or NICs per node,
        which move where a group's ranks sit), and those whose ``fits`` an override sets. A published
        fit of a collective stands only while no level its group crosses is in the first set, unless
        its own level is in the second (:func:`suite.perf.allreduce_fit`)."""
        n = len(self.network)
        touched: set[int] = set()
        fits: set[int] = set()
        for path in self.overrides:
            if str(path) in _PLACEMENT_FIELDS:
                touched.update(range(n))
            named = network_level(path, n)
            if named is not None and named[1] and -n <= named[0] < n:
                (fits if named[1][0] == "fits" else touched).add(named[0] % n)
        return frozenset(touched), frozenset(fits)

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
            created: type[BaseModel] | None = None
            at = 0  # the part looked up in cur
            try:
                for at, p in enumerate(parts[:-1]):
                    nxt = cur[int(p)] if isinstance(cur, list) else cur[p]
                    if nxt is None and isinstance(cur, dict) and p in _OPTIONAL_TABLES:
                        nxt = cur[p] = {}  # e.g. reliability.device_mtbf on a profile without [reliability]
                        created = _OPTIONAL_TABLES[p]
                    cur = nxt
                at, last = len(parts) - 1, parts[-1]
                free = len(parts) >= 2 and (parts[-2] in _FREE_TABLES or parts[0] == "ext")
                free = free or (created is not None and last in created.model_fields)
                if not isinstance(cur, dict) or (last not in cur and not free):
                    raise KeyError(last)
            except (KeyError, IndexError, ValueError, TypeError):
                hint = did_you_mean(str(path), [".".join([*parts[:at], str(k), *parts[at + 1:]]) for k in cur]
                                    if isinstance(cur, dict) else [])
                raise self._no_level(path) or ProfileError(
                    f"profile {self.name!r}: override {path!r}: expected the dotted path of a field of this profile "
                    f"(e.g. network.-1.bandwidth, device.peak_flops.fp32, nodes), got {path!r}{hint}") from None
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
                if field_path(key, len(self.network)) == loc:
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

    def _resync_references(self, data: dict[str, Any], overrides: Mapping[str, Any]) -> None:
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



def _registry_extensions() -> dict[str, type[BaseModel]]:
    """The core's extension schemas (a context adds the plugins': suite.context.Context.extensions)."""
    from suite.hardware.extensions import CORE_EXTENSIONS

    return dict(CORE_EXTENSIONS)


#: moved to :mod:`suite.hardware.profile_library` (which imports this module), still importable from here
_MOVED = {"ProfileLibrary": "suite.hardware.profile_library", "load_file": "suite.hardware.profile_library",
          "read_toml": "suite.hardware.profile_library"}


_lazy = lazy_attributes(__name__, _MOVED, globals())


def __getattr__(name: str) -> Any:
    """``ProfileLibrary``, ``load_file`` and ``read_toml``, imported on first use from
    :mod:`suite.hardware.profile_library` (PEP 562; that module builds on :class:`Profile`)."""
    return _lazy(name)
