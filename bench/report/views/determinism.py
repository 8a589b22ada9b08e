"""The determinism page: the cost of cudnn.deterministic and the bitwise re-run checks."""

from __future__ import annotations

from typing import Any

import pandas as pd

from bench.report import fmt
from bench.report.pages import safe_title, table
from bench.report.paths import DETERMINISM_PAGE, chart_file
from bench.report.views.claims import claims_box
from bench.report.views.comparisons import (
    TABLE_ROWS,
    cell_links,
    more_rows,
    speedup_chart,
    write_comparisons,
)
from bench.report.views.frames import CONFIG_AXES, sort_rows
from bench.report.views.inputs import Inputs, Machine, machine_context
from bench.report.views.labels import comparison_columns, equal_text, label, varying
from bench.report.views.recommendations import recommendations_for
from bench.report.vocabulary import Verdict
from bench.report.writer import Writer


def determinism_page(writer: Writer, data: Inputs, common: dict[str, Any]) -> None:
    here = DETERMINISM_PAGE
    p = data.page(here)
    sections = []
    repro_by_page = (
        {str(k): g for k, g in data.a.repro.groupby("page")} if len(data.a.repro) else {}
    )
    pages = (
        sorted(set(data.a.determinism["page"].astype(str)) | set(repro_by_page))
        if len(data.a.determinism)
        else sorted(repro_by_page)
    )
    det = data.a.determinism
    csv = (
        write_comparisons(
            writer,
            "determinism",
            det,
            ("base_bitwise_equal", "var_bitwise_equal", "base_max_abs_diff", "var_max_abs_diff"),
        )
        if len(det)
        else ""
    )
    for page in pages:
        m = data.machines.get(page) or Machine(page, page, "", safe_title(page), "")
        group = (
            sort_rows(data.a.determinism.loc[data.a.determinism["page"] == page])
            if len(data.a.determinism)
            else pd.DataFrame()
        )
        rows = []
        chart = None
        if len(group):
            cols = comparison_columns(group, "cudnn_deterministic")
            for r in group.head(TABLE_ROWS).itertuples(index=False):
                rows.append(
                    [
                        label(r, cols),
                        fmt.ratio(r.speedup),
                        fmt.ci(r.ci_low, r.ci_high),
                        data.verdict(r),
                        fmt.change(r.speedup) if r.verdict != Verdict.INSUFFICIENT else fmt.MISSING,
                        equal_text(r.base_n_checks, r.base_bitwise_equal, r.base_max_abs_diff),
                        equal_text(r.var_n_checks, r.var_bitwise_equal, r.var_max_abs_diff),
                        cell_links(
                            p, r.page, [("off", r.baseline_anchor), ("on", r.variant_anchor)]
                        ),
                    ]
                )
            chart = speedup_chart(
                group,
                cols,
                chart_file("determinism", m.page),
                writer,
                title=f"deterministic on vs off: {m.title}",
                xlabel="speed with cudnn.deterministic on (< 1 is slower), 95% CI",
                what=f"Speed of cudnn.deterministic on relative to off on {m.title}",
            )
        checks = []
        rep = repro_by_page.get(page)
        if rep is not None:
            rep = sort_rows(rep)
            cols = varying(rep, list(CONFIG_AXES))
            for r in rep.itertuples(index=False):
                checks.append(
                    [
                        label(r, cols),
                        equal_text(r.n_ok_checks, r.bitwise_equal, r.max_abs_diff),
                        str(r.status_summary),
                        p.row_link("check", r.page, r.anchor),
                    ]
                )
        sections.append(
            {
                **machine_context(p, m),
                "more": more_rows(p, len(group), csv),
                "chart": chart,
                "table": table(
                    [
                        "Configuration",
                        "Speed, on vs off",
                        "95% CI",
                        "Verdict",
                        "Time",
                        "Re-run, deterministic off",
                        "Re-run, deterministic on",
                        "Rows",
                    ],
                    rows,
                )
                if rows
                else None,
                "checks": table(["Configuration", "Two fresh processes", "Status", "Row"], checks)
                if checks
                else None,
            }
        )
    writer.page(
        here,
        "determinism.md.j2",
        p=p,
        sections=sections,
        claims=claims_box(data, "determinism", p),
        recs=recommendations_for(data, "cudnn.deterministic", p),
        **common,
    )
