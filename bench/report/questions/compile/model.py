"""The torch.compile page, judged: per machine and workload, which mode to use and why, what a
new input shape costs at each ``dynamic=`` setting, and whether cudnn.benchmark still matters
in a compiled model, each beside the rows it rests on."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from bench.report.analysis.compiled import compiled_only, with_compile_counts
from bench.report.judge.breaks import Breaks, breaks_of
from bench.report.judge.common import CONFIG_AXES, ordered, sources_of, with_pay_back
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, by_machine
from bench.report.judge.selection import judged
from bench.report.vocabulary import Verdict

#: What makes two compile pairs the same workload: every axis but the compile mode, its
#: dynamic= and the kernel cache (the three a reader chooses between on this page).
CHOICES = ("compile", "compile_dynamic", "kernel_cache")
WORKLOAD = [c for c in CONFIG_AXES if c not in CHOICES]
#: The kernel caches in the order the advice quotes them: a first run's, then a rerun's.
CACHES = ("fresh", "shared", "warm")
#: The order the dynamic= settings are compared in: torch's default first.
DYNAMIC_ORDER = ("auto", "true", "false")
#: What makes two compiled new-shape comparisons the same question asked at two dynamic=
#: settings: every axis but dynamic= (the static cell and the cycled one share all of them).
SHAPE_KEY = ["fingerprint_id", "variant_value",
             *(c for c in CONFIG_AXES if c not in ("shapes", "compile_dynamic"))]
#: What makes a compiled cudnn.benchmark pair and an eager one the same question: every axis
#: but the compile mode and its dynamic=.
BM_KEY = ["fingerprint_id",
          *(c for c in CONFIG_AXES if c not in ("cudnn_benchmark", "cudnn_benchmark_limit",
                                                "compile", "compile_dynamic"))]


class Choice(enum.Enum):
    """What a workload's compile pairs say to do."""

    TOO_FEW = enum.auto()  # no pair has enough ok replicates
    STAY_EAGER = enum.auto()  # no mode is clearly faster than eager
    USE = enum.auto()  # use ``best``


class Why(enum.Enum):
    """Why the chosen mode was chosen."""

    ONLY_MEASURED = enum.auto()  # the only mode measured
    ONLY_FASTER = enum.auto()  # the only one clearly faster than eager
    FASTEST = enum.auto()  # the highest speedup among those clearly faster


@dataclass(frozen=True)
class WorkloadAdvice:
    """One workload's compile advice (``rows``: its pairs, every mode and cache)."""

    rows: pd.DataFrame = field(repr=False)
    choice: Choice
    judged: pd.DataFrame = field(repr=False)  # the pairs with enough ok replicates
    best: Any = None  # the chosen mode's fastest pair (a row)
    why: Why | None = None
    chosen: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)  # its pairs, caches
    others: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False)  # other faster
    #: the kernel caches the chosen mode was not measured with ("fresh", "warm")
    missing_caches: tuple[str, ...] = ()
    #: the graph breaks of the pair it quotes (the chosen mode's, or the fastest judged one's)
    breaks: Breaks | None = None

    @property
    def breaks_explain(self) -> bool:
        """Whether graph breaks are the likely reason compiling gains little: the model broke
        into several graphs and no mode was clearly faster."""
        return (self.choice is Choice.STAY_EAGER and self.breaks is not None
                and bool(self.breaks.total))


class Recompile(enum.Enum):
    """Whether dynamic=true avoided the recompile dynamic=auto paid for new shapes."""

    NOT_MEASURED = enum.auto()  # one of the two settings was not measured
    NO_COUNTS = enum.auto()  # this torch did not report compile counts
    AVOIDED = enum.auto()
    NOT_AVOIDED = enum.auto()
    NEITHER = enum.auto()  # neither recompiled


@dataclass(frozen=True)
class DynamicComparison:
    """One compiled configuration's new-shape cost at each of its dynamic= settings."""

    by_dynamic: tuple[tuple[str, Any], ...]  # (dynamic=, its shapes pair), in DYNAMIC_ORDER
    recompile: Recompile
    missing: str  # the dynamic= setting not measured (with NOT_MEASURED)
    cheaper: tuple[str, float] | None  # (dynamic=, seconds less cold pass per extra shape)
    steady_recompiled: bool | None  # any cycled cell recompiled in the steady state
    one_replicate: bool  # every setting rests on a single replicate


