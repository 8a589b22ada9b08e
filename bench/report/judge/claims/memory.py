"""The claim "a bigger GPU memory lets you run bigger batches" (``memory_limit``), judged from
each machine's peak memory per batch size: how it grows, and where a batch stops fitting."""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from bench.report import fmt
from bench.report.judge.claims.findings import (
    GPU_RUN,
    labeller,
    num,
    pair_evidence,
    plural,
    rows,
    tally,
)
from bench.report.judge.claims.hardware import cpu_gpu
from bench.report.judge.claims.model import (
    Claim,
    ClaimAnswer,
    Finding,
    decide,
)
from bench.report.vocabulary import Stance
from bench.schema import USER_MODEL_AXES

#: How much faster one side's memory must fill, as a share of its capacity per extra sample,
#: before the claim is judged: the two sides are different measures (the GPU allocator's tensor
#: bytes, the CPU process's whole resident set), so rates within this factor tell nothing.
MEMORY_MARGIN = 2.0

#: What each side's peak measures, as the summary says it.
_MEASURES = ("the GPU side is the allocator's peak over the whole run (the bytes its tensors "
             "held, cold pass included; not the CUDA context or the allocator's cache), the "
             "CPU side the whole process's peak resident set; what does not grow with the "
             "batch (the libraries, the CUDA context, the weights) cancels out")

#: A curve of CPU/GPU pairs: one workload over batch sizes, on one machine.
_CURVE = ("fingerprint_id", "model", *USER_MODEL_AXES, "mode", "resolution", "precision",
          "memory_format", "shapes")


def _memory_peaks(a: Any, cvg: pd.DataFrame) -> pd.DataFrame:
    """Per CPU/GPU pair: each side's whole-run peak and its machine's capacity (NaN where
    not recorded)."""
    cells = a.cells.set_index(["fingerprint_id", "cell_id"])
    caps = a.machines.set_index("fingerprint_id")
    fp = cvg["fingerprint_id"]
    return pd.DataFrame({
        "cpu_peak": cells["peak_rss_bytes"].reindex(
            pd.MultiIndex.from_arrays([fp, cvg["baseline_cell_id"]])).to_numpy(float),
        "gpu_peak": cells["whole_peak_mem_allocated_bytes"].reindex(
            pd.MultiIndex.from_arrays([fp, cvg["variant_cell_id"]])).to_numpy(float),
        "gpu_total": pd.to_numeric(caps["gpu_memory_bytes"], errors="coerce").reindex(
            fp).to_numpy(float),
        "host_total": pd.to_numeric(caps["memory_bytes"], errors="coerce").reindex(
            fp).to_numpy(float),
    }, index=cvg.index)


def _unrecorded(cvg: pd.DataFrame, on: pd.DataFrame) -> dict[tuple[str, str], int]:
    """(machine, what its rows lack) → how many workloads measured on both it leaves out."""
    lacks = {
        "host_total": "env.json does not record the host's installed memory",
        "gpu_total": "env.json does not record the GPU's total memory",
        "gpu_peak": "its GPU cells record no allocator peak",
        "cpu_peak": "its CPU cells record no peak resident set",
    }
    out: dict[tuple[str, str], int] = {}
    for col, what in lacks.items():
        bad = ~(on[col] > 0)
        for machine, n in cvg.loc[bad, "machine"].astype(str).value_counts().items():
            out[(str(machine), what)] = int(n)
    return out


