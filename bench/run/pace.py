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

Every sitting measures its own pace too, at its start and at its end (``sitting_pace``), so
that sittings made on other days or other machines of one fingerprint can be compared before
their rows are pooled (``bench.sittings``): one H200 run's last sitting of five ran every
host-CPU cell 1.5-3.2 times slower, and nothing had recorded why. Each probe is one child:
the host CPU's reference above and, on a machine with CUDA, a compute-bound ceiling (the gpu
profile's 8192x8192 TF32 matmul, ``CUDA_MATMUL``) and a launch-bound cell (ResNet-18 inference
at batch 1 in fp32, ``CUDA_LAUNCH``), each cut short. A CPU-only sitting spends about 2 s at
each end. They are kept in the sitting's record in env.json (``session.finish_sitting``),
never in the fingerprint, in this shape (the key names are ``bench.schema``'s ``PACE_*``)::

    "sittings": [{"sitting": 2, ..., "pace": {
        "start": {"cpu_matmul": {"cell_id": "02ab92d368", "steady_p10_s": 0.0123,
                                 "steady_median_s": 0.0131, "steady_iters": 40,
                                 "at": "2026-12-05T10:00:02.345+00:00"},
                  "cuda_matmul": {"cell_id": "ba32dc6999", "missing": "timeout: ..."},
                  "cuda_launch": {...}},
        "end": {"cpu_matmul": {"cell_id": "02ab92d368",
                               "skipped": "the sitting was stopped by SIGTERM"}, ...}}}]

A probe that fails is ``missing`` with its reason, never a number, and the sitting goes on;
the end's probes are ``skipped`` (with why) when a signal stopped the sitting.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import signal
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.run.durable import StoreError
from bench.run.launch import Launcher
from bench.run.matrix import Cell, Settings
from bench.run.outcome import run_child
from bench.run.protocol import new_task
from bench.schema import (
    PACE_CPU_MATMUL,
    PACE_CUDA_LAUNCH,
    PACE_CUDA_MATMUL,
    PACE_MISSING,
    PACE_SKIPPED,
)

#: The ``cpu``, ``gpu`` and ``full`` profiles' CPU ceiling: a 2048x2048 matmul in strict fp32
#: with every core (``ceilings`` in cpu.toml).
REFERENCE = Cell(kind="ceiling", device="cpu", model="matmul-fp32", resolution=2048,
                 precision="fp32-strict", cudnn_benchmark="n/a", cudnn_deterministic="n/a",
                 cudnn_benchmark_limit=None)
REFERENCE_ID = REFERENCE.cell_id
#: The ceiling study's stopping rule, cut short: at least 5 matmuls and 1.5 s after the cold
#: one, at most 1.8 s (about 2 s in all on two cores). The pace moves from second to second
#: on a shared machine, and a window must outlast its bursts. On the 2-core VM, in the 40 s
#: after another heavy job, 34 windows of 0.5-0.8 s read 0.85-1.70 times the committed run's
#: p10 (4 of them over 1.05); 18 windows of 1.5-1.8 s read 0.83-0.98. Two whole runs started
#: that way took 0.90 and 0.92 of their unscaled estimates, where 0.5-0.8 s windows had
#: read 1.07 and 1.08.
SETTINGS = Settings(replicates=1, warmup_iters=0, min_iters=5, min_time_s=1.5, max_iters=40,
                    max_time_s=1.8, ci_target=0.03, timeout_s=60.0)
#: Where env.json keeps the pace measured at the run's start.
ENV_KEY = "pace"


def measure(launcher: Launcher, workdir: Path) -> dict[str, Any] | None:
    """``REFERENCE``'s steady p10 now, measured by a child as a run measures it, for the env's
    ``ENV_KEY``; None where it could not be measured (the estimate is then not scaled)."""
    task = new_task("measure", REFERENCE, SETTINGS, 0, workdir, suffix="pace")
    try:
        out = run_child(launcher, task, SETTINGS.timeout_s)
    except OSError:
        return None
    p10 = out.record.metrics.steady_p10_s if out.record is not None else None
    if out.status != "ok" or not p10 or p10 <= 0:
        return None
    return {"cell_id": REFERENCE_ID, "steady_p10_s": p10}


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


def references(cuda: bool) -> list[Reference]:
    """The probes of one end of a sitting: the CUDA ones only where the probe found CUDA."""
    return [CPU_PROBE, *(CUDA_PROBES if cuda else ())]


def expected_s(cuda: bool) -> float:
    """About how long one end of a sitting's probing takes."""
    return sum(r.expected_s for r in references(cuda))


def _now_iso() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="milliseconds")


def measure_reference(launcher: Launcher, workdir: Path, ref: Reference, tag: str = ""
                      ) -> dict[str, Any]:
    """One probe in a child of its own: its figures, or ``missing`` with why (a failed child,
    a scratch space that cannot be written). A Ctrl-C or SIGTERM goes on up."""
    task = new_task("measure", ref.cell, ref.settings, 0, workdir,
                    suffix=f"pace-{tag}-{ref.name}".replace("--", "-"))
    try:
        out = run_child(launcher, task, ref.settings.timeout_s)
    except (OSError, StoreError) as exc:
        return {"cell_id": ref.cell.cell_id, PACE_MISSING: f"could not run: {exc}"[:300]}
    m = out.record.metrics if out.record is not None else None
    if out.status != "ok" or m is None or not m.steady_p10_s or m.steady_p10_s <= 0:
        why = f"{out.status}: {out.reason}" if out.status != "ok" else "no steady time"
        return {"cell_id": ref.cell.cell_id, PACE_MISSING: why[:300]}
    return {"cell_id": ref.cell.cell_id, "steady_p10_s": m.steady_p10_s,
            "steady_median_s": m.steady_median_s, "steady_iters": m.steady_iters,
            "at": _now_iso()}


def skipped(cuda: bool, why: str) -> dict[str, Any]:
    """One end of a sitting whose probes were not run, each saying why."""
    return {r.name: {"cell_id": r.cell.cell_id, PACE_SKIPPED: why} for r in references(cuda)}


def sitting_pace(launcher: Launcher, cuda: bool, tag: str = "") -> tuple[dict[str, Any],
                                                                          int | None]:
    """One end of a sitting (``tag``: ``start`` or ``end``): each of ``references(cuda)``
    measured by a child of its own, in a scratch folder of their own; and the signal that
    stopped it, if one did (the probes it left are then ``missing``, and the caller stops).
    Never raises for a probe's failure: that probe is ``missing``, with its reason."""
    found: dict[str, Any] = {}
    refs = references(cuda)
    try:
        tmp = tempfile.TemporaryDirectory(prefix="torch-knobs-pace-")
    except OSError as exc:
        why = f"no scratch folder under {tempfile.gettempdir()}: {exc.strerror or exc}"
        return {r.name: {"cell_id": r.cell.cell_id, PACE_MISSING: why} for r in refs}, None
    stopped: int | None = None
    try:
        for ref in refs:
            try:
                found[ref.name] = measure_reference(launcher, Path(tmp.name), ref, tag)
            except KeyboardInterrupt as exc:  # the first stopping signal: the sitting ends
                stopped = int(getattr(exc, "signum", signal.SIGINT))
                break
    finally:
        with contextlib.suppress(OSError):
            tmp.cleanup()
    if stopped is not None:
        why = f"stopped by {signal.Signals(stopped).name} during the probe"
        for ref in refs:
            found.setdefault(ref.name, {"cell_id": ref.cell.cell_id, PACE_MISSING: why})
    return found, stopped
