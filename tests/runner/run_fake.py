"""Run a sweep of the fake technique into a store, as a separate process (resume/concurrency tests).

Usage: python run_fake.py STORE N DELAY [JOBS]
"""

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(1, str(HERE.parent))  # plugin_context
os.environ["SUITE_PROFILES"] = str(HERE / "profiles")

import fakeplugin  # noqa: E402
from suite.results import Store  # noqa: E402
from suite.runner import ExecOptions, expand_entry, run_cases  # noqa: E402
from plugin_context import plugin_context  # noqa: E402


def main() -> None:
    store_path, n, delay = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
    jobs = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    context = plugin_context(("fake", fakeplugin))
    exp = expand_entry({"technique": "fake", "variants": ["base"], "params": {"n": list(range(1, n + 1)),
                                                                            "delay": [delay]}}, context=context)
    store = Store(store_path, batch_size=10, batch_seconds=0.1)
    s = run_cases(exp.cases, store, options=ExecOptions(jobs=jobs), context=context)
    store.close()
    if s.interrupted:
        print(s.message(), file=sys.stderr)
        sys.exit(130)
    print(f"computed={s.computed} cached={s.cached} ok={s.ok}")


if __name__ == "__main__":
    main()
