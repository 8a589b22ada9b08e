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

from bench.commands.base import Command
from bench.commands.exits import fail
from bench.run.cluster import slurm, squeue
from bench.run.cluster.executor import resume_command
from bench.run.store import runid

EXIT_STOPPED = 1  # a shard stopped short and no job of it is queued: --resume submits it
EXIT_ACTIVE = 3  # none stopped short, but some are still queued, running, or not known


class StatusCommand(Command):
    """Where a cluster run stands, read from its record and the queue: the one way to follow
    a run submitted with ``--no-wait``."""

    name = "status"
    help = "the shards of a cluster run: jobs, states, rows"
    description = ("One line per shard of a cluster run, then one for the run. Exit 0 when "
                   "every shard is complete, 1 when a shard stopped short and no job of it is "
                   "queued (--resume submits it), 3 while shards are still queued or running "
                   "or Slurm did not answer about them.")

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("run_id", metavar="RUN_ID")
        parser.add_argument("--reports", default="reports", help="root of the results tree")

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        reports = Path(args.reports).resolve()
        if why := runid.problem(args.run_id):  # one folder under reports, never elsewhere
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
