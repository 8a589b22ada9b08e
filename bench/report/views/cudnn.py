"""The cudnn.benchmark page: speedups, break-even iterations and the extra memory, formatted
from :class:`bench.report.judge.pages.cudnn.CudnnPage`."""

from __future__ import annotations

from typing import Any

import pandas as pd

from bench.report import charts, fmt
from bench.report.escape import Md
from bench.report.judge import Answers
from bench.report.judge.pages.cudnn import BenchmarkSummary, CudnnSection
from bench.report.pages import Page, table
from bench.report.paths import CUDNN_PAGE, chart_file
from bench.report.views.claim_words import claims_box, verdict_line
from bench.report.views.comparisons import (
    TABLE_ROWS,
    cell_links,
    more_rows,
    speedup_chart,
    trim,
    write_comparisons,
)
from bench.report.views.context import machine_context, page, verdict
from bench.report.views.costs import break_even_range, break_even_text, no_pay_back, warm_text
from bench.report.views.frames import present, rows_of
from bench.report.views.labels import (
    COUNTED_BENCHMARK,
    alt_list,
    cold_text,
    comparison_columns,
    exceptions,
    label,
    scope,
    span,
)
from bench.report.views.recommendations import advice_items
from bench.report.vocabulary import Verdict
from bench.report.writer import Writer

#: The box a machine's summary is shown in, by the verdict its counted pairs agree on.
BOX = {
    Verdict.FASTER: ("success", "enable it where it is faster, for jobs longer than the "
                                "break-even"),
    Verdict.MIXED: ("warning", "it depends on the workload: enable it only where it is "
                               "faster, for jobs longer than the break-even"),
    Verdict.SLOWER: ("failure", "leave it off"),
    Verdict.NO_CLEAR_DIFFERENCE: ("info", "no clear difference, leave the default (off)"),
    Verdict.INSUFFICIENT: ("warning", "not enough data to say"),
}

#: The cost columns the page's CSV carries beside the comparison.
_CSV_EXTRA = (
    "kernel_cache", "base_cold_pass_s", "var_cold_pass_s", "var_cold_pass_max_s",
    "extra_cold_pass_s", "extra_cold_pass_max_s", "saving_per_iter_s", "break_even_iters",
    "break_even_iters_low", "break_even_iters_high", "warm_extra_cold_pass_max_s",
    "warm_break_even_iters_high", "base_whole_peak_mem_allocated_bytes",
    "var_whole_peak_mem_allocated_bytes", "extra_whole_peak_mem_share",
    "var_workspace_mem_allocated_bytes",
)  # fmt: skip


def counted_note(s: BenchmarkSummary) -> str:
    """What a summary's counts are of: ``the counts below are of its 15 configuration(s) with …
    (13 of them with one input shape and enough ok replicates, which the Claims page counts);
    its 4 other configuration(s), with deterministic on or a warm kernel cache, are only in the
    tables below``."""
    if not s.total:
        return (f"none of its {s.left_out} configuration(s) has cudnn.deterministic off, which "
                "the summary and the Claims page count; they are only in the tables below")
    what = COUNTED_BENCHMARK if not s.counted_warm else (
        f"with cudnn.deterministic off ({s.counted_warm} of them measured only with a warm "
        "kernel cache)")
    note = (f"the counts below are of its {s.total} configuration(s) {what} "
            f"({s.static_judged or 'none'} of them with one input shape and enough ok "
            "replicates, which the Claims page counts)")
    if s.left_out:
        note += (f"; its {s.left_out} other configuration(s), with deterministic on or a warm "
                 "kernel cache, are only in the tables below")
    return note


def _speed_row(answers: Answers, p: Page, r: Any, name: str, links: Md) -> list[Any]:
    return [name, fmt.ratio(r.speedup), fmt.ci(r.ci_low, r.ci_high), verdict(answers, r),
            f"{fmt.seconds(r.base_median_s)} → {fmt.seconds(r.var_median_s)}",
            f"{r.n_base} / {r.n_var}", links]


def _cost_row(r: Any, name: str, links: Md) -> list[Any]:
    return [
        name, str(r.kernel_cache),
        cold_text(r.base_cold_pass_s, r.base_cold_pass_min_s, r.base_cold_pass_max_s),
        cold_text(r.var_cold_pass_s, r.var_cold_pass_min_s, r.var_cold_pass_max_s),
        fmt.signed_seconds(r.extra_cold_pass_max_s), fmt.signed_seconds(r.saving_per_iter_s),
        break_even_text(r),
        break_even_range(r.break_even_iters_low, r.break_even_iters_high, r.verdict)
        if r.pays_back else fmt.MISSING,
        warm_text(r), links,
    ]


def _memory_row(r: Any, name: str, links: Md) -> list[Any]:
    def change(base: Any, var: Any) -> str:
        return f"{fmt.bytes_(base)} → {fmt.bytes_(var)}"

    return [
        name,
        change(r.base_whole_peak_mem_allocated_bytes, r.var_whole_peak_mem_allocated_bytes),
        fmt.pct(r.extra_whole_peak_mem_share, signed=True),
        fmt.bytes_(r.var_workspace_mem_allocated_bytes),
        change(r.base_whole_peak_mem_reserved_bytes, r.var_whole_peak_mem_reserved_bytes),
        change(r.base_peak_mem_allocated_bytes, r.var_peak_mem_allocated_bytes),
        links,
    ]


