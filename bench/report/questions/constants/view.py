"""The snippets the hand-written pages include: the statistical settings the Methodology page
quotes from the code, the vocabulary's words with their meanings, and the site's provenance
line (which the MkDocs hook adds to every hand-written page)."""

from __future__ import annotations

from typing import Any

from bench.report import fmt
from bench.report.judge import CONFIDENCE, DELTA, MIN_OK_REPLICATES, Machine
from bench.report.render.escape import Md, cat
from bench.report.render.markdown import table
from bench.report.render.paths import CONSTANTS_SNIPPET, PROVENANCE_SNIPPET, VOCABULARY_SNIPPET
from bench.report.render.words.context import provenance
from bench.report.render.writer import Writer
from bench.report.vocabulary import MEANINGS, ClaimVerdict, Power, Stance, Verdict
from bench.schema import ENERGY_MIN_WINDOW_S

#: What each kind of word describes, in the vocabulary table's first column.
_KINDS = {Verdict: "a comparison", ClaimVerdict: "a claim", Stance: "a finding",
          Power: "a measurement"}


def constants_page(writer: Writer, common: dict[str, Any]) -> None:
    writer.page(
        CONSTANTS_SNIPPET,
        "constants.md.j2",
        delta=fmt.pct(DELTA),
        confidence=fmt.pct(CONFIDENCE),
        min_ok=MIN_OK_REPLICATES,
        energy_window=f"{ENERGY_MIN_WINDOW_S:g} s",
    )
    rows = [[_KINDS.get(type(word), "advice"), cat(Md("*"), str(word), Md("*")), meaning]
            for word, meaning in MEANINGS]
    writer.text(VOCABULARY_SNIPPET, table(["Of", "Word", "Means"], rows) + "\n")


def provenance_snippet(writer: Writer, build: Any, sources: list[Machine]) -> None:
    """The site-wide provenance line, for the pages no view writes."""
    writer.text(PROVENANCE_SNIPPET, provenance(build, sources) + "\n")
