"""Draw the site's charts in worker processes, while MkDocs reads the pages.

Why: matplotlib is the slowest part of a build, and MkDocs runs on one core. The pages are
rendered first (each chart as an empty file and a :class:`~bench.report.render.writer.Chart` job);
the charts are then drawn here while MkDocs builds the pages, and MkDocs copies them into the
site last (``bench.report.render.mkdocs_hooks``). Where forking is not
safe or not useful (:func:`bench.report.parallel.can_fork`), every chart is drawn at once, in
this process, before MkDocs starts.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor

from bench.report import parallel
from bench.report.render.writer import Chart

#: At most this many processes draw. One per core, MkDocs beside them: MkDocs waits for the
#: charts at its end, so a core kept for it alone would idle once it is done, and on a tree of
#: many machines the charts take the longer.
MAX_WORKERS = 3


class Drawing:
    """Charts being drawn; :meth:`wait` returns when all are done."""

    def __init__(self, futures: Sequence[Future[object]] = ()) -> None:
        self.futures = list(futures)

    def wait(self) -> None:
        """Wait for every chart; re-raise the first failure, in the order the pages drew them."""
        for future in self.futures:
            future.result()


@contextlib.contextmanager
def drawing(charts: Sequence[Chart]) -> Iterator[Drawing]:
    """Draw ``charts`` in the background for the duration of the block (see the module).

    Leaving the block waits for every chart: none is left half-written behind it, and a failure
    the block did not see through :meth:`Drawing.wait` is raised here.
    """
    if not charts or not parallel.can_fork():
        for chart in charts:
            chart()
        yield Drawing()
        return
    workers = min(len(os.sched_getaffinity(0)), MAX_WORKERS, len(charts))
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        pending = Drawing([pool.submit(chart) for chart in charts])
        try:
            yield pending
        except BaseException:
            for future in pending.futures:
                future.cancel()
            raise
        pending.wait()
