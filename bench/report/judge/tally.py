"""What one machine's judged comparisons of a question add up to (``Tally``), and a page's
comparison tables per machine (``Comparisons``): what the study pages' models share."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from bench.report.judge.advice.summaries import agreement
from bench.report.judge.common import (
    Scope,
    ordered,
    representative,
    scope_of,
)
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, by_machine
from bench.report.judge.selection import judged
from bench.report.vocabulary import Verdict


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
