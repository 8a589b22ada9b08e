"""From statistics to page contexts: which rows, in which order, with which words and links.

Each ``*_page`` function takes the tables computed by :mod:`bench.report.analysis` (and the
recommendations of :mod:`bench.report.advice`), draws its charts and renders its template
through a :class:`bench.report.writer.Writer`. Numbers are formatted here (``fmt``), text from
the data stays plain ``str`` and is escaped by the template environment; only links, anchors
and badges are pre-built :class:`~bench.report.escape.Md`.

Nothing here decides what is true: verdicts, CIs, break-even and crossovers come from
``analysis``, advice from ``advice``. This package only chooses how to show them, and says so
plainly when a section has no data.

One module per page (``cudnn``, ``shapes``, ``determinism``, ``precision``, ``cpu_gpu``,
``compiled``, ``machines``, ``data``, ``compare``, ``claims``, ``home``, ``constants``). What
several pages share has a module of its own: ``inputs`` (what every page is rendered from),
``frames`` (reading tables row by row), ``labels`` (configurations in words), ``costs``
(one-off costs in words), ``comparisons`` (capped tables, CSVs and speedup charts),
``sentences`` (advice in words) and ``recommendations`` (the advice lists).
This module is the entry: :func:`render_all`.
"""

from __future__ import annotations

from pathlib import Path

from bench.report import analysis, fmt
from bench.report.load import Dataset
from bench.report.views.claims import claims_page
from bench.report.views.compare import compare_page
from bench.report.views.compiled import compile_page
from bench.report.views.constants import constants_page
from bench.report.views.cpu_gpu import cpu_gpu_page
from bench.report.views.cudnn import cudnn_page
from bench.report.views.data import data_page
from bench.report.views.determinism import determinism_page
from bench.report.views.home import home_page
from bench.report.views.inputs import Inputs, compute
from bench.report.views.machines import machine_pages
from bench.report.views.precision import precision_page
from bench.report.views.recommendations import write_decisions
from bench.report.views.shapes import shapes_page
from bench.report.writer import Writer

__all__ = ["Inputs", "compute", "render_all"]


def render_all(
    dataset: Dataset, reports_root: Path, writer: Writer, *, prices: Path | None
) -> list[tuple[str, str]]:
    """Render every page; returns the machine pages' navigation entries (title, path)."""
    data = compute(dataset)
    common = {
        "delta_pct": fmt.pct(analysis.DELTA),
        "confidence_pct": fmt.pct(analysis.CONFIDENCE),
    }
    write_decisions(writer, data.decisions)
    constants_page(writer, common)
    cudnn_page(writer, data, common)
    shapes_page(writer, data, common)
    determinism_page(writer, data, common)
    precision_page(writer, data, common)
    cpu_gpu_page(writer, data, common)
    compile_page(writer, data, common)
    compare_page(writer, data, common, prices)
    claims_page(writer, data)
    copied = data_page(writer, data, reports_root)
    nav = machine_pages(writer, data, copied)
    home_page(writer, data, common)
    return nav
