"""What every answer is judged from, computed once: the analysis, the machines, the advice and
the claims' verdicts, and which fingerprints still answer.

The page models (``bench.report.questions.*.model``) are built from one ``Facts``; nothing in it
is worded, so each page says only what these facts hold.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass

import pandas as pd

from bench.report.analysis import Analysis
from bench.report.judge import selection
from bench.report.judge.advice import Recommendation
from bench.report.judge.claims import ClaimAnswer
from bench.report.judge.machines import Machine
from bench.report.judge.regimes import Regime


@dataclass(frozen=True)
class Facts:
    """The judged state of one results tree (see the module docstring)."""

    analysis: Analysis
    machines: Mapping[str, Machine]
    recs: tuple[Recommendation, ...]
    regimes: tuple[Regime, ...]  # the recommendations grouped by regime, in advice's order
    claims: tuple[ClaimAnswer, ...]  # every claim of claims.toml, judged

    @functools.cached_property
    def superseded(self) -> frozenset[str]:
        """The page keys of the fingerprints a newer step definition replaced."""
        return frozenset(k for k, m in self.machines.items() if m.superseded)

    @functools.cached_property
    def current_regimes(self) -> tuple[Regime, ...]:
        """``regimes`` without the superseded fingerprints: what the advice lists answer from."""
        return tuple(g for g in self.regimes if g.main.page not in self.superseded)

    @functools.cached_property
    def _regimes_on(self) -> Mapping[tuple[str, str], tuple[Regime, ...]]:
        on: dict[tuple[str, str], list[Regime]] = {}
        for g in self.current_regimes:
            on.setdefault((g.main.setting, g.main.page), []).append(g)
        return {k: tuple(v) for k, v in on.items()}

    def regimes_on(self, setting: str, page: str) -> tuple[Regime, ...]:
        """The current regimes of one setting on one machine page, in advice's order: what a
        page's decision is looked up among (the whole list, once per answer, is slow with
        many machines)."""
        return self._regimes_on.get((setting, page), ())

    def current(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` without the superseded fingerprints (``selection.current``)."""
        return selection.current(frame, self.superseded)
