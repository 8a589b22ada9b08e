"""The machine pages, judged: one page per hardware model, a section per fingerprint, which
rows each lists, its runs and their sittings, and the spread between the model's physical
machines, each as typed rows the view formats."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd

from bench.report.analysis.feeding import as_cells
from bench.report.analysis.machines import MachineAgreement, cell_spread, machine_figures
from bench.report.input.load import RunFiles, SittingRecord
from bench.report.judge.common import CONFIG_AXES, sorted_rows
from bench.report.judge.facts import Facts
from bench.report.judge.machines import EVERY_ONE_UP_TO, Machine, model_trusts
from bench.report.judge.rows import typed_row, typed_rows
from bench.report.judge.trust import ModelTrust
from bench.report.questions.machines.rows import (
    CellSpread,
    EnvListing,
    FailedReplicate,
    JudgedSitting,
    LeftOutCell,
    MachineCell,
    MachineSummary,
    MeasuredCeiling,
    ReproCheck,
    environment,
)
from bench.report.render.paths import model_slug, use_models
from bench.schema import Status
from bench.sittings import Agreement

__all__ = [
    "CELL_ORDER", "CellSpread", "EnvListing", "FailedReplicate", "JudgedSitting", "LeftOutCell",
    "MachineAgreement", "MachineCell",
    "MachineGroup", "MachinePage", "MachinePages", "MachineSummary", "MeasuredCeiling",
    "ReproCheck", "RunRows", "Sitting", "machine_cells", "machine_pages",
    "sittings_of",
]  # fmt: skip


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
    numbers = pd.to_numeric(rows["sitting"], errors="coerce").to_numpy(
        dtype=np.float64, na_value=np.nan)
    # a row at a time: a run folder has tens of rows, where a groupby per folder cost more
    spans: dict[int, tuple[str, str, int]] = {}
    for n, start, end in zip(numbers.tolist(), rows["started_at"].astype(str).tolist(),
                             rows["ended_at"].astype(str).tolist(), strict=True):
        if n != n:  # no sitting: an older schema's row
            continue
        first, last, count = spans.get(int(n), (start, end, 0))
        spans[int(n)] = (min(first, start), max(last, end), count + 1)
    ran = {c.number: c for c in records}
    out = []
    for n, (first, last, count) in sorted(spans.items()):
        code = ran.get(n)
        out.append(Sitting(n, first, last, count, code.code if code else "",
                           code.commit if code else ""))
    return tuple(out)


@dataclass(frozen=True)
class MachinePage:
    machine: Machine
    summary: MachineSummary  # its row of the analysis' machine summary
    env: EnvListing  # its env.json, as the page lists it
    cells: tuple[MachineCell, ...] = field(repr=False)  # every cell, in page order
    failures: tuple[FailedReplicate, ...] = field(repr=False)  # every replicate not ended ok
    checks: tuple[ReproCheck, ...] = field(repr=False)  # its re-run checks
    drifting: tuple[MachineCell, ...] = field(repr=False)  # cells with drifting ok replicates
    throttled: tuple[MachineCell, ...] = field(repr=False)  # cells with throttled ok replicates
    ceilings: tuple[MeasuredCeiling, ...] = field(repr=False)
    runs: tuple[RunRows, ...]
    #: each judged sitting's pace against the other sittings of its run (analysis.sittings)
    paces: tuple[JudgedSitting, ...] = field(repr=False, default=())
    #: the sittings left out of every verdict (their pace beyond the limit), of ``paces``
    disagreeing: tuple[JudgedSitting, ...] = field(repr=False, default=())
    #: one sitting's replicates of a cell, left out one by one
    left_cells: tuple[LeftOutCell, ...] = field(repr=False, default=())
    #: its model's cells that two or more physical machines measured: the spread between them
    spread: tuple[CellSpread, ...] = field(repr=False, default=())


#: How many fingerprints of a model of many the Machines index names (a model of 25 would
#: otherwise fill the index with one cell); the banners name as many.
INDEX_NAMED = 3


@dataclass(frozen=True)
class MachineGroup:
    """One hardware model's page: every fingerprint its machines were measured under, the
    current ones first (a newer step definition supersedes an older one), each a section,
    and its physical machines held against each other."""

    model: str  # the hardware model (untrusted)
    fingerprints: tuple[MachinePage, ...]
    judged: ModelTrust  # its machines, which disagree, whether it is reproduced

    @property
    def key(self) -> str:
        """The page key of its first fingerprint (``paths.machine_file`` names the page)."""
        return self.fingerprints[0].machine.page

    @property
    def machines(self) -> tuple[MachineAgreement, ...]:
        return self.judged.machines

    @property
    def indexed(self) -> tuple[MachinePage, ...]:
        """The fingerprints the Machines index names: every one up to ``EVERY_ONE_UP_TO``,
        past it the first ``INDEX_NAMED`` (its page has each as a section)."""
        if len(self.fingerprints) <= EVERY_ONE_UP_TO:
            return self.fingerprints
        return self.fingerprints[:INDEX_NAMED]


@dataclass(frozen=True)
class MachinePages:
    pages: tuple[MachinePage, ...]  # one per fingerprint, in the machine summary's order
    groups: tuple[MachineGroup, ...]  # one per machine, by name
    largest_first: tuple[str, ...]  # page keys by number of cells, the largest first


Rows = Callable[[pd.DataFrame, str], pd.DataFrame]


def _masked(frame: pd.DataFrame, fingerprint: str) -> pd.DataFrame:
    return frame.loc[frame["fingerprint_id"] == fingerprint]


def splitter() -> Rows:
    """``rows(table, fingerprint)``: a table's rows of one fingerprint, each table split once
    (a mask over every row, per machine page, cost seconds on a tree of many machines)."""
    split: dict[int, dict[str, pd.DataFrame]] = {}

    def rows(frame: pd.DataFrame, fingerprint: str) -> pd.DataFrame:
        if id(frame) not in split:
            split[id(frame)] = ({str(k): g for k, g in frame.groupby("fingerprint_id",
                                                                    sort=False)}
                                if len(frame) else {})
        return split[id(frame)].get(fingerprint, frame.iloc[:0])
    return rows


def machine_cells(facts: Facts, fingerprint: str, rows: Rows = _masked) -> pd.DataFrame:
    """Every cell of one fingerprint, its input pipelines' too (``analysis.feeding``)."""
    cells = rows(facts.analysis.cells, fingerprint)
    pipes = rows(facts.analysis.pipelines, fingerprint)
    if len(pipes):
        cells = pd.concat([cells, as_cells(pipes, cells.columns)], ignore_index=True)
    return sorted_rows(cells, CELL_ORDER)


