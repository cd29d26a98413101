"""The profile library: every profile of a set of folders, read, merged along ``extends`` and
resolved by name (docs/profiles.md).

:class:`ProfileLibrary` reads each ``*.toml`` once (:func:`read_toml`), validates a profile when it
is first asked for (:func:`load_file` validates one file alone), resolves its references
(``node.device``, ``node.cpu``, ``[ext.mix]`` groups) in the library, and validates its
``[ext.NAME]`` tables with the extension schemas in use. Every problem is one
:class:`~suite.errors.ProfileError` line naming file, field, expected and given.
"""

from __future__ import annotations

import copy
import difflib
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from suite.errors import ProfileError
from suite.hardware.field_errors import FILE_CONTEXT, format_validation_error
from suite.hardware.parsed_cache import ParsedFiles
from suite.hardware.name_scan import scan_profile_name
from suite.hardware.profile import DeviceGroup, Profile, _registry_extensions
from suite.hardware.schema import Device, ProfileDoc

__all__ = ["ProfileLibrary", "declared_names", "load_file", "read_toml"]


def _toml_error(path: Path, exc: tomllib.TOMLDecodeError) -> ProfileError:
    text = str(exc)
    m = re.search(r"\(at line (\d+), column (\d+)\)", text)
    where = f"line {m.group(1)}, column {m.group(2)}" if m else "syntax"
    what = re.sub(r"\s*\(at line \d+, column \d+\)", "", text) or "a syntax error"
    return ProfileError(f"{path}: {where}: expected valid TOML, got {what[0].lower() + what[1:]}")


def read_toml(path: str | Path) -> dict[str, Any]:
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


def _name_of(f: Path, raw: dict[str, Any]) -> str:
    """The ``profile.name`` of file *f*'s table *raw*, checked (one-line ProfileError)."""
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
    return name


def _scanned_name(f: Path) -> str | None:
    """:func:`suite.hardware.name_scan.scan_profile_name` of file *f* (None when it is not UTF-8 text or
    cannot be read: parsing it reports why)."""
    try:
        return scan_profile_name(f.read_bytes().decode("utf-8"))
    except (OSError, UnicodeDecodeError):
        return None


def _toml_files(p: Path) -> list[Path] | None:
    """The profile files of *p*: every ``*.toml`` under a folder (sorted), the file itself, or
    None when *p* does not exist."""
    if p.is_dir():
        return sorted(p.rglob("*.toml"))
    return [p] if p.exists() else None


def declared_names(paths: Iterable[str | Path]) -> dict[str, Path]:
    """Profile name -> the first file declaring it, of every profile file under *paths* (folders
    searched recursively, as :class:`ProfileLibrary` searches them). Each name is read by the line
    scan (:func:`suite.hardware.name_scan.scan_profile_name`), else by parsing the file. Raises
    nothing: a path that does not exist, or a file that does not parse or names no profile, is
    left out (the library reports it when it reads it)."""
    out: dict[str, Path] = {}
    for p in paths:
        for f in _toml_files(Path(p)) or []:
            name = _scanned_name(f)
            if name is None:
                try:
                    name = _name_of(f, read_toml(f))
                except ProfileError:
                    continue
            out.setdefault(name, f)
    return out


def load_file(path: str | Path) -> tuple[ProfileDoc, dict[str, Any]]:
    """Parse and validate one TOML file (references not resolved). Returns (doc, raw dict).

    A file that ``extends`` another may omit required fields; use :class:`ProfileLibrary` to
    validate it resolved.
    """
    path = Path(path)
    raw = read_toml(path)
    return _validate_doc(raw, str(path)), raw


def _validate_doc(raw: dict[str, Any], where: str) -> ProfileDoc:
    try:
        return ProfileDoc.model_validate(raw, context=FILE_CONTEXT)
    except ValidationError as exc:
        raise ProfileError(format_validation_error(exc, where)) from None


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
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



