"""The cudnn.benchmark page, judged: per machine, what its counted pairs say, in figures.

The headline of a machine is the agreement of its counted pairs' verdicts, by the same rule
the advice applies to a regime (``advice.summaries.agreed``): all faster → faster, all no
clear difference → no clear difference, a mix → mixed, none judged → insufficient.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from bench.report.judge.advice.summaries import agreement
from bench.report.judge.claims import ClaimAnswer
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, by_machine
from bench.report.judge.pages.common import (
    AdviceList,
    Scope,
    advice_list,
    claim,
    claims_for,
    ordered,
    scope_of,
    with_pay_back,
)
from bench.report.judge.selection import cold_cache, counted_benchmark, judged
from bench.report.vocabulary import Verdict

#: The claims page's id of the claim this page states in its own words.
ALGO_CLAIM = "conv-algo-argument"


@dataclass(frozen=True)
class BenchmarkSummary:
    """What one machine's counted cudnn.benchmark pairs say (the summary box, and home)."""

    counted: pd.DataFrame = field(repr=False)  # the pairs that count, in page order
    left_out: int  # this machine's other pairs (deterministic on, or a warm duplicate)
    verdict: Verdict  # their agreement (see the module docstring)
    counts: Mapping[Verdict, int]
    scope: Scope
    static_judged: int  # counted pairs with one input shape and enough ok replicates
    counted_warm: int  # counted pairs whose cold passes met a warm cache
    movers: pd.DataFrame = field(repr=False)  # counted pairs that were faster or slower
    faster_speedups: tuple[float, ...]
    break_even: tuple[float, ...]  # worst-case break-even of the faster pairs, empty caches
    warm_break_even: tuple[float, ...]  # the same pairs' with a warm cache
    never: int  # counted pairs no faster, whose saving never repays the first pass
    faster_memory: tuple[float, ...]  # extra whole-run peak memory of the faster pairs

    @property
    def total(self) -> int:
        return len(self.counted)


@dataclass(frozen=True)
class CudnnSection:
    """One machine: its summary and every one of its pairs (the tables and charts)."""

    machine: Machine
    summary: BenchmarkSummary
    rows: pd.DataFrame = field(repr=False)  # every benchmark pair here, with ``pays_back``


@dataclass(frozen=True)
class CudnnPage:
    pairs: pd.DataFrame = field(repr=False)  # every benchmark pair (the page's CSV)
    sections: tuple[CudnnSection, ...]  # machines with an answer first
    claims: tuple[ClaimAnswer, ...]
    algo: ClaimAnswer | None
    advice: AdviceList


def _finite(values: pd.Series) -> tuple[float, ...]:
    return tuple(float(v) for v in pd.to_numeric(values, errors="coerce")
                 if math.isfinite(float(v)))


def benchmark_summary(group: pd.DataFrame) -> BenchmarkSummary:
    """The summary of one machine's benchmark pairs (``group``, in page order)."""
    counted = counted_benchmark(group)
    counts = dict.fromkeys((Verdict.FASTER, Verdict.SLOWER, Verdict.NO_CLEAR_DIFFERENCE,
                            Verdict.INSUFFICIENT), 0)
    for v in counted["verdict"]:
        counts[Verdict(v)] += 1
    faster = counted.loc[counted["verdict"] == Verdict.FASTER]
    cold = cold_cache(faster)
    return BenchmarkSummary(
        counted=counted,
        left_out=len(group) - len(counted),
        verdict=agreement(counted["verdict"]),
        counts=counts,
        scope=scope_of(counted),
        static_judged=len(judged(counted.loc[counted["shapes"] == "static"])),
        counted_warm=int((counted["kernel_cache"] == "warm").sum()),
        movers=counted.loc[counted["verdict"].isin([Verdict.FASTER, Verdict.SLOWER])],
        faster_speedups=_finite(faster["speedup"]),
        break_even=_finite(cold["break_even_iters_high"]),
        warm_break_even=_finite(cold["warm_break_even_iters_high"]),
        never=int((counted["verdict"].isin([Verdict.SLOWER, Verdict.NO_CLEAR_DIFFERENCE])
                   & counted["break_even_iters"].eq(math.inf)).sum()),
        faster_memory=_finite(faster["extra_whole_peak_mem_allocated_bytes"]),
    )


def cudnn_page(facts: Facts) -> CudnnPage:
    costs = facts.analysis.benchmark
    sections = [
        CudnnSection(m, benchmark_summary(group), with_pay_back(group))
        for m, group in ((m, ordered(g)) for m, g in by_machine(costs, facts.machines))
    ]
    # machines with an answer first; those with only insufficient comparisons after them
    sections.sort(key=lambda s: s.summary.verdict == Verdict.INSUFFICIENT)
    return CudnnPage(
        pairs=costs,
        sections=tuple(sections),
        claims=claims_for(facts, "cudnn-benchmark"),
        algo=claim(facts, ALGO_CLAIM),
        advice=advice_list(facts, "cudnn.benchmark"),
    )
