"""The determinism page, judged: what deterministic algorithms cost per machine, and whether
re-runs agree bitwise."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from bench.report.judge.claims import ClaimAnswer
from bench.report.judge.common import (
    AdviceList,
    Scope,
    advice_list,
    claims_for,
    ordered,
    scope_of,
    sources_of,
)
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, unknown_machine
from bench.report.judge.selection import benchmark_off_partner
from bench.report.judge.tally import Tally, summary_of
from bench.report.vocabulary import Action


@dataclass(frozen=True)
class DeterminismSection:
    machine: Machine
    pairs: pd.DataFrame = field(repr=False)  # deterministic off → on
    checks: pd.DataFrame = field(repr=False)  # the two-process re-run checks
    #: re-runs bitwise equal in every checked configuration (True), in none (False), in some
    #: (None); with it off and on; None too where nothing was checked on that side
    equal_off: bool | None = None
    equal_on: bool | None = None
    checked: int = 0  # configurations with a re-run check on either side
    #: what the advice says for its regimes: their action where they all agree, else
    #: ``Action.DEPENDS``; None where the advice has no regime here
    action: Action | None = None
    #: the configurations re-run with cudnn.benchmark on and deterministic off (an ok check
    #: each), how many of them were not bitwise equal, and the largest difference: what else
    #: bitwise re-runs need, beside deterministic's own pairs
    benchmark_checked: int = 0
    benchmark_differ: int = 0
    benchmark_max_diff: float = float("nan")
    #: of those not bitwise equal, the settings besides cudnn.benchmark in which each differs
    #: from the nearest check with it off (empty where one matches in every other setting):
    #: a pair that differs in the kernel cache too cannot say benchmark made the difference;
    #: and whether one of them had no check with it off to compare with at all
    benchmark_confounds: tuple[str, ...] = ()
    benchmark_unpaired: bool = False
    #: whether the machine ran any CUDA cell: cudnn.deterministic is a cuDNN switch, so on a
    #: CPU-only machine its answer is "not applicable", whatever its re-run checks show
    cuda: bool = True

    @property
    def checks_scope(self) -> Scope:
        """What the re-run checks cover (their batch sizes, precisions, …)."""
        return scope_of(self.checks)

    @property
    def summary(self) -> Tally:
        return summary_of(self.pairs)


@dataclass(frozen=True)
class DeterminismPage:
    pairs: pd.DataFrame = field(repr=False)  # every pair (the page's CSV)
    sections: tuple[DeterminismSection, ...]  # every current machine with pairs or checks
    claims: tuple[ClaimAnswer, ...]
    advice: AdviceList
    sources: tuple[Machine, ...]


def _agreed(values: pd.Series) -> bool | None:
    """All True → True, all False → False, a mix or nothing → None."""
    values = values.dropna()
    if values.empty:
        return None
    if values.astype(bool).all():
        return True
    return False if not values.astype(bool).any() else None


def _determinism_section(facts: Facts, key: str, det: pd.DataFrame,
                         checks: pd.DataFrame | None, cuda: bool) -> DeterminismSection:
    pairs = ordered(det.loc[det["page"] == key]) if len(det) else pd.DataFrame()
    checked = int(((pairs["base_n_checks"] > 0) | (pairs["var_n_checks"] > 0)).sum()) \
        if len(pairs) else 0
    actions = {g.main.action for g in facts.current_regimes
               if g.main.setting == "cudnn.deterministic" and g.main.page == key}
    bench_on = _benchmark_checks(checks)
    unequal = bench_on.loc[~bench_on["bitwise_equal"].astype(bool)]
    nearest = [_nearest_off(r, checks) for r in unequal.itertuples(index=False)]
    confounds = tuple(sorted({c for found in nearest if found is not None for c in found}))
    return DeterminismSection(
        facts.machines.get(key) or unknown_machine(key), pairs,
        ordered(checks) if checks is not None else pd.DataFrame(),
        equal_off=_agreed(pairs["base_bitwise_equal"]) if len(pairs) else None,
        equal_on=_agreed(pairs["var_bitwise_equal"]) if len(pairs) else None,
        checked=checked,
        action=None if not actions else next(iter(actions)) if len(actions) == 1
        else Action.DEPENDS,
        benchmark_checked=len(bench_on),
        benchmark_differ=int((~bench_on["bitwise_equal"].astype(bool)).sum()),
        benchmark_max_diff=float(bench_on["max_abs_diff"].max()) if len(bench_on) else
        float("nan"), benchmark_confounds=confounds,
        benchmark_unpaired=any(found is None for found in nearest), cuda=cuda)


def _nearest_off(on: Any, checks: pd.DataFrame | None) -> tuple[str, ...] | None:
    """The settings (besides cudnn.benchmark) in which a benchmark-on check differs from its
    nearest ok benchmark-off check (``selection.benchmark_off_partner``); () where one matches
    in all of them, None where there is none."""
    off = [] if checks is None or checks.empty else list(checks.loc[
        (checks["cudnn_benchmark"] == "off") & (checks["cudnn_deterministic"] == "off")
        & (checks["n_ok_checks"] > 0)].itertuples(index=False))
    partner, differs = benchmark_off_partner(on, off)
    return None if partner is None else tuple(c.replace("_", " ") for c in differs)


def _benchmark_checks(checks: pd.DataFrame | None) -> pd.DataFrame:
    """The re-run checks with cudnn.benchmark on and deterministic off that ended ok."""
    if checks is None or checks.empty:
        return pd.DataFrame(columns=["bitwise_equal", "max_abs_diff"])
    on = checks.loc[(checks["cudnn_benchmark"] == "on") & (checks["cudnn_deterministic"] == "off")
                    & (checks["n_ok_checks"] > 0)]
    return on.loc[on["bitwise_equal"].notna()]


def determinism_page(facts: Facts) -> DeterminismPage:
    a = facts.analysis
    det, rep = facts.current(a.determinism), facts.current(a.repro)
    checks = {str(k): g for k, g in rep.groupby("page")} if len(rep) else {}
    pages = sorted(set(det["page"].astype(str)) | set(checks)) if len(det) else sorted(checks)
    cuda = {str(k) for f in (facts.current(a.cells), rep) if len(f)
            for k in f.loc[f["device"] == "cuda", "page"]}
    sections = tuple(_determinism_section(facts, k, det, checks.get(k), k in cuda)
                     for k in pages)
    return DeterminismPage(a.determinism, sections, claims_for(facts, "determinism"),
                           advice_list(facts, "cudnn.deterministic"),
                           sources_of(facts, det, rep, claims_on="determinism"))
