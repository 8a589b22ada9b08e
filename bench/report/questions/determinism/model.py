"""The determinism page, judged: what deterministic algorithms cost per machine, and whether
re-runs agree bitwise."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from bench.report.judge.columns import comparison_columns
from bench.report.judge.common import (
    ComparisonPage,
    Scope,
    advice_list,
    claims_for,
    ordered,
    scope_of,
    sources_of,
)
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, mark_charted, unknown_machine
from bench.report.judge.numerics import NumericPair
from bench.report.judge.rows import Axes, Table, typed_rows
from bench.report.judge.selection import benchmark_off_partner
from bench.report.judge.tally import Tally, summary_of
from bench.report.vocabulary import Action


@dataclass(frozen=True, kw_only=True)
class DeterminismPair(NumericPair):
    """A deterministic off → on pair with each side's re-run check (``analysis.studies``) and
    the deterministic side's outputs against the strict reference (``NumericPair``)."""

    base_n_checks: int | None = None
    var_n_checks: int | None = None
    base_bitwise_equal: bool | None = None  # None: no ok check
    var_bitwise_equal: bool | None = None
    base_max_abs_diff: float | None = None
    var_max_abs_diff: float | None = None


@dataclass(frozen=True, kw_only=True)
class RerunCheck(Axes):
    """One two-process re-run check (``analysis.repro``): its configuration (the axes a label
    names) and outcome."""

    page: str
    anchor: str
    n_ok_checks: int | None = None
    bitwise_equal: bool | None = None  # None: no check ended ok
    max_abs_diff: float | None = None
    status_summary: str | None = None


@dataclass(frozen=True)
class Reruns:
    """What a machine's re-run checks found, counted over those that ended ok."""

    ok: int = 0  # checks that ended ok
    equal: int = 0  # of those, the bitwise-equal ones
    max_diff: float | None = None  # the largest absolute difference among them


@dataclass(frozen=True)
class DeterminismSection:
    machine: Machine
    pairs: tuple[DeterminismPair, ...] = field(default=(), repr=False)  # deterministic off → on
    checks: tuple[RerunCheck, ...] = field(default=(), repr=False)  # the two-process re-run checks
    #: what the pairs add up to (None where there are none), and what a label of a pair
    #: (the axes but deterministic that vary) and of a check (the axes that vary) names
    summary: Tally[DeterminismPair] | None = None
    columns: tuple[str, ...] = ()
    check_columns: tuple[str, ...] = ()
    checks_scope: Scope = ()  # what the re-run checks cover (their batch sizes, precisions, …)
    #: the section holding its hardware model's charts, where the page does not draw its
    #: own (``judge.machines.mark_charted``); None where it does
    charts_on: Machine | None = None
    reruns: Reruns = Reruns()
    #: whether some pair has an ok re-run check with it off, and with it on
    rerun_off: bool = False
    rerun_on: bool = False
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


@dataclass(frozen=True)
class DeterminismPage(ComparisonPage[DeterminismSection]):
    """Every determinism pair, and a section per current machine with pairs or checks."""


def _agreed(values: pd.Series) -> bool | None:
    """All True → True, all False → False, a mix or nothing → None."""
    values = values.dropna()
    if values.empty:
        return None
    if values.astype(bool).all():
        return True
    return False if not values.astype(bool).any() else None


def reruns(checks: pd.DataFrame) -> Reruns:
    """What the re-run checks found, counted over those that ended ok."""
    ok = checks.loc[(checks["n_ok_checks"] > 0) & checks["bitwise_equal"].notna()]
    if ok.empty:
        return Reruns()
    diff = pd.to_numeric(ok["max_abs_diff"], errors="coerce").max()
    return Reruns(len(ok), int(ok["bitwise_equal"].astype(bool).sum()),
                  float(diff) if pd.notna(diff) else None)


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
    rows = ordered(checks) if checks is not None else pd.DataFrame()
    return DeterminismSection(
        facts.machines.get(key) or unknown_machine(key), typed_rows(DeterminismPair, pairs),
        typed_rows(RerunCheck, rows),
        summary=summary_of(pairs, DeterminismPair) if len(pairs) else None,
        columns=comparison_columns(pairs, "cudnn_deterministic") if len(pairs) else (),
        check_columns=comparison_columns(rows) if len(rows) else (),
        checks_scope=scope_of(rows), reruns=reruns(rows) if len(rows) else Reruns(),
        rerun_off=bool(len(pairs) and pairs["base_bitwise_equal"].notna().any()),
        rerun_on=bool(len(pairs) and pairs["var_bitwise_equal"].notna().any()),
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
    return DeterminismPage(Table.of(a.determinism), mark_charted(sections, a.cells),
                           claims_for(facts, "determinism"),
                           advice_list(facts, "cudnn.deterministic"),
                           sources_of(facts, det, rep, claims_on="determinism"))
