"""The cudnn.benchmark page: speedups, break-even iterations and the extra memory."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from bench.report import charts, fmt
from bench.report.pages import table
from bench.report.paths import CUDNN_PAGE, chart_file
from bench.report.views.claims import claims_box, verdict_line
from bench.report.views.comparisons import (
    TABLE_ROWS,
    cell_links,
    more_rows,
    speedup_chart,
    trim,
    write_comparisons,
)
from bench.report.views.costs import (
    break_even_range,
    break_even_text,
    no_pay_back,
    pays_back,
    warm_text,
)
from bench.report.views.frames import present, rows_of, sort_rows
from bench.report.views.inputs import Inputs, by_machine, machine_context
from bench.report.views.labels import (
    alt_list,
    cold_text,
    comparison_columns,
    exceptions,
    label,
    scope,
    span,
    verdict_counts,
)
from bench.report.views.recommendations import recommendations_for
from bench.report.vocabulary import Verdict
from bench.report.writer import Writer

#: What a summary of cudnn.benchmark counts, in words (see ``counted``).
COUNTED = "with cudnn.deterministic off and no warm kernel cache"


def counted(group: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The benchmark pairs a machine's summary counts, and how many it leaves out: those with
    cudnn.deterministic off (the default) whose cold passes met no warm kernel cache, as the
    Claims page and the recommendations judge them (``COUNTED``). A machine with none of
    those is counted whole (nothing is left out)."""
    keep = (group["cudnn_deterministic"] == "off") & (group["kernel_cache"] != "warm")
    if not keep.any():
        return group, 0
    return group.loc[keep], int((~keep).sum())


def counted_note(judged: pd.DataFrame, left: int) -> str:
    """What the counts are of, for a summary box: ``the 15 configurations with … (13 of them
    with one input shape and enough ok replicates, as the Claims page counts them); the 4
    with deterministic on or a warm cache are only in the tables below``."""
    if not ((judged["cudnn_deterministic"] == "off") & (judged["kernel_cache"] != "warm")).all():
        return (f"the counts below are of all its {len(judged)} configuration(s): none has "
                f"cudnn.deterministic off with no warm kernel cache, which the Claims page "
                "counts")
    static = int(((judged["shapes"] == "static")
                  & (judged["verdict"] != Verdict.INSUFFICIENT)).sum())
    note = (f"the counts below are of its {len(judged)} configuration(s) {COUNTED} "
            f"({static or 'none'} of them with one input shape and enough ok replicates, which "
            "the Claims page counts)")
    if left:
        note += (f"; its {left} other configuration(s), with deterministic on or a warm "
                 "kernel cache, are only in the tables below")
    return note


