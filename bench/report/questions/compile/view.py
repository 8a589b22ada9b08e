"""The torch.compile page: per machine and workload, which mode to use, when it pays back
(fresh and warm caches), what a new input shape costs, and cudnn.benchmark inside a compiled
model.

Every sentence names the rows it rests on: a recommendation links the eager and the compiled
cells it compares, and says which kernel cache the break-even is from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.report import fmt
from bench.report.questions.answers import Shared
from bench.report.questions.compile.model import (
    Breaks,
    Choice,
    CompilePage,
    CompilePair,
    CompileSection,
    Why,
    WorkloadAdvice,
    cache_rank,
)
from bench.report.questions.compile.studies import benchmark_section, links, mode, shapes_section
from bench.report.render.escape import Md, cat
from bench.report.render.markdown import Page, table
from bench.report.render.paths import COMPILE_PAGE, chart_file
from bench.report.render.words import numerics
from bench.report.render.words.answers import anchored, answer, cite_sentence, figure
from bench.report.render.words.comparisons import (
    TABLE_ROWS,
    cell_links,
    more_rows,
    not_drawn,
    speedup_chart,
    write_comparisons,
)
from bench.report.render.words.context import banner, page, provenance, section_anchor, verdict
from bench.report.render.words.costs import break_even_cell, break_even_range
from bench.report.render.words.labels import SHORT_LEGEND, label
from bench.report.render.writer import Writer
from bench.report.vocabulary import Verdict

#: The cost columns the page's CSV carries beside the comparison.
_CSV_EXTRA = (
    "kernel_cache", "base_cold_pass_s", "var_cold_pass_s", "var_cold_pass_max_s",
    "extra_cold_pass_s", "extra_cold_pass_max_s", "saving_per_iter_s", "break_even_iters",
    "break_even_iters_low", "break_even_iters_high", "warm_extra_cold_pass_max_s",
    "warm_break_even_iters_low", "warm_break_even_iters_high", "var_compile_time_s",
    "var_compile_time_max_s", "var_compiles_max", "var_recompiles_max",
    "var_steady_graph_breaks_max",
    "extra_whole_peak_mem_allocated_bytes", "extra_peak_rss_bytes",
)  # fmt: skip


def _section(writer: Writer, shared: Shared, p: Page, s: CompileSection, csv: str
             ) -> dict[str, Any]:
    m, group, cols = s.machine, s.costs, s.cost_cols
    chart = speedup_chart(
        group, [*cols, "kernel_cache", "variant_value"], chart_file("compile-speedup", m.page),
        writer,
        title=f"torch.compile against eager: {m.title}",
        xlabel="steady-state speedup compiled (> 1 is faster), 95% CI",
        what=f"Steady-state speedup from torch.compile on {m.title}",
        caption="Eager step time over compiled step time per mode and kernel cache (above 1: "
                "compiled is faster), with 95% intervals.") if len(group) and s.charts_on is None \
        else not_drawn(p, s.charts_on, section_anchor("on", s.charts_on)) if s.charts_on \
        and len(group) else None
    return {
        "heading": m.title, "anchor": section_anchor("on", m), "n": len(group),
        "advice": _advice(p, s)[1:],  # the first workload's is the machine's answer, above
        "table": _cost_table(p, shared, group[:TABLE_ROWS], cols) if group else None,
        "chart": chart, "more": more_rows(p, len(group), csv),
        "shapes": shapes_section(p, s),
        "benchmark": benchmark_section(p, shared, s),
        # set where no machine measured them: said once for the page instead
        "shapes_unmeasured": False, "benchmark_unmeasured": False,
    }


#: What a machine's workloads say, by the choice of the first one (the page lists them all).
DECISION = {
    Choice.USE: "compile it",
    Choice.STAY_EAGER: "stay eager",
    Choice.TOO_FEW: "not enough data yet",
}


def _answer(p: Page, s: CompileSection) -> dict[str, Any] | None:
    if not s.advice:
        return None
    m = s.machine
    decision = DECISION[s.agreed] if s.agreed is not None else "it depends on the workload"
    first = s.advice[0]
    best = first.best
    if s.agreed is Choice.USE and best is not None and best.tradeoff is not None:
        decision = f"{decision}: {best.tradeoff}"
    more = len(s.advice) - 1
    outputs = "" if best is None else (
        f" Compiled, its {numerics.clause(best.numerics)}." if best.numerics.checked else
        " Its compiled outputs were not checked against a strict reference.")
    text = cat("for ", _workload_sentence(p, first, s.workload_cols), outputs,
               f" ({more} more workload{'s' if more > 1 else ''} in its section below.)"
               if more else "")
    cite = ""
    if first.best is not None:
        name = label(first.best, s.workload_cols)
        cite = cite_sentence(f"torch.compile ({mode(first.best)}, {first.best.kernel_cache} "
                             f"kernel cache) ran at {figure(first.best)} the eager speed for "
                             f"{name}", m,
                             numerics.with_outputs(first.best.verdict, first.best.numerics),
                             m.days)
    return answer(p, COMPILE_PAGE, "answer", m, decision, text, cite, first.best)


def compile_page(writer: Writer, model: CompilePage, shared: Shared, common: dict[str, Any]
                 ) -> None:
    p = page(shared, COMPILE_PAGE)
    costs = model.costs
    csv = write_comparisons(writer, "torch-compile", costs, _CSV_EXTRA) if len(costs) else ""
    found = [_answer(p, s) for s in model.sections]
    sections = [_section(writer, shared, p, s, csv) for s in model.sections]
    # what no machine measured is said once for the page, and the sections leave it out
    shapes, bench = model.shapes_unmeasured, model.benchmark_unmeasured
    for sec in sections:
        sec.update(shapes_unmeasured=shapes, benchmark_unmeasured=bench)
    writer.page(COMPILE_PAGE, "torch-compile.md.j2", p=p, banners=banner(model.sources),
                answers=anchored(found, common["build"]), sections=sections,
                unmeasured=_unmeasured_text(shapes, bench),
                legend=SHORT_LEGEND, provenance=provenance(common["build"], model.sources),
                downloads=[csv],
                **common)


def _unmeasured_text(shapes: bool, bench: bool) -> Md | None:
    """What no machine measured, in one sentence for the page (None where each was measured
    somewhere)."""
    what = [w for w, missing in (
        ("no compiled cell cycled its input shapes (how compiling meets new shapes)", shapes),
        ("no compiled cell ran on a CUDA device (whether cudnn.benchmark still matters in a "
         "compiled model)", bench)) if missing]
    if not what:
        return None
    return cat("Not measured on any machine here: ", "; and ".join(what), ". The ",
               Md("`compile`"), f" profile measures {'both' if len(what) > 1 else 'it'}, on a "
               "CUDA machine.")


def _advice(p: Page, s: CompileSection) -> list[Md]:
    """One sentence per workload: the mode to use (the fastest of those clearly faster than
    eager, with whichever kernel cache each was measured) with what it costs up front and when
    it pays back, from each cache it was measured with, or why eager stays. Every figure names
    the cache it was measured with and links the two rows it comes from."""
    return [_workload_sentence(p, w, s.workload_cols) for w in s.advice]


def _why(w: WorkloadAdvice) -> str:
    """Why the chosen mode was chosen, in words."""
    if w.why is Why.ONLY_MEASURED:
        return "the only mode measured"
    if w.why is Why.ONLY_FASTER:
        return (f"the only one of the modes measured ({_measured(w.rows)}) that is clearly "
                "faster than eager")
    return "the mode with the highest speedup measured among those clearly faster than eager"


def _workload_sentence(p: Page, w: WorkloadAdvice, cols: Sequence[str]) -> Md:
    name = label(w.rows[0], cols)
    if w.choice is Choice.TOO_FEW:
        return cat(f"{name}: not enough ok replicates to judge torch.compile ",
                   links(p, w.rows), ".")
    if w.choice is Choice.STAY_EAGER or w.best is None:
        return cat(f"{name}: stay eager. No mode measured ({_measured(w.judged)}) was "
                   "clearly faster than eager in the steady state ",
                   links(p, w.judged), ".", _breaks_text(w))
    parts: list[object] = [f"{name}: use {mode(w.best)}, {_why(w)}. "]
    parts += _costs(p, w)
    if w.others:
        parts += [" Also clearly faster than eager: ", *_speedups(p, w.others), "."]
    return cat(*parts, _breaks_text(w))


def _breaks_text(w: WorkloadAdvice) -> str:
    """The graph breaks of the pair a workload's sentence quotes, named, and when they are the
    likely reason compiling gained little, torch's hint for each."""
    b = w.breaks
    if b is None or b.total is None:
        return ""
    if not b.total:
        return f" The model compiled into {_graphs(b)} with no graph break."
    named = ", ".join(f"{reason}" + (f" ({n}×)" if n > 1 else "") for n, reason, _ in b.reasons)
    text = f" It met {b.total} graph break{'s' if b.total != 1 else ''} ({named}) in {_graphs(b)}"
    if w.breaks_explain:
        hints = "; ".join(b.hints)
        text += (", the likely reason no mode gained: each break splits the model into "
                 "separately compiled graphs" + (f". To remove them: {hints}" if hints else ""))
    return text + "."


