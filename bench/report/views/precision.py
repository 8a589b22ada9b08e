"""The precision page: reduced precisions against fp32 and channels_last against nchw, formatted
from :class:`bench.report.judge.pages.studies.PrecisionPage`."""

from __future__ import annotations

from typing import Any

from bench.report import fmt
from bench.report.judge import Answers
from bench.report.judge.pages.studies import Comparisons, MachineRows
from bench.report.pages import Page, table
from bench.report.paths import PRECISION_PAGE, chart_file
from bench.report.views.comparisons import (
    TABLE_ROWS,
    cell_links,
    more_rows,
    speedup_chart,
    write_comparisons,
)
from bench.report.views.context import machine_context, page, verdict
from bench.report.views.labels import comparison_columns, label
from bench.report.views.recommendations import advice_items
from bench.report.writer import Writer

#: How an fp32 baseline's convolutions ran on CUDA, by its read-back allow_tf32 flag.
_MATH = {"true": "TF32 allowed", "false": "strict FP32"}


def _row(answers: Answers, p: Page, r: Any, cols: list[str], axis: str) -> list[Any]:
    row = [label(r, cols), str(r.variant_value)]
    if axis == "precision":
        row.append("fp32" if r.device != "cuda" else _MATH.get(str(r.baseline_allow_tf32),
                                                                "unknown"))
    return [
        *row, fmt.ratio(r.speedup), fmt.ci(r.ci_low, r.ci_high), verdict(answers, r),
        f"{fmt.seconds(r.base_median_s)} → {fmt.seconds(r.var_median_s)}",
        cell_links(p, r.page, [(str(r.baseline_value), r.baseline_anchor),
                               (str(r.variant_value), r.variant_anchor)]),
    ]


def _section(writer: Writer, answers: Answers, p: Page, s: MachineRows, axis: str, kind: str,
             title: str, xlabel: str, csv: str) -> dict[str, Any]:
    m, group = s.machine, s.rows
    cols = comparison_columns(group, axis)
    headers = ["Configuration", "Variant", *(["fp32 baseline convolutions"]
                                             if axis == "precision" else []),
               "Speedup", "95% CI", "Verdict", "Step time", "Rows"]
    chart = speedup_chart(group.assign(variant_value=group["variant_value"].astype(str)),
                          [*cols, "variant_value"], chart_file(kind, m.page), writer,
                          title=f"{title}: {m.title}", xlabel=xlabel, what=f"{title} on {m.title}")
    rows = [_row(answers, p, r, cols, axis) for r in group.head(TABLE_ROWS).itertuples(index=False)]
    return {**machine_context(p, m), "chart": chart, "table": table(headers, rows),
            "more": more_rows(p, len(group), csv)}


def _sections(writer: Writer, answers: Answers, p: Page, c: Comparisons, axis: str, kind: str,
              title: str, xlabel: str) -> list[dict[str, Any]]:
    csv = write_comparisons(writer, kind, c.pairs) if len(c.pairs) else ""
    return [_section(writer, answers, p, s, axis, kind, title, xlabel, csv) for s in c.sections]


def precision_page(writer: Writer, answers: Answers, common: dict[str, Any]) -> None:
    model = answers.precision
    p = page(answers, PRECISION_PAGE)
    writer.page(
        PRECISION_PAGE,
        "precision.md.j2",
        p=p,
        precision=_sections(writer, answers, p, model.precision, "precision", "precision",
                            "Precision vs fp32", "speedup over fp32 (> 1 is faster), 95% CI"),
        layout=_sections(writer, answers, p, model.layout, "memory_format", "memory-format",
                         "channels_last vs nchw", "speedup over nchw (> 1 is faster), 95% CI"),
        recs=advice_items(model.advice, p),
        **common,
    )
