"""The torch.compile page, judged: per machine and workload, which mode to use and why, what a
new input shape costs at each ``dynamic=`` setting, and whether cudnn.benchmark still matters
in a compiled model, each beside the rows it rests on."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from bench.report.analysis.compiled import compiled_only, with_compile_counts
from bench.report.judge.breaks import Breaks, breaks_of
from bench.report.judge.columns import comparison_columns, varying
from bench.report.judge.common import CONFIG_AXES, ordered, sources_of, with_pay_back
from bench.report.judge.compiling import CHOICES, WORKLOAD, by_speed, faster_pairs
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, by_machine, mark_charted
from bench.report.judge.numerics import NumericPair
from bench.report.judge.rows import Pair, Table, typed_row, typed_rows
from bench.report.judge.selection import judged
from bench.report.vocabulary import Verdict

#: What makes two compile pairs the same workload: every axis but the compile mode, its
#: dynamic= and the kernel cache (the three a reader chooses between on this page).
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


@dataclass(frozen=True, kw_only=True)
class CompilePair(NumericPair):
    """Eager against one compile mode and kernel cache: the comparison, what compiling cost
    before the first step, when it pays back, the compiled side's graph breaks, and its
    outputs against the strict reference (``NumericPair``)."""

    base_cold_pass_s: float | None = None
    var_cold_pass_s: float | None = None
    extra_cold_pass_max_s: float | None = None
    break_even_iters: float | None = None
    break_even_iters_low: float | None = None
    break_even_iters_high: float | None = None
    pays_back: bool | None = None  # ``common.with_pay_back``
    var_graph_breaks_max: float | None = None
    var_graphs_max: float | None = None
    var_graph_break_reasons: str | None = None

    @property
    def breaks(self) -> Breaks:
        """The compiled side's graph breaks, as torch counted and named them."""
        return breaks_of(self)


@dataclass(frozen=True, kw_only=True)
class CompiledShapesPair(Pair):
    """A compiled cell cycling its input shapes against its static twin, with compile counts
    (``analysis.compiled.with_compile_counts``)."""

    shape_count: int | None = None
    extra_cold_per_new_shape_s: float | None = None
    var_compiles_max: float | None = None
    base_compiles_max: float | None = None
    var_recompiles_max: float | None = None


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

    rows: tuple[CompilePair, ...] = field(repr=False)
    choice: Choice
    judged: tuple[CompilePair, ...] = field(repr=False)  # those with enough ok replicates
    best: CompilePair | None = None  # the chosen mode's fastest pair
    why: Why | None = None
    chosen: tuple[CompilePair, ...] = field(default=(), repr=False)  # its pairs, by cache
    #: the other pairs clearly faster than eager, fastest first
    others: tuple[CompilePair, ...] = field(default=(), repr=False)
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

    by_dynamic: tuple[tuple[str, CompiledShapesPair], ...]  # (dynamic=, its pair), in DYNAMIC_ORDER
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
    pair: Pair  # the compiled pair
    eager: Pair | None  # the same configuration's eager pair
    outcome: UnderCompile


@dataclass(frozen=True)
class CompileSection:
    """One machine's compile pairs, what they advise, and its new-shape and cudnn.benchmark
    studies; each ``*_cols`` names the axes a label of those rows names (what varies)."""

    machine: Machine
    costs: tuple[CompilePair, ...] = field(repr=False)  # eager → each mode, in page order
    cost_cols: tuple[str, ...]  # the costs' labels: what varies but the choices
    workload_cols: tuple[str, ...]  # a workload's label: what varies between workloads
    advice: tuple[WorkloadAdvice, ...]
    shapes: tuple[CompiledShapesPair, ...] = field(repr=False)  # compiled new-shape pairs
    shape_cols: tuple[str, ...]  # the new-shape table's labels
    shape_named: tuple[str, ...]  # what a new-shape sentence's label names
    dynamic: tuple[DynamicComparison, ...]
    benchmark: tuple[BenchmarkUnderCompile, ...]
    benchmark_cols: tuple[str, ...]  # the cudnn.benchmark pairs' labels
    cuda: bool  # some compiled cell here ran on CUDA (where cudnn.benchmark applies)
    #: the section holding its hardware model's charts, where the page does not draw its
    #: own (``judge.machines.mark_charted``); None where it does
    charts_on: Machine | None = None

    @property
    def agreed(self) -> Choice | None:
        """The choice every workload here makes (None where they differ or there is none)."""
        choices = {w.choice for w in self.advice}
        return next(iter(choices)) if len(choices) == 1 else None


@dataclass(frozen=True)
class CompilePage:
    costs: Table = field(repr=False)  # every compile pair (the page's CSV)
    sections: tuple[CompileSection, ...]  # the current fingerprints'
    sources: tuple[Machine, ...] = ()

    @property
    def shapes_unmeasured(self) -> bool:
        """No machine cycled shapes in a compiled cell: said once for the page."""
        return bool(self.sections) and not any(s.shapes for s in self.sections)

    @property
    def benchmark_unmeasured(self) -> bool:
        """No machine could measure cudnn.benchmark compiled: said once for the page."""
        return bool(self.sections) and not any(s.benchmark or s.cuda for s in self.sections)