class ProfileLibrary:
    """All profiles found in a set of folders/files, addressable by name.

    Parameters
    ----------
    paths : iterable of Path
        Folders (searched recursively for ``*.toml``) or files. A file reached twice (the same
        resolved path) is read once. A file parsed by an earlier command and unchanged since is
        taken from the cache folder (:mod:`suite.hardware.parsed_cache`).
    extensions : dict, optional
        ``{"NAME": pydantic model}`` schemas for ``[ext.NAME]`` tables; default: the core's
        (:data:`suite.hardware.extensions.CORE_EXTENSIONS`). A context passes the plugins' too.
    collect_errors : bool
        False (default): every file is parsed now and the first unreadable file or duplicate name
        raises. True: such files are skipped and their one-line messages kept in
        :attr:`file_errors` (``suite hardware validate``); and a file whose name a line scan finds
        for certain (:func:`suite.hardware.name_scan.scan_profile_name`) is parsed when one of its profiles
        is first asked for, or when the whole library is (:meth:`names`, ``len``, :attr:`file_errors`),
        so a command that needs two profiles parses two files (the others: 0.04 s of CPU with an
        empty cache). Asked for, a file that does not parse raises its own error.
    warn : callable, optional
        Called with each skipped file's one-line message when it is found (with ``collect_errors``).

    Attributes
    ----------
    warnings : list of str
        One line per problem that is not an error (an ``[ext.NAME]`` no installed plugin knows:
        kept unvalidated), filled as profiles are resolved.
    file_errors : dict
        Path -> one-line error, for files skipped with ``collect_errors=True`` (read: every file parsed).

    Raises
    ------
    ProfileError
        Invalid TOML, a missing ``profile.name``, or two files declaring the same name (both named).
        With ``collect_errors`` these skip the file instead; a name two files declare is then refused
        by :meth:`get`, :meth:`raw` and :meth:`path` (both named; :meth:`names` lists it once), so a
        broken file never serves a name a good one declares.
    """

    def __init__(self, paths: Iterable[str | Path], *, extensions: Mapping[str, type[BaseModel]] | None = None,
                 collect_errors: bool = False, warn: Callable[[str], None] | None = None):
        # name -> (file, its table); with collect_errors, None until the file is parsed (_settle)
        self._raw: dict[str, tuple[Path, dict[str, Any] | None]] = {}
        self._cache: dict[str, Profile] = {}
        self._extensions = dict(extensions) if extensions is not None else None
        self.warnings: list[str] = []
        self._file_errors: dict[str, str] = {}
        self._twins: dict[str, list[Path]] = {}  # a name two files declare (collect_errors): refused, both named
        self._collect, self._warn_file = collect_errors, warn
        seen: set[Path] = set()
        # the files as parsed by an earlier command (suite.cache); a library that collects errors
        # parses a file when first needed (scan_profile_name tells which file holds which name)
        parsed = None if collect_errors else ParsedFiles(read_toml)
        for p in paths:
            p = Path(p)
            files = _toml_files(p)
            if files is None:
                self._file_error(p, ProfileError(f"{p}: expected an existing profile folder or file, got a path "
                                                 f"that does not exist"))
                continue
            for f in files:
                key = f.resolve()
                if key in seen:
                    continue
                seen.add(key)
                name = _scanned_name(f) if parsed is None else None
                if name is not None and name in self._raw and self._raw[name][1] is None:
                    # a second file naming a scanned, unparsed profile: the first is parsed now, so a
                    # broken first file is skipped and this one serves the name (as eager parsing did)
                    self._settle(name, read_toml)
                if name is not None and name not in self._raw:
                    self._raw[name] = (f, None)
                    continue
                try:
                    self._add_file(f, parsed.read(f) if parsed is not None else read_toml(f))
                except ProfileError as exc:
                    self._file_error(f, exc)
        if parsed is not None:
            parsed.save()

    @property
    def file_errors(self) -> dict[str, str]:
        """Path -> one-line error of each file skipped (every file parsed first)."""
        self._settle_all()
        return self._file_errors

    def _file_error(self, f: Path, exc: ProfileError) -> None:
        """Skip file *f* for *exc* (kept in :attr:`file_errors`, passed to ``warn``), or raise it."""
        if not self._collect:
            raise exc
        self._file_errors[str(f)] = str(exc)
        if self._warn_file is not None:
            self._warn_file(str(exc))

    def _settle_all(self) -> None:
        """Parse every file not parsed yet (through the cache of parsed files)."""
        waiting = [n for n, (_f, raw) in self._raw.items() if raw is None]
        if waiting:
            parsed = ParsedFiles(read_toml)
            for name in waiting:
                self._settle(name, parsed.read)
            parsed.save()

    def _settle(self, name: str, read: Callable[[Path], dict[str, Any]]) -> None:
        """Parse the file the scan found *name* in: its table replaces the placeholder (in place:
        the library's order stays), or the file is skipped as a file error."""
        f = self._raw[name][0]
        try:
            raw = read(f)
            if _name_of(f, raw) == name:
                self._raw[name] = (f, raw)
                return
            del self._raw[name]  # (the scan is certain or silent: never reached)
            self._add_file(f, raw)
        except ProfileError as exc:
            self._raw.pop(name, None)
            self._file_error(f, exc)

    def _refuse_twins(self, name: str) -> None:
        """Raise the one-line error of a name two files declare (both named); nothing for another."""
        if name in self._twins:
            files = " and ".join(map(str, self._twins[name]))
            raise ProfileError(f"hardware profile {name!r}: expected one file declaring it, got {files} "
                               f"(rename or remove one)")

    def _own(self, name: str) -> tuple[Path, dict[str, Any]]:
        """(file, table) of *name*, its file parsed now if it was not; a file that does not parse
        raises its own error (and is skipped from then on)."""
        self._refuse_twins(name)
        f, raw = self._raw[name]
        if raw is None:
            self._settle(name, read_toml)
            if name not in self._raw:  # its file failed, or (edited since the scan) names another profile now
                raise ProfileError(self._file_errors.get(
                    str(f), f"{f}: field profile.name: expected {name!r} (as the file said when the library was "
                            f"built), got another name: the file changed"))
            f, raw = self._raw[name]
        assert raw is not None
        return f, raw

    def _add_file(self, f: Path, raw: dict[str, Any]) -> None:
        name = _name_of(f, raw)
        if name in self._raw:
            first = self._raw[name][0]
            if self._collect:  # neither file serves the name: a broken first one never hides a good second
                self._twins.setdefault(name, [first]).append(f)
            raise ProfileError(f"{f}: field profile.name: expected a name no other profile uses, got {name!r} "
                               f"(already defined in {first}" + ("; the name is refused until one is renamed or "
                                                                 "removed)" if self._collect else ")"))
        self._raw[name] = (f, raw)

    @property
    def extensions(self) -> dict[str, type[BaseModel]]:
        if self._extensions is None:
            self._extensions = _registry_extensions()
        return self._extensions

    def names(self) -> list[str]:
        """Every profile name, sorted, each once (every file parsed first). A name two files declare
        is listed, as ``suite hardware list`` shows it (an ERROR row): :meth:`get` and :meth:`path`
        refuse it, naming both files."""
        self._settle_all()
        return sorted(self._raw)

    def __contains__(self, name: str) -> bool:
        return name in self._raw

    def __len__(self) -> int:
        self._settle_all()
        return len(self._raw)

    def path(self, name: str) -> Path:
        """The file that declares profile *name*.

        Raises
        ------
        ProfileError
            *name* is declared by two files (both named, as :meth:`get` says): neither serves it.
        KeyError
            *name* is not in the library (``name in library`` tells).
        """
        self._refuse_twins(name)
        return self._raw[name][0]

    def files(self, name: str) -> tuple[Path, ...]:
        """Every file that declares profile *name*: one, or each of the files of a refused duplicate
        name (the first found first). Raises KeyError when *name* is not in the library."""
        return tuple(self._twins.get(name) or (self._raw[name][0],))

    def raw(self, name: str) -> dict[str, Any]:
        """The file's own table (before ``extends`` is applied)."""
        return copy.deepcopy(self._own(name)[1])

    def _hint(self, name: str) -> str:
        close = difflib.get_close_matches(name, list(self._raw), n=3, cutoff=0.6)
        close += [n for n in self._raw if name.lower() in n.lower() and n not in close][: 3 - len(close)]
        return f"; did you mean {', '.join(close)}?" if close else "; see `suite hardware list`"

    def _merged_raw(self, name: str, chain: tuple[str, ...] = ()) -> dict[str, Any]:
        path, raw = self._own(name)
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
        path, own = self._own(name)
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
        """*doc* (validated, ``extends`` applied) with its references resolved in this library and
        its shape checked against its kind."""
        device, sources = self._node_device(name, path, doc)
        host = self._node_cpu(path, doc)
        _check_shape(path, doc)
        ext = self._validate_ext(path, doc.ext)
        groups = self.mix_groups(name, path, ext.get("mix"))
        prof = Profile(
            name=doc.profile.name, kind=doc.profile.kind, source=doc.profile.source, verified=doc.profile.verified,
            description=doc.profile.description, vendor=doc.profile.vendor, tags=tuple(doc.profile.tags),
            device=device, node=doc.node, cpu=host, groups=groups, nodes=doc.nodes, network=tuple(doc.network),
            reliability=doc.reliability, communication=doc.communication,
            cost=doc.cost, sources=sources, measured=doc.measured, ext=ext, path=str(path),
        )
        _check_sources(path, doc, prof)
        return prof

    def _node_device(self, name: str, path: Path, doc: ProfileDoc) -> tuple[Device | None, dict[str, str]]:
        """The profile's device and sources: a node's ``device = "NAME"`` resolved to that profile's
        ``[device]`` (named after it when it has no name), its ``device.*`` sources first."""
        device, node, sources = doc.device, doc.node, dict(doc.sources)
        if node is None or device is not None:
            return device, sources
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
        return device, sources

    def _node_cpu(self, path: Path, doc: ProfileDoc) -> Device | None:
        """A node's ``cpu = "NAME"`` resolved to that profile's ``[device]`` of type ``cpu``, or None."""
        node = doc.node
        if node is None or node.cpu is None:
            return None
        if node.cpu not in self._raw:
            raise ProfileError(f"{path}: field node.cpu: expected the name of a cpu device profile, got "
                               f"{node.cpu!r}{self._hint(node.cpu)}")
        cpu = self.get(node.cpu).device
        if cpu is None or cpu.type != "cpu":
            raise ProfileError(f"{path}: field node.cpu: expected a profile whose [device] type is 'cpu', got "
                               f"{node.cpu!r} ({'no [device]' if cpu is None else 'type ' + repr(cpu.type)})")
        return cpu if cpu.name else cpu.model_copy(update={"name": node.cpu})

    def mix_groups(self, name: str, path: Path | str, mix: Any) -> tuple[DeviceGroup, ...]:
        """The ``[ext.mix]`` table *mix* of profile *name* (file *path*, for messages): its groups
        with their devices resolved in this library, as ``node.device`` is (the device named after
        its profile when it has no name).

        Raises
        ------
        ProfileError
            A group naming an unknown profile, the profile itself, or one without a ``[device]``
            table (one line: file, field ``ext.mix.groups.N.device``, expected, given).
        """
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



