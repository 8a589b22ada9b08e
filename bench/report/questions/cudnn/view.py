"""The cudnn.benchmark page, formatted from :class:`bench.report.questions.cudnn.model.CudnnPage`:
first the answer per machine (the decision, its figures and scope, a Cite line), then the
charts of the findings, then every configuration in collapsed blocks."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from bench.report import fmt
from bench.report.questions.answers import Shared
from bench.report.questions.cudnn.model import (
    BenchmarkSummary,
    CudnnPage,
    CudnnPair,
    CudnnSection,
    ModelVerdict,
)
from bench.report.render import charts, costcharts
from bench.report.render.escape import Md, cat, md
from bench.report.render.markdown import Page
from bench.report.render.paths import CUDNN_PAGE, SHAPES_PAGE, chart_file
from bench.report.render.words import sentences
from bench.report.render.words.answers import anchored, answer, cite_sentence, figure, short_scope
from bench.report.render.words.claim_words import verdict_line
from bench.report.render.words.comparisons import (
    TABLE_ROWS,
    cell_links,
    comparison_page,
    figure_of,
    more_rows,
    not_drawn,
    speedup_chart,
    trim,
)
from bench.report.render.words.context import page, section_anchor, verdict
from bench.report.render.words.costs import break_even_cell, no_pay_back
from bench.report.render.words.frames import present
from bench.report.render.words.labels import (
    COUNTED_BENCHMARK,
    alt_list,
    label,
    span,
)
from bench.report.render.writer import Writer
from bench.report.vocabulary import Verdict

#: What a machine's counted pairs agreeing on a verdict means for the setting.
DECISION = {
    Verdict.FASTER: "turn it on for jobs longer than its break-even",
    Verdict.MIXED: "it depends on the workload",
    Verdict.SLOWER: "keep it off",
    Verdict.NO_CLEAR_DIFFERENCE: "leave it off (the default)",
    Verdict.INSUFFICIENT: "not enough data yet",
}

#: The cost columns the page's CSV carries beside the comparison.
_CSV_EXTRA = (
    "kernel_cache", "base_cold_pass_s", "var_cold_pass_s", "var_cold_pass_max_s",
    "extra_cold_pass_s", "extra_cold_pass_max_s", "saving_per_iter_s", "break_even_iters",
    "break_even_iters_low", "break_even_iters_high", "warm_extra_cold_pass_max_s",
    "warm_break_even_iters_high", "base_whole_peak_mem_allocated_bytes",
    "var_whole_peak_mem_allocated_bytes", "extra_whole_peak_mem_share",
    "var_workspace_mem_allocated_bytes",
)  # fmt: skip


def counted_note(s: BenchmarkSummary, p: Page) -> Md:
    """What a summary's counts are of (the configurations with deterministic off, each once),
    and where the others are."""
    if not s.total:
        n = s.left_out + s.changing
        which = "Its one configuration does not have" if n == 1 else \
            f"None of its {n} configurations has"
        return md(f"{which} one input shape and cudnn.deterministic off, which the answer "
                  "counts.")
    what = COUNTED_BENCHMARK if not s.counted_warm else (
        f"with cudnn.deterministic off ({s.counted_warm} of them measured only with a warm "
        "kernel cache)")
    parts: list[object] = [f"The answer counts the {fmt.count(s.total, 'configuration')} with "
                           f"one input shape {what}"]
    if s.changing:
        parts += [f"; {s.changing} with changing shapes {'is' if s.changing == 1 else 'are'} "
                  "on the ", p.link("dynamic-shapes page", SHAPES_PAGE)]
    if s.left_out:
        parts.append(f"; {s.left_out} more (deterministic on, or a warm duplicate) "
                     f"{'is' if s.left_out == 1 else 'are'} in the tables")
    return cat(*parts, ".")


def _steps(s: BenchmarkSummary) -> str:
    """What the steady state did, in the words of the summary's verdict."""
    c = s.counts
    judged = s.total - c[Verdict.INSUFFICIENT]
    thin = f"; {c[Verdict.INSUFFICIENT]} more had too few replicates" if \
        c[Verdict.INSUFFICIENT] else ""
    spread = (f" ({span(s.speedups, fmt.ratio)}; 95% intervals {fmt.ci(s.ci_low, s.ci_high)})"
              if s.speedups else "")
    if s.verdict == Verdict.INSUFFICIENT:
        return (f"Its {fmt.count(s.total, 'configuration')} "
                f"{'has' if s.total == 1 else 'have'} too few ok replicates to judge.")
    if s.verdict == Verdict.MIXED:
        return (f"Faster in {c[Verdict.FASTER]}, no clear difference in "
                f"{c[Verdict.NO_CLEAR_DIFFERENCE]}, slower in {c[Verdict.SLOWER]} of {judged} "
                f"configurations{spread}{thin}.")
    word = {Verdict.FASTER: Verdict.FASTER.value, Verdict.SLOWER: Verdict.SLOWER.value}.get(
        s.verdict)
    what = f"steps are {word}" if word else "steps are no faster: no clear difference"
    return f"{what.capitalize()} in all {judged} configurations{spread}{thin}."