def _runs(facts: Facts, fingerprint: str, rows: Rows) -> tuple[RunRows, ...]:
    # per run folder (its results.csv, the rows' ``source``), not per run id: two folders can
    # share a run id (a shard resubmitted to another kind of node)
    results = rows(facts.analysis.source.results, fingerprint)
    by_source = {str(k): g for k, g in results.groupby("source", sort=False)}
    mine = [r for r in facts.analysis.source.runs if str(r.fingerprint_id) == fingerprint]
    out = []
    for r in sorted(mine, key=lambda r: str(r.results)):
        folder = by_source.get(r.results.as_posix(), results.iloc[:0])
        ok = int((folder["status"] == Status.OK).sum())
        out.append(RunRows(r, len(folder), ok, sittings_of(folder, r.records)))
    return tuple(out)


def _checks(repro: pd.DataFrame, cells: Sequence[MachineCell]) -> tuple[ReproCheck, ...]:
    """Its re-run checks, each saying whether its timed cell is listed on the page."""
    anchors = {c.anchor for c in cells}
    return tuple(replace(r, timed=r.cell_anchor in anchors)
                 for r in typed_rows(ReproCheck, repro))


def machine_page(facts: Facts, row: object, spread: tuple[CellSpread, ...] = (),
                 rows: Rows = _masked) -> MachinePage:
    a = facts.analysis
    summary = typed_row(MachineSummary, row)
    m = facts.machines[summary.page]
    fp = m.fingerprint_id
    cells = typed_rows(MachineCell, machine_cells(facts, fp, rows))
    results = rows(a.source.results, fp)
    failed = results.loc[results["status"] != Status.OK]
    paces = typed_rows(JudgedSitting, rows(a.sittings, fp))
    return MachinePage(
        machine=m, summary=summary, env=environment(a.source.envs.get(fp)), cells=cells,
        failures=typed_rows(FailedReplicate, failed.sort_values(
            ["kind", "cell_name", "replicate", "run_id"], kind="stable")),
        checks=_checks(rows(a.repro, fp), cells),
        drifting=tuple(c for c in cells if c.n_drift > 0),
        throttled=tuple(c for c in cells if c.n_throttled > 0),
        ceilings=typed_rows(MeasuredCeiling, rows(a.ceilings, fp)),
        runs=_runs(facts, fp, rows),
        paces=paces,
        disagreeing=tuple(r for r in paces if r.agreement == Agreement.DISAGREES),
        left_cells=typed_rows(LeftOutCell, rows(a.sitting_cells, fp)),
        spread=spread,
    )


def model_slugs(models: Sequence[str]) -> dict[str, str]:
    """Model → its page's slug (``paths.model_slug``), told apart by a hash of the model
    where two would share one."""
    found: dict[str, list[str]] = {}
    for model in sorted(set(models)):
        found.setdefault(model_slug(model), []).append(model)
    return {model: base if len(same) == 1 else model_slug(f"{base} {model_slug(repr(model))}")
            for base, same in found.items() for model in same}


def link_models(facts: Facts) -> None:
    """Where ``paths.machine_file`` links each fingerprint of this build: its hardware model's
    page. State of the process (``paths.use_models``), so it is set in the one that renders."""
    summary = facts.analysis.machines
    slugs = model_slugs([str(m) for m in summary["model"]])
    use_models({str(page): slugs[str(model)]
                for page, model in zip(summary["page"], summary["model"])})


def machine_pages(facts: Facts) -> MachinePages:
    summary = facts.analysis.machines
    link_models(facts)
    spread = cell_spread(machine_figures(facts.analysis.source))
    by_model = {str(model): typed_rows(CellSpread, group)
                for model, group in spread.groupby("model", sort=False)}
    largest = summary.sort_values("n_cells", ascending=False, kind="stable")
    rows = splitter()
    pages = tuple(machine_page(facts, row, by_model.get(str(row.model), ()), rows)
                  for row in summary.itertuples(index=False))
    models: dict[str, list[MachinePage]] = {}
    for mp in pages:
        models.setdefault(mp.machine.model, []).append(mp)
    judged = model_trusts(summary)
    groups = tuple(
        MachineGroup(model, tuple(sorted(found, key=lambda mp: (bool(mp.machine.superseded),
                                                                mp.machine.page))),
                     judged[model])
        for model, found in sorted(models.items()))
    return MachinePages(pages, groups, tuple(str(p) for p in largest["page"]))
