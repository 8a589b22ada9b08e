"""Command line: ``python -m bench run | env | check | report``.

Bad input ends in one ``error:`` line naming the problem and the valid choices, exit code 2,
and nothing written. A run stopped by a signal exits 130 (SIGINT) or 143 (SIGTERM), one
stopped because its folder could not be written (a full disk, a read-only folder) exits 74
with one ``error:`` line; both keep every row already written and print how to resume.
torch is only ever imported in child processes; ``report`` never imports it at all.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench.run import hooks, identity, matrix, runner
from bench.run.interrupts import EXIT_CODES, INTERRUPTS
from bench.run.launch import ForkServerLauncher, Launcher, SpawnLauncher
from bench.run.progress import Progress
from bench.run.store import RunStore, StoreError
from bench.schema import SchemaError

FAULT_ENV = "TORCH_KNOBS_FAULT"


def _launcher(name: str) -> Launcher:
    return SpawnLauncher() if name == "spawn" else ForkServerLauncher()


def _fail(msg: str) -> int:
    print(f"error: {msg}", file=sys.stderr)
    return 2


def cmd_run(args: argparse.Namespace) -> int:
    try:
        profile = matrix.select(matrix.load_profile(args.profile), args.only) if args.profile \
            else None
        hook = hooks.from_spec(os.environ.get(hooks.SIGNAL_ENV, ""))
    except (matrix.ProfileError, ValueError) as exc:
        return _fail(str(exc))
    session = _Session()
    code = 0
    # One handler for the whole command: the first SIGINT/SIGTERM stops the run, and any
    # signal after it, or during the close-down, is noted and the close-down finishes.
    with INTERRUPTS.installed() as signals:
        try:
            with _launcher(args.launcher) as launcher:  # the one owner: leaving it ends it
                try:
                    code = _run(args, launcher, profile, hook, session)
                finally:
                    signals.closing()
                    hook("closing", "")
        except KeyboardInterrupt as exc:  # before the run began (the probe), or in its set-up
            code = EXIT_CODES.get(getattr(exc, "signum", signal.SIGINT), 130)
        code = signals.exit_code(code)
        _finish(session, code)
    return code


@dataclass
class _Session:
    """What the end of ``bench run`` reports: where the run writes, and how it ended."""

    out: Path | None = None  # set once the run has begun writing
    resume: str = ""  # the command that finishes the run
    counts: dict[str, int] = field(default_factory=dict)
    store_error: StoreError | None = None


def _finish(session: _Session, code: int) -> None:
    """The last lines: what was done and, for a run that stopped early, how to resume it."""
    out = session.out
    if out is None:
        if code in EXIT_CODES.values():
            print("interrupted before the run began; nothing was written", file=sys.stderr)
        return
    if session.store_error is not None:  # one line: what failed, what is safe, what next
        print(f"error: {session.store_error}; the run stopped, and the rows already written "
              f"in {out} are intact; once it can be written again, resume with: "
              f"{session.resume}", file=sys.stderr)
        return
    counts = " ".join(f"{k}={v}" for k, v in sorted(session.counts.items()))
    verb = "interrupted" if code else "done"
    print(f"{verb}: {counts or 'nothing to run'}; results in {out}{runner.logs_hint(out)}",
          file=sys.stderr)
    if code:
        print(f"resume with: {session.resume}", file=sys.stderr)


def _run(args: argparse.Namespace, launcher: Launcher, profile: matrix.Profile | None,
         hook: hooks.Hook, session: _Session) -> int:
    with tempfile.TemporaryDirectory(prefix="torch-knobs-probe-") as tmp:
        try:
            probe = runner.probe(launcher, Path(tmp))
        except RuntimeError as exc:
            return _fail(str(exc))
    try:
        if profile is None:
            name = "gpu" if probe.cuda else "cpu"
            print(f"profile: {name} (chosen from the hardware found)", file=sys.stderr)
            profile = matrix.select(matrix.load_profile(name), args.only)
        matrix.check_models(profile, probe.models)
    except matrix.ProfileError as exc:
        return _fail(str(exc))
    jobs = runner.plan(profile)
    if args.dry_run:
        runner.print_dry_run(jobs, probe)
        return 0
    env = dict(probe.env)
    if args.out:
        out = Path(args.out)
    elif args.resume:
        found = runner.latest_run(Path(args.reports), env["machine"], profile.name)
        if found is None:
            return _fail(f"nothing to resume: no run of profile {profile.name} under "
                         f"{Path(args.reports) / env['machine']}")
        out = found
    else:
        out = Path(args.reports) / env["machine"] / runner.new_run_id(profile.name)
    store = RunStore(out)
    if store.exists() and not args.resume:
        return _fail(f"{out} already holds results; pass --resume to finish that run, "
                     f"or choose another --out")
    if args.resume and not store.exists():
        return _fail(f"nothing to resume in {out}: it has no results.csv")
    try:
        old = store.read_env()
        env["run_id"] = (old or {}).get("run_id") or out.name
        env["profile"] = profile.name
        env["planned_rows"] = len(jobs)  # one row per job: the report can tell a partial run
        env["plan"] = identity.plan_of(profile)  # what a resume must match
        if args.resume:  # before anything in the folder is touched
            identity.check_resume(old, probe.env, env["plan"], store.env_path)
        rows = store.open()
        store.write_env(env)
    except (SchemaError, StoreError) as exc:
        return _fail(str(exc))
    for moved in store.aside:
        print(f"set aside {moved}: the end of a file that a killed run left without its "
              "whole record", file=sys.stderr)
    done = runner.completed_keys(rows, env["fingerprint_id"]) if args.resume else set()
    todo = [j for j in jobs if j.key not in done]
    ctx = runner.RunContext(env["run_id"], profile.name, probe,
                            fault=os.environ.get(FAULT_ENV, ""))
    eta = sum(runner.estimate_jobs(todo, probe))
    print(f"run {env['run_id']} on {env['machine']} (fingerprint {env['fingerprint_id']}): "
          f"{len(todo)} processes to run, {len(jobs) - len(todo)} already done, "
          f"~{eta / 60:.1f} min estimated; writing to {out}", file=sys.stderr)
    session.out = out
    session.resume = " ".join(shlex.quote(a) for a in [
        "python", "-m", "bench", "run", "--profile", args.profile or profile.name,
        *(a for study in args.only or [] for a in ("--only", study)),
        "--out", str(out), "--resume"])
    run = runner.Runner(launcher, store, ctx, progress=Progress(len(todo)), hook=hook)
    try:
        return run.run(jobs, done)
    finally:
        run.close()
        session.counts, session.store_error = run.counts, run.store_error


def cmd_env(args: argparse.Namespace) -> int:
    with _launcher(args.launcher) as launcher, \
            tempfile.TemporaryDirectory(prefix="torch-knobs-probe-") as tmp:
        try:
            probe = runner.probe(launcher, Path(tmp))
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


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
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
    run.set_defaults(func=cmd_run)
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
    return parser


def cmd_report(args: argparse.Namespace) -> int:
    from bench.report import build  # the report's dependencies, loaded only for this command

    return int(build.main(args))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    return int(args.func(args))
