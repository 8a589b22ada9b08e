"""The Compare-machines page, judged: which machines and workloads are compared side by side,
who leads each, what each price buys, and what its chart draws.

"Which machine is faster, and by how much?" is asked of the same workload on each machine: the
chart draws the workloads measured on every machine compared (where none is, on the most
machines, which its caption states), training and the largest batch first, PyTorch's defaults
(fp32, one input shape, eager) before the rest, never in the alphabet's order; one bar series
per machine and device, so that a GPU box's host CPU is drawn, labelled and marked as a CPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from bench import schema
from bench.report.analysis.intervals import ratio_ci
from bench.report.analysis.machines import COMPILED_WORKLOAD_KEY, best_throughput
from bench.report.input import prices as price_table
from bench.report.judge.columns import varying
from bench.report.judge.facts import Facts
from bench.report.judge.feeding_sections import FeedingSection, feeding_sections
from bench.report.judge.machines import Machine
from bench.report.judge.rows import Axes, Counted, Located, Table, typed_row, typed_rows

#: What the Compare page's throughput table compares across machines: a workload, eager or
#: compiled.
WORKLOAD_KEY = COMPILED_WORKLOAD_KEY
#: Workloads the throughput table lists at most: those measured on the most machines.
SHOWN_WORKLOADS = 100


@dataclass(frozen=True, kw_only=True)
class WorkloadKey(Axes):
    """A workload: what one row of the throughput table is, its key the axes of
    ``WORKLOAD_KEY``."""


@dataclass(frozen=True, kw_only=True)
class BestThroughput(WorkloadKey, Located, Counted):
    """One machine's best throughput of a workload (a row of ``best_throughput``): the figure,
    the setting it ran at, and its row."""

    fingerprint_id: str = ""
    machine: str = ""
    cell_id: str = ""
    samples_per_s: float | None = None
    samples_per_joule: float | None = None
    energy_method: str | None = None


@dataclass(frozen=True, kw_only=True)
class PricedThroughput(BestThroughput):
    """A best throughput, priced (``input.prices.per_dollar``)."""

    price_usd: float | None = None
    images_per_s_per_usd: float | None = None
    usd_per_hour: float | None = None
    images_per_usd: float | None = None
    usd_per_kwh: float | None = None
    usd_per_million_hardware: float | None = None
    usd_per_million_energy: float | None = None
    usd_per_million: float | None = None
    price_note: str | None = None


@dataclass(frozen=True)
class ThroughputLine:
    """A workload the throughput table lists, and each machine's best of it (None: not
    measured there), in ``ComparePage.machines``' order."""

    workload: WorkloadKey
    cells: tuple[BestThroughput | None, ...]


@dataclass(frozen=True, kw_only=True)
class CeilingFigure(Located, Counted):
    """A machine's measured peak rate of one op on one device (a row of ``ceilings``)."""

    device: str = ""
    op: str = ""
    achieved: float | None = None
    unit: str | None = None
    n_throttled: int | None = None


@dataclass(frozen=True)
class CeilingLine:
    """One measured op and device, with each machine's ceiling of it (None: not measured
    there), in ``ComparePage.machines``' order: the GPU's first."""

    device: str
    op: str
    cells: tuple[CeilingFigure | None, ...]


@dataclass(frozen=True, kw_only=True)
class SideBySideMachine:
    """What the side-by-side table reads of one fingerprint's summary (``machine_summary``)."""

    machine: str = ""
    gpu_name: str | None = None
    gpu_count: int | None = None
    cpu_model: str | None = None
    cpu_cores: int | None = None
    cpu_logical: int | None = None
    cpu_threads: int | None = None
    gpu_memory_bytes: float | None = None
    memory_bytes: float | None = None
    torch_version: str | None = None
    torchvision_version: str | None = None
    cuda_version: str | None = None
    cudnn_version: str | None = None
    python_version: str | None = None
    os: str | None = None
    workload_version: str | None = None
    n_runs: int | None = None
    n_cells: int | None = None
    n_ok: int | None = None
    n_failed: int | None = None


