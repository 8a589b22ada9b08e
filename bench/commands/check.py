"""``python -m bench check RUN_DIR...``: the plausibility checks of ``bench.run.store.check``
on each run folder, one line per check; exit 1 when any check failed.

``python -m bench check --all reports/``: every run folder under a tree, by every rule a run
must keep to stand in ``reports/`` (``bench.commands.audit``): one line per folder, then one
per finding naming the file, the line and the rule; exit 1 when any run is refused."""

from __future__ import annotations

import argparse
from pathlib import Path

from bench.commands.base import Command
from bench.commands.exits import fail


class CheckCommand(Command):
    """The checks a run ends with, again, on folders already written (copied from another
    machine, or written by an older version)."""

    name = "check"
    help = "plausibility checks on run directories; --all: every rule on a reports tree"
    description = (
        "bench check RUN_DIR...: the plausibility checks on run folders. "
        "bench check --all REPORTS: every run folder under a tree, by the rules a run keeps to "
        "stand in reports/. These refuse a run: the report's schema, the manifest's hashes, "
        "the fingerprint recomputed from env.json (and the rows' against it), measuring code "
        "that no commit of this repository holds, and every plausibility check but the flags "
        "(a figure above its measured ceiling, flags that did not read back, samples that do "
        "not give their row ...). These are flags the report already marks, listed without "
        "refusing: steady drift, throttled, energy window, pipeline start-up, sittings "
        "disagree. See the Guide's Checks page.")

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("runs", nargs="*", metavar="RUN_DIR")
        parser.add_argument("--all", metavar="REPORTS", type=Path, default=None,
                            help="every run folder under this tree, by every rule")
        parser.add_argument("--repo", metavar="DIR", type=Path, default=None,
                            help="with --all: the git checkout whose history holds the "
                                 "measuring code (default: the one this package lives in)")
        parser.add_argument("--limit", type=int, default=20, help="findings to print per check")

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        if args.all is not None:
            if args.runs:
                return fail("bench check takes run folders or --all REPORTS, not both")
            return check_all(args.all, args.limit, args.repo)
        if not args.runs:
            return fail("bench check takes run folders (RUN_DIR...) or --all REPORTS")
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


def check_all(root: Path, limit: int, repo_root: Path | None = None) -> int:
    """Every run folder under ``root`` by every rule (``bench.commands.audit``)."""
    from bench.commands import audit
    from bench.run.store.provenance import repository_root

    if not root.is_dir():
        return fail(f"{root}: not found; bench check --all takes a reports tree "
                    "(reports/<machine>/<run>/)")
    folders = audit.run_folders(root)
    if not folders:
        return fail(f"{root} holds no run folder (<machine>/<run>/results.csv)")
    repo = audit.open_repository(repo_root or repository_root())
    refused = 0
    for run_dir in folders:
        found = audit.audit(run_dir, repo)
        flags = sorted({f.rule for f in found.flags})
        state = "REFUSED" if found.refused else "stands"
        trust = found.manifest.trust.value if found.manifest else "no manifest"
        print(f"{run_dir}: {state}, {found.rows} rows, {trust}"
              + (f"; flags: {', '.join(flags)}" if flags else ""))
        for f in found.refused[:limit]:
            print(f"  {f.line()}")
        if len(found.refused) > limit:
            print(f"  … and {len(found.refused) - limit} more (--limit N shows more)")
        refused += bool(found.refused)
    if not isinstance(repo, Exception):
        repo.close()
    print(f"{len(folders)} runs, {refused} refused")
    return 1 if refused else 0
