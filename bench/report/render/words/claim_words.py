"""A claim's verdict in words, its anchor, and the one-line forms the finding pages and the
home page show (the Claims page lays every claim out in full)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from bench.report.judge import ClaimAnswer
from bench.report.render.escape import Md, cat
from bench.report.render.markdown import Page
from bench.report.render.paths import CLAIMS_PAGE
from bench.report.vocabulary import ClaimVerdict, Stance

#: The admonition each verdict is shown in (the words are the verdict's own).
BOX = {
    ClaimVerdict.SUPPORTED: "success",
    ClaimVerdict.CONTRADICTED: "failure",
    ClaimVerdict.LARGER: "info",
    ClaimVerdict.SMALLER: "info",
    ClaimVerdict.DEPENDS: "warning",
    ClaimVerdict.CANNOT_TELL: "note",
    ClaimVerdict.NOT_MEASURED: "note",
}
STANCE_WORDS = {
    Stance.SUPPORTS: "supports it",
    Stance.CONTRADICTS: "contradicts it",
    Stance.LARGER: "measured larger",
    Stance.SMALLER: "measured smaller",
    Stance.CANNOT_TELL: Stance.CANNOT_TELL.value,
}


def title(v: ClaimAnswer) -> str:
    """The verdict's words, as a box's title."""
    return str(v.verdict).capitalize()


def anchor(v: ClaimAnswer) -> str:
    return f"claim-{v.claim.id}"



def claims_box(answers: Iterable[ClaimAnswer], p: Page) -> list[Md]:
    """One line per claim a finding page answers: the claim, its verdict, a link to it."""
    out = []
    for v in answers:
        out.append(cat(f"“{v.claim.claim}” ", Md("**"), title(v).lower(), Md("**"), ": ",
                       v.summary, " (", p.link("details", CLAIMS_PAGE, anchor(v)), ")"))
    return out



def verdict_line(v: ClaimAnswer | None, p: Page) -> Md:
    """One claim's computed summary with a link to it, for a page that states the claim's
    subject in its own words (empty when the claim is not in the claims file)."""
    if v is None:
        return Md("")
    return cat(Md("**"), title(v).lower(), Md("**"), ": ", v.summary, " (",
               p.link("details", CLAIMS_PAGE, anchor(v)), ")")



def counts_line(counts: Mapping[ClaimVerdict, int]) -> str:
    """``supported 3, contradicted 2, larger than claimed 1, …``: the verdicts that occur."""
    return ", ".join(f"{verdict} {n}" for verdict, n in counts.items() if n)
