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
from bench.report.analysis.compiled import compiled_only, with_compile_counts
from bench.report.escape import Md, cat
from bench.report.pages import Page, table
from bench.report.paths import COMPILE_PAGE, chart_file
from bench.report.views.comparisons import (
    TABLE_ROWS,
    cell_links,
    more_rows,
    speedup_chart,
    write_comparisons,
)
from bench.report.views.costs import (
    break_even_range,
    break_even_text,
    pays_back,
    warm_text,
)
from bench.report.views.frames import CONFIG_AXES, present, rows_of, sort_rows
from bench.report.views.inputs import Inputs, by_machine, machine_context
from bench.report.views.labels import cold_text, comparison_columns, label, varying
from bench.report.vocabulary import Verdict
from bench.report.writer import Writer

#: What makes two compile pairs the same workload: every axis but the compile mode, its
#: dynamic= and the kernel cache (the three a reader chooses between on this page).
_CHOICES = ("compile", "compile_dynamic", "kernel_cache")
_WORKLOAD = [c for c in CONFIG_AXES if c not in _CHOICES]

#: The cost columns the page's CSV carries beside the comparison.
_CSV_EXTRA = (
    "kernel_cache", "base_cold_pass_s", "var_cold_pass_s", "var_cold_pass_max_s",
    "extra_cold_pass_s", "extra_cold_pass_max_s", "saving_per_iter_s", "break_even_iters",
    "break_even_iters_low", "break_even_iters_high", "warm_extra_cold_pass_max_s",
    "warm_break_even_iters_low", "warm_break_even_iters_high", "var_compile_time_s",
    "var_compile_time_max_s", "var_compiles_max", "var_recompiles_max", "var_steady_graph_breaks_max",
    "extra_whole_peak_mem_allocated_bytes", "extra_peak_rss_bytes",
)  # fmt: skip


def compile_page(writer: Writer, data: Inputs, common: dict[str, Any]) -> None:
    here = COMPILE_PAGE
    p = data.page(here)
    costs = data.a.compiled
    csv = write_comparisons(writer, "torch-compile", costs, _CSV_EXTRA) if len(costs) else ""
    shapes = compiled_only(data.a.shapes)
    benchmark = compiled_only(data.a.benchmark)
    where = ["page", "machine", "fingerprint_id"]
    seen = pd.concat([f[where] for f in (costs, shapes, benchmark) if len(f)] or
                     [pd.DataFrame(columns=where)])
    cells = data.a.cells
    cuda_compiled = set(cells.loc[(cells["kind"] == "model") & (cells["device"] == "cuda")
                                  & (cells["compile"] != "off"), "page"])
    sections = []
    for m, _ in by_machine(seen.drop_duplicates(), data.machines):
        group = sort_rows(costs.loc[costs["page"] == m.page])
        cols = [c for c in comparison_columns(group, "compile") if c not in _CHOICES]
        sections.append({
            **machine_context(p, m),
            "advice": _advice(p, group),
            "table": _cost_table(p, data, group, cols) if len(group) else None,
            "chart": speedup_chart(
                group.assign(variant_value=group["variant_value"].astype(str)),
                [*cols, "kernel_cache", "variant_value"],
                chart_file("compile-speedup", m.page),
                writer,
                title=f"torch.compile against eager: {m.title}",
                xlabel="steady-state speedup compiled (> 1 is faster), 95% CI",
                what=f"Steady-state speedup from torch.compile on {m.title}",
            ) if len(group) else None,
            "more": more_rows(p, len(group), csv),
            "shapes": _shapes_section(p, data, shapes.loc[shapes["page"] == m.page]),
            "benchmark": _benchmark_section(p, data, benchmark.loc[benchmark["page"] == m.page],
                                            m.page in cuda_compiled),
        })
    writer.page(here, "torch-compile.md.j2", p=p, sections=sections, **common)


def _workloads(group: pd.DataFrame) -> list[tuple[Any, pd.DataFrame]]:
    keys = [c for c in _WORKLOAD if c in group.columns]
    return [(next(rows_of(g.head(1))), g)
            for _, g in group.groupby(keys, sort=False, dropna=False)]


#: The kernel caches in the order the advice quotes them: a first run's, then a rerun's.
_CACHES = ("fresh", "shared", "warm")


