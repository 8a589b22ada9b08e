"""The CPU-vs-GPU page, formatted from :class:`bench.report.questions.cpu_gpu.model.CpuGpuPage`:
the answer per machine (from which batch the GPU wins, by how much, with the same setting on
both sides and with each side at its best measured setting), then the charts and tables."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bench.report import fmt
from bench.report.questions.answers import Shared
from bench.report.questions.cpu_gpu.model import (
    Best,
    BestCell,
    CpuGpuPage,
    CpuGpuPair,
    CpuGpuSection,
)
from bench.report.render import costcharts
from bench.report.render.escape import Md, cat
from bench.report.render.markdown import Page
from bench.report.render.paths import CPU_GPU_PAGE, chart_file
from bench.report.render.words.answers import anchored, answer, cite_sentence, figure, short_scope
from bench.report.render.words.comparisons import (
    TABLE_ROWS,
    cell_links,
    comparison_page,
    figure_of,
    more_rows,
    not_drawn,
)
from bench.report.render.words.context import page, section_anchor, verdict
from bench.report.render.words.labels import (
    alt_list,
    axis_text,
    energy_text,
    label,
    span,
    tail_text,
)
from bench.report.render.writer import Writer


def _links(p: Page, r: CpuGpuPair) -> Md:
    return cell_links(p, r.page, [("cpu", r.baseline_anchor), ("gpu", r.variant_anchor)])


def _crossing(s: CpuGpuSection) -> tuple[str, str]:
    """The decision and where the GPU wins, from the curves' crossovers."""
    c = s.crossing
    if not c.curves:
        return "not enough data yet", ""
    if not c.batches and c.all_thin:
        return ("cannot tell yet: every batch measured has too few replicates (the rows say "
                "why; where a sitting disagreed, `bench run --resume` measures them again)"), ""
    if not c.batches:
        return "the CPU, or either: the GPU was not clearly faster", ""
    where = (f"The GPU is clearly faster from batch {span(map(float, c.batches), fmt.integer)} "
             f"up to the largest measured on {len(c.batches)} of {c.curves} curves")
    if c.thin:
        where += (f" (batch {', '.join(map(str, c.thin))}: too few replicates, so it may already "
                  "win there)")
    return f"use the GPU from batch {min(c.batches)}", where


def _setting(cell: BestCell) -> str:
    return f"{cell.precision}{', channels_last' if cell.memory_format == 'channels_last' else ''}"


def _best_text(b: Best) -> str:
    """Each side at its best measured setting, for the same workload."""
    ci = fmt.ci(b.ci_low, b.ci_high)
    figure_ = fmt.ratio(b.speedup) + (f" (95% CI {ci})" if ci != fmt.MISSING else "")
    if b.same_setting:
        return (f" Each side's best measured setting is the same one ({_setting(b.gpu)}), so "
                "best against best is the figure above.")
    return (f" Each side at its best measured setting (GPU {_setting(b.gpu)}, CPU "
            f"{_setting(b.cpu)}, {b.gpu.model} {b.gpu.mode} at batch {b.batch}): {figure_}.")


def _answer(p: Page, s: CpuGpuSection) -> dict[str, Any]:
    m, sm = s.machine, s.summary
    decision, where = _crossing(s)
    top = s.top
    text: list[object] = [f"for {short_scope(sm.scope)}, the same setting on both sides. "
                          + (where + ". " if where else "")]
    cite = ""
    if top is not None:
        name = label(top, s.top_columns)
        text += [f"Largest measured: {figure(top)} for {name} (rows: ", _links(p, top), ")."]
        cite = cite_sentence(f"the GPU ran {figure(top)} the speed of the same machine's CPU, "
                             f"at the same setting, for {name}", m, top.verdict, m.days)
        if s.top_best is not None:
            text.append(_best_text(s.top_best))
    return answer(p, CPU_GPU_PAGE, "answer", m, decision, cat(*text), cite, top)


def _step_chart(writer: Writer, s: CpuGpuSection, cols: tuple[str, ...]
                ) -> dict[str, Any] | None:
    """Median step time against batch size on each device, where a curve has two batches."""
    points = []
    for r in s.rows:
        name = label(r, cols, short=True) or str(r.model)
        batch = r.batch_size
        for device, value in (("CPU", r.base_median_s), ("GPU", r.var_median_s)):
            if value is not None and batch is not None:
                points.append(costcharts.StepPoint(f"{name} {device}", float(batch), float(value)))
    return _device_chart(
        writer, s, points, costcharts.step_chart, "cpu-gpu-steps", "Step time by batch size",
        "Median step time (log scale) against batch size: dashed on the CPU, solid on the GPU, "
        "the same setting on both.",
        "Median step time by batch size on the CPU and the GPU: " + alt_list(
            f"{pt.series} at batch {pt.batch:g}: {fmt.seconds(pt.seconds)}" for pt in points))


