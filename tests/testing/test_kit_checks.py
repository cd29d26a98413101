"""The conformance kit, issue 16 item 7 and issue 18's kit item: one pytest item per check with a
time-out (a failing, crashing or hanging check fails alone), unknown capabilities are errors, and
a claim without null predictions or a written reason fails ``claims-nulls``."""

from __future__ import annotations

import ctypes
import os
import signal
import subprocess
import sys
import textwrap
import warnings

import pytest

from suite import Claim, Exact, Gain, Null, Paper, Param, Property, Result, ScenarioSpec, Technique, Variant
from suite.errors import TechniqueError
from suite.testing import check_ids, check_technique, parametrize_with_checks, run_check, run_checks


def _model(s):
    n = s.params["n"]
    return (Result().add("t", (2.0 if s.variant == "base" else 1.0) / n, "s", "lower")
            .add("bytes_sent", 10.0 * n, "B").add("bytes_received", 10.0 * n, "B"))


def _speedup(results):
    return results["base"]["t"] / results["fast"]["t"]


def _hang(tech, scenario):
    """A property stuck in C with its signals blocked: only a kill from outside stops it."""
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGINT, signal.SIGTERM})
    ctypes.CDLL(None).sleep(60)


def _abort(tech, scenario):
    os.abort()


def _never(tech, scenario):
    raise AssertionError("invariant broken")


SPECS = {"base": ScenarioSpec("base", params={"n": 4}), "fast": ScenarioSpec("fast", params={"n": 4})}


def _claim(**kw):
    base = dict(id="2x", statement="fast is 2x base", source="Table 1", verified=False, expect=Gain(2.0),
                cases=SPECS, derive=_speedup)
    base.update(kw)
    return Claim(**base)


def _tech(**kw):
    base = dict(
        name="kit-checks", title="Demo", category="communication",
        paper=Paper("A paper", ("A. Author",), "Venue", 2020),
        variants=[Variant("base", "the baseline", baseline=True), Variant("fast", "the method"),
                  Variant("other", "another baseline", baseline=True)],
        fidelities={"model": _model},
        parameters={"n": Param(int, 2, minimum=1, maximum=64)},
        needs_profile=False, needs_workload=False,
        smoke=[ScenarioSpec("base", params={"n": 4})],
        capabilities=frozenset({"bytes-conserved"}),
        claims=[_claim(nulls=(Null("baseline for the method", variants={"fast": "other"}), Null("no gain", value=1.0)))],
    )
    base.update(kw)
    return Technique(**base)


GOOD = _tech()

# --------------------------------------------------------------------------- the kit, used as intended


@parametrize_with_checks([GOOD], timeout=60)
def test_good_technique_conforms(technique, check):
    check(technique)


def test_one_item_per_check_with_readable_ids():
    mark = parametrize_with_checks([GOOD, _tech(name="kit-two", capabilities=frozenset())])
    ids = [p.id for p in mark.args[1]]
    assert ids == ["kit-checks:metadata", "kit-checks:imports", "kit-checks:parameters",
                   "kit-checks:runs-and-metrics", "kit-checks:determinism", "kit-checks:claims-resolve",
                   "kit-checks:claims-assumptions", "kit-checks:claims-nulls", "kit-checks:family:bytes-conserved",
                   "kit-two:metadata", "kit-two:imports", "kit-two:parameters", "kit-two:runs-and-metrics",
                   "kit-two:determinism", "kit-two:claims-resolve", "kit-two:claims-assumptions",
                   "kit-two:claims-nulls"]
    props = _tech(properties=[Property("p1", "x", _never), Property("p2", "y", _never)])
    assert check_ids(props)[-3:] == ["property:p1", "property:p2", "family:bytes-conserved"]
    assert "claims-nulls" not in check_ids(props, require_nulls=False)
    with pytest.raises(TypeError, match="expected Technique objects, got str"):
        parametrize_with_checks(["poseidon"])


