"""The machine pages, the Compare-machines page and the Data page, judged: which rows each
machine's page lists, which machines and workloads are compared side by side, and what each
price buys."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from bench import schema
from bench.report import prices as price_table
from bench.report.analysis.cells import page_slug
from bench.report.analysis.feeding import as_cells
from bench.report.analysis.intervals import ratio_ci
from bench.report.analysis.machines import COMPILED_WORKLOAD_KEY, best_throughput
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine
from bench.report.judge.pages.common import CONFIG_AXES
from bench.report.load import Dataset, RunFiles, SittingRecord

#: The order a machine page lists its cells in.
CELL_ORDER = ["kind", *CONFIG_AXES, "cell_id"]
#: What the Compare page's throughput table compares across machines: a workload, eager or
#: compiled.
WORKLOAD_KEY = COMPILED_WORKLOAD_KEY
#: Workloads the throughput table lists at most: those measured on the most machines.
SHOWN_WORKLOADS = 100


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
    ok = results.loc[results["status"] == "ok", "source"].value_counts()
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
    failed = results.loc[(results["fingerprint_id"] == fp) & (results["status"] != "ok")]
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


@dataclass(frozen=True)
class Priced:
    """What the prices file given to the build buys."""

    rows: pd.DataFrame = field(repr=False)  # every machine's best throughput, priced
    unmatched: tuple[str, ...]  # keys of the file that name no machine


@dataclass(frozen=True)
class Lead:
    """A workload measured on several machines: the fastest machine's best throughput over
    the slowest's, with a bootstrap interval over both cells' replicates."""

    workload: Any  # the workload's key values (a row of ``workloads``)
    fast: Any  # the fastest machine's best cell (a row of ``best``)
    slow: Any
    ratio: float
    ci_low: float
    ci_high: float
    #: the pages of the two whose GPU did not give this figure: a GPU box's best here is its
    #: host CPU, and must not be quoted under the GPU's name
    host_cpu: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ComparePage:
    summary: pd.DataFrame = field(repr=False)  # the current fingerprints' summary rows
    machines: tuple[Machine, ...]  # in the same order
    ceilings: pd.DataFrame = field(repr=False)
    best: pd.DataFrame = field(repr=False)  # every machine's best throughput per workload
    workloads: pd.DataFrame = field(repr=False)  # those the table lists, in workload order
    total_workloads: int
    priced: Priced | None  # None: no prices file was given
    leads: tuple[Lead, ...]  # the first workloads measured on the most machines
    superseded: tuple[Machine, ...]
    outdated: tuple[Machine, ...]


def rank(column: pd.Series) -> pd.Series:
    """A sort key for ``WORKLOAD_KEY``'s columns: eager before the compile modes, each in the
    schema's order (and dynamic= likewise), every other column as it is."""
    order = {"compile": schema.COMPILE_MODES, "compile_dynamic": schema.COMPILE_DYNAMIC}.get(
        str(column.name))
    if order is None:
        return column
    return column.map(lambda v: order.index(v) if v in order else len(order))


