"""Measuring the machine's pace: before a run is planned (``measure``), and at each end of
each sitting (``sitting_pace``), each probe a child of its own; which probes and what they
are for is ``bench.run.plan.pace``'s.

Every sitting measures its own pace too, at its start and at its end (``sitting_pace``), so
that sittings made on other days or other machines of one fingerprint can be compared before
their rows are pooled (``bench.sittings``): one H200 run's last sitting of five ran every
host-CPU cell 1.5-3.2 times slower, and nothing had recorded why. Each probe is one child:
the host CPU's reference above and, on a machine with CUDA, a compute-bound ceiling (the gpu
profile's 8192x8192 TF32 matmul, ``CUDA_MATMUL``) and a launch-bound cell (ResNet-18 inference
at batch 1 in fp32, ``CUDA_LAUNCH``), each cut short. A CPU-only sitting spends about 2 s at
each end; at its start none where the plan's pace (``measure``, the same CPU probe) was
measured moments before (``reusable``). They are kept in the sitting's record in env.json
(``session.finish_sitting``), never in the fingerprint, in this shape (the key names are
``bench.schema``'s ``PACE_*``)::

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
from pathlib import Path
from typing import Any

from bench.run.execute.launch import Launcher
from bench.run.execute.outcome import run_child
from bench.run.plan.pace import WINDOW_S, Reference, cpu_probe, references
from bench.run.protocol import new_task
from bench.run.store.durable import StoreError
from bench.schema import PACE_CPU_MATMUL, PACE_MISSING, PACE_SKIPPED, Status

#: How old the plan's pace (``measure``) may be to stand for the CPU probe at the sitting's
#: start (``reusable``): the probe, the plan and the run folder's start come between them.
FRESH_S = 60.0


def measure(launcher: Launcher, workdir: Path, window_s: float = WINDOW_S
            ) -> dict[str, Any] | None:
    """``REFERENCE``'s figures now (``measure_reference``'s: its steady p10, which the env's
    ``ENV_KEY`` is read for, its median, and when), measured by a child as a run measures it,
    in a steady window of at most ``window_s`` (the profile's); None where it could not be
    measured (the estimate is then not scaled)."""
    found = measure_reference(launcher, workdir, cpu_probe(window_s), "plan")
    return None if PACE_MISSING in found else found


def reusable(figures: Any, now: dt.datetime | None = None) -> bool:
    """Whether ``figures`` (the env's pace, ``measure``'s) can stand for the CPU probe at a
    sitting's start: the same cell under the same stopping rule, with a figure, measured at
    most ``FRESH_S`` ago.

    Why: a run measures its pace for the plan moments before its sitting's first job, and the
    sitting's start measured the same matmul again straight after it, 2 s of a cpu run's wall
    time outside every job for the same figure."""
    if not isinstance(figures, dict) or figures.get("cell_id") != cpu_probe().cell.cell_id:
        return False
    p10 = figures.get("steady_p10_s")
    try:
        at = dt.datetime.fromisoformat(str(figures.get("at")))
    except ValueError:
        return False
    age = ((now or dt.datetime.now(dt.timezone.utc)) - at).total_seconds()
    return isinstance(p10, (int, float)) and p10 > 0 and 0 <= age <= FRESH_S


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
    if out.status != Status.OK or m is None or not m.steady_p10_s or m.steady_p10_s <= 0:
        why = f"{out.status}: {out.reason}" if out.status != Status.OK else "no steady time"
        return {"cell_id": ref.cell.cell_id, PACE_MISSING: why[:300]}
    return {"cell_id": ref.cell.cell_id, "steady_p10_s": m.steady_p10_s,
            "steady_median_s": m.steady_median_s, "steady_iters": m.steady_iters,
            "at": _now_iso()}


def skipped(cuda: bool, why: str) -> dict[str, Any]:
    """One end of a sitting whose probes were not run, each saying why."""
    return {r.name: {"cell_id": r.cell.cell_id, PACE_SKIPPED: why} for r in references(cuda)}


def sitting_pace(launcher: Launcher, cuda: bool, tag: str = "", measured: Any = None,
                 window_s: float = WINDOW_S) -> tuple[dict[str, Any], int | None]:
    """One end of a sitting (``tag``: ``start`` or ``end``): each of ``references(cuda)``
    measured by a child of its own, in a scratch folder of their own; and the signal that
    stopped it, if one did (the probes it left are then ``missing``, and the caller stops).
    Never raises for a probe's failure: that probe is ``missing``, with its reason.
    ``measured``: the plan's pace (``measure``), which stands for the CPU probe where it is
    ``reusable``. ``window_s``: the CPU probe's steady window (the profile's ``[pace]``)."""
    found: dict[str, Any] = {}
    refs = references(cuda, window_s)
    try:
        tmp = tempfile.TemporaryDirectory(prefix="torch-knobs-pace-")
    except OSError as exc:
        why = f"no scratch folder under {tempfile.gettempdir()}: {exc.strerror or exc}"
        return {r.name: {"cell_id": r.cell.cell_id, PACE_MISSING: why} for r in refs}, None
    stopped: int | None = None
    try:
        for ref in refs:
            if ref.name == PACE_CPU_MATMUL and reusable(measured):
                found[ref.name] = dict(measured)
                continue
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
