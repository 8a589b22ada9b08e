"""The CPU-vs-GPU page: GPU speedup by batch size and the crossover batch."""

from __future__ import annotations

import math
from typing import Any

from bench.report import charts, fmt
from bench.report.analysis.studies import CURVE_KEY
from bench.report.pages import table
from bench.report.paths import CPU_GPU_PAGE, chart_file
from bench.report.views.claims import claims_box
from bench.report.views.comparisons import TABLE_ROWS, cell_links, more_rows, write_comparisons
from bench.report.views.frames import present, rows_of, sort_rows
from bench.report.views.inputs import Inputs, by_machine, machine_context
from bench.report.views.labels import alt_list, axis_text, label, varying
from bench.report.views.recommendations import recommendations_for
from bench.report.vocabulary import Verdict
from bench.report.writer import Writer


def cpu_gpu_page(writer: Writer, data: Inputs, common: dict[str, Any]) -> None:
    here = CPU_GPU_PAGE
    p = data.page(here)
    sections = []
    cross_by_page = (
        {str(k): g for k, g in data.a.crossovers.groupby("page")} if len(data.a.crossovers) else {}
    )
    cpu_gpu = data.a.cpu_gpu
    csv = (
        write_comparisons(
            writer, "cpu-vs-gpu", cpu_gpu, ("base_samples_per_s", "var_samples_per_s")
        )
        if len(cpu_gpu)
        else ""
    )
    for m, group in by_machine(cpu_gpu, data.machines):
        group = sort_rows(group)
        curve_cols = varying(
            group, [c for c in CURVE_KEY if c not in ("fingerprint_id", "machine", "page")]
        )
        points = [
            charts.SeriesPoint(
                label(r, curve_cols),
                float(r.batch_size),
                float(r.speedup),
                float(r.ci_low) if present(r.ci_low) else math.nan,
                float(r.ci_high) if present(r.ci_high) else math.nan,
            )
            for r in rows_of(group)
            if present(r.speedup) and present(r.batch_size) and r.verdict != Verdict.INSUFFICIENT
        ]
        chart = None
        if points:
            series = sorted({pt.series for pt in points})
            keep = set(series[: len(charts.PALETTE) * 2])
            path = chart_file("cpu-vs-gpu", m.page)
            writer.chart(
                charts.lines_chart,
                path,
                [pt for pt in points if pt.series in keep],
                title=f"GPU over CPU: {m.title}",
                xlabel="batch size",
                ylabel="GPU speedup over CPU (95% CI)",
                reference_label="above: GPU faster",
            )
            chart = {
                "path": path,
                "left_out": len(series) - len(keep),
                "shown": len(keep),
                "alt": f"GPU speedup over the CPU by batch size on {m.title}: "
                + alt_list(
                    f"{pt.series} at batch {pt.x:g}: {fmt.ratio(pt.y)}"
                    for pt in points
                    if pt.series in keep
                ),
            }
        cross_rows = []
        cross = cross_by_page.get(m.page)
        if cross is not None:
            for r in cross.itertuples(index=False):
                at = ", ".join(
                    f"{b}: {fmt.ratio(s)} ({v})"
                    for b, s, v in zip(r.batches, r.speedups, r.verdicts)
                )
                cross_rows.append([label(r, curve_cols), crossover_text(r), at])
        rows = []
        for r in group.head(TABLE_ROWS).itertuples(index=False):
            rows.append(
                [
                    label(r, curve_cols),
                    axis_text("batch_size", r.batch_size),
                    _step(r.base_median_s, r.batch_size),
                    _step(r.var_median_s, r.batch_size),
                    fmt.ratio(r.speedup),
                    fmt.ci(r.ci_low, r.ci_high),
                    data.verdict(r),
                    cell_links(p, r.page, [("cpu", r.baseline_anchor), ("gpu", r.variant_anchor)]),
                ]
            )
        sections.append(
            {
                **machine_context(p, m),
                "more": more_rows(p, len(group), csv),
                "chart": chart,
                "crossover": table(["Curve", "Crossover", "Speedup by batch (verdict)"], cross_rows)
                if cross_rows
                else None,
                "table": table(
                    [
                        "Curve",
                        "Batch",
                        "CPU step · samples/s",
                        "GPU step · samples/s",
                        "GPU speedup",
                        "95% CI",
                        "Verdict",
                        "Rows",
                    ],
                    rows,
                ),
            }
        )
    writer.page(
        here,
        "cpu-vs-gpu.md.j2",
        p=p,
        sections=sections,
        claims=claims_box(data, "cpu-vs-gpu", p),
        recs=recommendations_for(data, "device", p),
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
