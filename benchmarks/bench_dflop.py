"""DFLOP benchmark: scheduler cost against the modelled step, plan search time, model cases/s.

The measurements live with the plugin (``suite_dflop.bench``) so a third-party copy of the plugin
carries them; this is the entry point beside the other benchmarks::

    python benchmarks/bench_dflop.py
"""

from suite_dflop.bench import main

if __name__ == "__main__":
    main()
