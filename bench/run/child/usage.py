"""CPU time and memory of a process tree: this process and its DataLoader workers.

Why the tree: with workers, the decoding happens in child processes, so the process's own
figures (``resource.getrusage(RUSAGE_SELF)``, ``ru_maxrss``) miss most of the work. psutil
reads the live children; it is optional. Without it, a pipeline without workers is still
measured (its work is all in this process), and one with workers leaves the two figures empty
with a note saying why, never a guess.
"""

from __future__ import annotations

import resource
import sys
import time
from typing import Any

#: How often, at most, the tree's memory is sampled while batches are timed (seconds): often
#: enough to see a peak that lasts a batch, rarely enough not to slow the loop.
POLL_S = 0.25
NO_PSUTIL = ("psutil is not installed: the loader workers' CPU time and peak memory are not "
             "measured (pip install psutil)")


def _psutil() -> Any | None:
    try:
        import psutil
    except ImportError:
        return None
    return psutil


def _self_cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def _self_peak_rss() -> float:
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return float(rss if sys.platform == "darwin" else rss * 1024)


class Tree:
    """Samples of the process tree: ``start()``, ``poll()`` while it runs, ``stop()``."""

    def __init__(self, workers: int) -> None:
        self.workers = workers
        self.psutil = _psutil()
        self.peak_rss: float | None = None
        self._cpu0: float | None = None
        self.cpu_s: float | None = None
        self._last_poll = 0.0

    @property
    def note(self) -> str:
        """Why the figures are empty, or empty when they are not."""
        return NO_PSUTIL if self.psutil is None and self.workers > 0 else ""

    def _procs(self) -> list[Any]:
        assert self.psutil is not None
        me = self.psutil.Process()
        return [me, *me.children(recursive=True)]

    def _cpu(self) -> float | None:
        if self.psutil is None:
            return _self_cpu_s() if self.workers == 0 else None
        total = 0.0
        for p in self._procs():
            try:
                t = p.cpu_times()
            except self.psutil.Error:  # a worker that ended between listing and reading
                continue
            total += t.user + t.system
        return total

    def poll(self, force: bool = False) -> None:
        """Keep the tree's largest resident memory so far."""
        now = time.monotonic()
        if not force and now - self._last_poll < POLL_S:
            return
        self._last_poll = now
        if self.psutil is None:
            if self.workers == 0:
                self.peak_rss = _self_peak_rss()
            return
        total = 0.0
        for p in self._procs():
            try:
                total += p.memory_info().rss
            except self.psutil.Error:
                continue
        self.peak_rss = max(self.peak_rss or 0.0, total)

    def start(self) -> None:
        self._cpu0 = self._cpu()
        self.poll(force=True)

    def stop(self) -> None:
        end = self._cpu()
        self.poll(force=True)
        if self._cpu0 is not None and end is not None:
            self.cpu_s = max(0.0, end - self._cpu0)
