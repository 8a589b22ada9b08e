"""The cudnn.benchmark page, judged: per machine, what its counted pairs say, in figures.

The headline of a machine is the agreement of its counted pairs' verdicts, by the same rule
the advice applies to a regime (``advice.summaries.agreed``): all faster → faster, all no
clear difference → no clear difference, a mix → mixed, none judged → insufficient.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from bench.report.judge.advice.codes import Setting
from bench.report.judge.advice.summaries import agreement
from bench.report.judge.claims import ClaimAnswer
from bench.report.judge.columns import comparison_columns
from bench.report.judge.common import (
    ComparisonPage,
    Scope,
    advice_list,
    claim,
    claims_for,
    ordered,
    scope_of,
    sources_of,
    with_pay_back,
)
from bench.report.judge.defaults import decision_for, default_workload
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, by_machine, mark_charted
from bench.report.judge.regimes import Regime
from bench.report.judge.rows import Pair, Table, typed_rows
from bench.report.judge.selection import cold_cache, counted_benchmark, judged
from bench.report.vocabulary import Verdict

#: The claims page's id of the claim this page states in its own words.
ALGO_CLAIM = "conv-algo-argument"


@dataclass(frozen=True, kw_only=True)
class CudnnPair(Pair):
    """A benchmark off → on pair with its one-off costs (``analysis.studies``) and
    ``pays_back`` (``common.with_pay_back``): what the tables and charts read."""

    pays_back: bool | None = None
    base_cold_pass_s: float | None = None
    var_cold_pass_s: float | None = None
    var_cold_pass_min_s: float | None = None  # the range over replicates
    var_cold_pass_max_s: float | None = None
    extra_cold_pass_s: float | None = None
    extra_cold_pass_max_s: float | None = None
    break_even_iters: float | None = None  # inf where it never pays back
    break_even_iters_low: float | None = None
    break_even_iters_high: float | None = None
    base_whole_peak_mem_allocated_bytes: float | None = None
    var_whole_peak_mem_allocated_bytes: float | None = None
    extra_whole_peak_mem_share: float | None = None
    var_workspace_mem_allocated_bytes: float | None = None


@dataclass(frozen=True)
class ModelVerdict:
    """What one model's counted pairs on a machine agree on (a mixed answer's breakdown)."""

    model: str
    verdict: Verdict  # the agreement of its pairs, by the advice's rule
    judged: int  # its pairs with enough ok replicates
    agreeing: int  # of those, the ones whose verdict is the agreement (all, unless mixed)
    speedups: tuple[float, ...]  # every judged pair's speedup


@dataclass(frozen=True)
class BenchmarkSummary:
    """What one machine's counted cudnn.benchmark pairs say (the summary box, and home)."""

    total: int  # the pairs that count
    columns: tuple[str, ...]  # what a label of them names: the axes but benchmark that vary
    left_out: int  # this machine's other pairs (deterministic on, or a warm duplicate)
    changing: int  # counted pairs with changing shapes (the dynamic-shapes page's question)
    verdict: Verdict  # their agreement (see the module docstring)
    counts: Mapping[Verdict, int]
    scope: Scope
    static_judged: int  # counted pairs with one input shape and enough ok replicates
    counted_warm: int  # counted pairs whose cold passes met a warm cache
    faster_speedups: tuple[float, ...]
    break_even: tuple[float, ...]  # worst-case break-even of the faster pairs, empty caches
    warm_break_even: tuple[float, ...]  # the same pairs' with a warm cache
    never: int  # counted pairs no faster, whose saving never repays the first pass
    faster_memory: tuple[float, ...]  # extra whole-run peak memory of the faster pairs
    quoted: CudnnPair | None  # the default workload's judged pair (``judge.defaults``)
    speedups: tuple[float, ...]  # every judged counted pair's speedup
    ci_low: float | None  # the lowest and highest ends of their 95% intervals
    ci_high: float | None
    cold_extra: float | None  # the largest extra first pass with it on (slowest replicate)
    memory_extra: float | None  # the largest extra whole-run peak memory, and its share
    memory_share: float | None
    caches: tuple[str, ...]  # the kernel caches the counted pairs' first passes met
    by_model: tuple[ModelVerdict, ...]  # per model, largest mean speedup first


