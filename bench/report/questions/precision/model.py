"""The precision and layout page, judged: one machine's comparisons in page order, with the
claims and the advice the page states."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from bench.report.judge.columns import comparison_columns
from bench.report.judge.common import AdviceList, advice_list, merged, sources_of
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine
from bench.report.judge.rows import Pair, Table
from bench.report.judge.tally import MachineRows, comparisons
from bench.report.judge.tally import Tally as Tally  # its fields' types


@dataclass(frozen=True, kw_only=True)
class PrecisionPair(Pair):
    """A precision or layout pair, with the fp32 baseline's read-back TF32 flag."""

    baseline_allow_tf32: str | None = None


@dataclass(frozen=True)
class PrecisionSection:
    """One machine's pairs of one comparison, and what its answer leads with."""

    pairs: MachineRows[PrecisionPair]
    columns: tuple[str, ...]  # what a label names: the axes but the compared one that vary
    winner: str | None  # the variant clearly faster by the most, where one was
    judged: bool  # whether any variant had judged pairs
    quoted: PrecisionPair | None  # the winner's fastest pair, else the summary's quoted one


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
    return PrecisionSection(
        pairs=s, columns=comparison_columns(s.rows, axis),
        winner=best[0] if best is not None else None,
        judged=any(t.speedups for _, t in s.variants),
        quoted=best[1] if best is not None else s.summary.quoted)


def _part(frame: pd.DataFrame, facts: Facts, axis: str) -> PrecisionPart:
    c = comparisons(frame, facts, ("variant_value",), row=PrecisionPair)
    return PrecisionPart(c.pairs, tuple(_section(s, axis) for s in c.sections))


def _with_tf32(pairs: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """The precision pairs with their baseline cell's read-back ``allow_tf32`` flag."""
    if pairs.empty:
        return pairs.assign(baseline_allow_tf32=pd.Series(dtype=object))
    flags = cells.set_index(["fingerprint_id", "cell_id"])["eff_cudnn_allow_tf32"]
    keys = zip(pairs["fingerprint_id"], pairs["baseline_cell_id"])
    return pairs.assign(baseline_allow_tf32=[str(flags.get(k, "")) for k in keys])


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
