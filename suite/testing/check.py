"""The conformance kit: the public proof that a technique follows the contract.

Like scikit-learn's ``check_estimator`` / ``parametrize_with_checks``: every generic check and
the family checks the technique opts into through ``Technique.capabilities``; each check either
passes, fails with an ``AssertionError`` naming the technique, the check and the case, or is
skipped with a reason. Three ways to run them:

* :func:`parametrize_with_checks` -- one pytest item per check (``my-technique:metadata``,
  ``my-technique:family:bytes-conserved``, ...), each in its own forked process with a time-out, so
  one failure, crash or hang does not hide the others (the recommended way in a test suite);
* :func:`run_checks` -- every check, each isolated with a time-out, outcomes collected in a
  :class:`CheckReport` (nothing raised);
* :func:`check_technique` -- every check in this process, in order, raising the first failure
  (the original interface, kept for existing callers).

Generic checks (ids): ``metadata``, ``parameters``, ``runs-and-metrics``, ``determinism``,
``claims-resolve``, ``claims-assumptions``, ``claims-nulls``, ``property:NAME`` (one per declared property), then
``family:CAPABILITY`` for each declared capability.

Family checks and the metric conventions they read (a technique that declares the capability
must report these; an undeclared name is a :class:`~suite.errors.TechniqueError` when the
technique is built, see :data:`suite.technique.CAPABILITIES`):

=======================  ================================================================  =========================================
capability               what is checked                                                   metrics / artifacts read
=======================  ================================================================  =========================================
``bytes-conserved``      bytes sent by all workers == bytes received (execute)             ``bytes_sent``, ``bytes_received``
``alpha-beta-bound``     communication time >= the bandwidth lower bound of the profile    ``comm_time`` (s), ``comm_bytes`` (B)
                         for moving ``comm_bytes`` over the outer network level             per worker
``memory-capacity``      peak device memory <= device capacity (when ``fits`` == 1)         ``peak_memory`` (B), ``fits``
``offload-balanced``     bytes offloaded == bytes prefetched back                           ``bytes_offloaded``, ``bytes_prefetched``
``recovery-exact``       state after recovery equals the fault-free state (execute)         ``recovery_error`` (== 0 within 1e-9)
``sgd-envelope``         final loss within an envelope of the synchronous baseline          ``final_loss``; baseline variant's
``oracle-exact``         output equals the oracle (execute)                                 ``oracle_error`` <= 1e-8
``network-sensitivity``  a slower network level the traffic crosses raises the              what ``suite.perf.check_network_sensitivity``
                         communication time; a level it does not cross changes nothing     reads (issue 17), on each model smoke case
=======================  ================================================================  =========================================
"""

from __future__ import annotations

import os
import signal
import threading
import traceback
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from types import FrameType
from typing import TYPE_CHECKING

from suite.deprecation import FAILS_FROM, KitWarning, fails_now
from suite.technique import Result, Technique
import suite.testing.resolve as _r
from suite.testing.family import (DEFAULT_CHECKS, FAMILY_CHECKS, _applies, _DEFAULT_FNS,  # noqa: F401 - the kit's
                                  comm_bandwidth_bound)  # names before 0.3.0 stay importable from here
from suite.testing.generic import (_fail, check_claims_assumptions, check_claims_nulls, check_claims_resolve, check_determinism,  # noqa: F401
                                   check_imports, check_metadata, check_parameters, check_properties,
                                   check_runs_and_metrics, _check_one_property, _property_fidelity)
from suite.testing.resolve import _resolve, resolve_case  # noqa: F401

if TYPE_CHECKING:  # pragma: no cover
    import pytest

    from suite.runner.case import Case

_KIT_NAMES = (_resolve, resolve_case, _DEFAULT_FNS)  # re-exported: the 0.2 import paths keep working