def _costs(s: BenchmarkSummary) -> str:
    parts = []
    if s.cold_extra is not None and s.cold_extra > 0:
        parts.append(f"its first pass costs up to {fmt.seconds(s.cold_extra)} more (slowest "
                     "replicate)")
    if s.memory_extra is not None and s.memory_extra > 0:
        share = (f" (up to {fmt.pct(s.memory_share, signed=True)})"
                 if s.memory_share is not None else "")
        parts.append(f"a whole run's peak memory grows by up to "
                     f"{fmt.bytes_(s.memory_extra)}{share}")
    if s.verdict == Verdict.FASTER and s.break_even:
        parts.append(f"it repays its first pass after {span(s.break_even, fmt.iterations)} "
                     "iterations of the same shapes")
    return (" With it on, " + ", and ".join(parts) + ".") if parts else ""


#: The order a mixed answer's models are named in, by what they agree on.
_MODEL_ORDER = (Verdict.FASTER, Verdict.MIXED, Verdict.NO_CLEAR_DIFFERENCE, Verdict.SLOWER,
                Verdict.INSUFFICIENT)


def by_model_text(models: tuple[ModelVerdict, ...]) -> str:
    """``Faster for resnet50 (1.20× to 1.25×) and resnet18 (1.15×); slower for …``: a mixed
    answer's models, grouped by what their configurations agree on."""
    parts = []
    for said in _MODEL_ORDER:
        named = []
        for m in (m for m in models if m.verdict == said):
            spread = span(m.speedups, fmt.ratio)
            if said == Verdict.MIXED:
                spread = f"faster in {m.agreeing} of {m.judged}, {spread}"
            named.append(f"{m.model} ({spread})" if spread else m.model)
        if named:
            word = str(said)
            parts.append(f"{word} for " + (named[0] if len(named) == 1 else
                                            ", ".join(named[:-1]) + " and " + named[-1]))
    return "; ".join(parts)


def _default_first(p: Page, s: CudnnSection, days: str) -> dict[str, Any] | None:
    """The answer led by the decision for the default workload, with its own figure and
    costs, then where it pays and what every configuration judged says; None where the
    default workload's regime has no decision."""
    m, sm, d, quoted = s.machine, s.summary, s.decision, s.summary.quoted
    if d is None or quoted is None:
        return None
    name = label(quoted, sm.columns)
    c = sm.counts
    judged = sm.total - c[Verdict.INSUFFICIENT]
    across = (f" Of the {judged} configurations judged here: "
              + ", ".join(f"{c[v]} {v}" for v in (Verdict.FASTER, Verdict.NO_CLEAR_DIFFERENCE,
                                                   Verdict.SLOWER) if c[v]) + ".") \
        if judged > 1 else ""
    text = cat(f"{figure(quoted)} (rows: ", _links(p, quoted), f"){sentences.extra_costs(d.main)}.",
               sentences.where_it_pays(s.pays, shown=2), across)
    cite = cite_sentence(f"cudnn.benchmark gave {figure(quoted)} per step for {name}, the "
                         f"default workload: {sentences.decision(d)}", m, quoted.verdict, days)
    return answer(p, CUDNN_PAGE, "answer", m,
                  f"{sentences.decision(d)} for {name}, the default workload:", text, cite, quoted)


def _answer(p: Page, s: CudnnSection, days: str) -> dict[str, Any]:
    led = _default_first(p, s, days)
    if led is not None:
        return led
    m, sm = s.machine, s.summary
    quoted = sm.quoted
    cols = sm.columns
    mixed = sm.verdict == Verdict.MIXED
    judged = sm.total - sm.counts[Verdict.INSUFFICIENT]
    steps = (f"Of {judged} configurations judged: {by_model_text(sm.by_model)}." if mixed
             else _steps(sm))
    text: list[object] = [f"for {short_scope(sm.scope, name_models=not mixed)}. {steps}"
                          + _costs(sm)]
    cite = ""
    if quoted is not None:
        name = label(quoted, cols)
        text += [f" {name}: {figure(quoted)} (rows: ", _links(p, quoted), ")."]
        cite = cite_sentence(f"cudnn.benchmark gave {figure(quoted)} per step for {name}",
                             m, quoted.verdict, days)
    return answer(p, CUDNN_PAGE, "answer", m, DECISION[sm.verdict], cat(*text), cite, quoted)