@dataclass(frozen=True)
class Priced:
    """What the prices file given to the build buys."""

    rows: tuple[PricedThroughput, ...]  # every machine's best throughput, priced
    columns: tuple[str, ...]  # the workload columns that differ between them (their labels)
    unmatched: tuple[str, ...]  # keys of the file that name no machine


@dataclass(frozen=True)
class Lead:
    """A workload measured on several machines: the fastest machine's best throughput over
    the slowest's, with a bootstrap interval over both cells' replicates."""

    workload: WorkloadKey
    fast: BestThroughput  # the fastest machine's best cell
    slow: BestThroughput
    ratio: float
    ci_low: float
    ci_high: float
    #: the pages of the two whose GPU did not give this figure: a GPU box's best here is its
    #: host CPU, and must not be quoted under the GPU's name
    host_cpu: frozenset[str] = frozenset()


@dataclass(frozen=True)
class DeviceSeries:
    """One series of bars: one machine's one device (``cuda``, ``cpu``); a GPU box measured
    on its host CPU too has two."""

    machine: Machine
    device: str


@dataclass(frozen=True)
class ChartWorkload:
    """One row of the chart: a workload, and each series' best throughput of it on that
    device (None: not measured there), in ``ThroughputChart.series``' order."""

    workload: WorkloadKey
    cells: tuple[BestThroughput | None, ...]


@dataclass(frozen=True)
class ThroughputChart:
    """What the Compare page draws: the same workloads on the machines compared."""

    series: tuple[DeviceSeries, ...]
    rows: tuple[ChartWorkload, ...]  # in the order the page asks about them
    columns: tuple[str, ...]  # the workload columns the rows' labels name
    on_machines: int  # machines each row was measured on
    of_machines: int  # machines compared
    candidates: int  # workloads measured on that many (those past CHART_ROWS are left out)


@dataclass(frozen=True)
class ComparePage:
    summary: tuple[SideBySideMachine, ...]  # the current fingerprints' summary rows
    machines: tuple[Machine, ...]  # in the same order
    ceilings: tuple[CeilingLine, ...]  # only ceilings with a figure
    best: Table = field(repr=False)  # every machine's best throughput per workload (its CSV)
    workloads: tuple[ThroughputLine, ...]  # those the table lists, in workload order
    columns: tuple[str, ...]  # the workload columns that differ between those (their labels)
    total_workloads: int
    priced: Priced | None  # None: no prices file was given
    leads: tuple[Lead, ...]  # the first workloads measured on the most machines
    superseded: tuple[Machine, ...]
    outdated: tuple[Machine, ...]
    #: each machine's cores to feed its GPU (None: no pipeline measured), in ``machines``' order
    feeding: tuple[FeedingSection | None, ...] = ()
    feeding_measured: bool = False  # some GPU machine's answer quotes a need
    #: what the chart draws (None: no workload was measured on two machines)
    chart: ThroughputChart | None = None


def _key(row: object, *head: object) -> tuple[object, ...]:
    """``head``, then ``row``'s workload: a lookup key."""
    return (*head, *[getattr(row, k) for k in WORKLOAD_KEY])


def throughput_lines(workloads: pd.DataFrame, best: pd.DataFrame,
                     machines: Sequence[Machine]) -> tuple[ThroughputLine, ...]:
    """Each listed workload with each machine's best throughput of it."""
    lookup = {_key(b, b.page): b for b in typed_rows(BestThroughput, best)}
    return tuple(ThroughputLine(w, tuple(lookup.get(_key(w, m.page)) for m in machines))
                 for w in typed_rows(WorkloadKey, workloads))


def ceiling_lines(ceilings: pd.DataFrame, machines: Sequence[Machine]
                  ) -> tuple[CeilingLine, ...]:
    """One line per measured ceiling (op and device), the GPU's first, each machine's figure.

    The peak rates a machine reached on plain matmuls and copies are the hardware's own answer
    to "how fast can it go", measured the same way on every machine.
    """
    if ceilings.empty:
        return ()
    found = typed_rows(CeilingFigure, ceilings.loc[ceilings["achieved"].notna()])
    lookup = {(c.page, c.device, c.op): c for c in found}
    kinds = sorted({(c.device, c.op) for c in found}, key=lambda k: (k[0] != "cuda", k[1]))
    return tuple(CeilingLine(device, op, tuple(lookup.get((m.page, device, op))
                                               for m in machines))
                 for device, op in kinds)


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


