"""Advice lists under five pages and the home page, and the decisions CSV they all link to.

Lists are capped (``RECS_SHOWN``); what does not fit is counted and the note under the list
links to the decisions CSV, which holds every decision.
"""

from __future__ import annotations

from typing import Any

from bench.report.judge import Recommendation, Table
from bench.report.judge.common import AdviceList
from bench.report.render.escape import Md, cat
from bench.report.render.markdown import Page
from bench.report.render.paths import DECISIONS_CSV
from bench.report.render.words import sentences
from bench.report.render.writer import Writer

#: Recommendation sentences (and "not enough data" entries) listed per page; the rest are in
#: the decisions CSV.
RECS_SHOWN = 50
#: Workloads without enough data to decide, named in one sentence: past this many the
#: sentence stops being read (a tree of many machines had 150 in one line), and the rest are
#: counted and in the decisions CSV.
UNDECIDED_SHOWN = 10


def undecided(r: Recommendation, p: Page) -> Md:
    """A workload without enough ok replicates to decide: what, where, and its rows."""
    return cat(sentences.workload(r), " on ", p.machine_link(r.machine, r.page), " (",
               sentences.evidence_links(p, r.evidence), ")")


def more_decisions(p: Page, hidden: int) -> Md | None:
    """The note under a capped list or table of decisions, linking to the decisions CSV."""
    if not hidden:
        return None
    return cat(
        f"{hidden:,} more workloads are not listed here; every decision is in ",
        p.link("decisions.csv", DECISIONS_CSV),
        ".",
    )


def advice_items(advice: AdviceList, p: Page) -> dict[str, Any]:
    """One setting's advice as the page lists it: a sentence per decided regime and a link per
    regime without enough data, each capped at ``RECS_SHOWN`` (the rest are counted and are in
    the decisions CSV)."""
    hidden = (max(len(advice.said) - RECS_SHOWN, 0)
              + max(len(advice.unknown) - UNDECIDED_SHOWN, 0))
    shown = advice.said[:RECS_SHOWN]
    common, notes = sentences.common_notes(shown)  # each caveat said once, above the list
    return {
        "notes": "".join(f"{n}. " for n in notes).strip(),
        "said": [sentences.sentence(g, p, with_setting=False, said=common) for g in shown],
        "unknown": [undecided(r, p) for r in advice.unknown[:UNDECIDED_SHOWN]],
        "more": more_decisions(p, hidden),
    }


def write_decisions(writer: Writer, decisions: Table) -> None:
    """Every decision as CSV, for the pages that cap their lists."""
    writer.csv(DECISIONS_CSV, decisions)
