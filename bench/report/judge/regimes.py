"""The recommendations of one regime together: cudnn.benchmark's are one per job length, and
a page states the regime once, from its longest job."""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable
from dataclasses import dataclass

from bench.report.judge.advice import REGIME_KEY, Recommendation


@dataclass(frozen=True)
class Regime:
    """All recommendations of one regime (several job lengths for cudnn.benchmark)."""

    recs: tuple[Recommendation, ...]

    @functools.cached_property
    def main(self) -> Recommendation:
        """The record at the longest job length (the only one for other settings); kept once
        found, as every page asks it of every regime."""
        return max(self.recs, key=lambda r: r.job_length or 0)


def regimes(recs: Iterable[Recommendation]) -> list[Regime]:
    """Group recommendations by regime, keeping advice's order."""
    groups: dict[tuple[str, ...], list[Recommendation]] = {}
    key = operator.attrgetter(*REGIME_KEY)  # every key field is a str
    for r in recs:
        groups.setdefault(key(r), []).append(r)
    return [Regime(tuple(g)) for g in groups.values()]
