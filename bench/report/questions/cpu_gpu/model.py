"""The CPU-vs-GPU page, judged: each machine's GPU against its host CPU, best against best,
per workload."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from bench.report.analysis.studies import CURVE_KEY
from bench.report.judge.best import BestAgainstBest, best_against_best
from bench.report.judge.columns import varying
from bench.report.judge.common import (
    ComparisonPage,
    advice_list,
    claims_for,
    ordered,
    sources_of,
)
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, by_machine, mark_charted
from bench.report.judge.rows import Located, Pair, Table, typed_row, typed_rows
from bench.report.judge.tally import Tally, summary_of
from bench.report.vocabulary import Verdict

#: What a CPU-vs-GPU curve is named by: its axes, without where it was measured.
CURVE_AXES = tuple(c for c in CURVE_KEY if c not in ("fingerprint_id", "machine", "page"))
#: The inference batch sizes whose latency tails the page tabulates, where measured.
TAIL_BATCHES = (1, 16)


@dataclass(frozen=True, kw_only=True)
class CpuGpuPair(Pair):
    """One curve's batch, the CPU (baseline) against the GPU, with each side's latency tail
    and energy."""

    base_latency_p99_s: float | None = None
    base_latency_p99_lo_s: float | None = None
    base_latency_p99_hi_s: float | None = None
    base_latency_steps_min: float | None = None
    var_latency_p99_s: float | None = None
    var_latency_p99_lo_s: float | None = None
    var_latency_p99_hi_s: float | None = None
    var_latency_steps_min: float | None = None
    base_joules_per_sample: float | None = None
    base_mean_power_w: float | None = None
    base_energy_method: str | None = None
    var_joules_per_sample: float | None = None
    var_mean_power_w: float | None = None
    var_energy_method: str | None = None


@dataclass(frozen=True, kw_only=True)
class BestCell(Located):
    """One side's fastest cell of a workload (a row of the analysis' cells)."""

    model: str | None = None
    mode: str | None = None
    precision: str | None = None
    memory_format: str | None = None


@dataclass(frozen=True, kw_only=True)
class Best:
    """One workload with each side at its best measured setting (``judge.best``)."""

    cpu: BestCell
    gpu: BestCell
    batch: int  # the workload's batch size
    speedup: float
    ci_low: float
    ci_high: float
    verdict: Verdict
    same_setting: bool  # both bests are the like-for-like setting


@dataclass(frozen=True)
class Crossing:
    """Where the GPU wins on one machine's curves (``analysis.studies.crossovers``)."""

    curves: int  # how many curves
    batches: tuple[int, ...]  # the crossover batch of each curve that has one
    all_thin: bool  # every batch of every curve had too few replicates
    thin: tuple[int, ...]  # batches below a crossover with too few replicates, ascending


@dataclass(frozen=True)
class CpuGpuSection:
    machine: Machine
    rows: tuple[CpuGpuPair, ...] = field(repr=False)  # one per curve and batch, same setting
    summary: Tally[CpuGpuPair]
    crossing: Crossing
    columns: tuple[str, ...]  # the curve axes that vary (a row's label)
    top: CpuGpuPair | None  # the pair the answer quotes: the fastest clear win, else quoted
    top_columns: tuple[str, ...]  # the curve axes and batch that vary (the top pair's label)
    top_best: Best | None  # the top pair's workload, each side at its best
    tails: tuple[CpuGpuPair, ...]  # the inference pairs at ``TAIL_BATCHES``
    best: tuple[Best, ...] = ()
    #: the section holding its hardware model's charts, where the page does not draw its
    #: own (``judge.machines.mark_charted``); None where it does
    charts_on: Machine | None = None


@dataclass(frozen=True)
class CpuGpuPage(ComparisonPage[CpuGpuSection]):
    """Every CPU-vs-GPU pair, and a section per machine that has them."""


def _crossing(curves: pd.DataFrame) -> Crossing:
    """What one machine's crossovers say: which curves the GPU wins from which batch."""
    found = [(int(r.crossover_batch), r) for r in curves.itertuples(index=False)
             if not pd.isna(r.crossover_batch)]
    thin = sorted({int(b) for at, r in found for b, v in zip(r.batches, r.verdicts, strict=True)
                   if v == Verdict.INSUFFICIENT and b < at})
    return Crossing(len(curves), tuple(at for at, _ in found),
                    all(v == Verdict.INSUFFICIENT for vs in curves["verdicts"] for v in vs)
                    if len(curves) else False, tuple(thin))


def _best(b: BestAgainstBest) -> Best:
    return Best(cpu=typed_row(BestCell, b.cpu), gpu=typed_row(BestCell, b.gpu),
                batch=int(float(b.gpu.batch_size)), speedup=b.speedup, ci_low=b.ci_low,
                ci_high=b.ci_high, verdict=b.verdict, same_setting=b.same_setting)


def _section(m: Machine, pairs: pd.DataFrame, curves: pd.DataFrame, cells: pd.DataFrame
             ) -> CpuGpuSection:
    rows = typed_rows(CpuGpuPair, pairs)
    summary = summary_of(pairs, CpuGpuPair)
    top = summary.best or summary.quoted
    found = best_against_best(cells, pairs)
    best = next((b for b in found if top is not None and (b.gpu.model, b.gpu.mode,
                 b.gpu.batch_size) == (top.model, top.mode, top.batch_size)), None)
    return CpuGpuSection(
        m, rows, summary, _crossing(curves), varying(rows, CURVE_AXES), top,
        varying(rows, (*CURVE_AXES, "batch_size")), _best(best) if best is not None else None,
        tuple(r for r in rows if r.mode == "infer" and r.batch_size is not None
              and int(r.batch_size) in TAIL_BATCHES),
        tuple(_best(b) for b in found))


def cpu_gpu_page(facts: Facts) -> CpuGpuPage:
    a = facts.analysis
    current = facts.current(a.cpu_gpu)
    curves = {str(k): g for k, g in a.crossovers.groupby("page")} if len(a.crossovers) else {}
    sections = tuple(
        _section(m, ordered(g), curves.get(m.page, pd.DataFrame()),
                 a.cells_on(m.page))
        for m, g in by_machine(current, facts.machines))
    return CpuGpuPage(Table.of(a.cpu_gpu), mark_charted(sections, a.cells),
                      claims_for(facts, "cpu-vs-gpu"),
                      advice_list(facts, "device"),
                      sources_of(facts, current, claims_on="cpu-vs-gpu"))
