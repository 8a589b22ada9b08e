"""From statistics to page contexts: which rows, in which order, with which words and links.

Each ``*_page`` function takes the frames computed by :mod:`bench.report.stats` (and the
recommendations of :mod:`bench.report.advice`), draws its charts and renders its template
through a :class:`bench.report.pages.Writer`. Numbers are formatted here (``fmt``), text from
the data stays plain ``str`` and is escaped by the template environment; only links, anchors
and badges are pre-built :class:`~bench.report.escape.Md`.

Nothing here decides what is true: verdicts, CIs, break-even and crossovers come from
``stats``, advice from ``advice``. This package only chooses how to show them, and says so
plainly when a section has no data.

One module per page (``cudnn``, ``shapes``, ``determinism``, ``precision``, ``cpu_gpu``,
``machines``, ``data``, ``compare``, ``home``, ``constants``); what several pages share is in
``common`` and ``recommendations``. This module is the entry: :func:`render_all`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.report import advice, fmt, sentences, stats
from bench.report.pages import Writer
from bench.report.views.common import Inputs, link_labels, machines_of
from bench.report.views.compare import compare_page
from bench.report.views.constants import constants_page
from bench.report.views.cpu_gpu import cpu_gpu_page
from bench.report.views.cudnn import cudnn_page
from bench.report.views.data import data_page
from bench.report.views.determinism import determinism_page
from bench.report.views.home import home_page
from bench.report.views.machines import machine_pages
from bench.report.views.precision import precision_page
from bench.report.views.recommendations import write_decisions
from bench.report.views.shapes import shapes_page

__all__ = ["Inputs", "compute", "render_all"]


def compute(dataset: Any) -> Inputs:
    analysis = stats.analyse(dataset)
    recs = advice.recommend(analysis)
    machines = machines_of(analysis.machines)
    return Inputs(
        dataset=dataset,
        a=analysis,
        machines=machines,
        recs=recs,
        regimes=sentences.regimes(recs),
        decisions=advice.decision_table(recs),
        status={
            (str(f), str(c)): str(t)
            for f, c, t in zip(
                analysis.cells["fingerprint_id"].to_numpy(dtype=object),
                analysis.cells["cell_id"].to_numpy(dtype=object),
                analysis.cells["status_summary"].to_numpy(dtype=object),
            )
        },
        labels=link_labels(machines),
    )


def render_all(
    dataset: Any, reports_root: Path, writer: Writer, *, prices: Path | None
) -> list[tuple[str, str]]:
    """Render every page; returns the machine pages' navigation entries (title, path)."""
    data = compute(dataset)
    common = {"delta_pct": fmt.pct(stats.DELTA), "confidence_pct": fmt.pct(stats.CONFIDENCE)}
    write_decisions(writer, data.decisions)
    constants_page(writer, common)
    cudnn_page(writer, data, common)
    shapes_page(writer, data, common)
    determinism_page(writer, data, common)
    precision_page(writer, data, common)
    cpu_gpu_page(writer, data, common)
    compare_page(writer, data, common, prices)
    copied = data_page(writer, data, reports_root)
    nav = machine_pages(writer, data, copied)
    home_page(writer, data, common)
    return nav
