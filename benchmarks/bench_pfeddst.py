"""PFedDST benchmark: scoring time over local training time per round (execute), and model
cases per second at 100 clients (vectorised over device classes, sites and peers).

A benchmark, not plugin code (it resolves a case through the runner), so it lives here and not
in the plugin package. Run with one BLAS thread for the issue's figure::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/bench_pfeddst.py

Prints timings only; asserts nothing (timings depend on the machine's load).
"""

from __future__ import annotations

import time


def scoring_over_training(reading: str = "cross", seeds=(0, 1, 2)) -> float:
    """Median over *seeds* of (CPU time of scoring) / (CPU time of local training) per run of the
    default setting (digits, 20 clients, 30 rounds, degree 4, k 2). ``execute.run`` times both on
    this thread's CPU clock (waiting for a core on a shared machine is not counted); scoring
    excludes the loop-based oracle check, local training is the phase 1 + phase 2 steps only."""
    from sklearn.datasets import load_digits

    from suite_pfeddst import execute

    X, y = load_digits(return_X_y=True)
    ratios = []
    for s in seeds:
        cl = execute.load_clients(X, y, 20, seed=s)
        rr = execute.run(cl, "pfeddst", seed=s, loss_reading=reading)
        ratios.append(rr.scoring_seconds / rr.training_seconds)
    return sorted(ratios)[len(ratios) // 2]


def model_cases_per_second(clients: int = 100, variant: str = "pfeddst", repeat: int = 300) -> float:
    """Model-fidelity evaluations per second on edge-hetero at *clients* clients."""
    from suite import ScenarioSpec
    from suite.context import Context
    from suite.runner.case import resolve_case

    from suite_pfeddst.technique import TECHNIQUE

    spec = ScenarioSpec(variant=variant, profile="edge-hetero", workload="digits", params={"clients": clients})
    sc = resolve_case(TECHNIQUE, spec, context=Context.build()).scenario
    TECHNIQUE.evaluate(sc)
    t0 = time.perf_counter()
    for _ in range(repeat):
        TECHNIQUE.evaluate(sc)
    return repeat / (time.perf_counter() - t0)


def main() -> None:
    for reading in ("cross", "gap"):
        print(f"scoring / local training per round ({reading} reading): {scoring_over_training(reading):.3f} "
              f"(target <= 0.25)")
    for v in ("local-only", "fedavg", "random-peers", "pfeddst"):
        print(f"model cases/s, 100 clients, {v}: {model_cases_per_second(100, v):,.0f} (target >= 1,000)")


if __name__ == "__main__":
    main()
