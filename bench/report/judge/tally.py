"""What one machine's judged comparisons of a question add up to (``Tally``), and a page's
comparison tables per machine (``Comparisons``): what the study pages' models share."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

import numpy as np
import pandas as pd

from bench.report.judge.advice.summaries import agreement
from bench.report.judge.common import (
    Scope,
    ordered,
    quoted,
    scope_of,
)
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, by_machine
from bench.report.judge.rows import Banded, Pair, Table, typed_row, typed_rows
from bench.report.judge.selection import judged
from bench.report.vocabulary import Verdict

P = TypeVar("P", bound=Pair)


@dataclass(frozen=True)
class Tally(Banded, Generic[P]):
    """What one machine's judged comparisons of a question add up to (an answer's figures)."""

    verdict: Verdict  # their agreement (``advice.summaries.agreed``'s rule)
    counts: Mapping[Verdict, int]  # per verdict, too few replicates included
    scope: Scope
    speedups: tuple[float, ...]  # of the judged ones
    ci_low: float | None  # the lowest and highest ends of their intervals
    ci_high: float | None
    quoted: P | None  # the pair the answer quotes (``common.representative``)
    best: P | None  # the clearly faster pair with the largest speedup


def _floats(values: pd.Series) -> tuple[float, ...]:
    found = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    return tuple(float(v) for v in found if np.isfinite(v))


def summary_of(rows: pd.DataFrame, row: type[P] = Pair) -> Tally[P]:  # type: ignore[assignment]
    """What ``rows`` (one machine's pairs) add up to, its pairs read as ``row``."""
    ok = judged(rows)
    values = rows["verdict"].tolist()
    verdicts = Counter(values)
    counts = {v: verdicts[v] for v in
              (Verdict.FASTER, Verdict.SLOWER, Verdict.NO_CLEAR_DIFFERENCE, Verdict.INSUFFICIENT)}
    best = None
    if counts[Verdict.FASTER]:
        faster = ok.loc[ok["verdict"] == Verdict.FASTER]
        top = pd.to_numeric(faster["speedup"], errors="coerce").idxmax()
        best = typed_row(row, faster.loc[top])
    return Tally(agreement(values), counts, scope_of(rows),
                 _floats(ok["speedup"]), min(_floats(ok["ci_low"]), default=None),
                 max(_floats(ok["ci_high"]), default=None), quoted(ok, row), best)


@dataclass(frozen=True)
class MachineRows(Generic[P]):
    """One machine's rows of a comparison, in page order, what they add up to, and the same
    per variant value (amp-bf16, amp-fp16, …, in the rows' order)."""

    machine: Machine
    rows: tuple[P, ...] = field(repr=False)
    summary: Tally[P]
    variants: tuple[tuple[str, Tally[P]], ...]

    @classmethod
    def of(cls, machine: Machine, frame: pd.DataFrame, row: type[P]) -> MachineRows[P]:
        variants = tuple((str(v), summary_of(g, row)) for v, g in
                         frame.groupby("variant_value", sort=False, dropna=False))
        return cls(machine, typed_rows(row, frame), summary_of(frame, row), variants)


@dataclass(frozen=True)
class Comparisons(Generic[P]):
    """One comparison table of a page: every pair (its CSV), and the pairs per machine."""

    pairs: Table = field(repr=False)
    sections: tuple[MachineRows[P], ...]


def comparisons(frame: pd.DataFrame, facts: Facts, extra: tuple[str, ...] = (),
                row: type[P] = Pair) -> Comparisons[P]:  # type: ignore[assignment]
    """Every pair of ``frame`` (the CSV), and the current fingerprints' pairs per machine, each
    read as ``row``."""
    return Comparisons(Table.of(frame), tuple(MachineRows.of(m, ordered(g, extra), row)
                                              for m, g in by_machine(facts.current(frame),
                                                                     facts.machines)))
