"""The home page: per-setting headlines, the decision tables and the settings not measured yet,
formatted from :class:`bench.report.questions.home.model.HomePage`."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from bench.report import fmt
from bench.report.judge import Caveat, Recommendation, Regime
from bench.report.questions.answers import Shared
from bench.report.questions.home.model import (
    CompileCounts,
    DecisionSection,
    Gain,
    Grid,
    GridCell,
    Headline,
    HomePage,
    MachineGain,
    Topic,
)
from bench.report.render.escape import Md, cat, slug
from bench.report.render.markdown import Page, table
from bench.report.render.paths import (
    COMPILE_PAGE,
    CPU_GPU_PAGE,
    CUDNN_PAGE,
    DECISIONS_CSV,
    DETERMINISM_PAGE,
    HOME,
    HOME_SNIPPET,
    MACHINES_INDEX,
    PRECISION_PAGE,
)
from bench.report.render.words import numerics, sentences
from bench.report.render.words.answers import figure
from bench.report.render.words.claim_words import counts_line
from bench.report.render.words.context import (
    banner,
    outdated_links,
    page,
    provenance,
    superseded_links,
)
from bench.report.render.words.recommendations import UNDECIDED_SHOWN, more_decisions, undecided
from bench.report.render.writer import Writer
from bench.report.vocabulary import Call, Verdict

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


def _decision_row(p: Page, r: Recommendation, setting: str, regime: Regime) -> list[Any]:
    row: list[Any] = [p.machine_link(r.machine, r.page),
                      sentences.workload(r, with_precision=setting != "precision")]
    if setting == "precision":
        row.append(f"{r.baseline_value} → {r.variant_value}")
    return [
        *row,
        cat(Md("**"), sentences.decision(regime), Md("**")),
        _speedup_cell(r),
        f"{r.verdict} (a replicate drifted)" if Caveat.STEADY_DRIFT in r.caveats else r.verdict,
        sentences.evidence_links(p, r.evidence),
    ]


def _speedup_cell(r: Recommendation) -> str:
    """One configuration's speedup and 95% interval; for several, their median and the span
    of their intervals, said as such (under "Speedup (95% CI)" it read as one interval)."""
    ci = f"{fmt.ci(r.ci_low, r.ci_high)}" if fmt.present(r.ci_low) else ""
    if r.n_sufficient > 1:
        return fmt.ratio(r.speedup) + (f" (median of {r.n_sufficient}; CIs span {ci})"
                                       if ci else f" (median of {r.n_sufficient})")
    return fmt.ratio(r.speedup) + (f" ({ci})" if ci else "")


def _decision_table(p: Page, d: DecisionSection) -> dict[str, Any]:
    heading, compared = _DECISION_WORDS[d.setting]
    rows = [_decision_row(p, g.main, d.setting, g) for g in d.decided[:DECISION_ROWS]]
    headers = ["Machine", "Workload", *(["Switch"] if d.setting == "precision" else []),
               "Decision", "Speedup (95% CI)", "Verdict", "Evidence"]
    hidden = (max(len(d.decided) - DECISION_ROWS, 0)
              + max(len(d.undecided) - UNDECIDED_SHOWN, 0))
    return {
        "heading": heading,
        "compared": compared,
        "table": table(headers, rows) if rows else None,
        "unknown": [undecided(g.main, p) for g in d.undecided[:UNDECIDED_SHOWN]],
        "more": more_decisions(p, hidden),
    }


#: Each headline's setting, the page that answers it, and its answer anchors' prefix there.
TOPICS = {
    Topic.BENCHMARK: ("cudnn.benchmark", CUDNN_PAGE, "answer"),
    Topic.DEVICE: ("GPU over CPU", CPU_GPU_PAGE, "answer"),
    Topic.PRECISION: ("Lower precision", PRECISION_PAGE, "answer-precision"),
    Topic.LAYOUT: ("channels_last", PRECISION_PAGE, "answer-layout"),
    Topic.DETERMINISM: ("cudnn.deterministic", DETERMINISM_PAGE, "answer"),
    Topic.COMPILE: ("torch.compile", COMPILE_PAGE, "answer"),
}
_DEVICE = {"cuda": "GPU", "cpu": "CPU", "mps": "Apple GPU"}


def _where(h: Headline) -> str:
    """The device a headline's figure was measured on, in words."""
    if h.topic is Topic.DEVICE:
        return "GPU against the same machine's CPU, same setting on both sides"
    device = _DEVICE.get(str(h.pair.device), str(h.pair.device))
    if h.topic is Topic.COMPILE and h.devices == ("cpu",):
        return "CPU; not yet measured on a GPU"
    return device


