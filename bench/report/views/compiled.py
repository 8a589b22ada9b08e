"""The torch.compile page: per machine and workload, which mode to use, when it pays back
(fresh and warm caches), what a new input shape costs, and cudnn.benchmark inside a compiled
model.

Every sentence names the rows it rests on: a recommendation links the eager and the compiled
cells it compares, and says which kernel cache the break-even is from.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from bench.report import fmt
from bench.report.analysis.compiled import compiled_only
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
    warm_break_even,
    warm_text,
)
from bench.report.views.frames import CONFIG_AXES, present, rows_of, sort_rows
from bench.report.views.inputs import Inputs, by_machine, machine_context
from bench.report.views.labels import cold_text, comparison_columns, label, varying
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
    "var_compile_time_max_s", "var_compiles_max", "var_recompiles_max", "var_graph_breaks_max",
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
            "shapes": _shapes_table(p, data, shapes.loc[shapes["page"] == m.page]),
            "benchmark": _benchmark_table(p, data, benchmark.loc[benchmark["page"] == m.page]),
        })
    writer.page(here, "torch-compile.md.j2", p=p, sections=sections, **common)


def _workloads(group: pd.DataFrame) -> list[tuple[Any, pd.DataFrame]]:
    keys = [c for c in _WORKLOAD if c in group.columns]
    return [(next(rows_of(g.head(1))), g)
            for _, g in group.groupby(keys, sort=False, dropna=False)]


def _advice(p: Page, group: pd.DataFrame) -> list[Md]:
    """One sentence per workload: the mode to use (the fastest of those clearly faster than
    eager from a fresh cache) with its break-even, or why eager stays."""
    out = []
    cols = varying(group, _WORKLOAD)
    for first, rows in _workloads(group):
        name = label(first, cols)
        fresh = rows.loc[rows["kernel_cache"] != "warm"]
        judged = fresh.loc[fresh["verdict"] != "insufficient"]
        if judged.empty:
            out.append(cat(f"{name}: not enough ok replicates to judge torch.compile ",
                           _links(p, fresh if len(fresh) else rows), "."))
            continue
        faster = judged.loc[judged["verdict"] == "faster"].sort_values("speedup", ascending=False)
        modes = ", ".join(sorted(judged["variant_value"].astype(str).unique()))
        if faster.empty:
            out.append(cat(f"{name}: stay eager. No mode measured ({modes}) was clearly faster "
                           "than eager in the steady state ", _links(p, judged), "."))
            continue
        r = next(rows_of(faster.head(1)))
        dyn = f" (dynamic={r.compile_dynamic})" if r.compile_dynamic != "auto" else ""
        n_modes = judged["variant_value"].nunique()
        which = ("the only mode measured" if n_modes == 1 else
                 f"the fastest of the modes measured ({modes}) that are clearly faster than "
                 f"eager")
        text = (f"{name}: use {r.variant_value}{dyn}, {fmt.ratio(r.speedup)} the eager speed "
                f"(95% CI {fmt.ci(r.ci_low, r.ci_high)}), {which}. ")
        be = break_even_range(r.break_even_iters_low, r.break_even_iters_high, r.verdict)
        text += (f"From a {r.kernel_cache} kernel cache it costs "
                 f"{fmt.signed_seconds(r.extra_cold_pass_max_s)} before the first step (slowest "
                 f"replicate) and pays back after {be} steps")
        if present(r.warm_break_even_iters_high) and present(r.warm_extra_cold_pass_max_s):
            text += (f"; a rerun with a warm cache pays "
                     f"{fmt.signed_seconds(r.warm_extra_cold_pass_max_s)} and pays back after "
                     f"{warm_break_even(r)} steps")
        out.append(cat(text, " ", _links(p, faster.head(1)), "."))
    return out


def _links(p: Page, rows: pd.DataFrame) -> Md:
    """``(rows: eager · default · …)``: the cells of the first few pairs, each once."""
    found: dict[str, str] = {}  # anchor → its link text
    page = ""
    for r in rows_of(rows.head(4)):
        page = str(r.page)
        found.setdefault(r.baseline_anchor, "eager")
        found.setdefault(r.variant_anchor, str(r.variant_value))
    return cat("(rows: ", cell_links(p, page, [(t, a) for a, t in found.items()]), ")")


def _counts(r: Any) -> str:
    def n(v: Any) -> str:
        return str(int(v)) if present(v) else fmt.MISSING

    return f"{n(r.var_recompiles_max)} / {n(r.var_graph_breaks_max)}"


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
         "Compile time torch reports, slowest replicate", "Break-even (steps)",
         "Range from the CI and replicates", "With a warm cache",
         "Recompiles in steady state / graph breaks (most in a replicate)",
         "ok replicates (eager / compiled)", "Rows"],
        rows,
    )


def _shapes_table(p: Page, data: Inputs, group: pd.DataFrame) -> Md | None:
    """Dynamic and ragged shapes against static inside compiled cells: what each new shape
    costs at each dynamic= setting."""
    if group.empty:
        return None
    group = sort_rows(group)
    cols = comparison_columns(group, "shapes")
    rows = [[
        label(r, cols),
        f"{r.variant_value} ({int(r.shape_count)} shapes)" if present(r.shape_count)
        else str(r.variant_value),
        str(r.compile_dynamic),
        fmt.seconds(r.var_cold_pass_s),
        fmt.seconds(r.extra_cold_per_new_shape_s),
        fmt.ratio(r.speedup),
        fmt.ci(r.ci_low, r.ci_high),
        data.verdict(r),
        cell_links(p, r.page, [("static", r.baseline_anchor),
                               (str(r.variant_value), r.variant_anchor)]),
    ] for r in rows_of(group.head(TABLE_ROWS))]
    return table(["Configuration", "Shapes", "dynamic=", "Cold pass, all shapes",
                  "Extra cold time per extra shape", "Throughput per FLOP vs static",
                  "95% CI", "Verdict", "Rows"], rows)


def _benchmark_table(p: Page, data: Inputs, group: pd.DataFrame) -> Md | None:
    """cudnn.benchmark off → on where both cells are compiled with the same mode."""
    if group.empty:
        return None
    group = sort_rows(group)
    cols = comparison_columns(group, "cudnn_benchmark")
    rows = [[
        label(r, cols),
        fmt.ratio(r.speedup),
        fmt.ci(r.ci_low, r.ci_high),
        data.verdict(r),
        fmt.signed_seconds(r.extra_cold_pass_max_s),
        cell_links(p, r.page, [("off", r.baseline_anchor), ("on", r.variant_anchor)]),
    ] for r in rows_of(group.head(TABLE_ROWS))]
    return table(["Configuration (compiled)", "Speedup with benchmark on", "95% CI", "Verdict",
                  "Extra cold pass, slowest replicate", "Rows"], rows)


def summary_line(data: Inputs) -> str:
    """The home page's line: how many eager-against-compiled pairs the current fingerprints
    hold, on how many machines, and their verdicts (superseded fingerprints left out)."""
    costs = data.a.compiled
    costs = costs.loc[~costs["page"].isin(list(data.superseded))] if len(costs) else costs
    if costs.empty:
        return "not measured yet (the cpu profile's compile study and the compile profile)"
    counts = costs["verdict"].value_counts()
    verdicts = ", ".join(f"{v} {int(counts[v])}" for v in ("faster", "slower",
                         "no clear difference", "insufficient") if v in counts)
    machines = costs["page"].nunique()
    return (f"{len(costs)} comparison(s) of a compile mode against eager on {machines} "
            f"machine fingerprint(s): {verdicts}")

