"""Poseidon (Zhang et al., USENIX ATC 2017) as a dlsys-suite technique plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_poseidon.technique` for the declaration, :mod:`suite_poseidon.model` for the cost
model and :mod:`suite_poseidon.execute` for the reference implementation on real arrays.
"""

from suite.api import lazy_hook


suite_techniques = lazy_hook("suite_poseidon.technique:TECHNIQUE", listed=True)