def _scope(h: Headline) -> str:
    """A few words: the quoted configuration (model, mode, batch, what changed; a compile
    mode's kernel cache, since fresh and warm differ by the compile's cost)."""
    r = h.pair
    parts = [str(r.model), "training" if r.mode == "train" else "inference",
             f"batch {int(r.batch_size or 0)}"]
    if h.topic is Topic.PRECISION:
        parts.append(f"{r.variant_value} against {r.baseline_value}")
    elif h.topic is Topic.COMPILE:
        cache = r.kernel_cache or ""
        parts.append(f"mode {r.variant_value} against eager"
                     + (f", {cache} kernel cache" if cache in ("fresh", "warm") else ""))
    elif h.topic is not Topic.DEVICE and str(r.precision) != "fp32":
        parts.append(str(r.precision))
    return ", ".join(parts)


def headline(p: Page, h: Headline) -> Md:
    name, target, prefix = TOPICS[h.topic]
    r = h.pair
    # cudnn.benchmark's are those with one input shape, as on its page (changing shapes
    # have a page of their own), so the count reads as the decisions below it do
    what = "configurations with one input shape" if h.topic is Topic.BENCHMARK \
        else "configurations"
    agree = (f"{h.same} of {h.judged} {what} there: {r.verdict}" if h.judged > 1
             else f"{r.verdict}")
    link = p.link("Answer", target, f"{prefix}-{slug(h.machine.page)}")
    if h.numerics is not None:  # the outputs beside the speed, as the switch's page has them
        agree = f"{numerics.clause(h.numerics)}; {agree}"
    where = cat(Md(f"**{name}**"), " on ", p.machine_link(h.machine.machine, h.machine.page),
                f" ({_where(h)}): ")
    if h.decision is None:
        return cat(where, f"{figure(r)} for {_scope(h)}; {agree}. ", link, ".")
    d = h.decision
    return cat(where, Md("**"), sentences.decision(d), Md("**"),
               f" for {_scope(h)}, the default workload here: {figure(r)}"
               f"{sentences.extra_costs(d.main)}; {agree}.{sentences.where_it_pays(h.pays)} ",
               link, ".")


#: Each topic's own words for switching on, and for leaving the default.
_TOPIC_CALLS = {
    Topic.DEVICE: ("use the GPU", "no clear gain"),
    Topic.LAYOUT: ("use channels_last", "keep NCHW"),
    Topic.COMPILE: ("compile", "stay eager"),
}


def _call_words(c: GridCell) -> str:
    """``leave off``, ``use amp-bf16``, ``on past 903 iterations``: the cell's decision."""
    h = c.headline
    if h is not None and c.call is Call.ON_IF_OUTPUTS_HOLD:
        return f"{_call_words(replace(c, call=Call.ON))} if your outputs hold"
    if h is not None and c.call in (Call.ON, Call.OFF):
        if h.topic is Topic.PRECISION:
            return f"use {h.pair.variant_value}" if c.call is Call.ON \
                else f"keep {h.pair.baseline_value}"
        if h.topic in _TOPIC_CALLS:
            return _TOPIC_CALLS[h.topic][c.call is Call.OFF]
    if h is not None and c.call is Call.DEPENDS and h.decision is not None:
        if fmt.present(h.decision.main.break_even_iters):
            return f"on past {fmt.iterations(h.decision.main.break_even_iters)} iterations"
        if h.topic is Topic.DETERMINISM:
            return "on only if you need it"  # bitwise reproducibility, at its cost
    return str(c.call)  # where the topic does not word it its own way


