"""VirtualFlow benchmark: 8 virtual nodes of B/8 against one pass of B (target ratio <= 1.3 with one
BLAS thread), model cases/s (>= 1,000), the 3-type V = 1,024 plan search (< 2 s), trace replays/s (>= 20).

The measurements live with the plugin (``suite_virtualflow.bench``) so a third-party copy of the
plugin carries them; this is the entry point beside the other benchmarks::

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_virtual_nodes.py
"""

from suite_virtualflow.bench import main

if __name__ == "__main__":
    main()
