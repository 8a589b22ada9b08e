"""The precision page: reduced precisions against fp32 and channels_last against nchw,
formatted from :class:`bench.report.questions.precision.model.PrecisionPage`: the answer per
machine first, then the charts, then every configuration in collapsed blocks."""

from __future__ import annotations

from typing import Any

from bench.report import fmt
from bench.report.questions.answers import Shared
from bench.report.questions.precision.model import (
    PrecisionPage,
    PrecisionPair,
    PrecisionPart,
    PrecisionSection,
    Tally,
)
from bench.report.render.buildinfo import BuildInfo
from bench.report.render.escape import Md, cat
from bench.report.render.markdown import Page
from bench.report.render.paths import PRECISION_PAGE, chart_file
from bench.report.render.words import numerics
from bench.report.render.words.answers import anchored, answer, cite_sentence, figure, short_scope
from bench.report.render.words.comparisons import (
    TABLE_ROWS,
    cell_links,
    more_rows,
    not_drawn,
    speedup_chart,
    write_comparisons,
)
from bench.report.render.words.context import banner, page, provenance, section_anchor, verdict
from bench.report.render.words.labels import SHORT_LEGEND, label, span
from bench.report.render.words.recommendations import advice_items
from bench.report.render.writer import Writer
from bench.report.vocabulary import Verdict


def _links(p: Page, r: PrecisionPair) -> Md:
    return cell_links(p, r.page, [(str(r.baseline_value), r.baseline_anchor),
                                  (str(r.variant_value), r.variant_anchor)])


def _clause(variant: str, s: Tally[PrecisionPair], checked: str) -> str:
    """``amp-bf16 faster in 3 of 4 (1.31× to 1.86×), outputs agree in 4 of 4 checked
    (worst: relative error 0.4%, cosine 0.99998)``."""
    c = s.counts
    judged = sum(c.values()) - c[Verdict.INSUFFICIENT]
    tail = f", {checked}" if checked else ""
    if not judged:
        return f"{variant}: too few replicates{tail}"
    parts = [f"{v} in {c[v]}" for v in (Verdict.FASTER, Verdict.NO_CLEAR_DIFFERENCE,
                                         Verdict.SLOWER) if c[v]]
    return f"{variant} {', '.join(parts)} of {judged} ({span(s.speedups, fmt.ratio)}){tail}"


def _decision(s: PrecisionSection, baseline: str) -> str:
    """The answer's lead: the variant to use, with what its numerics say where checked."""
    if s.winner is not None:
        return f"{s.winner}: {s.advice}" if s.advice is not None else \
            f"use {s.winner} where it was clearly faster"
    if s.judged:
        return f"keep {baseline}: nothing was clearly faster"
    return "not enough data yet"


def _answer(p: Page, s: PrecisionSection, kind: str, baseline: str) -> dict[str, Any]:
    m, variants = s.pairs.machine, s.pairs.variants
    decision = _decision(s, baseline)
    quoted = s.quoted
    checked = {v: numerics.summary_clause(n) for v, n in s.numerics}
    text: list[object] = [f"for {short_scope(s.pairs.summary.scope)}. "
                          + "; ".join(_clause(v, sm, checked.get(v, "")) for v, sm in variants)
                          + "."]
    if not s.checked:
        text.append(" Outputs were not checked against a strict reference here.")
    cite = ""
    if quoted is not None:
        name = label(quoted, s.columns)
        outputs = f"; {numerics.clause(quoted.numerics)}" if s.checked else ""
        text += [f" {name}, {quoted.variant_value} against {baseline}: {figure(quoted)}"
                 f"{outputs} (rows: ", _links(p, quoted), ")."]
        cite = cite_sentence(f"{quoted.variant_value} over {baseline} gave {figure(quoted)} "
                             f"for {name}", m,
                             numerics.with_outputs(quoted.verdict, quoted.numerics), m.days)
    question = "answer-precision" if kind == "precision" else "answer-layout"
    return answer(p, PRECISION_PAGE, question, m, decision, cat(*text), cite, quoted)


def _row(shared: Shared, p: Page, r: PrecisionPair, cols: tuple[str, ...], kind: str
         ) -> list[Any]:
    row = [label(r, cols, short=True), str(r.variant_value)]
    if kind == "precision":
        math = r.baseline_math
        row.append("?" if math is None else math.value)
    return [*row, fmt.estimate(r.speedup, r.ci_low, r.ci_high),
            verdict(shared, r), numerics.cell(r.numerics), _links(p, r)]


def _section(writer: Writer, shared: Shared, p: Page, s: PrecisionSection, kind: str,
             csv: str) -> dict[str, Any]:
    m, group, cols = s.pairs.machine, s.pairs.rows, s.columns
    title = "Precision vs fp32" if kind == "precision" else "channels_last vs nchw"
    part = "precision" if kind == "precision" else "layout"
    chart = speedup_chart(group, [*cols, "variant_value"],
                          chart_file(kind.replace("_", "-"), m.page),
                          writer, title=f"{title}: {m.title}",
                          xlabel="speedup over the baseline (> 1 is faster), 95% CI",
                          what=f"{title} on {m.title}",
                          caption=f"{title}: step time of the baseline over the variant's "
                                  "(above 1: the variant is faster), with 95% intervals.") \
        if s.charts_on is None else not_drawn(p, s.charts_on, section_anchor(part, s.charts_on))
    headers = ["Configuration", "Variant", *(["fp32 ran"] if kind == "precision" else []),
               "Speedup (95% CI)", "Verdict", numerics.HEADER, "Rows"]
    rows = [_row(shared, p, r, cols, kind) for r in group[:TABLE_ROWS]]
    anchor = section_anchor(part, m)
    return {"heading": m.title, "anchor": anchor, "chart": chart,
            "table": writer.table(p.here, anchor, headers, rows), "n": len(group),
            "more": more_rows(p, len(group), csv)}


def _part(writer: Writer, shared: Shared, p: Page, c: PrecisionPart, kind: str,
          baseline: str, build: BuildInfo) -> dict[str, Any]:
    name = "precision" if kind == "precision" else "memory-format"
    csv = write_comparisons(writer, name, c.pairs) if len(c.pairs) else ""
    return {"answers": anchored([_answer(p, s, kind, baseline) for s in c.sections], build),
            "csv": csv,
            "sections": [_section(writer, shared, p, s, kind, csv) for s in c.sections]}


def precision_page(writer: Writer, model: PrecisionPage, shared: Shared,
                   common: dict[str, Any]) -> None:
    p = page(shared, PRECISION_PAGE)
    writer.page(
        PRECISION_PAGE,
        "precision.md.j2",
        p=p,
        banners=banner(model.sources),
        precision=_part(writer, shared, p, model.precision, "precision", "fp32",
                        common["build"]),
        layout=_part(writer, shared, p, model.layout, "memory_format", "nchw", common["build"]),
        legend=SHORT_LEGEND,
        recs=advice_items(model.advice, p),
        provenance=provenance(common["build"], model.sources),
        **common,
    )