def _grid_cell(p: Page, c: GridCell) -> Md | str:
    words = _call_words(c)
    if c.headline is None:
        return words
    _, target, prefix = TOPICS[c.headline.topic]
    return p.link(cat(Md("**"), words, Md("**"), f" {fmt.ratio(c.headline.pair.speedup)}"),
                  target, f"{prefix}-{slug(c.machine.page)}")


def grid_table(p: Page, g: Grid) -> Md | None:
    """Switches × machines, each cell the decision for the machine's default workload with its
    speedup, linked to the answer; None where nothing was measured."""
    if not any(c.headline for r in g.rows for c in r.cells):
        return None
    heads = [cat(p.machine_link(m.machine, m.page), " (GPU)" if m.gpu else " (CPU)")
             for m in g.columns]
    rows = [[TOPICS[r.topic][0], *(_grid_cell(p, c) for c in r.cells)] for r in g.rows]
    return table(["Switch", *heads], rows)


def grid_more(p: Page, g: Grid) -> Md | None:
    """Past ``GRID_COLUMNS`` fingerprints: which ones the grid and the gains show, and where
    the others are answered; None where the grid shows every one."""
    if not g.left_out:
        return None
    whole = fmt.count(len(g.columns) + g.left_out, "machine fingerprint")
    mine = ", and your own" if any(m.yours for m in g.columns) else ""
    return cat(f"Of {whole}, the grid and the gains below show one per hardware model, the one "
               f"that measured the most configurations{mine}; the other "
               f"{fmt.count(g.left_out, 'fingerprint')} are on ",
               p.link("Machines", MACHINES_INDEX), ", and each switch's page answers for every "
               "one.")


#: A switch set away from its default, in words.
_SWITCH_WORDS = {"cudnn_benchmark": "cudnn.benchmark {}", "compile": "torch.compile ({})",
                 "precision": "{}", "memory_format": "{}"}


def _setting(g: Gain, config_switches: tuple[tuple[str, str], ...]) -> str:
    """``amp-bf16 with channels_last``: what a configuration sets away from the default."""
    default = dict(g.default.switches)
    changed = [_SWITCH_WORDS[a].format(v) for a, v in config_switches if default[a] != v]
    return fmt.and_list(changed) if changed else "the default"


def _ci(lo: float | None, hi: float | None) -> str:
    return f"95% CI {fmt.ci(lo, hi)}" if lo is not None else "too few replicates for an interval"


def gain_line(p: Page, mg: MachineGain) -> Md:
    """A machine's default workload from PyTorch's defaults to its fastest measured
    configuration: the figure, its interval and scope, the switches' shares, the rows."""
    m, g = mg.machine, mg.gain
    what = _workload(g)
    rows = cat(" (rows: ", p.row_link("default", m.page, g.default.anchor), " · ",
               p.row_link("fastest", m.page, g.best.anchor), ")")
    where = cat(p.machine_link(m.machine, m.page), f" ({'GPU' if m.gpu else 'CPU'}), {what}: ")
    of = f"{_ci(g.ci_low, g.ci_high)}, the best of {g.candidates} configurations measured"
    if g.verdict != Verdict.FASTER:
        text = cat(where, "nothing measured was clearly faster than the default; the fastest, ",
                   _setting(g, g.best.switches), f", ran {fmt.ratio(g.speedup)} ({of})", rows,
                   ".")
    else:
        text = cat(where, Md("**"), _setting(g, g.best.switches), Md("**"),
                   f" runs {fmt.ratio(g.speedup, g.ci_low, g.ci_high)} the default ({of})",
                   _shares(g), rows, ".")
    if g.unsure is not None:
        why = (f"on too few replicates to count ({g.unsure.n_ok} ok)" if g.unsure_why is None
               else f"but does not count: {g.unsure_why}")
        text = cat(text, f" {_setting(g, g.unsure.switches)} ran "
                   f"{fmt.ratio(g.unsure_speedup)} ", why, ".")
    return text


