"""The modules that moved into suite.perf.network in 0.3.0 keep working under their old names for one
minor version (third-party plugins import them): each warns on import, naming its replacement and
"removed in 0.4.0", and hands out the very objects of the new modules."""

import importlib
import sys

import pytest

import suite.perf.network as network
import suite.perf.network.comm as comm
import suite.perf.network.nccl as nccl
import suite.perf.network.netsim as netsim
import suite.perf.network.placement as placement


def _fresh(name):
    sys.modules.pop(name, None)
    with pytest.warns(DeprecationWarning, match=r"removed in 0\.4\.0") as rec:
        mod = importlib.import_module(name)
    assert "suite.perf.network" in str(rec[0].message)
    return mod


@pytest.mark.parametrize("old, new, names", [
    ("suite.perf.collective", network, ["collective_time", "Group", "group_of", "record_levels", "ALGORITHMS"]),
    ("suite.perf.comm", comm, ["ring_allreduce_time", "p2p_time"]),
    ("suite.perf.nccl", nccl, ["SIMPLE_EFFICIENCY", "candidates", "library_of"]),
    ("suite.perf.netsim", netsim, ["simulate_collective", "SimResult"]),
])
def test_old_module_warns_and_re_exports_the_same_objects(old, new, names):
    mod = _fresh(old)
    for name in names:
        assert getattr(mod, name) is getattr(new, name), name


def test_old_collective_module_still_resolves_private_helpers_and_star_imports():
    mod = _fresh("suite.perf.collective")
    assert mod._prepare is placement._prepare and mod._dims is placement._dims  # used by plugins' tests
    ns: dict = {}
    exec("from suite.perf.collective import *", ns)  # noqa: S102 - the star import third parties may use
    assert ns["collective_time"] is network.collective_time
    with pytest.raises(AttributeError, match="moved to suite.perf.network.collective"):
        mod.no_such_name  # noqa: B018


def test_the_package_keeps_the_old_network_module_names():
    # suite.perf.network was a module (alpha_beta, allreduce_fit) before it became the package
    from suite.perf.network import allreduce_fit, alpha_beta
    from suite.perf.network.levels import alpha_beta as ab

    assert alpha_beta is ab and callable(allreduce_fit)
