"""Cases: a scenario plus fidelity, resolved and hashed.

The case key is the content hash docs/architecture.md describes ("Runner and store"), over every input
of the evaluation:

    hash(technique, technique version, variant, profile content hash, workload hash,
         params, seed, fidelity, technique code + data files, referenced inputs, environment)

so a case already stored with status ok is never computed again, and changing a profile figure,
a workload, a technique's version, its code or data files (:func:`package_fingerprint`; a
plugin distribution's other packages and declared libraries, :func:`code_fingerprint`), a
profile or workload a parameter names (``Param(..., ref=...)``), a file a parameter names, the
core's own source or its libraries' versions (:func:`environment_fingerprint`) makes new
cases: a stale result is never served.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, overload

from suite.errors import ParameterError, SuiteError
from suite.frozen import freeze
from suite.declaration.results import built_as_dataclass, new_scenario
from suite.runner.fingerprint import code_fingerprint, environment_fingerprint, package_fingerprint
from suite.technique import Scenario, ScenarioSpec, Technique

__all__ = ["Case", "Resolver", "resolve_case", "case_key", "code_fingerprint", "package_fingerprint",
           "environment_fingerprint", "evaluate_case"]


class _BuiltOnRead:
    """The :attr:`Case.scenario` field: given a :class:`Scenario`, or a callable without arguments
    that builds it on the first read (then kept). A resolver passes the callable, so a case
    that is never evaluated (a stored result reused) never builds its workload or inputs.
    """

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = "_" + name

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> None: ...
    @overload
    def __get__(self, obj: object, owner: type | None = None) -> Scenario | None: ...
    def __get__(self, obj: object | None, owner: type | None = None) -> Scenario | None:
        if obj is None:  # the class attribute: the dataclass reads the field's default here
            return None
        value = obj.__dict__.get(self.slot)
        if callable(value):
            value = obj.__dict__[self.slot] = value()
        return value

    def __set__(self, obj: object, value: "Scenario | Callable[[], Scenario] | _BuiltOnRead | None") -> None:
        # the dataclass passes this descriptor itself as the default (``field(default=...)``): none given
        obj.__dict__[self.slot] = None if value is self else value


@dataclass(frozen=True)
class Case:
    """A resolved, hashed unit of work.

    ``scenario`` (what the evaluate function receives) may be given as a callable that builds
    it: it is then built on first read. Pickling a case (to a worker process) builds it first.
    """

    key: str
    technique: str
    technique_version: str
    variant: str
    fidelity: str
    profile: str | None
    profile_hash: str | None
    workload: str | None
    workload_hash: str | None
    params: dict[str, Any]
    seed: int
    overrides: dict[str, str] = field(default_factory=dict)
    scenario: _BuiltOnRead = field(default=_BuiltOnRead(), compare=False, repr=False)
    code: str | None = None  # the technique's code fingerprint (code_fingerprint)
    env: str | None = None  # the core's source and numeric libraries (environment_fingerprint)
    # parameter -> content hash of the profile / workload / file it names (Param(..., ref=...))
    inputs: dict[str, str] = field(default_factory=dict)
    # the Technique object that evaluates it (set by the resolver): executors never look it up
    tech: Technique | None = field(default=None, compare=False, repr=False)

    def __getstate__(self) -> dict[str, Any]:
        """The fields, the scenario built (a builder closes over the resolver, which stays here)."""
        state = dict(self.__dict__)
        state["_scenario"] = self.scenario
        return state

    def describe(self) -> str:
        bits = [self.technique, self.variant, self.fidelity]
        if self.profile:
            bits.append(self.profile + ("*" if self.overrides else ""))
        if self.workload:
            bits.append(self.workload)
        if self.params:
            bits.append(",".join(f"{k}={v}" for k, v in sorted(self.params.items())))
        return " ".join(bits)

    def identity(self) -> dict[str, Any]:
        """JSON-able identity (what the key hashes), stored beside each case."""
        return {
            "technique": self.technique, "technique_version": self.technique_version,
            "variant": self.variant, "fidelity": self.fidelity,
            "profile": self.profile, "profile_hash": self.profile_hash,
            "workload": self.workload, "workload_hash": self.workload_hash,
            "params": self.params, "seed": self.seed, "overrides": self.overrides, "code": self.code,
            "env": self.env, "inputs": self.inputs,
        }


def case_key(technique: str, version: str, variant: str, profile_hash: str | None,
             workload_hash: str | None, params: dict[str, Any], seed: int, fidelity: str,
             code: str | None = None, env: str | None = None, inputs: Mapping[str, str] | None = None) -> str:
    """SHA-256 (first 20 hex chars) of the case identity (docs/architecture.md, "Runner and store").

    ``code`` is the technique's code fingerprint (:func:`code_fingerprint`: its source and data
    files): a change to the plugin makes new cases even when its author forgot to bump
    ``version``. ``env`` is :func:`environment_fingerprint` (the core's source, its libraries'
    versions); ``inputs`` maps each parameter that names a profile, workload or file
    (``Param(..., ref=...)``) to that input's content hash.
    """
    ident = [technique, version, variant, profile_hash, workload_hash,
             {k: params[k] for k in sorted(params)}, int(seed), fidelity]
    if code is not None:
        ident.append(code)
    if env is not None:
        ident.append(env)
    if inputs:
        ident.append({k: inputs[k] for k in sorted(inputs)})
    return _key_digest(map(_key_json, ident))


def _this_machine() -> dict[str, str]:
    from suite.runner.dependencies import MACHINE_INPUT, machine_fingerprint

    return {MACHINE_INPUT: machine_fingerprint()}


def _key_json(x: Any) -> str:
    """One item of the key's identity as the key's JSON writes it (sorted keys, no spaces)."""
    return json.dumps(x, sort_keys=True, separators=(",", ":"), default=str)


def _key_digest(items: Iterable[str]) -> str:
    """The key of the identity list whose items' JSON texts (:func:`_key_json`) are *items*:
    ``json.dumps`` of a list writes ``[`` + its items' texts joined by ``,`` + ``]``, so the digest
    is the one of the whole list written at once, while a sweep writes each distinct item once."""
    return hashlib.sha256(("[" + ",".join(items) + "]").encode()).hexdigest()[:20]


#: resolved (profile, overrides) kept by a :class:`Resolver`; a sweep over more distinct override
#: sets (a 1,000 x 1,000 ``--set`` grid) evicts the oldest, so its memory stays bounded (the same
#: bound holds for the validated parameter sets and the key texts a resolver keeps)
PROFILE_CACHE = 4096
#: the value types a resolver memoizes validated parameters for: hashable, and two equal values of
#: one type are written alike in the key (floats go by ``float.hex``: 0.0 == -0.0)
_MEMO_TYPES = frozenset({str, int, bool, float, type(None)})


def _params_memo(params: Any) -> tuple[Any, ...] | None:
    """A hashable stand-in for *params* (a mapping of scalar values) that two parameter sets share
    only when :meth:`Technique.validate_params` gives them the same result and key; None for
    anything else (a list value, a custom type): such sets are validated every time."""
    if not isinstance(params, Mapping):
        return None
    out = []
    for k, v in params.items():
        cls = v.__class__
        if cls not in _MEMO_TYPES:
            return None
        out.append((k, cls, v.hex() if cls is float else v))
    return tuple(out)


def _evict(cache: OrderedDict[Any, Any]) -> None:
    """Drop the oldest entry of *cache* when it holds :data:`PROFILE_CACHE` (memory stays bounded).
    An OrderedDict: a dict's first entry is found by skipping the slots its earlier deletions left
    (``next(iter(d))``: ~1 us once every new entry evicts one, as in a sweep of distinct parameter
    sets; ``popitem(last=False)`` unlinks it at once)."""
    if len(cache) >= PROFILE_CACHE:
        cache.popitem(last=False)


#: the slot a :class:`Case`'s scenario is kept in (:func:`_new_case`)
_SCENARIO_SLOT: str = vars(Case)["scenario"].slot


def _new_case(values: dict[str, Any]) -> Case:
    """``Case(**values)``, every field given, without the frozen dataclass's ``__init__`` (one
    ``object.__setattr__`` per field: 4 us of the ~14 a resolver spent per case of a sweep).

    Raises
    ------
    TypeError
        *values* does not name exactly the fields of :class:`Case`.
    """
    case = built_as_dataclass(Case, values)
    d = case.__dict__
    d[_SCENARIO_SLOT] = d.pop("scenario")
    return case


class Resolver:
    """Resolves specs into cases, loading each distinct profile (with its overrides) and workload
    once and hashing it once (a sweep of 10,000 cases touches a handful of profiles; the last
    :data:`PROFILE_CACHE` distinct override sets are kept).

    Parameters
    ----------
    profile_dirs : tuple of path
        Extra profile folders (``--profiles DIR``).
    context : suite.context.Context
        Where profiles and workloads come from (its plugins' folders and workloads included): the
        command's. Required from 0.3.0; given none, a new one is built with a DeprecationWarning.

    The environment (:func:`environment_fingerprint`) and each technique's code fingerprint are
    checked once per resolver (a stat of each file; read again only when one changed).
    """

    def __init__(self, profile_dirs: tuple[str | Path, ...] = (), context: Any = None) -> None:
        if context is None:
            from suite.context import Context

            context = Context.given(None, "Resolver()")
        self.profile_dirs = tuple(profile_dirs)
        self.context = context.with_profile_dirs(self.profile_dirs)
        self._profiles: OrderedDict[tuple[Any, ...], tuple[Any, str]] = OrderedDict()
        self._workloads: dict[str, tuple[Any, str]] = {}
        self._workload_hashes: dict[str, str] = {}
        self._files: dict[str, tuple[bytes, str]] = {}
        # the core's source and numeric libraries, and each technique package's code and data files:
        # stat-ed once per resolver (a sweep), read again only when a file changed
        self.env = environment_fingerprint(refresh=True)
        self._codes: dict[str, str] = {}
        # what a sweep repeats, kept once (the case key is written from these texts, :func:`_key_digest`):
        # technique name -> (technique, code fingerprint, uses inputs, key text of name and version);
        # (technique, parameters memo) -> (validated parameters, their key text); (technique, variant,
        # hashes, fidelity) -> the key's text before the parameters and after the seed
        self._techs: dict[str, tuple[Technique, str, bool, str]] = {}
        self._params: OrderedDict[tuple[str, tuple[Any, ...]], tuple[Technique, dict[str, Any], str, Any]] = OrderedDict()
        self._frames: OrderedDict[tuple[Any, ...], tuple[str, str]] = OrderedDict()

    def profile(self, name: str, overrides: Mapping[str, Any] | None = None) -> tuple[Any, str]:
        """(Profile, content hash) of *name* with *overrides* applied."""
        ov = tuple(sorted((str(k), str(v)) for k, v in (overrides or {}).items()))
        hit = self._profiles.get((name, ov))
        if hit is None:
            prof = self.context.profile(name)
            if ov:
                prof = prof.with_overrides(dict(ov))
            hit = (prof, prof.content_hash())
            _evict(self._profiles)  # a sweep over many overrides: oldest out first
            self._profiles[(name, ov)] = hit
        return hit

    def workload(self, name: str) -> tuple[Any, str]:
        """(Workload, content hash) of *name* (built once per resolver)."""
        hit = self._workloads.get(name)
        if hit is None:
            wl = self.context.workload(name)
            hit = (wl, wl.content_hash())
            self._workloads[name] = hit
        return hit

    def workload_hash(self, name: str) -> str:
        """The content hash of workload *name*, without building it when the context knows it
        (:meth:`suite.context.Context.workload_hash`: a zoo workload whose hash is cached on
        disk), else that of :meth:`workload` (built)."""
        h = self._workload_hashes.get(name)
        if h is None:
            h = self._workloads[name][1] if name in self._workloads else self.context.workload_hash(name)
            if h is None:
                h = self.workload(name)[1]
            self._workload_hashes[name] = h
        return h

    def _hash_only(self, name: str) -> tuple[None, str]:
        return None, self.workload_hash(name)

    def file(self, path: str, where: str) -> tuple[bytes, str]:
        """(bytes, content hash) of the file at *path* (a ``Param(..., ref="file")`` value)."""
        hit = self._files.get(path)
        if hit is None:
            from pathlib import Path

            try:
                data = Path(path).read_bytes()
            except OSError as exc:
                raise ParameterError(f"{where}: expected a readable file, got {path!r} ({exc.strerror})") from None
            hit = (data, hashlib.sha256(data).hexdigest()[:16])
            self._files[path] = hit
        return hit

    def inputs(self, tech: Technique, params: Mapping[str, Any], *,
               hashes_only: bool = False) -> tuple[dict[str, Any], dict[str, str]]:
        """(inputs, hashes): what each ``Param(..., ref=...)`` of *tech* names and each input of
        :attr:`Technique.uses`, resolved through the context, and each one's content hash (part of
        the case key). With *hashes_only*, a workload's input is None where its hash is known
        without building it (:meth:`workload_hash`)."""
        workload = self._hash_only if hashes_only else self.workload
        inputs: dict[str, Any] = {}
        hashes: dict[str, str] = {}
        for pname, p in tech.parameters.items():
            if p.ref is None or params.get(pname) in (None, "") or params[pname] in p.keywords:
                continue  # unset, or a keyword of the model's: nothing named
            name = str(params[pname])
            where = f"{tech.name}: parameter {pname!r}"
            try:
                if p.ref == "profile":
                    inputs[pname], hashes[pname] = self.profile(name)
                elif p.ref == "workload":
                    inputs[pname], hashes[pname] = workload(name)
                else:
                    inputs[pname], hashes[pname] = self.file(name, where)
            except SuiteError as exc:
                if isinstance(exc, ParameterError) and str(exc).startswith(where):
                    raise
                raise ParameterError(f"{where}: expected the name of a {p.ref}: {exc}") from None
        for u in tech.uses:
            kind, _, name = u.partition(":")
            try:
                inputs[u], hashes[u] = self.profile(name) if kind == "profile" else workload(name)
            except SuiteError as exc:
                raise ParameterError(f"{tech.name}: uses {u!r}: {exc}") from None
        return inputs, hashes

    def code(self, tech: Technique) -> str:
        """:func:`code_fingerprint` of *tech*, stat-ed again once per resolver."""
        top = tech.package
        fp = self._codes.get(top)
        if fp is None:
            fp = self._codes[top] = code_fingerprint(tech, refresh=True)
        return fp

    def _technique(self, tech: Technique) -> tuple[Technique, str, bool, str]:
        """(tech, :meth:`code`, whether it uses referenced inputs, the key text of its name and
        version), worked out once per technique object and resolver."""
        hit = self._techs.get(tech.name)
        if hit is None or hit[0] is not tech:
            hit = self._techs[tech.name] = (tech, self.code(tech), bool(tech.uses or tech.references),
                                            _key_json(tech.name) + "," + _key_json(tech.version))
        return hit

    def _validated(self, tech: Technique, given: Any) -> tuple[dict[str, Any], str, Mapping[str, Any]]:
        """(params, their key text, what the scenario gets): :meth:`Technique.validate_params` of
        *given*, worked out once per distinct set of scalar values (:func:`_params_memo`). Each call
        gets its own dict; the scenarios of one set share its frozen copy (read-only: nothing to
        copy or freeze again per case)."""
        memo = _params_memo(given)
        hit = self._params.get((tech.name, memo)) if memo is not None else None
        if hit is None or hit[0] is not tech:
            params = tech.validate_params(given)
            if memo is None or _params_memo(params) is None:  # not only scalars: nothing shared
                return params, _key_json(params), params
            hit = (tech, params, _key_json(params), freeze(dict(params), "scenario.params"))
            _evict(self._params)
            self._params[(tech.name, memo)] = hit
        return dict(hit[1]), hit[2], hit[3]

    def _key(self, facts: tuple[Technique, str, bool, str], variant: str, p_hash: str | None,
             w_hash: str | None, params_text: str, seed: int, fidelity: str, i_hash: dict[str, str]) -> str:
        """:func:`case_key` of a case :meth:`resolve` worked out: the identity's text around the
        parameters and seed is written once per (technique, variant, hashes, fidelity)."""
        at = (facts[3], facts[1], variant, p_hash, w_hash, fidelity)
        frame = self._frames.get(at)
        if frame is None:
            head = [facts[3], _key_json(variant), _key_json(p_hash), _key_json(w_hash), ""]
            tail = ["", _key_json(fidelity)] + [_key_json(x) for x in (facts[1], self.env) if x is not None]
            _evict(self._frames)
            frame = self._frames[at] = ("[" + ",".join(head), ",".join(tail))
        more = "," + _key_json({k: i_hash[k] for k in sorted(i_hash)}) if i_hash else ""
        blob = frame[0] + params_text + "," + str(seed) + frame[1] + more + "]"
        return hashlib.sha256(blob.encode()).hexdigest()[:20]

    def resolve(self, tech: Technique, spec: ScenarioSpec) -> Case:
        """Validate *spec* against *tech* and resolve it (see :func:`resolve_case`)."""
        if spec.fidelity not in tech.fidelities:
            raise ParameterError(f"{tech.name}: fidelity {spec.fidelity!r} not supported; expected one of {sorted(tech.fidelities)}")
        tech.get_variant(spec.variant)
        facts = self._technique(tech)
        params, params_text, shared = self._validated(tech, spec.params)
        profile_name = spec.profile or tech.default_profile
        own = getattr(tech, "default_workloads", None) or {}  # a fidelity's "" default: no workload
        workload_name = spec.workload or (own[spec.fidelity] if spec.fidelity in own else tech.default_workload) or None
        profile = p_hash = None
        if profile_name:
            profile, p_hash = self.profile(profile_name, spec.overrides)
            if profile.kind not in tech.profile_kinds:
                raise ParameterError(
                    f"{tech.name}: profile {profile.name!r} is of kind {profile.kind!r}; expected one of {list(tech.profile_kinds)}")
        elif spec.overrides:
            raise ParameterError(f"{tech.name}: profile overrides {sorted(spec.overrides)} given without a profile")
        elif tech.needs_profile and spec.fidelity != "execute":
            raise ParameterError(f"{tech.name}: a hardware profile is required (--profile NAME)")
        w_hash = None
        if workload_name and not tech.takes_workload:
            raise ParameterError(f"{tech.name}: reads no workload (it declares takes_workload = false); expected no "
                                 f"--workload, got {workload_name!r}")
        if workload_name:
            w_hash = self.workload_hash(workload_name)  # the workload itself is built with the scenario
        elif tech.needs_workload:
            raise ParameterError(f"{tech.name}: a workload is required (--workload NAME)")
        seed = int(spec.seed)
        code, uses = facts[1], facts[2]
        i_hash = self.inputs(tech, params, hashes_only=True)[1] if uses else {}
        if spec.fidelity == "execute":  # a timing of this machine, whatever profile the case names
            i_hash = {**i_hash, **_this_machine()}
        scenario = functools.partial(self._scenario, tech, spec.variant, spec.fidelity, profile, workload_name,
                                     shared, seed, uses)
        key = self._key(facts, spec.variant, p_hash, w_hash, params_text, seed, spec.fidelity, i_hash)
        built = self._workloads.get(workload_name) if workload_name else None  # a workload file's own name
        return _new_case({"key": key, "technique": tech.name, "technique_version": tech.version, "code": code,
                          "variant": spec.variant, "fidelity": spec.fidelity,
                          "profile": profile.name if profile else None, "profile_hash": p_hash,
                          "workload": built[0].name if built else workload_name or None, "workload_hash": w_hash,
                          "params": params, "seed": seed, "overrides": {k: str(v) for k, v in spec.overrides.items()},
                          "scenario": scenario, "tech": tech, "env": self.env, "inputs": i_hash})

    def _scenario(self, tech: Technique, variant: str, fidelity: str, profile: Any, workload_name: str | None,
                  params: Mapping[str, Any], seed: int, uses: bool) -> Scenario:
        """The :class:`Scenario` of a case :meth:`resolve` hashed, its workload and inputs built now
        (on the case's first read of ``scenario``: a stored case reused never builds them)."""
        workload = self.workload(workload_name)[0] if workload_name else None
        inputs = self.inputs(tech, params)[0] if uses else {}
        return new_scenario({"technique": tech.name, "variant": variant, "fidelity": fidelity, "profile": profile,
                             "workload": workload, "params": params, "seed": seed, "inputs": inputs})


def resolve_case(tech: Technique, spec: ScenarioSpec, *, profile_dirs: tuple[str | Path, ...] = (),
                 resolver: Resolver | None = None, context: Any = None) -> Case:
    """Validate a spec against its technique and resolve profile and workload by name.

    Parameters
    ----------
    tech : Technique
    spec : ScenarioSpec
        Missing profile/workload take the technique's defaults; ``overrides`` are applied to the
        profile (:meth:`suite.hardware.Profile.with_overrides`), giving a new content hash.
    profile_dirs : tuple of path
        Extra profile folders.
    resolver : Resolver, optional
        Reuse its caches (sweeps).
    context : suite.context.Context, optional
        Where profiles and workloads come from, when no *resolver* is given (one of the two is
        required from dlsys-suite 0.3.0; giving neither warns).

    Returns
    -------
    Case
        With ``key`` (:func:`case_key`) and the resolved ``scenario``.

    Raises
    ------
    ParameterError, ProfileError, WorkloadError
        One-line errors naming the technique, the field and the value given.
    """
    if resolver is None:
        from suite.context import Context

        resolver = Resolver(profile_dirs, context=Context.given(context, "resolve_case()"))
    return resolver.resolve(tech, spec)


def evaluate_case(tech: Technique, case: Case) -> Any:
    """Evaluate one case in this process. Returns the Result (exceptions propagate)."""
    if case.scenario is None:
        raise SuiteError(f"case {case.key}: not resolved")
    return tech.evaluate(case.scenario)
