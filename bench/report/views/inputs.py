"""What every page is rendered from, computed once: the analysis, the advice, the machines.

A machine here is one fingerprint as the pages name it: its page key, a title safe for
headings, its hardware in words, and whether a newer step definition superseded it.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from bench import schema
from bench.report import fmt
from bench.report.analysis import Analysis, analyse
from bench.report.escape import Md, cat, slug
from bench.report.judge import advice, claims
from bench.report.load import Dataset
from bench.report.pages import Page, safe_title, verdict_badge
from bench.report.views.sentences import Regime, regimes
from bench.report.vocabulary import Verdict


@dataclass(frozen=True)
class Machine:
    """A fingerprint as the pages name it."""

    page: str  # the analysis' page key (untrusted text; a slug of it names the file)
    machine: str  # machine name from the data (untrusted)
    fingerprint_id: str
    title: str  # safe characters only: headings and navigation
    hardware: str  # GPU name, or CPU model (untrusted)
    #: (its step version, the machine's newest) when a newer step definition superseded it
    superseded: tuple[str, str] | None = None
    #: (its step version, the runner's) when it was measured only under an older definition
    outdated: tuple[str, str] | None = None


def link_labels(machines: Mapping[str, Machine]) -> dict[str, str]:
    """Link text for the machines measured under several fingerprints: name plus fingerprint.

    Without it the home page would list, say, two ``laptop`` rows that differ only in the torch
    version or the step definition behind them, and a reader could not tell which is which.
    """
    names = Counter(m.machine for m in machines.values())
    return {key: m.title for key, m in machines.items() if names[m.machine] > 1}


def machines_of(summary: pd.DataFrame) -> dict[str, Machine]:
    """Page key → :class:`Machine`, from the analysis' machine summary."""
    out: dict[str, Machine] = {}
    for row in summary.itertuples(index=False):
        hardware = row.gpu_name or row.cpu_model or "unknown hardware"
        if row.gpu_count and row.gpu_count > 1:
            hardware = f"{row.gpu_count} × {hardware}"
        out[str(row.page)] = Machine(
            page=str(row.page),
            machine=str(row.machine),
            fingerprint_id=str(row.fingerprint_id),
            title=safe_title(f"{row.machine} {str(row.fingerprint_id)[:8]}"),
            hardware=str(hardware),
            superseded=(fmt.integer(row.step_version), fmt.integer(row.newest_step_version))
            if row.superseded
            else None,
            outdated=(fmt.integer(row.step_version), str(schema.WORKLOAD_VERSION))
            if not row.superseded and row.step_version < schema.WORKLOAD_VERSION
            else None,
        )
    return out


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


def by_machine(
    frame: pd.DataFrame, machines: dict[str, Machine]
) -> list[tuple[Machine, pd.DataFrame]]:
    """``frame``'s rows per machine page, in page order."""
    if frame.empty:
        return []
    out = []
    for page, group in frame.groupby("page", sort=True):
        m = machines.get(str(page)) or Machine(
            str(page),
            str(group["machine"].iloc[0]),
            str(group["fingerprint_id"].iloc[0]),
            safe_title(page),
            "",
        )
        out.append((m, group.reset_index(drop=True)))
    return out


@dataclass
class Inputs:
    """Everything computed once and shared by the pages."""

    dataset: Dataset
    a: Analysis
    machines: dict[str, Machine]
    recs: list[advice.Recommendation]
    regimes: list[Regime]  # grouped once for every page
    decisions: pd.DataFrame
    status: dict[tuple[str, str], str]  # (fingerprint, cell id) → "2 ok, 1 crash"
    labels: dict[str, str]  # link_labels(machines)
    verdicts: list[claims.ClaimAnswer]  # every claim of claims.toml, judged from ``a``

    @functools.cached_property
    def superseded(self) -> dict[str, tuple[str, str]]:
        """Page key → (step, newest step) of the fingerprints a newer step definition replaced;
        the home page and the recommendation lists leave them out."""
        return {k: m.superseded for k, m in self.machines.items() if m.superseded}

    @functools.cached_property
    def current_regimes(self) -> list[Regime]:
        """``regimes`` without the superseded fingerprints: what the advice lists answer from."""
        return [g for g in self.regimes if g.main.page not in self.superseded]

    def current(self, frame: pd.DataFrame) -> pd.DataFrame:
        """``frame`` (keyed by ``page``) without the fingerprints a newer step definition
        superseded: the rows the home page and the compare page answer from."""
        if frame.empty or not self.superseded:
            return frame
        return frame.loc[~frame["page"].isin(list(self.superseded))]

    def outdated_links(self, p: Page) -> list[Md]:
        """Links to the fingerprints measured only under an older step definition (the pages
        answer from them, with a note saying so)."""
        return [
            cat(p.machine_link(m.title, page), f" (step {m.outdated[0]}; the runner's is "
                                                f"{m.outdated[1]})")
            for page, m in sorted(self.machines.items()) if m.outdated
        ]

    def superseded_links(self, p: Page) -> list[Md]:
        """Links to the superseded fingerprints, each with its step and the newer one, for the
        notes on the pages that leave them out."""
        return [
            cat(p.machine_link(self.machines[page].title, page), f" (step {old}; now {new})")
            for page, (old, new) in sorted(self.superseded.items())
        ]

    def page(self, here: str) -> Page:
        """A page whose machine links tell apart one machine's fingerprints."""
        return Page(here, self.labels)

    def verdict(self, r: Any) -> Md:
        """A comparison's verdict; an insufficient one says what happened to its replicates."""
        badge = verdict_badge(r.verdict)
        if r.verdict != Verdict.INSUFFICIENT:
            return badge
        base = self.status.get((r.fingerprint_id, r.baseline_cell_id), "no rows")
        var = self.status.get((r.fingerprint_id, r.variant_cell_id), "no rows")
        return cat(badge, f" ({r.baseline_value}: {base}; {r.variant_value}: {var})")


def compute(dataset: Dataset) -> Inputs:
    """The analysis and the advice of ``dataset``, with what the pages derive from them."""
    tables = analyse(dataset)
    recs = advice.recommend(tables)
    machines = machines_of(tables.machines)
    return Inputs(
        dataset=dataset,
        a=tables,
        machines=machines,
        recs=recs,
        regimes=regimes(recs),
        decisions=advice.decision_table(recs),
        status={
            (str(f), str(c)): str(t)
            for f, c, t in zip(
                tables.cells["fingerprint_id"].to_numpy(dtype=object),
                tables.cells["cell_id"].to_numpy(dtype=object),
                tables.cells["status_summary"].to_numpy(dtype=object),
            )
        },
        labels=link_labels(machines),
        verdicts=claims.evaluate(tables),
    )
