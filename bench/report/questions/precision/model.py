"""The precision and layout page, judged: one machine's comparisons in page order, with the
claims and the advice the page states."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from bench.report.judge.columns import comparison_columns
from bench.report.judge.common import AdviceList, advice_list, merged, sources_of
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, mark_charted
from bench.report.judge.numerics import (
    Math,
    NumericPair,
    NumericSummary,
    math_of,
    summarise,
    tradeoff,
)
from bench.report.judge.rows import Table
from bench.report.judge.tally import MachineRows, comparisons
from bench.report.judge.tally import Tally as Tally  # its fields' types
from bench.report.vocabulary import Numerics, Tradeoff, Verdict

#: The baseline cell's read-back flags each precision pair carries (``base_<flag>``): which
#: arithmetic its "fp32" really ran.
BASE_FLAGS = ("eff_conv_math", "eff_matmul_allow_tf32", "eff_matmul_fp32_precision",
              "eff_conv_fp32_precision")


@dataclass(frozen=True, kw_only=True)
class PrecisionPair(NumericPair):
    """A precision or layout pair, with the variant's numerics and the fp32 baseline's
    read-back flags (its TF32 switch in cuDNN, its convolutions' math, TF32 in matmuls and
    the fp32_precision settings)."""

    baseline_allow_tf32: str | None = None
    base_eff_conv_math: str | None = None
    base_eff_matmul_allow_tf32: str | None = None
    base_eff_matmul_fp32_precision: str | None = None
    base_eff_conv_fp32_precision: str | None = None

    @property
    def baseline_math(self) -> Math | None:
        """The arithmetic the baseline cell really ran, from its flags read back (None where
        its rows read none back: a CUDA cell of a run older than the flags)."""
        flags = (self.base_eff_conv_math, self.base_eff_matmul_allow_tf32,
                 self.base_eff_matmul_fp32_precision, self.base_eff_conv_fp32_precision)
        if not any(flags):
            if self.device == "cuda" and self.baseline_allow_tf32 not in ("true", "false"):
                return None
            flags = ("tf32" if self.baseline_allow_tf32 == "true" else "", *flags[1:])
        return math_of(self.baseline_value, *flags, device=self.device)


@dataclass(frozen=True)
class PrecisionSection:
    """One machine's pairs of one comparison, and what its answer leads with."""

    pairs: MachineRows[PrecisionPair]
    columns: tuple[str, ...]  # what a label names: the axes but the compared one that vary
    winner: str | None  # the variant clearly faster by the most, where one was
    judged: bool  # whether any variant had judged pairs
    quoted: PrecisionPair | None  # the winner's fastest pair, else the summary's quoted one
    #: per variant, in the rows' order: what its checked pairs' numerics add up to
    numerics: tuple[tuple[str, NumericSummary], ...] = ()
    #: speed and numerics together: the winner's, else the variants' where none was faster
    advice: Tradeoff | None = None
    #: the section holding its hardware model's charts, where the page does not draw its
    #: own (``judge.machines.mark_charted``); None where it does
    charts_on: Machine | None = None

    @property
    def machine(self) -> Machine:
        return self.pairs.machine

    @property
    def checked(self) -> bool:
        """Whether any pair here ran the numerics check."""
        return any(s.checked for _, s in self.numerics)


@dataclass(frozen=True)
class PrecisionPart:
    """One comparison of the page (precisions against fp32, or channels_last against nchw):
    every pair (its CSV), and a section per machine."""

    pairs: Table = field(repr=False)
    sections: tuple[PrecisionSection, ...]


@dataclass(frozen=True)
class PrecisionPage:
    precision: PrecisionPart  # pairs with ``baseline_allow_tf32``: the fp32 baseline's TF32 flag
    layout: PrecisionPart
    advice: AdviceList
    sources: tuple[Machine, ...]


def _section(s: MachineRows[PrecisionPair], axis: str) -> PrecisionSection:
    best = max(((v, t.best) for v, t in s.variants if t.best is not None),
               key=lambda v: float(v[1].speedup or 0.0), default=None)
    numerics = tuple((v, summarise(r for r in s.rows if str(r.variant_value) == v))
                     for v, _ in s.variants)
    judged = any(t.speedups for _, t in s.variants)
    return PrecisionSection(
        pairs=s, columns=comparison_columns(s.rows, axis),
        winner=best[0] if best is not None else None,
        judged=judged,
        quoted=best[1] if best is not None else s.summary.quoted,
        numerics=numerics, advice=_advice(best[0] if best is not None else None, numerics,
                                          judged))


def _advice(winner: str | None, numerics: tuple[tuple[str, NumericSummary], ...],
            judged: bool) -> Tradeoff | None:
    """The winner's speed and numerics together; where nothing was clearly faster, "no
    faster" with the variants' numerics (drifts if any drifts)."""
    if winner is not None:
        return tradeoff(Verdict.FASTER, dict(numerics)[winner].verdict)
    if not judged:
        return None
    found = {s.verdict for _, s in numerics}
    verdict = (Numerics.DRIFTS if Numerics.DRIFTS in found else
               Numerics.AGREES if Numerics.AGREES in found else Numerics.NOT_CHECKED)
    return tradeoff(Verdict.NO_CLEAR_DIFFERENCE, verdict)


def _part(frame: pd.DataFrame, facts: Facts, axis: str) -> PrecisionPart:
    c = comparisons(frame, facts, ("variant_value",), row=PrecisionPair)
    sections = [_section(s, axis) for s in c.sections]
    return PrecisionPart(c.pairs, mark_charted(sections, facts.analysis.cells))


def _with_tf32(pairs: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """The precision pairs with their baseline cell's read-back ``allow_tf32`` flag and the
    other flags that say what its fp32 ran (``BASE_FLAGS``, as base_<flag>)."""
    names = {"eff_cudnn_allow_tf32": "baseline_allow_tf32",
             **{f: f"base_{f}" for f in BASE_FLAGS}}
    if pairs.empty:
        return pairs.assign(**{n: pd.Series(dtype=object) for n in names.values()})
    flags = cells.set_index(["fingerprint_id", "cell_id"])
    idx = pd.MultiIndex.from_arrays([pairs["fingerprint_id"], pairs["baseline_cell_id"]])
    found = flags.reindex(idx)
    return pairs.assign(**{new: [str(v) for v in found[old].fillna("").to_numpy()]
                           if old in found.columns else ""
                           for old, new in names.items()})


def precision_page(facts: Facts) -> PrecisionPage:
    a = facts.analysis
    precision = _part(_with_tf32(a.comparisons["precision"], a.cells), facts, "precision")
    layout = _part(a.comparisons["memory_format"], facts, "memory_format")
    return PrecisionPage(
        precision=precision, layout=layout,
        advice=merged(advice_list(facts, "precision"), advice_list(facts, "memory_format")),
        sources=sources_of(facts, *(s.pairs.rows for s in (*precision.sections,
                                                          *layout.sections))),
    )
