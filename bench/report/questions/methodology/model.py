"""The Methodology page's figures, judged: what the hand-written page would otherwise quote as
literal numbers from one run, taken from the current data instead.

- a GPU's measured matmul ceilings: the best 10-iteration window against the sustained rate,
  per current fingerprint (the gap that clocks and power settling under load make);
- ``cudnn.benchmark``'s extra first pass with a fresh (or shared) kernel cache against the same
  configuration's with a warm one, where a run measured both.

Where the data holds neither, the model is empty and the view says so in words. Superseded
fingerprints never answer (``Facts.current``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from bench import schema
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine
from bench.report.judge.numerics import TOLERANCES, Tolerance
from bench.report.judge.rows import plain

#: The configurations the page quotes with both cache states (how many more says the rest).
SHOWN_CACHES = 3
#: The ops whose ceilings the page quotes, in its order (the cheapest precision first).
_OPS = ("matmul-bf16", "matmul-tf32", "matmul-fp32")


@dataclass(frozen=True, kw_only=True)
class CeilingGap:
    """One measured ceiling's best 10-iteration window against its sustained rate."""

    op: str  # "matmul-bf16"
    unit: str  # "TFLOP/s"
    sustained: float
    best: float
    more: float  # best / sustained − 1
    anchor: str  # the ceiling's row on its machine page


@dataclass(frozen=True, kw_only=True)
class MachineGaps:
    """One current GPU fingerprint's ceiling gaps."""

    machine: Machine
    gaps: tuple[CeilingGap, ...]


@dataclass(frozen=True, kw_only=True)
class CacheCost:
    """``cudnn.benchmark``'s extra first pass (on − off) in one configuration, with a fresh
    (or shared) kernel cache and with a warm one."""

    machine: Machine
    model: str
    mode: str  # "train" or "infer"
    precision: str
    batch_size: int
    cold_cache: str  # "fresh" or "shared": the state the cold figures met
    cold_extra_s: float  # median replicate's extra first pass
    cold_extra_max_s: float  # the slowest benchmark-on replicate's
    warm_extra_s: float
    warm_extra_max_s: float
    warm_share: float | None  # warm_extra_s / cold_extra_s (None: the cold one is not > 0)
    cold_anchor: str  # the benchmark-on cells' rows on the machine page
    warm_anchor: str


@dataclass(frozen=True)
class MethodologyPage:
    """The figures the Methodology page includes (empty: not measured in these reports)."""

    ceilings: tuple[MachineGaps, ...]
    caches: tuple[CacheCost, ...]  # the first SHOWN_CACHES
    more_caches: int = 0  # configurations measured in both states beyond those
    #: the numerics check's tolerances, one per arithmetic (``judge.numerics.TOLERANCES``)
    tolerances: tuple[Tolerance, ...] = ()


def methodology_page(facts: Facts) -> MethodologyPage:
    caches = _caches(facts)
    return MethodologyPage(ceilings=_ceilings(facts), caches=caches[:SHOWN_CACHES],
                           more_caches=max(len(caches) - SHOWN_CACHES, 0),
                           tolerances=tuple(TOLERANCES.values()))


def _ceilings(facts: Facts) -> tuple[MachineGaps, ...]:
    ceil = facts.current(facts.analysis.ceilings)
    ceil = ceil.loc[(ceil["device"] == "cuda") & ceil["op"].isin(_OPS)
                    & (ceil["achieved"] > 0) & (ceil["burst"] > 0)]
    out = []
    for page, rows in ceil.groupby("page", sort=True):
        machine = facts.machines.get(str(page))
        if machine is None:
            continue
        ranked = rows.assign(_rank=rows["op"].map(_OPS.index)).sort_values("_rank")
        gaps = tuple(CeilingGap(op=str(r.op), unit=str(r.unit), sustained=float(r.achieved),
                                best=float(r.burst), more=float(r.burst / r.achieved - 1),
                                anchor=str(r.anchor))
                     for r in ranked.itertuples(index=False))
        out.append(MachineGaps(machine=machine, gaps=gaps))
    return tuple(out)


def _caches(facts: Facts) -> tuple[CacheCost, ...]:
    """Each configuration measured with benchmark off and on, with a fresh (or shared) cache
    and with a warm one: the pairs joined on every axis but the kernel cache (as
    ``analysis.studies.with_warm`` joins them)."""
    pairs = facts.current(facts.analysis.benchmark)
    if pairs.empty:
        return ()
    pairs = pairs.loc[pairs["extra_cold_pass_s"].notna()]
    key = ["fingerprint_id", "variant_value",
           *(c for c in schema.AXIS_COLUMNS if c not in ("cudnn_benchmark", "kernel_cache"))]
    warm = pairs.loc[pairs["kernel_cache"] == "warm"].drop_duplicates(key, keep="last")
    cold = pairs.loc[pairs["kernel_cache"] != "warm"]
    both = cold.merge(warm, on=key, suffixes=("", "_warm"))
    both = both.sort_values(["page", "model", "mode", "precision", "batch_size"], kind="stable")
    return tuple(c for row in both.to_dict("records") if (c := _cost(facts, row)) is not None)


def _cost(facts: Facts, row: dict[str, object]) -> CacheCost | None:
    machine = facts.machines.get(str(row["page"]))
    figures = [_float(row[c]) for c in ("extra_cold_pass_s", "extra_cold_pass_max_s",
                                        "extra_cold_pass_s_warm", "extra_cold_pass_max_s_warm")]
    if machine is None or any(math.isnan(f) for f in figures):
        return None
    cold, cold_max, warm, warm_max = figures
    return CacheCost(
        machine=machine, model=str(row["model"]), mode=str(row["mode"]),
        precision=str(row["precision"]), batch_size=int(_float(row["batch_size"])),
        cold_cache=str(row["kernel_cache"]), cold_extra_s=cold, cold_extra_max_s=cold_max,
        warm_extra_s=warm, warm_extra_max_s=warm_max,
        warm_share=warm / cold if cold > 0 and warm >= 0 else None,
        cold_anchor=str(row["variant_anchor"]), warm_anchor=str(row["variant_anchor_warm"]))


def _float(value: object) -> float:
    v = plain(value)
    return float(v) if isinstance(v, int | float) else math.nan
