"""This machine's pace now, against its pace in the runs an estimate learns from.

Why: a shared machine does not run at one speed. The same 2-core cloud VM, with the same
fingerprint, ran the ``cpu`` profile's cells 10-25% faster on one day than on another, so an
estimate learned from the slower day's rows was 30% too long. Every ``cpu``, ``gpu`` and
``full`` run measures this CPU's fp32 matmul ceiling (``REFERENCE``); the probe times the same
cell again, for about two seconds, before anything is planned (``measure``), and the learned
costs of each CPU cell are scaled by how much faster or slower it runs now than in the run they
come from (``bench.run.learned``). The figure compared is the steady p10 (the fastest tenth of
the iterations), not the median: bursts of contention move the median more. Over seven
committed runs of that VM (of older fingerprints) against the run of 2026-12-03, the p10 ratio
came 3-11% under the ratio of their common cells' wall times; the median ratio 15-22% under. It
is measured only where there is such a run to compare with: a machine without history pays
nothing. CUDA cells are not scaled: a CPU's pace says nothing of its GPU's.

The pace is kept in the run's env.json (``ENV_KEY``), outside the fingerprint, as the moment
it was measured at is.

Every sitting also measures its pace at its start and end with the probes named here
(``CPU_PROBE``, ``CUDA_PROBES``); ``bench.run.execute.pacing`` runs them and says how they
are kept.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from bench.run.plan.matrix import PACE_WINDOW_S, Cell, Settings
from bench.schema import PACE_CPU_MATMUL, PACE_CUDA_LAUNCH, PACE_CUDA_MATMUL

#: The ``cpu``, ``gpu`` and ``full`` profiles' CPU ceiling: a 2048x2048 matmul in strict fp32
#: with every core (``ceilings`` in cpu.toml).
REFERENCE = Cell(kind="ceiling", device="cpu", model="matmul-fp32", resolution=2048,
                 precision="fp32-strict", cudnn_benchmark="n/a", cudnn_deterministic="n/a",
                 cudnn_benchmark_limit=None)
REFERENCE_ID = REFERENCE.cell_id
#: The CPU probe's longest steady window, in seconds: what a profile's ``[pace] window_s``
#: sets (``bench.run.plan.matrix.PACE_WINDOW_S``, the default, is this ``SETTINGS``' own).
WINDOW_S = PACE_WINDOW_S
#: The ceiling study's stopping rule, cut short: at least 5 matmuls and 1.5 s after the cold
#: one, at most 1.8 s (about 2 s in all on two cores). The pace moves from second to second
#: on a shared machine, and a window must outlast its bursts. On the 2-core VM, in the 40 s
#: after another heavy job, 34 windows of 0.5-0.8 s read 0.85-1.70 times the committed run's
#: p10 (4 of them over 1.05); 18 windows of 1.5-1.8 s read 0.83-0.98. Two whole runs started
#: that way took 0.90 and 0.92 of their unscaled estimates, where 0.5-0.8 s windows had
#: read 1.07 and 1.08.
SETTINGS = Settings(replicates=1, warmup_iters=0, min_iters=5, min_time_s=1.5, max_iters=40,
                    max_time_s=WINDOW_S, ci_target=0.03, timeout_s=60.0)
#: Where env.json keeps the pace measured at the run's start.
ENV_KEY = "pace"


def now_s(env: Mapping[str, Any]) -> float | None:
    """The pace an env records (its reference cell's p10 seconds), or None."""
    pace = env.get(ENV_KEY)
    if not isinstance(pace, dict) or pace.get("cell_id") != REFERENCE_ID:
        return None
    value = pace.get("steady_p10_s")
    return float(value) if isinstance(value, (int, float)) and value > 0 else None


#: The gpu profile's TF32 ceiling (an 8192x8192 matmul, fp32 tensors in TF32): what the GPU's
#: compute does, whatever its host does.
CUDA_MATMUL = Cell(kind="ceiling", device="cuda", model="matmul-tf32", resolution=8192,
                   precision="fp32", cudnn_benchmark="n/a", cudnn_deterministic="n/a",
                   cudnn_benchmark_limit=None)
#: ResNet-18 inference at batch 1 in fp32 on CUDA: a step of many small kernels, as fast as
#: the host can launch them (the host's pace as the GPU's cells feel it).
CUDA_LAUNCH = Cell(device="cuda", model="resnet18", mode="infer", batch_size=1,
                   precision="fp32", cudnn_benchmark="off", cudnn_deterministic="off")
#: The CUDA probes' stopping rule: a few hundred milliseconds of steady iterations after a
#: short warm-up (the child extends the window to ``telemetry.MIN_WINDOW_S`` where NVML
#: measures energy).
CUDA_SETTINGS = Settings(replicates=1, warmup_iters=3, min_iters=20, min_time_s=0.3,
                         max_iters=2000, max_time_s=0.5, ci_target=0.03, timeout_s=120.0)


@dataclass(frozen=True)
class Reference:
    """One pace probe: its name in env.json (``bench.schema.PACE_PROBES``), its cell, its
    stopping rule and about how long its child takes, start-up included (for ``--dry-run``
    and a budget: the end's probes must fit it)."""

    name: str
    cell: Cell
    settings: Settings
    expected_s: float


CPU_PROBE = Reference(PACE_CPU_MATMUL, REFERENCE, SETTINGS, 2.2)
CUDA_PROBES = (Reference(PACE_CUDA_MATMUL, CUDA_MATMUL, CUDA_SETTINGS, 3.0),
               Reference(PACE_CUDA_LAUNCH, CUDA_LAUNCH, CUDA_SETTINGS, 3.0))


#: What a CPU probe's child takes beyond its window: its fork, the cold matmul, the record.
_PROBE_START_S = CPU_PROBE.expected_s - WINDOW_S


def cpu_probe(window_s: float = WINDOW_S) -> Reference:
    """The CPU probe with a steady window of at most ``window_s`` (a profile's ``[pace]
    window_s``), its shortest in the same proportion, and never fewer than ``SETTINGS``'
    iterations. Why a profile may shorten it: the ``smoke`` profile's whole plan takes a few
    seconds, and two 1.8 s probes at full width on every core were a third of its CPU time; a
    shorter window reads the pace of a shared machine less surely, which a profile that is
    never quoted can afford."""
    if window_s == WINDOW_S:
        return CPU_PROBE
    settings = replace(SETTINGS, max_time_s=window_s,
                       min_time_s=round(SETTINGS.min_time_s * window_s / WINDOW_S, 3))
    return Reference(PACE_CPU_MATMUL, REFERENCE, settings, _PROBE_START_S + window_s)


def references(cuda: bool, window_s: float = WINDOW_S) -> list[Reference]:
    """The probes of one end of a sitting: the CUDA ones only where the probe found CUDA."""
    return [cpu_probe(window_s), *(CUDA_PROBES if cuda else ())]


def expected_s(cuda: bool, window_s: float = WINDOW_S) -> float:
    """About how long one end of a sitting's probing takes."""
    return sum(r.expected_s for r in references(cuda, window_s))