def _speed_rows(shared: Shared, p: Page, rows: Sequence[CudnnPair], cols: Sequence[str]
                ) -> list[list[Any]]:
    return [[label(r, cols, short=True), fmt.estimate(r.speedup, r.ci_low, r.ci_high),
             verdict(shared, r), _links(p, r)]
            for r in rows[:TABLE_ROWS]]


def _links(p: Page, r: CudnnPair) -> Md:
    return cell_links(p, r.page, [("off", r.baseline_anchor), ("on", r.variant_anchor)])


def _cost_rows(p: Page, rows: Sequence[CudnnPair], cols: Sequence[str]) -> list[list[Any]]:
    return [[label(r, cols, short=True), str(r.kernel_cache),
             f"{fmt.seconds(r.base_cold_pass_s)} → {fmt.seconds(r.var_cold_pass_s)}",
             fmt.signed_seconds(r.extra_cold_pass_max_s), break_even_cell(r), _links(p, r)]
            for r in rows[:TABLE_ROWS]]


def _memory_rows(p: Page, rows: Sequence[CudnnPair], cols: Sequence[str]
                 ) -> list[list[Any]]:
    return [[label(r, cols, short=True),
             f"{fmt.bytes_(r.base_whole_peak_mem_allocated_bytes)} → "
             f"{fmt.bytes_(r.var_whole_peak_mem_allocated_bytes)}",
             fmt.pct(r.extra_whole_peak_mem_share, signed=True),
             fmt.bytes_(r.var_workspace_mem_allocated_bytes), _links(p, r)]
            for r in rows[:TABLE_ROWS]]


def _number(value: float | None) -> float:
    """A figure for a chart: NaN where it is missing (the chart leaves it out)."""
    return float("nan") if value is None else float(value)


def _break_even_chart(writer: Writer, s: CudnnSection, cols: Sequence[str]
                      ) -> dict[str, Any] | None:
    """Iterations until each configuration repays its first pass; None when none saves time
    per step (the page then says so in a sentence: a chart of "no saving" shows nothing)."""
    if not s.pays_back:
        return None
    rows = [charts.BreakEvenRow(label(r, cols, short=True),
                                _number(r.break_even_iters) if r.pays_back else None,
                                no_pay_back(r)) for r in s.break_even]
    shown, left_out = trim(rows)
    path = chart_file("cudnn-break-even", s.machine.page)
    writer.chart(charts.break_even_chart, path, shown,
                 title=f"cudnn.benchmark break-even: {s.machine.title}")
    return figure_of(
        path, len(shown), left_out,
        "Iterations of the same input shapes until the median replicate's extra first pass is "
        "repaid by the median time saved per step (log scale); a configuration that saves "
        "nothing never repays it. The recommendations quote the slowest replicate against the "
        "smallest saving in the interval.",
        f"Iterations until cudnn.benchmark repays its cold-pass cost on {s.machine.title}: "
        + alt_list(f"{r.label}: "
                   + (r.note if r.iterations is None else fmt.iterations(r.iterations))
                   for r in shown))


def _cold_chart(writer: Writer, s: CudnnSection, cols: Sequence[str]
                ) -> dict[str, Any] | None:
    """The extra first pass with benchmark on, per configuration: the median replicate's and
    the range over replicates (each against the median one off), by kernel cache."""
    rows = [costcharts.RangeRow(label(r, cols, short=True), _number(r.extra_cold_pass_s),
                                _number(r.var_cold_pass_min_s) - _number(r.base_cold_pass_s),
                                _number(r.var_cold_pass_max_s) - _number(r.base_cold_pass_s),
                                f"{r.kernel_cache} kernel cache")
            for r in s.rows[:charts.MAX_ROWS] if present(r.extra_cold_pass_s)]
    return _rows_chart(
        writer, s, rows, costcharts.range_chart, "cudnn-cold",
        "What turning it on adds to the first pass over the input shapes, where the algorithm "
        "search runs (seconds; dot: median replicate, bar: range).",
        "Extra first-pass seconds with cudnn.benchmark on: " + alt_list(
            f"{r.label}: {fmt.seconds(r.median)} ({fmt.seconds(r.low)} to "
            f"{fmt.seconds(r.high)}, {r.series})" for r in rows),
        title=f"Extra first pass with cudnn.benchmark on: {s.machine.title}",
        xlabel="seconds more than with it off (dot: median replicate; bar: range)")


