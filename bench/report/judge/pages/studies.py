"""The study pages, judged: precision and layout, dynamic shapes, determinism, and CPU against
GPU. Each lists one machine's comparisons in page order, with the claims and the advice the
page states; the per-page judging (verdicts, crossovers) is the analysis' and the advice's."""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from bench.report.analysis.pairs import join_cells
from bench.report.analysis.studies import CURVE_KEY
from bench.report.judge.claims import ClaimAnswer
from bench.report.judge.facts import Facts
from bench.report.judge.machines import Machine, by_machine, unknown_machine
from bench.report.judge.pages.common import AdviceList, advice_list, claims_for, merged, ordered

#: What a CPU-vs-GPU curve is named by: its axes, without where it was measured.
CURVE_AXES = tuple(c for c in CURVE_KEY if c not in ("fingerprint_id", "machine", "page"))


@dataclass(frozen=True)
class MachineRows:
    """One machine's rows of a comparison, in page order."""

    machine: Machine
    rows: pd.DataFrame = field(repr=False)


@dataclass(frozen=True)
class Comparisons:
    """One comparison table of a page: every pair (its CSV), and the pairs per machine."""

    pairs: pd.DataFrame = field(repr=False)
    sections: tuple[MachineRows, ...]


def comparisons(frame: pd.DataFrame, facts: Facts, extra: tuple[str, ...] = ()) -> Comparisons:
    return Comparisons(frame, tuple(MachineRows(m, ordered(g, extra))
                                    for m, g in by_machine(frame, facts.machines)))


@dataclass(frozen=True)
class PrecisionPage:
    precision: Comparisons  # with ``baseline_allow_tf32``: the fp32 baseline's TF32 flag
    layout: Comparisons
    advice: AdviceList


def _with_tf32(pairs: pd.DataFrame, cells: pd.DataFrame) -> pd.DataFrame:
    """The precision pairs with their baseline cell's read-back ``allow_tf32`` flag."""
    if pairs.empty:
        return pairs.assign(baseline_allow_tf32=pd.Series(dtype=object))
    flags = cells.set_index(["fingerprint_id", "cell_id"])["eff_cudnn_allow_tf32"]
    keys = zip(pairs["fingerprint_id"], pairs["baseline_cell_id"])
    return pairs.assign(baseline_allow_tf32=[str(flags.get(k, "")) for k in keys])


def precision_page(facts: Facts) -> PrecisionPage:
    a = facts.analysis
    return PrecisionPage(
        precision=comparisons(_with_tf32(a.comparisons["precision"], a.cells), facts,
                              ("variant_value",)),
        layout=comparisons(a.comparisons["memory_format"], facts, ("variant_value",)),
        advice=merged(advice_list(facts, "precision"), advice_list(facts, "memory_format")),
    )


@dataclass(frozen=True)
class ShapesPage:
    shapes: Comparisons  # with the variant's cold-pass range (``var_cold_pass_min_s``, max)
    claims: tuple[ClaimAnswer, ...]
    advice: AdviceList


def shapes_page(facts: Facts) -> ShapesPage:
    a = facts.analysis
    shapes = a.shapes
    if len(shapes):  # each replicate's cold pass varies: the range beside the median
        shapes = join_cells(shapes, a.cells, ("cold_pass_min_s", "cold_pass_max_s"))
    return ShapesPage(
        shapes=Comparisons(a.shapes, comparisons(shapes, facts).sections),
        claims=claims_for(facts, "dynamic-shapes"),
        advice=advice_list(facts, "cudnn.benchmark", shapes_only=True),
    )


@dataclass(frozen=True)
class DeterminismSection:
    machine: Machine
    pairs: pd.DataFrame = field(repr=False)  # deterministic off → on
    checks: pd.DataFrame = field(repr=False)  # the two-process re-run checks


@dataclass(frozen=True)
class DeterminismPage:
    pairs: pd.DataFrame = field(repr=False)  # every pair (the page's CSV)
    sections: tuple[DeterminismSection, ...]  # every machine with pairs or checks
    claims: tuple[ClaimAnswer, ...]
    advice: AdviceList


def determinism_page(facts: Facts) -> DeterminismPage:
    a = facts.analysis
    det, rep = a.determinism, a.repro
    checks = {str(k): g for k, g in rep.groupby("page")} if len(rep) else {}
    pages = sorted(set(det["page"].astype(str)) | set(checks)) if len(det) else sorted(checks)
    sections = []
    for key in pages:
        pairs = ordered(det.loc[det["page"] == key]) if len(det) else pd.DataFrame()
        found = checks.get(key)
        sections.append(DeterminismSection(
            facts.machines.get(key) or unknown_machine(key), pairs,
            ordered(found) if found is not None else pd.DataFrame()))
    return DeterminismPage(det, tuple(sections), claims_for(facts, "determinism"),
                           advice_list(facts, "cudnn.deterministic"))


@dataclass(frozen=True)
class CpuGpuSection:
    machine: Machine
    pairs: pd.DataFrame = field(repr=False)  # one per curve and batch
    curves: pd.DataFrame = field(repr=False)  # the crossovers of this machine's curves


@dataclass(frozen=True)
class CpuGpuPage:
    pairs: pd.DataFrame = field(repr=False)
    sections: tuple[CpuGpuSection, ...]
    claims: tuple[ClaimAnswer, ...]
    advice: AdviceList


def cpu_gpu_page(facts: Facts) -> CpuGpuPage:
    a = facts.analysis
    curves = {str(k): g for k, g in a.crossovers.groupby("page")} if len(a.crossovers) else {}
    sections = tuple(
        CpuGpuSection(m, ordered(g), curves.get(m.page, pd.DataFrame()))
        for m, g in by_machine(a.cpu_gpu, facts.machines))
    return CpuGpuPage(a.cpu_gpu, sections, claims_for(facts, "cpu-vs-gpu"),
                      advice_list(facts, "device"))
