"""The Claims page, judged: every claim's answer, and how many claims each verdict has."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bench.report.judge.claims import ClaimAnswer
from bench.report.judge.facts import Facts
from bench.report.vocabulary import ClaimVerdict


@dataclass(frozen=True)
class ClaimsPage:
    answers: tuple[ClaimAnswer, ...]  # in claims.toml's order
    counts: Mapping[ClaimVerdict, int]  # claims per verdict, every verdict present


def claims_page(facts: Facts) -> ClaimsPage:
    counts = {v: sum(a.verdict == v for a in facts.claims) for v in ClaimVerdict}
    return ClaimsPage(facts.claims, counts)