def test_crashing_and_failing_checks_each_fail_alone():
    tech = _tech(properties=[Property("aborts", "kills its process", _abort),
                             Property("fails", "an invariant that does not hold", _never)])
    rep = run_checks(tech, max_examples=2)
    assert rep.failed == {
        "property:aborts": "kit-checks: check 'property:aborts' crashed its process (SIGABRT)",
        "property:fails": "kit-checks: check 'property fails' failed: invariant broken (scenario base model, profile None, "
                          "params {'n': 4})",
    }
    assert set(rep.passed) == {"metadata", "parameters", "runs-and-metrics", "determinism", "claims-resolve",
                               "claims-assumptions", "claims-nulls", "family:bytes-conserved"}


def test_check_hanging_in_c_is_killed_at_its_time_out():
    # the check can only end by the time-out, whatever the load: a short one is as safe as a long one
    out = run_check(_tech(properties=[Property("hangs", "stuck in C", _hang)]), "property:hangs", timeout=0.5,
                    max_examples=1)
    assert (out.status, out.message) == ("failed", "kit-checks: check 'property:hangs' timed out after 0.5 s")


def test_in_process_check_times_out_with_sigalrm():
    def slow(tech, scenario):
        import time

        time.sleep(30)

    out = run_check(_tech(properties=[Property("slow", "sleeps", slow)]), "property:slow", timeout=0.5,
                    isolate=False, max_examples=1)
    assert (out.status, out.message) == ("failed", "kit-checks: check 'property:slow' timed out after 0.5 s")


def _allreduce_model(s):
    """comm_time of one 100 MB all-reduce over n nodes of the profile, priced by the network model."""
    from suite.perf.network import collective_time, group_of

    t = collective_time("allreduce", 100e6, group_of(s.profile, s.params["n"]), s.profile).time
    return Result().add("comm_time", t, "s", "lower").add("iteration_time", 0.1 + t, "s", "lower")


def _deaf_model(s):
    """Reports a communication time that no network level can change."""
    return Result().add("comm_time", 0.05, "s", "lower").add("iteration_time", 0.15, "s", "lower")


def _net_tech(fn):
    return _tech(fidelities={"model": fn}, needs_profile=True, default_profile="titanx-cluster-10gbe",
                 profile_kinds=("cluster",), capabilities=frozenset({"network-sensitivity"}), claims=[],
                 smoke=[ScenarioSpec("base", params={"n": 4})])


def test_network_sensitivity_family():
    assert run_check(_net_tech(_allreduce_model), "family:network-sensitivity", timeout=60).status == "passed"
    out = run_check(_net_tech(_deaf_model), "family:network-sensitivity", timeout=60)
    assert out.status == "failed"
    assert "comm_time = 0.05 s but no collective was priced through suite.perf.collective_time" in out.message
    out = run_check(_tech(capabilities=frozenset({"network-sensitivity"})), "family:network-sensitivity",
                    timeout=60)  # declared, but no smoke case has a network to slow down
    assert out.status == "failed" and "no model smoke case on a profile with a network" in out.message


def test_unknown_check_id_is_the_callers_error():
    with pytest.raises(ValueError, match="unknown check id 'family:no-such'"):
        run_check(GOOD, "family:no-such")


PYTEST_FILE = '''
import signal, ctypes
from suite import Property
from suite.testing import parametrize_with_checks
import test_kit_checks as K

def hang(tech, scenario):
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM, signal.SIGINT, signal.SIGTERM})
    ctypes.CDLL(None).sleep(60)

T = K._tech(properties=[Property("hangs", "stuck", hang), Property("fails", "broken", K._never)])

@parametrize_with_checks([T], timeout=5, max_examples=2)
def test_checks(technique, check):
    check(technique)
'''