__all__ = ["CheckReport", "Outcome", "check_technique", "run_checks", "run_check", "check_ids",
           "parametrize_with_checks", "FAMILY_CHECKS", "DEFAULT_CHECKS", "DEFAULT_CHECK_TIMEOUT", "check_claims_nulls",
           "check_claims_assumptions",
           "comm_bandwidth_bound", "KitWarning"]

#: time-out (s) of one check when run isolated (:func:`run_check`, :func:`parametrize_with_checks`)
DEFAULT_CHECK_TIMEOUT = 300.0


@dataclass
class CheckReport:
    """Outcome per check id: ``"passed"``, ``"skipped: reason"``, ``"warned: message"`` (a new
    default check, :mod:`suite.deprecation`) or ``"failed: message"``."""

    technique: str
    outcomes: dict[str, str] = field(default_factory=dict)

    @property
    def passed(self) -> list[str]:
        return [k for k, v in self.outcomes.items() if v == "passed"]

    @property
    def skipped(self) -> dict[str, str]:
        return {k: v[len("skipped: "):] for k, v in self.outcomes.items() if v.startswith("skipped")}

    @property
    def failed(self) -> dict[str, str]:
        return {k: v[len("failed: "):] for k, v in self.outcomes.items() if v.startswith("failed")}

    @property
    def warned(self) -> dict[str, str]:
        """Default checks that found a problem they only warn about in this version."""
        return {k: v[len("warned: "):] for k, v in self.outcomes.items() if v.startswith("warned")}


# ----------------------------------------------------------------------------- one check by id


class _State:
    """What several checks share for one technique: the smoke cases and their results (computed
    on first use; in an isolated check, in that check's own process)."""

    def __init__(self, tech: Technique, max_examples: int):
        self.tech = tech
        self.max_examples = max_examples
        self._cases: list[Case] | None = None
        self._results: dict[str, Result] | None = None

    @property
    def cases(self) -> list[Case]:
        if self._cases is None:
            self._cases = _r.smoke_cases(self.tech)
        return self._cases

    @property
    def results(self) -> dict[str, Result]:
        if self._results is None:
            self._results = check_runs_and_metrics(self.tech, self.cases)
        return self._results


def check_ids(tech: Technique, *, properties: bool = True, require_nulls: bool = True) -> list[str]:
    """The ids of every check that applies to *tech*, in the order :func:`check_technique` runs them."""
    ids = ["metadata", "imports", "parameters", "runs-and-metrics", "determinism", "claims-resolve",
           "claims-assumptions"]
    if require_nulls:
        ids.append("claims-nulls")
    if properties:
        ids += [f"property:{p.name}" for p in tech.properties]
    ids += [f"family:{cap}" for cap in FAMILY_CHECKS if cap in tech.capabilities]
    ids += [c for c in DEFAULT_CHECKS if _applies(tech, c)]
    if getattr(tech, "vocabulary", None):
        ids.append("vocabulary")
    return ids


def check_vocabulary(tech: Technique, results: dict[str, Result], cases: Sequence[Case] = ()) -> str | None:
    """A technique declaring ``vocabulary`` reports each of the vocabulary's metrics in every
    ok model-fidelity smoke result (every result when *cases* is not given), in the vocabulary's unit and direction (:data:`suite.technique.VOCABULARIES`),
    so the category comparison puts like beside like."""
    from suite.technique import VOCABULARIES

    if tech.vocabulary is None:
        return "the technique declares no vocabulary"
    voc = VOCABULARIES[tech.vocabulary]
    model = {c.key for c in cases if c.fidelity == "model"} if cases else set(results)
    results = {k: r for k, r in results.items() if k in model}
    if not results:
        return "no model-fidelity smoke case ran"
    for key, r in results.items():
        for name, (unit, direction) in voc.metrics.items():
            m = r.metrics.get(name)
            if m is None:
                raise _fail(tech, "vocabulary", f"vocabulary {voc.name!r}: metric {name!r} missing in case {key} "
                                                f"(has {sorted(r.metrics)})")
            if m.unit != unit or m.direction != direction:
                raise _fail(tech, "vocabulary", f"vocabulary {voc.name!r}: metric {name!r}: expected unit {unit!r}, "
                                                f"direction {direction!r}, got {m.unit!r}, {m.direction!r}")
    return None


