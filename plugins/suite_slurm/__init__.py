"""SLURM executor for dlsys-suite, through submitit: ``suite run ... --executor slurm``.

A plugin packaged like a third party (entry point ``slurm = "suite_slurm"``): it implements only
the ``suite_executor`` hook and builds on the public executor API (:mod:`suite.execution`).
Install with the ``[slurm]`` extra (``pip install 'dlsys-suite[slurm]'``).
"""

from __future__ import annotations

from suite.api import hookimpl

__all__ = ["suite_executor"]


@hookimpl
def suite_executor(name: str):
    """The ``slurm`` executor (:class:`suite_slurm.executor.SlurmExecutor`); None for any other name."""
    if name != "slurm":
        return None
    from suite_slurm.executor import SlurmExecutor

    return SlurmExecutor()