@dataclass(frozen=True)
class CudnnSection:
    """One machine: its summary and every one of its pairs (the tables and charts)."""

    machine: Machine
    summary: BenchmarkSummary
    rows: tuple[CudnnPair, ...] = field(repr=False)  # every benchmark pair here, page order
    columns: tuple[str, ...]  # what a label of them names: the axes but benchmark that vary
    #: the judged pairs with a break-even (the break-even chart's), and whether any of them
    #: pays back (else the chart would show only "no saving", and a sentence says so)
    break_even: tuple[CudnnPair, ...] = field(repr=False)
    pays_back: bool
    no_saving: bool  # none pays back, and some pair was judged
    #: the decision for the default workload's regime, and the regimes where it pays
    decision: Regime | None = None
    pays: tuple[Regime, ...] = ()
    #: the section holding its hardware model's charts, where the page does not draw its
    #: own (``judge.machines.mark_charted``); None where it does
    charts_on: Machine | None = None


@dataclass(frozen=True)
class CudnnPage(ComparisonPage[CudnnSection]):
    """Every benchmark pair, and a section per current machine, those with an answer first;
    besides, the claim about choosing an algorithm by hand."""

    algo: ClaimAnswer | None
    cpu_only: tuple[Machine, ...]  # current machines without a GPU (cuDNN does not apply)


def _finite(values: pd.Series) -> tuple[float, ...]:
    return tuple(float(v) for v in pd.to_numeric(values, errors="coerce")
                 if math.isfinite(float(v)))


def benchmark_summary(group: pd.DataFrame) -> BenchmarkSummary:
    """The summary of one machine's benchmark pairs (``group``, in page order): the counted
    pairs with one input shape (changing shapes are another question, the dynamic-shapes
    page's, and their first passes search once per shape)."""
    counted = counted_benchmark(group)
    changing = int((counted["shapes"] != "static").sum())
    counted = counted.loc[counted["shapes"] == "static"]
    counts = dict.fromkeys((Verdict.FASTER, Verdict.SLOWER, Verdict.NO_CLEAR_DIFFERENCE,
                            Verdict.INSUFFICIENT), 0)
    for v in counted["verdict"]:
        counts[Verdict(v)] += 1
    faster = counted.loc[counted["verdict"] == Verdict.FASTER]
    cold = cold_cache(faster)
    return BenchmarkSummary(
        total=len(counted),
        columns=comparison_columns(counted, "cudnn_benchmark"),
        left_out=len(group) - len(counted) - changing,
        changing=changing,
        verdict=agreement(counted["verdict"]),
        counts=counts,
        scope=scope_of(counted),
        static_judged=len(judged(counted.loc[counted["shapes"] == "static"])),
        counted_warm=int((counted["kernel_cache"] == "warm").sum()),
        faster_speedups=_finite(faster["speedup"]),
        break_even=_finite(cold["break_even_iters_high"]),
        warm_break_even=_finite(cold["warm_break_even_iters_high"]),
        never=int((counted["verdict"].isin([Verdict.SLOWER, Verdict.NO_CLEAR_DIFFERENCE])
                   & counted["break_even_iters"].eq(math.inf)).sum()),
        faster_memory=_finite(faster["extra_whole_peak_mem_allocated_bytes"]),
        **_figures(counted),
    )


def _largest(values: pd.Series) -> float | None:
    found = _finite(values)
    return max(found) if found else None


