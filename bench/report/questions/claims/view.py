"""The Claims page: every claim, its verdict, its findings and their rows.

Every verdict and figure comes from :mod:`bench.report.judge.claims`; this module only lays them
out, with the same row links as every other page. A claim's anchor is its id, so a discussion
can link to one verdict.
"""

from __future__ import annotations

from bench.report import fmt
from bench.report.judge import ClaimAnswer, Table
from bench.report.questions.answers import Shared
from bench.report.questions.claims.model import ClaimsPage
from bench.report.render.buildinfo import BuildInfo
from bench.report.render.downloads import claims_csv
from bench.report.render.escape import Md, cat
from bench.report.render.markdown import Page
from bench.report.render.paths import CLAIMS_PAGE, COMPARISONS
from bench.report.render.words.answers import built_words, cite_url, software
from bench.report.render.words.claim_words import BOX, STANCE_WORDS, anchor, counts_line, title
from bench.report.render.words.context import banner, page, provenance
from bench.report.render.words.sentences import evidence_links
from bench.report.render.writer import Writer
from bench.report.vocabulary import ClaimVerdict

#: The verdicts a Cite line would only repeat: nothing was measured that decides them.
UNCITED = frozenset({ClaimVerdict.NOT_MEASURED, ClaimVerdict.CANNOT_TELL})
#: Findings listed open per claim, then in a collapsed block; every finding, with its rows, is
#: in the claim's CSV (a large tree files thousands, too many for one page).
FINDINGS_SHOWN = 12
FINDINGS_COLLAPSED = 100


def claims_page(writer: Writer, model: ClaimsPage, shared: Shared, build: BuildInfo) -> None:
    p = page(shared, CLAIMS_PAGE)
    entries = []
    for v in model.answers:
        kind, word = BOX[v.verdict], title(v)
        listed = [
            cat(p.machine_link(f.machine, f.page), f" ({STANCE_WORDS[f.stance]}): {f.text}",
                cat(" (", evidence_links(p, f.evidence), ")") if f.evidence else "")
            for f in v.findings[:FINDINGS_SHOWN + FINDINGS_COLLAPSED]
        ]
        csv_path = findings_csv(writer, v) if v.findings else ""
        entries.append({
            # a verdict that rests on no measurement has nothing to cite
            "cite": cite_line(p, v, shared, build) if v.verdict not in UNCITED else "",
            "anchor": anchor(v),
            "claim": v.claim.claim,
            "question": v.claim.question,
            "kind": kind,
            "word": word,
            "scope": v.scope,
            "summary": v.summary[:1].upper() + v.summary[1:],
            "missing": v.missing,
            "findings": listed[:FINDINGS_SHOWN],
            "more": listed[FINDINGS_SHOWN:],
            "unlisted": len(v.findings) - len(listed),
            "csv": p.link(csv_path.rsplit("/", 1)[-1], csv_path) if csv_path else "",
        })
    writer.page(CLAIMS_PAGE, "claims.md.j2", p=p, entries=entries, n_claims=len(entries),
                counts_line=counts_line(model.counts),
                banners=banner(model.sources),
                provenance=provenance(build, model.sources),
                downloads=[claims_csv(writer, model.answers)])


def cite_line(p: Page, v: ClaimAnswer, shared: Shared, build: BuildInfo) -> Md:
    """A claim's verdict as one sentence to paste: its scope, the machines' models and
    versions, the data's dates, the commit that built the page, and its permalink under the
    site's address."""
    machines = [shared.machines[k] for k in sorted({f.page for f in v.findings})
                if k in shared.machines]
    days = sorted({d for m in machines for d in (m.first_day, m.last_day) if d})
    when = (f", data of {days[0]}" if len(days) == 1 else
            f", data of {days[0]} to {days[-1]}" if days else "")
    on = "; ".join(dict.fromkeys(f"{m.machine} ({software(m)})" for m in machines))
    said = f"‘{v.claim.claim}’: {v.verdict}" + (
        f", from {fmt.count(len(v.findings), 'finding')} on {on}" if on else "")
    url = cite_url(build, CLAIMS_PAGE, anchor(v))
    return cat(Md("**Cite:** "), Md(f"[permalink]({url})"),
               f" · “{said}; torch-knobs{when}, {built_words(build)}.”")


def findings_csv(writer: Writer, v: ClaimAnswer) -> str:
    """Every finding of one claim as a CSV (stance, machine, model, text, and its rows as
    ``machine-page#row-anchor``); returns its path."""
    path = f"{COMPARISONS}/claim-{v.claim.id}.csv"
    writer.csv(path, Table(
        ("claim", "stance", "machine", "page", "model", "finding", "rows"),
        tuple((v.claim.id, str(f.stance), f.machine, f.page, f.model, f.text,
               " ".join(f"{page}#{anchor}" for page, anchor in f.evidence))
              for f in v.findings)))
    return path