#: Workloads the chart draws at most.
CHART_ROWS = 20
#: Named in every row's label, even where the rows do not differ in it.
LABELLED = ("model", "mode", "batch_size", "precision")

#: The order of each axis the page asks about first: PyTorch's default, then the rest.
_FIRST: dict[str, tuple[str, ...]] = {
    "mode": ("train", "infer"),
    "precision": ("fp32", "fp32-strict", "amp-bf16", "amp-fp16"),
    "shapes": ("static", "dynamic", "ragged"),
    "compile": schema.COMPILE_MODES,
    "compile_dynamic": schema.COMPILE_DYNAMIC,
}


#: How many workloads the Compare page answers in words (its first screen holds two).
LEADS = 2


def leads(cells: pd.DataFrame, best: pd.DataFrame) -> tuple[Lead, ...]:
    """The ``LEADS`` workloads measured on the most machines (two at least), each fastest
    machine's best against the slowest's. Among those measured on as many machines, first
    the workloads where every GPU box is represented by its GPU ("which machine is faster"
    is asked of a GPU box's GPU, and a figure of its host CPU answers another question),
    then those whose figures rest on enough replicates, then in ``question_order``, never
    the alphabet's."""
    if best.empty:
        return ()
    medians = cells.set_index(["fingerprint_id", "cell_id"])["replicate_medians"]
    gpu_pages = set(cells.loc[cells["device"] == "cuda", "page"].astype(str))

    def host_cpu(group: pd.DataFrame) -> set[str]:
        return {str(page) for page, device in zip(group["page"], group["device"])
                if str(page) in gpu_pages and device != "cuda"}

    out: list[Lead] = []
    groups = best.groupby(WORKLOAD_KEY, sort=False, dropna=False)
    asked = question_order(best[WORKLOAD_KEY].drop_duplicates())
    rank = {tuple(map(str, k)): i for i, k in enumerate(asked.itertuples(index=False))}
    ranked = sorted(groups, key=lambda kv: (
        -kv[1]["page"].nunique(), bool(host_cpu(kv[1])),
        bool(kv[1]["too_few_ok"].any()) if "too_few_ok" in kv[1].columns else False,
        rank.get(tuple(map(str, kv[0])), len(rank))))
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
        out.append(Lead(typed_row(WorkloadKey, fast), typed_row(BestThroughput, fast),
                        typed_row(BestThroughput, slow), float(est[0]), float(lo[0]),
                        float(hi[0]), on_host))
    return tuple(out)


def _ranked(values: pd.Series, order: Sequence[str]) -> pd.Series:
    return values.astype(str).map(lambda v: order.index(v) if v in order else len(order))


def question_order(workloads: pd.DataFrame) -> pd.DataFrame:
    """``workloads`` (``WORKLOAD_KEY`` columns) in the order the page asks about them:
    training before inference, the largest batch, PyTorch's default precision, one input
    shape, eager before compiled, the model measured in the most of them; the key's own values
    only break what ties remain (so the result is the same on every build)."""
    if workloads.empty:
        return workloads
    models = workloads["model"].astype(str)
    key = pd.DataFrame({
        "mode": _ranked(workloads["mode"], _FIRST["mode"]),
        "batch": -pd.to_numeric(workloads["batch_size"], errors="coerce").fillna(0),
        "precision": _ranked(workloads["precision"], _FIRST["precision"]),
        "shapes": _ranked(workloads["shapes"], _FIRST["shapes"]),
        "compile": _ranked(workloads["compile"], _FIRST["compile"]),
        "dynamic": _ranked(workloads["compile_dynamic"], _FIRST["compile_dynamic"]),
        "resolution": -pd.to_numeric(workloads["resolution"], errors="coerce").fillna(0),
        "model_count": -models.map(models.value_counts()),
        **{f"tie_{c}": workloads[c].astype(str) for c in WORKLOAD_KEY},
    }, index=workloads.index)
    return workloads.loc[key.sort_values(list(key.columns), kind="stable").index]


