"""The torch.compile page: per machine and workload, which mode to use, when it pays back
(fresh and warm caches), what a new input shape costs, and cudnn.benchmark inside a compiled
model.

Every sentence names the rows it rests on: a recommendation links the eager and the compiled
cells it compares, and says which kernel cache the break-even is from.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from typing import Any

import pandas as pd

from bench.report import fmt
from bench.report.questions.answers import Answers
from bench.report.questions.compile.model import (
    CACHES,
    CHOICES,
    WORKLOAD,
    BenchmarkUnderCompile,
    Breaks,
    Choice,
    CompileSection,
    DynamicComparison,
    Recompile,
    UnderCompile,
    Why,
    WorkloadAdvice,
    breaks_of,
)
from bench.report.render.escape import Md, cat, slug
from bench.report.render.markdown import Page, table
from bench.report.render.paths import COMPILE_PAGE, chart_file
from bench.report.render.words.answers import answer, cite_sentence, figure
from bench.report.render.words.comparisons import (
    TABLE_ROWS,
    cell_links,
    more_rows,
    speedup_chart,
    write_comparisons,
)
from bench.report.render.words.context import banner, page, provenance, section_anchor, verdict
from bench.report.render.words.costs import break_even_cell, break_even_range
from bench.report.render.words.frames import CONFIG_AXES, present, rows_of
from bench.report.render.words.labels import SHORT_LEGEND, comparison_columns, label, varying
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


def _section(writer: Writer, answers: Answers, p: Page, s: CompileSection, csv: str
             ) -> dict[str, Any]:
    m, group = s.machine, s.costs
    cols = [c for c in comparison_columns(group, "compile") if c not in CHOICES]
    chart = speedup_chart(
        group.assign(variant_value=group["variant_value"].astype(str)),
        [*cols, "kernel_cache", "variant_value"], chart_file("compile-speedup", m.page), writer,
        title=f"torch.compile against eager: {m.title}",
        xlabel="steady-state speedup compiled (> 1 is faster), 95% CI",
        what=f"Steady-state speedup from torch.compile on {m.title}") if len(group) else None
    if chart is not None:
        chart["caption"] = ("Eager step time over compiled step time per mode and kernel cache "
                            "(above 1: compiled is faster), with 95% intervals.")
    return {
        "heading": m.title, "anchor": section_anchor("on", m), "n": len(group),
        "advice": _advice(p, s)[1:],  # the first workload's is the machine's answer, above
        "table": _cost_table(p, answers, group, cols) if len(group) else None,
        "chart": chart, "more": more_rows(p, len(group), csv),
        "shapes": _shapes_section(p, answers, s),
        "benchmark": _benchmark_section(p, answers, s),
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
    choices = {w.choice for w in s.advice}
    decision = DECISION[next(iter(choices))] if len(choices) == 1 else \
        "it depends on the workload"
    first = s.advice[0]
    more = len(s.advice) - 1
    text = cat("for ", _workload_sentence(p, first, varying(s.costs, WORKLOAD)),
               f" ({more} more workload{'s' if more > 1 else ''} in its section below.)"
               if more else "")
    cite = ""
    if first.best is not None:
        name = label(first.best, varying(s.costs, WORKLOAD))
        cite = cite_sentence(f"torch.compile ({_mode(first.best)}, {first.best.kernel_cache} "
                             f"kernel cache) ran at {figure(first.best)} the eager speed for "
                             f"{name}", m, first.best.verdict, m.days)
    return answer(p, COMPILE_PAGE, f"answer-{slug(m.page)}", m, decision, text, cite)


def compile_page(writer: Writer, answers: Answers, common: dict[str, Any]) -> None:
    model = answers.compiled
    p = page(answers, COMPILE_PAGE)
    costs = model.costs
    csv = write_comparisons(writer, "torch-compile", costs, _CSV_EXTRA) if len(costs) else ""
    found = [_answer(p, s) for s in model.sections]
    sections = [_section(writer, answers, p, s, csv) for s in model.sections]
    # what no machine measured is said once for the page, and the sections leave it out
    shapes = bool(sections) and not any(sec["shapes"] for sec in sections)
    bench = bool(sections) and not any(s.benchmark or s.cuda for s in model.sections)
    for sec in sections:
        sec.update(shapes_unmeasured=shapes, benchmark_unmeasured=bench)
    writer.page(COMPILE_PAGE, "torch-compile.md.j2", p=p, banners=banner(model.sources),
                answers=[a for a in found if a], sections=sections,
                unmeasured=_unmeasured_text(shapes, bench),
                legend=SHORT_LEGEND, provenance=provenance(common["build"], model.sources),
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
    cols = varying(s.costs, WORKLOAD)
    return [_workload_sentence(p, w, cols) for w in s.advice]


def _why(w: WorkloadAdvice) -> str:
    """Why the chosen mode was chosen, in words."""
    if w.why is Why.ONLY_MEASURED:
        return "the only mode measured"
    if w.why is Why.ONLY_FASTER:
        return (f"the only one of the modes measured ({_measured(w.rows)}) that is clearly "
                "faster than eager")
    return "the mode with the highest speedup measured among those clearly faster than eager"


def _workload_sentence(p: Page, w: WorkloadAdvice, cols: list[str]) -> Md:
    name = label(next(rows_of(w.rows.head(1))), cols)
    if w.choice is Choice.TOO_FEW:
        return cat(f"{name}: not enough ok replicates to judge torch.compile ",
                   _links(p, rows_of(w.rows)), ".")
    if w.choice is Choice.STAY_EAGER:
        return cat(f"{name}: stay eager. No mode measured ({_measured(w.judged)}) was "
                   "clearly faster than eager in the steady state ",
                   _links(p, rows_of(w.judged)), ".", _breaks_text(w))
    parts: list[object] = [f"{name}: use {_mode(w.best)}, {_why(w)}. "]
    parts += _costs(p, w)
    if len(w.others):
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


def _mode(r: Any) -> str:
    dyn = f" dynamic={r.compile_dynamic}" if r.compile_dynamic != "auto" else ""
    return f"{r.variant_value}{dyn}"


def _measured(rows: pd.DataFrame) -> str:
    """``default with a fresh and a warm cache, reduce-overhead with a warm cache``."""
    found: dict[str, list[str]] = {}
    for r in rows_of(rows):
        caches = found.setdefault(_mode(r), [])
        if str(r.kernel_cache) not in caches:
            caches.append(str(r.kernel_cache))
    return ", ".join(f"{mode} with a {' and a '.join(sorted(c, key=_cache_rank))} cache"
                     for mode, c in found.items())


def _cache_rank(cache: str) -> int:
    return CACHES.index(cache) if cache in CACHES else len(CACHES)


def _speedups(p: Page, rows: pd.DataFrame) -> list[object]:
    """``default 1.26× with a fresh cache (rows: …); default 1.24× with a warm cache (…)``."""
    parts: list[object] = []
    for r in rows_of(rows.head(4)):
        if parts:
            parts.append("; ")
        parts += [f"{_mode(r)} {fmt.ratio(r.speedup)} with a {r.kernel_cache} cache ",
                  _links(p, [r])]
    if len(rows) > 4:
        parts.append(f"; and {len(rows) - 4} more in the table")
    return parts


def _costs(p: Page, w: WorkloadAdvice) -> list[object]:
    """The chosen mode, one clause per kernel cache it was measured with: its speedup, what it
    costs before its first step and when it pays back, each linking its own two rows; a cache
    it was not measured with is said to be unmeasured, so that a warm-only figure never reads
    as a first run's."""
    parts: list[object] = []
    for r in rows_of(w.chosen):
        lead = f"{'With' if not parts else '; with'} a {r.kernel_cache} kernel cache"
        if r.verdict == Verdict.FASTER:
            parts.append(f"{lead} it runs at {fmt.ratio(r.speedup)} the eager speed (95% CI "
                         f"{fmt.ci(r.ci_low, r.ci_high)}), " + _paid(r) + " ")
        elif r.verdict == Verdict.INSUFFICIENT:
            parts.append(f"{lead} too few replicates came out ok to judge it ")
        else:
            parts.append(f"{lead} it was not clearly faster ({fmt.ratio(r.speedup)}, 95% CI "
                         f"{fmt.ci(r.ci_low, r.ci_high)}, {r.verdict}) ")
        parts.append(_links(p, [r]))
    if w.missing_caches:
        first_run = " (what a first run pays)" if "fresh" in w.missing_caches else ""
        parts.append(f"; it was not measured with a {' or a '.join(w.missing_caches)} kernel "
                     f"cache{first_run}")
    parts.append(".")
    return parts


