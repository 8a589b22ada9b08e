"""The home page: per-setting headlines, the decision tables and the settings not measured yet,
formatted from :class:`bench.report.judge.pages.home.HomePage`."""

from __future__ import annotations

from typing import Any

from bench.report import fmt
from bench.report.escape import Md, cat
from bench.report.judge import Answers
from bench.report.judge.pages.compiled import CompileCounts
from bench.report.judge.pages.home import (
    BenchmarkHeadline,
    DecisionSection,
    DeterminismHeadline,
    DeviceHeadline,
    HomePage,
    PrecisionHeadline,
)
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
from bench.report.views.claim_words import counts_line
from bench.report.views.context import outdated_links, page, superseded_links
from bench.report.views.labels import COUNTED_BENCHMARK, comparison_columns, exceptions, scope, span
from bench.report.views.recommendations import more_decisions, undecided
from bench.report.vocabulary import Verdict
from bench.report.writer import Writer

#: Rows per setting in the home page's decision table.
DECISION_ROWS = 40

#: Decision-table sections on the home page: setting → (heading, what is compared).
_DECISION_WORDS = {
    "cudnn.benchmark": ("cudnn.benchmark", "off → on"),
    "cudnn.deterministic": ("cudnn.deterministic", "off → on"),
    "precision": ("Precision", "fp32 → variant"),
    "memory_format": ("Memory format", "nchw → channels_last"),
    "device": ("CPU or GPU", "this machine's CPU → its GPU"),
}


def _decision_row(p: Page, r: Any, setting: str, regime: Any) -> list[Any]:
    row: list[Any] = [p.machine_link(r.machine, r.page),
                      sentences.workload(r, with_precision=setting != "precision")]
    if setting == "precision":
        row.append(f"{r.baseline_value} → {r.variant_value}")
    return [
        *row,
        cat(Md("**"), sentences.decision(regime), Md("**")),
        fmt.ratio(r.speedup)
        + (f" ({fmt.ci(r.ci_low, r.ci_high)})" if fmt.present(r.ci_low) else ""),
        r.verdict,
        sentences.evidence_links(p, r.evidence),
    ]


def _decision_table(p: Page, d: DecisionSection) -> dict[str, Any]:
    heading, compared = _DECISION_WORDS[d.setting]
    rows = [_decision_row(p, g.main, d.setting, g) for g in d.decided[:DECISION_ROWS]]
    headers = ["Machine", "Workload", *(["Switch"] if d.setting == "precision" else []),
               "Decision", "Speedup (95% CI)", "Verdict", "Evidence"]
    hidden = max(len(d.decided) - DECISION_ROWS, 0) + max(len(d.undecided) - DECISION_ROWS, 0)
    return {
        "heading": heading,
        "compared": compared,
        "table": table(headers, rows) if rows else None,
        "unknown": [undecided(g.main, p) for g in d.undecided[:DECISION_ROWS]],
        "more": more_decisions(p, hidden),
    }


def _benchmark(p: Page, h: BenchmarkHeadline) -> Md:
    s = h.summary
    c = s.counts
    be = span(s.break_even, fmt.iterations)
    named = exceptions(s.movers, comparison_columns(s.counted, "cudnn_benchmark"), limit=3)
    left = s.left_out
    return cat(
        Md("**cudnn.benchmark** on "), p.machine_link(h.machine.machine, h.machine.page),
        f" ({scope(s.scope)}): faster in {c[Verdict.FASTER]} of {s.total} configurations",
        f" {COUNTED_BENCHMARK}" if left else "",
        f" ({span(s.faster_speedups, fmt.ratio)})" if c[Verdict.FASTER] else "",
        f", no clear difference in {c[Verdict.NO_CLEAR_DIFFERENCE]}, slower in "
        f"{c[Verdict.SLOWER]}",
        f" ({named})" if named else "",
        f"; where faster, it repays its cold-pass cost after {be} iterations in the worst "
        "case" if be else "",
        f"; {left} more, with deterministic on or a warm kernel cache, "
        f"{'is' if left == 1 else 'are'} on the details page" if left else "",
        ". ", p.link("Details", CUDNN_PAGE), ".",
    )


