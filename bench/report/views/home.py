"""The home page: per-setting headlines, the decision tables, and the settings not measured yet."""

from __future__ import annotations

import math
from typing import Any

from bench.report import fmt
from bench.report.escape import Md, cat
from bench.report.pages import Page, table
from bench.report.paths import (
    CPU_GPU_PAGE,
    CUDNN_PAGE,
    DETERMINISM_PAGE,
    HOME,
    HOME_SNIPPET,
    PRECISION_PAGE,
)
from bench.report.views import sentences
from bench.report.views.claims import counts_line
from bench.report.views.compiled import summary_line
from bench.report.views.cudnn import COUNTED, counted
from bench.report.views.inputs import Inputs, by_machine
from bench.report.views.labels import comparison_columns, exceptions, scope, span, verdict_counts
from bench.report.views.recommendations import more_decisions, undecided
from bench.report.vocabulary import Action, Verdict
from bench.report.writer import Writer

#: Rows per setting in the home page's decision table.
DECISION_ROWS = 40


#: Decision-table sections on the home page: (setting, heading, what is compared).
_DECISION_SECTIONS = (
    ("cudnn.benchmark", "cudnn.benchmark", "off → on"),
    ("cudnn.deterministic", "cudnn.deterministic", "off → on"),
    ("precision", "Precision", "fp32 → variant"),
    ("memory_format", "Memory format", "nchw → channels_last"),
    ("device", "CPU or GPU", "this machine's CPU → its GPU"),
)


def decision_tables(data: Inputs, p: Page) -> list[dict[str, Any]]:
    """The home page's decision table, one table per setting."""
    groups = data.current_regimes
    out = []
    for setting, heading, compared in _DECISION_SECTIONS:
        mine = [g for g in groups if g.main.setting == setting]
        if not mine:
            continue
        rows = []
        unknown = []
        n_rows = n_unknown = 0  # only the rows shown are rendered; the rest are counted
        for g in mine:
            r = g.main
            if r.action == Action.INSUFFICIENT:
                n_unknown += 1
                if n_unknown <= DECISION_ROWS:
                    unknown.append(undecided(r, p))
                continue
            n_rows += 1
            if n_rows > DECISION_ROWS:
                continue
            row: list[Any] = [
                p.machine_link(r.machine, r.page),
                sentences.workload(r, with_precision=setting != "precision"),
            ]
            if setting == "precision":
                row.append(f"{r.baseline_value} → {r.variant_value}")
            row += [
                cat(Md("**"), sentences.decision(g), Md("**")),
                fmt.ratio(r.speedup)
                + (f" ({fmt.ci(r.ci_low, r.ci_high)})" if fmt.present(r.ci_low) else ""),
                r.verdict,
                sentences.evidence_links(p, r.evidence),
            ]
            rows.append(row)
        headers = ["Machine", "Workload"]
        if setting == "precision":
            headers.append("Switch")
        headers += ["Decision", "Speedup (95% CI)", "Verdict", "Evidence"]
        hidden = max(n_rows - DECISION_ROWS, 0) + max(n_unknown - DECISION_ROWS, 0)
        more = more_decisions(p, hidden)
        out.append(
            {
                "heading": heading,
                "compared": compared,
                "table": table(headers, rows[:DECISION_ROWS]) if rows else None,
                "unknown": unknown[:DECISION_ROWS],
                "more": more,
            }
        )
    return out


def unmeasured_settings(data: Inputs) -> list[str]:
    """Decision-table sections with no comparison at all, so the home page can say which
    questions these results cannot answer yet (rather than leaving them out silently)."""
    present = {g.main.setting for g in data.current_regimes}
    return [heading for setting, heading, _ in _DECISION_SECTIONS if setting not in present]


