"""The determinism page: what cudnn.deterministic costs and whether re-runs are bitwise equal,
formatted from :class:`bench.report.questions.determinism.model.DeterminismPage`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from bench.report import fmt
from bench.report.judge import DELTA, Tally
from bench.report.questions.answers import Shared
from bench.report.questions.determinism.model import (
    DeterminismPage,
    DeterminismPair,
    DeterminismSection,
    Reruns,
)
from bench.report.render.escape import Md, cat
from bench.report.render.markdown import Page
from bench.report.render.paths import DETERMINISM_PAGE, chart_file
from bench.report.render.words import numerics
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
from bench.report.render.words.labels import equal_text, label, span
from bench.report.render.writer import Writer
from bench.report.vocabulary import Action, Verdict

#: What the advice's action for its regimes means here, in a few words.
DECISION = {
    Action.ENABLE: "turn it on if reproducibility matters: it costs nothing measurable",
    Action.ENABLE_IF_NEEDED: "turn it on only if you need bitwise reproducibility",
    Action.LEAVE_DEFAULT: "leave it off: re-runs were already bitwise equal",
    Action.KEEP_OFF: "keep it off: it did not make re-runs bitwise equal",
    Action.DEPENDS: "it depends on the workload",
    Action.INSUFFICIENT: "not enough data yet",
}
_EQUAL = {True: "bitwise equal", False: "not bitwise equal", None: "equal in some only"}
#: A CPU-only machine's answer: cuDNN, and so its deterministic switch, exists on CUDA only.
NOT_APPLICABLE = "not applicable: cudnn.deterministic is a cuDNN switch, and cuDNN runs on CUDA " \
    "GPUs only."
#: A CUDA machine with re-run checks but no deterministic off → on pair to weigh.
NOT_COMPARED = "not measured: no run compared it off and on here."
#: A CPU-only machine's section opens with its answer, before its re-run checks.
_CPU_NOTE = Md("**Not applicable here**: cudnn.deterministic is a cuDNN switch, and cuDNN runs "
               "on CUDA GPUs only; the re-run checks below compare two fresh processes on the "
               "CPU.")
#: How many re-run checks an answer without pairs links to.
_LINKED_CHECKS = 5


def _checks_text(s: DeterminismSection) -> str:
    parts = []
    if len(s.pairs) and s.checked:
        if s.equal_off is not None or s.rerun_off:
            parts.append(f"with it off, two fresh processes were {_EQUAL[s.equal_off]}")
        if s.rerun_on:
            parts.append(f"with it on, {_EQUAL[s.equal_on]}")
        parts.append(f"(re-runs checked in {s.checked} of "
                     f"{fmt.count(len(s.pairs), 'configuration')})")
    return (" Re-runs: " + ", ".join(parts[:-1]) + f" {parts[-1]}.") if parts else ""


def _benchmark_text(s: DeterminismSection) -> str:
    """What re-runs did with cudnn.benchmark on: its search can pick another algorithm in
    each process, which deterministic's own pairs (benchmark off) do not show. Said only where
    those pairs' re-runs were bitwise equal with deterministic off, the answer that a reader
    could otherwise take for the whole story."""
    n, k = s.benchmark_checked, s.benchmark_differ
    if not n or s.equal_off is not True:
        return ""
    if not k:
        return (f" With cudnn.benchmark on, re-runs were bitwise equal too "
                f"({fmt.count(n, 'configuration')} checked).")
    head = (f" With cudnn.benchmark on (deterministic off), re-runs differed in {k} of "
            f"{fmt.count(n, 'configuration')} checked (largest absolute difference "
            f"{fmt.num(s.benchmark_max_diff)})")
    unknown = "so whether cudnn.benchmark made the difference is not told here."
    if s.benchmark_unpaired:  # nothing with it off to hold it against
        return f"{head}, but no check with it off was run beside it, {unknown}"
    if s.benchmark_confounds:  # the off check differs in more than the switch
        return (f"{head}, but the check with it off differs in "
                f"{', '.join(s.benchmark_confounds)} too, {unknown}")
    return f"{head}: bitwise re-runs also needed cudnn.benchmark off."


def _cost_text(sm: Tally[DeterminismPair]) -> str:
    """The median step-time change with its verdict, and "no measurable cost" only where every
    judged interval rules out a slowdown beyond δ (the Methodology's rule): a median change
    inside an interval that overlaps 1 ± δ is no measured cost, and "+0.4%" alone reads as one."""
    changes = [1 / v - 1 for v in sm.speedups]
    if not changes:
        return "Its cost could not be judged"
    text = (f"With it on, the median step time changed by "
            f"{span(changes, lambda v: fmt.pct(v, signed=True))} ({sm.verdict}")
    if sm.verdict == Verdict.NO_CLEAR_DIFFERENCE and sm.not_slower:
        text += (f"; no measurable cost: the 95% intervals, {fmt.ci(sm.ci_low, sm.ci_high)}, "
                 f"rule out a slowdown beyond {fmt.pct(DELTA)}")
    return text + ")"


def _answer(p: Page, s: DeterminismSection, sm: Tally[DeterminismPair]) -> dict[str, Any]:
    m = s.machine
    cost = _cost_text(sm)
    text: list[object] = [f"for {short_scope(sm.scope)}. {cost}.{_checks_text(s)}"
                          f"{_benchmark_text(s)}"]
    cite = ""
    q = sm.quoted
    if q is not None:
        name = label(q, s.columns)
        text += [f" {name}: {figure(q)} the speed with it off (rows: ",
                 cell_links(p, q.page, [("off", q.baseline_anchor), ("on", q.variant_anchor)]),
                 ")."]
        cite = cite_sentence(f"cudnn.deterministic ran at {figure(q)} the speed with it off for "
                             f"{name}", m, q.verdict, m.days)
    decision = DECISION.get(s.action, "not enough data yet") if s.action else \
        DECISION[Action.INSUFFICIENT]
    return answer(p, DETERMINISM_PAGE, "answer", m, decision, cat(*text), cite, q)


def rerun_text(found: Reruns) -> str:
    """What the two-process re-run checks found, counted over those that ended ok (no final
    stop: the rows follow)."""
    if not found.ok:
        return "no re-run check ended ok"
    n, equal = found.ok, found.equal
    if equal == n:
        where = "the configuration" if n == 1 else f"all {n} configurations"
        return f"two fresh processes gave bitwise-equal results in {where} checked"
    diff = found.max_diff
    most = f", max |Δ| {fmt.num(diff)}" if fmt.present(diff) else ""
    return (f"two fresh processes gave bitwise-equal results in {equal} of "
            f"{fmt.count(n, 'configuration')} checked (the others differed{most})")


def _checks_answer(p: Page, s: DeterminismSection) -> dict[str, Any]:
    """The answer of a machine with re-run checks but no off → on pair: on a CPU, that the
    switch does not apply (the checks still say whether re-runs were bitwise equal there)."""
    m, checks = s.machine, s.checks
    links = [p.row_link("check", r.page, r.anchor) for r in checks[:_LINKED_CHECKS]]
    scope = short_scope(s.checks_scope)
    text = cat(f"Re-run checks{f' ({scope})' if scope else ''}: ", rerun_text(s.reruns),
               " (rows: ", *_joined(links), ").")
    decision = NOT_COMPARED if s.cuda else NOT_APPLICABLE
    return answer(p, DETERMINISM_PAGE, "answer", m, decision, text, "")


def _joined(links: list[Md]) -> list[object]:
    out: list[object] = []
    for i, link in enumerate(links):
        out += [" · "] if i else []
        out.append(link)
    return out


def _row(shared: Shared, p: Page, r: DeterminismPair, cols: Sequence[str]) -> list[Any]:
    return [label(r, cols, short=True), fmt.estimate(r.speedup, r.ci_low, r.ci_high),
            verdict(shared, r),
            equal_text(r.base_n_checks, r.base_bitwise_equal, r.base_max_abs_diff),
            equal_text(r.var_n_checks, r.var_bitwise_equal, r.var_max_abs_diff),
            numerics.cell(r.numerics),
            cell_links(p, r.page, [("off", r.baseline_anchor), ("on", r.variant_anchor)])]


def _section(writer: Writer, shared: Shared, p: Page, s: DeterminismSection, csv: str
             ) -> dict[str, Any]:
    m, group = s.machine, s.pairs
    rows, chart = [], None
    if len(group):
        cols = s.columns
        rows = [_row(shared, p, r, cols) for r in group[:TABLE_ROWS]]
        chart = speedup_chart(
            group, cols, chart_file("determinism", m.page), writer,
            title=f"deterministic on vs off: {m.title}",
            xlabel="speed with cudnn.deterministic on (< 1 is slower), 95% CI",
            what=f"Speed of cudnn.deterministic on relative to off on {m.title}",
            caption="Speed with it on relative to off (below 1: slower), with 95% intervals.") \
            if s.charts_on is None else not_drawn(p, s.charts_on, section_anchor("on", s.charts_on))
    checks = [[label(r, s.check_columns, short=True),
               equal_text(r.n_ok_checks, r.bitwise_equal, r.max_abs_diff),
               str(r.status_summary), p.row_link("check", r.page, r.anchor)]
              for r in s.checks]
    anchor = section_anchor("on", m)
    return {
        "heading": m.title, "anchor": anchor,
        "note": "" if s.cuda else _CPU_NOTE,
        "more": more_rows(p, len(group), csv),
        "chart": chart, "n": len(group), "n_checks": len(checks),
        "table": writer.table(p.here, anchor, ["Configuration", "Speed on vs off (95% CI)",
                                               "Verdict", "Re-run off", "Re-run on",
                                               numerics.HEADER, "Rows"], rows)
        if rows else None,
        "checks": writer.table(p.here, f"{anchor}-checks",
                               ["Configuration", "Two fresh processes", "Status", "Row"], checks)
        if checks else None,
    }


def determinism_page(writer: Writer, model: DeterminismPage, shared: Shared,
                     common: dict[str, Any]) -> None:
    p = page(shared, DETERMINISM_PAGE)
    comparison_page(
        writer, p, "determinism.md.j2", model,
        csv=("determinism", ("base_bitwise_equal", "var_bitwise_equal", "base_max_abs_diff",
                             "var_max_abs_diff")),
        section=_section, shared=shared, common=common,
        answers=anchored([_answer(p, s, s.summary) if s.summary is not None
                          else _checks_answer(p, s)
                          for s in model.sections if len(s.pairs) or len(s.checks)],
                         common["build"]))

