"""Results: the SQLite store and its read API (pandas DataFrames).

Public API::

    from suite.results import Store
    store = Store()                        # SUITE_STORE or results/suite.sqlite
    store.runs()                           # one row per run, with provenance
    store.cases(run="latest")              # one row per case (status, error, params, ...)
    store.metrics(run="latest", wide=True) # one row per ok case, one column per metric
    store.result(key)                      # a suite.technique.Result

    from suite.results import load
    df = load("results/suite.sqlite", run="latest", technique="my-technique")   # long form
    wide = load(run="latest", wide=True)                                  # one column per metric
"""

from suite.results.store import SCHEMA_VERSION, Store, default_store_path
from suite.results.load import load  # noqa: E402  (after Store: load builds on it)

__all__ = ["Store", "SCHEMA_VERSION", "default_store_path", "load"]
