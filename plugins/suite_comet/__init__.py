"""COMET cluster and parallelisation co-design (Kadiyala et al., arXiv 2211.16648) as a dlsys-suite
technique plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_comet.technique` for the declaration, :mod:`suite_comet.model` for the vectorised
design-space cost model, :mod:`suite_comet.execute` for the tp x pp x dp transformer step on
real arrays and :mod:`suite_comet.workloads` for ``megatron-1t``.
"""

from suite.api import hookimpl, lazy_hook


suite_techniques = lazy_hook("suite_comet.technique:TECHNIQUE", listed=True)
suite_workloads = lazy_hook("suite_comet.workloads:all_workloads", call=True)


@hookimpl
def suite_profile_extensions():
    # a reference: the pydantic schema is imported when a profile is loaded, not when listing
    return {"comet": "suite_comet.extension:CometExt"}
