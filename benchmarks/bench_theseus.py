"""Theseus benchmark: per TPC-H query, the batch-streaming engine's time over DuckDB's at SF 0.1 with
K = 4 workers (target <= 20); the fixed-size page pool's copy rate over ``np.copyto``'s (>= 0.5); model
cases/s (>= 2,000) and simulate cases/s at 1,000 batches (>= 20).

The measurements live with the plugin (``suite_theseus.bench``) so a third-party copy of the plugin
carries them; this is the entry point beside the other benchmarks (needs the ``[sql]`` extra)::

    python benchmarks/bench_theseus.py
"""

from suite_theseus.bench import main

if __name__ == "__main__":
    main()