def gain_table(p: Page, every: list[MachineGain] | tuple[MachineGain, ...]) -> Md | None:
    """Every workload measured two ways, from the default to its fastest configuration."""
    rows = [[p.machine_link(mg.machine.machine, mg.machine.page), _workload(mg.gain),
             _setting(mg.gain, mg.gain.best.switches)
             + ("" if mg.gain.verdict == Verdict.FASTER else f" ({mg.gain.verdict})"),
             f"{fmt.ratio(mg.gain.speedup, mg.gain.ci_low, mg.gain.ci_high)} "
             f"({fmt.ci(mg.gain.ci_low, mg.gain.ci_high)}; best of {mg.gain.candidates})",
             _shares(mg.gain).removeprefix(": ").removeprefix("; ") or "one switch",
             cat(p.row_link("default", mg.machine.page, mg.gain.default.anchor), " · ",
                 p.row_link("fastest", mg.machine.page, mg.gain.best.anchor))]
            for mg in every]
    return table(["Machine", "Workload", "Fastest measured", "Speedup (95% CI)",
                  "Per switch (share)", "Rows"], rows) if rows else None


def _workload(g: Gain) -> str:
    return (f"{g.model}, {'training' if g.mode == 'train' else 'inference'}, batch "
            f"{g.batch_size}" + ("" if g.shapes == "static" else f", {g.shapes} shapes"))


def _shares(g: Gain) -> str:
    """``: amp-bf16 1.09× (13%), then channels_last 1.86× (87%)``; nothing for one switch,
    and a note where no path through measured configurations exists."""
    if len(g.changed) < 2:
        return ""
    if not g.steps:
        return "; the configurations between them were not all measured, so no share per switch"
    parts = [f"{_SWITCH_WORDS[s.axis].format(s.after)} {fmt.ratio(s.speedup)}"
             + (f" ({fmt.pct(s.share)})" if s.share is not None else "") for s in g.steps]
    return ": " + ", then ".join(parts)


def compile_line(c: CompileCounts) -> str:
    """How many eager-against-compiled pairs there are, on how many machines, by verdict."""
    if not c.pairs:
        return "not measured yet (the cpu profile's compile study and the compile profile)"
    verdicts = ", ".join(f"{v} {n}" for v, n in c.verdicts.items())
    return (f"{fmt.count(c.pairs, 'comparison')} of a compile mode against eager on "
            f"{fmt.count(c.machines, 'machine fingerprint')}: {verdicts}")


def home_page(writer: Writer, model: HomePage, shared: Shared, common: dict[str, Any]
              ) -> None:
    p = page(shared, HOME)
    writer.page(
        HOME_SNIPPET,
        "home.md.j2",
        p=p,
        grid=grid_table(p, model.grid),
        grid_more=grid_more(p, model.grid),
        gains=[gain_line(p, mg) for mg in model.gains],
        gain_table=gain_table(p, model.every_gain),
        headlines=[headline(p, h) for h in model.headlines],
        decisions=[_decision_table(p, d) for d in model.decisions],
        downloads=[DECISIONS_CSV],
        unmeasured=[_DECISION_WORDS[s][0] for s in model.unmeasured],
        n_machines=model.n_machines,
        n_rows=model.n_rows,
        superseded=superseded_links(p, model.superseded),
        outdated=outdated_links(p, model.outdated),
        claims_line=counts_line(model.claims),
        compile_line=compile_line(model.compiled),
        trust_line=", ".join(f"{n} {t}" for t, n in model.trust.items()),
        banners=banner(model.sources),
        provenance=provenance(common["build"], model.sources),
        **common,
    )
