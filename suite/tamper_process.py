"""What a plugin's load leaves behind besides rebound names: a thread still running, another working
directory, a changed ``SUITE_*`` environment variable.

:mod:`suite.tamper` compares the shared modules just before and just after a plugin loads. A thread
(or ``threading.Timer``) the plugin starts there can rebind a core function 20 ms later, after that
check: every technique's numbers then change and are stored ``ok`` under clean keys. And a plugin
that calls ``os.chdir`` or sets ``SUITE_STORE`` while it loads moves where every command writes its
store and reports. The registry therefore takes a :func:`state` around each plugin load; a plugin
that changes the working directory or a ``SUITE_*`` variable is quarantined (:func:`left_behind`
puts them back), and one that leaves a new thread running is noted (quarantined from dlsys-suite
0.4.0: a library imported by a plugin may start a helper thread).

The thread keeps running either way (Python cannot stop a thread), so the registry then
:func:`watch` es the shared modules from the snapshot its last check left, until the thread ends:
:func:`recheck` puts back any name rebound since where numbers are made or stored: in each
forked worker as it starts (a forked child holds no other thread, so nothing can patch it after that
check), before each case run in this process, and before each outcome is stored. No plugin left a
thread: :func:`recheck` costs one attribute test.
"""

from __future__ import annotations

import os
import sys
import threading
from typing import Any

__all__ = ["state", "left_behind", "watch", "recheck", "watching", "drain_notes", "blame", "leftovers"]

#: environment variables whose names start so steer where and how the suite runs
PREFIX = "SUITE_"


class State:
    """The process's working directory, ``SUITE_*`` variables and running threads at one moment."""

    __slots__ = ("cwd", "env", "threads")

    def __init__(self) -> None:
        try:
            self.cwd: str | None = os.getcwd()
        except OSError:  # the directory was removed
            self.cwd = None
        self.env = {k: v for k, v in os.environ.items() if k.startswith(PREFIX)}
        # every Python thread, those started through _thread included (not only threading's)
        self.threads = set(sys._current_frames())

    def restore(self) -> list[str]:
        """What changed since this state (``working directory '/a' -> '/b'``, ``SUITE_STORE``), each put back."""
        out: list[str] = []
        now = _cwd()
        if self.cwd is not None and now != self.cwd:
            out.append(f"the working directory changed ({self.cwd!r} -> {now!r})")
            os.chdir(self.cwd)
        env = {k: v for k, v in os.environ.items() if k.startswith(PREFIX)}
        for k in sorted(set(env) | set(self.env)):
            if env.get(k) != self.env.get(k):
                out.append(f"{k} changed ({self.env.get(k, '<unset>')!r} -> {env.get(k, '<unset>')!r})")
                if k in self.env:
                    os.environ[k] = self.env[k]
                else:
                    del os.environ[k]
        return out


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:
        return None


def state() -> State:
    """The process's working directory, ``SUITE_*`` variables and threads now (~10 us)."""
    return State()


def left_behind(before: State) -> tuple[list[str], set[int]]:
    """(what a plugin that loaded since *before* left changed, one phrase each, the directory and
    variables put back; the idents of the threads it started that still run). Empty: nothing."""
    changed = before.restore()
    new = set(sys._current_frames()) - before.threads
    names = sorted(t.name for t in threading.enumerate() if t.ident in new)
    names += ["<a thread not started through threading>"] * (len(new) - len(names))
    if new:
        changed.insert(0, f"a thread still running ({', '.join(map(repr, names[:3]))})")
    return changed, new


#: [(the shared modules' snapshot, the plugins whose threads still run, those threads' idents)] once
#: a plugin left a thread running; empty: none did, or every such thread has ended and what it left
#: was put back (a list filled in place: rebinding a module name after the snapshot was taken would
#: be a change the snapshot puts back)
_WATCH: list[tuple[Any, list[str], set[int]]] = []
#: what :func:`recheck` put back since the last :func:`drain_notes`, one line each
_NOTES: list[str] = []
__caches__ = ("_WATCH", "_NOTES")  # suite.tamper: their contents are the guard's, not an input


