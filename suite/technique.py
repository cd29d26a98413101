"""The types of the plugin contract: what a technique declares and what it returns.

A plugin builds one :class:`Technique` per published method and returns it from the
``suite_techniques`` hook (see :mod:`suite.hookspecs`). Everything here is plain data plus the
evaluation functions the plugin provides; the core never names a technique.

Vocabulary (docs/architecture.md): a *scenario* is (technique, variant, profile, workload, params, seed,
fidelity); a *claim* is a paper's number tied to one or more scenarios, with an acceptance fixed
before our number is seen.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

# the contract's types live in suite.declaration, one module per topic; this module re-exports them
# (every 0.2 import path, ``from suite.technique import Result``, keeps working) and holds Technique
from suite.declaration.vocabulary import (
    CAPABILITIES, CATEGORIES, DEFAULT_ORACLE_TOLERANCE, DIRECTIONS, FIDELITIES, KIT_OPT_OUTS,
    VOCABULARIES, MetricMeaning, Vocabulary, is_reference, resolve_reference, unwrap_partial,
)
from suite.declaration.params import (
    PARAM_ROLES, Paper, Param, REF_KINDS, Variant, read_data, scale_factors,
)
from suite.declaration.results import (
    Metric, PARAM_SHADOWED_COLUMNS, RESERVED_METRIC_NAMES, Result, Scenario, ScenarioSpec, Skip,
    require_dataset, require_devices, resolve_scale,
)
from suite.declaration.claims import (
    Acceptance, Approx, Assumption, AtLeast, AtMost, Between, Claim, Exact, Gain, Null, Ordered,
    REASON_CLASSES, with_reasons,
)
from suite.errors import ParameterError, TechniqueError

if TYPE_CHECKING:  # pragma: no cover
    from suite.declaration.meanings import Lookup

__all__ = [
    "CATEGORIES",
    "FIDELITIES",
    "Paper",
    "Variant",
    "Param",
    "Metric",
    "Result",
    "Scenario",
    "ScenarioSpec",
    "Acceptance",
    "Approx",
    "AtLeast",
    "AtMost",
    "Between",
    "Exact",
    "Gain",
    "Ordered",
    "Null",
    "Assumption",
    "REASON_CLASSES",
    "Claim",
    "with_reasons",
    "Property",
    "Technique",
    "Skip",
    "require_devices",
    "require_dataset",
    "resolve_scale",
    "CAPABILITIES",
    "KIT_OPT_OUTS",
    "DEFAULT_ORACLE_TOLERANCE",
    "VOCABULARIES",
    "Vocabulary",
    "MetricMeaning",
    "DIRECTIONS",
    "PARAM_ROLES",
    "REF_KINDS",
    "RESERVED_METRIC_NAMES",
    "read_data",
    "is_reference",
    "resolve_reference",
]

# --------------------------------------------------------------------------- properties


@dataclass(frozen=True)
class Property:
    """A declared invariant the conformance kit checks under hypothesis-generated inputs.

    ``check(technique, scenario)`` raises ``AssertionError`` with a message when the invariant
    does not hold for that scenario; the kit generates the scenarios (random valid profiles of
    the kinds the technique accepts, its variants, small parameters).
    """

    name: str
    description: str
    check: Callable[["Technique", Scenario], None]


# --------------------------------------------------------------------------- technique


@dataclass
class Technique:
    """One published method, as a plugin declares it.

    Parameters
    ----------
    name : str
        Unique identifier (``"my-technique"``); lower-case, digits and ``-``.
    title : str
        One line for listings.
    category : str
        One of :data:`CATEGORIES`.
    paper : Paper
    variants : list of Variant
        At least one baseline.
    parameters : dict of str -> Param
    fidelities : dict of str -> callable or str
        Fidelity name (``model``, ``simulate``, ``execute``) -> ``evaluate(scenario) -> Result``,
        or a reference ``"package.module:function"`` to it, imported the first time that
        fidelity runs (:meth:`fidelity`). References keep a technique's declaration importable
        without its execute code, so listing techniques stays fast; a reference that does not
        import is a :class:`~suite.errors.TechniqueError` for that technique's cases only.
    claims : list of Claim
    properties : list of Property
    version : str
        The technique's version; part of every case key, so bump it when results change.
    default_profile, default_workload : str or None
        What ``suite run --technique T`` uses when none is given.
    default_workloads : mapping of fidelity -> str
        A fidelity's own default workload, where ``default_workload`` is one that fidelity cannot
        run (``{"execute": "sbm-graph"}``: real arrays of a small generated graph); ``""`` for
        none (a fidelity that runs its own data and no workload).
    needs_profile, needs_workload : bool
        Whether a scenario must name a profile / workload (``needs_workload=False``: a workload is
        optional, and a case that names one is run on it and stored under its name).
    takes_workload : bool
        False: the technique reads no workload at all, so a scenario naming one (``--workload``,
        an experiment's ``workloads``, a spec's ``workload``) is refused with a
        :class:`~suite.errors.ParameterError` naming the technique, the workload and
        ``--workload``, as a profile of a kind outside ``profile_kinds`` is, instead of its figures
        being stored under a workload it never read. False requires ``needs_workload=False`` and
        no default workload (a :class:`~suite.errors.TechniqueError` otherwise).
    profile_kinds : tuple of str
        Which profile kinds the model accepts (``device``, ``node``, ``cluster``, ``measured``).
    capabilities : frozenset of str
        Family checks of the conformance kit that apply (e.g. ``{"bytes-conserved"}``).
    smoke : sequence of ScenarioSpec
        Small scenarios that run in well under a second (conformance kit, smoke experiment).
    validation : sequence of ScenarioSpec
        Scenarios ``suite validate`` runs at both execute and model fidelity (defaults to
        ``smoke`` when empty).
    vocabulary : str or None
        The shared metric vocabulary (a key of :data:`VOCABULARIES`) the technique reports, so
        it is compared head to head with its category; None: none declared.
    metric_meanings : mapping of str -> MetricMeaning, a fidelity's mapping, or references
        What each metric the technique reports besides its vocabulary's means: metric name ->
        :class:`MetricMeaning` (or a mapping with its fields ``unit``, ``direction``, ``meaning``),
        its baseline included where it is a ratio; ``suite info`` prints them (:meth:`meanings`).
        A name may be a pattern, ``<i>`` standing for one or more digits (``layer_time.<i>``);
        ``include`` lists ``"package.module:NAME"`` references to mappings a core helper exports
        for the metrics it reports (``suite.api:WORKERS_RESULT_MEANINGS``), resolved once, when the
        technique is built (one that does not import or names no mapping of MetricMeaning is a
        :class:`~suite.errors.TechniqueError` then); a fidelity's name (``execute``) holds that
        fidelity's own entries and includes, over the shared ones
        (:mod:`suite.declaration.meanings`). A metric of the declared vocabulary is not declared
        again (the vocabulary's meaning is its definition). Empty: none declared.
    headline_metrics : tuple of str
        The metrics ``suite results show`` puts first (default: the vocabulary's metrics).
    oracle_tolerance : float or None
        The largest ``oracle_error`` an execute result may report (the metric's own scale, e.g.
        the largest absolute difference from the oracle); a case above it is stored ``failed``,
        and the kit's ``oracle-agreement`` check holds the smoke cases to it. None: not declared
        (:data:`DEFAULT_ORACLE_TOLERANCE` applies, as a warning in 0.2).
    kit_opt_out : mapping of str -> str
        Default checks of the conformance kit that do not apply, each with the written reason
        (``{"network-sensitivity": "..."}``; names from :data:`KIT_OPT_OUTS`); ``suite plugins``
        shows them.
    uses : tuple of str
        Inputs every case reads besides its own profile and workload, by a fixed name:
        ``"profile:NAME"`` or ``"workload:NAME"`` (a reference device whose calibrated figure
        stands in for a missing one, the devices of a fixed grid, a dataset an execute run
        trains on). The runner resolves each through the command's context into
        :attr:`Scenario.inputs` under that string (``scenario.input("profile:NAME")``) and
        hashes its content into the case key. An input that depends on a parameter's value is
        a ``Param(..., ref=...)`` instead.
    """

    name: str
    title: str
    category: str
    paper: Paper
    variants: list[Variant]
    fidelities: dict[str, Callable[[Scenario], Result] | str]
    parameters: dict[str, Param] = field(default_factory=dict)
    claims: list[Claim] = field(default_factory=list)
    properties: list[Property] = field(default_factory=list)
    version: str = "0.1.0"
    default_profile: str | None = None
    default_workload: str | None = None
    default_workloads: Mapping[str, str] = field(default_factory=dict)  # fidelity -> workload, over default_workload
    needs_profile: bool = True
    needs_workload: bool = True
    takes_workload: bool = True
    profile_kinds: tuple[str, ...] = ("device", "node", "cluster", "measured")
    capabilities: frozenset[str] = frozenset()
    smoke: Sequence[ScenarioSpec] = ()
    validation: Sequence[ScenarioSpec] = ()
    docs: str = ""  # path of the docs page, relative to the repository root
    vocabulary: str | None = None
    metric_meanings: Mapping[str, Any] = field(default_factory=dict)
    headline_metrics: tuple[str, ...] = ()
    oracle_tolerance: float | None = None
    kit_opt_out: Mapping[str, str] = field(default_factory=dict)
    uses: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        import re

        if not re.fullmatch(r"[a-z][a-z0-9-]*", self.name or ""):
            raise TechniqueError(f"technique name must be lower-case letters, digits and '-', got {self.name!r}")
        if self.category not in CATEGORIES:
            raise TechniqueError(f"technique {self.name!r}: category must be one of {CATEGORIES}, got {self.category!r}")
        if not self.variants:
            raise TechniqueError(f"technique {self.name!r}: declares no variants")
        names = [v.name for v in self.variants]
        if len(set(names)) != len(names):
            raise TechniqueError(f"technique {self.name!r}: duplicate variant names {names}")
        if not any(v.baseline for v in self.variants):
            raise TechniqueError(f"technique {self.name!r}: no variant is marked baseline=True")
        bad = [f for f in self.fidelities if f not in FIDELITIES]
        if bad or not self.fidelities:
            raise TechniqueError(f"technique {self.name!r}: fidelities must be a non-empty subset of {FIDELITIES}, got {list(self.fidelities)}")
        for fid, ref in self.fidelities.items():
            if isinstance(ref, str):
                if not is_reference(ref):
                    raise TechniqueError(f"technique {self.name!r}: fidelity {fid!r}: expected a callable or a reference "
                                         f"'package.module:function', got {ref!r}")
            elif not callable(ref):
                raise TechniqueError(f"technique {self.name!r}: fidelity {fid!r}: expected a callable or a reference "
                                     f"'package.module:function', got {type(ref).__name__}")
        self.uses = tuple(self.uses)
        # the references as declared: what resolving one may put in their place (changed_by_itself)
        self.__dict__["_declared_refs"] = tuple((k, v) for k, v in self.fidelities.items() if isinstance(v, str))
        for u in self.uses:
            kind, _, nm = str(u).partition(":")
            if kind not in ("profile", "workload") or not nm:
                raise TechniqueError(f"technique {self.name!r}: uses: expected 'profile:NAME' or 'workload:NAME', got {u!r}")
        ids = [c.id for c in self.claims]
        if len(set(ids)) != len(ids):
            raise TechniqueError(f"technique {self.name!r}: duplicate claim ids")
        if isinstance(self.smoke, ScenarioSpec):
            self.smoke = (self.smoke,)
        if isinstance(self.capabilities, str):
            self.capabilities = frozenset({self.capabilities})
        unknown = sorted(set(self.capabilities) - set(CAPABILITIES))
        if unknown:
            raise TechniqueError(f"technique {self.name!r}: capabilities: expected names from {list(CAPABILITIES)}, "
                                 f"got unknown {unknown[0]!r}")
        if self.vocabulary is not None and self.vocabulary not in VOCABULARIES:
            raise TechniqueError(f"technique {self.name!r}: vocabulary: expected one of {sorted(VOCABULARIES)}, "
                                 f"got {self.vocabulary!r}")
        self._check_kit_fields()
        self._check_takes_workload()
        self._check_scale_factors()
        self._check_metric_meanings()
        self._check_claim_names()
        self._check_claim_bands()
        if isinstance(self.headline_metrics, str):
            self.headline_metrics = (self.headline_metrics,)
        self.headline_metrics = tuple(self.headline_metrics)
        self._check_shown_names()

    def _check_takes_workload(self) -> None:
        """``takes_workload=False`` contradicts ``needs_workload=True`` and a default workload."""
        if self.takes_workload:
            return
        given = [f"{k} = {v!r}" for k, v in (("needs_workload", self.needs_workload),
                                              ("default_workload", self.default_workload),
                                              ("default_workloads", {k: w for k, w in self.default_workloads.items() if w})) if v]
        if given:
            raise TechniqueError(f"technique {self.name!r}: takes_workload = false: expected needs_workload = false "
                                 f"and no default workload, got {', '.join(given)}")

    def _check_scale_factors(self) -> None:
        """Each parameter a ``devices_each = "tp*pp"`` names is an int parameter of this technique."""
        for name in self.parameters:
            try:
                scale_factors(self.parameters, name)
            except TechniqueError as exc:
                raise TechniqueError(f"technique {self.name!r}: {exc}") from None

    def _check_shown_names(self) -> None:
        """Warn (``DeprecationWarning``; refused when the plugin loads from dlsys-suite 0.4.0) of a
        variant name, parameter name, parameter unit or a string parameter default or choice holding
        a control character or a bidirectional override (terminals show them escaped:
        :func:`suite.textsafe.visible`), of a parameter named like a column of the case tables or a
        metric of the technique (the report then heads it ``param.NAME``), and of a variant name
        holding a comma (``--variant`` cannot pick it)."""
        import warnings

        from suite.textsafe import hidden_characters

        shown = [("variant name", v.name) for v in self.variants]
        shown += [(f"parameter {k!r} unit", p.unit or "") for k, p in self.parameters.items()]
        shown += [("parameter name", k) for k in self.parameters]
        shown += [(f"parameter {k!r} default", p.default) for k, p in self.parameters.items()
                  if isinstance(p.default, str)]
        shown += [(f"parameter {k!r} choice", c) for k, p in self.parameters.items() for c in p.choices or ()
                  if isinstance(c, str)]
        for what, text in shown:
            if hidden_characters(text):
                warnings.warn(f"technique {self.name!r}: {what}: expected printable characters only, got "
                              f"{', '.join(hidden_characters(text))} in {text!r}; this is refused when the "
                              "plugin loads from dlsys-suite 0.4.0", DeprecationWarning, stacklevel=4)
        for k in sorted(set(self.parameters) & (set(self.headline) | PARAM_SHADOWED_COLUMNS)):
            warnings.warn(f"technique {self.name!r}: parameter {k!r}: expected a name that is not a case column or a "
                          f"headline metric ({', '.join(sorted(PARAM_SHADOWED_COLUMNS))}, the technique's headline "
                          f"metrics), got {k!r}; the report heads it param.NAME; this is refused when the plugin "
                          "loads from dlsys-suite 0.4.0", DeprecationWarning, stacklevel=4)
        for v in (v.name for v in self.variants if "," in v.name):  # `--variant a,b` lists two
            warnings.warn(f"technique {self.name!r}: variant {v!r}: expected a name without a comma (`--variant` "
                          f"and experiment files split a list on commas, so it cannot be picked), got {v!r}; this "
                          "is refused when the plugin loads from dlsys-suite 0.4.0", DeprecationWarning, stacklevel=4)

    def _check_kit_fields(self) -> None:
        tol = self.oracle_tolerance
        if tol is not None and (isinstance(tol, bool) or not isinstance(tol, (int, float)) or not tol >= 0):
            raise TechniqueError(f"technique {self.name!r}: oracle_tolerance: expected a number >= 0 or None, got {tol!r}")
        for check, why in dict(self.kit_opt_out).items():
            if check not in KIT_OPT_OUTS:
                raise TechniqueError(f"technique {self.name!r}: kit_opt_out: expected check names from "
                                     f"{list(KIT_OPT_OUTS)}, got {check!r}")
            if not isinstance(why, str) or not why.strip():
                raise TechniqueError(f"technique {self.name!r}: kit_opt_out[{check!r}]: expected the written reason "
                                     f"the check does not apply, got {why!r}")

    def _check_metric_meanings(self) -> None:
        """Check :attr:`metric_meanings` (:func:`suite.declaration.meanings.check_declared`): each
        entry becomes a :class:`MetricMeaning`, each include is resolved, once, here
        (:func:`suite.declaration.meanings.lookups`); a malformed entry or an include that does not
        resolve is a one-line :class:`TechniqueError` when the technique is built."""
        # the lookups, kept with what they were built from (a field rebound since is read afresh); a field
        # of this object, so another plugin rebinding them is put back like any other (suite.tamper_fields)
        self.metric_meanings, lookups = self._resolve_meanings()
        self.__dict__["_meaning_lookups"] = (self.metric_meanings, self.vocabulary, lookups)

    def _resolve_meanings(self) -> tuple[Mapping[str, Any], Mapping[str | None, Lookup]]:
        """(:attr:`metric_meanings` checked, fidelity -> its :class:`suite.declaration.meanings.Lookup`)."""
        from suite.declaration.meanings import check_declared, lookups

        where = f"technique {self.name!r}: metric_meanings"
        declared = check_declared(self.metric_meanings, where, tuple(self.fidelities), self._vocabulary())
        return declared, lookups(declared, tuple(self.fidelities), where, self._vocabulary())

    def _lookup(self, fidelity: str | None) -> Lookup:
        """The :class:`suite.declaration.meanings.Lookup` at *fidelity* (the shared one where that
        fidelity declares none of its own): the one built with the technique, unless
        :attr:`metric_meanings` or :attr:`vocabulary` was rebound since (then resolved afresh)."""
        built, vocabulary, found = self.__dict__.get("_meaning_lookups", (None, None, None))
        if built is not self.metric_meanings or vocabulary != self.vocabulary:
            found = self._resolve_meanings()[1]
        lookups: Mapping[str | None, Lookup] = found
        return lookups.get(fidelity) or lookups[None]

    def _vocabulary(self) -> Vocabulary | None:
        return VOCABULARIES[self.vocabulary] if self.vocabulary else None

    def meaning_sources(self, fidelity: str | None = None) -> dict[str, tuple[str, MetricMeaning]]:
        """Metric name (or ``<i>`` pattern) -> (where its meaning is declared, the meaning) at
        *fidelity*: ``"vocabulary NAME"``, an include's reference, ``"technique"`` (shared by every
        fidelity) or ``"technique, FIDELITY"``; the vocabulary's first, each later one over an
        earlier. None: the vocabulary's and the shared ones only. (Includes were resolved when the
        technique was built: a bad one is refused then.)"""
        return dict(self._lookup(fidelity).sources)

    def meanings(self, fidelity: str | None = None) -> dict[str, MetricMeaning]:
        """Metric name (or ``<i>`` pattern) -> what it means at *fidelity* (None: at every
        fidelity): :meth:`meaning_sources` without the sources; empty when none is declared."""
        return {m: d for m, (_, d) in self._lookup(fidelity).sources.items()}

    def meaning(self, metric: str, fidelity: str | None = None) -> MetricMeaning | None:
        """What *metric* (a result's name, ``layer_time.0``) means at *fidelity*: the vocabulary's,
        else the strongest layer's that declares it, its own entry before a pattern's
        (``layer_time.<i>``); None: no meaning is declared. A dict lookup (the patterns are tried
        for a name no layer declares)."""
        found = self._lookup(fidelity)
        hit = found.names.get(metric)
        if hit is None:
            hit = next((d for rx, d in found.patterns if rx.fullmatch(metric)), None)
        return hit

    def _check_claim_names(self) -> None:
        """Warn (``DeprecationWarning``; refused when the plugin loads from dlsys-suite 0.4.0) of a claim
        whose scenario, or a variant null's substitute, names a variant or a fidelity this technique
        does not have: its cases can only end as ``error`` rows of ``suite reproduce``."""
        import warnings

        variants, fidelities = set(self.variant_names), set(self.fidelities)
        for c in self.claims:
            named = [("variant", s.variant) for s in c.specs().values()]
            named += [("fidelity", s.fidelity) for s in c.specs().values()]
            named += [("variant", v) for n in c.nulls for v in (n.variants or {}).values()]
            for kind, name in dict.fromkeys(named):
                if name not in (variants if kind == "variant" else fidelities):
                    have = sorted(variants if kind == "variant" else fidelities)
                    warnings.warn(f"technique {self.name!r}: claim {c.id!r}: expected a {kind} of the technique "
                                  f"({', '.join(have)}), got {name!r}; its cases cannot run: this is refused when the "
                                  "plugin loads from dlsys-suite 0.4.0", DeprecationWarning, stacklevel=4)

    def _check_claim_bands(self) -> None:
        """Warn (``DeprecationWarning``; refused when the plugin loads from dlsys-suite 0.4.0) of a
        claim whose acceptance judges nothing as declared (:meth:`Acceptance.malformed`: an empty or
        NaN band, a negative tolerance, an ordering of one label or with a negative margin); its
        verdict is already ``claim defect``."""
        import warnings

        for c in self.claims:
            try:
                why, shown = c.expect.malformed(), repr(c.expect)
            except Exception:  # noqa: BLE001 - a plugin's own acceptance whose band raises: judged when run
                continue
            if why:
                warnings.warn(f"technique {self.name!r}: claim {c.id!r}: expect: expected a band that can be passed "
                              f"and failed, got {shown:.120}: {why}; its verdict is 'claim defect': this is "
                              "refused when the plugin loads from dlsys-suite 0.4.0", DeprecationWarning, stacklevel=4)

    @property
    def headline(self) -> tuple[str, ...]:
        """The metrics to show first: :attr:`headline_metrics`, else the vocabulary's metrics,
        else none (every metric in name order)."""
        if self.headline_metrics:
            return self.headline_metrics
        if self.vocabulary:
            return tuple(VOCABULARIES[self.vocabulary].metrics)
        return ()

    # -- lookups
    def fidelity(self, name: str) -> Callable[[Scenario], Result]:
        """The evaluate function of fidelity *name*, importing it on first use when it was declared
        as a ``"module:function"`` reference (the imported function replaces the reference).

        Raises
        ------
        Skip
            The technique has no such fidelity.
        TechniqueError
            The reference does not import or does not name a callable.
        """
        if name not in self.fidelities:
            raise Skip(f"{self.name} has no {name!r} fidelity (has {sorted(self.fidelities)})")
        ref = self.fidelities[name]
        if isinstance(ref, str):
            try:
                obj = resolve_reference(ref)
            except Exception as e:  # noqa: BLE001 - any failure to import is this technique's own
                declared_in = self.__dict__.get("_declared_in")  # set by declare_technique: the file names it
                if declared_in:
                    raise TechniqueError(f"{declared_in}: fidelities.{name}: expected a reference "
                                         f"'package.module:function' that imports ({type(e).__name__}: {e}), "
                                         f"got {ref!r}") from e
                raise TechniqueError(f"technique {self.name!r}: fidelity {name!r}: cannot import {ref!r}: "
                                     f"{type(e).__name__}: {e}") from e
            if not callable(obj):
                raise TechniqueError(f"technique {self.name!r}: fidelity {name!r}: {ref!r} is "
                                     f"{type(obj).__name__}, expected a callable")
            # the reference's module stays the technique's implementation module (implementation_modules,
            # hence the code fingerprint in every case key), whatever module the object says it is from
            self.__dict__.setdefault("_reference_modules", {})[name] = ref.partition(":")[0]
            self.fidelities[name] = ref = obj
        return ref

    def changed_by_itself(self, now: dict[Any, Any], then: dict[Any, Any]) -> bool:
        """Whether dict *now*, once *then*, changed only as :meth:`fidelity` changes this technique
        when it resolves a reference on first use: *now* is its ``fidelities`` with references
        replaced by the functions they name (modules already imported: nothing is imported here),
        its ``__dict__`` with ``_reference_modules`` added, or that table with entries added, each
        the module of the reference the technique was declared with (``_declared_refs``, taken when
        it was built). The guard on techniques other plugins built
        (:class:`suite.tamper_fields.Fields`) keeps these; any other change is a rewrite."""
        if not then.keys() <= now.keys():
            return False
        declared = dict(self.__dict__.get("_declared_refs", ()))
        kept = all(now[k] is then[k] for k in then if not (now is self.fidelities and isinstance(then[k], str)))
        added = now.keys() - then.keys()
        if now is self.fidelities:
            return kept and not added and all(now[k] is then[k] or then[k] == declared.get(k) and self._resolved(k, declared)
                                              for k in now)
        refs = self.__dict__.get("_reference_modules")
        if now is self.__dict__:
            return kept and added <= {"_reference_modules"} and (not added or self._resolved_modules(refs, declared))
        return now is refs and kept and self._resolved_modules({k: now[k] for k in added}, declared)

    def _resolved(self, fid: str, declared: Mapping[str, str]) -> bool:
        """Whether fidelity *fid* holds the function its declared reference names (module imported)."""
        fn = self.fidelities.get(fid)
        return (fid in declared and not isinstance(fn, str)
                and fn is resolve_reference(declared[fid], imported_only=True))

    def _resolved_modules(self, table: Any, declared: Mapping[str, str]) -> bool:
        """Whether *table* (``_reference_modules`` entries) maps resolved fidelities to the module
        part of the reference each was declared with."""
        return isinstance(table, dict) and all(
            self._resolved(k, declared) and v == declared[k].partition(":")[0] for k, v in table.items())

    @property
    def implementation_modules(self) -> list[str]:
        """The modules that define the fidelities' evaluate functions, sorted, read from the
        references or the functions' ``__module__`` without importing anything. A reference's
        module stays the answer once it is imported (a re-exported function or a
        ``functools.partial`` names another module), so case keys do not change mid-process. A
        function given as a ``functools.partial`` names the module of the function it wraps
        (:func:`unwrap_partial`), not ``functools``."""
        resolved = self.__dict__.get("_reference_modules", {})
        mods = {(f.partition(":")[0] if isinstance(f, str) else
                 resolved.get(n) or getattr(unwrap_partial(f), "__module__", None) or "")
                for n, f in self.fidelities.items()}
        return sorted(mods - {""})

    @property
    def package(self) -> str:
        """The top-level package (or single module) that implements the technique: the first of
        :attr:`implementation_modules`' top-level names; "" when none is known."""
        mods = self.implementation_modules
        return mods[0].split(".")[0] if mods else ""

    @property
    def references(self) -> dict[str, str]:
        """Parameter name -> what it names (``profile``, ``workload``, ``file``), for the
        parameters declared with ``Param(..., ref=...)``."""
        return {k: p.ref for k, p in self.parameters.items() if p.ref is not None}

    @property
    def variant_names(self) -> list[str]:
        return [v.name for v in self.variants]

    @property
    def baselines(self) -> list[Variant]:
        return [v for v in self.variants if v.baseline]

    def get_variant(self, name: str) -> Variant:
        for v in self.variants:
            if v.name == name:
                return v
        raise ParameterError(f"{self.name}: unknown variant {name!r}; expected one of {self.variant_names}")

    def extrapolated(self, params: Mapping[str, Any]) -> dict[str, str]:
        """Parameter name -> why its value lies outside the paper's measured range
        (:attr:`Param.measured`), for the parameters that do."""
        out = {}
        for k, v in params.items():
            p = self.parameters.get(k)
            why = p.extrapolated(v) if p is not None else None
            if why:
                out[k] = why
        return out

    def validate_params(self, params: Mapping[str, Any] | None) -> dict[str, Any]:
        """Fill defaults and validate; unknown names are an error naming the known ones."""
        params = dict(params or {})
        unknown = sorted(set(params) - set(self.parameters))
        if unknown:
            raise ParameterError(
                f"{self.name}: unknown parameter {unknown[0]!r}; expected one of {sorted(self.parameters)}"
            )
        out = {}
        for pname, p in self.parameters.items():
            out[pname] = p.validate(pname, params.get(pname, p.default), technique=self.name)
        return out

    def evaluate(self, scenario: Scenario) -> Result:
        """Run one resolved scenario at its fidelity and check the result's shape."""
        fn = self.fidelity(scenario.fidelity)
        self.get_variant(scenario.variant)
        result = fn(scenario)
        if not isinstance(result, Result):
            raise TechniqueError(f"{self.name}: {scenario.fidelity} evaluate returned {type(result).__name__}, expected Result")
        return result
