"""`suite workloads list|show`, and workloads contributed by plugins (with name clashes)."""

from __future__ import annotations

import csv
import io
import json
import types

import pytest

import suite.workloads as W
from suite.errors import WorkloadError
from suite.hookspecs import hookimpl
from suite.context import Context
from suite.workloads.cnn import CNNBuilder

from plugin_context import plugin_context


def _context(*modules) -> Context:
    return plugin_context(*modules)


def _plugin_module(name: str, workload_name: str):
    b = CNNBuilder(workload_name, (1, 4, 4))
    b.fc(b.input, 3)
    table = b.build(source="test plugin")
    mod = types.ModuleType(name)

    @hookimpl
    def suite_workloads():
        return [table]

    mod.suite_workloads = suite_workloads
    return mod


def test_a_plugin_adds_a_workload():
    ctx = _context(("toyplug", _plugin_module("toyplug", "toy-net")))
    wl = ctx.workload("toy-net")
    assert wl.params == 16 * 3 + 3
    assert "toyplug" in ctx.workloads.provider("toy-net")
    assert "toy-net" in ctx.workloads.names()
    # one context's plugins never leak into another context, nor into the zoo
    assert "toy-net" not in _context().workloads.names() and "toy-net" not in W.list_workloads()


def test_a_plugin_clashing_with_a_builtin_is_quarantined_and_the_zoo_keeps_the_name():
    """A plugin workload named like a zoo one quarantines its plugin (one line naming it): the
    zoo's vgg19 stays what `--workload vgg19` means, and the rest of the library works."""
    ctx = _context(("clash", _plugin_module("clash", "vgg19")))
    (info,) = [p for p in ctx.registry.plugins if p.name == "clash"]
    assert info.status == "ok"  # workload hooks are called the first time plugin workloads are needed
    assert ctx.workload("vgg16").name == "vgg16" and info.status == "ok"  # a zoo name needs none
    assert "vgg16" in ctx.workloads.names()  # every name: the hooks are called
    assert info.status == "quarantined"
    assert "workload 'vgg19' is a workload of the zoo" in info.reason
    assert ctx.workload("vgg19").source != "test plugin" and ctx.workload("vgg19").params > 1e8
    assert ctx.workload("vgg16").name == "vgg16"


def test_cli_list_json_and_kind_filter(suite_cli):
    # suite_cli: the session's context (plugin workloads are tested above with contexts of their own)
    r = suite_cli(["workloads", "list", "--format", "json", "--kind", "transformer"])
    assert r.exit_code == 0, r.output
    rows = json.loads(r.output)
    names = {row["name"] for row in rows}
    assert {"gpt3-175b", "llama3-405b", "bert-base"} <= names
    assert all(row["kind"] == "transformer" for row in rows)
    r = suite_cli(["workloads", "list", "--format", "csv"])
    assert r.exit_code == 0
    names = {row["name"] for row in csv.DictReader(io.StringIO(r.output))}
    assert {"vgg19", "vgg19-22k", "googlenet", "inception-v3", "resnet-152", "resnet-1001", "digits",
            "dcgan-generator", "densenet-121"} <= names


def test_cli_show_totals_and_layers(suite_cli):
    r = suite_cli(["workloads", "show", "resnet-50", "--format", "json"])
    assert r.exit_code == 0, r.output
    info = json.loads(r.output)
    assert info["params"] == 25_557_032 and info["layers"] == 174
    r = suite_cli(["workloads", "show", "vgg16", "--layers", "--format", "csv"])
    assert r.exit_code == 0
    rows = list(csv.DictReader(io.StringIO(r.output)))
    assert sum(int(row["params"]) for row in rows) == 138_357_544
    assert rows[-1]["grad_shape"] == "1000x4096"
    r = suite_cli(["workloads", "show", "resnet-2500", "--layers", "--format", "json"])
    assert r.exit_code == 0 and len(json.loads(r.output)) > 8000


def test_cli_errors_are_one_line(suite_cli):
    r = suite_cli(["workloads", "show", "resnet-77"])
    assert r.exit_code == 2
    assert r.output.strip().startswith("error: resnet-77") and len(r.output.strip().splitlines()) == 1
    r = suite_cli(["workloads", "show", "moons", "--layers"])
    assert r.exit_code == 2 and "no layers" in r.output


def test_a_misspelled_workload_suggests_the_name_it_spells_without_punctuation():
    """`vgg-19` is vgg19 with a hyphen: the hint is vgg19, not a plugin workload that merely
    contains "vgg" (a tryout was offered mixed-td-repvgg-a0), even when that plugin is loaded."""
    ctx = _context(("toyplug", _plugin_module("toyplug", "toy-repvgg-a0")))
    for typo, meant in [("vgg-19", "vgg19"), ("VGG19", "vgg19"), ("resnet50", "resnet-50"), ("toy_repvgg_a0", "toy-repvgg-a0")]:
        with pytest.raises(WorkloadError) as err:
            ctx.workload(typo)
        assert str(err.value) == f"unknown workload {typo!r}; did you mean {meant}?"


def test_close_names_compares_without_case_and_punctuation():
    from suite.errors import close_names, did_you_mean

    assert close_names("vgg-19", ["mixed-td-repvgg-a0", "vgg16", "vgg19"]) == ["vgg19"]
    assert close_names("MG_WFBP", ["mg-wfbp", "poseidon"]) == ["mg-wfbp"]
    assert close_names("swep", ["sweep", "papers"]) == ["sweep"]  # difflib on the bare forms: 0.89
    assert close_names("zzz", ["sweep", "papers"]) == []
    assert did_you_mean("vgg-19", ["vgg16", "vgg19"]) == "; did you mean 'vgg19'?"