def _graphs(b: Breaks) -> str:
    return "an unknown number of graphs" if b.graphs is None else \
        f"{b.graphs} graph{'s' if b.graphs != 1 else ''}"


def _measured(rows: Sequence[CompilePair]) -> str:
    """``default with a fresh and a warm cache, reduce-overhead with a warm cache``."""
    found: dict[str, list[str]] = {}
    for r in rows:
        caches = found.setdefault(mode(r), [])
        if str(r.kernel_cache) not in caches:
            caches.append(str(r.kernel_cache))
    return ", ".join(f"{name} with a {' and a '.join(sorted(c, key=cache_rank))} cache"
                     for name, c in found.items())


def _speedups(p: Page, rows: Sequence[CompilePair]) -> list[object]:
    """``default 1.26× with a fresh cache (rows: …); default 1.24× with a warm cache (…)``."""
    parts: list[object] = []
    for r in rows[:4]:
        if parts:
            parts.append("; ")
        parts += [f"{mode(r)} {fmt.ratio(r.speedup)} with a {r.kernel_cache} cache ",
                  links(p, [r])]
    if len(rows) > 4:
        parts.append(f"; and {len(rows) - 4} more in the table")
    return parts


def _costs(p: Page, w: WorkloadAdvice) -> list[object]:
    """The chosen mode, one clause per kernel cache it was measured with: its speedup, what it
    costs before its first step and when it pays back, each linking its own two rows; a cache
    it was not measured with is said to be unmeasured, so that a warm-only figure never reads
    as a first run's."""
    parts: list[object] = []
    for r in w.chosen:
        lead = f"{'With' if not parts else '; with'} a {r.kernel_cache} kernel cache"
        if r.verdict == Verdict.FASTER:
            parts.append(f"{lead} it runs at {fmt.ratio(r.speedup)} the eager speed (95% CI "
                         f"{fmt.ci(r.ci_low, r.ci_high)}), " + _paid(r) + " ")
        elif r.verdict == Verdict.INSUFFICIENT:
            parts.append(f"{lead} too few replicates came out ok to judge it ")
        else:
            parts.append(f"{lead} it was not clearly faster ({fmt.ratio(r.speedup)}, 95% CI "
                         f"{fmt.ci(r.ci_low, r.ci_high)}, {r.verdict}) ")
        parts.append(links(p, [r]))
    if w.missing_caches:
        first_run = " (what a first run pays)" if "fresh" in w.missing_caches else ""
        parts.append(f"; it was not measured with a {' or a '.join(w.missing_caches)} kernel "
                     f"cache{first_run}")
    parts.append(".")
    return parts


