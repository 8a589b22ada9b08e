"""The Claims page, judged: every claim's answer, and how many claims each verdict has."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bench.report.judge.claims import ClaimAnswer, count_verdicts
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine
from bench.report.vocabulary import ClaimVerdict


@dataclass(frozen=True)
class ClaimsPage:
    answers: tuple[ClaimAnswer, ...]  # in claims.toml's order
    counts: Mapping[ClaimVerdict, int]  # claims per verdict, every verdict present
    sources: tuple[Machine, ...] = ()  # the fingerprints its findings cite


def claims_page(facts: Facts) -> ClaimsPage:
    counts = count_verdicts(facts.claims)
    pages = {f.page for a in facts.claims for f in a.findings}
    return ClaimsPage(facts.claims, counts,
                      tuple(m for k, m in facts.machines.items() if k in pages))
