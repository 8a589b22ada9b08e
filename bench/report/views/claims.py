"""The Claims page: every claim, its verdict, its findings and their rows.

Every verdict and figure comes from :mod:`bench.report.judge.claims`; this module only lays them
out, with the same row links as every other page. A claim's anchor is its id, so a discussion
can link to one verdict.
"""

from __future__ import annotations

import pandas as pd

from bench.report.escape import cat
from bench.report.judge import Answers, ClaimAnswer
from bench.report.paths import CLAIMS_PAGE, COMPARISONS
from bench.report.views.claim_words import BOX, STANCE_WORDS, anchor, counts_line, title
from bench.report.views.context import page
from bench.report.views.sentences import evidence_links
from bench.report.writer import Writer

#: Findings listed open per claim, then in a collapsed block; every finding, with its rows, is
#: in the claim's CSV (a large tree files thousands, too many for one page).
FINDINGS_SHOWN = 12
FINDINGS_COLLAPSED = 100


def claims_page(writer: Writer, answers: Answers) -> None:
    p = page(answers, CLAIMS_PAGE)
    entries = []
    for v in answers.claims.answers:
        kind, word = BOX[v.verdict], title(v)
        listed = [
            cat(p.machine_link(f.machine, f.page), f" ({STANCE_WORDS[f.stance]}): {f.text}",
                cat(" (", evidence_links(p, f.evidence), ")") if f.evidence else "")
            for f in v.findings[:FINDINGS_SHOWN + FINDINGS_COLLAPSED]
        ]
        csv_path = findings_csv(writer, v) if v.findings else ""
        entries.append({
            "anchor": anchor(v),
            "claim": v.claim.claim,
            "question": v.claim.question,
            "kind": kind,
            "word": word,
            "scope": v.scope,
            "summary": v.summary,
            "missing": v.missing,
            "findings": listed[:FINDINGS_SHOWN],
            "more": listed[FINDINGS_SHOWN:],
            "unlisted": len(v.findings) - len(listed),
            "csv": p.link(csv_path.rsplit("/", 1)[-1], csv_path) if csv_path else "",
        })
    writer.page(CLAIMS_PAGE, "claims.md.j2", p=p, entries=entries, n_claims=len(entries),
                counts_line=counts_line(answers.claims))


def findings_csv(writer: Writer, v: ClaimAnswer) -> str:
    """Every finding of one claim as a CSV (stance, machine, model, text, and its rows as
    ``machine-page#row-anchor``); returns its path."""
    path = f"{COMPARISONS}/claim-{v.claim.id}.csv"
    writer.csv(path, pd.DataFrame(
        [{"claim": v.claim.id, "stance": f.stance, "machine": f.machine, "page": f.page,
          "model": f.model, "finding": f.text,
          "rows": " ".join(f"{page}#{anchor}" for page, anchor in f.evidence)}
         for f in v.findings],
        columns=["claim", "stance", "machine", "page", "model", "finding", "rows"]))
    return path