def _advice(p: Page, group: pd.DataFrame) -> list[Md]:
    """One sentence per workload: the mode to use (the fastest of those clearly faster than
    eager, with whichever kernel cache each was measured) with what it costs up front and when
    it pays back, from each cache it was measured with, or why eager stays. Every figure names
    the cache it was measured with and links the two rows it comes from."""
    out = []
    cols = varying(group, _WORKLOAD)
    for first, rows in _workloads(group):
        name = label(first, cols)
        judged = rows.loc[rows["verdict"] != Verdict.INSUFFICIENT]
        if judged.empty:
            out.append(cat(f"{name}: not enough ok replicates to judge torch.compile ",
                           _links(p, rows_of(rows)), "."))
            continue
        faster = judged.loc[judged["verdict"] == Verdict.FASTER].sort_values(
            "speedup", ascending=False, kind="stable")
        if faster.empty:
            out.append(cat(f"{name}: stay eager. No mode measured ({_measured(judged)}) was "
                           "clearly faster than eager in the steady state ",
                           _links(p, rows_of(judged)), "."))
            continue
        best = next(rows_of(faster.head(1)))
        mine = (rows["variant_value"] == best.variant_value) & (
            rows["compile_dynamic"] == best.compile_dynamic)
        others = faster.loc[~mine.loc[faster.index]]
        if _choices(rows) == 1:
            which = "the only mode measured"
        elif others.empty:
            which = (f"the only one of the modes measured ({_measured(rows)}) that is clearly "
                     "faster than eager")
        else:
            which = ("the mode with the highest speedup measured among those clearly faster "
                     "than eager")
        parts: list[object] = [f"{name}: use {_mode(best)}, {which}. "]
        parts += _costs(p, rows.loc[mine])
        if len(others):
            parts += [" Also clearly faster than eager: ", *_speedups(p, others), "."]
        out.append(cat(*parts))
    return out


def _choices(rows: pd.DataFrame) -> int:
    """How many (mode, dynamic=) choices ``rows`` measured."""
    return len(rows[["variant_value", "compile_dynamic"]].drop_duplicates())


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
    return _CACHES.index(cache) if cache in _CACHES else len(_CACHES)


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


