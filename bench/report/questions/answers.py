"""Every question judged: ``judge(analysis)`` runs the advice, the claims and each question's
page model (``questions/<page>/model.py``) from one :class:`~bench.report.judge.facts.Facts`,
and returns them as :class:`Answers`, what the views format."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import NoReturn, cast

import pandas as pd

from bench.report import parallel
from bench.report.analysis import CONFIDENCE, DELTA, MIN_OK_REPLICATES, Analysis
from bench.report.judge import advice, claims
from bench.report.judge.advice import Recommendation
from bench.report.judge.advice.record import decisions_as_text
from bench.report.judge.claims import ClaimAnswer, Finding
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, link_labels, machines_of
from bench.report.judge.regimes import Regime, regimes
from bench.report.judge.rows import Table
from bench.report.questions.claims.model import ClaimsPage, claims_page
from bench.report.questions.compare.model import ComparePage, compare_page
from bench.report.questions.compile.model import CompilePage, compile_page
from bench.report.questions.cpu_gpu.model import CpuGpuPage, cpu_gpu_page
from bench.report.questions.cudnn.model import CudnnPage, cudnn_page
from bench.report.questions.data.model import DataPage, data_page
from bench.report.questions.determinism.model import DeterminismPage, determinism_page
from bench.report.questions.feeding.model import FeedingPage, feeding_page
from bench.report.questions.home.model import HomePage, home_page
from bench.report.questions.machines.model import MachinePages, link_models, machine_pages
from bench.report.questions.methodology.model import MethodologyPage, methodology_page
from bench.report.questions.precision.model import PrecisionPage, precision_page
from bench.report.questions.shapes.model import ShapesPage, shapes_page

__all__ = [
    "CONFIDENCE", "DELTA", "MIN_OK_REPLICATES", "Answers", "ClaimAnswer", "Finding", "Machine",
    "Recommendation", "Regime", "Shared", "judge",
]  # fmt: skip



@dataclass(frozen=True)
class Shared:
    """What every page's view may read besides its own model: the machines, the link text per
    machine page where its name alone is ambiguous, and each cell's status in words."""

    machines: dict[str, Machine]
    labels: dict[str, str]
    status: dict[tuple[str, str], str]


@dataclass(frozen=True)
class Answers:
    """Everything the pages show, judged: what every page shares about the machines, then one
    model per page."""

    machines: dict[str, Machine]
    labels: dict[str, str]  # link text per machine page where its name alone is ambiguous
    status: dict[tuple[str, str], str]  # (fingerprint, cell id) → "2 ok, 1 crash"
    decisions: Table = field(repr=False)  # advice.decision_table: every decision, as text
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
    methodology: MethodologyPage  # the figures the hand-written Methodology page includes

    @property
    def shared(self) -> Shared:
        """What every view reads besides its own page model."""
        return Shared(self.machines, self.labels, self.status)


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


class _NotJudgedYet(tuple):  # type: ignore[type-arg]
    """The claims of the page models made while they are judged (``judge``): reading them
    there is a mistake, so it fails rather than reading no claims."""

    def _refuse(self, *_: object) -> NoReturn:
        raise RuntimeError("the claims are judged beside this page model; make it after them, "
                           "in judge's own part")

    __iter__ = __len__ = __getitem__ = _refuse  # type: ignore[assignment]


def judge(analysis: Analysis, *, prices: Path | None = None,
          yours: frozenset[str] = frozenset()) -> Answers:
    """Every answer ``analysis`` supports (``prices``: a prices file for the Compare page;
    :class:`bench.report.input.prices.PriceError` when it cannot be used), the reader's own
    machine first (``yours``: its fingerprint ids)."""
    recs = advice.recommend(analysis)
    machines = machines_of(analysis.machines, yours)
    early = Facts(analysis=analysis, machines=machines, recs=tuple(recs),
                  regimes=tuple(regimes(recs)), claims=_NotJudgedYet())
    # The page models are independent of each other: those that pickle and need no claim are
    # shared with a second core, the slowest first (on 500 synthetic runs: precision 5.6 s,
    # machines 4.6, ...), while this process judges the claims (4 s there) and makes the
    # models that read them (some hold findings whose texts are written lazily by closures
    # that do not pickle) and the data page, whose pooled rows (200 MB pickled) would take
    # longer to send back than to make; then it takes its share of the rest.
    link_models(early)  # before the fork: the pages link by it, made here or there
    models: dict[str, Callable[[], object]] = {
        "precision": lambda: precision_page(early),
        "machine_pages": lambda: machine_pages(early),
        "compare": lambda: compare_page(early, prices),
        "decisions": lambda: Table.of(decisions_as_text(advice.decision_table(recs))),
        "compiled": lambda: compile_page(early),
        "feeding": lambda: feeding_page(early),
        "methodology": lambda: methodology_page(early),
    }
    mine: dict[str, object] = {}

    def here() -> None:
        facts = replace(early, claims=tuple(claims.evaluate(analysis)))
        mine.update(home=home_page(facts), cudnn=cudnn_page(facts), cpu_gpu=cpu_gpu_page(facts),
                    determinism=determinism_page(facts), shapes=shapes_page(facts),
                    claims=claims_page(facts), data=data_page(facts))

    built = dict(zip(models, parallel.fork_map(lambda make: make(), list(models.values()),
                                               here=here)))
    return Answers(
        machines=machines,
        labels=link_labels(machines),
        status=_status(analysis.cells),
        build_epoch=_epoch(analysis.source.results),
        decisions=cast(Table, built["decisions"]),
        home=cast(HomePage, mine["home"]),
        cudnn=cast(CudnnPage, mine["cudnn"]),
        precision=cast(PrecisionPage, built["precision"]),
        shapes=cast(ShapesPage, mine["shapes"]),
        determinism=cast(DeterminismPage, mine["determinism"]),
        cpu_gpu=cast(CpuGpuPage, mine["cpu_gpu"]),
        compiled=cast(CompilePage, built["compiled"]),
        feeding=cast(FeedingPage, built["feeding"]),
        compare=cast(ComparePage, built["compare"]),
        claims=cast(ClaimsPage, mine["claims"]),
        machine_pages=cast(MachinePages, built["machine_pages"]),
        data=cast(DataPage, mine["data"]),
        methodology=cast(MethodologyPage, built["methodology"]),
    )
