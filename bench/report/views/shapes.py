"""The dynamic-shapes page: throughput per FLOP of dynamic and ragged shapes against static ones.

Like every other ratio on the site (and like this page's chart), above 1 means faster: a table
saying "0.91×, faster" next to a chart saying "1.10×" made readers do the inversion.
"""

from __future__ import annotations

from typing import Any

from bench.report import fmt
from bench.report.analysis.pairs import join_cells
from bench.report.pages import table
from bench.report.paths import SHAPES_PAGE, chart_file
from bench.report.views.claims import claims_box
from bench.report.views.comparisons import (
    TABLE_ROWS,
    cell_links,
    more_rows,
    speedup_chart,
    write_comparisons,
)
from bench.report.views.frames import present, sort_rows
from bench.report.views.inputs import Inputs, by_machine, machine_context
from bench.report.views.labels import cold_text, comparison_columns, label
from bench.report.views.recommendations import recommendations_for
from bench.report.writer import Writer


def shapes_page(writer: Writer, data: Inputs, common: dict[str, Any]) -> None:
    here = SHAPES_PAGE
    p = data.page(here)
    sections = []
    csv = (
        write_comparisons(
            writer,
            "dynamic-shapes",
            data.a.shapes,
            (
                "shape_count",
                "slowdown",
                "slowdown_ci_low",
                "slowdown_ci_high",
                "penalty_per_shape_s",
                "extra_cold_per_new_shape_s",
                "penalty_vs_bm_off_s",
            ),
        )
        if len(data.a.shapes)
        else ""
    )
    shapes = data.a.shapes
    if len(shapes):  # each replicate's cold pass varies: the range beside the median
        shapes = join_cells(shapes, data.a.cells, ("cold_pass_min_s", "cold_pass_max_s"))
    for m, group in by_machine(shapes, data.machines):
        group = sort_rows(group)
        cols = comparison_columns(group, "shapes")
        rows = []
        for r in group.head(TABLE_ROWS).itertuples(index=False):
            shape = (
                f"{r.variant_value} ({r.shape_count} shapes)"
                if present(r.shape_count)
                else str(r.variant_value)
            )
            rows.append(
                [
                    label(r, cols),
                    shape,
                    fmt.ratio(r.speedup),
                    fmt.ci(r.ci_low, r.ci_high),
                    data.verdict(r),
                    str(r.kernel_cache),
                    cold_text(r.var_cold_pass_s, r.var_cold_pass_min_s, r.var_cold_pass_max_s),
                    fmt.seconds(r.penalty_per_shape_s),
                    fmt.seconds(r.extra_cold_per_new_shape_s),
                    fmt.signed_seconds(r.penalty_vs_bm_off_s)
                    if present(r.penalty_vs_bm_off_s)
                    else fmt.MISSING,
                    cell_links(
                        p,
                        r.page,
                        [("static", r.baseline_anchor), (str(r.variant_value), r.variant_anchor)],
                    ),
                ]
            )
        chart_cols = [*cols, "variant_value"]
        chart_frame = group.assign(variant_value=group["variant_value"].astype(str))
        chart = speedup_chart(
            chart_frame,
            chart_cols,
            chart_file("shapes", m.page),
            writer,
            title=f"Throughput vs static shapes: {m.title}",
            xlabel="throughput relative to static shapes (< 1 is slower), 95% CI",
            what=f"Throughput of dynamic and ragged shapes relative to static on {m.title}",
        )
        sections.append(
            {
                **machine_context(p, m),
                "more": more_rows(p, len(group), csv),
                "chart": chart,
                "table": table(
                    [
                        "Configuration",
                        "Shapes",
                        "Throughput per FLOP vs static",
                        "95% CI",
                        "Verdict",
                        "Kernel cache",
                        "Cold pass, all shapes (range)",
                        "Cold cost per new shape",
                        "Extra cold time per extra shape",
                        "New-shape cost vs benchmark off",
                        "Rows",
                    ],
                    rows,
                ),
            }
        )
    writer.page(
        here,
        "dynamic-shapes.md.j2",
        p=p,
        sections=sections,
        claims=claims_box(data, "dynamic-shapes", p),
        recs=recommendations_for(data, "cudnn.benchmark", p, shapes_only=True),
        **common,
    )
