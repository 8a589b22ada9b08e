"""From page models to pages: which words, tables, charts and links show each answer.

Each ``*_page`` function takes the :class:`bench.report.judge.Answers` of the judging step,
draws its page's charts and renders its template through a :class:`bench.report.writer.Writer`.
Numbers are formatted here (``fmt``), text from the data stays plain ``str`` and is escaped by
the template environment; only links, anchors and badges are pre-built
:class:`~bench.report.escape.Md`.

Nothing here decides what is true: verdicts, counts, which rows answer and which verdict a
headline carries come from the page models of :mod:`bench.report.judge.pages`. This package
only chooses how to show them, and says so plainly when a section has no data.

One module per page (``cudnn``, ``shapes``, ``determinism``, ``precision``, ``cpu_gpu``,
``compiled``, ``machines``, ``data``, ``compare``, ``claims``, ``home``, ``constants``); page
modules do not import each other. What several pages share has a module of its own:
``context`` (a page's links and a machine's heading), ``frames`` (reading tables row by row),
``labels`` (configurations in words), ``costs`` (one-off costs in words), ``comparisons``
(capped tables, CSVs and speedup charts), ``sentences`` (advice in words),
``recommendations`` (the advice lists), ``claim_words`` (a claim's verdict in words) and
``files`` (the run files copied into the site). This module is the entry: :func:`render_all`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.report import fmt, parallel
from bench.report.buildinfo import BuildInfo
from bench.report.judge import CONFIDENCE, DELTA, Answers
from bench.report.views.claims import claims_page
from bench.report.views.compare import compare_page
from bench.report.views.compiled import compile_page
from bench.report.views.constants import constants_page, provenance_snippet
from bench.report.views.cpu_gpu import cpu_gpu_page
from bench.report.views.cudnn import cudnn_page
from bench.report.views.data import data_page
from bench.report.views.determinism import determinism_page
from bench.report.views.feeding import feeding_page
from bench.report.views.files import Copies, copy_runs
from bench.report.views.home import home_page
from bench.report.views.machines import cells_fragments, machine_pages
from bench.report.views.precision import precision_page
from bench.report.views.recommendations import write_decisions
from bench.report.views.shapes import shapes_page
from bench.report.writer import Chart, Writer

__all__ = ["render_all"]


def render_all(answers: Answers, reports_root: Path, writer: Writer, build: BuildInfo
               ) -> list[tuple[str, str]]:
    """Render every page; returns the machine pages' navigation entries (title, path).

    The pages are independent of each other, so :func:`bench.report.parallel.fork_map` shares
    them with a second process, each job writing through a :class:`Writer` of its own whose
    files and charts join ``writer``'s. Only the data page waits for the rest: it lists every
    computed CSV. The slowest jobs come first, so the last one handed out is a quick one.
    """
    common = {"delta_pct": fmt.pct(DELTA), "confidence_pct": fmt.pct(CONFIDENCE),
              "build": build}

    def machines(w: Writer) -> tuple[Copies, list[tuple[str, str]]]:
        copied = copy_runs(w, answers.data.source, reports_root)
        return copied, machine_pages(w, answers, copied, build)

    jobs: list[Callable[[Writer], Any]] = [
        *cells_fragments(answers),
        machines,
        lambda w: cudnn_page(w, answers, common),
        lambda w: precision_page(w, answers, common),
        lambda w: shapes_page(w, answers, common),
        lambda w: write_decisions(w, answers.decisions),
        lambda w: home_page(w, answers, common),
        lambda w: determinism_page(w, answers, common),
        lambda w: cpu_gpu_page(w, answers, common),
        lambda w: compare_page(w, answers, common),
        lambda w: compile_page(w, answers, common),
        lambda w: feeding_page(w, answers, common),
        lambda w: claims_page(w, answers, build),
        lambda w: constants_page(w, common),
        lambda w: provenance_snippet(w, build, []),  # hand-written pages cite no row
    ]

    def run(job: Callable[[Writer], Any]) -> tuple[list[Path], list[Chart], Any]:
        own = Writer(writer.docs_dir, writer.env)
        value = job(own)
        return own.written, own.charts, value

    outcomes = parallel.fork_map(run, jobs)
    for written, charts, _ in outcomes:
        writer.written += written
        writer.charts += charts
    copied, nav = outcomes[jobs.index(machines)][2]
    data_page(writer, answers, copied, writer.written, build)
    return list(nav)
