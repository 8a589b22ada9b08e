"""The Claims page, and the short box on each finding page with the claims it answers.

Every verdict and figure comes from :mod:`bench.report.judge.claims`; this module only lays them
out, with the same row links as every other page. A claim's anchor is its id, so a discussion
can link to one verdict.
"""

from __future__ import annotations

import pandas as pd

from bench.report.escape import Md, cat
from bench.report.judge import claims
from bench.report.pages import Page
from bench.report.paths import CLAIMS_PAGE, COMPARISONS
from bench.report.views.inputs import Inputs
from bench.report.views.sentences import evidence_links
from bench.report.vocabulary import ClaimVerdict, Stance
from bench.report.writer import Writer

#: The admonition each verdict is shown in, and the words it opens with.
BOX = {
    ClaimVerdict.SUPPORTED: ("success", "Supported"),
    ClaimVerdict.CONTRADICTED: ("failure", "Contradicted"),
    ClaimVerdict.DEPENDS: ("warning", "It depends"),
    ClaimVerdict.NOT_MEASURED: ("note", "Not measured here"),
}
STANCE_WORDS = {
    Stance.SUPPORTS: "supports it",
    Stance.CONTRADICTS: "contradicts it",
    Stance.CANNOT_TELL: Stance.CANNOT_TELL.value,
}
#: Findings listed open per claim, then in a collapsed block; every finding, with its rows, is
#: in the claim's CSV (a large tree files thousands, too many for one page).
FINDINGS_SHOWN = 12
FINDINGS_COLLAPSED = 100


def title(v: claims.ClaimAnswer) -> str:
    """The verdict's words; "not measured here" over findings says they were measured but
    could not tell, so it does not read as if nothing ran."""
    word = BOX[v.verdict][1]
    if v.verdict == ClaimVerdict.NOT_MEASURED and v.findings:
        return f"{word}: measured, but too few ok replicates or too wide an interval to tell"
    return word


def anchor(v: claims.ClaimAnswer) -> str:
    return f"claim-{v.claim.id}"


def claims_page(writer: Writer, data: Inputs) -> None:
    p = data.page(CLAIMS_PAGE)
    entries = []
    for v in data.verdicts:
        kind, word = BOX[v.verdict][0], title(v)
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
                counts_line=counts_line(data))


def findings_csv(writer: Writer, v: claims.ClaimAnswer) -> str:
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


def claims_box(data: Inputs, page: str, p: Page) -> list[Md]:
    """One line per claim a finding page answers: the claim, its verdict, a link to it."""
    out = []
    for v in data.verdicts:
        if page not in v.claim.pages:
            continue
        out.append(cat(f"“{v.claim.claim}” ", Md("**"), title(v).lower(), Md("**"), ": ",
                       v.summary, " (", p.link("details", CLAIMS_PAGE, anchor(v)), ")"))
    return out


def verdict_line(data: Inputs, claim_id: str, p: Page) -> Md:
    """One claim's computed summary with a link to it, for a page that states the claim's
    subject in its own words (empty when the claim is not in the claims file)."""
    for v in data.verdicts:
        if v.claim.id == claim_id:
            return cat(Md("**"), title(v).lower(), Md("**"), ": ", v.summary, " (",
                       p.link("details", CLAIMS_PAGE, anchor(v)), ")")
    return Md("")


def counts_line(data: Inputs) -> str:
    """``supported 3, contradicted 2, it depends 1, not measured here 4``."""
    return ", ".join(f"{word.lower()} {sum(v.verdict == verdict for v in data.verdicts)}"
                     for verdict, (_, word) in BOX.items())