def cache_rank(cache: str) -> int:
    """Where a kernel cache comes in ``CACHES`` (one not named there last)."""
    return CACHES.index(cache) if cache in CACHES else len(CACHES)


def workload_advice(rows: pd.DataFrame) -> WorkloadAdvice:
    """The mode to use for one workload: the fastest of those clearly faster than eager."""
    pairs = typed_rows(CompilePair, rows)
    ok = judged(rows)
    if ok.empty:
        return WorkloadAdvice(pairs, Choice.TOO_FEW, ())
    faster = faster_pairs(rows)
    if faster.empty:
        (top,) = typed_rows(CompilePair, by_speed(ok).head(1))
        return WorkloadAdvice(pairs, Choice.STAY_EAGER, typed_rows(CompilePair, ok),
                              breaks=top.breaks)
    (best,) = typed_rows(CompilePair, faster.head(1))
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
    ordered_chosen = chosen.iloc[sorted(range(len(chosen)), key=lambda i: cache_rank(
        str(chosen["kernel_cache"].iloc[i])))]
    return WorkloadAdvice(pairs, Choice.USE, typed_rows(CompilePair, ok), best, why,
                          typed_rows(CompilePair, ordered_chosen),
                          typed_rows(CompilePair, others), missing, best.breaks)


def _workloads(group: pd.DataFrame) -> list[pd.DataFrame]:
    keys = [c for c in WORKLOAD if c in group.columns]
    return [g for _, g in group.groupby(keys, sort=False, dropna=False)]


def _new_compiles(r: CompiledShapesPair) -> int | None:
    """How many more times a cycled cell compiled than its static one (None: not reported)."""
    if r.var_compiles_max is None or r.base_compiles_max is None:
        return None
    return int(r.var_compiles_max) - int(r.base_compiles_max)


def _recompile(by: Mapping[str, CompiledShapesPair]) -> tuple[Recompile, str]:
    auto, true = by.get("auto"), by.get("true")
    if auto is None or true is None:
        return Recompile.NOT_MEASURED, "true" if true is None else "auto"
    auto_new, true_new = _new_compiles(auto), _new_compiles(true)
    if auto_new is None or true_new is None:
        return Recompile.NO_COUNTS, ""
    if true_new <= 0 < auto_new:
        return Recompile.AVOIDED, ""
    return (Recompile.NOT_AVOIDED if true_new > 0 else Recompile.NEITHER), ""


def _cheaper(by: Mapping[str, CompiledShapesPair]) -> tuple[str, float] | None:
    """Which of dynamic=auto and true cost less cold pass per extra shape, and by how much."""
    auto, true = by.get("auto"), by.get("true")
    if auto is None or true is None:
        return None
    a, t = auto.extra_cold_per_new_shape_s, true.extra_cold_per_new_shape_s
    if a is None or t is None or float(a) == float(t):
        return None
    return ("true" if float(t) < float(a) else "auto", abs(float(a) - float(t)))


def dynamic_comparison(rows: pd.DataFrame) -> DynamicComparison:
    """One configuration's compiled shapes pairs, one per dynamic= setting, side by side."""
    by = {str(r.compile_dynamic): r for r in typed_rows(CompiledShapesPair, rows)}
    order = sorted(by, key=lambda d: DYNAMIC_ORDER.index(d) if d in DYNAMIC_ORDER else 9)
    recompile, missing = _recompile(by)
    steady = [by[d].var_recompiles_max for d in order]
    n = [by[d].n_var for d in order]
    return DynamicComparison(
        by_dynamic=tuple((d, by[d]) for d in order), recompile=recompile, missing=missing,
        cheaper=_cheaper(by),
        steady_recompiled=any(int(v) != 0 for v in steady if v is not None)
        if all(v is not None for v in steady) else None,
        one_replicate=bool(n) and max(n) < 2)


def _under_compile(r: Pair, eager: Pair | None) -> UnderCompile:
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
        pair, same = typed_row(Pair, r), None if e is None else typed_row(Pair, e)
        out.append(BenchmarkUnderCompile(pair, same, _under_compile(pair, same)))
    return tuple(out)


#: What a new-shape sentence does not name from its configuration: what it compares, and the
#: compile mode, which it names itself.
NOT_NAMED = ("shapes", "compile_dynamic", "compile")


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
        machine=m, costs=typed_rows(CompilePair, group),
        cost_cols=tuple(c for c in comparison_columns(group, "compile") if c not in CHOICES),
        workload_cols=tuple(varying(group, WORKLOAD)),
        advice=tuple(workload_advice(w) for w in _workloads(group)),
        shapes=typed_rows(CompiledShapesPair, mine),
        shape_cols=tuple(comparison_columns(mine, "shapes")),
        shape_named=tuple(c for c in varying(mine, CONFIG_AXES) if c not in NOT_NAMED),
        dynamic=tuple(dynamic),
        benchmark=benchmark_under_compile(facts.analysis.benchmark, bm) if len(bm) else (),
        benchmark_cols=tuple(c for c in comparison_columns(bm, "cudnn_benchmark")
                             if c != "compile"),
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
    return CompilePage(Table.of(costs), mark_charted(sections, cells),
                       sources_of(facts, *(s.costs for s in sections),
                                  *(s.shapes for s in sections)))
