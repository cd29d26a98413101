"""Reports: one self-contained HTML file per run (tables, matplotlib plots, the scoreboard).

Public API::

    from suite.report import build_report, write_report
    write_report("results/suite.sqlite", "latest", "report.html")
"""

from suite.report.html import build_report, write_report

__all__ = ["build_report", "write_report"]
