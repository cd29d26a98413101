"""A plugin's own inputs are in its case key, whatever shape the plugin gives them.

A hostile-plugin tryout of 0.3.7 (findings F3-F5) edited a plugin and got its old stored number
served: a fidelity given as ``functools.partial`` hashed the standard library's ``functools``
instead of the plugin; a data file named ``*.md`` / ``*.rst`` and a folder linked into the package
were not hashed. Each test edits the input and asserts the fingerprint (hence every case key of
the technique) changes, and that putting the old contents back gives the old fingerprint.
"""

from __future__ import annotations

import functools
import os
import sys
from pathlib import Path

import pytest

from suite import Paper, Result, Technique, Variant
from suite.runner.case import code_fingerprint


def _write(path: Path, text: str) -> None:
    """Write *text* and move the modification time on (the fingerprint re-reads a file whose size
    or modification time changed: an edit within one clock tick must still be seen)."""
    old = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    st = path.stat()
    if st.st_mtime_ns <= old:
        os.utime(path, ns=(st.st_atime_ns, old + 1_000_000))


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A plugin package ``keyinput_pkg`` on ``sys.path`` (tmp_path) whose ``model.py`` defines
    ``evaluate(scenario, scale)`` and a constant ``C = 1.0``."""
    pkg = tmp_path / "keyinput_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    _write(pkg / "model.py", "from suite import Result\nC = 1.0\n"
                             "def evaluate(scenario, scale=1.0):\n"
                             "    return Result().add('v', C * scale, '1', 'none')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield pkg
    for name in [m for m in sys.modules if m == "keyinput_pkg" or m.startswith("keyinput_pkg.")]:
        del sys.modules[name]


def _technique(fidelity) -> Technique:
    return Technique(name="keyinput", title="T", category="communication", paper=Paper("P", ("A",), "V", 2020),
                     variants=[Variant("base", "b", baseline=True)], fidelities={"model": fidelity},
                     needs_profile=False, needs_workload=False)


@pytest.mark.parametrize("wrap", [lambda f: functools.partial(f, scale=1.0),
                                  lambda f: functools.partial(functools.partial(f), scale=1.0)],
                         ids=["partial", "nested-partial"])
def test_a_partial_fidelity_keys_the_plugins_package_not_functools(package, wrap):
    from keyinput_pkg.model import evaluate

    tech = _technique(wrap(evaluate))
    # 0.3.7 read the partial's __module__: "functools", so the key hashed the standard library
    assert tech.implementation_modules == ["keyinput_pkg.model"] and tech.package == "keyinput_pkg"
    before = code_fingerprint(tech, refresh=True)
    _write(package / "model.py", (package / "model.py").read_text().replace("C = 1.0", "C = 3.0"))
    assert code_fingerprint(tech, refresh=True) != before  # the tryout's v=1.0 was served for C = 3.0