def cudnn_page(writer: Writer, data: Inputs, common: dict[str, Any]) -> None:
    here = CUDNN_PAGE
    p = data.page(here)
    sections = []
    costs = data.a.benchmark
    csv = (
        write_comparisons(
            writer,
            "cudnn-benchmark",
            costs,
            (
                "kernel_cache",
                "base_cold_pass_s",
                "var_cold_pass_s",
                "var_cold_pass_max_s",
                "extra_cold_pass_s",
                "extra_cold_pass_max_s",
                "saving_per_iter_s",
                "break_even_iters",
                "break_even_iters_low",
                "break_even_iters_high",
                "warm_extra_cold_pass_max_s",
                "warm_break_even_iters_high",
                "base_whole_peak_mem_allocated_bytes",
                "var_whole_peak_mem_allocated_bytes",
                "extra_whole_peak_mem_share",
                "var_workspace_mem_allocated_bytes",
            ),
        )
        if len(costs)
        else ""
    )
    for m, group in by_machine(costs, data.machines):
        group = sort_rows(group)
        cols = comparison_columns(group, "cudnn_benchmark")
        judged, left = counted(group)  # the summary box counts what the Claims page counts
        judged_cols = comparison_columns(judged, "cudnn_benchmark")
        counts = verdict_counts(judged["verdict"])
        faster = judged.loc[judged["verdict"] == Verdict.FASTER]
        speed_rows = []
        cost_rows = []
        memory_rows = []
        for r in group.head(TABLE_ROWS).itertuples(index=False):
            name = label(r, cols)
            links = cell_links(p, r.page, [("off", r.baseline_anchor), ("on", r.variant_anchor)])
            speed_rows.append(
                [
                    name,
                    fmt.ratio(r.speedup),
                    fmt.ci(r.ci_low, r.ci_high),
                    data.verdict(r),
                    f"{fmt.seconds(r.base_median_s)} → {fmt.seconds(r.var_median_s)}",
                    f"{r.n_base} / {r.n_var}",
                    links,
                ]
            )
            cost_rows.append(
                [
                    name,
                    str(r.kernel_cache),
                    cold_text(r.base_cold_pass_s, r.base_cold_pass_min_s, r.base_cold_pass_max_s),
                    cold_text(r.var_cold_pass_s, r.var_cold_pass_min_s, r.var_cold_pass_max_s),
                    fmt.signed_seconds(r.extra_cold_pass_max_s),
                    fmt.signed_seconds(r.saving_per_iter_s),
                    break_even_text(r),
                    break_even_range(r.break_even_iters_low, r.break_even_iters_high, r.verdict)
                    if pays_back(r)
                    else fmt.MISSING,
                    warm_text(r),
                    links,
                ]
            )
            memory_rows.append(
                [
                    name,
                    f"{fmt.bytes_(r.base_whole_peak_mem_allocated_bytes)} → "
                    f"{fmt.bytes_(r.var_whole_peak_mem_allocated_bytes)}",
                    fmt.pct(r.extra_whole_peak_mem_share, signed=True),
                    fmt.bytes_(r.var_workspace_mem_allocated_bytes),
                    f"{fmt.bytes_(r.base_whole_peak_mem_reserved_bytes)} → "
                    f"{fmt.bytes_(r.var_whole_peak_mem_reserved_bytes)}",
                    f"{fmt.bytes_(r.base_peak_mem_allocated_bytes)} → "
                    f"{fmt.bytes_(r.var_peak_mem_allocated_bytes)}",
                    links,
                ]
            )
        speed_chart = speedup_chart(
            group,
            cols,
            chart_file("cudnn-speedup", m.page),
            writer,
            title=f"cudnn.benchmark on vs off: {m.title}",
            xlabel="steady-state speedup with benchmark on (> 1 is faster), 95% CI",
            what=f"Steady-state speedup from cudnn.benchmark on {m.title}",
        )
        be = [
            r
            for r in rows_of(group)
            if r.verdict != Verdict.INSUFFICIENT and present(r.break_even_iters)
        ]
        be_chart = None
        if be:
            be_rows = [
                charts.BreakEvenRow(
                    label(r, cols, short=True),
                    float(r.break_even_iters) if pays_back(r) else None,
                    no_pay_back(r),
                )
                for r in be
            ]
            shown, left_out = trim(be_rows)
            path = chart_file("cudnn-break-even", m.page)
            writer.chart(
                charts.break_even_chart, path, shown, title=f"cudnn.benchmark break-even: {m.title}"
            )
            be_chart = {
                "path": path,
                "left_out": left_out,
                "shown": len(shown),
                "alt": f"Iterations until cudnn.benchmark repays its cold-pass cost on {m.title}: "
                + alt_list(
                    f"{r.label}: "
                    + (r.note if r.iterations is None else fmt.iterations(r.iterations))
                    for r in shown
                ),
            }
        cold = faster.loc[faster["kernel_cache"] != "warm"]
        sections.append(
            {
                **machine_context(p, m),
                "counts": counts,
                "total": len(judged),
                "scope": f"{scope(judged)}; {counted_note(judged, left)}",
                "exceptions": exceptions(judged, judged_cols),
                "faster_span": span(faster["speedup"], fmt.ratio),
                "faster_saved": span(faster["speedup"].map(fmt.saved), fmt.pct),
                "break_even_span": span(
                    cold["break_even_iters_high"].replace(math.inf, math.nan), fmt.iterations
                ),
                "warm_break_even_span": span(
                    cold["warm_break_even_iters_high"].replace(math.inf, math.nan),
                    fmt.iterations,
                ),
                "never": int(
                    (
                        judged["verdict"].isin([Verdict.SLOWER, Verdict.NO_CLEAR_DIFFERENCE])
                        & judged["break_even_iters"].eq(math.inf)
                    ).sum()
                ),
                "memory_span": span(faster["extra_whole_peak_mem_allocated_bytes"], fmt.bytes_),
                "speed_table": table(
                    [
                        "Configuration",
                        "Speedup",
                        "95% CI",
                        "Verdict",
                        "Step time off → on",
                        "ok replicates (off / on)",
                        "Rows",
                    ],
                    speed_rows,
                ),
                "cost_table": table(
                    [
                        "Configuration",
                        "Kernel cache",
                        "Cold pass off (range)",
                        "Cold pass on (range)",
                        "Extra, slowest replicate",
                        "Saving per step",
                        "Break-even (iterations)",
                        "Range from the CI and replicates",
                        "With a warm cache",
                        "Rows",
                    ],
                    cost_rows,
                ),
                "memory_table": table(
                    [
                        "Configuration",
                        "Peak allocated, whole run: off → on",
                        "Change",
                        "First-pass workspace, on",
                        "Peak reserved, whole run: off → on",
                        "Steady-state peak allocated: off → on",
                        "Rows",
                    ],
                    memory_rows,
                ),
                "speed_chart": speed_chart,
                "more": more_rows(p, len(group), csv),
                "be_chart": be_chart,
            }
        )
    # Machines with an answer first; those with only insufficient comparisons after them.
    sections.sort(key=lambda s: s["counts"][Verdict.INSUFFICIENT] == s["total"])
    writer.page(
        here,
        "cudnn-benchmark.md.j2",
        p=p,
        sections=sections,
        claims=claims_box(data, "cudnn-benchmark", p),
        algo=verdict_line(data, "conv-algo-argument", p),
        recs=recommendations_for(data, "cudnn.benchmark", p),
        **common,
    )