def shown_workloads(best: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The workloads the throughput table lists, in workload order, and how many there are.

    At most ``SHOWN_WORKLOADS``: those measured on the most machines, since a row is only a
    comparison where several machines have a number.
    """
    key = WORKLOAD_KEY
    counts = best.groupby(key, sort=False, dropna=False)["page"].nunique().rename("n").reset_index()
    counts = counts.sort_values(["n", *key], ascending=[False] + [True] * len(key), kind="stable",
                                key=rank)
    shown = counts.head(SHOWN_WORKLOADS)[key].sort_values(key, kind="stable", key=rank)
    return shown, len(counts)


#: How many workloads the Compare page answers in words.
LEADS = 3


def leads(cells: pd.DataFrame, best: pd.DataFrame) -> tuple[Lead, ...]:
    """The ``LEADS`` workloads measured on the most machines (two at least), each fastest
    machine's best against the slowest's. Among those measured on as many machines, first
    the workloads where every GPU box is represented by its GPU: "which machine is faster"
    is asked of a GPU box's GPU, and a figure of its host CPU answers another question."""
    if best.empty:
        return ()
    medians = cells.set_index(["fingerprint_id", "cell_id"])["replicate_medians"]
    gpu_pages = set(cells.loc[cells["device"] == "cuda", "page"].astype(str))

    def host_cpu(group: pd.DataFrame) -> set[str]:
        return {str(r.page) for r in group.itertuples(index=False)
                if str(r.page) in gpu_pages and r.device != "cuda"}

    out: list[Lead] = []
    groups = best.groupby(WORKLOAD_KEY, sort=False, dropna=False)
    ranked = sorted(groups, key=lambda kv: (-kv[1]["page"].nunique(), bool(host_cpu(kv[1]))))
    for _, group in ranked:
        if group["page"].nunique() < 2 or len(out) == LEADS:
            break
        order = group.sort_values(["samples_per_s", "page"], ascending=[False, True],
                                  kind="stable")
        fast = next(order.head(1).astype(object).itertuples(index=False))
        slow = next(order.tail(1).astype(object).itertuples(index=False))
        est, lo, hi = ratio_ci([medians[(slow.fingerprint_id, slow.cell_id)]],
                               [medians[(fast.fingerprint_id, fast.cell_id)]])
        on_host = frozenset(host_cpu(group) & {str(fast.page), str(slow.page)})
        out.append(Lead(fast, fast, slow, float(est[0]), float(lo[0]), float(hi[0]), on_host))
    return tuple(out)


def _priced(best: pd.DataFrame, machines: tuple[Machine, ...], path: Path) -> Priced:
    table = price_table.load_prices(path)
    unmatched = price_table.unknown_keys(table, [m.machine for m in machines],
                                         [m.page for m in machines])
    rows = price_table.per_dollar(best, table) if len(best) else pd.DataFrame()
    if len(rows):
        rows = rows.sort_values(
            [*WORKLOAD_KEY, "images_per_s_per_usd", "page"],
            ascending=[True] * len(WORKLOAD_KEY) + [False, True],
            kind="stable", na_position="last", key=rank)
    return Priced(rows, tuple(unmatched))


def compare_page(facts: Facts, prices: Path | None) -> ComparePage:
    a = facts.analysis
    summary = facts.current(a.machines)
    machines = tuple(facts.machines[str(p)] for p in summary["page"]) if len(summary) else ()
    best = facts.current(best_throughput(a.cells, WORKLOAD_KEY))
    workloads, total = shown_workloads(best) if len(best) else (pd.DataFrame(), 0)
    return ComparePage(
        summary=summary, machines=machines, ceilings=facts.current(a.ceilings), best=best,
        workloads=workloads, total_workloads=total, leads=leads(a.cells, best),
        priced=_priced(best, machines, prices) if prices is not None else None,
        superseded=tuple(facts.machines[k] for k in sorted(facts.superseded)),
        outdated=tuple(m for _, m in sorted(facts.machines.items()) if m.outdated),
    )


@dataclass(frozen=True)
class DataRun:
    run: RunFiles
    page: str | None  # its machine page, where there is one
    n_rows: int
    n_replaced: int  # rows a resume replaced (in the file, not counted)


@dataclass(frozen=True)
class DataPage:
    source: Dataset = field(repr=False)  # the loaded rows (their files are copied)
    runs: tuple[DataRun, ...]
    skipped: int  # rows ``--skip-bad-rows`` left out


def data_page(facts: Facts) -> DataPage:
    ds = facts.analysis.source
    counts = ds.results.groupby("source").size().to_dict() if len(ds.results) else {}
    runs = []
    for run in sorted(ds.runs, key=lambda r: str(r.results)):
        page = page_slug(run.machine, run.fingerprint_id)
        key = Path(run.results).as_posix()
        runs.append(DataRun(run, page if page in facts.machines else None,
                            int(counts.get(key, 0)), int(ds.replaced.get(key, 0))))
    return DataPage(ds, tuple(runs), len(ds.skipped))
