"""Render the generated part of the site from the judged answers: the step between judging
and ``mkdocs build``.

It wipes ``<docs_dir>/generated/`` (see :mod:`bench.report.render.paths` for its layout), renders
every page through :mod:`bench.report.questions.pages`, and tells the later steps what they
need: the charts still to draw, the machine pages' navigation and a build time taken from the data,
so that the same input gives the same site.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from bench.report.questions import pages as views
from bench.report.questions.answers import Answers
from bench.report.render.buildinfo import BuildInfo, build_info
from bench.report.render.markdown import environment
from bench.report.render.paths import GENERATED
from bench.report.render.writer import Chart, Writer


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


def render(answers: Answers, reports_root: Path, generated: Path,
           build: BuildInfo | None = None) -> SiteResult:
    """Render every generated page of ``answers`` into ``generated`` (the run files they cite
    are copied from ``reports_root``; ``build``: the commit and day every page names, this
    checkout's by default). The charts are left to draw: ``SiteResult.charts`` (see
    :mod:`bench.report.render.drawing`)."""
    reset(generated)
    writer = Writer(generated.parent, environment())
    nav = views.render_all(answers, Path(reports_root), writer, build or build_info())
    return SiteResult(machine_nav=nav, build_epoch=answers.build_epoch,
                      written=list(writer.written), charts=writer.charts)
