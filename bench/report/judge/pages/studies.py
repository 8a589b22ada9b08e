"""The study pages, judged: precision and layout, dynamic shapes, determinism, and CPU against
GPU. Each lists one machine's comparisons in page order, with the claims and the advice the
page states; the per-page judging (verdicts, crossovers) is the analysis' and the advice's."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from bench.report.analysis.pairs import join_cells, row_keys
from bench.report.analysis.studies import CURVE_KEY
from bench.report.judge.advice.summaries import agreement
from bench.report.judge.best import BestAgainstBest, best_against_best
from bench.report.judge.claims import ClaimAnswer
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, by_machine, unknown_machine
from bench.report.judge.pages.common import (
    CONFIG_AXES,
    AdviceList,
    Scope,
    advice_list,
    claims_for,
    merged,
    ordered,
    representative,
    scope_of,
    sources_of,
)
from bench.report.judge.selection import benchmark_off_partner, judged
from bench.report.vocabulary import Action, Verdict

#: What a CPU-vs-GPU curve is named by: its axes, without where it was measured.
CURVE_AXES = tuple(c for c in CURVE_KEY if c not in ("fingerprint_id", "machine", "page"))


@dataclass(frozen=True)
class Tally:
    """What one machine's judged comparisons of a question add up to (an answer's figures)."""

    verdict: Verdict  # their agreement (``advice.summaries.agreed``'s rule)
    counts: Mapping[Verdict, int]  # per verdict, too few replicates included
    scope: Scope
    speedups: tuple[float, ...]  # of the judged ones
    ci_low: float | None  # the lowest and highest ends of their intervals
    ci_high: float | None
    quoted: Any  # the pair the answer quotes (``common.representative``), or None
    best: Any  # the clearly faster pair with the largest speedup, or None


def _floats(values: pd.Series) -> tuple[float, ...]:
    found = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    return tuple(float(v) for v in found if np.isfinite(v))


def summary_of(rows: pd.DataFrame) -> Tally:
    ok = judged(rows)
    counts = {v: int((rows["verdict"] == v).sum()) for v in
              (Verdict.FASTER, Verdict.SLOWER, Verdict.NO_CLEAR_DIFFERENCE, Verdict.INSUFFICIENT)}
    faster = ok.loc[ok["verdict"] == Verdict.FASTER]
    best = None
    if len(faster):
        top = pd.to_numeric(faster["speedup"], errors="coerce").idxmax()
        best = next(faster.loc[[top]].astype(object).itertuples(index=False))
    return Tally(agreement(rows["verdict"]), counts, scope_of(rows), _floats(ok["speedup"]),
                   min(_floats(ok["ci_low"]), default=None),
                   max(_floats(ok["ci_high"]), default=None), representative(rows), best)


@dataclass(frozen=True)
class MachineRows:
    """One machine's rows of a comparison, in page order, and what they add up to."""

    machine: Machine
    rows: pd.DataFrame = field(repr=False)

    @property
    def summary(self) -> Tally:
        return summary_of(self.rows)

    def by_variant(self) -> tuple[tuple[str, Tally], ...]:
        """A summary per variant value (amp-bf16, amp-fp16, …), in the rows' order."""
        return tuple((str(v), summary_of(g)) for v, g in
                     self.rows.groupby("variant_value", sort=False, dropna=False))


@dataclass(frozen=True)
class Comparisons:
    """One comparison table of a page: every pair (its CSV), and the pairs per machine."""

    pairs: pd.DataFrame = field(repr=False)
    sections: tuple[MachineRows, ...]


def comparisons(frame: pd.DataFrame, facts: Facts, extra: tuple[str, ...] = ()) -> Comparisons:
    """Every pair of ``frame`` (the CSV), and the current fingerprints' pairs per machine."""
    return Comparisons(frame, tuple(MachineRows(m, ordered(g, extra))
                                    for m, g in by_machine(facts.current(frame),
                                                           facts.machines)))


@dataclass(frozen=True)
class PrecisionPage:
    precision: Comparisons  # with ``baseline_allow_tf32``: the fp32 baseline's TF32 flag
    layout: Comparisons
    advice: AdviceList
    sources: tuple[Machine, ...]