def _device(p: Page, h: DeviceHeadline) -> Md:
    if h.crossing:
        text = (f"the GPU is clearly faster than the CPU from batch "
                f"{span(map(float, h.crossing), fmt.integer)} up to the largest batch measured, "
                f"on {len(h.crossing)} of {h.curves} curves")
        if h.thin_below:
            text += (f" (batch {', '.join(map(str, h.thin_below))}: not enough data, so the GPU "
                     "may already win there)")
    else:
        text = f"the GPU is not clearly faster than the CPU on any of {h.curves} curves"
    top = f", up to {fmt.ratio(h.best)} at the largest batches" if h.best is not None else ""
    return cat(Md("**CPU vs GPU** on "), p.machine_link(h.machine.machine, h.machine.page),
               f" ({scope(h.scope)}): {text}{top}. ", p.link("Details", CPU_GPU_PAGE), ".")


def _determinism(p: Page, h: DeterminismHeadline) -> Md | None:
    parts = []
    if h.time_changes:
        parts.append("deterministic on changes step time by "
                     + span(h.time_changes, lambda v: fmt.pct(v, signed=True)))
    if h.checked_off:
        parts.append("re-runs with it off were " + {
            True: "bitwise equal", False: "not bitwise equal", None: "sometimes bitwise equal",
        }[h.equal_off])
    if h.equal_on is not None:
        parts.append("with it on " + ("bitwise equal" if h.equal_on
                                      else "still not always bitwise equal"))
    if h.checked < h.total:  # say where the reproducibility claims stop
        parts.append(f"re-runs were checked in {h.checked} of {h.total} configurations")
    if not parts:
        return None
    return cat(Md("**Determinism** on "), p.machine_link(h.machine.machine, h.machine.page),
               f" ({scope(h.scope)}): " + "; ".join(parts) + ". ",
               p.link("Details", DETERMINISM_PAGE), ".")


def _precision(p: Page, h: PrecisionHeadline) -> Md:
    parts = [f"{variant} {span(speedups, fmt.ratio)}" for variant, speedups in h.speedups.items()]
    return cat(Md("**Precision** vs fp32 on "), p.machine_link(h.machine.machine, h.machine.page),
               f" ({scope(h.scope)}): " + ", ".join(parts) + ". ",
               p.link("Details", PRECISION_PAGE), ".")


def compile_line(c: CompileCounts) -> str:
    """How many eager-against-compiled pairs there are, on how many machines, by verdict."""
    if not c.pairs:
        return "not measured yet (the cpu profile's compile study and the compile profile)"
    verdicts = ", ".join(f"{v} {n}" for v, n in c.verdicts.items())
    return (f"{c.pairs} comparison(s) of a compile mode against eager on {c.machines} "
            f"machine fingerprint(s): {verdicts}")


def _headlines(p: Page, model: HomePage) -> list[Md]:
    found = [*(_benchmark(p, h) for h in model.benchmark),
             *(_device(p, h) for h in model.device),
             *(_determinism(p, h) for h in model.determinism),
             *(_precision(p, h) for h in model.precision)]
    return [h for h in found if h is not None]


def home_page(writer: Writer, answers: Answers, common: dict[str, Any]) -> None:
    model = answers.home
    p = page(answers, HOME)
    writer.page(
        HOME_SNIPPET,
        "home.md.j2",
        p=p,
        headlines=_headlines(p, model),
        decisions=[_decision_table(p, d) for d in model.decisions],
        unmeasured=[_DECISION_WORDS[s][0] for s in model.unmeasured],
        n_machines=model.n_machines,
        n_rows=model.n_rows,
        superseded=superseded_links(p, model.superseded),
        outdated=outdated_links(p, model.outdated),
        claims_line=counts_line(model.claims),
        compile_line=compile_line(model.compiled),
        **common,
    )
