"""What every view formats with: a page's link kit, a machine's section heading, and a
comparison's verdict in words, from the answers."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, Protocol

from bench import schema
from bench.report import fmt
from bench.report.judge import Machine
from bench.report.render.buildinfo import BuildInfo
from bench.report.render.escape import Md, cat, md, slug
from bench.report.render.markdown import Page, verdict_badge
from bench.report.vocabulary import Verdict


class Linking(Protocol):
    """What these helpers read of what every page shares (``questions.answers.Shared``):
    link text per machine page, and each cell's status in words."""

    @property
    def labels(self) -> dict[str, str]: ...

    @property
    def status(self) -> dict[tuple[str, str], str]: ...


def page(answers: Linking, here: str) -> Page:
    """A page whose machine links tell apart one machine's fingerprints."""
    return Page(here, answers.labels)


def section_anchor(prefix: str, m: Machine) -> str:
    """The id of a page's section about one machine, for a heading's ``{: #id }``: a slug with
    no ``_``, which Markdown would read as emphasis before the id is taken."""
    return f"{prefix}-{slug(m.page).replace('_', '-')}"


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


def verdict(answers: Linking, r: Any) -> Md:
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


def data_line(sources: Sequence[Machine]) -> str:
    """``Data: nvidia-h200 run of 2026-11-30 (torch 2.11.0, cuDNN 9.19.0); …``: the runs a
    page's figures come from."""
    if not sources:
        return "This page cites no measurement."
    parts = []
    for m in sources:
        runs = "run" if m.runs == 1 else f"{m.runs} runs"
        soft = f"torch {m.torch}" + (f", cuDNN {fmt.cudnn_version(m.cudnn)}" if m.cudnn else "")
        parts.append(f"{m.title} {runs} of {m.days} ({soft})")
    return "Data: " + "; ".join(parts) + "."


def built_line(build: BuildInfo) -> str:
    """``Built from commit abc1234 on 2026-12-01.``, saying so where the checkout had changes
    no commit holds, or where there was no commit to name."""
    if not build.commit:
        return f"Built on {build.day} from a tree outside version control."
    changed = ", with uncommitted changes," if build.changed else ""
    return f"Built from commit {build.commit}{changed} on {build.day}."


def provenance(build: BuildInfo, sources: Sequence[Machine]) -> Md:
    """The line every page ends with: where its figures come from and what built it."""
    return Md(f'<p class="tk-provenance"><small>{md(data_line(sources))} '
              f'{md(built_line(build))}</small></p>')


def _refresh(m: Machine) -> str:
    """The command that measures ``m`` again: its profile's run, where env.json names a
    profile that is a plain name (it is data, and goes into a code span as it is)."""
    plain = re.fullmatch(r"[A-Za-z0-9._/-]{1,64}", m.profile or "")
    return "python -m bench run" + (f" --profile {m.profile}" if plain else "")


#: A banner names at most this many fingerprints and counts the rest: on a tree of many
#: machines, a hundred names would fill the first screen before the page's answer.
NAMED = 3


def _named(items: Sequence[str], noun: str) -> str:
    """The first ``NAMED`` of ``items``, then how many more (the Data page lists every run)."""
    rest = len(items) - NAMED
    more = (f"; and {fmt.count(rest, f'more {noun}')} (the Data page lists every run)"
            if rest > 0 else "")
    return "; ".join(items[:NAMED]) + more


def _runs(machines: Sequence[Machine]) -> str:
    return _named([f"{m.title}: {'one run' if m.runs == 1 else f'{m.runs} runs'} of "
                   f"{m.days} (torch {m.torch})" for m in machines], "fingerprint")


def changes(old: int, new: int) -> str:
    """What the timed step's definitions after ``old`` up to ``new`` changed, in one clause."""
    return "; ".join(schema.WORKLOAD_CHANGES[v] for v in range(old + 1, new + 1)
                     if v in schema.WORKLOAD_CHANGES)


def banner(sources: Sequence[Machine]) -> list[dict[str, Any]]:
    """One older-run warning per step definition that cited fingerprints were measured under
    (older than the runner's): each run's date and torch, what changed since (said once), and
    the commands that refresh them; then one note naming the superseded fingerprints a page
    still cites (their machine has a newer run, which the topic pages use)."""
    by_step: dict[int, list[Machine]] = {}
    for m in sources:
        if m.outdated:
            by_step.setdefault(int(m.outdated[0]), []).append(m)
    out = []
    new = int(schema.WORKLOAD_VERSION)
    for old, machines in sorted(by_step.items()):
        commands = sorted({_refresh(m) for m in machines})
        out.append({
            "title": "Older run" + ("s" if len(machines) > 1 else ""),
            "text": f"These figures were measured under step definition {old} of the timed "
                    f"step; the runner's is {new}. {_runs(machines)}. Since then "
                    f"{changes(old, new)}.",
            "command": Md(", ".join(f"`{c}`" for c in commands)),
            "where": "on that machine" if len(machines) == 1 else "on each machine",
        })
    superseded = [m for m in sources if m.superseded]
    if superseded:
        out.append({"title": "Superseded runs", "command": "", "where": "",
                    "text": f"Some rows here were measured under an older step definition on "
                            f"a machine that has since been measured again: "
                            f"{_superseded(superseded)}. The topic pages use the newer "
                            f"runs only."})
    return out


def _superseded(machines: Sequence[Machine]) -> str:
    return _named([f"{_runs([m])}, step definition {m.superseded[0]}, superseded by step "
                   f"{m.superseded[1]}" for m in machines if m.superseded], "fingerprint")
