"""The energy claim: is a GPU more energy-efficient per sample than a CPU?

Per workload measured on both devices of one machine, with energy measured on both sides
(NVML on the GPU board, RAPL on the CPU packages and DRAM; nothing estimated): the GPU's
joules per sample against the CPU's. A ratio inside 1 ± δ cannot tell; a workload with energy
on one side only is not a finding. The two figures cover different parts of the machine (the
board, the packages): the summary says so.
"""

from __future__ import annotations

from typing import Any

from bench.report import fmt
from bench.report.analysis.pairs import DELTA
from bench.report.judge.claims.findings import (
    GPU_RUN,
    current,
    labeller,
    num,
    pair_evidence,
    rows,
    tally,
)
from bench.report.judge.claims.model import Claim, ClaimAnswer, Finding, decide
from bench.report.vocabulary import Stance, Verdict

#: What the summary says the two figures cover.
COVERS = ("the GPU figure is the board's own (NVML), the CPU's its packages and DRAM (RAPL); "
          "neither includes the rest of the host")


def _stance(cpu_j: float, gpu_j: float) -> Stance:
    ratio = cpu_j / gpu_j
    if ratio > 1 + DELTA:
        return Stance.SUPPORTS
    if ratio < 1 - DELTA:
        return Stance.CONTRADICTS
    return Stance.CANNOT_TELL


def gpu_energy_per_sample(claim: Claim, a: Any) -> ClaimAnswer:
    """Per like-for-like CPU/GPU pair with enough ok replicates on both sides and energy
    measured on both: supported where the CPU's joules per sample over the GPU's is above
    1 + δ, contradicted where it is below 1 − δ."""
    cvg = current(a.cpu_gpu, a)
    findings: list[Finding] = []
    if len(cvg):
        both = cvg.loc[(cvg["verdict"] != Verdict.INSUFFICIENT)
                       & cvg["base_joules_per_sample"].notna()
                       & cvg["var_joules_per_sample"].notna()]
        name = labeller(both) if len(both) else None
        for r in rows(both):
            cpu_j, gpu_j = num(r.base_joules_per_sample), num(r.var_joules_per_sample)
            text = (f"{name(r) if name else r.model}: {fmt.num(gpu_j)} J per sample on the GPU "
                    f"({r.var_energy_method}), {fmt.num(cpu_j)} J on the CPU "
                    f"({r.base_energy_method}), the CPU's {fmt.ratio(cpu_j / gpu_j)} the GPU's")
            findings.append(Finding(_stance(cpu_j, gpu_j), str(r.page), str(r.machine), text,
                                    pair_evidence(r), str(r.model),
                                    name(r) if name else str(r.model)))
    summary = tally(findings, "workloads with energy measured on both sides",
                    "the GPU spends less per sample", "the CPU spends less",
                    f"within 1 ± {fmt.pct(DELTA)} of each other")
    if summary:
        summary += f" ({COVERS})"
    return decide(claim, findings, summary or "energy not measured on both sides of any "
                  "CPU-against-GPU comparison", GPU_RUN + " on a machine whose NVML energy "
                  "counter and RAPL counters are readable")
