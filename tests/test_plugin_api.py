"""The plugin API, ``suite.api``: one module, every name documented on one page.

Like datasette's documentation tests: every hook in suite/hookspecs.py and every name in
``suite.api.__all__`` has its section in docs/plugin-api.md (a heading, a signature or a
description, and an example), and the page documents nothing else. The module itself stays
cheap to import (the declaration modules of every plugin import it) and each lazily exported
name is the object of the module it comes from.
"""

from __future__ import annotations

import importlib
import inspect
import re
import subprocess
import sys
import types
from pathlib import Path

import pytest

import suite.api as api
import suite.hookspecs as hookspecs

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "plugin-api.md"


def _sections() -> dict[str, dict[str, str]]:
    """``## part`` -> ``### `name``` -> the section's text."""
    text = PAGE.read_text(encoding="utf-8")
    out: dict[str, dict[str, str]] = {}
    for part in re.split(r"^## ", text, flags=re.M)[1:]:
        title, _, body = part.partition("\n")
        names = re.split(r"^### `([^`]+)`\n", body, flags=re.M)
        out[title.strip()] = dict(zip(names[1::2], names[2::2]))
    return out


def _hooks() -> list[str]:
    return sorted(n for n, f in vars(hookspecs).items() if n.startswith("suite_") and callable(f)
                  and hasattr(f, "suite_spec"))


def test_every_hook_and_only_the_hooks_are_documented():
    documented = set(_sections()["Hooks"])
    assert _hooks(), "no hookspec found in suite/hookspecs.py"
    assert documented == set(_hooks()), (f"docs/plugin-api.md, ## Hooks: missing {sorted(set(_hooks()) - documented)}, "
                                         f"not a hook {sorted(documented - set(_hooks()))}")


def test_every_exported_name_and_only_those_are_documented():
    documented = [n for title, sec in _sections().items() if title != "Hooks" for n in sec]
    dup = sorted({n for n in documented if documented.count(n) > 1})
    assert not dup, f"docs/plugin-api.md documents these twice: {dup}"
    missing, extra = sorted(set(api.__all__) - set(documented)), sorted(set(documented) - set(api.__all__))
    assert not missing and not extra, (f"docs/plugin-api.md and suite.api.__all__ disagree: undocumented {missing}, "
                                       f"documented but not exported {extra}")


@pytest.mark.parametrize("name", sorted(set(api.__all__) | set(_hooks())))
def test_each_entry_has_an_example(name):
    body = next(sec[name] for sec in _sections().values() if name in sec)
    blocks = re.findall(r"```python\n(.*?)```", body, re.S)
    assert blocks, f"docs/plugin-api.md: `{name}` has no ```python example"
    described = re.sub(r"```.*?```", "", body, flags=re.S).strip()
    assert len(described) > 40, f"docs/plugin-api.md: `{name}` says too little ({described!r})"


def test_every_hook_entry_names_its_errors():
    for name, body in _sections()["Hooks"].items():
        assert "**Returns**" in body and "**Errors**" in body, f"docs/plugin-api.md: hook `{name}`: returns, errors"