@pytest.mark.slow
def test_pytest_items_a_hang_does_not_hide_the_rest(tmp_path):
    """Run as pytest runs a plugin author's suite: 2 items fail (one by time-out), 8 pass, 1 skips."""
    f = tmp_path / "test_author.py"
    f.write_text(textwrap.dedent(PYTEST_FILE))
    env = dict(os.environ)
    here = os.path.dirname(__file__)
    env["PYTHONPATH"] = os.pathsep.join([here] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        str(f), "-rf"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert "2 failed, 8 passed" in r.stdout, r.stdout[-3000:]
    assert "FAILED test_author.py::test_checks[kit-checks:property:hangs]" in r.stdout
    assert "timed out after 5 s" in r.stdout
    assert "FAILED test_author.py::test_checks[kit-checks:property:fails]" in r.stdout


# --------------------------------------------------------------------------- check_technique (existing callers)


def test_check_technique_keeps_its_report_shape():
    rep = check_technique(GOOD, max_examples=2)
    assert {"metadata", "parameters", "runs-and-metrics", "determinism", "claims-resolve", "claims-nulls",
            "family:bytes-conserved"} <= set(rep.passed)
    assert rep.skipped["properties"] == "no declared properties"
    assert rep.skipped["family:sgd-envelope"] == "capability not declared"
    rep = check_technique(_tech(claims=[_claim()]), require_nulls=False)
    assert rep.skipped["claims-nulls"] == "disabled by caller"


def test_negative_time_metric_fails_runs_and_metrics():
    def negative(s):
        return Result().add("t", -1.0, "s", "lower")

    with pytest.raises(AssertionError, match=r"check 'metrics' failed: .*metric 't' is -1 s: expected >= 0"):
        check_technique(_tech(fidelities={"model": negative}, capabilities=frozenset(), claims=[]))


# --------------------------------------------------------------------------- capabilities


def test_unknown_capability_is_an_error_not_a_skipped_check():
    with pytest.raises(TechniqueError, match=r"technique 'kit-checks': capabilities: expected names from "
                                             r"\[.*'bytes-conserved'.*\], got unknown 'bytes-conserve'"):
        _tech(capabilities=frozenset({"bytes-conserve"}))  # a typo used to skip its check silently


def test_capability_names_are_the_family_checks():
    from suite.technique import CAPABILITIES
    from suite.testing import FAMILY_CHECKS

    assert sorted(CAPABILITIES) == sorted(FAMILY_CHECKS)


# --------------------------------------------------------------------------- claims-nulls


@pytest.mark.parametrize("claim, message", [
    (_claim(), "claim '2x' declares neither `nulls`"),
    (_claim(null_reason="   "), "claim '2x' declares neither `nulls`"),
    (_claim(nulls=(Null("typo", variants={"fast": "othr"}),)),
     "claim '2x': null 'typo': expected a variant of kit-checks (base, fast, other) to substitute, got 'othr'"),
    (_claim(nulls=(Null("unused", variants={"other": "base"}),)),
     "claim '2x': null 'unused': expected to replace a variant the claim uses (base, fast), got 'other'"),
    (_claim(nulls=(Null("same", variants={"fast": "fast"}),)), "claim '2x': null 'same' changes no scenario"),
])
def test_claim_without_a_usable_null_fails(claim, message):
    import warnings

    with warnings.catch_warnings():  # a null naming no variant also warns when declared (tests/test_claim_contract.py)
        warnings.simplefilter("ignore", DeprecationWarning)
        tech = _tech(claims=[claim])
    with pytest.raises(AssertionError, match="check 'claims-nulls' failed: " + message.replace("(", r"\(")
                       .replace(")", r"\)").replace("[", r"\[")):
        check_technique(tech, properties=False)
    out = run_check(tech, "claims-nulls", isolate=False)
    assert out.status == "failed" and message in out.message


def test_claim_with_a_written_null_reason_passes_with_a_warning():
    """Issue 42: the kit applies reproduce's rule, a written reason is not a computed null; it
    warns for one minor version before it fails."""
    tech = _tech(claims=[Claim("count", "a count", "Table 2", False, Exact(4), scenario=ScenarioSpec("base"),
                               metric="t", null_reason="an exact count: no trivial predictor gives it")])
    with pytest.warns(FutureWarning, match=r"kit-checks: claims-nulls: claim\(s\) 'count' declare no computed null") as w:
        assert run_check(tech, "claims-nulls", isolate=False).status == "passed"
    # it passes, as 0.3.11 still does: the warning no longer promises a failure "from 0.3" that never came
    assert str(w[0].message).endswith("'reproduced (no null)' at best, counted apart (docs/verdicts.md, Nulls)")


def test_a_no_gain_null_under_a_gain_band_warns_and_a_variant_null_does_not():
    import warnings

    from suite import Gain
    from suite.testing.check import check_claims_nulls

    nogain = _claim(nulls=(Null("no gain", value=1.0),))
    with pytest.warns(FutureWarning, match="'2x' declare no computed null"):
        check_claims_nulls(_tech(claims=[nogain]))
    assert nogain.expect == Gain(2.0) and nogain.expect.excludes(1.0)
    # a constant nan lands in no band either (suite reproduce: an error, hostile tryout F2)
    with pytest.warns(FutureWarning, match="'2x' declare no computed null"):
        check_claims_nulls(_tech(claims=[_claim(nulls=(Null("nan", value=float("nan")),))]))
    good = _claim(nulls=(Null("other for fast", variants={"fast": "other"}),))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_claims_nulls(_tech(claims=[good]))
    # the baseline in the method's place of a claim on base / fast runs base's own scenario: a ratio of
    # exactly 1 whatever the model (research14 #2), no more a computed null than "no gain" is
    itself = _claim(nulls=(Null("base for fast", variants={"fast": "base"}),))
    with pytest.warns(FutureWarning, match="'2x' declare no computed null"):
        check_claims_nulls(_tech(claims=[itself]))


def test_a_constant_null_outside_the_declared_domain_warns_as_no_computed_null():
    """tryout11 #4: the kit applies reproduce's rule (one function): a chance level of 1.5 is no
    accuracy, so a claim whose only null it is has no null that could land in its band."""
    import warnings

    from suite import Approx
    from suite.testing.check import check_claims_nulls

    def acc(value):
        return _claim(id="acc", expect=Approx(0.9, rel=0.05), domain=(0.0, 1.0), nulls=(Null("chance", value=value),))

    with pytest.warns(FutureWarning, match="'acc' declare no computed null"):
        check_claims_nulls(_tech(claims=[acc(1.5)]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_claims_nulls(_tech(claims=[acc(0.5)]))


def test_imports_check_fails_a_plugin_package_importing_the_runner(tmp_path, monkeypatch):
    """docs/plugin-authors.md section 8 holds for third-party plugins too: the kit's `imports` check
    reads the plugin package's source (a trial plugin imported suite.runner and suite.registry and
    loaded `ok`)."""
    import importlib

    from suite.testing.check import check_imports

    pkg = tmp_path / "suite_importer"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "technique.py").write_text(
        "from suite import Paper, Result, Technique, Variant\n\n\n"
        "def evaluate(scenario):\n"
        "    from suite.runner.case import resolve_case  # noqa: F401 - forbidden in plugin code\n"
        "    return Result().add('y', 1.0, 's', 'lower')\n\n\n"
        "TECHNIQUE = Technique(name='importer', title='t', category='communication', paper=Paper(title='p'),\n"
        "                      variants=[Variant('v', 'd', baseline=True)], fidelities={'model': evaluate},\n"
        "                      needs_profile=False, needs_workload=False)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    tech = importlib.import_module("suite_importer.technique").TECHNIQUE
    with pytest.raises(AssertionError, match=r"technique.py:5: imports suite.runner.case"):
        check_imports(tech)
    assert check_imports(GOOD) is not None  # defined in this test module: skipped with its reason


def _trial_plugin(tmp_path, monkeypatch, name, technique_imports, extra_files=None):
    """A plugin package *name* whose technique.py starts with *technique_imports*."""
    import importlib

    pkg = tmp_path / name
    (pkg / "tests").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    for rel, text in (extra_files or {}).items():
        (pkg / rel).write_text(text)
    (pkg / "technique.py").write_text(
        technique_imports + "\n\n\n"
        "def evaluate(scenario):\n"
        "    return Result().add('y', 1.0, 's', 'lower')\n\n\n"
        f"TECHNIQUE = Technique(name='{name.removeprefix('suite_').replace('_', '-')}', title='t', "
        "category='communication', paper=Paper(title='p'),\n"
        "                      variants=[Variant('v', 'd', baseline=True)], fidelities={'model': evaluate},\n"
        "                      needs_profile=False, needs_workload=False)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return importlib.import_module(f"{name}.technique").TECHNIQUE


def test_imports_check_passes_a_plugin_that_imports_only_suite_api(tmp_path, monkeypatch):
    """suite.api in plugin code, suite.testing in the plugin's tests: no warning, no failure."""
    from suite.testing.check import check_imports

    tech = _trial_plugin(tmp_path, monkeypatch, "suite_api_only",
                         "from suite.api import Paper, Result, Technique, Variant",
                         {"tests/test_it.py": "from suite.api import Skip\nfrom suite.testing import check_technique\n"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check_imports(tech) is None
        assert check_imports(tech, version="0.4.0") is None


def test_imports_check_warns_on_a_02_public_module_in_030_and_fails_in_040(tmp_path, monkeypatch):
    """``from suite import ...`` (the 0.2 way) is deprecated for plugin code: a DeprecationWarning
    naming suite.api and 0.4.0 now, the kit's failure from 0.4.0."""
    from suite.testing.check import check_imports

    tech = _trial_plugin(tmp_path, monkeypatch, "suite_old_style", "from suite import Paper, Result, Technique, Variant")
    with pytest.warns(DeprecationWarning, match=r"technique.py:1: imports suite: plugin code imports from the "
                                                r"suite only suite.api .* removed in 0.4.0"):
        assert check_imports(tech, version="0.3.0") is None
    with pytest.raises(AssertionError, match=r"check 'imports' failed: technique.py:1: imports suite: .*suite.api"):
        check_imports(tech, version="0.4.0")


def test_suite_testing_is_for_a_plugins_tests_only(tmp_path, monkeypatch):
    from suite.testing.check import check_imports

    tech = _trial_plugin(tmp_path, monkeypatch, "suite_kit_in_code",
                         "from suite.api import Paper, Result, Technique, Variant\nfrom suite.testing import run_checks")
    with pytest.raises(AssertionError, match=r"technique.py:2: imports suite.testing \(plugin code may import "
                                             r"only suite.api\)"):
        check_imports(tech)


def test_an_isolated_imports_check_reports_the_deprecation_to_the_test_process(tmp_path, monkeypatch):
    """A check run in a forked child (parametrize_with_checks' default) cannot warn the test
    process itself: its outcome is ``warned`` with the category, and the pytest item re-raises
    it as a DeprecationWarning naming suite.api."""
    from suite.testing.check import _Check, run_check

    tech = _trial_plugin(tmp_path, monkeypatch, "suite_old_isolated", "from suite import Paper, Result, Technique, Variant")
    out = run_check(tech, "imports", isolate=True, timeout=60)
    assert (out.status, out.category) == ("warned", "DeprecationWarning"), out
    assert "suite.api" in out.message and "0.4.0" in out.message
    with pytest.warns(DeprecationWarning, match=r"imports suite: plugin code imports from the suite only suite.api"):
        _Check("imports", 5, 60, True)(tech)


# --------------------------------------------------------------------------- setup unknown names its assumption


def test_a_setup_unknown_claim_without_an_assumption_warns_until_0_4_0():
    """Audit 11b B15: 13 'setup unknown' claims declared no Assumption, so the scoreboard showed no flip for the
    setting their reason names. The kit's claims check warns (DeprecationWarning, refused from 0.4.0), naming
    the claim; a declared assumption, or another class, passes silently."""
    from suite import Assumption

    nulls = (Null("base for fast", variants={"fast": "base"}),)
    bare = _claim(nulls=nulls, reason_class="setup unknown", reason="the cluster's network is not stated")
    warning = (r"kit-checks: claims: claim\(s\) '2x' give reason class 'setup unknown' but declare no "
               r"Assumption.*refused from dlsys-suite 0\.4\.0")
    with pytest.warns(DeprecationWarning, match=warning):
        assert run_check(_tech(claims=[bare]), "claims-resolve", isolate=False).status == "passed"
    # in a forked check (every scaffolded plugin's kit), the warning died with the child: passed, silent
    with pytest.warns(DeprecationWarning, match=warning):
        assert run_check(_tech(claims=[bare]), "claims-resolve").status == "passed"
    with pytest.warns(DeprecationWarning, match=warning):
        rep = run_checks(_tech(claims=[bare]))
    assert "give reason class 'setup unknown'" in rep.warned["claims-resolve"]
    declared = _claim(nulls=nulls, reason_class="setup unknown", reason="the cluster's network is not stated",
                      assumptions=(Assumption("link bandwidth (GB/s)", 1.25, flip_at=12.5),))
    other = _claim(nulls=nulls, reason_class="missing mechanism", reason="no overlap is modelled")
    for claim in (declared, other):
        with warnings.catch_warnings():
            warnings.simplefilter("error", DeprecationWarning)
            assert run_check(_tech(claims=[claim]), "claims-resolve", isolate=False).status == "passed"


# --------------------------------------------------------------------------- assumptions stated


def _assuming(*assumptions):
    nulls = (Null("baseline for the method", variants={"fast": "other"}), Null("no gain", value=1.0))
    return _tech(claims=[_claim(nulls=nulls, assumptions=assumptions)])


def test_an_assumption_without_a_value_or_with_nan_or_named_twice_warns_until_0_4_0(monkeypatch):
    """hostile15 finding 5: `Assumption("nic-bandwidth", None, flip_at=0.0)`, `nan` values and one name
    twice passed every check, and the scoreboard printed "nic-bandwidth =  (...)" and "flips at nan".
    The kit's claims-assumptions check warns (KitWarning, a FutureWarning, failing from 0.4.0), naming
    the claim and the assumption; a stated one passes silently."""
    import suite._version
    from suite import Assumption
    from suite.deprecation import KitWarning

    bad = {
        "assumption 'nic-bandwidth': expected the value the model uses, got None (the scoreboard printed it empty)":
            (Assumption("nic-bandwidth", None, flip_at=0.0),),
        "assumption 'nic': expected the value the model uses, got '' (the scoreboard printed it empty)":
            (Assumption("nic", "", flip_at=1.0),),
        "assumption 'nic-eff': expected the value the model uses, got nan": (Assumption("nic-eff", float("nan")),),
        "assumption 'nic-eff': flip_at: expected the value at which the verdict flips, or None (no flip found), got nan":
            (Assumption("nic-eff", 0.8, flip_at=float("nan")),),
        "assumption 'bw': expected each assumption named once within its claim, got this name twice":
            (Assumption("bw", 1.0, flip_at=2.0), Assumption("bw", 3.0)),
        # review of 0.3.13: an empty flip_at printed "flips at  (to reproduced)" and took the dagger
        "assumption 'bw': flip_at: expected the value at which the verdict flips, or None (no flip found), got ''":
            (Assumption("bw", 10, flip_at="", flips_to="reproduced"),),
    }
    for problem, assumptions in bad.items():
        out = run_check(_assuming(*assumptions), "claims-assumptions", isolate=False)
        assert (out.status, out.message) == ("warned", f"kit-checks: check 'claims-assumptions' failed: claim '2x': "
                                             f"{problem} [a default check since 0.3.13: it warns in "
                                             f"{suite.__version__} and fails from 0.4.0; fix it]")
    twice = _assuming(*bad["assumption 'bw': expected each assumption named once within its claim, got this name twice"])
    with pytest.warns(KitWarning, match="got this name twice"):  # check_technique warns and carries on
        assert check_technique(twice, properties=False).warned["claims-assumptions"].startswith("kit-checks: check")
    assert issubclass(KitWarning, FutureWarning)
    stated = _assuming(Assumption("bw", 1.25, flip_at=12.5, flips_to="reproduced"), Assumption("eff", 0.8))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run_check(stated, "claims-assumptions").status == "passed"  # forked, as a plugin's kit runs it
    monkeypatch.setattr(suite._version, "__version__", "0.4.0")
    assert run_check(twice, "claims-assumptions", isolate=False).status == "failed"
