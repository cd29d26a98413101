"""Deprecated alias of :mod:`suite.perf.network.collective` (moved in 0.3.0; removed in 0.4.0)."""

from suite.perf.network._moved import moved

__getattr__, __all__ = moved(__name__, ("suite.perf.network.collective", "suite.perf.network.placement",
                                            "suite.perf.network.multilevel", "suite.perf.network.flat"))