def _paid(r: Any) -> str:
    """What a clearly faster pair costs before its first step, and when that is paid back."""
    extra = r.extra_cold_pass_max_s
    if not present(extra) or not fmt.present(extra):
        return "and its cold pass was not measured"
    if float(extra) <= 0:
        return "and costs nothing extra before the first step, even in its slowest replicate"
    be = break_even_range(r.break_even_iters_low, r.break_even_iters_high, r.verdict)
    return (f"costs {fmt.signed_seconds(extra)} before the first step (slowest replicate) and "
            f"pays back after {be} steps")


def _links(p: Page, rows: Iterable[Any]) -> Md:
    """``(rows: eager · default, fresh cache)``, one group per kernel cache: the cells of the
    first few pairs of ``rows`` (comparison rows), each once."""
    groups: dict[str, dict[str, str]] = {}  # kernel cache → anchor → its link text
    page = ""
    for r in itertools.islice(rows, 4):
        page = str(r.page)
        found = groups.setdefault(str(r.kernel_cache), {})
        found.setdefault(r.baseline_anchor, "eager")
        found.setdefault(r.variant_anchor, _mode(r))
    text = [cat(cell_links(p, page, [(t, a) for a, t in found.items()]), f", {cache} cache")
            for cache, found in sorted(groups.items(), key=lambda kv: _cache_rank(kv[0]))]
    return cat("(rows: ", Md("; ".join(text)), ")")


