"""The torch.compile page's two studies of a compiled model, in words: what a new input shape
costs at each ``dynamic=`` setting, and cudnn.benchmark under torch.compile beside the same
switch eagerly; with the row links and mode names the whole page shares."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence

from bench.report import fmt
from bench.report.judge import Pair
from bench.report.questions.answers import Shared
from bench.report.questions.compile.model import (
    BenchmarkUnderCompile,
    CompiledShapesPair,
    CompilePair,
    CompileSection,
    DynamicComparison,
    Recompile,
    UnderCompile,
    cache_rank,
)
from bench.report.render.escape import Md, cat
from bench.report.render.markdown import Page, table
from bench.report.render.words.comparisons import TABLE_ROWS, cell_links
from bench.report.render.words.context import verdict
from bench.report.render.words.labels import label
from bench.report.vocabulary import Verdict


def mode(r: Pair) -> str:
    """A compile mode as the page names it: ``default``, ``default dynamic=true``."""
    dyn = f" dynamic={r.compile_dynamic}" if r.compile_dynamic != "auto" else ""
    return f"{r.variant_value}{dyn}"


def links(p: Page, rows: Iterable[CompilePair]) -> Md:
    """``(rows: eager · default, fresh cache)``, one group per kernel cache: the cells of the
    first few pairs of ``rows`` (comparison rows), each once."""
    groups: dict[str, dict[str, str]] = {}  # kernel cache → anchor → its link text
    page = ""
    for r in itertools.islice(rows, 4):
        page = str(r.page)
        found = groups.setdefault(str(r.kernel_cache), {})
        found.setdefault(r.baseline_anchor, "eager")
        found.setdefault(r.variant_anchor, mode(r))
    text = [cat(cell_links(p, page, [(t, a) for a, t in found.items()]), f", {cache} cache")
            for cache, found in sorted(groups.items(), key=lambda kv: cache_rank(kv[0]))]
    return cat("(rows: ", Md("; ".join(text)), ")")


def _count(v: float | None) -> str:
    return str(int(v)) if v is not None else fmt.MISSING


def shapes_section(p: Page, s: CompileSection) -> Md | None:
    """Dynamic and ragged shapes against static inside compiled cells: one sentence per
    configuration comparing its dynamic= settings (the extra cold time per new shape, how
    often it compiled against its static cell, recompiles in the steady state), then the table
    of what each new shape costs at each dynamic= setting."""
    if not s.shapes:
        return None
    sentences = [_dynamic_sentence(p, d, s.shape_named) for d in s.dynamic]
    cols = s.shape_cols
    rows = [[
        label(r, cols, short=True),
        f"{r.variant_value} ({int(r.shape_count)}), dynamic={r.compile_dynamic}"
        if r.shape_count is not None else f"{r.variant_value}, dynamic={r.compile_dynamic}",
        fmt.signed_seconds(r.extra_cold_per_new_shape_s),
        f"{_count(r.var_compiles_max)} / {_count(r.base_compiles_max)}",
        _count(r.var_recompiles_max),
        fmt.estimate(r.speedup, r.ci_low, r.ci_high),
        cell_links(p, r.page, [("static", r.baseline_anchor),
                               (str(r.variant_value), r.variant_anchor)]),
    ] for r in s.shapes[:TABLE_ROWS]]
    shown = table(["Configuration", "Shapes", "Per extra shape", "Compiles cycled / static",
                   "Steady recompiles", "Throughput/FLOP vs static", "Rows"], rows)
    return cat(*[cat("- ", x, Md("\n")) for x in sentences], Md("\n"), shown)


def _dynamic_sentence(p: Page, d: DynamicComparison, named: Sequence[str]) -> Md:
    """``resnet18 · infer · compile default · dynamic shapes (3 shapes): dynamic=auto: +10.7 s
    of cold pass per extra shape against its static cell, compiled 2 times against its static
    cell's 1 (rows); dynamic=true: … Of the two, dynamic=true avoided the recompile …``: one
    configuration's dynamic= settings side by side (``named``: the axes its label names)."""
    first = d.by_dynamic[0][1]
    shapes = (f"{first.variant_value} shapes ({int(first.shape_count)} shapes)"
              if first.shape_count is not None else f"{first.variant_value} shapes")
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


def _compiles(r: CompiledShapesPair) -> str:
    """``compiled 2 times against its static cell's 1 (most in a replicate)``."""
    if r.var_compiles_max is None or r.base_compiles_max is None:
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


def benchmark_section(p: Page, shared: Shared, s: CompileSection) -> Md:
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
    cols = s.benchmark_cols
    rows = [[
        label(b.pair, cols, short=True), str(b.pair.compile),
        fmt.estimate(b.pair.speedup, b.pair.ci_low, b.pair.ci_high),
        verdict(shared, b.pair),
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


def _benchmark_sentence(p: Page, b: BenchmarkUnderCompile, cols: Sequence[str]) -> Md:
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
