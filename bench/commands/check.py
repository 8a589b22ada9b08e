"""``python -m bench check RUN_DIR...``: the plausibility checks of ``bench.run.store.check``
on each run folder, one line per check; exit 1 when any check failed."""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.commands.base import Command
from bench.commands.exits import fail


class CheckCommand(Command):
    """The checks a run ends with, again, on folders already written (copied from another
    machine, or written by an older version)."""

    name = "check"
    help = "plausibility checks on run directories"

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("runs", nargs="+", metavar="RUN_DIR")
        parser.add_argument("--limit", type=int, default=20, help="findings to print per check")

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        from bench.run.store import check as checks

        failed = 0
        for run_dir in map(Path, args.runs):
            if not run_dir.is_dir():
                return fail(f"{run_dir}: not found; bench check takes run folders "
                            f"(<machine>/<run>, each with its results.csv)")
            if not (run_dir / "results.csv").is_file():
                runs = sorted(p.parent.name for p in run_dir.glob("*/results.csv"))
                held = f"; the run folders in it: {', '.join(runs)}" if runs else ""
                return fail(f"{run_dir} has no results.csv: bench check takes run folders "
                            f"(<machine>/<run>){held}")
            n, findings = checks.check_run(run_dir)
            bad = {f.check for f in findings}
            print(f"{run_dir}: {n} rows")
            for check in checks.CHECKS:
                found = [f for f in findings if f.check == check]
                print(f"  {'FAIL' if check in bad else 'ok  '} {check}" + (
                    f" ({len(found)} findings)" if found else ""))
                for f in found[: args.limit]:
                    print(f"    {f.where}: {f.problem}")
                if len(found) > args.limit:
                    print(f"    … and {len(found) - args.limit} more (--limit N shows more)")
            failed += bool(findings)
        return 1 if failed else 0
