"""PFedDST benchmark: scoring time over local training time per round, model cases/s at 100 clients.

The measurements live with the plugin (``suite_pfeddst.bench``); this is the entry point beside
the other benchmarks::

    OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 python benchmarks/bench_pfeddst.py
"""

from suite_pfeddst.bench import main

if __name__ == "__main__":
    main()
