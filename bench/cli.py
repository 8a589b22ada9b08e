"""Command line: ``python -m bench run | env | check | status | report | advise``.

The one parser, and the dispatch to each command's module (``bench.commands``). Bad input ends
in one ``error:`` line naming the problem and the valid choices, exit code 2, and nothing
written (``bench.commands.exits``). torch is only ever imported in child processes; ``report``
never imports it at all, and its own dependencies load only when it runs.
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn

from bench.commands import advise
from bench.commands import check as check_command
from bench.commands import env as env_command
from bench.commands import report as report_command
from bench.commands import run as run_command
from bench.commands import status as status_command
from bench.commands.exits import USAGE
from bench.run.cluster.executor import add_arguments as add_cluster  # argparse only
from bench.run.execute import launch
from bench.run.plan import matrix


class Parser(argparse.ArgumentParser):
    """argparse with the project's one-line errors: the problem and the valid choices as
    argparse words them, and where the options are listed, instead of a usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(USAGE, f"error: {message} (see {self.prog} --help)\n")


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
    run.add_argument("--budget", metavar="DURATION",
                     help="stop cleanly before a replicate that would end past DURATION "
                     "(90s, 9m, 1h30m) from the start, the studies that fit first; "
                     "--resume finishes the run")
    run.add_argument("--launcher", choices=("forkserver", "spawn"), default="forkserver",
                     help="forkserver (torch imported once) or spawn (a fresh interpreter)")
    run.add_argument("--no-adaptive", action="store_true",
                     help="run the planned replicates only: no extra rounds for comparisons "
                     "still undecided (the profile's [adaptive] table)")
    run.add_argument("--run-id", help="name the run folder: letters, digits, '.', '_', '-' "
                     "(default: a UTC time and the profile)")
    run.add_argument("--shard", metavar="K/N", help="run only shard K of N (what each cluster "
                     "job runs; see --executor slurm)")
    add_cluster(run)
    run.set_defaults(func=run_command.cmd_run)
    status = sub.add_parser(
        "status", help="the shards of a cluster run: jobs, states, rows",
        description="One line per shard of a cluster run, then one for the run. Exit 0 when "
                    "every shard is complete, 1 when a shard stopped short and no job of it is "
                    "queued (--resume submits it), 3 while shards are still queued or running "
                    "or Slurm did not answer about them.")
    status.add_argument("run_id", metavar="RUN_ID")
    status.add_argument("--reports", default="reports", help="root of the results tree")
    status.set_defaults(func=status_command.cmd_status)
    env = sub.add_parser("env", help="print the environment fingerprint as JSON")
    env.add_argument("--launcher", choices=("forkserver", "spawn"), default="spawn")
    env.set_defaults(func=env_command.cmd_env)
    check = sub.add_parser("check", help="plausibility checks on run directories")
    check.add_argument("runs", nargs="+", metavar="RUN_DIR")
    check.add_argument("--limit", type=int, default=20, help="findings to print per check")
    check.set_defaults(func=check_command.cmd_check)
    report = sub.add_parser("report", help="build the report site from results CSVs")
    from bench.report.options import add_arguments  # argparse only: no pandas here

    add_arguments(report)
    report.set_defaults(func=report_command.cmd_report)
    adv = sub.add_parser("advise", help="which knobs to turn on for one model (yours: "
                         "pkg.module:factory or file.py:factory), measured here")
    advise.add_arguments(adv)
    adv.set_defaults(func=_advise)
    return parser


def _advise(args: argparse.Namespace) -> int:
    return advise.cmd_advise(args, launch.by_name)


#: Options whose value may begin with "-" (a negative duration), which argparse would take
#: for an option and answer "expected one argument": joined to it, the value reaches the
#: duration's own error, which names the valid forms.
_DASHED_VALUES = ("--budget",)


def _joined(argv: list[str]) -> list[str]:
    out: list[str] = []
    for arg in argv:
        if out and out[-1] in _DASHED_VALUES and arg.startswith("-") and arg[1:2].isdigit():
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(_joined(sys.argv[1:] if argv is None else argv))
    return int(args.func(args))
