"""``bench run --executor slurm``: its options, and the steps of a cluster run.

Kept apart from the local runner: the submitting process plans and splits the profile, submits
one Slurm job per shard through submitit (:mod:`bench.run.cluster.slurm`), and follows them;
it never probes (the nodes' hardware is theirs to find) and never imports torch. submitit is
imported only once a Slurm run is asked for, so ``--executor local`` needs nothing new. Each
step refuses with ``SlurmError`` (one line, nothing submitted); ``bench.commands.run`` says it.
"""

from __future__ import annotations

import argparse
import shlex
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

from bench.run.cluster import shards, slurm, squeue
from bench.run.cluster.slurm import SlurmError
from bench.run.plan import matrix, profiles
from bench.run.plan.budget import parse_duration, shown
from bench.run.plan.jobs import Job, plan
from bench.run.store import runid
from bench.run.store.resume import resume_command as command_line

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


def _profile_for_nodes(name: str) -> str:
    """A shipped profile by name; a file by its absolute path, which the nodes can open on
    the shared file system."""
    return name if name in profiles.shipped_profiles() else str(Path(name).resolve())


def _given(args: argparse.Namespace) -> dict[str, Any]:
    """The Slurm options on the command line, by ``slurm.Options`` field; None: not given."""
    extra = None if args.slurm_extra is None else slurm.parse_extra(args.slurm_extra)
    return {"partition": args.slurm_partition, "gpus_per_node": args.slurm_gpus_per_node,
            "time_min": args.slurm_time, "account": args.slurm_account,
            "constraint": args.slurm_constraint, "extra": extra,
            "budget": getattr(args, "budget", None)}


def _studies(only: Sequence[str]) -> str:
    return " ".join(f"--only {s}" for s in only) if only else "no --only (every study)"


def resume_command(sub: slurm.Submission) -> str:
    """The whole command that finishes ``sub``: its profile, shards, studies and the Slurm
    options its latest submission used, so that it is right as printed."""
    options = slurm.Options.recorded(sub.options)
    return command_line(sub.profile, sub.only, executor="slurm", shards=sub.count,
                        rest=[*options.flags(), "--run-id", sub.run_id, "--reports",
                              sub.reports])


def check_args(args: argparse.Namespace) -> None:
    """Refuse what a Slurm run cannot take. The missing extra is said first: no other fix
    matters before it."""
    slurm.submitit_module()  # a missing extra is one line, before anything is written
    if not args.profile:
        raise SlurmError("--executor slurm needs --profile: the nodes' hardware is not known "
                         "here")
    if args.shard:
        raise SlurmError("--shard is what each Slurm job runs; do not combine it with "
                         "--executor slurm")
    if args.out:  # each shard has a folder of its own: one --out cannot name them all
        raise SlurmError("--out is not used with --executor slurm: each shard writes "
                         "REPORTS/<machine>/<run-id>-shard<k>; choose the folders with "
                         "--reports and --run-id")
    if getattr(args, "budget", None) and args.slurm_time is not None:
        raise SlurmError("--budget sets each shard job's time limit (the budget and the "
                         "planner's margin); give --budget or --slurm-time, not both")
    if args.launcher != "forkserver":
        raise SlurmError("--launcher is not used with --executor slurm: each shard runs the "
                         "fork server on its node")


@dataclass
class ClusterPlan:
    """What a Slurm run submits: the profile with its studies, the processes of each shard,
    the Slurm options (and, for a resume, the notes on those given that differ from the
    record), and the record of the run a resume finishes."""

    profile: matrix.Profile
    only: list[str]
    planned: list[int]
    options: slurm.Options
    changed: list[str]
    record: slurm.Submission | None


def prepare(args: argparse.Namespace, reports: Path) -> ClusterPlan:
    """The plan of ``bench run --executor slurm``. A ``--resume`` takes the studies, the shard
    count and every Slurm option left out from the run's record. ``SlurmError``,
    ``ProfileError`` or ``ShardError`` when it cannot be made."""
    record: slurm.Submission | None = None
    given = _given(args)
    whole = profiles.load_profile(args.profile)
    if args.resume:
        found = args.run_id or slurm.latest_submission(reports, whole.name)
        if found is None:
            raise SlurmError(f"nothing to resume: no Slurm run of profile {whole.name} under "
                             f"{reports}")
        record = slurm.Submission.load(slurm.slurm_folder(reports, str(found)))
        if args.only is not None and sorted(set(args.only)) != sorted(set(record.only)):
            raise SlurmError(f"run {found} was submitted with {_studies(record.only)}; a "
                             "resume runs the same studies: leave --only out")
    only = record.only if record is not None else args.only or []
    count = args.shards if args.shards is not None else \
        record.count if record is not None else 1
    profile = matrix.select(whole, only)
    options, changed = slurm.merged(
        given, slurm.Options.recorded(record.options) if record is not None else None)
    options.check()
    planned = [len(p) for p in shards.split(plan(profile), count)]
    return ClusterPlan(profile, only, planned, options, changed, record)


