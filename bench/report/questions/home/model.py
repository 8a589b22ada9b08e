"""The home page, judged: at most one headline per setting (its largest measured win, or the
pair its page quotes where nothing was clearly faster), the decision table, and what these
results cannot answer yet. Everything answers from the current fingerprints only (a
superseded one keeps its machine page)."""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from bench.report.judge.claims import count_verdicts
from bench.report.judge.common import representative
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine
from bench.report.judge.regimes import Regime
from bench.report.judge.rows import Pair, typed_row
from bench.report.judge.selection import counted_benchmark, judged
from bench.report.vocabulary import Action, ClaimVerdict, Noise, Verdict

#: The settings of the decision table, in its order.
DECISION_SETTINGS = ("cudnn.benchmark", "cudnn.deterministic", "precision", "memory_format",
                     "device")


class Topic(enum.Enum):
    """What a home headline is about, in the home page's order."""

    BENCHMARK = enum.auto()
    DEVICE = enum.auto()
    PRECISION = enum.auto()
    LAYOUT = enum.auto()
    DETERMINISM = enum.auto()
    COMPILE = enum.auto()


@dataclass(frozen=True)
class Headline:
    """One headline: a setting's largest measured win among the current fingerprints, or
    (where none was clearly faster) the pair its page quotes, with how many configurations
    agree."""

    topic: Topic
    machine: Machine
    pair: Pair  # the comparison quoted
    judged: int  # that machine's judged configurations of this setting
    same: int  # how many of them share the quoted pair's verdict
    devices: tuple[str, ...]  # where the setting was measured (cpu, cuda)


def _headline(topic: Topic, frame: pd.DataFrame, facts: Facts) -> Headline | None:
    """The largest clearly faster pair of ``frame`` (current rows only), else the quoted one
    of the machine with the most judged pairs."""
    ok = judged(facts.current(frame))
    if "noise" in ok.columns:  # never a headline that rests on a replicate bench check flags
        ok = ok.loc[~ok["noise"].isin([Noise.DRIFT, Noise.THROTTLED])]
    if ok.empty:
        return None
    faster = ok.loc[ok["verdict"] == Verdict.FASTER]
    if len(faster):
        top = pd.to_numeric(faster["speedup"], errors="coerce").idxmax()
        pair: Pair | None = typed_row(Pair, faster.loc[[top]].iloc[0])
    else:
        busiest = ok["page"].value_counts().sort_index().idxmax()
        pair = representative(ok.loc[ok["page"] == busiest])
    if pair is None:
        return None
    mine = ok.loc[ok["page"] == pair.page]
    devices = tuple(sorted(set(frame["device"].astype(str)))) if "device" in frame else ()
    return Headline(topic, facts.machines[str(pair.page)], pair, len(mine),
                    int((mine["verdict"] == pair.verdict).sum()), devices)


def headlines(facts: Facts) -> tuple[Headline, ...]:
    """At most one headline per topic, in ``Topic``'s order."""
    a = facts.analysis
    bm = counted_benchmark(a.benchmark)
    frames = {
        Topic.BENCHMARK: bm.loc[bm["shapes"] == "static"] if len(bm) else bm,
        Topic.DEVICE: a.cpu_gpu,
        Topic.PRECISION: a.comparisons["precision"].loc[
            a.comparisons["precision"]["variant_value"] != "fp32-strict"]
        if len(a.comparisons["precision"]) else a.comparisons["precision"],
        Topic.LAYOUT: a.comparisons["memory_format"],
        Topic.DETERMINISM: a.determinism,
        Topic.COMPILE: a.compiled,
    }
    found = [_headline(topic, frame, facts) for topic, frame in frames.items()]
    return tuple(h for h in found if h is not None)


@dataclass(frozen=True)
class DecisionSection:
    """One setting's rows of the decision table: the regimes decided, and the rest."""

    setting: str
    decided: tuple[Regime, ...]
    undecided: tuple[Regime, ...]  # too few ok replicates to decide


@dataclass(frozen=True)
class CompileCounts:
    """How many eager-against-compiled pairs the current fingerprints hold, by verdict."""

    pairs: int
    machines: int
    verdicts: Mapping[Verdict, int]  # only the verdicts that occur


def compile_counts(facts: Facts) -> CompileCounts:
    """The compile pairs of the current fingerprints, counted by verdict."""
    costs = facts.current(facts.analysis.compiled)
    if costs.empty:
        return CompileCounts(0, 0, {})
    counts = costs["verdict"].value_counts()
    order = (Verdict.FASTER, Verdict.SLOWER, Verdict.NO_CLEAR_DIFFERENCE, Verdict.INSUFFICIENT)
    return CompileCounts(len(costs), int(costs["page"].nunique()),
                         {v: int(counts[v]) for v in order if v in counts})


@dataclass(frozen=True)
class HomePage:
    headlines: tuple[Headline, ...]
    decisions: tuple[DecisionSection, ...]  # only the settings measured
    unmeasured: tuple[str, ...]  # the decision table's settings with no comparison at all
    n_machines: int  # current fingerprints
    n_rows: int  # their result rows
    superseded: tuple[Machine, ...]
    outdated: tuple[Machine, ...]  # current fingerprints measured under an older step only
    claims: Mapping[ClaimVerdict, int]  # claims per verdict, every verdict present
    compiled: CompileCounts = field(repr=False)
    sources: tuple[Machine, ...] = ()  # every current fingerprint


def _decisions(facts: Facts) -> list[DecisionSection]:
    out = []
    for setting in DECISION_SETTINGS:
        mine = [g for g in facts.current_regimes if g.main.setting == setting]
        if mine:
            out.append(DecisionSection(
                setting,
                tuple(g for g in mine if g.main.action != Action.INSUFFICIENT),
                tuple(g for g in mine if g.main.action == Action.INSUFFICIENT)))
    return out


def home_page(facts: Facts) -> HomePage:
    decisions = _decisions(facts)
    measured = {d.setting for d in decisions}
    results = facts.analysis.source.results
    old = [facts.machines[p].fingerprint_id for p in facts.superseded]
    return HomePage(
        headlines=headlines(facts),
        decisions=tuple(decisions),
        unmeasured=tuple(s for s in DECISION_SETTINGS if s not in measured),
        n_machines=len(facts.machines) - len(facts.superseded),
        n_rows=int((~results["fingerprint_id"].isin(old)).sum()),
        superseded=tuple(facts.machines[k] for k in sorted(facts.superseded)),
        outdated=tuple(m for k, m in sorted(facts.machines.items()) if m.outdated),
        claims=count_verdicts(facts.claims),
        compiled=compile_counts(facts),
        sources=tuple(m for k, m in sorted(facts.machines.items())
                      if k not in facts.superseded),
    )
