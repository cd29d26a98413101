"""Progress reporting for a run: a rich bar on a terminal, plain periodic lines otherwise."""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

__all__ = ["Progress", "NullProgress", "PlainProgress", "RichProgress", "make_progress"]


class Progress:
    """Counts what a run has done; subclasses show it."""

    def __init__(self) -> None:
        self.total = self.done = self.failed = self.cached = self.skipped = self.refresh = 0
        self.t0 = time.monotonic()

    def start(self, total: int, cached: int, refresh: int = 0) -> None:
        """The run begins: *total* cases, *cached* of them stored ok, *refresh* of those to compute
        stored ok without some of their artifacts (computed again to keep them all)."""
        self.total, self.cached, self.refresh = total, cached, refresh
        self.t0 = time.monotonic()

    def add_cached(self, cached: int, total: int) -> None:
        """A later chunk of a lazily expanded sweep: *cached* more cases found stored, and the
        total known so far (never lowered)."""
        self.cached += cached
        self.total = max(self.total, total)

    def update(self, status: str) -> None:
        self.done += 1
        if status in ("failed", "timeout", "crashed"):
            self.failed += 1
        elif status == "skipped":
            self.skipped += 1

    def stop(self) -> None:
        pass

    # -- derived
    @property
    def to_compute(self) -> int:
        return self.total - self.cached

    def rate(self) -> float:
        dt = time.monotonic() - self.t0
        return self.done / dt if dt > 0 else 0.0

    def eta(self) -> float | None:
        r = self.rate()
        return (self.to_compute - self.done) / r if r > 0 else None

    def line(self) -> str:
        eta = self.eta()
        return (f"progress: {self.done}/{self.to_compute} computed ({self.failed} failed, {self.skipped} skipped), "
                f"{self.cached} cached, {self.rate():.1f} cases/s"
                + (f", ETA {_fmt_s(eta)}" if eta is not None and self.done < self.to_compute else ""))


def _fmt_s(s: float) -> str:
    if s < 60:
        return f"{s:.0f} s"
    if s < 3600:
        return f"{s / 60:.1f} min"
    return f"{s / 3600:.1f} h"


class NullProgress(Progress):
    """``--quiet``: count, show nothing."""


class PlainProgress(Progress):
    """One line every *every* seconds on *stream* (not a terminal: logs, CI)."""

    def __init__(self, stream: TextIO | None = None, every: float = 5.0) -> None:
        super().__init__()
        self.stream = stream or sys.stderr
        self.every = every
        self._last = 0.0

    def start(self, total: int, cached: int, refresh: int = 0) -> None:
        super().start(total, cached, refresh)
        self._last = time.monotonic()
        why = f" ({refresh} stored without all their artifacts)" if refresh else ""
        print(f"run: {total} case(s): {cached} already stored, {total - cached} to compute{why}", file=self.stream,
              flush=True)

    def update(self, status: str) -> None:
        super().update(status)
        now = time.monotonic()
        if now - self._last >= self.every:
            self._last = now
            print(self.line(), file=self.stream, flush=True)


class RichProgress(Progress):
    """A rich progress bar: done/failed/cached counts, rate and ETA."""

    def __init__(self) -> None:
        super().__init__()
        self._bar: Any = None
        self._task: Any = None
        self._last = 0.0

    def start(self, total: int, cached: int, refresh: int = 0) -> None:
        super().start(total, cached, refresh)
        from rich.console import Console
        from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RP, TextColumn,
                                   TimeElapsedColumn, TimeRemainingColumn)

        self._bar = RP(TextColumn("[bold]run"), BarColumn(), MofNCompleteColumn(),
                       TextColumn("failed {task.fields[failed]}  skipped {task.fields[skipped]}  cached {task.fields[cached]}"),
                       TextColumn("{task.fields[rate]}"), TimeElapsedColumn(), TextColumn("ETA"), TimeRemainingColumn(),
                       console=Console(stderr=True), transient=False)
        self._bar.start()
        self._task = self._bar.add_task("run", total=max(total - cached, 0), failed=0, skipped=0, cached=cached, rate="")

    def add_cached(self, cached: int, total: int) -> None:
        super().add_cached(cached, total)
        if self._bar is not None:
            self._bar.update(self._task, total=max(self.total - self.cached, 0), cached=self.cached)

    def update(self, status: str) -> None:
        super().update(status)
        now = time.monotonic()
        if now - self._last >= 0.1 or self.done == self.to_compute:
            self._last = now
            self._bar.update(self._task, completed=self.done, failed=self.failed, skipped=self.skipped,
                             rate=f"{self.rate():.0f}/s")

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, failed=self.failed, skipped=self.skipped,
                             rate=f"{self.rate():.0f}/s")
            self._bar.stop()
            self._bar = None


def make_progress(quiet: bool = False, stream: TextIO | None = None) -> Progress:
    """Null when *quiet*, rich on a terminal, plain lines otherwise."""
    if quiet:
        return NullProgress()
    stream = stream or sys.stderr
    if getattr(stream, "isatty", lambda: False)():
        return RichProgress()
    return PlainProgress(stream)
