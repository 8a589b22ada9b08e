"""Judging: every decision the site and ``bench advise`` state, made once from the analysis.

``judge(analysis)`` runs the advice (a rule per setting and regime), the claims (a rule per
piece of popular advice) and one page model per page, and returns them as :class:`Answers`.
Views only format what it hands them: which rows answer a question
(:mod:`~bench.report.judge.selection`), what a machine's pairs add up to, and which verdict a
headline carries are decided here, in the typed words of :mod:`bench.report.vocabulary`.

- :mod:`~bench.report.judge.advice`: the recommendation rules;
- :mod:`~bench.report.judge.claims`: popular advice, held against the measurements;
- :mod:`~bench.report.judge.asks`: the pairs ``bench advise`` names, judged the report's way;
- :mod:`~bench.report.judge.pages`: one frozen page model per page, built from one
  :class:`~bench.report.judge.facts.Facts`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from bench.report.analysis import CONFIDENCE, DELTA, MIN_OK_REPLICATES, Analysis
from bench.report.analysis.pairs import not_slower, within_band
from bench.report.judge import advice, claims
from bench.report.judge.advice import Recommendation
from bench.report.judge.claims import ClaimAnswer, Finding
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, link_labels, machines_of
from bench.report.judge.pages.claims import ClaimsPage, claims_page
from bench.report.judge.pages.compiled import CompilePage, compile_page
from bench.report.judge.pages.cudnn import CudnnPage, cudnn_page
from bench.report.judge.pages.feeding import FeedingPage, feeding_page
from bench.report.judge.pages.home import HomePage, home_page
from bench.report.judge.pages.machines import (
    ComparePage,
    DataPage,
    MachinePages,
    compare_page,
    data_page,
    machine_pages,
)
from bench.report.judge.pages.studies import (
    CpuGpuPage,
    DeterminismPage,
    PrecisionPage,
    ShapesPage,
    cpu_gpu_page,
    determinism_page,
    precision_page,
    shapes_page,
)
from bench.report.judge.regimes import Regime, regimes

__all__ = [
    "CONFIDENCE", "DELTA", "MIN_OK_REPLICATES", "Answers", "ClaimAnswer", "Finding", "Machine",
    "Recommendation", "Regime", "judge", "not_slower", "within_band",
]  # fmt: skip


@dataclass(frozen=True)
class Answers:
    """Everything the pages show, judged: what every page shares about the machines, then one
    model per page."""

    machines: dict[str, Machine]
    labels: dict[str, str]  # link text per machine page where its name alone is ambiguous
    status: dict[tuple[str, str], str]  # (fingerprint, cell id) → "2 ok, 1 crash"
    decisions: pd.DataFrame = field(repr=False)  # advice.decision_table: every decision
    build_epoch: int  # the newest timestamp of the data, as a Unix time (0: none)
    home: HomePage
    cudnn: CudnnPage
    precision: PrecisionPage
    shapes: ShapesPage
    determinism: DeterminismPage
    cpu_gpu: CpuGpuPage
    compiled: CompilePage
    feeding: FeedingPage
    compare: ComparePage
    claims: ClaimsPage
    machine_pages: MachinePages
    data: DataPage


def _status(cells: pd.DataFrame) -> dict[tuple[str, str], str]:
    return {(str(f), str(c)): str(t) for f, c, t in zip(
        cells["fingerprint_id"].to_numpy(dtype=object), cells["cell_id"].to_numpy(dtype=object),
        cells["status_summary"].to_numpy(dtype=object))}


def _epoch(results: pd.DataFrame) -> int:
    """The latest ``ended_at`` in the data as a Unix time, so the same input builds the same
    site (0 when there is none)."""
    if results.empty:
        return 0
    values = pd.to_datetime(results["ended_at"].loc[results["ended_at"] != ""], utc=True,
                            errors="coerce").dropna()
    return int(values.max().timestamp()) if len(values) else 0


def judge(analysis: Analysis, *, prices: Path | None = None) -> Answers:
    """Every answer ``analysis`` supports (``prices``: a prices file for the Compare page;
    :class:`bench.report.prices.PriceError` when it cannot be used)."""
    recs = advice.recommend(analysis)
    machines = machines_of(analysis.machines)
    facts = Facts(analysis=analysis, machines=machines, recs=tuple(recs),
                  regimes=tuple(regimes(recs)), claims=tuple(claims.evaluate(analysis)))
    judged_claims = claims_page(facts)
    return Answers(
        machines=machines,
        labels=link_labels(machines),
        status=_status(analysis.cells),
        decisions=advice.decision_table(recs),
        build_epoch=_epoch(analysis.source.results),
        home=home_page(facts, judged_claims),
        cudnn=cudnn_page(facts),
        precision=precision_page(facts),
        shapes=shapes_page(facts),
        determinism=determinism_page(facts),
        cpu_gpu=cpu_gpu_page(facts),
        compiled=compile_page(facts),
        feeding=feeding_page(facts),
        compare=compare_page(facts, prices),
        claims=judged_claims,
        machine_pages=machine_pages(facts),
        data=data_page(facts),
    )
