"""Render the generated part of the site from a loaded dataset: the step between loading and
``mkdocs build``.

It wipes ``<docs_dir>/generated/`` (see :mod:`bench.report.paths` for its layout), renders
every page through :mod:`bench.report.views` while charts draw in worker processes, and tells
the MkDocs step what it needs: the machine pages' navigation and a build time taken from the
data, so that the same input gives the same site.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import os
import shutil
import sys
from collections.abc import Iterable, Iterator
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from bench.report import views
from bench.report.load import Dataset
from bench.report.pages import environment
from bench.report.paths import GENERATED
from bench.report.writer import Writer


@dataclass
class SiteResult:
    """What the MkDocs step needs to know about the rendered pages."""

    machine_nav: list[tuple[str, str]] = field(default_factory=list)
    build_epoch: int = 0
    written: list[Path] = field(default_factory=list)


def reset(generated: Path) -> None:
    """Empty the generated folder (it is rebuilt from scratch every time)."""
    if generated.name != GENERATED:
        raise ValueError(f"refusing to wipe {generated}: not a {GENERATED!r} folder")
    if generated.exists():
        shutil.rmtree(generated)
    generated.mkdir(parents=True)


def epoch_of(timestamps: Iterable[str]) -> int:
    """The latest timestamp in the data as a Unix time (0 when there is none)."""
    values = pd.to_datetime(pd.Series([t for t in timestamps if t]), utc=True, errors="coerce")
    values = values.dropna()
    if values.empty:
        return 0
    latest = values.max()
    return int(latest.timestamp()) if not math.isnan(latest.timestamp()) else 0


@contextlib.contextmanager
def chart_pool() -> Iterator[Executor | None]:
    """Worker processes for charts where forking is safe and there is a core to spare."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else 1
    if sys.platform != "linux" or cores < 2:
        yield None
        return
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=min(cores - 1, 3), mp_context=context) as pool:
        yield pool


def render_site(
    dataset: Dataset, reports_root: Path, generated: Path, *, prices: Path | None = None
) -> SiteResult:
    """Render every generated page and chart from ``dataset`` into ``generated``."""
    reset(generated)
    with chart_pool() as pool:
        writer = Writer(generated.parent, environment(), pool)
        nav = views.render_all(dataset, Path(reports_root), writer, prices=prices)
        writer.finish()
    epoch = epoch_of(dataset.results["ended_at"].tolist()) if len(dataset.results) else 0
    return SiteResult(machine_nav=nav, build_epoch=epoch, written=list(writer.written))