def _check_fn(check_id: str) -> Callable[[_State], str | None]:
    """The function running check *check_id* on a state: returns None (passed) or a skip reason,
    raises AssertionError (failed)."""
    simple = {
        "metadata": lambda s: check_metadata(s.tech),
        "imports": lambda s: check_imports(s.tech),
        "parameters": lambda s: check_parameters(s.tech),
        "runs-and-metrics": lambda s: (s.results, None)[1],
        "determinism": lambda s: check_determinism(s.tech, s.results, s.cases),
        "claims-resolve": lambda s: check_claims_resolve(s.tech),
        "claims-nulls": lambda s: check_claims_nulls(s.tech),
        "claims-assumptions": lambda s: check_claims_assumptions(s.tech),
        "vocabulary": lambda s: check_vocabulary(s.tech, s.results, s.cases),
    }
    if check_id in simple:
        return simple[check_id]
    if check_id.startswith("property:"):
        name = check_id[len("property:"):]

        def prop(s: _State) -> None:
            for p in s.tech.properties:
                if p.name == name:
                    return _check_one_property(s.tech, p, _property_fidelity(s.tech), s.max_examples)
            raise _fail(s.tech, check_id, f"no declared property {name!r}")

        return prop
    if check_id in _DEFAULT_FNS:
        def default(s: _State) -> str | None:
            why = s.tech.kit_opt_out.get(check_id)
            if why:
                return f"opted out: {why}"
            return _DEFAULT_FNS[check_id](s.tech, s.results, s.cases)

        return default
    if check_id.startswith("family:") and check_id[len("family:"):] in FAMILY_CHECKS:
        cap = check_id[len("family:"):]

        def family(s: _State) -> str | None:
            why = FAMILY_CHECKS[cap](s.tech, s.results, s.cases)
            if why:
                raise _fail(s.tech, cap, f"capability declared but {why}")
            return None

        return family
    raise ValueError(f"unknown check id {check_id!r}; expected one of the ids check_ids() lists")


@dataclass(frozen=True)
class Outcome:
    """What one isolated check gave: ``status`` (passed, skipped, failed), a one-paragraph
    ``message`` (the skip reason or the failure) and the child's ``traceback`` when it failed."""

    check: str
    status: str
    message: str = ""
    traceback: str = ""
    #: the warning a ``warned`` outcome is re-raised as in the test process: ``KitWarning`` (a
    #: default check's problem), ``DeprecationWarning`` (a contract deprecation: a plugin's import
    #: of a 0.2 module)
    category: str = "KitWarning"
    #: the DeprecationWarnings the check raised (a claim the next minor version refuses), each given
    #: again in the calling process by :func:`run_check` (a forked child's warnings died with it)
    deprecations: tuple[str, ...] = ()


def _warn_only(check_id: str, exc: AssertionError) -> bool:
    """A new default check's problem is a warning until the version it fails from."""
    return check_id in FAILS_FROM and not getattr(exc, "strict", False) and not fails_now(check_id)


def _warning_text(check_id: str, exc: AssertionError) -> str:
    from suite import __version__

    since = _SINCE.get(check_id, "0.2.0")
    fix = (f"fix it, or opt out with kit_opt_out={{{check_id!r}: 'why it does not apply'}}" if check_id in DEFAULT_CHECKS
           else "fix it")
    return f"{exc} [a default check since {since}: it warns in {__version__} and fails from {FAILS_FROM[check_id]}; {fix}]"


#: the version each default check was added in (0.2.0 unless listed)
_SINCE = {"meanings": "0.3.10", "claims-assumptions": "0.3.13"}


