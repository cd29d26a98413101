"""Mixed-TD (Yu and Bouganis, FPL 2023) as a dlsys-suite technique plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_mixed_td.technique` for the declaration (light: its fidelities are references into
:mod:`suite_mixed_td.fidelities`, its import-time constants live in :mod:`suite_mixed_td.constants`),
:mod:`suite_mixed_td.decompose` for the SVD / CPD schemes on real arrays, :mod:`suite_mixed_td.model` for the FPGA pipeline model and the search,
:mod:`suite_mixed_td.execute` for the execute fidelity, :mod:`suite_mixed_td.workloads` for
RepVGG-A0 (deploy form) and the digits CNN.
"""

from suite.api import hookimpl, lazy_hook


suite_techniques = lazy_hook("suite_mixed_td.technique:TECHNIQUE", listed=True)


@hookimpl
def suite_workloads():
    from suite_mixed_td.workloads import digits_cnn, repvgg_a0

    return [repvgg_a0(), digits_cnn()]