def _counts(r: Any) -> str:
    return f"{_count(r.var_recompiles_max)} / {_count(r.var_steady_graph_breaks_max)}"


def _count(v: Any) -> str:
    return str(int(v)) if present(v) else fmt.MISSING


def _breaks_cell(r: Any) -> str:
    b = breaks_of(r)
    if b.total is None:  # rows before schema 4, or a torch without the counter: not a zero
        return "not recorded in its rows"
    if not b.total:
        return "0"
    return f"{b.total}: " + ", ".join(reason.split(":")[0] for _, reason, _ in b.reasons)


def _cost_table(p: Page, answers: Answers, group: pd.DataFrame, cols: list[str]) -> Md:
    rows = [[
        label(r, cols, short=True), f"{r.variant_value}, {r.kernel_cache}",
        fmt.estimate(r.speedup, r.ci_low, r.ci_high), verdict(answers, r),
        f"{fmt.seconds(r.base_cold_pass_s)} → {fmt.seconds(r.var_cold_pass_s)}",
        break_even_cell(r), _breaks_cell(r),
        cell_links(p, r.page, [("eager", r.baseline_anchor),
                               (str(r.variant_value), r.variant_anchor)]),
    ] for r in rows_of(group.head(TABLE_ROWS))]
    return table(["Configuration", "Mode, cache", "Speedup (95% CI)", "Verdict",
                  "First pass eager → compiled", "Break-even", "Graph breaks", "Rows"], rows)