def _same_split(p: ClusterPlan) -> slurm.Submission:
    """The run's record, once its shards are those this profile and ``--shards`` give."""
    assert p.record is not None
    sub = p.record
    if sub.planned != p.planned:
        raise SlurmError(f"run {sub.run_id} was split into {sub.count} shards of "
                         f"{sub.planned} processes; this profile and --shards give {p.planned}")
    return sub


def _studies_of(shard: Sequence[Job], whole: Sequence[Job]) -> str:
    """The studies a shard's jobs belong to, each with the share of its cells it holds where
    that is not all of them: ``modes, shapes (3 of 5 cells)``."""
    def cells(jobs: Sequence[Job]) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for j in jobs:
            out.setdefault(j.study.name, set()).add(j.cell.cell_id)
        return out
    mine, every = cells(shard), cells(whole)
    return ", ".join(name if len(held) == len(every[name])
                     else f"{name} ({len(held)} of {len(every[name])} cells)"
                     for name, held in mine.items())


def preview_new(p: ClusterPlan, stream: TextIO) -> None:
    """``--dry-run`` of a new Slurm run: each shard's processes and studies, the time limit
    its job would get and why, and how to estimate a shard where it will run (the nodes'
    hardware is not known here); nothing is submitted."""
    jobs = plan(p.profile)
    split = shards.split(jobs, len(p.planned))
    for k, shard in enumerate(split, start=1):
        print(f"shard {k}/{len(split)}: {len(shard)} processes, {_studies_of(shard, jobs)}",
              file=stream)
    why = (f"--budget {shown(parse_duration(p.options.budget))} and the planner's margin; "
           "each shard stops cleanly at its budget, and --resume submits what is left"
           if p.options.budget else "--slurm-time, 60 unless given")
    print(f"each shard is one Slurm job on one node, with a time limit of "
          f"{p.options.limit_min} min ({why})", file=stream)
    node = " ".join(shlex.quote(a) for a in (
        "python", "-m", "bench", "run", "--profile", p.profile.name,
        *(a for study in p.only for a in ("--only", study)), "--shard", f"K/{len(split)}",
        "--dry-run"))
    print(f"the nodes' hardware is not known here: on a node, {node} estimates shard K "
          "there; nothing was submitted", file=stream)


def preview_resubmit(p: ClusterPlan, queue: squeue.Queue, stream: TextIO) -> None:
    """``--resume --dry-run``: each shard's state, then the shards a resume would submit
    again, refused as the resume would be; nothing is submitted."""
    sub = _same_split(p)
    now = slurm.states(sub, queue)
    todo = slurm.unfinished(sub, queue, now)
    slurm.summary(now, stream)
    print(f"a resume of run {sub.run_id} would submit again: shard(s) "
          f"{', '.join(map(str, todo)) or 'none'}", file=stream)


def resubmit(p: ClusterPlan, reports: Path, queue: squeue.Queue) -> tuple[slurm.Submission, str]:
    """A resume: its unfinished shards submitted again under the options now chosen; the
    submission, and the line that says what was done."""
    sub = _same_split(p)
    run_id = sub.run_id
    with slurm.resume_lock(sub):  # no second resume between the look and the submit
        todo = slurm.unfinished(sub, queue)
        if todo:
            sub.options = asdict(p.options)  # what the shards now run under
            slurm.submit(sub.profile, sub.planned, reports, run_id, p.options, record=sub,
                         which=todo)
    used, notes = " ".join(p.options.flags()), "; ".join(p.changed)
    if not todo:
        how = f"; {notes} was not used" if p.changed else ""
    elif p.changed:
        how = f", with {notes} given here; Slurm options now: {used}"
    else:
        how = f", with the recorded Slurm options: {used}"
    return sub, (f"resumed run {run_id}: shard(s) {', '.join(map(str, todo)) or 'none'} "
                 f"submitted again{how}")


def submit_new(p: ClusterPlan, args: argparse.Namespace, reports: Path
               ) -> tuple[slurm.Submission, str]:
    """A new run: one job per shard; the submission, and the line that names its jobs."""
    run_id = args.run_id or runid.new_run_id(p.profile.name)
    if (slurm.slurm_folder(reports, run_id) / slurm.RECORD).exists():
        raise SlurmError(f"run {run_id} was already submitted; pass --resume to finish it")
    sub = slurm.submit(_profile_for_nodes(args.profile), p.planned, reports, run_id, p.options,
                       only=p.only)
    return sub, (f"submitted run {run_id}: {sub.count} shard job(s) "
                 f"{' '.join(j[-1] for j in sub.jobs)}")