_SPEED_HEADERS = ["Configuration", "Speedup", "95% CI", "Verdict", "Step time off → on",
                  "ok replicates (off / on)", "Rows"]
_COST_HEADERS = ["Configuration", "Kernel cache", "Cold pass off (range)",
                 "Cold pass on (range)", "Extra, slowest replicate", "Saving per step",
                 "Break-even (iterations)", "Range from the CI and replicates",
                 "With a warm cache", "Rows"]
_MEMORY_HEADERS = ["Configuration", "Peak allocated, whole run: off → on", "Change",
                   "First-pass workspace, on", "Peak reserved, whole run: off → on",
                   "Steady-state peak allocated: off → on", "Rows"]


def _tables(answers: Answers, p: Page, rows: pd.DataFrame, cols: list[str]) -> dict[str, Md]:
    speed, cost, memory = [], [], []
    for r in rows.head(TABLE_ROWS).itertuples(index=False):
        name = label(r, cols)
        links = cell_links(p, r.page, [("off", r.baseline_anchor), ("on", r.variant_anchor)])
        speed.append(_speed_row(answers, p, r, name, links))
        cost.append(_cost_row(r, name, links))
        memory.append(_memory_row(r, name, links))
    return {"speed_table": table(_SPEED_HEADERS, speed),
            "cost_table": table(_COST_HEADERS, cost),
            "memory_table": table(_MEMORY_HEADERS, memory)}


def _break_even_chart(writer: Writer, s: CudnnSection, cols: list[str]) -> dict[str, Any] | None:
    be = [r for r in rows_of(s.rows)
          if r.verdict != Verdict.INSUFFICIENT and present(r.break_even_iters)]
    if not be:
        return None
    be_rows = [charts.BreakEvenRow(label(r, cols, short=True),
                                   float(r.break_even_iters) if r.pays_back else None,
                                   no_pay_back(r)) for r in be]
    shown, left_out = trim(be_rows)
    path = chart_file("cudnn-break-even", s.machine.page)
    writer.chart(charts.break_even_chart, path, shown,
                 title=f"cudnn.benchmark break-even: {s.machine.title}")
    return {
        "path": path, "left_out": left_out, "shown": len(shown),
        "alt": f"Iterations until cudnn.benchmark repays its cold-pass cost on "
               f"{s.machine.title}: " + alt_list(
                   f"{r.label}: "
                   + (r.note if r.iterations is None else fmt.iterations(r.iterations))
                   for r in shown),
    }


def _summary(s: BenchmarkSummary) -> dict[str, Any]:
    """The summary box's words and figures."""
    kind, title = BOX[s.verdict]
    counts = s.counts
    return {
        "kind": kind, "title": title, "total": s.total,
        "all_thin": s.verdict == Verdict.INSUFFICIENT,
        "n_faster": counts[Verdict.FASTER], "n_slower": counts[Verdict.SLOWER],
        "n_same": counts[Verdict.NO_CLEAR_DIFFERENCE], "n_thin": counts[Verdict.INSUFFICIENT],
        "scope": f"{scope(s.scope)}; {counted_note(s)}",
        "exceptions": exceptions(s.movers, comparison_columns(s.counted, "cudnn_benchmark")),
        "faster_span": span(s.faster_speedups, fmt.ratio),
        "faster_saved": span(map(fmt.saved, s.faster_speedups), fmt.pct),
        "break_even_span": span(s.break_even, fmt.iterations),
        "warm_break_even_span": span(s.warm_break_even, fmt.iterations),
        "never": s.never,
        "memory_span": span(s.faster_memory, fmt.bytes_),
    }


def _section(writer: Writer, answers: Answers, p: Page, s: CudnnSection, csv: str
             ) -> dict[str, Any]:
    m = s.machine
    cols = comparison_columns(s.rows, "cudnn_benchmark")
    return {
        **machine_context(p, m),
        **_summary(s.summary),
        **_tables(answers, p, s.rows, cols),
        "speed_chart": speedup_chart(
            s.rows, cols, chart_file("cudnn-speedup", m.page), writer,
            title=f"cudnn.benchmark on vs off: {m.title}",
            xlabel="steady-state speedup with benchmark on (> 1 is faster), 95% CI",
            what=f"Steady-state speedup from cudnn.benchmark on {m.title}",
        ),
        "more": more_rows(p, len(s.rows), csv),
        "be_chart": _break_even_chart(writer, s, cols),
    }


def cudnn_page(writer: Writer, answers: Answers, common: dict[str, Any]) -> None:
    model = answers.cudnn
    p = page(answers, CUDNN_PAGE)
    csv = (write_comparisons(writer, "cudnn-benchmark", model.pairs, _CSV_EXTRA)
           if len(model.pairs) else "")
    writer.page(
        CUDNN_PAGE,
        "cudnn-benchmark.md.j2",
        p=p,
        sections=[_section(writer, answers, p, s, csv) for s in model.sections],
        claims=claims_box(model.claims, p),
        algo=verdict_line(model.algo, p),
        recs=advice_items(model.advice, p),
        **common,
    )