def watch(snap: Any, plugins: list[str], threads: set[int]) -> None:
    """Watch the shared modules from *snap* (:func:`suite.tamper.snapshot`) from now on, for the
    threads *threads* (idents) of *plugins* (their names, for messages); none: stop watching."""
    _WATCH[:] = [(snap, list(plugins), set(threads))] if plugins else []


def watching() -> list[str]:
    """The plugins whose threads :func:`recheck` watches for (empty: none)."""
    return list(_WATCH[0][1]) if _WATCH else []


def recheck() -> str:
    """Put back whatever a watched plugin's thread changed in the shared modules since
    :func:`watch` (a name rebound, a core table edited: :func:`suite.tamper.undo_changes`); once
    none of the watched threads runs any more, stop watching. Returns one line naming the plugins
    and what was put back (kept for :func:`drain_notes` too); ``""`` when nothing changed or
    nothing is watched. The working directory and ``SUITE_*`` variables are compared at each
    plugin load only: later, the program that loaded the plugins may change them itself."""
    if not _WATCH:
        return ""
    from suite.tamper import undo_changes

    snap, plugins, threads = _WATCH[0]
    changed = undo_changes(snap)
    if not threads & set(sys._current_frames()):
        _WATCH.clear()  # every watched thread has ended: nothing can change the core again
    if not changed:
        return ""
    note = (f"the core was changed after plugin {', '.join(map(repr, plugins))} loaded (a thread it started): "
            f"{_some(changed)} put back")
    if note not in _NOTES:
        _NOTES.append(note)
    return note


def drain_notes() -> list[str]:
    """The lines :func:`recheck` returned since the last call (each once), and forget them."""
    out = list(_NOTES)
    _NOTES.clear()
    return out


# --------------------------------------------------------------------------- the registry's verdicts


def _some(items: list[str]) -> str:
    return f"{', '.join(items[:3])}{' ...' if len(items) > 3 else ''}"


def blame(plugin: str, patched: list[str], notes: list[str]) -> str:
    """Why *plugin* is quarantined for the shared names *patched* (put back) while it loaded, or
    ``""``: none, or a watched plugin's thread still runs (:func:`watching`), which may have made
    them: a line joins *notes* instead (a quarantine costs only the plugin that caused it)."""
    threads = watching()
    if patched and threads:
        notes.append(_while_watched([f"{p} changed" for p in patched], plugin, threads))
        return ""
    return (f"patched {_some(patched)} while loading (put back); expected a plugin that changes no shared "
            "module") if patched else ""


def leftovers(plugin: str, before: State, snap: Any, notes: list[str]) -> str:
    """Why *plugin* is quarantined for what its load (or deferred hook) left since *before*: another
    working directory or a changed ``SUITE_*`` variable (put back), or a thread running (from
    dlsys-suite 0.4.0; until then a line joins *notes*), else ``""``. A thread left running is
    watched from then on (:func:`watch`, from the shared modules' snapshot *snap* the last check
    left: Python cannot stop it); what changed while another plugin's thread is watched is that
    thread's doing as likely as this plugin's: noted, not blamed."""
    from suite.deprecation import fails_now

    changed, thread = left_behind(before)
    threads = watching()
    if thread:
        watch(snap, threads + [plugin], thread | (_WATCH[0][2] if _WATCH else set()))
        if len(changed) == 1 and not fails_now("thread-at-load"):  # a thread alone: watched, and noted
            notes.append(f"plugin {plugin!r} left {changed[0]} after loading: what it changes in the core is put back "
                         "before cases run and results are stored; a plugin that starts no thread while loading is "
                         "expected (quarantined from dlsys-suite 0.4.0)")
            return ""
    elif changed and threads:
        notes.append(_while_watched(changed, plugin, threads))
        return ""
    return (f"left {_some(changed)} after loading (directory and variables put back); expected a plugin that "
            "starts no thread and changes no working directory or SUITE_* variable while loading") if changed else ""


def _while_watched(changed: list[str], plugin: str, threads: list[str]) -> str:
    """The note for *changed* (put back) found after *plugin* loaded while the threads of the plugins
    *threads* run (which may have made them)."""
    return (f"{_some(changed)} while plugin {plugin!r} loaded, while a thread of plugin "
            f"{', '.join(map(repr, threads))} runs: put back")
