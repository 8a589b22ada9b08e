"""Advice lists under five pages and the home page, and the decisions CSV they all link to.

Lists are capped (``RECS_SHOWN``); what does not fit is counted and the note under the list
links to the decisions CSV, which holds every decision.
"""

from __future__ import annotations

from typing import Any

import pandas as pd

from bench.report.escape import Md, cat
from bench.report.judge import advice
from bench.report.pages import Page
from bench.report.paths import DECISIONS_CSV
from bench.report.views import sentences
from bench.report.views.inputs import Inputs
from bench.report.vocabulary import Action
from bench.report.writer import Writer

#: Recommendation sentences (and "not enough data" entries) listed per page; the rest are in
#: the decisions CSV.
RECS_SHOWN = 50


def undecided(r: advice.Recommendation, p: Page) -> Md:
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


def recommendations_for(
    data: Inputs, setting: str, p: Page, *, shapes_only: bool = False
) -> dict[str, Any]:
    """One setting's recommendations: sentences, and the regimes without enough data."""
    said: list[Md] = []
    unknown: list[Md] = []
    n_said = n_unknown = 0  # only the entries shown are rendered; the rest are counted
    for regime in data.current_regimes:
        r = regime.main
        if r.setting != setting or (shapes_only and r.shapes == "static"):
            continue
        if r.action == Action.INSUFFICIENT:
            n_unknown += 1
            if n_unknown <= RECS_SHOWN:
                unknown.append(undecided(r, p))
        else:
            n_said += 1
            if n_said <= RECS_SHOWN:
                said.append(sentences.sentence(regime, p, with_setting=False))
    hidden = max(n_said - RECS_SHOWN, 0) + max(n_unknown - RECS_SHOWN, 0)
    return {
        "said": said[:RECS_SHOWN],
        "unknown": unknown[:RECS_SHOWN],
        "more": more_decisions(p, hidden),
    }


def merged(*parts: dict[str, Any]) -> dict[str, Any]:
    """Several settings' lists as one (the precision page lists precision and layout)."""
    lists = {key: [item for part in parts for item in part[key]] for key in ("said", "unknown")}
    return {**lists, "more": next((part["more"] for part in parts if part["more"]), None)}


def write_decisions(writer: Writer, decisions: pd.DataFrame) -> None:
    """advice.decision_table as CSV (tuples written as text) for the pages that cap their lists."""
    frame = decisions.copy()
    for col in ("caveats", "evidence"):
        if col in frame.columns:
            frame[col] = frame[col].map(
                lambda t: " ".join(
                    "/".join(map(str, x)) if isinstance(x, tuple) else str(x) for x in t
                )
            )
    writer.csv(DECISIONS_CSV, frame)
