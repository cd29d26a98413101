"""HetSeq (Ding, Botzer, Weninger; arXiv 2009.14783) as a dlsys-suite technique plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_hetseq.technique` for the declaration, :mod:`suite_hetseq.model` for the cost model
and :mod:`suite_hetseq.execute` for the reference implementation on real arrays.
"""

from suite.api import lazy_hook


suite_techniques = lazy_hook("suite_hetseq.technique:TECHNIQUE", listed=True)
