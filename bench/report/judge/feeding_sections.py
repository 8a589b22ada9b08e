"""Each machine's answer to "how many cores feed this step": its pipeline sweeps over loader
workers, the cores each measured device step needs (``judge.feeding``), the end-to-end check,
and the need the answer quotes. Shared by the Feeding page and the Compare page's "cores per
GPU to feed" row."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from bench.report.judge.facts import Facts
from bench.report.judge.feeding import (
    CoresToFeed,
    Delivered,
    Rate,
    cores_to_feed,
    host_limit,
    per_worker,
)
from bench.report.judge.machines import Machine
from bench.report.vocabulary import Feeding

#: The decoder the answer quotes where several were swept: the reference recipe's.
REFERENCE_DECODER = "pil"


@dataclass(frozen=True)
class SweepPoint:
    """One worker count of a sweep: what it delivered, its start-up and its cost."""

    delivered: Delivered
    first_batch_s: float
    cpu_s_per_sample: float
    decode_errors: float
    #: CPU time was read, but only over windows whose start-up batches were cut from the
    #: rate: it cannot be divided by the samples of what is left
    cpu_spans_startup: bool = False


@dataclass(frozen=True)
class Sweep:
    """One pipeline configuration over worker counts, on one machine."""

    device: str
    mode: str  # the recipe: train or infer
    batch_size: int
    decoder: str
    images: str  # empty: generated
    points: tuple[SweepPoint, ...]

    @property
    def delivered(self) -> tuple[Delivered, ...]:
        return tuple(p.delivered for p in self.points)

    @property
    def one_worker(self) -> float | None:
        """One worker's rate: the ideal line's slope (``judge.feeding.per_worker``)."""
        return per_worker(self.delivered)


@dataclass(frozen=True)
class Need:
    """A device step, and the cores it needs to be fed by one sweep."""

    name: str  # the model cell's name
    page: str
    anchor: str
    model: str
    mode: str
    batch_size: int
    precision: str
    memory_format: str
    device: str
    decoder: str
    answer: CoresToFeed


@dataclass(frozen=True)
class EndToEnd:
    """The pipeline feeding the step: its rate against the same step's synthetic-input rate,
    and how much of the time the step waited for a batch."""

    name: str
    page: str
    anchor: str
    workers: int
    rate: Rate
    synthetic: Rate | None
    wait: float  # fraction of the steady state
    startup: int = 0  # ok replicates timed inside the workers' start-up (no rate)
    #: cudnn.benchmark of the end-to-end cell, and so of its synthetic twin: the cores table
    #: quotes the step at its fastest setting, which may be the other one
    benchmark: str = "off"

    @property
    def ratio(self) -> float | None:
        s = self.synthetic
        return self.rate.median / s.median if s is not None and s.known else None


@dataclass(frozen=True)
class FeedingSection:
    machine: Machine
    host_cores: int
    gpu: bool  # the machine has a GPU
    sweeps: tuple[Sweep, ...]
    needs: tuple[Need, ...]
    ends: tuple[EndToEnd, ...]
    headline: Need | None  # the need the answer quotes
    limit: Delivered | None  # the most this host's cores delivered (the reference sweep)
    limit_sweep: Sweep | None
    #: the section holding its hardware model's charts, where the page does not draw its
    #: own (``judge.machines.mark_charted``); None where it does
    charts_on: Machine | None = None


def _rate(r: Any) -> Rate:
    """A demand row's rate, interval and ok replicates; a pipeline row's, with the replicates
    that gave a rate (``n_rated``: those timed past the workers' start-up)."""
    n = getattr(r, "n_rated", r.n_ok)
    return Rate(float(r.rate), float(r.rate_low), float(r.rate_high), int(n or 0))


def _sweeps(rows: pd.DataFrame) -> tuple[Sweep, ...]:
    out = []
    pipes = rows.loc[rows["kind"] == "pipeline"]
    key = ["device", "mode", "batch_size", "decoder", "images"]
    for (device, mode, batch, decoder, images), g in pipes.groupby(key, sort=True):
        points = tuple(SweepPoint(Delivered(int(r.num_workers), _rate(r), str(r.page),
                                            str(r.anchor), int(r.n_startup)),
                                  float(r.first_batch_s), float(r.cpu_s_per_sample),
                                  float(r.decode_errors),
                                  bool(pd.isna(r.cpu_s_per_sample) and pd.notna(r.cpu_time_s)))
                       for r in g.sort_values("num_workers").itertuples(index=False))
        out.append(Sweep(str(device), str(mode), int(batch), str(decoder), str(images), points))
    return tuple(out)


def _fastest(demand: pd.DataFrame) -> pd.DataFrame:
    """Each step (model, mode, batch, precision, layout) once: its fastest measured setting
    (of the cuDNN switches and kernel caches), the hungriest consumer its host must feed."""
    key = ["device", "model", "mode", "batch_size", "precision", "memory_format"]
    ranked = demand.sort_values(["rate", "cell_id"], ascending=[False, True], kind="stable")
    return ranked.drop_duplicates(key).sort_values(key, kind="stable")


def _needs(demand: pd.DataFrame, sweeps: Sequence[Sweep], cores: int) -> tuple[Need, ...]:
    """Every measured step with a sweep of its device, recipe and batch size."""
    out = []
    for r in _fastest(demand).itertuples(index=False):
        for s in sweeps:
            if (s.device, s.mode, s.batch_size) != (r.device, r.mode, int(r.batch_size)):
                continue
            out.append(Need(str(r.cell_name), str(r.page), str(r.anchor), str(r.model),
                            str(r.mode), int(r.batch_size), str(r.precision),
                            str(r.memory_format), str(r.device), s.decoder,
                            cores_to_feed(_rate(r), s.delivered, cores)))
    return tuple(out)


def _ends(rows: pd.DataFrame, demand: pd.DataFrame) -> tuple[EndToEnd, ...]:
    """Each end-to-end cell against its step on synthetic inputs: the same model, mode,
    batch, precision, layout and cudnn.benchmark (its fastest kernel cache, where several)."""
    out = []
    key = ["device", "model", "mode", "batch_size", "precision", "memory_format",
           "cudnn_benchmark"]
    for r in rows.loc[rows["kind"] == "e2e"].itertuples(index=False):
        twin = demand
        for col in key:
            twin = twin.loc[twin[col] == getattr(r, col)]
        twin = twin.sort_values("rate", ascending=False, kind="stable")
        synthetic = _rate(twin.iloc[0]) if len(twin) else None
        out.append(EndToEnd(str(r.cell_name), str(r.page), str(r.anchor), int(r.num_workers),
                            _rate(r), synthetic, float(r.data_wait_frac), int(r.n_startup),
                            str(r.cudnn_benchmark)))
    return tuple(out)


def _headline(needs: Sequence[Need], gpu: bool) -> Need | None:
    """The need an answer quotes: on a GPU machine its GPU steps', else the CPU's; training
    first (the recipe that costs most), the reference decoder, the hungriest step."""
    pool = [n for n in needs if (n.device == "cuda") == gpu] or list(needs)
    pool = [n for n in pool if n.answer.verdict != Feeding.NOT_MEASURED]
    if not pool:
        return None
    return max(pool, key=lambda n: (n.answer.verdict != Feeding.INSUFFICIENT, n.mode == "train",
                                    n.decoder == REFERENCE_DECODER,
                                    n.answer.demand.median if n.answer.demand else 0.0))


def _reference(sweeps: Sequence[Sweep], gpu: bool) -> Sweep | None:
    pool = [s for s in sweeps if (s.device == "cuda") == gpu] or list(sweeps)
    if not pool:
        return None
    return max(pool, key=lambda s: (s.mode == "train", s.decoder == REFERENCE_DECODER,
                                    not s.images, len(s.points)))


def _cores(facts: Facts, page: str) -> int:
    summary = facts.analysis.machines
    row = summary.loc[summary["page"] == page]
    for col in ("cpu_cores", "cpu_logical"):
        if len(row) and row[col].iloc[0] is not None and not (
                isinstance(row[col].iloc[0], float) and math.isnan(row[col].iloc[0])):
            return int(row[col].iloc[0])
    return 1


def feeding_sections(facts: Facts) -> tuple[FeedingSection, ...]:
    """Each current machine's feeding answer, machines with a GPU first (the question is what
    a GPU needs)."""
    a = facts.analysis
    rows = facts.current(a.pipelines) if len(a.pipelines) else a.pipelines
    sections = []
    for page in sorted(set(rows["page"].astype(str))) if len(rows) else []:
        m = facts.machines.get(page)
        if m is None:
            continue
        mine = rows.loc[rows["page"] == page]
        demand = a.consumption.loc[a.consumption["page"] == page]
        cores = _cores(facts, page)
        gpu = bool((demand["device"] == "cuda").any()) or bool((mine["device"] == "cuda").any())
        sweeps = _sweeps(mine)
        needs = _needs(demand, sweeps, cores)
        ref = _reference(sweeps, gpu)
        sections.append(FeedingSection(
            m, cores, gpu, sweeps, needs, _ends(mine, demand), _headline(needs, gpu),
            host_limit(ref.delivered, cores) if ref else None, ref))
    sections.sort(key=lambda s: (not s.machine.yours, not s.gpu))  # the reader's own first
    return tuple(sections)