def _figures(counted: pd.DataFrame) -> dict[str, Any]:
    """What a machine's answer quotes of its counted pairs: one pair, the speedups and their
    intervals' ends, the largest first-pass and memory costs (true of every replicate)."""
    ok = judged(counted)
    memory = pd.to_numeric(ok["extra_whole_peak_mem_allocated_bytes"], errors="coerce")
    top = memory.idxmax() if memory.notna().any() else None
    return {
        "quoted": default_workload(judged(counted), CudnnPair),
        "speedups": _finite(ok["speedup"]),
        "ci_low": min(_finite(ok["ci_low"]), default=None),
        "ci_high": max(_finite(ok["ci_high"]), default=None),
        "cold_extra": _largest(ok["extra_cold_pass_max_s"]),
        "memory_extra": float(memory[top]) if top is not None else None,
        # the largest share, not the largest growth's: "up to" must hold of each on its own
        "memory_share": _largest(ok["extra_whole_peak_mem_share"]) if top is not None else None,
        "caches": tuple(sorted(set(counted["kernel_cache"].astype(str)))),
        "by_model": by_model(counted),
    }


def by_model(counted: pd.DataFrame) -> tuple[ModelVerdict, ...]:
    """Per model, what its pairs agree on: the judged models by their median speedup, largest
    first, then those with too few replicates (a reader looks for a model by name)."""
    found = []
    for model, group in counted.groupby("model", sort=True):
        verdict = agreement(group["verdict"])
        ok = judged(group)
        found.append(ModelVerdict(
            model=str(model), verdict=verdict, judged=len(ok),
            agreeing=int((ok["verdict"] == verdict).sum()) if verdict != Verdict.MIXED
            else int((ok["verdict"] == Verdict.FASTER).sum()),
            speedups=_finite(ok["speedup"])))

    def order(m: ModelVerdict) -> tuple[bool, float]:
        middle = sorted(m.speedups)[len(m.speedups) // 2] if m.speedups else 0.0
        return (not m.speedups, -middle)
    return tuple(sorted(found, key=order))


def cudnn_section(machine: Machine, group: pd.DataFrame, regimes: Sequence[Regime] = ()
                  ) -> CudnnSection:
    """One machine's benchmark pairs (``group``, in page order), summed up and read as rows,
    with the decision for its default workload (of ``regimes``, the current ones)."""
    rows = with_pay_back(group)
    judged_rows = rows.loc[rows["verdict"] != Verdict.INSUFFICIENT]
    pays_back = bool(rows["pays_back"].any())
    summary = benchmark_summary(group)
    decision, pays = (decision_for(regimes, Setting.CUDNN_BENCHMARK, summary.quoted)
                      if summary.quoted is not None else (None, ()))
    return CudnnSection(
        machine, summary, typed_rows(CudnnPair, rows),
        comparison_columns(rows, "cudnn_benchmark"),
        break_even=typed_rows(CudnnPair, judged_rows.loc[judged_rows["break_even_iters"].notna()]),
        pays_back=pays_back, no_saving=not pays_back and bool(len(judged_rows)),
        decision=decision, pays=pays)


def cudnn_page(facts: Facts) -> CudnnPage:
    costs = facts.analysis.benchmark
    current = facts.current(costs)
    sections = [cudnn_section(m, ordered(g),
                              facts.regimes_on(Setting.CUDNN_BENCHMARK, m.page))
                for m, g in by_machine(current, facts.machines)]
    # the reader's own machine first, then those with an answer; those with only
    # insufficient comparisons after them
    sections.sort(key=lambda s: (not s.machine.yours, s.summary.verdict == Verdict.INSUFFICIENT))
    return CudnnPage(
        pairs=Table.of(costs),
        sections=mark_charted(sections, facts.analysis.cells),
        claims=claims_for(facts, "cudnn-benchmark"),
        algo=claim(facts, ALGO_CLAIM),
        advice=advice_list(facts, "cudnn.benchmark"),
        sources=sources_of(facts, current, claims_on="cudnn-benchmark"),
        cpu_only=cpu_only(facts),
    )


def cpu_only(facts: Facts) -> tuple[Machine, ...]:
    """The current fingerprints that ran no CUDA cell: cuDNN's switches do not apply there."""
    cells = facts.current(facts.analysis.cells)
    gpu = set(cells.loc[cells["device"] == "cuda", "page"].astype(str))
    return tuple(m for k, m in facts.machines.items()
                 if k not in facts.superseded and k not in gpu)