def _outcome_of(tech: Technique, check_id: str, max_examples: int, state: _State | None = None) -> Outcome:
    import warnings

    try:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always", DeprecationWarning)
            why = _check_fn(check_id)(state or _State(tech, max_examples))
        deprecated = [str(w.message) for w in seen if issubclass(w.category, DeprecationWarning)]
        for w in seen:  # the others as they came
            if not issubclass(w.category, DeprecationWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    except AssertionError as exc:
        if _warn_only(check_id, exc):
            return Outcome(check_id, "warned", _warning_text(check_id, exc))
        return Outcome(check_id, "failed", str(exc), traceback.format_exc())
    except Exception as exc:  # noqa: BLE001 - a check that errors is a failed check, named
        return Outcome(check_id, "failed", f"{tech.name}: check {check_id!r} raised {type(exc).__name__}: {exc}",
                       traceback.format_exc())
    if deprecated and check_id == "imports":  # the kit's contract deprecation: reported, re-raised by the caller
        return Outcome(check_id, "warned", deprecated[0], category="DeprecationWarning")
    found = tuple(dict.fromkeys(deprecated))  # given again by run_check, in the caller's process
    return Outcome(check_id, "skipped", why, deprecations=found) if why else Outcome(check_id, "passed",
                                                                                     deprecations=found)


class _CheckTimeout(BaseException):
    pass


def _in_process(tech: Technique, check_id: str, max_examples: int, timeout: float | None) -> Outcome:
    use_alarm = bool(timeout) and hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
    if not use_alarm:
        return _outcome_of(tech, check_id, max_examples)

    fired: list[bool] = []

    def on_alarm(signum: int, frame: FrameType | None) -> None:
        fired.append(True)
        raise _CheckTimeout()

    old = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, float(timeout or 0))
    try:
        out = _outcome_of(tech, check_id, max_examples)
        if fired:  # the time-out was raised but swallowed by code that catches BaseException (hypothesis'
            raise _CheckTimeout()  # generation phase, a plugin): still a time-out, never a pass
        return out
    except _CheckTimeout:
        return Outcome(check_id, "failed", f"{tech.name}: check {check_id!r} timed out after {timeout:g} s")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _child(conn: Connection, tech: Technique, check_id: str, max_examples: int) -> None:  # pragma: no cover - child process
    code = 0
    try:
        import faulthandler

        faulthandler.disable()  # a check that aborts is reported by the parent, without a stack dump
        out = _outcome_of(tech, check_id, max_examples)
        conn.send((out.status, out.message, out.traceback, out.category, out.deprecations))
    except BaseException:  # noqa: BLE001
        code = 1
    finally:
        os._exit(code)  # never run the parent's atexit handlers (pytest's, a store's)


def run_check(tech: Technique, check_id: str, *, max_examples: int = 10,
              timeout: float | None = DEFAULT_CHECK_TIMEOUT, isolate: bool = True) -> Outcome:
    """Run one check of *tech* (an id from :func:`check_ids`) and return its :class:`Outcome`.

    Parameters
    ----------
    tech : Technique
    check_id : str
    max_examples : int
        Hypothesis examples of a property check.
    timeout : float or None
        Seconds before the check is stopped and failed (None: no limit).
    isolate : bool
        Run it in a forked child process (POSIX), killed at the time-out, so a check that hangs in
        C code or kills its process fails alone. Without fork (or ``isolate=False``) it runs in
        this process with a ``SIGALRM`` time-out.

    Returns
    -------
    Outcome
        Never raises for a failing check (``status == "failed"``).
    """
    import warnings

    _check_fn(check_id)  # an unknown id is the caller's error, raised here
    _r._resolver()  # load the plugins' profiles and workloads once, here, not in every child
    out = (_in_process(tech, check_id, max_examples, timeout) if not isolate or not hasattr(os, "fork")
           else _forked(tech, check_id, max_examples, timeout))
    for msg in out.deprecations:  # what the next minor version refuses, where the author sees it
        warnings.warn(msg, DeprecationWarning, stacklevel=2)
    return out


