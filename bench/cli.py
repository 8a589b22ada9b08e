"""Command line: ``python -m bench run | env | check | status | report``.

Bad input ends in one ``error:`` line naming the problem and the valid choices, exit code 2,
and nothing written. torch is only ever imported in child processes; ``report`` never
imports it at all.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bench.run import matrix, runner, shards
from bench.run.launch import ForkServerLauncher, Launcher, SpawnLauncher
from bench.run.progress import Progress
from bench.run.store import RunStore
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
    except matrix.ProfileError as exc:
        return _fail(str(exc))
    if args.executor == "slurm":
        from bench.run import cluster  # submitit is only needed, and imported, here

        return cluster.cmd_slurm(args, profile)
    with _launcher(args.launcher) as launcher:  # the one owner: leaving the block ends it
        return _run(args, launcher, profile)


def _run(args: argparse.Namespace, launcher: Launcher, profile: matrix.Profile | None) -> int:
    import os

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
    if args.shard:  # one shard of a cluster run: its own cells, in the plan's order
        try:
            k, n = shards.parse(args.shard)
            jobs = shards.select(jobs, k, n)
        except shards.ShardError as exc:
            return _fail(str(exc))
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
        run_id = args.run_id or runner.new_run_id(profile.name)
        out = Path(args.reports) / env["machine"] / run_id
    store = RunStore(out)
    if store.exists() and not args.resume:
        return _fail(f"{out} already holds results; pass --resume to finish that run, "
                     f"or choose another --out")
    if args.resume and not store.exists():
        return _fail(f"nothing to resume in {out}: it has no results.csv")
    old = store.read_env()
    env["run_id"] = (old or {}).get("run_id") or out.name
    env["profile"] = profile.name
    env["planned_rows"] = len(jobs)  # one row per job: the report can tell a partial run
    if args.shard:  # which part of which cluster run this folder is
        env["shard"] = {"spec": args.shard, "slurm_job_id": os.environ.get("SLURM_JOB_ID", "")}
    try:
        runner.check_fingerprint(store, env)
        store.open()
    except SchemaError as exc:
        return _fail(str(exc))
    store.write_env(env)
    done = runner.completed_keys(store, env["fingerprint_id"]) if args.resume else set()
    todo = [j for j in jobs if j.key not in done]
    ctx = runner.RunContext(env["run_id"], profile.name, probe,
                            fault=os.environ.get(FAULT_ENV, ""))
    eta = sum(runner.estimate_jobs(todo, probe))
    print(f"run {env['run_id']} on {env['machine']} (fingerprint {env['fingerprint_id']}): "
          f"{len(todo)} processes to run, {len(jobs) - len(todo)} already done, "
          f"~{eta / 60:.1f} min estimated; writing to {out}", file=sys.stderr)
    run = runner.Runner(launcher, store, ctx, progress=Progress(len(todo)))
    try:
        code = run.run(jobs, done)
    finally:
        run.close()
    counts = " ".join(f"{k}={v}" for k, v in sorted(run.counts.items()))
    verb = "interrupted" if code else "done"
    print(f"{verb}: {counts or 'nothing to run'}; results in {out}"
          f"{runner.logs_hint(out)}", file=sys.stderr)
    if code:
        print(f"resume with: python -m bench run --profile {args.profile or profile.name} "
              f"--out {out} --resume", file=sys.stderr)
    return code


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
    run.add_argument("--run-id", help="name the run folder (default: a UTC time and the profile)")
    run.add_argument("--shard", metavar="K/N", help="run only shard K of N (what each cluster "
                     "job runs; see --executor slurm)")
    from bench.run.cluster import add_arguments as add_cluster  # argparse only

    add_cluster(run)
    run.set_defaults(func=cmd_run)
    status = sub.add_parser("status", help="the shards of a cluster run: jobs, states, rows")
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
    return parser


def cmd_status(args: argparse.Namespace) -> int:
    from bench.run import cluster

    return cluster.cmd_status(args)


def cmd_report(args: argparse.Namespace) -> int:
    from bench.report import build  # the report's dependencies, loaded only for this command

    return int(build.main(args))


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    return int(args.func(args))
