"""Speed target: timed work (cold passes and steady iterations) >= 90% of a run's wall time,
and the run's estimate within 15% of it. A script, not a test: it makes a real run.

It runs a profile (default ``cpu``) into a temporary folder the way ``bench run`` does (the
probe, the plan, the fork server, one process per replicate), then prints where the wall time
went, phase by phase (``bench.run.store.breakdown``), and the estimate made before the run against
the wall time measured. With the numerics check on (the studies that set ``numerics = true``)
it prints the check's seconds too: by the plan's estimate before the run (``--estimate-only``
stops there, in seconds) and as the rows record them (``num_time_s``) after it. The adaptive
replicates a run adds after its plan (``bench.run.plan.adaptive``) are printed apart: the
estimate never prices them, so both targets are judged on the plan's processes alone.

    python tests/speed/timed_work.py [--profile cpu] [--only STUDY ...] [--reports reports] [--keep]

The estimate is the one ``bench run`` makes: learned from the committed runs under
``--reports``. With ``--keep`` the run is written where ``bench run`` writes it (a new run
folder under ``--reports``), so the run that measured the figure can be kept as a result.
"""

from __future__ import annotations

import argparse
import csv
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.run.execute import probe as probing  # noqa: E402
from bench.run.execute import session  # noqa: E402
from bench.run.execute.launch import ForkServerLauncher  # noqa: E402
from bench.run.plan import dryrun, estimate, learned, matrix, profiles  # noqa: E402
from bench.run.store import breakdown  # noqa: E402
from bench.schema import RESULTS_FILE  # noqa: E402

#: Timed work's least share of the run's wall time.
TARGET_SHARE = 0.90
#: The estimate's largest error against the wall time, either way.
TARGET_ERROR = 0.15


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--reports", default=str(ROOT / "reports"),
                    help="committed runs the estimate learns from")
    ap.add_argument("--keep", action="store_true",
                    help="write the run under --reports, as bench run does, instead of a "
                         "temporary folder")
    ap.add_argument("--estimate-only", action="store_true",
                    help="print the plan's estimate of the numerics' share and stop")
    args = ap.parse_args()
    profile = matrix.select(profiles.load_profile(args.profile), args.only)
    if args.estimate_only:
        return estimated_share(profile, Path(args.reports))
    timings: list[breakdown.JobTiming] = []
    with tempfile.TemporaryDirectory(prefix="timed-work-") as tmp:
        start = time.monotonic()
        with ForkServerLauncher() as launcher:
            with probing.probe_folder() as folder:
                probe = probing.probe(launcher, folder, models=session.user_checks(profile))
                probed = time.monotonic()
                bound, jobs = session.planned(profile, probe)
                probe = probing.paced(launcher, folder, probe, Path(args.reports),
                                      [j.cell for j in jobs])
                paced = time.monotonic()
            opened = session.open_run(bound, probe, jobs, reports=Path(args.reports),
                                      out=None if args.keep else f"{tmp}/run")
            guesses = estimate.jobs_s(jobs, probe, opened.costs)
            guess = sum(guesses)
            planned_n = len(opened.todo)  # the plan's processes; adaptive ones come after
            ended = session.execute(opened, launcher, probe, timings=timings, progress=False,
                                    since=start)
        wall = time.monotonic() - start
        checked = numerics_seconds(Path(opened.out) / RESULTS_FILE)
    print(f"run folder: {opened.out}" if args.keep else "run folder: removed (no --keep)")
    if ended.code:
        sys.exit(f"the run ended with exit code {ended.code}")
    # The adaptive replicates run after the plan (no budget bounds them here) and the
    # estimate never prices them: the targets are judged on the plan's jobs alone.
    planned, extras = timings[:planned_n], timings[planned_n:]
    extra_s = sum(t.end - t.begin for t in extras)
    if extras:
        whole = breakdown.breakdown(timings, wall)
        print(f"with its {len(extras)} adaptive replicates ({extra_s:.1f} s, not in the "
              f"estimate): timed work {whole.timed_s:.1f} s of {wall:.1f} s wall: "
              f"{whole.share:.1%}; without them:")
    wall -= extra_s
    spent = breakdown.breakdown(planned, wall)
    for line in breakdown.lines(spent):
        print(line)
    probe_s, pace_s = probed - start, paced - probed
    print(f"outside jobs: the probe {probe_s:.1f} s (the fork server's import of torch, then "
          f"one child), the pace {pace_s:.1f} s, the rest "
          f"{max(spent.outside_s - probe_s - pace_s, 0.0):.1f} s")
    for line in breakdown.study_lines(breakdown.untimed_by_study(planned)):
        print(line)
    pace_note = dryrun.pace_line(opened.costs)
    if pace_note:
        print(pace_note)
    print(f"numerics check: {checked:.1f} s, {checked / wall:.1%} of the wall time "
          f"(outside the timed windows; target <= {1 - TARGET_SHARE:.0%})")
    if checked:
        print(harness_line(spent, checked))
    for line in by_study([j.study.name for j in jobs], guesses, planned):
        print(line)
    err = (guess - wall) / wall
    print(f"estimate {guess:.1f} s against {wall:.1f} s measured: {err:+.1%}")
    missed = []
    if spent.share < TARGET_SHARE:
        missed.append(f"timed work {spent.share:.1%} of the wall time "
                      f"(target >= {TARGET_SHARE:.0%})")
    if abs(err) > TARGET_ERROR:
        missed.append(f"the estimate off by {err:+.1%} (target within {TARGET_ERROR:.0%})")
    for line in missed:
        print(f"OVER target: {line}")
    return 1 if missed else 0