def _forked(tech: Technique, check_id: str, max_examples: int, timeout: float | None) -> Outcome:
    """:func:`run_check` in a forked child, killed at *timeout*."""
    import multiprocessing as mp

    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(send, tech, check_id, max_examples), daemon=True)
    proc.start()
    send.close()
    try:
        if recv.poll(timeout):
            try:
                status, message, tb, category, deprecations = recv.recv()
                return Outcome(check_id, status, message, tb, category, deprecations)
            except (EOFError, OSError):
                pass
        else:
            return Outcome(check_id, "failed", f"{tech.name}: check {check_id!r} timed out after {timeout:g} s")
        proc.join(5)
        code = proc.exitcode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit status {code}"
        try:
            how = signal.Signals(-code).name if code is not None and code < 0 else how
        except ValueError:
            pass
        return Outcome(check_id, "failed", f"{tech.name}: check {check_id!r} crashed its process ({how})")
    finally:
        if proc.is_alive():
            proc.kill()
        proc.join(5)
        recv.close()


def run_checks(tech: Technique, *, max_examples: int = 10, properties: bool = True, require_nulls: bool = True,
               timeout: float | None = DEFAULT_CHECK_TIMEOUT, isolate: bool = True) -> CheckReport:
    """Run every check of *tech*, each on its own (:func:`run_check`), and collect the outcomes:
    a failing or hanging check is recorded and the next one runs. Nothing is raised."""
    rep = CheckReport(tech.name)
    for cid in check_ids(tech, properties=properties, require_nulls=require_nulls):
        out = run_check(tech, cid, max_examples=max_examples, timeout=timeout, isolate=isolate)
        if out.status == "passed" and out.deprecations:  # passed today, refused by a later version
            rep.outcomes[cid] = "warned: " + "; ".join(out.deprecations)
        else:
            rep.outcomes[cid] = out.status if out.status == "passed" else f"{out.status}: {out.message}"
    return rep


# ----------------------------------------------------------------------------- pytest


class _Check:
    """The callable a :func:`parametrize_with_checks` item receives: ``check(technique)``."""

    def __init__(self, check_id: str, max_examples: int, timeout: float | None, isolate: bool):
        self.check_id = check_id
        self.max_examples = max_examples
        self.timeout = timeout
        self.isolate = isolate

    def __repr__(self) -> str:
        return self.check_id

    def __call__(self, technique: Technique) -> None:
        import pytest

        out = run_check(technique, self.check_id, max_examples=self.max_examples, timeout=self.timeout,
                        isolate=self.isolate)
        if out.status == "skipped":
            pytest.skip(out.message)
        if out.status == "warned":
            import warnings

            category = DeprecationWarning if out.category == "DeprecationWarning" else KitWarning
            warnings.warn(category(out.message), stacklevel=2)
            return
        if out.status == "failed":
            detail = f"\n\n{out.traceback}" if out.traceback else ""
            raise AssertionError(out.message + detail)


