"""The home page, judged: one headline per setting and machine, the decision table, and what
these results cannot answer yet. Every headline answers from the current fingerprints only
(a superseded one keeps its machine page)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import pandas as pd

from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, by_machine
from bench.report.judge.pages.claims import ClaimsPage
from bench.report.judge.pages.common import Scope, scope_of
from bench.report.judge.pages.compiled import CompileCounts, compile_counts
from bench.report.judge.pages.cudnn import BenchmarkSummary, benchmark_summary
from bench.report.judge.regimes import Regime
from bench.report.judge.selection import judged
from bench.report.vocabulary import Action, Verdict

#: The settings of the decision table, in its order.
DECISION_SETTINGS = ("cudnn.benchmark", "cudnn.deterministic", "precision", "memory_format",
                     "device")


@dataclass(frozen=True)
class BenchmarkHeadline:
    machine: Machine
    summary: BenchmarkSummary


@dataclass(frozen=True)
class DeviceHeadline:
    """CPU against GPU on one machine: its speedup-by-batch curves and where they cross."""

    machine: Machine
    scope: Scope
    curves: int
    crossing: tuple[int, ...]  # each crossing curve's batch from which the GPU is faster
    thin_below: tuple[int, ...]  # batches below a crossing with too few ok replicates
    best: float | None  # the largest speedup measured on any curve


@dataclass(frozen=True)
class DeterminismHeadline:
    machine: Machine
    scope: Scope
    #: how much longer steps take with it on, per judged configuration (1/speedup − 1)
    time_changes: tuple[float, ...]
    equal_off: bool | None  # re-runs with it off: all equal, none, None = some (or unchecked)
    checked_off: bool  # any re-run check with it off
    equal_on: bool | None  # with it on: all equal (True), not all (False); None: unchecked
    checked: int  # configurations with a re-run check on either side
    total: int


@dataclass(frozen=True)
class PrecisionHeadline:
    machine: Machine
    scope: Scope
    speedups: Mapping[str, tuple[float, ...]]  # variant → judged speedups over fp32


@dataclass(frozen=True)
class DecisionSection:
    """One setting's rows of the decision table: the regimes decided, and the rest."""

    setting: str
    decided: tuple[Regime, ...]
    undecided: tuple[Regime, ...]  # too few ok replicates to decide


@dataclass(frozen=True)
class HomePage:
    benchmark: tuple[BenchmarkHeadline, ...]
    device: tuple[DeviceHeadline, ...]
    determinism: tuple[DeterminismHeadline, ...]
    precision: tuple[PrecisionHeadline, ...]
    decisions: tuple[DecisionSection, ...]  # only the settings measured
    unmeasured: tuple[str, ...]  # the decision table's settings with no comparison at all
    n_machines: int  # current fingerprints
    n_rows: int  # their result rows
    superseded: tuple[Machine, ...]
    outdated: tuple[Machine, ...]  # current fingerprints measured under an older step only
    claims: ClaimsPage = field(repr=False)
    compiled: CompileCounts = field(repr=False)


def _finite(values: pd.Series) -> tuple[float, ...]:
    return tuple(float(v) for v in pd.to_numeric(values, errors="coerce") if _finite_number(v))


def _finite_number(value: object) -> bool:
    try:
        return math.isfinite(float(value))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return False


def _device(facts: Facts) -> list[DeviceHeadline]:
    out = []
    for m, group in by_machine(facts.current(facts.analysis.crossovers), facts.machines):
        crossing = group.loc[group["crossover_batch"].notna()]
        thin = sorted({int(b) for r in crossing.itertuples(index=False)
                       for b, v in zip(r.batches, r.verdicts)
                       if v == Verdict.INSUFFICIENT and b < r.crossover_batch})
        best = [max((float(v) for v in t if _finite_number(v)), default=None)
                for t in group["speedups"]]
        known = [b for b in best if b is not None]
        out.append(DeviceHeadline(
            machine=m, scope=scope_of(group), curves=len(group),
            crossing=tuple(int(b) for b in crossing["crossover_batch"]), thin_below=tuple(thin),
            best=max(known) if known else None))
    return out


def _agreed_checks(values: pd.Series) -> bool | None:
    """All True → True, all False → False, a mix → None."""
    if values.all():
        return True
    return False if not values.any() else None


def _determinism(facts: Facts) -> list[DeterminismHeadline]:
    out = []
    for m, group in by_machine(facts.current(facts.analysis.determinism), facts.machines):
        ok = judged(group)
        off = group["base_bitwise_equal"].dropna()
        on = group["var_bitwise_equal"].dropna()
        out.append(DeterminismHeadline(
            machine=m, scope=scope_of(group),
            time_changes=tuple(float(1 / s - 1) for s in ok["speedup"]),
            equal_off=_agreed_checks(off) if len(off) else None, checked_off=bool(len(off)),
            equal_on=(bool(on.all()) if len(on) else None),
            checked=int(((group["base_n_checks"] > 0) | (group["var_n_checks"] > 0)).sum()),
            total=len(group)))
    return out


def _precision(facts: Facts) -> list[PrecisionHeadline]:
    out = []
    for m, group in by_machine(facts.current(facts.analysis.comparisons["precision"]),
                               facts.machines):
        speedups = {str(variant): _finite(judged(g)["speedup"])
                    for variant, g in group.groupby("variant_value", sort=True)}
        out.append(PrecisionHeadline(m, scope_of(group),
                                     {k: v for k, v in speedups.items() if v}))
    return out


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


def home_page(facts: Facts, claims: ClaimsPage) -> HomePage:
    bm = facts.current(facts.analysis.benchmark)
    decisions = _decisions(facts)
    measured = {d.setting for d in decisions}
    results = facts.analysis.source.results
    old = [facts.machines[p].fingerprint_id for p in facts.superseded]
    return HomePage(
        benchmark=tuple(BenchmarkHeadline(m, benchmark_summary(g))
                        for m, g in by_machine(bm, facts.machines)),
        device=tuple(_device(facts)),
        determinism=tuple(_determinism(facts)),
        precision=tuple(h for h in _precision(facts) if h.speedups),
        decisions=tuple(decisions),
        unmeasured=tuple(s for s in DECISION_SETTINGS if s not in measured),
        n_machines=len(facts.machines) - len(facts.superseded),
        n_rows=int((~results["fingerprint_id"].isin(old)).sum()),
        superseded=tuple(facts.machines[k] for k in sorted(facts.superseded)),
        outdated=tuple(m for k, m in sorted(facts.machines.items()) if m.outdated),
        claims=claims,
        compiled=compile_counts(facts),
    )