def _shapes_section(p: Page, answers: Answers, s: CompileSection) -> Md | None:
    """Dynamic and ragged shapes against static inside compiled cells: one sentence per
    configuration comparing its dynamic= settings (the extra cold time per new shape, how
    often it compiled against its static cell, recompiles in the steady state), then the table
    of what each new shape costs at each dynamic= setting."""
    group = s.shapes
    if group.empty:
        return None
    named = [c for c in varying(group, CONFIG_AXES) if c not in _NOT_NAMED]
    sentences = [_dynamic_sentence(p, d, named) for d in s.dynamic]
    cols = comparison_columns(group, "shapes")
    rows = [[
        label(r, cols, short=True),
        f"{r.variant_value} ({int(r.shape_count)}), dynamic={r.compile_dynamic}"
        if present(r.shape_count) else f"{r.variant_value}, dynamic={r.compile_dynamic}",
        fmt.signed_seconds(r.extra_cold_per_new_shape_s),
        f"{_count(r.var_compiles_max)} / {_count(r.base_compiles_max)}",
        _count(r.var_recompiles_max),
        fmt.estimate(r.speedup, r.ci_low, r.ci_high),
        cell_links(p, r.page, [("static", r.baseline_anchor),
                               (str(r.variant_value), r.variant_anchor)]),
    ] for r in rows_of(group.head(TABLE_ROWS))]
    shown = table(["Configuration", "Shapes", "Per extra shape", "Compiles cycled / static",
                   "Steady recompiles", "Throughput/FLOP vs static", "Rows"], rows)
    return cat(*[cat("- ", x, Md("\n")) for x in sentences], Md("\n"), shown)


#: What a new-shape sentence does not name from its configuration: what it compares, and the
#: compile mode, which it names itself.
_NOT_NAMED = ("shapes", "compile_dynamic", "compile")


def _dynamic_sentence(p: Page, d: DynamicComparison, named: list[str]) -> Md:
    """``resnet18 · infer · compile default · dynamic shapes (3 shapes): dynamic=auto: +10.7 s
    of cold pass per extra shape against its static cell, compiled 2 times against its static
    cell's 1 (rows); dynamic=true: … Of the two, dynamic=true avoided the recompile …``: one
    configuration's dynamic= settings side by side (``named``: the axes its label names)."""
    first = d.by_dynamic[0][1]
    shapes = (f"{first.variant_value} shapes ({int(first.shape_count)} shapes)"
              if present(first.shape_count) else f"{first.variant_value} shapes")
    what = [cat(
        f"dynamic={dyn}: {fmt.signed_seconds(r.extra_cold_per_new_shape_s)} of cold pass per "
        f"extra shape against its static cell, {_compiles(r)} (rows: ",
        cell_links(p, str(r.page), [("static", r.baseline_anchor),
                                    (str(r.variant_value), r.variant_anchor)]), ")")
        for dyn, r in d.by_dynamic]
    text: list[object] = [
        f"{label(first, named)} · compile {first.compile} · {shapes}: ",
        Md("; ".join(what)), ". ", _recompile_text(d)]
    if d.steady_recompiled is not None:
        text.append(" Some cycled cells also recompiled in the steady state (see the table)."
                    if d.steady_recompiled else
                    " No cycled cell recompiled in the steady state.")
    if d.one_replicate:
        text.append(" One replicate each: no interval, so a small difference may be noise.")
    return cat(*text)


def _compiles(r: Any) -> str:
    """``compiled 2 times against its static cell's 1 (most in a replicate)``."""
    if not (present(r.var_compiles_max) and present(r.base_compiles_max)):
        return "compile counts not reported by this torch"
    var, base = int(r.var_compiles_max), int(r.base_compiles_max)
    return (f"compiled {var} time{'s' if var != 1 else ''} against its static cell's {base} "
            "(most in a replicate)")


_RECOMPILE_WORDS = {
    Recompile.NO_COUNTS: "This torch did not report its compile counts, so whether "
                         "dynamic=true avoids the recompile is not known",
    Recompile.AVOIDED: "Of the two, dynamic=true avoided the recompile that dynamic=auto paid "
                       "for the new shapes",
    Recompile.NOT_AVOIDED: "Of the two, dynamic=true did not avoid recompiling for the new "
                           "shapes",
    Recompile.NEITHER: "Of the two, neither recompiled for the new shapes",
}


