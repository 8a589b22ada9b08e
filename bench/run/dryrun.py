"""``bench run --dry-run``: the cells a run would measure, each with its estimated time.

A CUDA cell on a machine without CUDA is listed as skipped (its rows would say ``no-cuda``),
and such a machine is also told what the same plan would take on one with CUDA.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TextIO

from bench.run import estimate
from bench.run.plan import Job, skip_reason
from bench.run.protocol import Probe


def print_dry_run(jobs: Sequence[Job], probe: Probe, stream: TextIO = sys.stdout) -> float:
    """One line per cell (its study, id, replicates, estimate and name), then the total;
    returns the total in seconds."""
    est = estimate.jobs_s(jobs, probe)
    per_cell: dict[tuple[str, str, str, str], list[float]] = {}
    for j, t in zip(jobs, est):
        name = j.cell.name + (" (repro check)" if j.op == "repro" else "")
        per_cell.setdefault((j.study.name, j.cell.cell_id, name, skip_reason(j.cell, probe)),
                            []).append(t)
    width = max((len(k[0]) for k in per_cell), default=5)
    print(f"{'study':<{width}}  {'cell id':<10}  reps  {'est':>7}  cell", file=stream)
    for (study, cid, name, skipped), ts in per_cell.items():
        note = f"  [skipped: {skipped}]" if skipped else ""
        print(f"{study:<{width}}  {cid:<10}  {len(ts):>4}  {sum(ts):>6.1f}s  {name}{note}",
              file=stream)
    total = sum(est)
    print(f"{len(per_cell)} cells, {len(jobs)} processes, estimated {total / 60:.1f} min "
          f"here (a rough estimate: see bench/run/estimate.py)", file=stream)
    if not probe.cuda and any(j.cell.device == "cuda" for j in jobs):
        with_cuda = sum(estimate.jobs_s(jobs, Probe(probe.env, probe.models, True)))
        cores = probe.cores
        print(f"on a CUDA machine with this one's {cores} CPU core{'s' if cores != 1 else ''}: "
              f"estimated {with_cuda / 60:.1f} min (the CPU cells and compiling scale with the "
              f"cores)", file=stream)
    return total