def home_page(writer: Writer, data: Inputs, common: dict[str, Any]) -> None:
    p = data.page(HOME)
    a = data.a
    headlines = []
    bm = a.benchmark
    if len(bm):
        for m, whole in by_machine(data.current(bm), data.machines):
            group, left = counted(whole)  # what the cudnn.benchmark page and Claims count
            c = verdict_counts(group["verdict"])
            faster = group.loc[group["verdict"] == Verdict.FASTER]
            cold = faster.loc[faster["kernel_cache"] != "warm"]
            be = span(cold["break_even_iters_high"].replace(math.inf, math.nan), fmt.iterations)
            named = exceptions(group, comparison_columns(group, "cudnn_benchmark"), limit=3)
            headlines.append(
                cat(
                    Md("**cudnn.benchmark** on "),
                    p.machine_link(m.machine, m.page),
                    f" ({scope(group)}): faster in {c[Verdict.FASTER]} of {len(group)} "
                    "configurations",
                    f" {COUNTED}" if left else "",
                    f" ({span(faster['speedup'], fmt.ratio)})" if len(faster) else "",
                    f", no clear difference in {c[Verdict.NO_CLEAR_DIFFERENCE]}, slower in "
                    f"{c[Verdict.SLOWER]}",
                    f" ({named})" if named else "",
                    f"; where faster, it repays its cold-pass cost after {be} iterations in the "
                    "worst case" if be else "",
                    f"; {left} more, with deterministic on or a warm kernel cache, "
                    f"{'is' if left == 1 else 'are'} on the details page" if left else "",
                    ". ",
                    p.link("Details", CUDNN_PAGE),
                    ".",
                )
            )
    cg = a.crossovers
    if len(cg):
        for m, group in by_machine(data.current(cg), data.machines):
            crossing = group.loc[group["crossover_batch"].notna()]
            thin = [
                b
                for r in crossing.itertuples(index=False)
                for b, v in zip(r.batches, r.verdicts)
                if v == Verdict.INSUFFICIENT and b < r.crossover_batch
            ]
            text = (
                (
                    f"the GPU is clearly faster than the CPU from batch "
                    f"{span(crossing['crossover_batch'].astype(float), fmt.integer)} up to the "
                    f"largest batch measured, on {len(crossing)} of {len(group)} curves"
                    + (
                        f" (batch {', '.join(map(str, sorted(set(thin))))}: not enough data,"
                        " so the GPU may already win there)"
                        if thin
                        else ""
                    )
                )
                if len(crossing)
                else (f"the GPU is not clearly faster than the CPU on any of {len(group)} curves")
            )
            best = group["speedups"].map(
                lambda t: max((v for v in t if fmt.present(v)), default=math.nan)
            )
            top = (
                f", up to {fmt.ratio(best.max())} at the largest batches"
                if fmt.present(best.max())
                else ""
            )
            headlines.append(
                cat(
                    Md("**CPU vs GPU** on "),
                    p.machine_link(m.machine, m.page),
                    f" ({scope(group)}): {text}{top}. ",
                    p.link("Details", CPU_GPU_PAGE),
                    ".",
                )
            )
    det = a.determinism
    if len(det):
        for m, group in by_machine(data.current(det), data.machines):
            ok = group.loc[group["verdict"] != Verdict.INSUFFICIENT]
            equal_off = group["base_bitwise_equal"].dropna()
            equal_on = group["var_bitwise_equal"].dropna()
            parts = []
            if len(ok):
                parts.append(
                    f"deterministic on changes step time by "
                    f"{span(1 / ok['speedup'] - 1, lambda v: fmt.pct(v, signed=True))}"
                )
            if len(equal_off):
                parts.append(
                    "re-runs with it off were "
                    + (
                        "bitwise equal"
                        if equal_off.all()
                        else "not bitwise equal"
                        if not equal_off.any()
                        else "sometimes bitwise equal"
                    )
                )
            if len(equal_on):
                parts.append(
                    "with it on "
                    + ("bitwise equal" if equal_on.all() else "still not always bitwise equal")
                )
            checked = int(((group["base_n_checks"] > 0) | (group["var_n_checks"] > 0)).sum())
            if checked < len(group):  # say where the reproducibility claims stop
                parts.append(f"re-runs were checked in {checked} of {len(group)} configurations")
            if parts:
                headlines.append(
                    cat(
                        Md("**Determinism** on "),
                        p.machine_link(m.machine, m.page),
                        f" ({scope(group)}): " + "; ".join(parts) + ". ",
                        p.link("Details", DETERMINISM_PAGE),
                        ".",
                    )
                )
    prec = a.comparisons["precision"]
    if len(prec):
        for m, group in by_machine(data.current(prec), data.machines):
            parts = []
            for variant, g in group.groupby("variant_value", sort=True):
                ok = g.loc[g["verdict"] != Verdict.INSUFFICIENT]
                if len(ok):
                    parts.append(f"{variant} {span(ok['speedup'], fmt.ratio)}")
            if parts:
                headlines.append(
                    cat(
                        Md("**Precision** vs fp32 on "),
                        p.machine_link(m.machine, m.page),
                        f" ({scope(group)}): " + ", ".join(parts) + ". ",
                        p.link("Details", PRECISION_PAGE),
                        ".",
                    )
                )
    old_ids = [data.machines[page].fingerprint_id for page in data.superseded]
    writer.page(
        HOME_SNIPPET,
        "home.md.j2",
        p=p,
        headlines=headlines,
        decisions=decision_tables(data, p),
        unmeasured=unmeasured_settings(data),
        n_machines=len(data.machines) - len(data.superseded),
        n_rows=int((~data.dataset.results["fingerprint_id"].isin(old_ids)).sum()),
        superseded=data.superseded_links(p),
        outdated=data.outdated_links(p),
        claims_line=counts_line(data),
        compile_line=summary_line(data),
        **common,
    )
