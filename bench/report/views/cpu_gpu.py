"""The CPU-vs-GPU page: GPU speedup by batch size and the crossover batch."""

from __future__ import annotations

import math
from typing import Any

from bench.report import charts, fmt
from bench.report.judge import Answers
from bench.report.judge.pages.studies import CURVE_AXES, CpuGpuSection
from bench.report.pages import Page, table
from bench.report.paths import CPU_GPU_PAGE, chart_file
from bench.report.views.claim_words import claims_box
from bench.report.views.comparisons import TABLE_ROWS, cell_links, more_rows, write_comparisons
from bench.report.views.context import machine_context, page, verdict
from bench.report.views.frames import present, rows_of
from bench.report.views.labels import alt_list, axis_text, label, varying
from bench.report.views.recommendations import advice_items
from bench.report.vocabulary import Verdict
from bench.report.writer import Writer

_HEADERS = ["Curve", "Batch", "CPU step · samples/s", "GPU step · samples/s", "GPU speedup",
            "95% CI", "Verdict", "Rows"]


def _chart(writer: Writer, s: CpuGpuSection, curve_cols: list[str]) -> dict[str, Any] | None:
    points = [
        charts.SeriesPoint(
            label(r, curve_cols), float(r.batch_size), float(r.speedup),
            float(r.ci_low) if present(r.ci_low) else math.nan,
            float(r.ci_high) if present(r.ci_high) else math.nan,
        )
        for r in rows_of(s.pairs)
        if present(r.speedup) and present(r.batch_size) and r.verdict != Verdict.INSUFFICIENT
    ]
    if not points:
        return None
    series = sorted({pt.series for pt in points})
    keep = set(series[: len(charts.PALETTE) * 2])
    path = chart_file("cpu-vs-gpu", s.machine.page)
    writer.chart(charts.lines_chart, path, [pt for pt in points if pt.series in keep],
                 title=f"GPU over CPU: {s.machine.title}", xlabel="batch size",
                 ylabel="GPU speedup over CPU (95% CI)", reference_label="above: GPU faster")
    return {
        "path": path, "left_out": len(series) - len(keep), "shown": len(keep),
        "alt": f"GPU speedup over the CPU by batch size on {s.machine.title}: " + alt_list(
            f"{pt.series} at batch {pt.x:g}: {fmt.ratio(pt.y)}"
            for pt in points if pt.series in keep),
    }


def _row(answers: Answers, p: Page, r: Any, curve_cols: list[str]) -> list[Any]:
    return [
        label(r, curve_cols), axis_text("batch_size", r.batch_size),
        _step(r.base_median_s, r.batch_size), _step(r.var_median_s, r.batch_size),
        fmt.ratio(r.speedup), fmt.ci(r.ci_low, r.ci_high), verdict(answers, r),
        cell_links(p, r.page, [("cpu", r.baseline_anchor), ("gpu", r.variant_anchor)]),
    ]


def _section(writer: Writer, answers: Answers, p: Page, s: CpuGpuSection, csv: str
             ) -> dict[str, Any]:
    group = s.pairs
    curve_cols = varying(group, list(CURVE_AXES))
    cross_rows = [
        [label(r, curve_cols), crossover_text(r),
         ", ".join(f"{b}: {fmt.ratio(v)} ({w})" for b, v, w in zip(r.batches, r.speedups,
                                                                   r.verdicts))]
        for r in s.curves.itertuples(index=False)
    ] if len(s.curves) else []
    rows = [_row(answers, p, r, curve_cols)
            for r in group.head(TABLE_ROWS).itertuples(index=False)]
    return {
        **machine_context(p, s.machine),
        "more": more_rows(p, len(group), csv),
        "chart": _chart(writer, s, curve_cols),
        "crossover": table(["Curve", "Crossover", "Speedup by batch (verdict)"], cross_rows)
        if cross_rows else None,
        "table": table(_HEADERS, rows),
    }


def cpu_gpu_page(writer: Writer, answers: Answers, common: dict[str, Any]) -> None:
    model = answers.cpu_gpu
    p = page(answers, CPU_GPU_PAGE)
    csv = (write_comparisons(writer, "cpu-vs-gpu", model.pairs,
                             ("base_samples_per_s", "var_samples_per_s"))
           if len(model.pairs) else "")
    writer.page(
        CPU_GPU_PAGE,
        "cpu-vs-gpu.md.j2",
        p=p,
        sections=[_section(writer, answers, p, s, csv) for s in model.sections],
        claims=claims_box(model.claims, p),
        recs=advice_items(model.advice, p),
        **common,
    )


def _step(median_s: Any, batch: Any) -> str:
    """``156 ms · 6.40/s``: the median step the speedup divides, and its samples per second.

    Both sides come from the median step so that the row's ratio is the speedup printed next
    to it; the run's own samples/s (batch ÷ mean step) can differ where a replicate drifted.
    """
    if not present(median_s) or float(median_s) <= 0:
        return fmt.MISSING
    return f"{fmt.seconds(median_s)} · {fmt.num(float(batch) / float(median_s))}/s"


def crossover_text(r: Any) -> str:
    """The crossover of one curve, saying where too few replicates leave it open."""
    thin = [b for b, v in zip(r.batches, r.verdicts) if v == Verdict.INSUFFICIENT]
    if len(thin) == len(r.batches):
        return "not enough ok replicates at any batch"
    if not present(r.crossover_batch):
        return "GPU not clearly faster at any measured batch from there up"
    below = [str(b) for b in thin if b < r.crossover_batch]
    text = f"GPU faster from batch {r.crossover_batch}"
    if below:
        text += f" (batch {', '.join(below)}: not enough ok replicates to judge)"
    return text