def _memory_chart(writer: Writer, s: CudnnSection, cols: Sequence[str]
                  ) -> dict[str, Any] | None:
    rows = [costcharts.MemoryRow(
        label(r, cols, short=True), _number(r.base_whole_peak_mem_allocated_bytes),
        _number(r.var_whole_peak_mem_allocated_bytes) - float(r.var_workspace_mem_allocated_bytes
                                                              or 0.0),
        float(r.var_workspace_mem_allocated_bytes or 0.0))
        for r in s.rows[:charts.MAX_ROWS]
        if present(r.base_whole_peak_mem_allocated_bytes)
        and present(r.var_whole_peak_mem_allocated_bytes)]
    return _rows_chart(
        writer, s, rows, costcharts.memory_chart, "cudnn-memory",
        "Peak GPU memory of a whole run (GiB), first pass included; with it on, the part above "
        "the steady state is the first pass's workspace.",
        "Peak GPU memory with cudnn.benchmark off and on: " + alt_list(
            f"{r.label}: {fmt.bytes_(r.off)} off, {fmt.bytes_(r.on_steady + r.on_workspace)} on"
            for r in rows),
        unit=2**30, unit_name="GiB",
        title=f"Peak GPU memory, cudnn.benchmark off and on: {s.machine.title}")


def _rows_chart(writer: Writer, s: CudnnSection, rows: Sequence[Any], draw: Callable[..., Any],
                stem: str, caption: str, alt: str, **options: Any) -> dict[str, Any] | None:
    """Draw ``rows`` (the configurations of the first MAX_ROWS that have the figure), or None
    where none has it; the others are counted as left out."""
    if not rows:
        return None
    path = chart_file(stem, s.machine.page)
    writer.chart(draw, path, rows, **options)
    return figure_of(path, len(rows), max(len(s.rows) - len(rows), 0), caption, alt)


def _charts(writer: Writer, s: CudnnSection) -> list[dict[str, Any]]:
    m, cols = s.machine, s.columns
    speed = speedup_chart(
        s.rows, cols, chart_file("cudnn-speedup", m.page), writer,
        title=f"cudnn.benchmark on vs off: {m.title}",
        xlabel="steady-state speedup with benchmark on (> 1 is faster), 95% CI",
        what=f"Steady-state speedup from cudnn.benchmark on {m.title}",
        caption="Step time with it off over step time with it on (above 1: faster on), with "
                "95% intervals; the grey band is 1 ± δ.")
    return [c for c in (speed, _break_even_chart(writer, s, cols), _cold_chart(writer, s, cols),
                        _memory_chart(writer, s, cols)) if c]


def _section(writer: Writer, shared: Shared, p: Page, s: CudnnSection, csv: str
             ) -> dict[str, Any]:
    m = s.machine
    cols = s.columns
    anchor = section_anchor("on", m)
    return {
        "heading": m.title, "anchor": anchor, "hardware": m.hardware,
        "note": counted_note(s.summary, p), "n": len(s.rows),
        "charts": _charts(writer, s) if s.charts_on is None
        else [not_drawn(p, s.charts_on, section_anchor("on", s.charts_on))],
        "no_saving": s.no_saving,
        "drawn": s.charts_on is None,  # where its charts are, a break-even chart is missed
        "speed": writer.table(p.here, f"{anchor}-speed",
                              ["Configuration", "Speedup (95% CI)", "Verdict", "Rows"],
                              _speed_rows(shared, p, s.rows, cols)),
        "cost": writer.table(p.here, f"{anchor}-cost",
                             ["Configuration", "Cache", "First pass off → on", "Extra, slowest",
                              "Break-even", "Rows"], _cost_rows(p, s.rows, cols)),
        "memory": writer.table(p.here, f"{anchor}-memory",
                               ["Configuration", "Peak off → on", "Change", "Workspace",
                                "Rows"], _memory_rows(p, s.rows, cols)),
        "more": more_rows(p, len(s.rows), csv),
    }


def cudnn_page(writer: Writer, model: CudnnPage, shared: Shared, common: dict[str, Any]
               ) -> None:
    p = page(shared, CUDNN_PAGE)
    comparison_page(
        writer, p, "cudnn-benchmark.md.j2", model, csv=("cudnn-benchmark", _CSV_EXTRA),
        section=_section, shared=shared, common=common,
        answers=anchored([_answer(p, s, s.machine.days) for s in model.sections],
                         common["build"]),
        cpu_only=[p.machine_link(m.machine, m.page) for m in model.cpu_only],
        algo=verdict_line(model.algo, p),
    )