def parametrize_with_checks(techniques: Iterable[Technique], *, max_examples: int = 10,
                            timeout: float | None = DEFAULT_CHECK_TIMEOUT, properties: bool = True,
                            require_nulls: bool = True, isolate: bool = True) -> pytest.MarkDecorator:
    """A ``pytest.mark.parametrize`` of one item per (technique, check), like scikit-learn's.

    Examples
    --------
    ::

        from suite.testing import parametrize_with_checks
        from suite_mytech.technique import TECHNIQUE

        @parametrize_with_checks([TECHNIQUE], timeout=120)
        def test_conformance(technique, check):
            check(technique)

    gives items ``test_conformance[mytech:metadata]``, ``...[mytech:runs-and-metrics]``,
    ``...[mytech:family:bytes-conserved]``, ... Each runs in a forked process killed after
    *timeout* seconds (see :func:`run_check`); a check that does not apply is skipped with its
    reason. ``pytest -k "mytech and not property"`` selects as usual.

    Parameters
    ----------
    techniques : iterable of Technique
    max_examples : int
        Hypothesis examples per property check.
    timeout : float or None
        Per-check time-out in seconds (:data:`DEFAULT_CHECK_TIMEOUT`).
    properties, require_nulls : bool
        Include the property checks / the ``claims-nulls`` check.
    isolate : bool
        Fork a process per check (default); False runs in the test process with SIGALRM.
    """
    import pytest

    params = []
    for tech in techniques:
        if not isinstance(tech, Technique):
            raise TypeError(f"parametrize_with_checks: expected Technique objects, got {type(tech).__name__}")
        for cid in check_ids(tech, properties=properties, require_nulls=require_nulls):
            params.append(pytest.param(tech, _Check(cid, max_examples, timeout, isolate), id=f"{tech.name}:{cid}"))
    return pytest.mark.parametrize("technique, check", params)


# ----------------------------------------------------------------------------- everything, in order


def check_technique(tech: Technique, *, max_examples: int = 10, properties: bool = True,
                    require_nulls: bool = True) -> CheckReport:
    """Run every conformance check on *tech* in this process, raising the first failure.

    Parameters
    ----------
    tech : Technique
    max_examples : int
        Hypothesis examples per declared property.
    properties : bool
        Whether to run the declared properties (the slowest part).
    require_nulls : bool
        Whether to run ``claims-nulls`` (every claim declares null predictions or a
        ``null_reason``).

    Returns
    -------
    CheckReport
        Outcomes per check ("passed" or "skipped: reason"); ``properties`` summarises the
        ``property:NAME`` checks, and undeclared capabilities are listed as skipped.

    Raises
    ------
    AssertionError
        The first failing check, named, with the case that failed.
    """
    rep = CheckReport(tech.name)
    state = _State(tech, max_examples)
    for cid in check_ids(tech, properties=False, require_nulls=require_nulls):
        if cid.startswith("family:") or cid in DEFAULT_CHECKS:
            continue  # after the properties, below
        if cid in FAILS_FROM:  # a new check: warns until the version it fails from
            _record_in_order(tech, cid, max_examples, state, rep)
            continue
        why = _check_fn(cid)(state)
        rep.outcomes[cid] = f"skipped: {why}" if why else "passed"
    if not require_nulls:
        rep.outcomes["claims-nulls"] = "skipped: disabled by caller"
    if properties:
        why = check_properties(tech, max_examples)
        rep.outcomes["properties"] = f"skipped: {why}" if why else "passed"
    else:
        rep.outcomes["properties"] = "skipped: disabled by caller"
    for cap in FAMILY_CHECKS:
        if cap not in tech.capabilities:
            rep.outcomes[f"family:{cap}"] = "skipped: capability not declared"
            continue
        why = _check_fn(f"family:{cap}")(state)
        rep.outcomes[f"family:{cap}"] = f"skipped: {why}" if why else "passed"
    for cid in DEFAULT_CHECKS:
        if _applies(tech, cid):
            _record_in_order(tech, cid, max_examples, state, rep)
    return rep


def _record_in_order(tech: Technique, cid: str, max_examples: int, state: _State, rep: CheckReport) -> None:
    """:func:`check_technique`'s run of a check that warns before it fails: its outcome into *rep*,
    a warning given as a :class:`KitWarning`, a failure raised."""
    out = _outcome_of(tech, cid, max_examples, state)
    if out.status == "failed":
        raise AssertionError(out.message)
    if out.status == "warned":
        import warnings

        warnings.warn(KitWarning(out.message), stacklevel=3)
    rep.outcomes[cid] = out.status if out.status == "passed" else f"{out.status}: {out.message}"