def memory_limit(claim: Claim, a: Any) -> ClaimAnswer:
    """Per curve (one workload over batch sizes, on one machine), with enough ok replicates
    on both sides at its smallest and largest batch: what each extra sample adds to each
    side's whole-run peak, as a share of that side's own memory (the GPU allocator's peak
    against the GPU's total, the CPU process's peak resident set against the host's installed
    memory). That is the question "which fills first as the batch grows"; a peak at one batch
    is mostly what does not grow (a process's libraries on the CPU side, and not even the
    CUDA context on the GPU's), so it would answer another. Supported where the GPU's share
    grows at least ``MEMORY_MARGIN`` times as fast as the host's, contradicted where the
    host's does; closer rates cannot tell, since the two are different measures. A curve
    measured at one batch size has no growth to judge, and is counted apart."""
    cvg = cpu_gpu(a)
    findings: list[Finding] = []
    unrecorded: dict[tuple[str, str], int] = {}
    single = 0  # curves measured at one batch size
    if len(cvg):
        on = _memory_peaks(a, cvg)
        unrecorded = _unrecorded(cvg, on)
        known = on.notna().all(axis=1) & (on["gpu_total"] > 0) & (on["host_total"] > 0)
        cvg, on = cvg.loc[known], on.loc[known]
        name = labeller(cvg, omit=("batch_size",))
        curve = [c for c in _CURVE if c in cvg.columns]
        # every row as plain values at once: a tree of many machines has hundreds of curves
        plain = dict(zip(cvg.index, rows(cvg)))
        for _, group in cvg.groupby(curve, sort=True, dropna=False):
            ordered = group.sort_values("batch_size", kind="stable")
            small, large = plain[ordered.index[0]], plain[ordered.index[-1]]
            if int(num(small.batch_size)) == int(num(large.batch_size)):
                single += 1
                continue
            growth = _growth(small, large, on.loc[ordered.index[0]], on.loc[ordered.index[-1]])
            said = (Stance.SUPPORTS if growth.ratio >= MEMORY_MARGIN else
                    Stance.CONTRADICTS if growth.ratio <= 1 / MEMORY_MARGIN
                    else Stance.CANNOT_TELL)
            where = f"{name(small)}, batch {growth.small} to {growth.large}"
            findings.append(Finding(
                said, str(small.page), str(small.machine),
                functools.partial(_memory_text, where, growth, said),
                pair_evidence(small) + pair_evidence(large), str(small.model), where,
                _memory_remedy(small.machine, growth) if said == Stance.CANNOT_TELL else ""))
    summary = tally(findings, "workloads measured on both at two batch sizes or more",
                    f"the GPU's memory filling {MEMORY_MARGIN:g}× as fast or more",
                    f"the host's filling {MEMORY_MARGIN:g}× as fast or more",
                    f"rates within {MEMORY_MARGIN:g}× of each other")
    if findings:
        summary += f"; a CPU's memory is finite too (the host's installed memory above); " \
                   f"{_MEASURES}"
    gaps = [f"on {machine}, {what} ({plural(n, 'workloads measured on both')} left out)"
            for (machine, what), n in sorted(unrecorded.items())]
    if single:
        gaps.append(f"{plural(single, 'workloads')} measured at one batch size only, with no "
                    "growth to judge")
    if gaps:
        summary = "; ".join([summary, *gaps] if summary else gaps)
    # where workloads were measured, their remedies say what would tell
    return decide(claim, findings,
                  summary or "no workload measured on both with enough ok replicates",
                  "" if findings else GPU_RUN + " with the current runner, whose env.json "
                  "records the host's installed memory beside the GPU's, at two batch sizes "
                  "or more")


@dataclass(frozen=True)
class _Growth:
    """What each extra sample added to each side's peak between two batch sizes, in bytes and
    as a share of that side's memory; ``ratio``: the GPU's share over the host's (inf where
    the host's did not grow and the GPU's did; 1 where neither grew)."""

    small: int
    large: int
    gpu_bytes: float
    cpu_bytes: float
    gpu_total: float
    host_total: float

    @property
    def ratio(self) -> float:
        gpu = max(self.gpu_bytes, 0.0) / self.gpu_total
        cpu = max(self.cpu_bytes, 0.0) / self.host_total
        if cpu == 0:
            return math.inf if gpu > 0 else 1.0
        return gpu / cpu


def _growth(small: Any, large: Any, s: Any, l_: Any) -> _Growth:
    b0, b1 = int(num(small.batch_size)), int(num(large.batch_size))
    return _Growth(b0, b1, (l_["gpu_peak"] - s["gpu_peak"]) / (b1 - b0),
                   (l_["cpu_peak"] - s["cpu_peak"]) / (b1 - b0),
                   float(s["gpu_total"]), float(s["host_total"]))


def _memory_remedy(machine: str, g: _Growth) -> str:
    """What would tell where the two sides filled at rates within the margin: each rate is a
    side's growth over its own memory, so a machine whose two memories stand in another
    proportion moves them apart."""
    return (f"{GPU_RUN} whose host and GPU memory stand in a markedly different proportion "
            f"than {machine}'s ({fmt.bytes_(g.host_total)} host, {fmt.bytes_(g.gpu_total)} "
            f"GPU): each rate is a side's growth over its own memory")


def _per_sample(value: float) -> str:
    return f"{fmt.bytes_(value)} a sample" if value > 0 else "nothing"


def _memory_text(where: str, g: _Growth, said: str) -> str:
    if Stance(said) == Stance.SUPPORTS:
        how = "only the GPU's grew" if math.isinf(g.ratio) else \
            f"the GPU's fills {fmt.ratio(g.ratio)} as fast"
    elif Stance(said) == Stance.CONTRADICTS:
        how = "only the host's grew" if g.ratio == 0 else \
            f"the host's fills {fmt.ratio(1 / g.ratio)} as fast"
    else:
        how = (f"within {MEMORY_MARGIN:g}× of each other, too close for two different "
               "measures to tell")
    return (f"{where}: the GPU run's allocator peak grew {_per_sample(g.gpu_bytes)} (of the "
            f"GPU's {fmt.bytes_(g.gpu_total)}), the CPU run's peak resident set "
            f"{_per_sample(g.cpu_bytes)} (of the host's {fmt.bytes_(g.host_total)}): {how}")
