"""``bench run --executor slurm`` and ``bench status``: the command side of a cluster run.

Kept apart from the local runner: the submitting process plans and splits the profile, submits
one Slurm job per shard through submitit (:mod:`bench.run.slurm`), and follows them; it never
probes (the nodes' hardware is theirs to find) and never imports torch. submitit is imported
only once a Slurm run is asked for, so ``--executor local`` needs nothing new.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from bench.run import matrix, runner, shards, slurm


def add_arguments(run: argparse.ArgumentParser) -> None:
    """The executor and its Slurm options, on ``bench run`` (argparse only)."""
    run.add_argument("--executor", choices=("local", "slurm"), default="local",
                     help="local (this machine, the default) or slurm (one job per shard, "
                     f"through submitit: pip install '{slurm.EXTRA}')")
    group = run.add_argument_group("slurm", "with --executor slurm")
    group.add_argument("--shards", type=int, default=1, metavar="N",
                       help="split the plan into N shards, one Slurm job (one node) each")
    group.add_argument("--slurm-partition", metavar="NAME")
    group.add_argument("--slurm-gpus-per-node", type=int, metavar="N", help="0 or more")
    group.add_argument("--slurm-time", type=int, default=60, metavar="MINUTES",
                       help="each shard job's time limit (default 60)")
    group.add_argument("--slurm-account", metavar="NAME")
    group.add_argument("--slurm-constraint", metavar="FEATURES")
    group.add_argument("--slurm-extra", action="append", default=[], metavar="KEY=VALUE",
                       help="any other sbatch option (repeatable), e.g. qos=high")
    group.add_argument("--no-wait", action="store_true",
                       help="submit and return; follow later with: bench status RUN_ID")


def _fail(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


def _profile_for_nodes(name: str) -> str:
    """A shipped profile by name; a file by its absolute path, which the nodes can open on
    the shared file system."""
    return name if name in matrix.shipped_profiles() else str(Path(name).resolve())


def cmd_slurm(args: argparse.Namespace) -> int:
    """``bench run --executor slurm``: plan, split, submit, follow. The missing extra is
    said first: no other fix matters before it."""
    try:
        slurm.submitit_module()  # a missing extra is one line, before anything is written
    except slurm.SlurmError as exc:
        return _fail(str(exc))
    if not args.profile:
        return _fail("--executor slurm needs --profile: the nodes' hardware is not known here")
    if args.shard:
        return _fail("--shard is what each Slurm job runs; do not combine it with "
                     "--executor slurm")
    if args.out:  # each shard has a folder of its own: one --out cannot name them all
        return _fail("--out is not used with --executor slurm: each shard writes "
                     "REPORTS/<machine>/<run-id>-shard<k>; choose the folders with --reports "
                     "and --run-id")
    if args.launcher != "forkserver":
        return _fail("--launcher is not used with --executor slurm: each shard runs the fork "
                     "server on its node")
    try:
        profile = matrix.select(matrix.load_profile(args.profile), args.only)
        options = slurm.Options(args.slurm_partition, args.slurm_gpus_per_node,
                                args.slurm_time, args.slurm_account, args.slurm_constraint,
                                slurm.parse_extra(args.slurm_extra))
        options.check()
        planned = [len(p) for p in shards.split(runner.plan(profile), args.shards)]
    except (matrix.ProfileError, slurm.SlurmError, shards.ShardError) as exc:
        return _fail(str(exc))
    if args.dry_run:
        for k, n in enumerate(planned, start=1):
            print(f"shard {k}/{len(planned)}: {n} processes")
        return 0
    reports = Path(args.reports).resolve()
    queue = slurm.Queue()
    if args.resume:
        run_id = args.run_id or slurm.latest_submission(reports, profile.name)
        if run_id is None:
            return _fail(f"nothing to resume: no Slurm run of profile {profile.name} under "
                         f"{reports}")
        try:
            sub = slurm.Submission.load(slurm.slurm_folder(reports, run_id))
        except slurm.SlurmError as exc:
            return _fail(str(exc))
        if sub.planned != planned:
            return _fail(f"run {run_id} was split into {sub.count} shards of {sub.planned} "
                         f"processes; this profile and --shards give {planned}")
        todo = slurm.unfinished(sub, queue)
        if todo:
            try:
                slurm.submit(sub.profile, sub.planned, reports, run_id, options, record=sub,
                             which=todo)
            except slurm.SlurmError as exc:
                return _fail(str(exc))
        print(f"resumed run {run_id}: shard(s) {', '.join(map(str, todo)) or 'none'} "
              "submitted again", file=sys.stderr)
    else:
        run_id = args.run_id or runner.new_run_id(profile.name)
        if (slurm.slurm_folder(reports, run_id) / slurm.RECORD).exists():
            return _fail(f"run {run_id} was already submitted; pass --resume to finish it")
        try:
            sub = slurm.submit(_profile_for_nodes(args.profile), planned, reports, run_id,
                               options, only=args.only or ())
        except slurm.SlurmError as exc:
            return _fail(str(exc))
        print(f"submitted run {run_id}: {sub.count} shard job(s) "
              f"{' '.join(j[-1] for j in sub.jobs)}", file=sys.stderr)
    if args.no_wait:
        print(f"follow with: python -m bench status {run_id} --reports {args.reports}",
              file=sys.stderr)
        return 0
    code = slurm.watch(sub, queue)
    if code and code != slurm.EXIT_LEFT:
        print(f"resume with: python -m bench run --executor slurm --profile {args.profile} "
              f"--shards {sub.count} --run-id {run_id} --reports {args.reports} --resume",
              file=sys.stderr)
    return code


def cmd_status(args: argparse.Namespace) -> int:
    reports = Path(args.reports).resolve()
    try:
        sub = slurm.Submission.load(slurm.slurm_folder(reports, args.run_id))
    except slurm.SlurmError:
        return _fail(f"no Slurm run {args.run_id} under {reports}")
    now = slurm.states(sub, slurm.Queue())
    slurm.summary(now, sys.stdout)
    running = sum(s.active for s in now)
    done = sum(s.complete for s in now)
    print(f"run {sub.run_id}: {done} of {sub.count} shards complete, {running} queued or "
          "running")
    return 0
