"""HetSeq as a dlsys-suite technique plugin (skeleton: the technique is being built)."""

from suite import hookimpl


@hookimpl
def suite_techniques():
    return []