def _costs(p: Page, mine: pd.DataFrame) -> list[object]:
    """The chosen mode, one clause per kernel cache it was measured with: its speedup, what it
    costs before its first step and when it pays back, each linking its own two rows; a cache
    it was not measured with is said to be unmeasured, so that a warm-only figure never reads
    as a first run's."""
    parts: list[object] = []
    seen = set()
    for r in sorted(rows_of(mine), key=lambda r: _cache_rank(str(r.kernel_cache))):
        cache = str(r.kernel_cache)
        seen.add(cache)
        lead = f"{'With' if not parts else '; with'} a {cache} kernel cache"
        if r.verdict == Verdict.FASTER:
            parts.append(f"{lead} it runs at {fmt.ratio(r.speedup)} the eager speed (95% CI "
                         f"{fmt.ci(r.ci_low, r.ci_high)}), " + _paid(r) + " ")
        elif r.verdict == Verdict.INSUFFICIENT:
            parts.append(f"{lead} too few replicates came out ok to judge it ")
        else:
            parts.append(f"{lead} it was not clearly faster ({fmt.ratio(r.speedup)}, "
                         f"{r.verdict}) ")
        parts.append(_links(p, [r]))
    missing = [c for c in ("fresh", "warm") if c not in seen]
    if missing and not (missing == ["fresh"] and "shared" in seen):
        first_run = " (what a first run pays)" if "fresh" in missing else ""
        parts.append(f"; it was not measured with a {' or a '.join(missing)} kernel "
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


def _cost_table(p: Page, data: Inputs, group: pd.DataFrame, cols: list[str]) -> Md:
    rows = []
    for r in rows_of(group.head(TABLE_ROWS)):
        rows.append([
            label(r, cols),
            str(r.variant_value),
            str(r.kernel_cache),
            fmt.ratio(r.speedup),
            fmt.ci(r.ci_low, r.ci_high),
            data.verdict(r),
            f"{fmt.seconds(r.base_median_s)} → {fmt.seconds(r.var_median_s)}",
            f"{fmt.seconds(r.base_cold_pass_s)} → "
            + cold_text(r.var_cold_pass_s, r.var_cold_pass_min_s, r.var_cold_pass_max_s),
            fmt.seconds(r.var_compile_time_max_s),
            break_even_text(r),
            break_even_range(r.break_even_iters_low, r.break_even_iters_high, r.verdict)
            if pays_back(r) else fmt.MISSING,
            warm_text(r),
            _counts(r),
            f"{r.n_base} / {r.n_var}",
            cell_links(p, r.page, [("eager", r.baseline_anchor),
                                   (str(r.variant_value), r.variant_anchor)]),
        ])
    return table(
        ["Configuration", "Mode", "Kernel cache", "Speedup", "95% CI", "Verdict",
         "Step eager → compiled", "Cold pass eager → compiled (range)",
         "Compile time torch reports, slowest replicate",
         "Break-even (steps, median)", "Break-even range",  # both defined above the tables
         "With a warm cache: extra cold pass, break-even",
         "Recompiles in steady state / graph breaks (most in a replicate)",
         "ok replicates (eager / compiled)", "Rows"],
        rows,
    )


#: What makes two compiled new-shape comparisons the same question asked at two dynamic=
#: settings: every axis but dynamic= (the static cell and the cycled one share all of them).
_SHAPE_KEY = ["fingerprint_id", "variant_value",
              *(c for c in CONFIG_AXES if c not in ("shapes", "compile_dynamic"))]


def _shapes_section(p: Page, data: Inputs, group: pd.DataFrame) -> Md | None:
    """Dynamic and ragged shapes against static inside compiled cells: one sentence per
    configuration comparing its dynamic= settings (the extra cold time per new shape, how
    often it compiled against its static cell, recompiles in the steady state), then the table
    of what each new shape costs at each dynamic= setting."""
    if group.empty:
        return None
    group = sort_rows(with_compile_counts(group, data.a.cells))
    named = [c for c in varying(group, CONFIG_AXES) if c not in _NOT_NAMED]
    sentences = [_dynamic_sentence(p, rows, named) for _, rows in
                 group.groupby([c for c in _SHAPE_KEY if c in group.columns], sort=False,
                               dropna=False)]
    cols = comparison_columns(group, "shapes")
    rows = [[
        label(r, cols),
        f"{r.variant_value} ({int(r.shape_count)} shapes)" if present(r.shape_count)
        else str(r.variant_value),
        str(r.compile_dynamic),
        fmt.seconds(r.var_cold_pass_s),
        fmt.signed_seconds(r.extra_cold_per_new_shape_s),
        f"{_count(r.var_compiles_max)} / {_count(r.base_compiles_max)}",
        _count(r.var_recompiles_max),
        fmt.ratio(r.speedup),
        fmt.ci(r.ci_low, r.ci_high),
        data.verdict(r),
        cell_links(p, r.page, [("static", r.baseline_anchor),
                               (str(r.variant_value), r.variant_anchor)]),
    ] for r in rows_of(group.head(TABLE_ROWS))]
    shown = table(["Configuration", "Shapes", "dynamic=", "Cold pass, all shapes",
                   "Extra cold time per extra shape", "Compiles, cycled / static (most in a "
                   "replicate)", "Recompiles in steady state", "Throughput per FLOP vs "
                   "static", "95% CI", "Verdict", "Rows"], rows)
    return cat(*[cat("- ", x, Md("\n")) for x in sentences], Md("\n"), shown)


#: The order the dynamic= settings are compared in: torch's default first.
_DYNAMIC_ORDER = ("auto", "true", "false")


#: What a new-shape sentence does not name from its configuration: what it compares, and the
#: compile mode, which it names itself.
_NOT_NAMED = ("shapes", "compile_dynamic", "compile")


def _dynamic_sentence(p: Page, rows: pd.DataFrame, named: list[str]) -> Md:
    """``resnet18 · infer · compile default · dynamic shapes (3 shapes): dynamic=auto: +10.7 s
    of cold pass per extra shape against its static cell, compiled 2 times against its static
    cell's 1 (rows); dynamic=true: … Of the two, dynamic=true avoided the recompile …``: one
    configuration's dynamic= settings side by side (``rows``: its compiled shapes pairs, one
    per setting; ``named``: the axes its label names)."""
    by = {str(r.compile_dynamic): r for r in rows_of(rows)}
    order = sorted(by, key=lambda d: _DYNAMIC_ORDER.index(d) if d in _DYNAMIC_ORDER else 9)
    first = by[order[0]]
    shapes = (f"{first.variant_value} shapes ({int(first.shape_count)} shapes)"
              if present(first.shape_count) else f"{first.variant_value} shapes")
    what = [cat(
        f"dynamic={d}: {fmt.signed_seconds(by[d].extra_cold_per_new_shape_s)} of cold pass per "
        f"extra shape against its static cell, {_compiles(by[d])} (rows: ",
        cell_links(p, str(by[d].page), [("static", by[d].baseline_anchor),
                                        (str(by[d].variant_value), by[d].variant_anchor)]), ")")
        for d in order]
    text: list[object] = [
        f"{label(first, named)} · compile {first.compile} · {shapes}: ",
        Md("; ".join(what)), ". "]
    text.append(_verdict_on_true(by))
    steady = [by[d].var_recompiles_max for d in order]
    if all(present(v) for v in steady):
        none = all(int(v) == 0 for v in steady)
        text.append(" No cycled cell recompiled in the steady state." if none else
                    " Some cycled cells also recompiled in the steady state (see the table).")
    n = [int(by[d].n_var) for d in order if present(by[d].n_var)]
    if n and max(n) < 2:
        text.append(" One replicate each: no interval, so a small difference may be noise.")
    return cat(*text)


def _compiles(r: Any) -> str:
    """``compiled 2 times against its static cell's 1 (most in a replicate)``."""
    if not (present(r.var_compiles_max) and present(r.base_compiles_max)):
        return "compile counts not reported by this torch"
    var, base = int(r.var_compiles_max), int(r.base_compiles_max)
    return (f"compiled {var} time{'s' if var != 1 else ''} against its static cell's {base} "
            "(most in a replicate)")


def _verdict_on_true(by: dict[str, Any]) -> str:
    """Whether dynamic=true avoided the recompile dynamic=auto paid for the new shapes, and
    which cost less per new shape, from the rows (or why that cannot be said)."""
    auto, true = by.get("auto"), by.get("true")
    if auto is None or true is None:
        missing = "true" if true is None else "auto"
        return (f"dynamic={missing} was not measured here, so whether dynamic=true avoids "
                "the recompile for a new shape is not known.")
    counts = [auto.var_compiles_max, auto.base_compiles_max, true.var_compiles_max,
              true.base_compiles_max]
    if not all(present(v) for v in counts):
        said = ("This torch did not report its compile counts, so whether dynamic=true avoids "
                "the recompile is not known")
    else:
        auto_new = int(auto.var_compiles_max) - int(auto.base_compiles_max)
        true_new = int(true.var_compiles_max) - int(true.base_compiles_max)
        if true_new <= 0 < auto_new:
            said = ("Of the two, dynamic=true avoided the recompile that dynamic=auto paid for "
                    "the new shapes")
        elif true_new > 0:
            said = "Of the two, dynamic=true did not avoid recompiling for the new shapes"
        else:
            said = "Of the two, neither recompiled for the new shapes"
    a, t = auto.extra_cold_per_new_shape_s, true.extra_cold_per_new_shape_s
    if present(a) and present(t) and float(a) != float(t):
        cheaper = "true" if float(t) < float(a) else "auto"
        said += (f"; dynamic={cheaper} cost {fmt.seconds(abs(float(a) - float(t)))} less of "
                 "cold pass per extra shape")
    return said + "."


def _benchmark_section(p: Page, data: Inputs, group: pd.DataFrame, cuda: bool) -> Md:
    """cudnn.benchmark off → on where both cells are compiled with the same mode, or why it
    was not measured on this machine (``cuda``: whether any compiled cell here ran on CUDA):
    a sentence per pair beside the same switch measured eagerly, then the table."""
    if group.empty:
        why = ("no two compiled cells here differ only in cudnn.benchmark" if cuda else
               "cudnn.benchmark is a cuDNN switch, and no compiled cell here ran on a CUDA "
               "device")
        return cat(f"Not measured on this machine: {why}, so whether it still matters in a "
                   "compiled model is not known for it. The ", Md("`compile`"), " profile's "
                   "benchmark study measures it on a CUDA machine.")
    group = sort_rows(group)
    cols = comparison_columns(group, "cudnn_benchmark")
    eager = _eager_benchmark(data.a.benchmark, group)
    sentences = [_benchmark_sentence(p, r, e, [c for c in cols if c != "compile"])
                 for r, e in zip(rows_of(group.head(TABLE_ROWS)), eager)]
    rows = [[
        label(r, [c for c in cols if c != "compile"]),
        str(r.compile),
        fmt.ratio(r.speedup),
        fmt.ci(r.ci_low, r.ci_high),
        data.verdict(r),
        fmt.signed_seconds(r.extra_cold_pass_max_s),
        f"{fmt.ratio(e.speedup)} ({e.verdict})" if e is not None else "not measured",
        cell_links(p, r.page, [("off", r.baseline_anchor), ("on", r.variant_anchor)]),
    ] for r, e in zip(rows_of(group.head(TABLE_ROWS)), eager)]
    shown = table(["Configuration", "Compile mode", "Speedup with benchmark on", "95% CI",
                   "Verdict", "Extra cold pass, slowest replicate", "The same eagerly",
                   "Rows"], rows)
    return cat(*[cat("- ", x, Md("\n")) for x in sentences], Md("\n"), shown)


#: What makes a compiled cudnn.benchmark pair and an eager one the same question: every axis
#: but the compile mode and its dynamic=.
_BM_KEY = ["fingerprint_id",
           *(c for c in CONFIG_AXES if c not in ("cudnn_benchmark", "cudnn_benchmark_limit",
                                                 "compile", "compile_dynamic"))]


def _eager_benchmark(benchmark: pd.DataFrame, compiled: pd.DataFrame) -> list[Any | None]:
    """For each compiled benchmark pair (in ``compiled``'s first TABLE_ROWS rows), the eager
    pair of the same configuration, or None where that was not measured."""
    eager = benchmark.loc[benchmark["compile"] == "off"] if len(benchmark) else benchmark
    keys = [c for c in _BM_KEY if c in compiled.columns]
    lookup = {tuple(str(getattr(e, k)) for k in keys): e for e in rows_of(eager)}
    return [lookup.get(tuple(str(getattr(r, k)) for k in keys))
            for r in rows_of(compiled.head(TABLE_ROWS))]


def _benchmark_sentence(p: Page, r: Any, eager: Any | None, cols: list[str]) -> Md:
    """``resnet18 · infer · compile max-autotune-no-cudagraphs: with cudnn.benchmark on
    1.01× (95% CI …), no clear difference (rows); eagerly 1.21×, faster (rows): under
    max-autotune-no-cudagraphs it was no longer clearly faster here.``"""
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
                                        ("on", eager.variant_anchor)]), ")"]
    if Verdict.INSUFFICIENT in (r.verdict, eager.verdict):
        text.append(": too few ok replicates to tell whether compiling changes it.")
    elif eager.verdict == Verdict.FASTER and r.verdict != Verdict.FASTER:
        text.append(f": under {r.compile} it was no longer clearly faster here.")
    elif eager.verdict == Verdict.FASTER:
        text.append(f": it was still clearly faster under {r.compile}.")
    elif r.verdict == Verdict.FASTER:
        text.append(f": it was clearly faster only under {r.compile}.")
    else:
        text.append(": it was not clearly faster either way.")
    return cat(*text)


def summary_line(data: Inputs) -> str:
    """The home page's line: how many eager-against-compiled pairs the current fingerprints
    hold, on how many machines, and their verdicts (superseded fingerprints left out)."""
    costs = data.a.compiled
    costs = costs.loc[~costs["page"].isin(list(data.superseded))] if len(costs) else costs
    if costs.empty:
        return "not measured yet (the cpu profile's compile study and the compile profile)"
    counts = costs["verdict"].value_counts()
    verdicts = ", ".join(f"{v} {int(counts[v])}" for v in (Verdict.FASTER, Verdict.SLOWER,
                         Verdict.NO_CLEAR_DIFFERENCE, Verdict.INSUFFICIENT) if v in counts)
    machines = costs["page"].nunique()
    return (f"{len(costs)} comparison(s) of a compile mode against eager on {machines} "
            f"machine fingerprint(s): {verdicts}")

