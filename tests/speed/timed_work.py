"""Speed target: timed work (cold passes and steady iterations) >= 90% of a run's wall time,
and the run's estimate within 15% of it. A script, not a test: it makes a real run.

It runs a profile (default ``cpu``) into a temporary folder the way ``bench run`` does (the
probe, the plan, the fork server, one process per replicate), then prints where the wall time
went, phase by phase (``bench.run.store.breakdown``), and the estimate made before the run against
the wall time measured.

    python tests/speed/timed_work.py [--profile cpu] [--only STUDY ...] [--reports reports] [--keep]

The estimate is the one ``bench run`` makes: learned from the committed runs under
``--reports``. With ``--keep`` the run is written where ``bench run`` writes it (a new run
folder under ``--reports``), so the run that measured the figure can be kept as a result.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.run.execute import probe as probing  # noqa: E402
from bench.run.execute import session  # noqa: E402
from bench.run.execute.launch import ForkServerLauncher  # noqa: E402
from bench.run.plan import dryrun, estimate, matrix, profiles  # noqa: E402
from bench.run.store import breakdown  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--profile", default="cpu")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--reports", default=str(ROOT / "reports"),
                    help="committed runs the estimate learns from")
    ap.add_argument("--keep", action="store_true",
                    help="write the run under --reports, as bench run does, instead of a "
                         "temporary folder")
    args = ap.parse_args()
    profile = matrix.select(profiles.load_profile(args.profile), args.only)
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
            guess = sum(estimate.jobs_s(jobs, probe, opened.costs))
            ended = session.execute(opened, launcher, probe, timings=timings, progress=False,
                                    since=start)
        wall = time.monotonic() - start
    print(f"run folder: {opened.out}" if args.keep else "run folder: removed (no --keep)")
    if ended.code:
        sys.exit(f"the run ended with exit code {ended.code}")
    spent = breakdown.breakdown(timings, wall)
    for line in breakdown.lines(spent):
        print(line)
    probe_s, pace_s = probed - start, paced - probed
    print(f"outside jobs: the probe {probe_s:.1f} s (the fork server's import of torch, then "
          f"one child), the pace {pace_s:.1f} s, the rest "
          f"{max(spent.outside_s - probe_s - pace_s, 0.0):.1f} s")
    for line in breakdown.study_lines(breakdown.untimed_by_study(timings)):
        print(line)
    pace_note = dryrun.pace_line(opened.costs)
    if pace_note:
        print(pace_note)
    err = (guess - wall) / wall
    print(f"estimate {guess:.1f} s against {wall:.1f} s measured: {err:+.1%}")


if __name__ == "__main__":
    main()
