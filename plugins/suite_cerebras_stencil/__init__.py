"""Stencil codes on the Cerebras wafer-scale engine, written in TensorFlow (Brown, Echols, Zarins,
Grosser, 2022; arXiv 2210.04795) as a dlsys-suite technique plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_cerebras_stencil.technique` for the declaration, :mod:`~suite_cerebras_stencil.model`
for the cost model, :mod:`~suite_cerebras_stencil.execute` for the reference implementation on
real arrays, :mod:`~suite_cerebras_stencil.kernels` for the two stencils and
:mod:`~suite_cerebras_stencil.extension` for the ``[ext.cerebras]`` profile table.
"""

from suite.api import hookimpl, lazy_hook


suite_techniques = lazy_hook("suite_cerebras_stencil.technique:TECHNIQUE", listed=True)


@hookimpl
def suite_profile_extensions():
    # a reference: the pydantic schema is imported when a profile is loaded, not when listing
    return {"cerebras": "suite_cerebras_stencil.extension:CerebrasExt"}