def _check_shape(path: Path, doc: ProfileDoc) -> None:
    """The tables and counts *doc*'s kind requires: a node or cluster has ``[node]``, a device or
    measured profile ``[device]``, a cluster a node count and ``[[network]]`` levels whose outermost
    size is that count; the intra-node level's size is ``devices_per_node``."""
    kind, node, net, nodes = doc.profile.kind, doc.node, doc.network, doc.nodes
    if kind in ("node", "cluster") and node is None:
        raise ProfileError(f"{path}: field node: expected a [node] table for kind {kind!r}, got nothing "
                           f"(required table missing)")
    if kind in ("device", "measured") and doc.device is None:
        raise ProfileError(f"{path}: field device: expected a [device] table for kind {kind!r}, got nothing "
                           f"(required table missing)")
    if kind == "cluster" and nodes is None:
        raise ProfileError(f"{path}: field nodes: expected an integer >= 1 (top-level, before the first "
                           f"[table]) for kind 'cluster', got nothing (required field missing)")
    if kind == "cluster" and not net:
        raise ProfileError(f"{path}: field network: expected at least one [[network]] level for kind "
                           f"'cluster', got nothing (required table missing)")
    if kind in ("device",) and (nodes is not None):
        raise ProfileError(f"{path}: field nodes: expected no node count for kind {kind!r}, got {nodes!r}")
    if kind == "cluster" and net and nodes is not None and net[-1].size != nodes:
        raise ProfileError(f"{path}: field network.{len(net) - 1}.size: expected the node count "
                           f"(field nodes = {nodes}) for the outermost level of a cluster, got {net[-1].size}")
    if node is not None and len(net) >= (2 if kind == "cluster" else 1) and net[0].size != node.devices_per_node:
        raise ProfileError(f"{path}: field network.0.size: expected devices_per_node (field "
                           f"node.devices_per_node = {node.devices_per_node}) for the intra-node level, "
                           f"got {net[0].size}")


def _check_sources(path: Path, doc: ProfileDoc, prof: Profile) -> None:
    """Every key of the file's ``[profile.sources]`` is the path of a field of the resolved profile."""
    dumped = prof.model_dump(mode="python")
    for key in doc.sources:
        if not _path_exists(dumped, key):
            raise ProfileError(f"{path}: field sources.{key}: expected the path of a field of this profile "
                               f"(e.g. device.memory, network.0.bandwidth), got {key!r}")
