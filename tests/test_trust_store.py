"""Issue 43, the store: damaged pages found on open, a lock reported as a lock, every error naming
the file. (A store with corrupted interior pages was opened and written without warning and the
later DatabaseError named no file; a lock held past 60 s said "not a dlsys-suite store".)"""

from __future__ import annotations

import sqlite3

import pytest

from suite.errors import StoreError
from suite.results import Store


def _filled(path, n=400):
    with Store(path) as st:
        run = st.begin_run(command="test")
        for i in range(n):
            key = f"{i:020d}"
            st.add_outcome({"technique": "t", "technique_version": "1", "variant": "v", "fidelity": "model",
                            "params": {"i": i, "pad": "x" * 200}, "seed": 0, "key": key},
                           {"key": key, "status": "ok", "duration": 0.1, "metrics": [["y", float(i), "s", "lower"]]},
                           run)
        st.finish_run(run, "done", {"total": n})


def _damage(path):
    """Overwrite interior pages (not the header) with garbage, as a disk fault or a cut copy does."""
    data = bytearray(path.read_bytes())
    page = 4096
    assert len(data) > 8 * page
    for p in range(3, len(data) // page - 1, 2):
        data[p * page + 8:p * page + 200] = b"\xa5" * 192
    path.write_bytes(bytes(data))


def test_damaged_store_is_refused_on_open_naming_the_file(tmp_path):
    path = tmp_path / "s.sqlite"
    _filled(path)
    with sqlite3.connect(path) as conn:  # fold the WAL into the file, so the damage is in the pages read
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    _damage(path)
    with pytest.raises(StoreError) as err:
        Store(path)
    msg = str(err.value)
    assert msg.startswith(f"store {str(path)!r}: expected an intact SQLite file, got a damaged one (")
    assert "\n" not in msg


def test_unchanged_store_is_not_checked_again(tmp_path, monkeypatch):
    path = tmp_path / "s.sqlite"
    _filled(path, 10)
    from suite.results import integrity

    calls = []
    real = integrity._changed
    monkeypatch.setattr(integrity, "_changed", lambda p: calls.append(real(p)) or calls[-1])
    Store(path).close()
    assert calls == [False]  # closed by this machine, unchanged since: no quick_check


def test_lock_held_past_the_timeout_is_reported_as_a_lock(tmp_path):
    """What SQLite raises after the 60 s busy timeout, on open or on a write, is said as a lock."""
    from suite.results.integrity import store_error

    path = tmp_path / "s.sqlite"
    e = store_error(path, sqlite3.OperationalError("database is locked"))
    assert str(e) == (f"store {str(path)!r}: locked by another process for more than 60 s (database is locked); "
                      "wait for the other `suite` command to finish, or give another --store")


def test_write_error_names_the_store(tmp_path):
    from suite.results.integrity import store_error

    path = tmp_path / "s.sqlite"
    e = store_error(path, sqlite3.OperationalError("database or disk is full"))
    assert str(e) == (f"store {str(path)!r}: the disk holding it is full (database or disk is full); free space "
                      "and run the command again (stored cases are kept)")


# --------------------------------------------------------------------------- run names


def test_look_alike_run_names_are_one_name(tmp_path):
    """Issue 43: look-alike names were two runs. A full-width name is the same as its ASCII twin."""
    with Store(tmp_path / "s.sqlite") as st:
        a = st.begin_run(command="a")
        b = st.begin_run(command="b")
        st.name_run(a, "\uff42\uff41\uff53\uff45")  # "ｂａｓｅ"
        assert st.run_named("base") == a
        with pytest.raises(StoreError, match=r"--name 'base': expected a new name, got one that already names run 1"):
            st.name_run(b, "base")
        assert st.run_names() == {a: "base"}


@pytest.mark.parametrize("bad, code", [("run\u202eevil", "U+202E"), ("\u2067base", "U+2067"),
                                       ("ba\u200bse", "U+200B"), ("x\u200f", "U+200F")])
def test_bidi_and_zero_width_run_names_are_refused(tmp_path, bad, code):
    with Store(tmp_path / "s.sqlite") as st:
        run = st.begin_run(command="a")
        with pytest.raises(StoreError) as err:
            st.name_run(run, bad)
    assert str(err.value).startswith(f"--name: expected printable characters only, got {code} (")


def test_a_misspelled_run_name_suggests_the_closest_name(tmp_path):
    """A tryout's `suite results show swep` gave no hint that the run is named sweep."""
    with Store(tmp_path / "s.sqlite") as st:
        st.name_run(st.begin_run(command="a"), "sweep")
        st.name_run(st.begin_run(command="b"), "papers")
        with pytest.raises(StoreError) as err:
            st.resolve_run("swep")
        with pytest.raises(StoreError) as far:
            st.resolve_run("zzz")
    assert str(err.value) == ("run: expected a run id, a name given with `suite run --name`, 'latest' or 'latest~N', "
                              "got 'swep'; did you mean 'sweep'? (see `suite results list`)")
    assert str(far.value).endswith("got 'zzz' (see `suite results list`)")