def _recompile_text(d: DynamicComparison) -> str:
    """Whether dynamic=true avoided the recompile dynamic=auto paid for the new shapes, and
    which cost less per new shape (or why that cannot be said)."""
    if d.recompile is Recompile.NOT_MEASURED:
        return (f"No run here measured dynamic={d.missing}, so whether dynamic=true avoids "
                "the recompile for a new shape is not known.")
    said = _RECOMPILE_WORDS[d.recompile]
    if d.cheaper is not None:
        said += (f"; dynamic={d.cheaper[0]} cost {fmt.seconds(d.cheaper[1])} less of cold pass "
                 "per extra shape")
    return said + "."


def _benchmark_section(p: Page, answers: Answers, s: CompileSection) -> Md:
    """cudnn.benchmark off → on where both cells are compiled with the same mode, or why it
    was not measured on this machine: a sentence per pair beside the same switch measured
    eagerly, then the table."""
    if not s.benchmark:
        why = ("no two compiled cells here differ only in cudnn.benchmark" if s.cuda else
               "cudnn.benchmark is a cuDNN switch, and no compiled cell here ran on a CUDA "
               "device")
        return cat(f"Not measured on this machine: {why}, so whether it still matters in a "
                   "compiled model is not known for it. The ", Md("`compile`"), " profile's "
                   "benchmark study measures it on a CUDA machine.")
    shown = s.benchmark[:TABLE_ROWS]
    pairs = pd.DataFrame([b.pair for b in s.benchmark])
    cols = [c for c in comparison_columns(pairs, "cudnn_benchmark") if c != "compile"]
    rows = [[
        label(b.pair, cols, short=True), str(b.pair.compile),
        fmt.estimate(b.pair.speedup, b.pair.ci_low, b.pair.ci_high),
        verdict(answers, b.pair),
        f"{fmt.ratio(b.eager.speedup)} ({b.eager.verdict})" if b.eager is not None
        else Verdict.NOT_MEASURED,
        cell_links(p, b.pair.page, [("off", b.pair.baseline_anchor),
                                    ("on", b.pair.variant_anchor)]),
    ] for b in shown]
    table_ = table(["Configuration", "Compile mode", "Speedup, benchmark on (95% CI)",
                    "Verdict", "The same eagerly", "Rows"], rows)
    sentences = [_benchmark_sentence(p, b, cols) for b in shown]
    return cat(*[cat("- ", x, Md("\n")) for x in sentences], Md("\n"), table_)


_UNDER_COMPILE = {
    UnderCompile.TOO_FEW: ": too few ok replicates to tell whether compiling changes it.",
    UnderCompile.NO_LONGER: ": under {mode} it was no longer clearly faster here.",
    UnderCompile.STILL: ": it was still clearly faster under {mode}.",
    UnderCompile.ONLY_COMPILED: ": it was clearly faster only under {mode}.",
    UnderCompile.NEITHER: ": it was not clearly faster either way.",
}


def _benchmark_sentence(p: Page, b: BenchmarkUnderCompile, cols: list[str]) -> Md:
    """``resnet18 · infer · compile max-autotune-no-cudagraphs: with cudnn.benchmark on
    1.01× (95% CI …), no clear difference (rows); eagerly 1.21×, faster (rows): under
    max-autotune-no-cudagraphs it was no longer clearly faster here.``"""
    r, eager = b.pair, b.eager
    links = cat("(rows: ", cell_links(p, r.page, [("off", r.baseline_anchor),
                                                  ("on", r.variant_anchor)]), ")")
    text: list[object] = [
        f"{label(r, cols)} · compile {r.compile}: with cudnn.benchmark on, "
        f"{fmt.ratio(r.speedup)} the speed with it off",
        f" (95% CI {fmt.ci(r.ci_low, r.ci_high)})" if r.verdict != Verdict.INSUFFICIENT else "",
        f", {r.verdict} ", links]
    if eager is None:
        text.append("; the same configuration was not measured eagerly with it off and on.")
        return cat(*text)
    text += [f"; eagerly {fmt.ratio(eager.speedup)}, {eager.verdict} (rows: ",
             cell_links(p, eager.page, [("off", eager.baseline_anchor),
                                        ("on", eager.variant_anchor)]), ")",
             _UNDER_COMPILE[b.outcome].format(mode=r.compile)]
    return cat(*text)
