"""HetSeq (Ding, Botzer, Weninger; arXiv 2009.14783) as a dlsys-suite technique plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_hetseq.technique` for the declaration, :mod:`suite_hetseq.model` for the cost model
and :mod:`suite_hetseq.execute` for the reference implementation on real arrays.
"""

from suite.api import hookimpl


@hookimpl
def suite_techniques():
    from suite_hetseq.technique import TECHNIQUE

    return [TECHNIQUE]
