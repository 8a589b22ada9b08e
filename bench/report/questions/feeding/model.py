"""The "Feeding the GPU" page, judged: each machine's feeding answer
(``judge.feeding_sections``: its sweeps over loader workers, the cores each measured device
step needs, the end-to-end check), machines with a GPU first."""

from __future__ import annotations

from dataclasses import dataclass

from bench.report.judge.common import sources_of
from bench.report.judge.facts import Facts
from bench.report.judge.feeding import CoresToFeed, Rate
from bench.report.judge.feeding_sections import (
    EndToEnd,
    FeedingSection,
    Need,
    Sweep,
    SweepPoint,
    feeding_sections,
)
from bench.report.judge.machines import Machine, mark_charted
from bench.report.vocabulary import Feeding

__all__ = ["CoresToFeed", "EndToEnd", "FeedingPage", "FeedingSection", "Need", "Rate", "Sweep",
           "SweepPoint", "feeding_page"]


@dataclass(frozen=True)
class FeedingPage:
    sections: tuple[FeedingSection, ...]
    gpu_measured: bool  # some GPU step has its cores to feed
    sources: tuple[Machine, ...]


def feeding_page(facts: Facts) -> FeedingPage:
    sections = mark_charted(feeding_sections(facts), facts.analysis.cells)
    gpu_measured = any(n.device == "cuda" and n.answer.verdict != Feeding.NOT_MEASURED
                       for s in sections for n in s.needs)
    a = facts.analysis
    rows = facts.current(a.pipelines) if len(a.pipelines) else a.pipelines
    return FeedingPage(sections, gpu_measured, sources_of(facts, rows))
