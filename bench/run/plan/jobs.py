"""The jobs of a profile, in the order they run: one child process each.

Scheduling: replicates run round-robin over every cell of the profile (replicate 0 of every
cell, then replicate 1, ...), so the arms of every comparison alternate A B A B and slow drift
(thermals, clocks, a neighbour's job) spreads over both arms instead of biasing one. The
bitwise re-run checks come last.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from bench.run.plan.matrix import Cell, Profile, Study
from bench.run.protocol import Probe

#: Why a job of a CUDA cell is skipped on a machine without CUDA: its row's reason.
NO_CUDA = "no-cuda"


@dataclass(frozen=True)
class Job:
    """One child process to run: a replicate (op=measure) or half of a repro check."""

    study: Study
    cell: Cell
    replicate: int
    op: str = "measure"

    @property
    def kind(self) -> str:
        return "repro" if self.op == "repro" else self.cell.kind

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.kind, self.cell.cell_id, self.replicate)

    @property
    def target(self) -> str:
        """What a fault spec or a hook matches: ``"<cell_id> <cell name> #r<replicate>"``."""
        return f"{self.cell.cell_id} {self.cell.name} #r{self.replicate}"


def plan(profile: Profile) -> list[Job]:
    """All jobs in run order: replicate rounds over every cell, then the repro checks.

    Round r runs replicate r of every cell of every study (cells shared by several studies
    are measured once). Rotating over the whole profile, not study by study, keeps the two
    arms of every comparison interleaved even when one arm is shared with an earlier study.
    """
    planned = profile.planned()
    rounds = max((s.settings.replicates for s, _ in planned), default=0)
    jobs = [Job(study, cell, r) for r in range(rounds) for study, cell in planned
            if r < study.settings.replicates]
    repro_seen: set[str] = set()
    for study in profile.studies:
        if study.settings.repro:  # a check belongs to the study asking for it, even for a
            for c in study.cells:  # cell an earlier study already measures
                if c.kind == "model" and c.cell_id not in repro_seen:
                    repro_seen.add(c.cell_id)
                    jobs.append(Job(study, c, 0, "repro"))
    return jobs


def skip_reason(cell: Cell, probe: Probe) -> str:
    """Why ``cell`` cannot run on the machine ``probe`` found (``NO_CUDA``), or ``""``: read
    from the cell's device, never from its name."""
    return NO_CUDA if cell.device == "cuda" and not probe.cuda else ""


def twins(jobs: Sequence[Job]) -> dict[str, str]:
    """Fresh cell id → the id of the same cell with a warm kernel cache, for the warm cells
    among ``jobs`` whose fresh twin is measured too."""
    cells = {j.cell.cell_id: j.cell for j in jobs if j.op == "measure"}
    out = {}
    for cell in cells.values():
        if cell.kernel_cache == "warm":
            fresh = replace(cell, kernel_cache="fresh").cell_id
            if fresh in cells:
                out[fresh] = cell.cell_id
    return out