def _tail_chart(writer: Writer, s: CpuGpuSection, cols: tuple[str, ...]
                ) -> dict[str, Any] | None:
    """p99 step time against throughput across batch sizes, per curve and device."""
    points = []
    for r in s.rows:
        name, batch = label(r, cols, short=True) or str(r.model), r.batch_size
        for device, sps, p99 in (("CPU", r.base_samples_per_s, r.base_latency_p99_s),
                                 ("GPU", r.var_samples_per_s, r.var_latency_p99_s)):
            if sps is not None and p99 is not None and batch is not None and sps > 0:
                points.append(costcharts.TailPoint(f"{name} {device}", float(batch),
                                                   float(sps), float(p99)))
    return _device_chart(
        writer, s, points, costcharts.tail_chart, "cpu-gpu-tails",
        "p99 step time against throughput",
        "p99 step time (log scale) against samples/s across batch sizes (labelled): dashed on "
        "the CPU, solid on the GPU.",
        "p99 step time against throughput on the CPU and the GPU: " + alt_list(
            f"{pt.series} at batch {pt.batch:g}: {fmt.rate(pt.samples_per_s)}, p99 "
            f"{fmt.seconds(pt.p99_s)}" for pt in points))


def _device_chart(writer: Writer, s: CpuGpuSection, points: Sequence[Any],
                  draw: Callable[..., Any], stem: str, title: str, caption: str, alt: str
                  ) -> dict[str, Any] | None:
    """Draw ``points`` (curves on each device across batch sizes), or None where they span
    fewer than two batches: one batch makes no curve."""
    if len({pt.batch for pt in points}) < 2:
        return None
    path = chart_file(stem, s.machine.page)
    writer.chart(draw, path, points, title=f"{title}: {s.machine.title}")
    return figure_of(path, len(points), 0, caption, alt)


def _tail_row(p: Page, r: CpuGpuPair, cols: tuple[str, ...]) -> list[Any]:
    return [label(r, cols, short=True), axis_text("batch_size", r.batch_size),
            tail_text(r.base_latency_p99_s, r.base_latency_p99_lo_s, r.base_latency_p99_hi_s,
                      r.base_latency_steps_min) + " → "
            + tail_text(r.var_latency_p99_s, r.var_latency_p99_lo_s, r.var_latency_p99_hi_s,
                        r.var_latency_steps_min),
            energy_text(r.base_joules_per_sample, r.base_mean_power_w, r.base_energy_method),
            energy_text(r.var_joules_per_sample, r.var_mean_power_w, r.var_energy_method),
            _links(p, r)]


def _tail_table(writer: Writer, p: Page, s: CpuGpuSection, cols: tuple[str, ...],
                anchor: str) -> Md | None:
    rows = [_tail_row(p, r, cols) for r in s.tails]
    if not rows:
        return None
    return writer.table(p.here, f"{anchor}-tails",
                        ["Curve", "Batch", "p99 step CPU → GPU (95% CI)",
                         "Energy per sample, CPU", "Energy per sample, GPU", "Rows"], rows)


def _row(shared: Shared, p: Page, r: CpuGpuPair, cols: tuple[str, ...]) -> list[Any]:
    return [label(r, cols, short=True), axis_text("batch_size", r.batch_size),
            f"{fmt.seconds(r.base_median_s)} → {fmt.seconds(r.var_median_s)}",
            fmt.estimate(r.speedup, r.ci_low, r.ci_high), verdict(shared, r),
            _links(p, r)]


def _best_row(p: Page, b: Best) -> list[Any]:
    return [f"{b.gpu.model} {b.gpu.mode} b{b.batch}", _setting(b.cpu),
            _setting(b.gpu), fmt.estimate(b.speedup, b.ci_low, b.ci_high),
            cell_links(p, b.gpu.page, [("cpu", b.cpu.anchor), ("gpu", b.gpu.anchor)])]


def _section(writer: Writer, shared: Shared, p: Page, s: CpuGpuSection, csv: str
             ) -> dict[str, Any]:
    group, cols = s.rows, s.columns
    rows = [_row(shared, p, r, cols) for r in group[:TABLE_ROWS]]
    anchor = section_anchor("on", s.machine)
    return {
        "heading": s.machine.title, "anchor": anchor, "n": len(group),
        "more": more_rows(p, len(group), csv),
        "chart": _step_chart(writer, s, cols) if s.charts_on is None
        else not_drawn(p, s.charts_on, section_anchor("on", s.charts_on)),
        "tail_chart": _tail_chart(writer, s, cols) if s.charts_on is None else None,
        "tails": _tail_table(writer, p, s, cols, anchor),
        "table": writer.table(p.here, anchor, ["Curve", "Batch", "Step CPU → GPU",
                                               "GPU speedup (95% CI)", "Verdict", "Rows"], rows),
        "best": writer.table(p.here, f"{anchor}-best",
                             ["Workload", "CPU at", "GPU at", "GPU speedup (95% CI)", "Rows"],
                             [_best_row(p, b) for b in s.best]) if s.best else None,
    }


def cpu_gpu_page(writer: Writer, model: CpuGpuPage, shared: Shared,
                 common: dict[str, Any]) -> None:
    p = page(shared, CPU_GPU_PAGE)
    comparison_page(writer, p, "cpu-vs-gpu.md.j2", model,
                    csv=("cpu-vs-gpu", ("base_samples_per_s", "var_samples_per_s")),
                    section=_section, shared=shared, common=common,
                    answers=anchored([_answer(p, s) for s in model.sections],
                                     common["build"]))
