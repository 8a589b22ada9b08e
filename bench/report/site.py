"""Render the generated part of the site from a loaded dataset: the step between loading and
``mkdocs build``.

It wipes ``<docs_dir>/generated/`` (see :mod:`bench.report.paths` for its layout), renders
every page through :mod:`bench.report.views`, and tells the later steps what they need: the
charts still to draw, the machine pages' navigation and a build time taken from the data, so
that the same input gives the same site.
"""

from __future__ import annotations

import math
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from bench.report import views
from bench.report.load import Dataset
from bench.report.pages import environment
from bench.report.paths import GENERATED
from bench.report.writer import Chart, Writer


@dataclass
class SiteResult:
    """What the MkDocs step needs to know about the rendered pages."""

    machine_nav: list[tuple[str, str]] = field(default_factory=list)
    build_epoch: int = 0
    written: list[Path] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)  # still to draw: their files are empty


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


def render_site(
    dataset: Dataset, reports_root: Path, generated: Path, *, prices: Path | None = None
) -> SiteResult:
    """Render every generated page from ``dataset`` into ``generated``.

    The charts are left to draw: ``SiteResult.charts`` (see :mod:`bench.report.drawing`).
    """
    reset(generated)
    writer = Writer(generated.parent, environment())
    nav = views.render_all(dataset, Path(reports_root), writer, prices=prices)
    epoch = epoch_of(dataset.results["ended_at"].tolist()) if len(dataset.results) else 0
    return SiteResult(
        machine_nav=nav, build_epoch=epoch, written=list(writer.written), charts=writer.charts
    )
