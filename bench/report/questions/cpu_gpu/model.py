"""The CPU-vs-GPU page, judged: each machine's GPU against its host CPU, best against best,
per workload."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from bench.report.analysis.studies import CURVE_KEY
from bench.report.judge.best import BestAgainstBest, best_against_best
from bench.report.judge.claims import ClaimAnswer
from bench.report.judge.common import (
    AdviceList,
    advice_list,
    claims_for,
    ordered,
    sources_of,
)
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, by_machine
from bench.report.judge.tally import Tally, summary_of

#: What a CPU-vs-GPU curve is named by: its axes, without where it was measured.
CURVE_AXES = tuple(c for c in CURVE_KEY if c not in ("fingerprint_id", "machine", "page"))


@dataclass(frozen=True)
class CpuGpuSection:
    machine: Machine
    pairs: pd.DataFrame = field(repr=False)  # one per curve and batch, the same setting
    curves: pd.DataFrame = field(repr=False)  # the crossovers of this machine's curves
    best: tuple[BestAgainstBest, ...] = ()

    @property
    def summary(self) -> Tally:
        return summary_of(self.pairs)


@dataclass(frozen=True)
class CpuGpuPage:
    pairs: pd.DataFrame = field(repr=False)
    sections: tuple[CpuGpuSection, ...]
    claims: tuple[ClaimAnswer, ...]
    advice: AdviceList
    sources: tuple[Machine, ...]


def cpu_gpu_page(facts: Facts) -> CpuGpuPage:
    a = facts.analysis
    current = facts.current(a.cpu_gpu)
    curves = {str(k): g for k, g in a.crossovers.groupby("page")} if len(a.crossovers) else {}
    sections = tuple(
        CpuGpuSection(m, ordered(g), curves.get(m.page, pd.DataFrame()),
                      best_against_best(a.cells.loc[a.cells["page"] == m.page], g))
        for m, g in by_machine(current, facts.machines))
    return CpuGpuPage(a.cpu_gpu, sections, claims_for(facts, "cpu-vs-gpu"),
                      advice_list(facts, "device"),
                      sources_of(facts, current, claims_on="cpu-vs-gpu"))
