"""The dynamic-shapes page: throughput per FLOP of dynamic and ragged shapes against static ones.

Like every other ratio on the site (and like this page's chart), above 1 means faster: a table
saying "0.91×, faster" next to a chart saying "1.10×" made readers do the inversion.
"""

from __future__ import annotations

from typing import Any

from bench.report import fmt
from bench.report.judge import Answers
from bench.report.judge.pages.studies import MachineRows
from bench.report.pages import Page, table
from bench.report.paths import SHAPES_PAGE, chart_file
from bench.report.views.claim_words import claims_box
from bench.report.views.comparisons import (
    TABLE_ROWS,
    cell_links,
    more_rows,
    speedup_chart,
    write_comparisons,
)
from bench.report.views.context import machine_context, page, verdict
from bench.report.views.frames import present
from bench.report.views.labels import cold_text, comparison_columns, label
from bench.report.views.recommendations import advice_items
from bench.report.writer import Writer

_CSV_EXTRA = ("shape_count", "slowdown", "slowdown_ci_low", "slowdown_ci_high",
              "penalty_per_shape_s", "extra_cold_per_new_shape_s", "penalty_vs_bm_off_s")
_HEADERS = ["Configuration", "Shapes", "Throughput per FLOP vs static", "95% CI", "Verdict",
            "Kernel cache", "Cold pass, all shapes (range)", "Cold cost per new shape",
            "Extra cold time per extra shape", "New-shape cost vs benchmark off", "Rows"]


def _row(answers: Answers, p: Page, r: Any, cols: list[str]) -> list[Any]:
    shape = (f"{r.variant_value} ({r.shape_count} shapes)" if present(r.shape_count)
             else str(r.variant_value))
    return [
        label(r, cols), shape, fmt.ratio(r.speedup), fmt.ci(r.ci_low, r.ci_high),
        verdict(answers, r), str(r.kernel_cache),
        cold_text(r.var_cold_pass_s, r.var_cold_pass_min_s, r.var_cold_pass_max_s),
        fmt.seconds(r.penalty_per_shape_s), fmt.seconds(r.extra_cold_per_new_shape_s),
        fmt.signed_seconds(r.penalty_vs_bm_off_s) if present(r.penalty_vs_bm_off_s)
        else fmt.MISSING,
        cell_links(p, r.page, [("static", r.baseline_anchor),
                               (str(r.variant_value), r.variant_anchor)]),
    ]


def _section(writer: Writer, answers: Answers, p: Page, s: MachineRows, csv: str
             ) -> dict[str, Any]:
    m, group = s.machine, s.rows
    cols = comparison_columns(group, "shapes")
    chart = speedup_chart(
        group.assign(variant_value=group["variant_value"].astype(str)), [*cols, "variant_value"],
        chart_file("shapes", m.page), writer,
        title=f"Throughput vs static shapes: {m.title}",
        xlabel="throughput relative to static shapes (< 1 is slower), 95% CI",
        what=f"Throughput of dynamic and ragged shapes relative to static on {m.title}",
    )
    rows = [_row(answers, p, r, cols) for r in group.head(TABLE_ROWS).itertuples(index=False)]
    return {**machine_context(p, m), "more": more_rows(p, len(group), csv), "chart": chart,
            "table": table(_HEADERS, rows)}


def shapes_page(writer: Writer, answers: Answers, common: dict[str, Any]) -> None:
    model = answers.shapes
    p = page(answers, SHAPES_PAGE)
    pairs = model.shapes.pairs
    csv = write_comparisons(writer, "dynamic-shapes", pairs, _CSV_EXTRA) if len(pairs) else ""
    writer.page(
        SHAPES_PAGE,
        "dynamic-shapes.md.j2",
        p=p,
        sections=[_section(writer, answers, p, s, csv) for s in model.shapes.sections],
        claims=claims_box(model.claims, p),
        recs=advice_items(model.advice, p),
        **common,
    )
