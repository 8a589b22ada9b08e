"""``python -m bench run``: measure a profile here, or on a Slurm cluster (``--executor
slurm``: one job per shard, ``bench.run.cluster``).

A run stopped by a signal exits 128 + its number (130 SIGINT, 143 SIGTERM, 140 SIGUSR2,
Slurm's time-limit warning), one stopped because its folder could not be written (a full
disk, a read-only folder) exits 74 with one ``error:`` line; both keep every row already
written and print how to resume.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from bench.commands import unmeasured
from bench.commands.base import Command
from bench.commands.exits import fail
from bench.run.cluster import shards
from bench.run.cluster.executor import add_arguments as add_cluster  # argparse only
from bench.run.cluster.executor import local_refusal
from bench.run.execute import hooks, launch, session
from bench.run.execute import probe as probing
from bench.run.execute.interrupts import EXIT_CODES, INTERRUPTS
from bench.run.execute.launch import Launcher
from bench.run.plan import dryrun, estimate, learned, matrix, profiles
from bench.run.plan.adaptive import dry_run_line
from bench.run.plan.budget import Budget, Ending, ending_lines, parse_duration, too_short
from bench.run.plan.jobs import Job
from bench.run.protocol import Probe
from bench.run.store import check, runid
from bench.run.store.resume import resume_command
from bench.run.store.store import StoreError

FAULT_ENV = "TORCH_KNOBS_FAULT"


class RunCommand(Command):
    """Measure a profile: here, one shard of a cluster run (``--shard``), or on Slurm
    (``--executor slurm``, whose options ``bench.run.cluster.executor`` declares beside the
    code that reads them)."""

    name = "run"
    help = "run a benchmark profile (one process per replicate)"

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--profile", help="a shipped profile "
                            f"({', '.join(profiles.shipped_profiles())}) or a path to a TOML "
                            "file; default: gpu if CUDA is found, else cpu")
        parser.add_argument("--out", help="run directory (default: REPORTS/<machine>/<run-id>)")
        parser.add_argument("--reports", default="reports", help="root of the results tree")
        parser.add_argument("--resume", action="store_true",
                            help="finish a run: skip replicates already ok under this "
                            "fingerprint")
        parser.add_argument("--only", action="append", metavar="STUDY",
                            help="run only this study (repeatable)")
        parser.add_argument("--dry-run", action="store_true",
                            help="list the cells with an estimated duration, run nothing")
        parser.add_argument("--budget", metavar="DURATION",
                            help="stop cleanly before a replicate that would end past DURATION "
                            "(90s, 9m, 1h30m) from the start, the studies that fit first; "
                            "--resume finishes the run")
        parser.add_argument("--launcher", choices=("forkserver", "spawn"), default="forkserver",
                            help="forkserver (torch imported once) or spawn (a fresh "
                            "interpreter)")
        parser.add_argument("--no-adaptive", action="store_true",
                            help="run the planned replicates only: no extra rounds for "
                            "comparisons still undecided (the profile's [adaptive] table)")
        parser.add_argument("--run-id", help="name the run folder: letters, digits, '.', '_', "
                            "'-' (default: a UTC time and the profile)")
        parser.add_argument("--shard", metavar="K/N", help="run only shard K of N (what each "
                            "cluster job runs; see --executor slurm)")
        add_cluster(parser)  # --executor and the Slurm options

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        started = time.monotonic()  # a --budget counts from here: the probe is part of the run
        if args.run_id is not None and (why := runid.problem(args.run_id)):
            return fail(why)
        if args.executor == "slurm":  # first: without submitit, nothing else is worth saying
            return _slurm(args)
        refused = local_refusal(args)  # a Slurm option a local run would silently ignore
        if refused:
            return fail(refused)
        try:
            budget = Budget(parse_duration(args.budget), started) if args.budget is not None \
                else None
            profile = matrix.select(profiles.load_profile(args.profile), args.only) \
                if args.profile else None
            hook = hooks.from_spec(os.environ.get(hooks.SIGNAL_ENV, ""))
        except (matrix.ProfileError, ValueError) as exc:
            return fail(str(exc))
        ending = _Ending()
        code = 0
        # One handler for the whole command: the first SIGINT/SIGTERM/SIGUSR2 stops the run, and any
        # signal after it, or during the close-down, is noted and the close-down finishes.
        with INTERRUPTS.installed() as signals:
            try:
                with launch.by_name(args.launcher) as launcher:  # the one owner: leaving ends it
                    try:
                        code = _run(args, launcher, profile, hook, ending, budget, started)
                    finally:
                        signals.closing()
                        hook("closing", "")
            except KeyboardInterrupt as exc:  # before the run began (the probe), or in its set-up
                code = EXIT_CODES.get(getattr(exc, "signum", signal.SIGINT), 130)
            code = signals.exit_code(code)
            _finish(ending, code)
        return code


@dataclass
class _Ending:
    """What the end of ``bench run`` reports: where the run writes, and how it ended."""

    out: Path | None = None  # set once the run has begun writing
    resume: str = ""  # the command that finishes the run
    counts: dict[str, int] = field(default_factory=dict)
    store_error: StoreError | None = None
    budget: Ending | None = None  # what a budgeted run left
    adaptive: tuple[str, ...] = ()  # what it says of its adaptive replicates


def _finish(ending: _Ending, code: int) -> None:
    """The last lines: what was done, what ``bench check`` finds in the run (its exit code
    stays the run's), why the cells not measured were not (``unmeasured``) and, for a run
    that stopped early, how to resume it."""
    out = ending.out
    if out is None:
        if code in EXIT_CODES.values():
            print("interrupted before the run began; nothing was written", file=sys.stderr)
        return
    if ending.store_error is not None:  # one line: what failed, what is safe, what next
        print(f"error: {ending.store_error}; the run stopped, and the rows already written "
              f"in {out} are intact; once it can be written again, resume with: "
              f"{ending.resume}", file=sys.stderr)
        return
    print(session.summary(code, ending.counts, out), file=sys.stderr)
    for line in ending.adaptive:
        print(line, file=sys.stderr)
    for line in check.ending_lines(out):
        print(line, file=sys.stderr)
    unmeasured.say(out, unmeasured.RUN)
    left = ending.budget
    if left is not None and not code:
        for line in ending_lines(left):
            print(line, file=sys.stderr)
    if code or (left is not None and left.before is not None):
        print(f"resume with: {ending.resume}", file=sys.stderr)


def _run(args: argparse.Namespace, launcher: Launcher, profile: matrix.Profile | None,
         hook: hooks.Hook, ending: _Ending, budget: Budget | None = None,
         started: float | None = None) -> int:
    try:
        with probing.probe_folder() as tmp:
            probe = probing.probe(launcher, tmp, models=session.user_checks(profile))
    except RuntimeError as exc:
        return fail(str(exc))
    try:
        if profile is None:
            name = "gpu" if probe.cuda else "cpu"
            print(f"profile: {name} (chosen from the hardware found)", file=sys.stderr)
            profile = matrix.select(profiles.load_profile(name), args.only)
        profile, jobs = session.planned(profile, probe)
        if getattr(args, "no_adaptive", False):  # the planned replicates alone
            profile = replace(profile, adaptive=None)
    except matrix.ProfileError as exc:
        return fail(str(exc))
    if args.shard:  # one shard of a cluster run: its own cells, in the plan's order
        try:
            k, n = shards.parse(args.shard)
            jobs = shards.select(jobs, k, n)
        except shards.ShardError as exc:
            return fail(str(exc))
    try:
        with probing.probe_folder() as tmp:
            probe = probing.paced(launcher, tmp, probe, Path(args.reports),
                                  [j.cell for j in jobs], profile.pace_window_s)
    except RuntimeError as exc:
        return fail(str(exc))
    shard = ({"spec": args.shard, "slurm_job_id": os.environ.get("SLURM_JOB_ID", "")}
             if args.shard else None)  # which part of which cluster run this folder is
    if args.dry_run:
        return _dry_run(args, profile, probe, jobs, budget, shard)
    if budget is not None:
        short = too_short(budget, time.monotonic(), estimate.jobs_s(
            jobs, probe, learned.history(Path(args.reports), probe.env)))
        if short:
            return fail(short)
    try:
        opened = session.open_run(profile, probe, jobs, reports=Path(args.reports),
                                  out=args.out, resume=args.resume, run_id=args.run_id,
                                  shard=shard,
                                  budget_s=budget.total_s if budget is not None else None)
    except session.SessionError as exc:
        return fail(str(exc))
    ending.out = opened.out
    ending.resume = resume_command(  # a shard resumes only its own cells
        args.profile or profile.name, args.only or [],
        rest=[*(("--shard", args.shard) if args.shard else ()), "--out", str(opened.out),
              *(("--budget", args.budget) if budget is not None else ())])
    ended = session.execute(opened, launcher, probe, fault=os.environ.get(FAULT_ENV, ""),
                            hook=hook, budget=budget, since=started)
    ending.counts, ending.store_error, ending.budget = (ended.counts, ended.store_error,
                                                        ended.budget)
    ending.adaptive = ended.adaptive
    return ended.code


def _dry_run(args: argparse.Namespace, profile: matrix.Profile, probe: Probe, jobs: list[Job],
             budget: Budget | None, shard: dict[str, str] | None) -> int:
    """The plan and its estimate; with ``--resume``, what that run has left, refused as the
    resume itself would be (another machine's run, a changed plan); nothing is written."""
    if not args.resume:
        costs = learned.history(Path(args.reports), probe.env)
        dryrun.print_dry_run(jobs, probe, budget=budget, costs=costs,
                             window_s=profile.pace_window_s)
        _say(dry_run_line(jobs, profile.adaptive, probe, costs))
        return 0
    try:
        left = session.preview_resume(profile, probe, jobs, reports=Path(args.reports),
                                      out=args.out, shard=shard)
    except session.SessionError as exc:
        return fail(str(exc))
    todo = left.todo
    print(f"resuming {left.out} (sitting {left.sitting}): {len(jobs) - len(todo)} of "
          f"{len(jobs)} processes already done, {len(todo)} left")
    if todo:
        dryrun.print_dry_run(todo, probe, budget=budget, costs=left.costs,
                             known=left.seconds(probe), window_s=profile.pace_window_s)
    if left.looks is not None:  # the rule the run recorded, less what its rows hold
        _say(dry_run_line(jobs, left.looks.rule, probe, left.costs, left.looks))
    return 0


def _say(line: str | None) -> None:
    if line:
        print(line)


def _slurm(args: argparse.Namespace) -> int:
    """``bench run --executor slurm``: plan, split, submit (or, with ``--resume``, submit the
    unfinished shards again), then follow the shards unless ``--no-wait``."""
    from bench.run.cluster import executor, slurm, squeue  # only for a Slurm run

    reports = Path(args.reports).resolve()
    try:
        executor.check_args(args)
        cluster = executor.prepare(args, reports)
    except (matrix.ProfileError, slurm.SlurmError, shards.ShardError) as exc:
        return fail(str(exc))
    queue = squeue.Queue()
    if args.dry_run and cluster.record is not None:  # a resume: what it would submit
        try:
            executor.preview_resubmit(cluster, queue, sys.stdout)
        except slurm.SlurmError as exc:
            return fail(str(exc))
        return 0
    if args.dry_run:
        executor.preview_new(cluster, sys.stdout)
        return 0
    try:
        sub, said = (executor.resubmit(cluster, reports, queue) if cluster.record is not None
                     else executor.submit_new(cluster, args, reports))
    except slurm.SlurmError as exc:
        return fail(str(exc))
    print(said, file=sys.stderr)
    if args.no_wait:
        print(f"follow with: python -m bench status {sub.run_id} --reports {args.reports}",
              file=sys.stderr)
        return 0
    code = slurm.watch(sub, queue)
    if code and code != slurm.EXIT_LEFT:
        print(f"resume with: {executor.resume_command(sub)}", file=sys.stderr)
    return code