def _with_tf32(pairs: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """The precision pairs with their baseline cell's read-back ``allow_tf32`` flag."""
    if pairs.empty:
        return pairs.assign(baseline_allow_tf32=pd.Series(dtype=object))
    flags = cells.set_index(["fingerprint_id", "cell_id"])["eff_cudnn_allow_tf32"]
    keys = zip(pairs["fingerprint_id"], pairs["baseline_cell_id"])
    return pairs.assign(baseline_allow_tf32=[str(flags.get(k, "")) for k in keys])


def precision_page(facts: Facts) -> PrecisionPage:
    a = facts.analysis
    precision = comparisons(_with_tf32(a.comparisons["precision"], a.cells), facts,
                            ("variant_value",))
    layout = comparisons(a.comparisons["memory_format"], facts, ("variant_value",))
    return PrecisionPage(
        precision=precision, layout=layout,
        advice=merged(advice_list(facts, "precision"), advice_list(facts, "memory_format")),
        sources=sources_of(facts, *(s.rows for s in (*precision.sections, *layout.sections))),
    )


@dataclass(frozen=True)
class ShapesPage:
    #: with the variant's cold-pass range (``var_cold_pass_min_s``, max) and
    #: ``extra_cold_vs_bm_off_s`` (``with_benchmark_share``)
    shapes: Comparisons
    claims: tuple[ClaimAnswer, ...]
    advice: AdviceList
    sources: tuple[Machine, ...]


#: The axes a benchmark-on shapes pair shares with its benchmark-off twin: all but the switch.
_NOT_TWIN = ("shapes", "cudnn_benchmark", "cudnn_benchmark_limit")


def with_benchmark_share(shapes: pd.DataFrame) -> pd.DataFrame:
    """``shapes`` with ``extra_cold_vs_bm_off_s``: on benchmark-on rows, their
    ``extra_cold_per_new_shape_s`` minus that of the same configuration with benchmark off.

    Both terms are per new shape against the static cell of their own setting, so the
    difference is what turning the search on adds to the figure shown beside it. The
    analysis' ``penalty_vs_bm_off_s`` divides by every shape and subtracts the steady step
    instead, so a table printing it as a part of the per-new-shape figure said the part (15.7 s)
    exceeded the whole (11.5 s).
    """
    col = "extra_cold_vs_bm_off_s"
    if shapes.empty:
        return shapes.assign(**{col: pd.Series(dtype=float)})
    key = ["fingerprint_id", "variant_value",
           *(c for c in CONFIG_AXES if c in shapes.columns and c not in _NOT_TWIN)]
    per_shape = pd.to_numeric(shapes["extra_cold_per_new_shape_s"], errors="coerce")
    is_off = (shapes["cudnn_benchmark"] == "off").to_numpy()
    off = per_shape.loc[is_off].set_axis(row_keys(shapes.loc[is_off], key))
    off = off.loc[~off.index.duplicated(keep="last")]
    twin = off.reindex(row_keys(shapes, key)).to_numpy(dtype=float)
    on = (shapes["cudnn_benchmark"] == "on").to_numpy()
    return shapes.assign(**{col: np.where(on, per_shape.to_numpy(dtype=float) - twin, np.nan)})


def shapes_page(facts: Facts) -> ShapesPage:
    a = facts.analysis
    pairs = with_benchmark_share(a.shapes)
    shapes = pairs
    if len(shapes):  # each replicate's cold pass varies: the range beside the median
        shapes = join_cells(shapes, a.cells, ("cold_pass_min_s", "cold_pass_max_s"))
    sections = comparisons(shapes, facts).sections
    return ShapesPage(
        shapes=Comparisons(pairs, sections),
        claims=claims_for(facts, "dynamic-shapes"),
        advice=advice_list(facts, "cudnn.benchmark", shapes_only=True),
        sources=sources_of(facts, *(s.rows for s in sections), claims_on="dynamic-shapes"),
    )


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


@dataclass(frozen=True)
class CpuGpuSection:
    machine: Machine
    pairs: pd.DataFrame = field(repr=False)  # one per curve and batch, the same setting
    curves: pd.DataFrame = field(repr=False)  # the crossovers of this machine's curves
    best: tuple[BestAgainstBest, ...] = ()

    @property
    def summary(self) -> Tally:
        return summary_of(self.pairs)


@dataclass(frozen=True)
class CpuGpuPage:
    pairs: pd.DataFrame = field(repr=False)
    sections: tuple[CpuGpuSection, ...]
    claims: tuple[ClaimAnswer, ...]
    advice: AdviceList
    sources: tuple[Machine, ...]


def cpu_gpu_page(facts: Facts) -> CpuGpuPage:
    a = facts.analysis
    current = facts.current(a.cpu_gpu)
    curves = {str(k): g for k, g in a.crossovers.groupby("page")} if len(a.crossovers) else {}
    sections = tuple(
        CpuGpuSection(m, ordered(g), curves.get(m.page, pd.DataFrame()),
                      best_against_best(a.cells.loc[a.cells["page"] == m.page], g))
        for m, g in by_machine(current, facts.machines))
    return CpuGpuPage(a.cpu_gpu, sections, claims_for(facts, "cpu-vs-gpu"),
                      advice_list(facts, "device"),
                      sources_of(facts, current, claims_on="cpu-vs-gpu"))