def by_study(names: list[str], guesses: list[float],
             timings: list[breakdown.JobTiming]) -> list[str]:
    """Each study's estimate against the seconds its jobs took, largest error first: where
    the estimate's error lies (the run's time outside jobs is in neither)."""
    guessed: dict[str, float] = {}
    for name, s in zip(names, guesses):
        guessed[name] = guessed.get(name, 0.0) + s
    took: dict[str, float] = {}
    for t in timings:
        took[t.study] = took.get(t.study, 0.0) + (t.end - t.begin)
    rows = sorted(guessed, key=lambda n: -abs(took.get(n, 0.0) - guessed[n]))
    out = ["the estimate by study (estimated, took, error):"]
    for name in rows:
        spent = took.get(name, 0.0)
        err = f"{(guessed[name] - spent) / spent:+.0%}" if spent else "(not run)"
        out.append(f"  {name:<16} {guessed[name]:7.1f} s {spent:7.1f} s  {err}")
    return out


def harness_line(spent: breakdown.Breakdown, checked: float) -> str:
    """Timed work's share of the wall time less the numerics check: what the harness alone
    (processes, builds, rows, probes) leaves, so a missed target says whether a cheaper check
    could meet it."""
    rest = spent.wall_s - checked
    share = spent.timed_s / rest if rest > 0 else 0.0
    verdict = "within" if share >= TARGET_SHARE else "under"
    return (f"without the numerics check: timed work {spent.timed_s:.1f} s of {rest:.1f} s: "
            f"{share:.1%}, {verdict} the {TARGET_SHARE:.0%} target by itself")


def numerics_seconds(results: Path) -> float:
    """The seconds the rows of a run spent in the numerics check (``num_time_s``)."""
    if not results.is_file():
        return 0.0
    with open(results, newline="", encoding="utf-8") as f:
        return sum(float(r.get("num_time_s") or 0.0) for r in csv.DictReader(f))


def estimated_share(profile: matrix.Profile, reports: Path) -> int:
    """The plan's estimate of the numerics check's seconds against the whole run's."""
    with ForkServerLauncher() as launcher, probing.probe_folder() as folder:
        probe = probing.probe(launcher, folder, models=session.user_checks(profile))
    _, jobs = session.planned(profile, probe)
    costs = learned.history(reports, probe.env)
    total = sum(estimate.jobs_s(jobs, probe, costs))
    checks = sum(estimate.numerics_s(j.cell, probe.cores) for j in jobs
                 if j.op == "measure" and j.study.settings.checks_numerics(j.cell, j.replicate))
    print(f"by the plan's estimate: the numerics check {checks:.0f} s of {total:.0f} s "
          f"({checks / total:.1%}); timed work at most {1 - checks / total:.1%} of it")
    return 0 if checks / total <= 1 - TARGET_SHARE else 1


if __name__ == "__main__":
    raise SystemExit(main())
