"""Execute: really all-reduce numpy arrays across simulated workers and check the oracle."""

from __future__ import annotations

import numpy as np

from suite.api import Ledger, Result, Scenario, allreduce


def evaluate(scenario: Scenario) -> Result:
    """Each of ``workers`` simulated workers holds a random float64 vector of ``elements``;
    all-reduce them with the variant's algorithm; compare with the dense sum (the oracle).
    ``oracle_error`` is the largest absolute difference: the runner fails the case above the
    technique's ``oracle_tolerance``."""
    p = scenario.params["workers"]
    n = scenario.params["elements"]
    rng = np.random.default_rng(scenario.seed)
    arrays = [rng.standard_normal(n) for _ in range(p)]
    ledger = Ledger()
    out = allreduce(arrays, scenario.variant, ledger)
    oracle = np.sum(arrays, axis=0)
    err = max(float(np.max(np.abs(o - oracle))) for o in out)
    return (Result()
            .add("oracle_error", err, "1", "lower")
            .add("messages", ledger.count, "1", "lower")
            .add("bytes_sent", sum(ledger.sent_by().values()), "B", "lower")
            .add("bytes_received", sum(ledger.received_by().values()), "B", "lower"))
