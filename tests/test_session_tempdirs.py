"""The test session's own folders (config, store, cache, byte code) are removed when it ends: they
were left under the temporary directory by every session (971 sessions had kept 5.8 GB)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")


def test_a_session_leaves_no_folder_behind(tmp_path):
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("PYTHONPYCACHEPREFIX", None)
    # the conftest run as a session's process runs it; the child writes into each folder first
    code = ("import os, runpy, pathlib; runpy.run_path(%r); "
            "[pathlib.Path(os.environ[k] if k != 'SUITE_STORE' else os.path.dirname(os.environ[k]), 'x').write_text('x') "
            "for k in ('XDG_CONFIG_HOME', 'SUITE_STORE', 'SUITE_CACHE_DIR', 'PYTHONPYCACHEPREFIX')]; "
            "print(sorted(os.listdir(%r)))") % (str(CONFTEST), str(tmp))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True).stdout
    made = eval(out)  # noqa: S307 - our own child's list of names
    assert sorted(n.rsplit("-", 1)[0] for n in made) == ["suite-test-cache", "suite-test-config",
                                                          "suite-test-pyc", "suite-test-store"]
    assert os.listdir(tmp) == []
