"""Theseus (Aramburu et al., arXiv 2508.05029, 2025) as a dlsys-suite technique plugin.

Registered through the ``suite.plugins`` entry point like any third-party plugin; see
:mod:`suite_theseus.technique` for the declaration, :mod:`~suite_theseus.model` for the cost model,
:mod:`~suite_theseus.engine` and :mod:`~suite_theseus.execute` for the batch-streaming engine
checked against DuckDB, :mod:`~suite_theseus.simulate` for the event simulation of the four
executors, :mod:`~suite_theseus.tpch` for the TPC-H data and workloads and
:mod:`~suite_theseus.extension` for the ``[ext.theseus]`` profile table.
"""

from suite.api import hookimpl, lazy_hook


suite_techniques = lazy_hook("suite_theseus.technique:TECHNIQUE", listed=True)
suite_workloads = lazy_hook("suite_theseus.tpch:tpch_workloads", call=True)


@hookimpl
def suite_profile_extensions():
    # a reference: the pydantic schema is imported when a profile is loaded, not when listing
    return {"theseus": "suite_theseus.extension:TheseusExt"}
