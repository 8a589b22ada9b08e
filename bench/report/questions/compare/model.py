"""The Compare-machines page, judged: which machines and workloads are compared side by side,
who leads each, and what each price buys."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from bench import schema
from bench.report.analysis.intervals import ratio_ci
from bench.report.analysis.machines import COMPILED_WORKLOAD_KEY, best_throughput
from bench.report.input import prices as price_table
from bench.report.judge.facts import Facts
from bench.report.judge.feeding_sections import FeedingSection, feeding_sections
from bench.report.judge.machines import Machine

#: What the Compare page's throughput table compares across machines: a workload, eager or
#: compiled.
WORKLOAD_KEY = COMPILED_WORKLOAD_KEY
#: Workloads the throughput table lists at most: those measured on the most machines.
SHOWN_WORKLOADS = 100


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
    feeding: tuple[FeedingSection, ...] = ()  # each machine's cores to feed its GPU


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
        feeding=feeding_sections(facts),
    )
