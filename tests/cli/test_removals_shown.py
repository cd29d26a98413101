"""A plugin that still looks a profile up by name (``suite.hardware.get_profile``, deprecated since
0.2.0, removed in 0.4.0) gets a price that ignores the run's ``--set`` and cannot see the plugins'
own profiles. Python hides ``DeprecationWarning`` outside ``__main__``, so the ``suite`` command
used to run such a plugin with no word of it (found by trying the product as a plugin author)."""

from __future__ import annotations

import sys
import warnings

import pytest

from suite.deprecation import show_removals
from suite.errors import ProfileError


def _lookups_warned(show: bool) -> list[str]:
    import suite.hardware as hardware

    with warnings.catch_warnings(record=True) as seen:
        warnings.resetwarnings()
        warnings.simplefilter("ignore", DeprecationWarning)  # what Python does outside __main__
        if show:
            show_removals()
        hardware.get_profile("titanx-cluster-10gbe")
    return [str(w.message) for w in seen if issubclass(w.category, DeprecationWarning)]


def test_a_global_profile_lookup_is_shown_once_the_command_asks_for_it():
    assert _lookups_warned(False) == []  # hidden by Python's default filter
    (msg,) = _lookups_warned(True)
    assert msg.startswith("suite.hardware.get_profile() is deprecated and will be removed in dlsys-suite 0.4.0")


def test_the_suite_command_installs_the_filter(monkeypatch):
    from suite import cli

    monkeypatch.setattr(sys, "argv", ["suite", "--version"])
    with warnings.catch_warnings():
        warnings.resetwarnings()
        with pytest.raises(SystemExit):
            cli.entry()
        shown = [f for f in warnings.filters if f[0] == "default" and f[2] is DeprecationWarning and f[1] is not None]
        assert shown and shown[0][1].match("suite.hardware.get_profile() is deprecated and will be removed in "
                                           "dlsys-suite 0.4.0: ...")


def test_a_plugin_profile_missing_from_the_global_lookup_says_why():
    import suite.hardware as hardware

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        with pytest.raises(ProfileError, match=r"got 'a-plugins-own-profile'.*not the plugins' own, nor a run's --set"):
            hardware.get_profile("a-plugins-own-profile")
