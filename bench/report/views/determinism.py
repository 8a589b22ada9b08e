"""The determinism page: the cost of cudnn.deterministic and the bitwise re-run checks."""

from __future__ import annotations

from typing import Any

from bench.report import fmt
from bench.report.judge import Answers
from bench.report.judge.pages.studies import DeterminismSection
from bench.report.pages import Page, table
from bench.report.paths import DETERMINISM_PAGE, chart_file
from bench.report.views.claim_words import claims_box
from bench.report.views.comparisons import (
    TABLE_ROWS,
    cell_links,
    more_rows,
    speedup_chart,
    write_comparisons,
)
from bench.report.views.context import machine_context, page, verdict
from bench.report.views.frames import CONFIG_AXES
from bench.report.views.labels import comparison_columns, equal_text, label, varying
from bench.report.views.recommendations import advice_items
from bench.report.vocabulary import Verdict
from bench.report.writer import Writer

_HEADERS = ["Configuration", "Speed, on vs off", "95% CI", "Verdict", "Time",
            "Re-run, deterministic off", "Re-run, deterministic on", "Rows"]


def _row(answers: Answers, p: Page, r: Any, cols: list[str]) -> list[Any]:
    return [
        label(r, cols), fmt.ratio(r.speedup), fmt.ci(r.ci_low, r.ci_high), verdict(answers, r),
        fmt.change(r.speedup) if r.verdict != Verdict.INSUFFICIENT else fmt.MISSING,
        equal_text(r.base_n_checks, r.base_bitwise_equal, r.base_max_abs_diff),
        equal_text(r.var_n_checks, r.var_bitwise_equal, r.var_max_abs_diff),
        cell_links(p, r.page, [("off", r.baseline_anchor), ("on", r.variant_anchor)]),
    ]


def _checks(p: Page, s: DeterminismSection) -> list[list[Any]]:
    cols = varying(s.checks, list(CONFIG_AXES))
    return [[label(r, cols), equal_text(r.n_ok_checks, r.bitwise_equal, r.max_abs_diff),
             str(r.status_summary), p.row_link("check", r.page, r.anchor)]
            for r in s.checks.itertuples(index=False)]


def _section(writer: Writer, answers: Answers, p: Page, s: DeterminismSection, csv: str
             ) -> dict[str, Any]:
    m, group = s.machine, s.pairs
    rows, chart = [], None
    if len(group):
        cols = comparison_columns(group, "cudnn_deterministic")
        rows = [_row(answers, p, r, cols) for r in group.head(TABLE_ROWS).itertuples(index=False)]
        chart = speedup_chart(
            group, cols, chart_file("determinism", m.page), writer,
            title=f"deterministic on vs off: {m.title}",
            xlabel="speed with cudnn.deterministic on (< 1 is slower), 95% CI",
            what=f"Speed of cudnn.deterministic on relative to off on {m.title}",
        )
    checks = _checks(p, s) if len(s.checks) else []
    return {
        **machine_context(p, m),
        "more": more_rows(p, len(group), csv),
        "chart": chart,
        "table": table(_HEADERS, rows) if rows else None,
        "checks": table(["Configuration", "Two fresh processes", "Status", "Row"], checks)
        if checks else None,
    }


def determinism_page(writer: Writer, answers: Answers, common: dict[str, Any]) -> None:
    model = answers.determinism
    p = page(answers, DETERMINISM_PAGE)
    csv = (write_comparisons(writer, "determinism", model.pairs, (
        "base_bitwise_equal", "var_bitwise_equal", "base_max_abs_diff", "var_max_abs_diff"))
        if len(model.pairs) else "")
    writer.page(
        DETERMINISM_PAGE,
        "determinism.md.j2",
        p=p,
        sections=[_section(writer, answers, p, s, csv) for s in model.sections],
        claims=claims_box(model.claims, p),
        recs=advice_items(model.advice, p),
        **common,
    )