def _paid(r: CompilePair) -> str:
    """What a clearly faster pair costs before its first step, and when that is paid back."""
    extra = r.extra_cold_pass_max_s
    if extra is None or not fmt.present(extra):
        return "and its cold pass was not measured"
    if float(extra) <= 0:
        return "and costs nothing extra before the first step, even in its slowest replicate"
    be = break_even_range(r.break_even_iters_low, r.break_even_iters_high, r.verdict)
    return (f"costs {fmt.signed_seconds(extra)} before the first step (slowest replicate) and "
            f"pays back after {be} steps")


def _breaks_cell(r: CompilePair) -> str:
    b = r.breaks
    if b.total is None:  # rows before schema 4, or a torch without the counter: not a zero
        return "not recorded in its rows"
    if not b.total:
        return "0"
    return f"{b.total}: " + ", ".join(reason.split(":")[0] for _, reason, _ in b.reasons)


def _cost_table(p: Page, shared: Shared, shown: Sequence[CompilePair], cols: Sequence[str]
                ) -> Md:
    rows = [[
        label(r, cols, short=True), f"{r.variant_value}, {r.kernel_cache}",
        fmt.estimate(r.speedup, r.ci_low, r.ci_high), verdict(shared, r),
        f"{fmt.seconds(r.base_cold_pass_s)} → {fmt.seconds(r.var_cold_pass_s)}",
        break_even_cell(r), _breaks_cell(r), numerics.cell(r.numerics),
        cell_links(p, r.page, [("eager", r.baseline_anchor),
                               (str(r.variant_value), r.variant_anchor)]),
    ] for r in shown]
    return table(["Configuration", "Mode, cache", "Speedup (95% CI)", "Verdict",
                  "First pass eager → compiled", "Break-even", "Graph breaks", numerics.HEADER,
                  "Rows"], rows)
