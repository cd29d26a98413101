"""Computron (Zou et al., arXiv 2306.13835, 2023) as a dlsys-suite technique plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_computron.technique` for the declaration, :mod:`suite_computron.model` for the cost
model, :mod:`suite_computron.simulate` for the serving engine (an event loop),
:mod:`suite_computron.execute` for the shard-parallel copies on real arrays and
:mod:`suite_computron.workloads` for OPT-1.3B / 13B and the authors' serving configurations.
"""

from suite.api import hookimpl, lazy_hook


suite_techniques = lazy_hook("suite_computron.technique:TECHNIQUE", listed=True)
suite_workloads = lazy_hook("suite_computron.workloads:all_workloads", call=True)


@hookimpl
def suite_profile_extensions():
    # a reference: the pydantic schema is imported when a profile is loaded, not when listing
    return {"pcie_switch": "suite_computron.extension:PcieSwitchExt"}
