"""DHelix / DHeLlam strand interleaving (Wang et al., arXiv 2411.15871; ICCD 2025) as a dlsys-suite technique plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_dhelix.technique` (declaration), :mod:`suite_dhelix.model` (operators, pairing DP,
folded pipeline), :mod:`suite_dhelix.simulate` (the pipeline event by event),
:mod:`suite_dhelix.execute` (the DP against brute force; two strands on real arrays) and
:mod:`suite_dhelix.workloads` (the TWIST blog's Qwen3-like models).
"""

from suite.api import hookimpl, lazy_hook


suite_techniques = lazy_hook("suite_dhelix.technique:TECHNIQUE", listed=True)


@hookimpl
def suite_workloads():
    from suite_dhelix.workloads import all_workloads

    return list(all_workloads())
