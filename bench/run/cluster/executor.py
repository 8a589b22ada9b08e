"""``bench run --executor slurm`` and ``bench status``: the command side of a cluster run.

Kept apart from the local runner: the submitting process plans and splits the profile, submits
one Slurm job per shard through submitit (:mod:`bench.run.cluster.slurm`), and follows them;
it never probes (the nodes' hardware is theirs to find) and never imports torch. submitit is
imported only once a Slurm run is asked for, so ``--executor local`` needs nothing new.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.run import matrix, runner
from bench.run.cluster import shards, slurm, squeue

#: ``bench status``'s exit codes (0: every shard complete).
EXIT_STOPPED = 1  # a shard stopped short and no job of it is queued: --resume submits it
EXIT_ACTIVE = 3  # none stopped short, but some are still queued, running, or not known

#: The options only a Slurm run uses (argparse dest, flag): refused with --executor local.
SLURM_ONLY = (("shards", "--shards"), ("slurm_partition", "--slurm-partition"),
              ("slurm_gpus_per_node", "--slurm-gpus-per-node"), ("slurm_time", "--slurm-time"),
              ("slurm_account", "--slurm-account"), ("slurm_constraint", "--slurm-constraint"),
              ("slurm_extra", "--slurm-extra"), ("no_wait", "--no-wait"))


def add_arguments(run: argparse.ArgumentParser) -> None:
    """The executor and its Slurm options, on ``bench run`` (argparse only). Their defaults
    are None, so that a ``--resume`` can tell an option given from one left out (taken from
    the run's record)."""
    run.add_argument("--executor", choices=("local", "slurm"), default="local",
                     help="local (this machine, the default) or slurm (one job per shard, "
                     f"through submitit: pip install '{slurm.EXTRA}')")
    group = run.add_argument_group(
        "slurm", "with --executor slurm; a --resume takes each one left out from the run's "
        "record")
    group.add_argument("--shards", type=int, metavar="N",
                       help="split the plan into N shards, one Slurm job (one node) each "
                       "(default 1)")
    group.add_argument("--slurm-partition", metavar="NAME")
    group.add_argument("--slurm-gpus-per-node", type=int, metavar="N", help="0 or more")
    group.add_argument("--slurm-time", type=int, metavar="MINUTES",
                       help="each shard job's time limit (default 60)")
    group.add_argument("--slurm-account", metavar="NAME")
    group.add_argument("--slurm-constraint", metavar="FEATURES")
    group.add_argument("--slurm-extra", action="append", metavar="KEY=VALUE",
                       help="any other sbatch option (repeatable), e.g. qos=high")
    group.add_argument("--no-wait", action="store_true", default=None,
                       help="submit and return; follow later with: bench status RUN_ID")


def local_refusal(args: argparse.Namespace) -> str | None:
    """The first Slurm-only option given to a local run, as one line; None when there is none
    (a local run would ignore it: better said than silently dropped)."""
    for dest, flag in SLURM_ONLY:
        if getattr(args, dest, None) not in (None, False):
            return (f"{flag} needs --executor slurm; this is a local run (--executor local, "
                    "the default), which runs here")
    return None


def _fail(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


def _profile_for_nodes(name: str) -> str:
    """A shipped profile by name; a file by its absolute path, which the nodes can open on
    the shared file system."""
    return name if name in matrix.shipped_profiles() else str(Path(name).resolve())


def _given(args: argparse.Namespace) -> dict[str, Any]:
    """The Slurm options on the command line, by ``slurm.Options`` field; None: not given."""
    extra = None if args.slurm_extra is None else slurm.parse_extra(args.slurm_extra)
    return {"partition": args.slurm_partition, "gpus_per_node": args.slurm_gpus_per_node,
            "time_min": args.slurm_time, "account": args.slurm_account,
            "constraint": args.slurm_constraint, "extra": extra}


def _studies(only: Sequence[str]) -> str:
    return " ".join(f"--only {s}" for s in only) if only else "no --only (every study)"


def resume_command(sub: slurm.Submission) -> str:
    """The whole command that finishes ``sub``: its profile, shards, studies and the Slurm
    options its latest submission used, so that it is right as printed."""
    options = slurm.Options.recorded(sub.options)
    return " ".join(shlex.quote(a) for a in [
        "python", "-m", "bench", "run", "--executor", "slurm", "--profile", sub.profile,
        "--shards", str(sub.count), *(a for s in sub.only for a in ("--only", s)),
        *options.flags(), "--run-id", sub.run_id, "--reports", sub.reports, "--resume"])


def cmd_slurm(args: argparse.Namespace) -> int:
    """``bench run --executor slurm``: plan, split, submit, follow. The missing extra is
    said first: no other fix matters before it. A ``--resume`` takes the studies, the shard
    count and every Slurm option left out from the run's record."""
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
    reports = Path(args.reports).resolve()
    record: slurm.Submission | None = None
    try:
        given = _given(args)
        whole = matrix.load_profile(args.profile)
        if args.resume:
            found = args.run_id or slurm.latest_submission(reports, whole.name)
            if found is None:
                return _fail(f"nothing to resume: no Slurm run of profile {whole.name} under "
                             f"{reports}")
            record = slurm.Submission.load(slurm.slurm_folder(reports, str(found)))
            if args.only is not None and sorted(set(args.only)) != sorted(set(record.only)):
                return _fail(f"run {found} was submitted with {_studies(record.only)}; a "
                             "resume runs the same studies: leave --only out")
        only = record.only if record is not None else args.only or []
        count = args.shards if args.shards is not None else \
            record.count if record is not None else 1
        profile = matrix.select(whole, only)
        options, changed = slurm.merged(
            given, slurm.Options.recorded(record.options) if record is not None else None)
        options.check()
        planned = [len(p) for p in shards.split(runner.plan(profile), count)]
    except (matrix.ProfileError, slurm.SlurmError, shards.ShardError) as exc:
        return _fail(str(exc))
    if args.dry_run:
        for k, n in enumerate(planned, start=1):
            print(f"shard {k}/{len(planned)}: {n} processes")
        return 0
    queue = squeue.Queue()
    if record is not None:
        sub, run_id = record, record.run_id
        if sub.planned != planned:
            return _fail(f"run {run_id} was split into {sub.count} shards of {sub.planned} "
                         f"processes; this profile and --shards give {planned}")
        try:
            with slurm.resume_lock(sub):  # no second resume between the look and the submit
                todo = slurm.unfinished(sub, queue)
                if todo:
                    sub.options = asdict(options)  # what the shards now run under
                    slurm.submit(sub.profile, sub.planned, reports, run_id, options,
                                 record=sub, which=todo)
        except slurm.SlurmError as exc:
            return _fail(str(exc))
        used, notes = " ".join(options.flags()), "; ".join(changed)
        if not todo:
            how = f"; {notes} was not used" if changed else ""
        elif changed:
            how = f", with {notes} given here; Slurm options now: {used}"
        else:
            how = f", with the recorded Slurm options: {used}"
        print(f"resumed run {run_id}: shard(s) {', '.join(map(str, todo)) or 'none'} "
              f"submitted again{how}", file=sys.stderr)
    else:
        run_id = args.run_id or runner.new_run_id(profile.name)
        if (slurm.slurm_folder(reports, run_id) / slurm.RECORD).exists():
            return _fail(f"run {run_id} was already submitted; pass --resume to finish it")
        try:
            sub = slurm.submit(_profile_for_nodes(args.profile), planned, reports, run_id,
                               options, only=only)
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
        print(f"resume with: {resume_command(sub)}", file=sys.stderr)
    return code


def cmd_status(args: argparse.Namespace) -> int:
    """One line per shard and one for the run; exit 0 when every shard is complete,
    ``EXIT_STOPPED`` when one stopped short (``--resume`` submits it), ``EXIT_ACTIVE`` while
    the others are queued, running, or their state is unknown (Slurm did not answer)."""
    reports = Path(args.reports).resolve()
    try:
        sub = slurm.Submission.load(slurm.slurm_folder(reports, args.run_id))
    except slurm.SlurmError:
        return _fail(f"no Slurm run {args.run_id} under {reports}")
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
