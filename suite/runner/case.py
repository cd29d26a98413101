"""Cases: a scenario plus fidelity, resolved and hashed.

The case key is the content hash docs/architecture.md describes ("Runner and store"):

    hash(technique, technique version, variant, profile content hash, workload hash,
         params, seed, fidelity)

so a case already stored with status ok is never computed again, and changing a profile figure,
a workload or a technique's version makes new cases.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from suite.errors import ParameterError, SuiteError
from suite.technique import Scenario, ScenarioSpec, Technique

__all__ = ["Case", "Resolver", "resolve_case", "case_key", "code_fingerprint", "package_fingerprint",
           "evaluate_case"]


@dataclass(frozen=True)
class Case:
    """A resolved, hashed unit of work."""

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
    scenario: Scenario | None = field(default=None, compare=False, repr=False)
    code: str | None = None  # the technique's code fingerprint (code_fingerprint)
    # the Technique object that evaluates it (set by the resolver): executors never look it up
    tech: Technique | None = field(default=None, compare=False, repr=False)

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
        }


def case_key(technique: str, version: str, variant: str, profile_hash: str | None,
             workload_hash: str | None, params: dict[str, Any], seed: int, fidelity: str,
             code: str | None = None) -> str:
    """SHA-256 (first 20 hex chars) of the case identity (docs/architecture.md, "Runner and store").

    ``code`` is the technique's code fingerprint (:func:`code_fingerprint`): a change to the
    plugin's source makes new cases even when its author forgot to bump ``version``.
    """
    ident = [technique, version, variant, profile_hash, workload_hash,
             {k: params[k] for k in sorted(params)}, int(seed), fidelity]
    if code is not None:
        ident.append(code)
    blob = json.dumps(ident, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:20]


_FINGERPRINTS: dict[str, str] = {}


def code_fingerprint(tech: Technique) -> str:
    """SHA-256 (16 hex chars) of the source of the package that implements *tech*.

    The package is the top-level package of the module that defines the technique's evaluate
    functions (:attr:`Technique.package`), hashed by :func:`package_fingerprint`.
    """
    return package_fingerprint(tech.package)


def package_fingerprint(top: str) -> str:
    """SHA-256 (16 hex chars) of the source of the top-level package (or single module) *top*.

    Every ``*.py`` file under the package is hashed (relative path and bytes, sorted); a module
    that is not a package (tests, notebooks) hashes its own file; a name that cannot be imported
    hashes the name. Computed once per package and process (``suite reproduce`` keys its
    judgement cache by the fingerprints of the core and of a claim's code with it).
    """
    import importlib
    import sys
    from pathlib import Path

    hit = _FINGERPRINTS.get(top)
    if hit is not None:
        return hit
    h = hashlib.sha256()
    files: list[Path] = []
    mod = sys.modules.get(top)
    if mod is None and top:
        try:
            mod = importlib.import_module(top)
        except Exception:  # noqa: BLE001 - an unimportable package has no fingerprint but its name
            mod = None
    if mod is not None:
        if getattr(mod, "__path__", None):
            for root in mod.__path__:
                files += sorted(Path(root).rglob("*.py"))
            base = Path(list(mod.__path__)[0])
        elif getattr(mod, "__file__", None):
            files = [Path(mod.__file__)]
            base = files[0].parent
        for f in files:
            try:
                rel = f.relative_to(base).as_posix() if f.is_relative_to(base) else f.name
                h.update(rel.encode() + b"\0" + f.read_bytes() + b"\0")
            except OSError:
                continue
    else:
        h.update(top.encode())
    fp = h.hexdigest()[:16]
    _FINGERPRINTS[top] = fp
    return fp


#: resolved (profile, overrides) kept by a :class:`Resolver`; a sweep over more distinct override
#: sets (a 1,000 x 1,000 ``--set`` grid) evicts the oldest, so its memory stays bounded
PROFILE_CACHE = 4096


class Resolver:
    """Resolves specs into cases, loading each distinct profile (with its overrides) and workload
    once and hashing it once (a sweep of 10,000 cases touches a handful of profiles; the last
    :data:`PROFILE_CACHE` distinct override sets are kept).

    Parameters
    ----------
    profile_dirs : tuple of path
        Extra profile folders (``--profiles DIR``).
    context : suite.context.Context, optional
        Where profiles and workloads come from (its plugins' folders and workloads included);
        default: a new context (:meth:`suite.context.Context.build`).
    """

    def __init__(self, profile_dirs: tuple = (), context: Any = None):
        from suite.context import Context

        self.profile_dirs = tuple(profile_dirs)
        self.context = (context if context is not None else Context.build()).with_profile_dirs(self.profile_dirs)
        self._profiles: dict[tuple, tuple[Any, str]] = {}
        self._workloads: dict[str, tuple[Any, str]] = {}

    def profile(self, name: str, overrides: Mapping[str, Any] | None = None):
        """(Profile, content hash) of *name* with *overrides* applied."""
        ov = tuple(sorted((str(k), str(v)) for k, v in (overrides or {}).items()))
        hit = self._profiles.get((name, ov))
        if hit is None:
            prof = self.context.profile(name)
            if ov:
                prof = prof.with_overrides(dict(ov))
            hit = (prof, prof.content_hash())
            if len(self._profiles) >= PROFILE_CACHE:  # a sweep over many overrides: oldest out first
                del self._profiles[next(iter(self._profiles))]
            self._profiles[(name, ov)] = hit
        return hit

    def workload(self, name: str):
        """(Workload, content hash) of *name*."""
        hit = self._workloads.get(name)
        if hit is None:
            wl = self.context.workload(name)
            hit = (wl, wl.content_hash())
            self._workloads[name] = hit
        return hit

    def resolve(self, tech: Technique, spec: ScenarioSpec) -> Case:
        """Validate *spec* against *tech* and resolve it (see :func:`resolve_case`)."""
        if spec.fidelity not in tech.fidelities:
            raise ParameterError(f"{tech.name}: fidelity {spec.fidelity!r} not supported; expected one of {sorted(tech.fidelities)}")
        tech.get_variant(spec.variant)
        params = tech.validate_params(spec.params)
        profile_name = spec.profile or tech.default_profile
        workload_name = (spec.workload or (getattr(tech, "default_workloads", None) or {}).get(spec.fidelity)
                         or tech.default_workload)
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
        workload = w_hash = None
        if workload_name:
            workload, w_hash = self.workload(workload_name)
        elif tech.needs_workload:
            raise ParameterError(f"{tech.name}: a workload is required (--workload NAME)")
        seed = int(spec.seed)
        scenario = Scenario(technique=tech.name, variant=spec.variant, fidelity=spec.fidelity,
                            profile=profile, workload=workload, params=params, seed=seed)
        code = code_fingerprint(tech)
        key = case_key(tech.name, tech.version, spec.variant, p_hash, w_hash, params, seed, spec.fidelity, code)
        return Case(key=key, technique=tech.name, technique_version=tech.version, code=code, variant=spec.variant,
                    fidelity=spec.fidelity, profile=profile.name if profile else None, profile_hash=p_hash,
                    workload=workload.name if workload else None, workload_hash=w_hash, params=params,
                    seed=seed, overrides={k: str(v) for k, v in spec.overrides.items()}, scenario=scenario,
                    tech=tech)


def resolve_case(tech: Technique, spec: ScenarioSpec, *, profile_dirs: tuple = (),
                 resolver: Resolver | None = None) -> Case:
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

    Returns
    -------
    Case
        With ``key`` (:func:`case_key`) and the resolved ``scenario``.

    Raises
    ------
    ParameterError, ProfileError, WorkloadError
        One-line errors naming the technique, the field and the value given.
    """
    return (resolver or Resolver(profile_dirs)).resolve(tech, spec)


def evaluate_case(tech: Technique, case: Case):
    """Evaluate one case in this process. Returns the Result (exceptions propagate)."""
    if case.scenario is None:
        raise SuiteError(f"case {case.key}: not resolved")
    return tech.evaluate(case.scenario)
