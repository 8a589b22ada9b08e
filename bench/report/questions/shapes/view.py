"""The dynamic-shapes page: throughput in FLOP/s (samples/s × FLOP per sample, since the shapes
differ in size) of dynamic and ragged shapes against static ones.

Like every other ratio on the site (and like this page's chart), above 1 means faster: a table
saying "0.91×, faster" next to a chart saying "1.10×" made readers do the inversion.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.report import fmt
from bench.report.judge import DELTA
from bench.report.questions.answers import Shared
from bench.report.questions.shapes.model import ShapesPage, ShapesPair, ShapesSection, Tally
from bench.report.render.escape import Md, cat
from bench.report.render.markdown import Page, table
from bench.report.render.paths import SHAPES_PAGE, chart_file
from bench.report.render.words.answers import anchored, answer, cite_sentence, figure, short_scope
from bench.report.render.words.comparisons import (
    TABLE_ROWS,
    cell_links,
    comparison_page,
    more_rows,
    not_drawn,
    speedup_chart,
)
from bench.report.render.words.context import page, section_anchor, verdict
from bench.report.render.words.frames import present
from bench.report.render.words.labels import cold_text, label, span
from bench.report.render.writer import Writer
from bench.report.vocabulary import Verdict

_CSV_EXTRA = ("shape_count", "slowdown", "slowdown_ci_low", "slowdown_ci_high",
              "penalty_per_shape_s", "extra_cold_per_new_shape_s", "penalty_vs_bm_off_s",
              "extra_cold_vs_bm_off_s")
_HEADERS = ["Configuration", "Shapes", "FLOP/s vs static (95% CI)", "Verdict", "Rows"]
#: "Per new shape" and "benchmark on − off" share their baselines (the static cell of the same
#: setting) and their divisor (the extra shapes), so one is never printed as part of the other.
_COST_HEADERS = ["Configuration", "Cache", "First pass, all shapes (range)", "Per new shape",
                 "Per new shape, benchmark on − off", "Rows"]
#: What changing shapes do to the steady state, by the verdict its pairs agree on.
DECISION = {
    Verdict.FASTER: "changing shapes ran at higher FLOP/s here",
    Verdict.SLOWER: "changing shapes cost steady throughput here",
    Verdict.NO_CLEAR_DIFFERENCE: "no steady cost: the price is each new shape's first pass",
    Verdict.MIXED: "it depends on the workload",
    Verdict.INSUFFICIENT: "not enough data yet",
}
#: "No clear difference" from an interval reaching beyond 1 ± δ: it only fails to show a
#: steady cost, so "no steady cost" would overstate (the Methodology's wording).
NO_CLEAR_STEADY_COST = (f"no clear steady cost: the 95% intervals reach beyond "
                        f"1 ± {fmt.pct(DELTA)}, so more replicates could still show one")


def _links(p: Page, r: ShapesPair) -> Md:
    return cell_links(p, r.page, [("static", r.baseline_anchor),
                                  (str(r.variant_value), r.variant_anchor)])


def _shape(r: ShapesPair) -> str:
    return (f"{r.variant_value} ({r.shape_count} shapes)" if present(r.shape_count)
            else str(r.variant_value))


def _row(shared: Shared, p: Page, r: ShapesPair, cols: tuple[str, ...]) -> list[Any]:
    return [label(r, cols, short=True), _shape(r),
            fmt.estimate(r.speedup, r.ci_low, r.ci_high), verdict(shared, r),
            _links(p, r)]


def _cost_row(p: Page, r: ShapesPair, cols: tuple[str, ...]) -> list[Any]:
    return [label(r, cols, short=True), str(r.kernel_cache),
            cold_text(r.var_cold_pass_s, r.var_cold_pass_min_s, r.var_cold_pass_max_s),
            fmt.signed_seconds(r.extra_cold_per_new_shape_s),
            fmt.signed_seconds(r.extra_cold_vs_bm_off_s), _links(p, r)]


def decision(sm: Tally[ShapesPair]) -> str:
    """The answer's lead: "no steady cost" only where every interval lies within 1 ± δ."""
    if sm.verdict == Verdict.NO_CLEAR_DIFFERENCE and not sm.in_band:
        return NO_CLEAR_STEADY_COST
    return DECISION[sm.verdict]


def per_shape_text(per_shape: Sequence[float]) -> str:
    """``; each extra shape adds 59.0 ms to 190 ms to the first pass``; a signed change where
    some configuration's first pass was shorter than the static one's (it "adds" nothing)."""
    if not per_shape:
        return ""
    if min(per_shape) < 0:
        return (f"; each extra shape changes the first pass by "
                f"{span(per_shape, fmt.signed_seconds)}")
    return f"; each extra shape adds {span(per_shape, fmt.seconds)} to the first pass"


def _answer(p: Page, s: ShapesSection) -> dict[str, Any]:
    m, sm = s.pairs.machine, s.pairs.summary
    q = sm.quoted
    text: list[object] = [
        f"for {short_scope(sm.scope)}. FLOP/s against one static shape: "
        f"{span(sm.speedups, fmt.ratio) or fmt.MISSING}"
        + (f" (95% intervals {fmt.ci(sm.ci_low, sm.ci_high)})" if sm.ci_low is not None else "")
        + per_shape_text(s.per_shape) + "."]
    cite = ""
    if q is not None:
        name = label(q, s.columns)
        text += [f" {name}, {_shape(q)}: {figure(q)} (rows: ", _links(p, q), ")."]
        cite = cite_sentence(f"{_shape(q)} input shapes ran at {figure(q)} the FLOP/s of one "
                             f"static shape for {name}", m, q.verdict, m.days)
    return answer(p, SHAPES_PAGE, "answer", m, decision(sm), cat(*text), cite, q)


def _section(writer: Writer, shared: Shared, p: Page, s: ShapesSection, csv: str
             ) -> dict[str, Any]:
    m, group, cols = s.pairs.machine, s.pairs.rows, s.columns
    chart = speedup_chart(
        group, [*cols, "variant_value"],
        chart_file("shapes", m.page), writer,
        title=f"FLOP/s vs static shapes: {m.title}",
        xlabel="FLOP/s relative to static shapes (< 1 is slower), 95% CI",
        what=f"FLOP/s of dynamic and ragged shapes relative to static on {m.title}",
        caption="FLOP/s (samples/s × FLOP per sample) of changing shapes relative to one "
                "static shape (below 1: slower), with 95% intervals.",
    ) if s.charts_on is None else not_drawn(p, s.charts_on, section_anchor("on", s.charts_on))
    head = group[:TABLE_ROWS]
    return {
        "heading": m.title, "anchor": section_anchor("on", m), "n": len(group),
        "more": more_rows(p, len(group), csv), "chart": chart,
        "table": table(_HEADERS, [_row(shared, p, r, cols) for r in head]),
        "costs": table(_COST_HEADERS, [_cost_row(p, r, cols) for r in head]),
    }


def shapes_page(writer: Writer, model: ShapesPage, shared: Shared,
                common: dict[str, Any]) -> None:
    p = page(shared, SHAPES_PAGE)
    comparison_page(writer, p, "dynamic-shapes.md.j2", model,
                    csv=("dynamic-shapes", _CSV_EXTRA), section=_section, shared=shared,
                    common=common, answers=anchored([_answer(p, s) for s in model.sections],
                                                    common["build"]))
