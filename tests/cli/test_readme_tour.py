"""README.md's tour, pasted line by line as a new user would: every command exits 0 and does what
its comment says. It runs in a temporary folder (its own results/suite.sqlite, its own per-user
config folder, so `suite hardware calibrate` writes there), through ``python -m suite``.

The tour includes `suite reproduce poseidon`, a 144-case sweep, two reports and a calibration:
about a minute alone, so it is marked slow.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[2] / "README.md"


def tour_lines() -> list[str]:
    """The command lines of the README's tour block (comments and blank lines left out)."""
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## A tour ("):]
    block = section[section.index("```bash") + len("```bash"):]
    block = block[:block.index("```")]
    return [ln for ln in block.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]


def test_tour_block_is_found_and_names_the_sweep():
    lines = tour_lines()
    assert lines[0].startswith("suite techniques")
    sweeps = [ln for ln in lines if ln.startswith("suite run --technique poseidon")]
    # the sweep and its rerun are the same command, except the name the first one gives
    assert len(sweeps) == 2 and sweeps[0].replace(" --name sweep", "") == sweeps[1]
    assert any(ln.startswith("suite compare sweep latest") for ln in lines)


@pytest.mark.slow
def test_readme_tour_line_by_line(tmp_path):
    (tmp_path / "results").mkdir()
    (tmp_path / "config").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("SUITE_STORE", "SUITE_PROFILES", "SUITE_CONFIG_DIR")}
    env.update(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path / "config"), COLUMNS="200")
    outputs: dict[str, str] = {}
    for line in tour_lines():
        argv = shlex.split(line, comments=True)
        assert argv[0] == "suite", line
        r = subprocess.run([sys.executable, "-m", "suite", *argv[1:]], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0, f"{line}\nexit {r.returncode}\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}"
        outputs[line] = r.stdout + r.stderr
    lines = tour_lines()
    sweep, rerun = [ln for ln in lines if ln.startswith("suite run --technique poseidon")]
    # 6 node counts x 6 bandwidths x 4 variants (a few already stored by `suite reproduce poseidon`),
    # then every case found stored
    assert re.search(r"run 2: 144 case\(s\), \d+ already stored, \d+ computed; \d+ ok;", outputs[sweep])
    assert "run 3: 144 case(s), 144 already stored: nothing new to compute" in outputs[rerun]
    csv_line = next(ln for ln in lines if "--format csv" in ln)
    header = outputs[csv_line].splitlines()[0].split(",")
    assert "iteration_time [s]" in header and "throughput [samples/s]" in header
    compare = next(ln for ln in lines if ln.startswith("suite compare"))
    assert "144 scenario(s)" in outputs[compare]
    report = (tmp_path / "report.html").read_text(encoding="utf-8")
    # every facet value is a panel title inside the PNGs; the captions say what each figure holds
    assert "one panel per network.-1.bandwidth (Gbit/s)" in report and "one panel per nodes" in report
    assert "page 1 of 2: scenarios 1-18 of 36" in report and "page 2 of 2: scenarios 19-36 of 36" in report
    comparison = (tmp_path / "comparison.html").read_text(encoding="utf-8")
    assert "Head to head: communication" in comparison
    assert "Poseidon: An Efficient Communication Architecture" in comparison and "MG-WFBP" in comparison
    calibrate = next(ln for ln in lines if ln.startswith("suite hardware calibrate"))
    wrote = re.search(r"wrote (\S+\.toml)", outputs[calibrate])
    assert wrote and Path(wrote.group(1)).is_file() and str(tmp_path) in wrote.group(1)
    assert (tmp_path / "suite-my-technique" / "pyproject.toml").is_file()  # the scaffold
