"""ClusterFusion (Luo et al., NeurIPS 2025) as a dlsys-suite technique plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_clusterfusion.technique` for the declaration, :mod:`suite_clusterfusion.model` for the
cost model, :mod:`suite_clusterfusion.execute` for the reference implementation on real arrays,
:mod:`suite_clusterfusion.hopper` for the ``[ext.hopper]`` profile table and
:mod:`suite_clusterfusion.workloads` for the DeepSeek-V2-Lite workload.
"""

from suite.api import hookimpl, lazy_hook


suite_techniques = lazy_hook("suite_clusterfusion.technique:TECHNIQUE", listed=True)
suite_workloads = lazy_hook("suite_clusterfusion.workloads:deepseek_v2_lite", call=True, listed=True)


@hookimpl
def suite_profile_extensions():
    # a reference: the pydantic schema is imported when a profile is loaded, not when listing
    return {"hopper": "suite_clusterfusion.extension:HopperExt"}