def chart_workloads(best: pd.DataFrame) -> tuple[pd.DataFrame, int, int]:
    """The workloads the chart draws (``WORKLOAD_KEY`` columns, in ``question_order``), the
    machines each was measured on, and how many workloads were measured on that many.

    Those measured on the most machines (every machine compared where any workload was, and
    two at least: one machine's figure compares nothing), at most ``CHART_ROWS``.
    """
    if best.empty:
        return pd.DataFrame(columns=WORKLOAD_KEY), 0, 0
    counts = (best.groupby(WORKLOAD_KEY, sort=False, dropna=False)["page"].nunique()
              .rename("n").reset_index())
    most = int(counts["n"].max())
    if most < 2:
        return pd.DataFrame(columns=WORKLOAD_KEY), most, 0
    tier = counts.loc[counts["n"] == most, WORKLOAD_KEY]
    return question_order(tier).head(CHART_ROWS), most, len(tier)


def throughput_chart(best: pd.DataFrame, by_device: pd.DataFrame,
                     machines: Sequence[Machine]) -> ThroughputChart | None:
    """The chart of ``chart_workloads(best)`` (``best``: each machine's best per workload),
    one series per machine and device that measured any of them, a machine's GPU first; each
    bar the best of that device (``by_device``: the best per workload and device). None where
    no workload was measured on two machines."""
    picked, on, candidates = chart_workloads(best)
    if picked.empty:
        return None
    workloads = typed_rows(WorkloadKey, picked)
    wanted = {_key(w) for w in workloads}
    cells = [c for c in typed_rows(BestThroughput, by_device) if _key(c) in wanted]
    found = {(c.page, str(c.device)) for c in cells}
    series = tuple(DeviceSeries(m, d) for m in machines
                   for d in sorted({d for p, d in found if p == m.page},
                                   key=lambda d: (d != "cuda", d)))
    lookup = {_key(c, c.page, str(c.device)): c for c in cells}
    rows = tuple(ChartWorkload(w, tuple(lookup.get(_key(w, s.machine.page, s.device))
                                        for s in series)) for w in workloads)
    return ThroughputChart(series=series, rows=rows,
                           columns=varying(picked, WORKLOAD_KEY, LABELLED), on_machines=on,
                           of_machines=len(machines), candidates=candidates)


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
    return Priced(typed_rows(PricedThroughput, rows), varying(rows, WORKLOAD_KEY), tuple(unmatched))


def _feeding(facts: Facts, machines: tuple[Machine, ...]
             ) -> tuple[tuple[FeedingSection | None, ...], bool]:
    """Each machine's feeding answer, in ``machines``' order, and whether any GPU machine's
    answer quotes a need (the side-by-side table's "cores per GPU to feed" row, where so)."""
    sections = feeding_sections(facts)
    fed = {s.machine.page: s for s in sections}
    return (tuple(fed.get(m.page) for m in machines),
            any(s.gpu and s.headline is not None for s in sections))


def compare_page(facts: Facts, prices: Path | None) -> ComparePage:
    a = facts.analysis
    summary = facts.current(a.machines)
    machines = tuple(facts.machines[str(p)] for p in summary["page"]) if len(summary) else ()
    best = facts.current(best_throughput(a.cells, WORKLOAD_KEY))
    by_device = facts.current(best_throughput(a.cells, [*WORKLOAD_KEY, "device"]))
    workloads, total = shown_workloads(best) if len(best) else (pd.DataFrame(), 0)
    fed, measured = _feeding(facts, machines)
    return ComparePage(
        summary=typed_rows(SideBySideMachine, summary), machines=machines,
        ceilings=ceiling_lines(facts.current(a.ceilings), machines), best=Table.of(best),
        workloads=throughput_lines(workloads, best, machines),
        columns=varying(workloads, WORKLOAD_KEY), total_workloads=total,
        leads=leads(a.cells, best),
        priced=_priced(best, machines, prices) if prices is not None else None,
        superseded=tuple(facts.machines[k] for k in sorted(facts.superseded)),
        outdated=tuple(m for _, m in sorted(facts.machines.items()) if m.outdated),
        feeding=fed, feeding_measured=measured,
        chart=throughput_chart(best, by_device, machines) if len(best) else None,
    )
