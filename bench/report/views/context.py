"""What every view formats with: a page's link kit, a machine's section heading, and a
comparison's verdict in words, from the answers."""

from __future__ import annotations

from typing import Any

from bench.report.escape import Md, cat, slug
from bench.report.judge import Answers, Machine
from bench.report.pages import Page, verdict_badge
from bench.report.vocabulary import Verdict


def page(answers: Answers, here: str) -> Page:
    """A page whose machine links tell apart one machine's fingerprints."""
    return Page(here, answers.labels)


def machine_heading(m: Machine) -> str:
    """A section heading for one machine: a slug, so it is safe in the table of contents."""
    return slug(m.page)


def machine_context(p: Page, m: Machine) -> dict[str, Any]:
    """What a page's section about one machine starts with (``_macros.md.j2``)."""
    return {
        "heading": machine_heading(m),
        "link": p.machine_link(m.machine, m.page),
        "hardware": m.hardware,
        "superseded": m.superseded,
    }


def verdict(answers: Answers, r: Any) -> Md:
    """A comparison's verdict; an insufficient one says what happened to its replicates."""
    badge = verdict_badge(r.verdict)
    if r.verdict != Verdict.INSUFFICIENT:
        return badge
    base = answers.status.get((r.fingerprint_id, r.baseline_cell_id), "no rows")
    var = answers.status.get((r.fingerprint_id, r.variant_cell_id), "no rows")
    return cat(badge, f" ({r.baseline_value}: {base}; {r.variant_value}: {var})")


def outdated_links(p: Page, machines: tuple[Machine, ...]) -> list[Md]:
    """Links to the fingerprints measured only under an older step definition."""
    return [cat(p.machine_link(m.title, m.page),
                f" (step {m.outdated[0]}; the runner's is {m.outdated[1]})")
            for m in machines if m.outdated]


def superseded_links(p: Page, machines: tuple[Machine, ...]) -> list[Md]:
    """Links to the superseded fingerprints, each with its step and the newer one."""
    return [cat(p.machine_link(m.title, m.page), f" (step {m.superseded[0]}; now "
                                                 f"{m.superseded[1]})")
            for m in machines if m.superseded]
