"""``python -m bench status RUN_ID``: the shards of a cluster run, one line each, then one for
the run.

Exit 0 when every shard is complete, ``EXIT_STOPPED`` when one stopped short and no job of it
is queued (``--resume`` submits it, and the line says how), ``EXIT_ACTIVE`` while the others
are queued, running, or their state is unknown (Slurm did not answer).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.commands.exits import fail
from bench.run.cluster import slurm, squeue
from bench.run.cluster.executor import resume_command
from bench.run.store import runid

EXIT_STOPPED = 1  # a shard stopped short and no job of it is queued: --resume submits it
EXIT_ACTIVE = 3  # none stopped short, but some are still queued, running, or not known


def cmd_status(args: argparse.Namespace) -> int:
    reports = Path(args.reports).resolve()
    if why := runid.problem(args.run_id):  # one folder under reports, never a path elsewhere
        return fail(why.replace("--run-id", "RUN_ID", 1))
    try:
        sub = slurm.Submission.load(slurm.slurm_folder(reports, args.run_id))
    except slurm.SlurmError:
        return fail(f"no Slurm run {args.run_id} under {reports}")
    now = slurm.states(sub, squeue.Queue())
    slurm.summary(now, sys.stdout)
    short = [s for s in now if not s.complete]  # a done shard's job may still be ending
    running = sum(s.active for s in short)
    unknown = sum(s.state == squeue.UNKNOWN for s in short)
    done = sub.count - len(short)
    stopped = [s.k for s in short if not s.active]
    print(f"run {sub.run_id}: {done} of {sub.count} shards complete, {running} queued or "
          "running" + (f" ({unknown} of them not known: Slurm did not answer)" if unknown
                       else ""))
    if done == sub.count:
        return 0
    if stopped:
        print(f"shard(s) {', '.join(map(str, stopped))} stopped short; resume with: "
              f"{resume_command(sub)}")
        return EXIT_STOPPED
    return EXIT_ACTIVE
