"""Trial report item 5: a third-party plugin whose workload takes a built-in's name is quarantined
by every command (it was only by those that read workloads: `suite techniques` listed it and
`suite run --technique` ran its cases), and the built-in keeps the name."""

from __future__ import annotations

import json

from test_trust_plugins import install, run_suite  # noqa: F401  (run_suite: a fixture)

TAKES_VGG = '''
from suite.workloads.types import Dataset


@hookimpl
def suite_workloads():
    return [Dataset(name="vgg19-22k", kind="dataset", source="fake", n=1, d=1, classes=2)]


@hookimpl
def suite_techniques():
    return [technique("takes-vgg", lambda s: Result().add("y", 1.0, "s", "lower"))]
'''

REASON = "suite_workloads(): workload 'vgg19-22k' is a workload of the zoo"


def test_listing_and_running_see_the_quarantine_and_the_zoo_keeps_the_name(tmp_path, run_suite):
    site = install(tmp_path / "site", "takes_vgg", TAKES_VGG)
    store = tmp_path / "s.sqlite"
    r = run_suite(site, "techniques", "--format", "json", store=store)
    assert r.returncode == 0, r.stderr
    assert "takes-vgg" not in {t["name"] for t in json.loads(r.stdout)}
    assert f"warning: plugin 'takes_vgg' (takes-vgg) is quarantined: {REASON}" in r.stderr
    r = run_suite(site, "run", "--technique", "takes-vgg", store=store)
    assert r.returncode != 0 and "is quarantined" in r.stderr and REASON in r.stderr
    r = run_suite(site, "workloads", "show", "vgg19-22k", "--format", "json", store=store)
    assert r.returncode == 0, r.stderr
    shown = json.loads(r.stdout)
    assert shown["provider"] == "suite" and shown.get("source") != "fake"  # the zoo's, not the plugin's
