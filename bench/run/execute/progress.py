"""Progress on stderr: a bar on a terminal, plain lines elsewhere (CI logs, pipes).

tqdm is optional: the measuring side must run with only the standard library and torch.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

from bench.schema import Status


def _fmt(seconds: float) -> str:
    seconds = max(0, int(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s"


#: What ``Runner`` reports for a replicate whose row the store could not take: the run stops
#: there, and no row says it failed.
NOT_WRITTEN = "not written"


class Progress:
    """Counts ok and failed replicates and shows the current cell and an ETA."""

    def __init__(self, total: int, stream: TextIO | None = None,
                 clock: Any = time.monotonic) -> None:
        self.total = total
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.start = clock()
        self.done = self.ok = self.failed = 0
        self._bar: Any = None
        if self.stream.isatty():
            try:
                from tqdm import tqdm

                self._bar = tqdm(total=total, file=self.stream, unit="rep", dynamic_ncols=True)
            except ImportError:
                self._bar = None

    def more(self, n: int) -> None:
        """``n`` more processes than planned (adaptive replicates): the total grows."""
        self.total += n
        if self._bar is not None:
            self._bar.total = self.total
            self._bar.refresh()

    def begin(self, label: str) -> None:
        if self._bar is not None:
            self._bar.set_description_str(label[:60])
            self._bar.set_postfix_str(f"ok={self.ok} failed={self.failed}")

    def end(self, label: str, status: str) -> None:
        self.done += 1
        if status in (Status.OK, Status.SKIPPED):
            self.ok += status == Status.OK
        elif status != NOT_WRITTEN:
            self.failed += 1
        if self._bar is not None:
            self._bar.set_postfix_str(f"ok={self.ok} failed={self.failed}")
            self._bar.update(1)
            return
        elapsed = self.clock() - self.start
        eta = elapsed / self.done * (self.total - self.done) if self.done else 0.0
        print(f"[{self.done}/{self.total}] {status:<11} {label}  "
              f"(ok={self.ok} failed={self.failed}, elapsed {_fmt(elapsed)}, eta {_fmt(eta)})",
              file=self.stream, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
