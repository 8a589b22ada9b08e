"""``bench run --dry-run``: the cells a run would measure, each with its estimated time.

A CUDA cell on a machine without CUDA is listed as skipped (its rows would say ``no-cuda``),
and such a machine is also told what the same plan would take on one with CUDA.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Mapping, Sequence
from typing import TextIO

from bench.run.plan import estimate, pace
from bench.run.plan.budget import Budget, fit_line, fit_studies
from bench.run.plan.jobs import Job, skip_reason
from bench.run.plan.learned import CellCost
from bench.run.protocol import Probe


def print_dry_run(jobs: Sequence[Job], probe: Probe, stream: TextIO | None = None,
                  budget: Budget | None = None, costs: Mapping[str, CellCost] | None = None,
                  known: Mapping[tuple[str, str, int], float] | None = None,
                  window_s: float = pace.WINDOW_S) -> float:
    """One line per cell (its study, id, replicates, estimate, whether the estimate is
    *measured* on this kind of machine or *guessed*, and its name), then the total and, with a
    ``budget``, which studies fit it; returns the total in seconds (on ``stream``, standard
    output by default: the one of the moment, not of the import). ``known``: the seconds a
    resume plans a job with (its cell's replicates in the run's earlier sittings, else the
    estimate), so a resume's dry run fits its budget as the resume will. ``window_s``: the
    CPU pace probe's window (the profile's ``[pace]``)."""
    stream = stream or sys.stdout
    found = estimate.jobs_basis(jobs, probe, costs)
    if known:
        found = [(known[j.key], estimate.MEASURED) if j.key in known and known[j.key] != t
                 else (t, basis) for j, (t, basis) in zip(jobs, found)]
    est = [t for t, _ in found]
    per_cell: dict[tuple[str, str, str, str, str], list[float]] = {}
    for j, (t, basis) in zip(jobs, found):
        name = j.cell.name + (" (repro check)" if j.op == "repro" else "")
        per_cell.setdefault((j.study.name, j.cell.cell_id, name, skip_reason(j.cell, probe),
                             basis), []).append(t)
    width = max((len(k[0]) for k in per_cell), default=5)
    print(f"{'study':<{width}}  {'cell id':<10}  reps  {'est':>7}  {'basis':<8}  cell",
          file=stream)
    for (study, cid, name, skipped, basis), ts in per_cell.items():
        note = f"  [skipped: {skipped}]" if skipped else ""
        print(f"{study:<{width}}  {cid:<10}  {len(ts):>4}  {sum(ts):>6.1f}s  {basis:<8}  "
              f"{name}{note}", file=stream)
    probing = pace.expected_s(probe.cuda, window_s) * 2 if jobs else 0.0  # its two ends
    total = sum(est) + probing
    measured = sum(1 for _, b in found if b == estimate.MEASURED)
    if measured:
        where = "this run's earlier sittings or " if known else ""
        print(f"{measured} of {len(found)} estimates measured: from {where}this kind of "
              f"machine's committed rows; the others guessed, scaled by how far the guesses "
              f"were off here", file=stream)
    paced = pace_line(costs or {})
    if paced:
        print(paced, file=stream)
    if probing:
        print(f"with ~{probing:.0f} s measuring the machine's pace at the sitting's start and "
              "end (bench/run/plan/pace.py)", file=stream)
    print(f"{len(per_cell)} cells, {len(jobs)} processes, estimated {total / 60:.1f} min "
          f"here (a rough estimate: see bench/run/plan/estimate.py)", file=stream)
    if not probe.cuda and any(j.cell.device == "cuda" for j in jobs):
        with_cuda = sum(estimate.jobs_s(jobs, Probe(probe.env, probe.models, True)))
        cores = probe.cores
        print(f"on a CUDA machine with this one's {cores} CPU core{'s' if cores != 1 else ''}: "
              f"estimated {with_cuda / 60:.1f} min (the CPU cells and compiling scale with the "
              f"cores)", file=stream)
    if budget is not None:
        room = budget.deadline - time.monotonic()
        fit = fit_studies(jobs, dict(zip((j.key for j in jobs), est)), room)
        print(f"with --{fit_line(fit, budget.total_s, room)}", file=stream)
    return total


def pace_line(costs: Mapping[str, CellCost]) -> str:
    """What the measured CPU estimates were scaled by (``bench.run.plan.pace``), or nothing."""
    scales = sorted({round(c.scale, 2) for c in costs.values() if c.scale != 1.0})
    if not scales:
        return ""
    each = ", ".join(f"×{k:.2f}" for k in scales)
    return (f"the CPU cells' measured costs scaled by {each}: what a 2048x2048 fp32 matmul "
            f"takes here now against what it took in the run{'s' if len(scales) > 1 else ''} "
            f"they come from")
