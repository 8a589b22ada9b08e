"""The precision page: reduced precisions against fp32 and channels_last against nchw."""

from __future__ import annotations

from typing import Any

import pandas as pd

from bench.report import fmt
from bench.report.pages import table
from bench.report.paths import PRECISION_PAGE, chart_file
from bench.report.views.comparisons import (
    TABLE_ROWS,
    cell_links,
    more_rows,
    speedup_chart,
    write_comparisons,
)
from bench.report.views.frames import sort_rows
from bench.report.views.inputs import Inputs, by_machine, machine_context
from bench.report.views.labels import comparison_columns, label
from bench.report.views.recommendations import merged, recommendations_for
from bench.report.writer import Writer


def precision_page(writer: Writer, data: Inputs, common: dict[str, Any]) -> None:
    here = PRECISION_PAGE
    p = data.page(here)
    tf32 = (
        data.a.cells.set_index(["fingerprint_id", "cell_id"])["eff_cudnn_allow_tf32"]
        if len(data.a.cells)
        else pd.Series(dtype=str)
    )

    def math_of(fp: str, cell_id: str, device: str) -> str:
        if device != "cuda":
            return "fp32"
        flag = tf32.get((fp, cell_id), "")
        return {"true": "TF32 allowed", "false": "strict FP32"}.get(str(flag), "unknown")

    def sections_for(
        frame: pd.DataFrame, axis: str, kind: str, title: str, xlabel: str
    ) -> list[dict[str, Any]]:
        out = []
        csv = write_comparisons(writer, kind, frame) if len(frame) else ""
        for m, group in by_machine(frame, data.machines):
            group = sort_rows(group, extra=["variant_value"])
            cols = comparison_columns(group, axis)
            chart_frame = group.assign(variant_value=group["variant_value"].astype(str))
            rows = []
            for r in group.head(TABLE_ROWS).itertuples(index=False):
                row = [label(r, cols), str(r.variant_value)]
                if axis == "precision":
                    row.append(math_of(r.fingerprint_id, r.baseline_cell_id, r.device))
                row += [
                    fmt.ratio(r.speedup),
                    fmt.ci(r.ci_low, r.ci_high),
                    data.verdict(r),
                    f"{fmt.seconds(r.base_median_s)} → {fmt.seconds(r.var_median_s)}",
                    cell_links(
                        p,
                        r.page,
                        [
                            (str(r.baseline_value), r.baseline_anchor),
                            (str(r.variant_value), r.variant_anchor),
                        ],
                    ),
                ]
                rows.append(row)
            headers = ["Configuration", "Variant"]
            if axis == "precision":
                headers.append("fp32 baseline convolutions")
            headers += ["Speedup", "95% CI", "Verdict", "Step time", "Rows"]
            chart = speedup_chart(
                chart_frame,
                [*cols, "variant_value"],
                chart_file(kind, m.page),
                writer,
                title=f"{title}: {m.title}",
                xlabel=xlabel,
                what=f"{title} on {m.title}",
            )
            out.append(
                {
                    **machine_context(p, m),
                    "chart": chart,
                    "table": table(headers, rows),
                    "more": more_rows(p, len(group), csv),
                }
            )
        return out

    precision = sections_for(
        data.a.comparisons["precision"],
        "precision",
        "precision",
        "Precision vs fp32",
        "speedup over fp32 (> 1 is faster), 95% CI",
    )
    layout = sections_for(
        data.a.comparisons["memory_format"],
        "memory_format",
        "memory-format",
        "channels_last vs nchw",
        "speedup over nchw (> 1 is faster), 95% CI",
    )
    writer.page(
        here,
        "precision.md.j2",
        p=p,
        precision=precision,
        layout=layout,
        recs=merged(
            recommendations_for(data, "precision", p),
            recommendations_for(data, "memory_format", p),
        ),
        **common,
    )