def _top_level_split(text: str) -> list[str]:
    """*text* split at the commas outside brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [p.strip() for p in [*parts, cur] if p.strip()]


def test_the_signatures_on_the_page_are_the_code_s():
    """A function's or class's parameters, as the page shows them, are those of the code."""
    for sec in _sections().values():
        for name, body in sec.items():
            obj = getattr(api, name, None)
            first = re.match(r"\s*```python\n(\w+)\(\n?(.*?)\)(?: ->[^\n]*)?\n```", body, re.S)
            if obj is None or first is None or first.group(1) != name:
                continue
            shown = [re.split(r"[:=]", p)[0].strip().lstrip("*") for p in _top_level_split(first.group(2))]
            try:
                real = [p for p in inspect.signature(obj).parameters]
            except (TypeError, ValueError):
                continue
            assert [s for s in shown if s] == real, (f"docs/plugin-api.md: `{name}` shows {shown}, the code has {real}: "
                                                     f"the signature is {name}{inspect.signature(obj)}")


def test_every_lazy_name_is_its_modules_object():
    for name in api.__all__:
        obj = getattr(api, name)
        module = api._LAZY.get(name)
        if module is None:
            continue
        source = importlib.import_module(module)
        assert obj is (source if name in api._MODULES else getattr(source, name)), name
        assert isinstance(obj, types.ModuleType) == (name in api._MODULES), name


def test_the_eager_and_the_lazy_names_are_all_the_names():
    eager = {n for n in api.__all__ if n not in api._LAZY}
    assert eager == {n for n in api.__all__ if n in vars(api) and n not in api._LAZY}
    assert set(api._LAZY) <= set(api.__all__), sorted(set(api._LAZY) - set(api.__all__))
    assert len(api.__all__) == len(set(api.__all__))
    with pytest.raises(AttributeError, match="suite.api.__all__"):
        api.no_such_name  # noqa: B018


def test_importing_the_api_imports_no_cost_model_pydantic_or_runner():
    probe = ("import sys, suite.api\n"
             "heavy = ('suite.perf', 'suite.collectives', 'suite.runner', 'suite.results', 'suite.hardware.profile', "
             "'pydantic', 'pint', 'scipy')\n"
             "print(sorted(m for m in sys.modules if any(m == h or m.startswith(h + '.') for h in heavy)))")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout


def test_no_core_module_imports_the_api():
    """suite.api is the top of the plugin-facing layer: the core never imports it (a core import of
    it would put every lazily imported module in a circle with it)."""
    from suite.testing.imports import imports_of

    # imports_of reads module names from the source's own text (an import statement, or a string
    # literal given to import_module / __import__), so a file without "api" in it imports no
    # suite.api: only those parsed (12 of 166 files; 0.74 -> 0.02 s CPU)
    bad = [f"{f.relative_to(ROOT)}:{line}" for f in sorted((ROOT / "suite").rglob("*.py")) if f.name != "api.py"
           and "api" in f.read_text(encoding="utf-8") for line, mod in imports_of(f) if mod == "suite.api"]
    assert not bad, "the core imports suite.api: " + ", ".join(bad)


def test_the_page_is_in_the_site_and_linked_from_the_guide():
    assert "plugin-api.md" in (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    assert "(plugin-api.md" in (ROOT / "docs" / "plugin-authors.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("name", sorted(set(api.__all__) | set(_hooks())))
def test_each_example_is_python(name):
    """Every example on the page compiles (as the body of a function: examples show ``return``
    and ``yield`` lines of an evaluate function or an executor); the signature block that opens
    an entry is not an example."""
    import textwrap

    body = next(sec[name] for sec in _sections().values() if name in sec)
    blocks = re.findall(r"```python\n(.*?)```", body, re.S)
    examples = blocks[1:] if re.match(r"\s*```python\n", body) else blocks
    for code in examples:
        compile("def _example():\n" + textwrap.indent(code, "    "), f"docs/plugin-api.md `{name}`", "exec")


def test_require_devices_declines_more_than_the_profile_has_in_one_line():
    """The "more workers than devices" Skip was written in five places with four wordings ("has 8
    devices; 9 GPUs requested", "exceeds the 8 devices of", "9 ranks but ..."): one function now."""
    from types import SimpleNamespace

    prof = SimpleNamespace(name="two-nodes", num_devices=8)
    assert api.require_devices(prof, 8) is None and api.require_devices(prof, 1, "gpus") is None
    with pytest.raises(api.Skip, match=r"^workers=9 but profile 'two-nodes' has 8 devices$"):
        api.require_devices(prof, 9)
    with pytest.raises(api.Skip, match=r"^ranks=12 but profile 'two-nodes' has 8 devices$"):
        api.require_devices(prof, 12, "ranks")
    assert api.require_devices(prof, 3, "gpus", have=3) is None  # the devices of one type of a mix
    with pytest.raises(api.Skip, match=r"^gpus=4 but profile 'two-nodes' has 3 devices$"):
        api.require_devices(prof, 4, "gpus", have=3)


def test_require_dataset_passes_a_loadable_dataset_and_declines_the_rest_in_one_line():
    """Execute fidelities stored a digits classifier's figures under 'resnet-50' (four plugins):
    one function now declines a workload they do not train on, naming what they run."""
    from suite.api import Dataset, load_sklearn

    iris = Dataset(name="iris", kind="dataset", source="t", loader=load_sklearn, params={"name": "iris"}, classes=3)
    higgs = Dataset(name="higgs", kind="dataset", source="t", n=11_000_000, d=28)
    assert api.require_dataset(None, "x") is None and api.require_dataset(iris, "x") is iris
    with pytest.raises(api.Skip, match=r"^x runs a classifier; 'higgs' is a dataset without a local loader or classes$"):
        api.require_dataset(higgs, "x runs a classifier")
    cnn = types.SimpleNamespace(name="resnet-50", kind="cnn")
    with pytest.raises(api.Skip, match=r"^x runs a classifier; 'resnet-50' is a cnn \(the model fidelity prices it\)$"):
        api.require_dataset(cnn, "x runs a classifier")
    with pytest.raises(api.Skip, match=r"^x runs a classifier; 'resnet-50' is a cnn$"):  # no fidelity prices it
        api.require_dataset(cnn, "x runs a classifier", priced=False)


def test_resolve_scale_is_the_profile_s_count_capped_at_the_paper_s():
    """Seven techniques filled an unset nodes / gpus / ranks / devices / dp the same way, each in
    its own lines: one function now. Hand counts: a 4-node x 8-GPU profile and a paper of 32."""
    from types import SimpleNamespace

    four = SimpleNamespace(name="four-nodes", num_nodes=4, num_devices=32)
    big = SimpleNamespace(name="big", num_nodes=64, num_devices=512)
    assert api.resolve_scale({"nodes": None}, "nodes", four, 32, count="nodes") == 4
    assert api.resolve_scale({}, "nodes", big, 32, count="nodes") == 32  # capped at the paper's
    assert api.resolve_scale({}, "gpus", four, 16) == 16  # count="devices": 32 devices, cap 16
    assert api.resolve_scale({}, "nodes", None, 32, count="nodes") == 32  # no profile: the paper's
    assert api.resolve_scale({"nodes": 40}, "nodes", four, 32) == 40  # set: as it is, even past both
    # square: 32 devices, cap 8 -> 8 -> 2 x 2 = 4; cap 16 -> 16 (4 x 4); a 3-device profile -> 1
    assert api.resolve_scale({}, "gpus", four, 8, square=True) == 4
    assert api.resolve_scale({}, "gpus", four, 16, square=True) == 16
    assert api.resolve_scale({}, "gpus", SimpleNamespace(num_nodes=1, num_devices=3), 4, square=True) == 1
    assert api.resolve_scale({}, "gpus", None, 4, square=True) == 4  # no profile: the paper's, not rounded
    # divides: at most 4 of 32 devices, dividing 6 virtual nodes -> 3; dividing 16 -> 4; 0: any (4); 7 -> 1
    assert [api.resolve_scale({}, "devices", four, 4, divides=v) for v in (6, 16, 0, 7)] == [3, 4, 4, 1]
    # a count of another unit: 3 ranks on each of 4 nodes = 12 (cap 63); on 64 nodes, the cap 63
    assert api.resolve_scale({}, "ranks", four, 63, count=lambda p: p.num_nodes * 3) == 12
    assert api.resolve_scale({}, "ranks", big, 63, count=lambda p: p.num_nodes * 3) == 63
    # replicas of a tp 8 x pp 2 plan: 32 GPUs hold 2 (cap 4); 8 GPUs hold none: at least 1
    assert api.resolve_scale({}, "dp", four, 4, count=lambda p: p.num_devices // 16) == 2
    assert api.resolve_scale({}, "dp", SimpleNamespace(num_devices=8), 4, count=lambda p: p.num_devices // 16) == 1

    def unread(p):
        raise AssertionError("count read for a set parameter")

    assert api.resolve_scale({"dp": 3}, "dp", four, 4, count=unread) == 3
    with pytest.raises(ValueError, match=r"^resolve_scale\('nodes'\): cap: expected an int >= 1, got 0$"):
        api.resolve_scale({}, "nodes", four, 0)
    with pytest.raises(ValueError, match=r"count: expected one of \('nodes', 'devices'\) or a callable, got 'gpus'$"):
        api.resolve_scale({}, "gpus", four, 4, count="gpus")
    with pytest.raises(ValueError, match=r"expected square or divides, got both$"):
        api.resolve_scale({}, "gpus", four, 4, square=True, divides=4)
