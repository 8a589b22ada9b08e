"""Speed target: harness overhead per cell <= 1 s on a 2-core machine. A script, not a test.

Overhead is measured as the runner sees it (``Runner.timings``, what the run's time breakdown
reads): from "start cell" (the runner begins the job) to "model build begins" (the child
reports the moment it starts building the model), plus what follows the child's record (its
exit, and the parent reading it and writing the result row). It is printed side by side with
a naive launcher, ``subprocess.run([python, "-c", ...])``, that re-imports torch and
torchvision per cell.

    python tests/speed/overhead.py [--replicates N]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.run.execute import probe as probing  # noqa: E402
from bench.run.execute import runner  # noqa: E402
from bench.run.execute.launch import ForkServerLauncher  # noqa: E402
from bench.run.plan import profiles  # noqa: E402
from bench.run.plan.jobs import plan  # noqa: E402
from bench.run.store.store import RunStore  # noqa: E402

PROFILE = """
[defaults]
device = "cpu"
model = "mobilenet_v3_small"
resolution = 32
batch_size = 1
replicates = {n}
warmup_iters = 0
min_iters = 1
min_time_s = 0.0
max_time_s = 0.0

[studies.overhead]
mode = "infer"
"""

NAIVE = ("import time, torch, torchvision; "
         "print(time.time())")  # the moment a naive child could start building the model


def harness(n: int) -> list[float]:
    with tempfile.TemporaryDirectory() as tmp:
        tmpdir = Path(tmp)
        path = tmpdir / "p.toml"
        path.write_text(PROFILE.format(n=n))
        profile = profiles.load_profile(str(path))
        with ForkServerLauncher() as launcher:
            probe = probing.probe(launcher, tmpdir)  # starts the server: paid once per run
            store = RunStore(tmpdir / "run")
            store.open()
            ctx = runner.RunContext("speed", "overhead", probe)
            r = runner.Runner(launcher, store, ctx)
            r.run(plan(profile))
            r.close()
        return [(t.build_start - t.begin) + (t.end - t.ended) for t in r.timings
                if t.build_start is not None and t.ended is not None]


def naive(n: int) -> list[float]:
    out = []
    for _ in range(n):
        t0 = time.time()
        proc = subprocess.run([sys.executable, "-c", NAIVE], capture_output=True, text=True,
                              check=True)
        out.append(float(proc.stdout.strip()) - t0)
    return out


#: The harness's median overhead per cell may be at most this many seconds.
TARGET_S = 1.0


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--replicates", type=int, default=10)
    args = ap.parse_args()
    h = harness(args.replicates)
    nv = naive(max(3, args.replicates // 3))
    met = statistics.median(h) <= TARGET_S
    print(f"fork-server harness overhead per cell: median {statistics.median(h):.3f} s, "
          f"max {max(h):.3f} s over {len(h)} cells "
          f"(target: median <= {TARGET_S:g} s: {'within' if met else 'OVER'})")
    print(f"naive subprocess.run re-importing torch: median {statistics.median(nv):.3f} s, "
          f"max {max(nv):.3f} s over {len(nv)} cells")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
