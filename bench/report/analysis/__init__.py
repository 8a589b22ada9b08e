"""Statistics over loaded results: per-cell figures, paired comparisons, and derived answers.

Pure functions of DataFrames (no I/O, no formatting), one module per concept:

- :mod:`~bench.report.analysis.sittings`: which sittings of a run agree, and which
  replicates every statistic leaves out;
- :mod:`~bench.report.analysis.cells`: one row per cell, over its replicates;
- :mod:`~bench.report.analysis.intervals`: confidence intervals over replicates;
- :mod:`~bench.report.analysis.pairs`: two cells that differ in one setting, and the verdict;
- :mod:`~bench.report.analysis.studies`: cudnn.benchmark's costs, dynamic shapes, determinism,
  CPU against GPU;
- :mod:`~bench.report.analysis.compiled`: torch.compile against eager, its costs and
  break-even;
- :mod:`~bench.report.analysis.machines`: ceilings, best throughputs, one summary per
  fingerprint;
- :mod:`~bench.report.analysis.feeding`: input pipelines, and the step rates they must cover.

Every table's columns are a constant of its module. This package's face is :func:`analyse`,
which computes every table once (:class:`Analysis`) so that pages and advice share them, and
the constants the Methodology page quotes (change them only together with that page).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import pandas as pd

from bench.report import parallel
from bench.report.analysis.cells import cell_stats
from bench.report.analysis.compiled import compile_costs
from bench.report.analysis.feeding import consumption, pipeline_stats
from bench.report.analysis.intervals import CONFIDENCE, MIN_OK_REPLICATES
from bench.report.analysis.machines import best_throughput, ceilings, machine_summary
from bench.report.analysis.pairs import AXES, DELTA, VERDICTS, candidate_pairs, compare
from bench.report.analysis.sittings import (
    judgement,
    left_out_cells,
    sitting_paces,
    with_left_out,
)
from bench.report.analysis.studies import (
    benchmark_costs,
    cpu_vs_gpu,
    crossovers,
    determinism,
    dynamic_shapes,
    repro_checks,
)
from bench.report.input.load import Dataset
from bench.sittings import Judgement

__all__ = [
    "CONFIDENCE",
    "DELTA",
    "MIN_OK_REPLICATES",
    "VERDICTS",
    "Analysis",
    "analyse",
    "one_block",
]


@dataclass(frozen=True)
class Analysis:
    """Every table the pages and the advice need, computed once (see ``analyse``)."""

    source: Dataset  # the loaded rows these tables were computed from
    cells: pd.DataFrame
    comparisons: dict[str, pd.DataFrame]  # axis → compare(cells, axis), for every axis in AXES
    benchmark: pd.DataFrame  # benchmark_costs
    shapes: pd.DataFrame  # dynamic_shapes
    compiled: pd.DataFrame  # compile_costs
    determinism: pd.DataFrame  # determinism
    repro: pd.DataFrame  # repro_checks
    cpu_gpu: pd.DataFrame  # cpu_vs_gpu
    crossovers: pd.DataFrame  # crossovers(cpu_gpu)
    ceilings: pd.DataFrame  # ceilings
    best: pd.DataFrame  # best_throughput
    machines: pd.DataFrame  # machine_summary
    pipelines: pd.DataFrame  # pipeline_stats: the input-pipeline and end-to-end cells
    consumption: pd.DataFrame  # consumption(cells): each model step's synthetic-input rate
    sittings: pd.DataFrame  # sitting_paces: each sitting's pace against the others of its run
    sitting_cells: pd.DataFrame  # left_out_cells: one sitting's replicates of a cell left out

    @functools.cached_property
    def _cells_by_page(self) -> dict[str, pd.DataFrame]:
        return {str(k): g for k, g in self.cells.groupby("page", sort=False)}

    def cells_on(self, page: str) -> pd.DataFrame:
        """The cells of one machine page: found once for all pages, as each page and claim
        asks for one machine's cells and a mask over every cell costs as much each time."""
        return self._cells_by_page.get(page, self.cells.iloc[:0])


def analyse(ds: Dataset) -> Analysis:
    """Compute every statistic once. The comparisons dominate the cost, so pages and advice
    should share one ``Analysis`` rather than call compare() again."""
    # sittings are compared before anything is pooled: a replicate of one that disagrees
    # keeps its row and leaves every statistic (``sittings``)
    verdict = judgement(ds)
    ds = with_left_out(ds, verdict)
    cells = one_block(cell_stats(ds))
    # The comparisons are independent, so a forked worker takes part of them; an interval
    # depends on its own pair's replicates only, not on where it ran.
    axes = sorted(AXES, key=lambda axis: -candidate_pairs(cells, axis))  # the slowest first
    found = dict(zip(axes, parallel.fork_map(functools.partial(compare, cells), axes)))
    comparisons = {axis: one_block(found[axis]) for axis in AXES}
    repro = repro_checks(ds)
    cpu_gpu = cpu_vs_gpu(cells, comparisons["device"])
    return Analysis(
        source=ds,
        cells=cells,
        comparisons=comparisons,
        **{name: one_block(frame) for name, frame in _studies(ds, verdict, cells, comparisons,
                                                               cpu_gpu, repro).items()},
    )


def _studies(ds: Dataset, verdict: Judgement, cells: pd.DataFrame,
             comparisons: dict[str, pd.DataFrame], cpu_gpu: pd.DataFrame,
             repro: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """Every study's table, by its field of :class:`Analysis`."""
    return dict(
        benchmark=benchmark_costs(cells, comparisons["cudnn_benchmark"]),
        shapes=dynamic_shapes(cells, comparisons["shapes"]),
        compiled=compile_costs(cells, comparisons["compile"]),
        determinism=determinism(ds, cells, comparisons["cudnn_deterministic"], repro),
        repro=repro,
        cpu_gpu=cpu_gpu,
        crossovers=crossovers(cpu_gpu),
        ceilings=ceilings(cells),
        best=best_throughput(cells),
        machines=machine_summary(ds),
        pipelines=pipeline_stats(ds),
        consumption=consumption(cells),
        sittings=sitting_paces(ds, verdict),
        sitting_cells=left_out_cells(ds, verdict),
    )


def one_block(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with its text columns as Python objects, one block per type: the judge
    selects rows of these tables thousands of times, and every Arrow string column would be
    copied on its own each time."""
    text = {c: object for c, t in frame.dtypes.items() if isinstance(t, pd.StringDtype)}
    return (frame.astype(text) if text else frame).copy()
