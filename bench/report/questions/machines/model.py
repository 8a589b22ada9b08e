"""The machine pages, judged: which rows each machine's page lists, its runs and their
sittings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from bench.report.analysis.feeding import as_cells
from bench.report.input.load import RunFiles, SittingRecord
from bench.report.judge.common import CONFIG_AXES
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine
from bench.schema import Status

#: The order a machine page lists its cells in.
CELL_ORDER = ["kind", *CONFIG_AXES, "cell_id"]


@dataclass(frozen=True)
class Sitting:
    """One sitting of a run (``bench run`` until it ended, then each ``--resume``): when its
    rows started and ended (UTC, ISO 8601), how many it wrote, and the measuring code it ran
    where env.json records it (``bench.run.store.source``)."""

    number: int
    started: str
    ended: str
    rows: int
    code: str = ""  # "": not recorded (a sitting of a run made before sittings were)
    commit: str = ""


@dataclass(frozen=True)
class RunRows:
    """One run folder of a machine, and how many of its rows (and ok ones) the site counts."""

    run: RunFiles
    n_rows: int
    n_ok: int
    sittings: tuple[Sitting, ...] = ()  # where its rows say (schema 5 on)


def sittings_of(rows: pd.DataFrame, records: Sequence[SittingRecord] = ()
                ) -> tuple[Sitting, ...]:
    """One run folder's sittings, from its rows' ``sitting`` column (rows without one, of an
    older schema, name none), each with its code from env.json's ``records``."""
    if "sitting" not in rows.columns:
        return ()
    numbers = pd.to_numeric(rows["sitting"], errors="coerce")
    found = rows.assign(_n=numbers).dropna(subset=["_n"])
    ran = {c.number: c for c in records}
    out = []
    for n, g in found.groupby("_n", sort=True):
        code = ran.get(int(n))
        out.append(Sitting(int(n), str(g["started_at"].astype(str).min()),
                           str(g["ended_at"].astype(str).max()), len(g),
                           code.code if code else "", code.commit if code else ""))
    return tuple(out)


@dataclass(frozen=True)
class MachinePage:
    machine: Machine
    summary: Any  # its row of the analysis' machine summary
    env: Mapping[str, Any] | None  # its env.json
    cells: pd.DataFrame = field(repr=False)  # every cell, in page order
    failures: pd.DataFrame = field(repr=False)  # every replicate that did not end ok
    checks: pd.DataFrame = field(repr=False)  # its re-run checks
    drifting: pd.DataFrame = field(repr=False)  # cells with drifting ok replicates
    throttled: pd.DataFrame = field(repr=False)  # cells with throttled ok replicates
    ceilings: pd.DataFrame = field(repr=False)
    runs: tuple[RunRows, ...]
    #: each judged sitting's pace against the other sittings of its run (analysis.sittings)
    paces: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)
    #: one sitting's replicates of a cell, left out one by one
    left_cells: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)


@dataclass(frozen=True)
class MachineGroup:
    """One machine's page: every fingerprint it was measured under, the current ones first
    (a newer step definition supersedes an older one), each a section."""

    machine: str  # its name (untrusted)
    fingerprints: tuple[MachinePage, ...]

    @property
    def key(self) -> str:
        """The page key of its first fingerprint (``paths.machine_file`` names the page)."""
        return self.fingerprints[0].machine.page


@dataclass(frozen=True)
class MachinePages:
    pages: tuple[MachinePage, ...]  # one per fingerprint, in the machine summary's order
    groups: tuple[MachineGroup, ...]  # one per machine, by name
    largest_first: tuple[str, ...]  # page keys by number of cells, the largest first


def machine_cells(facts: Facts, fingerprint: str) -> pd.DataFrame:
    """Every cell of one fingerprint, its input pipelines' too (``analysis.feeding``)."""
    cells = facts.analysis.cells
    cells = cells.loc[cells["fingerprint_id"] == fingerprint]
    pipes = facts.analysis.pipelines
    pipes = pipes.loc[pipes["fingerprint_id"] == fingerprint]
    if len(pipes):
        cells = pd.concat([cells, as_cells(pipes, cells.columns)], ignore_index=True)
    return cells.sort_values(CELL_ORDER, kind="stable", na_position="first")


def _runs(facts: Facts, fingerprint: str) -> tuple[RunRows, ...]:
    # per run folder (its results.csv, the rows' ``source``), not per run id: two folders can
    # share a run id (a shard resubmitted to another kind of node)
    results = facts.analysis.source.results
    rows = results["source"].value_counts()
    ok = results.loc[results["status"] == Status.OK, "source"].value_counts()
    mine = [r for r in facts.analysis.source.runs if str(r.fingerprint_id) == fingerprint]
    return tuple(RunRows(r, int(rows.get(r.results.as_posix(), 0)),
                         int(ok.get(r.results.as_posix(), 0)),
                         sittings_of(results.loc[results["source"] == r.results.as_posix()],
                                     r.records))
                 for r in sorted(mine, key=lambda r: str(r.results)))


def machine_page(facts: Facts, row: Any) -> MachinePage:
    a = facts.analysis
    m = facts.machines[str(row.page)]
    fp = m.fingerprint_id
    cells = machine_cells(facts, fp)
    results = a.source.results
    failed = results.loc[(results["fingerprint_id"] == fp) & (results["status"] != Status.OK)]
    return MachinePage(
        machine=m, summary=row, env=a.source.envs.get(fp), cells=cells,
        failures=failed.sort_values(["kind", "cell_name", "replicate", "run_id"], kind="stable"),
        checks=a.repro.loc[a.repro["fingerprint_id"] == fp],
        drifting=cells.loc[cells["n_drift"] > 0],
        throttled=cells.loc[cells["n_throttled"] > 0],
        ceilings=a.ceilings.loc[a.ceilings["fingerprint_id"] == fp],
        runs=_runs(facts, fp),
        paces=a.sittings.loc[a.sittings["fingerprint_id"] == fp],
        left_cells=a.sitting_cells.loc[a.sitting_cells["fingerprint_id"] == fp],
    )


def machine_pages(facts: Facts) -> MachinePages:
    summary = facts.analysis.machines
    largest = summary.sort_values("n_cells", ascending=False, kind="stable")
    pages = tuple(machine_page(facts, row) for row in summary.itertuples(index=False))
    names: dict[str, list[MachinePage]] = {}
    for mp in pages:
        names.setdefault(mp.machine.machine, []).append(mp)
    groups = tuple(
        MachineGroup(name, tuple(sorted(found, key=lambda mp: (bool(mp.machine.superseded),
                                                               mp.machine.page))))
        for name, found in sorted(names.items()))
    return MachinePages(pages, groups, tuple(str(p) for p in largest["page"]))
