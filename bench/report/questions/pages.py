"""From page models to pages: every question's view, in one pass over the answers.

Each question's ``view.py`` takes the :class:`~bench.report.questions.answers.Answers` of the
judging step, draws its page's charts and renders its template through a
:class:`~bench.report.render.writer.Writer`. Nothing there decides what is true: verdicts,
counts, which rows answer and which verdict a headline carries come from the question's page
model (``model.py``). What several pages say alike is in :mod:`bench.report.render.words`.
This module is the entry: :func:`render_all`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.report import fmt, parallel
from bench.report.judge import CONFIDENCE, DELTA
from bench.report.questions.answers import Answers
from bench.report.questions.claims.view import claims_page
from bench.report.questions.compare.view import compare_page
from bench.report.questions.compile.view import compile_page
from bench.report.questions.constants.view import constants_page, provenance_snippet
from bench.report.questions.cpu_gpu.view import cpu_gpu_page
from bench.report.questions.cudnn.view import cudnn_page
from bench.report.questions.data.view import copy_runs, data_page, write_downloads
from bench.report.questions.determinism.view import determinism_page
from bench.report.questions.feeding.view import feeding_page
from bench.report.questions.home.view import home_page
from bench.report.questions.machines.view import cells_fragments, machine_pages
from bench.report.questions.methodology.view import methodology_snippets
from bench.report.questions.precision.view import precision_page
from bench.report.questions.shapes.view import shapes_page
from bench.report.render.buildinfo import BuildInfo
from bench.report.render.words.files import Copies
from bench.report.render.words.recommendations import write_decisions
from bench.report.render.writer import Chart, Writer

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
        copied = copy_runs(w, answers.data, reports_root)
        return copied, machine_pages(w, answers.machine_pages, answers.shared, copied, build)

    jobs: list[Callable[[Writer], Any]] = [
        *cells_fragments(answers.machine_pages),
        machines,
        lambda w: write_downloads(w, answers.data),
        lambda w: cudnn_page(w, answers.cudnn, answers.shared, common),
        lambda w: precision_page(w, answers.precision, answers.shared, common),
        lambda w: shapes_page(w, answers.shapes, answers.shared, common),
        lambda w: write_decisions(w, answers.decisions),
        lambda w: home_page(w, answers.home, answers.shared, common),
        lambda w: determinism_page(w, answers.determinism, answers.shared, common),
        lambda w: cpu_gpu_page(w, answers.cpu_gpu, answers.shared, common),
        lambda w: compare_page(w, answers.compare, answers.shared, common),
        lambda w: compile_page(w, answers.compiled, answers.shared, common),
        lambda w: feeding_page(w, answers.feeding, answers.shared, common),
        lambda w: claims_page(w, answers.claims, answers.shared, build),
        lambda w: constants_page(w, common),
        lambda w: methodology_snippets(w, answers.methodology, answers.shared),
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
    data_page(writer, answers.data, answers.shared, copied, writer.written, build)
    return list(nav)
