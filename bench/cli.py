"""Command line: ``python -m bench run | env | check | status | report | advise``.

Bad input ends in one ``error:`` line naming the problem and the valid choices, exit code 2,
and nothing written. A run stopped by a signal exits 128 + its number (130 SIGINT, 143
SIGTERM, 140 SIGUSR2, Slurm's time-limit warning), one stopped because its folder could not be
written (a full disk, a read-only folder) exits 74 with one ``error:`` line; both keep every
row already written and print how to resume.
torch is only ever imported in child processes; ``report`` never imports it at all.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn

from bench.commands import advise
from bench.run import hooks, matrix, runner, session
from bench.run.cluster import shards
from bench.run.interrupts import EXIT_CODES, INTERRUPTS
from bench.run.launch import ForkServerLauncher, Launcher, SpawnLauncher
from bench.run.store import StoreError

FAULT_ENV = "TORCH_KNOBS_FAULT"


def _launcher(name: str) -> Launcher:
    return SpawnLauncher() if name == "spawn" else ForkServerLauncher()


def _fail(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


def cmd_run(args: argparse.Namespace) -> int:
    if args.executor == "slurm":  # first: without submitit, nothing else is worth saying
        from bench.run.cluster import executor as cluster  # only for a Slurm run

        return cluster.cmd_slurm(args)
    from bench.run.cluster.executor import local_refusal  # argparse only, as in build_parser

    refused = local_refusal(args)  # a Slurm option a local run would silently ignore
    if refused:
        return _fail(refused)
    try:
        profile = matrix.select(matrix.load_profile(args.profile), args.only) if args.profile \
            else None
        hook = hooks.from_spec(os.environ.get(hooks.SIGNAL_ENV, ""))
    except (matrix.ProfileError, ValueError) as exc:
        return _fail(str(exc))
    ending = _Ending()
    code = 0
    # One handler for the whole command: the first SIGINT/SIGTERM/SIGUSR2 stops the run, and any
    # signal after it, or during the close-down, is noted and the close-down finishes.
    with INTERRUPTS.installed() as signals:
        try:
            with _launcher(args.launcher) as launcher:  # the one owner: leaving it ends it
                try:
                    code = _run(args, launcher, profile, hook, ending)
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


def _finish(ending: _Ending, code: int) -> None:
    """The last lines: what was done and, for a run that stopped early, how to resume it."""
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
    counts = " ".join(f"{k}={v}" for k, v in sorted(ending.counts.items()))
    verb = "interrupted" if code else "done"
    print(f"{verb}: {counts or 'nothing to run'}; results in {out}{runner.logs_hint(out)}",
          file=sys.stderr)
    if code:
        print(f"resume with: {ending.resume}", file=sys.stderr)


def _run(args: argparse.Namespace, launcher: Launcher, profile: matrix.Profile | None,
         hook: hooks.Hook, ending: _Ending) -> int:
    try:
        with runner.probe_folder() as tmp:
            probe = runner.probe(launcher, tmp, models=session.user_checks(profile))
    except RuntimeError as exc:
        return _fail(str(exc))
    try:
        if profile is None:
            name = "gpu" if probe.cuda else "cpu"
            print(f"profile: {name} (chosen from the hardware found)", file=sys.stderr)
            profile = matrix.select(matrix.load_profile(name), args.only)
        profile, jobs = session.planned(profile, probe)
    except matrix.ProfileError as exc:
        return _fail(str(exc))
    if args.shard:  # one shard of a cluster run: its own cells, in the plan's order
        try:
            k, n = shards.parse(args.shard)
            jobs = shards.select(jobs, k, n)
        except shards.ShardError as exc:
            return _fail(str(exc))
    if args.dry_run:
        runner.print_dry_run(jobs, probe)
        return 0
    shard = ({"spec": args.shard, "slurm_job_id": os.environ.get("SLURM_JOB_ID", "")}
             if args.shard else None)  # which part of which cluster run this folder is
    try:
        opened = session.open_run(profile, probe, jobs, reports=Path(args.reports),
                                  out=args.out, resume=args.resume, run_id=args.run_id,
                                  shard=shard)
    except session.SessionError as exc:
        return _fail(str(exc))
    ending.out = opened.out
    ending.resume = " ".join(shlex.quote(a) for a in [  # a shard resumes only its own cells
        "python", "-m", "bench", "run", "--profile", args.profile or profile.name,
        *(a for study in args.only or [] for a in ("--only", study)),
        *(("--shard", args.shard) if args.shard else ()),
        "--out", str(opened.out), "--resume"])
    ended = session.execute(opened, launcher, probe, fault=os.environ.get(FAULT_ENV, ""),
                            hook=hook)
    ending.counts, ending.store_error = ended.counts, ended.store_error
    return ended.code


def cmd_env(args: argparse.Namespace) -> int:
    with _launcher(args.launcher) as launcher:
        try:
            with runner.probe_folder() as tmp:
                probe = runner.probe(launcher, tmp)
        except RuntimeError as exc:
            return _fail(str(exc))
    print(json.dumps(probe.env, indent=2, sort_keys=True))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from bench.run import check as checks

    failed = 0
    for run_dir in map(Path, args.runs):
        if not (run_dir / "results.csv").is_file():
            return _fail(f"{run_dir} has no results.csv")
        n, findings = checks.check_run(run_dir)
        bad = {f.check for f in findings}
        print(f"{run_dir}: {n} rows")
        for check in checks.CHECKS:
            count = sum(f.check == check for f in findings)
            print(f"  {'FAIL' if check in bad else 'ok  '} {check}" + (
                f" ({count} findings)" if count else ""))
        for f in findings[: args.limit]:
            print(f"    {f.where}: {f.problem}")
        failed += bool(findings)
    return 1 if failed else 0


class Parser(argparse.ArgumentParser):
    """argparse with the project's one-line errors: the problem and the valid choices as
    argparse words them, and where the options are listed, instead of a usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"error: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="python -m bench",
        description="Measure PyTorch backend settings (cudnn.benchmark, determinism, TF32, "
                    "AMP, channels_last) and CPU vs GPU, and publish the results.")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run a benchmark profile (one process per replicate)")
    run.add_argument("--profile", help=f"a shipped profile ({', '.join(matrix.shipped_profiles())})"
                     " or a path to a TOML file; default: gpu if CUDA is found, else cpu")
    run.add_argument("--out", help="run directory (default: REPORTS/<machine>/<run-id>)")
    run.add_argument("--reports", default="reports", help="root of the results tree")
    run.add_argument("--resume", action="store_true",
                     help="finish a run: skip replicates already ok under this fingerprint")
    run.add_argument("--only", action="append", metavar="STUDY",
                     help="run only this study (repeatable)")
    run.add_argument("--dry-run", action="store_true",
                     help="list the cells with an estimated duration, run nothing")
    run.add_argument("--launcher", choices=("forkserver", "spawn"), default="forkserver",
                     help="forkserver (torch imported once) or spawn (a fresh interpreter)")
    run.add_argument("--run-id", help="name the run folder (default: a UTC time and the profile)")
    run.add_argument("--shard", metavar="K/N", help="run only shard K of N (what each cluster "
                     "job runs; see --executor slurm)")
    from bench.run.cluster.executor import add_arguments as add_cluster  # argparse only

    add_cluster(run)
    run.set_defaults(func=cmd_run)
    status = sub.add_parser(
        "status", help="the shards of a cluster run: jobs, states, rows",
        description="One line per shard of a cluster run, then one for the run. Exit 0 when "
                    "every shard is complete, 1 when a shard stopped short and no job of it is "
                    "queued (--resume submits it), 3 while shards are still queued or running "
                    "or Slurm did not answer about them.")
    status.add_argument("run_id", metavar="RUN_ID")
    status.add_argument("--reports", default="reports", help="root of the results tree")
    status.set_defaults(func=cmd_status)
    env = sub.add_parser("env", help="print the environment fingerprint as JSON")
    env.add_argument("--launcher", choices=("forkserver", "spawn"), default="spawn")
    env.set_defaults(func=cmd_env)
    check = sub.add_parser("check", help="plausibility checks on run directories")
    check.add_argument("runs", nargs="+", metavar="RUN_DIR")
    check.add_argument("--limit", type=int, default=20, help="findings to print per run")
    check.set_defaults(func=cmd_check)
    report = sub.add_parser("report", help="build the report site from results CSVs")
    from bench.report.options import add_arguments  # argparse only: no pandas here

    add_arguments(report)
    report.set_defaults(func=cmd_report)
    adv = sub.add_parser("advise", help="which knobs to turn on for one model (yours: "
                         "pkg.module:factory or file.py:factory), measured here")
    advise.add_arguments(adv)
    adv.set_defaults(func=cmd_advise)
    return parser


def cmd_status(args: argparse.Namespace) -> int:
    from bench.run.cluster import executor as cluster

    return cluster.cmd_status(args)


def cmd_advise(args: argparse.Namespace) -> int:
    return advise.cmd_advise(args, _launcher)


def cmd_report(args: argparse.Namespace) -> int:
    from bench.report import build  # the report's dependencies, loaded only for this command

    return int(build.main(args))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    return int(args.func(args))
