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
from suite.runner.case import code_fingerprint, package_fingerprint


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


@pytest.mark.parametrize("name", ["table.rst", "coef.md", "notes/README.md"])
def test_a_data_file_named_md_or_rst_is_in_the_key(package, name):
    data = package / name
    data.parent.mkdir(exist_ok=True)
    _write(data, "20\n")
    before = package_fingerprint("keyinput_pkg", refresh=True)
    _write(data, "21\n")  # read_data(__name__, "table.rst") now reads 21: 0.3.7 served 20
    changed = package_fingerprint("keyinput_pkg", refresh=True)
    _write(data, "20\n")
    assert changed != before and package_fingerprint("keyinput_pkg", refresh=True) == before


def test_byte_code_caches_stay_out_of_the_key(package):
    before = package_fingerprint("keyinput_pkg", refresh=True)
    (package / "__pycache__").mkdir(exist_ok=True)
    (package / "__pycache__" / "model.cpython-311.pyc").write_bytes(b"\x00" * 16)
    (package / "stray.pyc").write_bytes(b"\x01" * 16)  # compiled by an interpreter that is not the one running
    assert package_fingerprint("keyinput_pkg", refresh=True) == before


def test_a_folder_linked_into_the_package_is_hashed_and_a_link_cycle_ends(package, tmp_path):
    outside = tmp_path / "linkdata"
    outside.mkdir()
    _write(outside / "coef.txt", "30\n")
    (package / "linked").symlink_to(outside, target_is_directory=True)
    before = package_fingerprint("keyinput_pkg", refresh=True)
    _write(outside / "coef.txt", "31\n")  # files("keyinput_pkg") / "linked" / "coef.txt" reads 31: 0.3.7 served 30
    assert package_fingerprint("keyinput_pkg", refresh=True) != before
    _write(outside / "coef.txt", "30\n")
    assert package_fingerprint("keyinput_pkg", refresh=True) == before
    # a link back to a folder already walked (here the package itself, through its parent) is
    # walked once: the fingerprint ends, and holds each real folder's files once
    (outside / "up").symlink_to(package, target_is_directory=True)
    from suite.runner.fingerprint import _package_files

    files, found = _package_files("keyinput_pkg")
    rels = [rel for rel, *_ in files]
    assert found and rels == ["__init__.py", "linked/coef.txt", "model.py"]
