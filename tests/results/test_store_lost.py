"""A store file deleted, moved or replaced while a run writes it (a hostile tryout): SQLite keeps
writing to the open file, which no path names any more, and `suite run` printed "6 computed; 6 ok",
exit 0, with nothing on disk. The run now ends with an error naming the store, exit 1."""

from __future__ import annotations

import os

import pytest

from suite.cli.run import report_summary
from suite.results import Store
from suite.runner.engine import RunSummary


def _summary(path) -> RunSummary:
    return RunSummary(run_id=1, store=str(path), total=6, computed=6, ok=6, by_status={"ok": 6})


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_store_gone_from_its_path_is_an_error_not_a_success(tmp_path, capsys, how):
    path = tmp_path / "s.sqlite"
    st = Store(path)
    try:
        assert st.lost() is None
        for p in tmp_path.glob("s.sqlite*"):
            p.unlink()
        if how == "replaced":
            path.write_bytes(b"")  # another file at the same path
        what = "deleted or moved" if how == "deleted" else "replaced by another file"
        assert st.lost() == (f"store {str(path)!r}: the file was {what} while this process wrote it: what it wrote "
                             "is lost")
        with pytest.raises(SystemExit) as e:
            report_summary(st, _summary(path), "table", True)
        assert e.value.code == 1
        err = capsys.readouterr().err
        assert f"error: {st.lost()} (6 case(s) of run 1); run the command again" in err
    finally:
        st.close()


def test_a_store_left_in_place_ends_as_before(tmp_path, capsys):
    st = Store(tmp_path / "s.sqlite")
    try:
        report_summary(st, _summary(st.path), "table", True)  # no exit: every case ok
        assert "error" not in capsys.readouterr().err
        ro = Store(tmp_path / "s.sqlite", readonly=True)
        assert ro.lost() is None
        ro.close()
    finally:
        st.close()
    assert os.path.exists(tmp_path / "s.sqlite")


def test_reproduce_into_a_store_deleted_during_the_run_is_an_error(tmp_path, monkeypatch):
    """`suite reproduce` wrote to a deleted store and exited 0, as `suite run` did (a second reader)."""
    from click.testing import CliRunner

    from suite.cli import main

    path = tmp_path / "s.sqlite"
    real = Store.lost

    def gone(self):  # the file removed while the run wrote it: what lost() then says
        for p in tmp_path.glob("s.sqlite*"):
            p.unlink()
        return real(self)

    monkeypatch.setattr(Store, "lost", gone)
    r = CliRunner().invoke(main, ["reproduce", "hetseq", "--store", str(path), "-q"])
    assert r.exit_code == 1, r.output
    assert f"error: store {str(path)!r}: the file was deleted or moved while this process wrote it" in r.output