class UnderCompile(enum.Enum):
    """cudnn.benchmark under torch.compile against the same switch eagerly."""

    NOT_EAGER = enum.auto()  # not measured eagerly
    TOO_FEW = enum.auto()  # too few ok replicates on one side
    NO_LONGER = enum.auto()  # faster eagerly, not compiled
    STILL = enum.auto()  # faster both ways
    ONLY_COMPILED = enum.auto()  # faster only compiled
    NEITHER = enum.auto()


@dataclass(frozen=True)
class BenchmarkUnderCompile:
    pair: Any  # the compiled pair (a row)
    eager: Any | None  # the same configuration's eager pair
    outcome: UnderCompile


@dataclass(frozen=True)
class CompileSection:
    machine: Machine
    costs: pd.DataFrame = field(repr=False)  # eager → each mode, with ``pays_back``
    advice: tuple[WorkloadAdvice, ...]
    shapes: pd.DataFrame = field(repr=False)  # compiled new-shape pairs, with compile counts
    dynamic: tuple[DynamicComparison, ...]
    benchmark: tuple[BenchmarkUnderCompile, ...]
    cuda: bool  # some compiled cell here ran on CUDA (where cudnn.benchmark applies)


@dataclass(frozen=True)
class CompilePage:
    costs: pd.DataFrame = field(repr=False)  # every compile pair (the page's CSV)
    sections: tuple[CompileSection, ...]  # the current fingerprints'
    sources: tuple[Machine, ...] = ()


def _mode_key(r: Any) -> tuple[str, str]:
    return str(r.variant_value), str(r.compile_dynamic)


def _cache_rank(cache: str) -> int:
    return CACHES.index(cache) if cache in CACHES else len(CACHES)


def workload_advice(rows: pd.DataFrame) -> WorkloadAdvice:
    """The mode to use for one workload: the fastest of those clearly faster than eager."""
    ok = judged(rows)
    if ok.empty:
        return WorkloadAdvice(rows, Choice.TOO_FEW, ok)
    faster = ok.loc[ok["verdict"] == Verdict.FASTER].sort_values(
        "speedup", ascending=False, kind="stable")
    if faster.empty:
        top = next(ok.sort_values("speedup", ascending=False, kind="stable").head(1)
                   .astype(object).itertuples(index=False))
        return WorkloadAdvice(rows, Choice.STAY_EAGER, ok, breaks=breaks_of(top))
    best = next(faster.head(1).astype(object).itertuples(index=False))
    mine = (rows["variant_value"] == best.variant_value) & (
        rows["compile_dynamic"] == best.compile_dynamic)
    others = faster.loc[~mine.loc[faster.index]]
    n_choices = len(rows[["variant_value", "compile_dynamic"]].drop_duplicates())
    why = (Why.ONLY_MEASURED if n_choices == 1 else Why.ONLY_FASTER if others.empty
           else Why.FASTEST)
    chosen = rows.loc[mine]
    seen = set(chosen["kernel_cache"].astype(str))
    missing = tuple(c for c in ("fresh", "warm") if c not in seen)
    if missing == ("fresh",) and "shared" in seen:  # a shared cache stood for a fresh one
        missing = ()
    ordered_chosen = chosen.iloc[sorted(range(len(chosen)), key=lambda i: _cache_rank(
        str(chosen["kernel_cache"].iloc[i])))]
    return WorkloadAdvice(rows, Choice.USE, ok, best, why, ordered_chosen, others, missing,
                          breaks_of(best))


def _workloads(group: pd.DataFrame) -> list[pd.DataFrame]:
    keys = [c for c in WORKLOAD if c in group.columns]
    return [g for _, g in group.groupby(keys, sort=False, dropna=False)]


def _present(value: Any) -> bool:
    return value is not None and value is not pd.NA and not (
        isinstance(value, float) and value != value)


def _recompile(by: Mapping[str, Any]) -> tuple[Recompile, str]:
    auto, true = by.get("auto"), by.get("true")
    if auto is None or true is None:
        return Recompile.NOT_MEASURED, "true" if true is None else "auto"
    counts = [auto.var_compiles_max, auto.base_compiles_max, true.var_compiles_max,
              true.base_compiles_max]
    if not all(_present(v) for v in counts):
        return Recompile.NO_COUNTS, ""
    auto_new = int(auto.var_compiles_max) - int(auto.base_compiles_max)
    true_new = int(true.var_compiles_max) - int(true.base_compiles_max)
    if true_new <= 0 < auto_new:
        return Recompile.AVOIDED, ""
    return (Recompile.NOT_AVOIDED if true_new > 0 else Recompile.NEITHER), ""


