"""The coverage table the Methodology page quotes: how often a 95% interval holds the true
ratio in simulated comparisons, per method, replicates a side and noise scenario. A script,
not a test (``tests/report/test_coverage.py`` asserts the same figures with fewer trials).

Noise model (``test_coverage.simulate``): 3% log-normal noise between replicates, times a 1%
shift per sitting, each round of replicates its own sitting; the shift hits both arms alike
(shared) or each arm separately. The last scenario is a caveat, not a claim: two sittings
(a run and a resume) whose shifts hit each arm separately, so several replicates of an arm
share one shift the interval cannot see; ``bench.sittings`` exists to catch such a sitting.

    python tests/speed/coverage.py [--trials N]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT)]

from tests.report.test_coverage import (  # noqa: E402
    LOOKS,
    MAX_WIDTH,
    RATIOS,
    STEP,
    adaptive,
    new_coverage,
    old_coverage,
)

SCENARIOS = (("shared", 0, "sitting shared by both arms"),
             ("separate", 0, "sitting hits each arm"),
             ("separate", 2, "2 sittings, each arm its own shift (caveat)"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=20_000, help="trials per cell")
    args = parser.parse_args()
    t = args.trials
    print(f"Coverage of the true ratio, mean over ratios {', '.join(map(str, RATIOS))}; "
          f"{t:,} trials each (bootstrap: {t // 10:,})\n")
    print(f"| Method | n a side | {' | '.join(s[2] for s in SCENARIOS)} |")
    print(f"| --- | --- |{' --- |' * len(SCENARIOS)}")
    for name, ns in (("Welch t on logs (new)", (3, 5, 10)),
                     ("percentile bootstrap (old)", (3, 5, 10))):
        for n in ns:
            cells = []
            for scenario, sittings, _ in SCENARIOS:
                if name.startswith("Welch"):
                    got = [new_coverage(1000 * n + i, r, n, scenario, t, sittings=sittings)
                           for i, r in enumerate(RATIOS)]
                else:
                    got = [old_coverage(2000 * n + i, r, n, scenario, t // 10,
                                        sittings=sittings) for i, r in enumerate(RATIOS)]
                cells.append(f"{100 * np.mean(got):.1f}%")
            print(f"| {name} | {n} | {' | '.join(cells)} |")
    cells = []
    for scenario, _, _ in SCENARIOS[:2]:
        got = [adaptive(3000 + i, r, scenario, t)[0] for i, r in enumerate(RATIOS)]
        cells.append(f"{100 * np.mean(got):.1f}% ({', '.join(f'{100 * c:.1f}' for c in got)})")
    print(f"| adaptive: 3 a side, +{STEP} while undecided, {LOOKS} looks, width {MAX_WIDTH} "
          f"| 3–{3 + STEP * (LOOKS - 1)} | {' | '.join(cells)} | — |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