def dynamic_comparison(rows: pd.DataFrame) -> DynamicComparison:
    """One configuration's compiled shapes pairs, one per dynamic= setting, side by side."""
    by = {str(r.compile_dynamic): r for r in rows.astype(object).itertuples(index=False)}
    order = sorted(by, key=lambda d: DYNAMIC_ORDER.index(d) if d in DYNAMIC_ORDER else 9)
    recompile, missing = _recompile(by)
    cheaper = None
    auto, true = by.get("auto"), by.get("true")
    if auto is not None and true is not None:
        a, t = auto.extra_cold_per_new_shape_s, true.extra_cold_per_new_shape_s
        if _present(a) and _present(t) and float(a) != float(t):
            cheaper = ("true" if float(t) < float(a) else "auto", abs(float(a) - float(t)))
    steady = [by[d].var_recompiles_max for d in order]
    n = [int(by[d].n_var) for d in order if _present(by[d].n_var)]
    return DynamicComparison(
        by_dynamic=tuple((d, by[d]) for d in order), recompile=recompile, missing=missing,
        cheaper=cheaper,
        steady_recompiled=any(int(v) != 0 for v in steady)
        if all(_present(v) for v in steady) else None,
        one_replicate=bool(n) and max(n) < 2)


def _under_compile(r: Any, eager: Any | None) -> UnderCompile:
    if eager is None:
        return UnderCompile.NOT_EAGER
    if Verdict.INSUFFICIENT in (r.verdict, eager.verdict):
        return UnderCompile.TOO_FEW
    if eager.verdict == Verdict.FASTER:
        return UnderCompile.STILL if r.verdict == Verdict.FASTER else UnderCompile.NO_LONGER
    return UnderCompile.ONLY_COMPILED if r.verdict == Verdict.FASTER else UnderCompile.NEITHER


def benchmark_under_compile(benchmark: pd.DataFrame, compiled: pd.DataFrame
                            ) -> tuple[BenchmarkUnderCompile, ...]:
    """Each compiled cudnn.benchmark pair beside the eager pair of the same configuration."""
    eager = benchmark.loc[benchmark["compile"] == "off"] if len(benchmark) else benchmark
    keys = [c for c in BM_KEY if c in compiled.columns]
    lookup = {tuple(str(getattr(e, k)) for k in keys): e
              for e in eager.astype(object).itertuples(index=False)}
    out = []
    for r in compiled.astype(object).itertuples(index=False):
        e = lookup.get(tuple(str(getattr(r, k)) for k in keys))
        out.append(BenchmarkUnderCompile(r, e, _under_compile(r, e)))
    return tuple(out)


def _section(facts: Facts, m: Machine, shapes: pd.DataFrame, benchmark: pd.DataFrame,
             cuda_pages: set[str]) -> CompileSection:
    costs = facts.analysis.compiled
    group = with_pay_back(ordered(costs.loc[costs["page"] == m.page]))
    mine = shapes.loc[shapes["page"] == m.page]
    if len(mine):
        mine = ordered(with_compile_counts(mine, facts.analysis.cells))
    keys = [c for c in SHAPE_KEY if c in mine.columns]
    dynamic = [dynamic_comparison(rows) for _, rows in
               mine.groupby(keys, sort=False, dropna=False)] if len(mine) else []
    bm = ordered(benchmark.loc[benchmark["page"] == m.page])
    return CompileSection(
        machine=m, costs=group, advice=tuple(workload_advice(w) for w in _workloads(group)),
        shapes=mine, dynamic=tuple(dynamic),
        benchmark=benchmark_under_compile(facts.analysis.benchmark, bm) if len(bm) else (),
        cuda=m.page in cuda_pages)


def compile_page(facts: Facts) -> CompilePage:
    a = facts.analysis
    costs = a.compiled
    shapes, benchmark = compiled_only(a.shapes), compiled_only(a.benchmark)
    where = ["page", "machine", "fingerprint_id"]
    seen = pd.concat([f[where] for f in (costs, shapes, benchmark) if len(f)] or
                     [pd.DataFrame(columns=where)])
    cells = a.cells
    cuda = set(cells.loc[(cells["kind"] == "model") & (cells["device"] == "cuda")
                         & (cells["compile"] != "off"), "page"])
    sections = [_section(facts, m, shapes, benchmark, cuda)
                for m, _ in by_machine(facts.current(seen.drop_duplicates()), facts.machines)]
    return CompilePage(costs, tuple(sections),
                       sources_of(facts, *(s.costs for s in sections),
                                  *(s.shapes for s in sections)))
