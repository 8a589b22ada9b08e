"""What the child's telemetry sampler costs a launch-bound cell. A script, not a test.

The CUDA meter (``bench.run.child.nvml``) runs a thread during the timed window that samples
power, clocks, utilisation, temperature and throttle reasons 20 times a second; on an H200,
launch-bound cells ran about twice as slow as in an older run, and the thread is a suspect
(it takes the GIL, and each NVML call goes to the driver). This times one launch-bound cell in
fresh children, alternately with the sampler on and off (``TORCH_KNOBS_NO_SAMPLER=1``, through
two fork servers started with and without it), and prints the median step time each way and
the relative cost ``on / off - 1`` with its 95% interval (``bench.intervals``: Welch's
t-interval on the logs of the children's medians).

On a GPU box, ``python tests/speed/sampler_cost.py`` measures it on CUDA: ResNet-18 inference
at batch 1 in fp32 (``bench.run.plan.pace.CUDA_LAUNCH``), with the real sampler and NVML.

Without CUDA the cell is MobileNetV3-Small at batch 1, 32x32, on one thread (a step of many
small operators: as launch-bound as a CPU gets). There the real children have no sampler to
turn off (the CPU's meter reads RAPL's counters at the window's ends only), so the real
comparison is one of a thing with itself; the script then also measures a stand-in
(``--stand-in``, the default without CUDA): the same cell, timed the child's way
(``bench.run.child.measure``) in a fresh interpreter each, with the sampler's own thread and
loop (``NvmlMeter``) running over an NVML stub that answers at once. That is the sampler's
cost on the Python side (the thread waking and taking the GIL), not the driver's.

    python tests/speed/sampler_cost.py [--pairs N] [--stand-in | --no-stand-in]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from types import SimpleNamespace
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.intervals import log_ratio_interval  # noqa: E402
from bench.run.child.nvml import NO_SAMPLER_ENV  # noqa: E402
from bench.run.execute.launch import ForkServerLauncher  # noqa: E402
from bench.run.execute.outcome import run_child  # noqa: E402
from bench.run.plan import pace  # noqa: E402
from bench.run.plan.matrix import Cell, Settings  # noqa: E402
from bench.run.protocol import new_task  # noqa: E402

#: The CPU's launch-bound-ish cell: many small operators, one thread.
CPU_CELL = Cell(device="cpu", model="mobilenet_v3_small", resolution=32, batch_size=1,
                cpu_threads=1)
#: About 1.5 s of steady iterations a child: hundreds of steps, medians to a few tenths of
#: a percent.
SETTINGS = Settings(replicates=1, warmup_iters=10, min_iters=200, min_time_s=1.5,
                    max_iters=100_000, max_time_s=2.0, ci_target=0.002, timeout_s=180.0)


def has_cuda() -> bool:
    code = "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"
    return subprocess.run([sys.executable, "-c", code], capture_output=True).returncode == 0


def launcher(sampler: bool) -> ForkServerLauncher:
    """A fork server whose children run with the sampler on or off (it is read from the
    environment the server, and so each child, inherits)."""
    saved = os.environ.pop(NO_SAMPLER_ENV, None)
    if not sampler:
        os.environ[NO_SAMPLER_ENV] = "1"
    try:
        found = ForkServerLauncher()
        found._ready_server()  # started now, with this environment
    finally:
        os.environ.pop(NO_SAMPLER_ENV, None)
        if saved is not None:
            os.environ[NO_SAMPLER_ENV] = saved
    return found


def real_child(launch: ForkServerLauncher, cell: Cell, workdir: Path, tag: str) -> float:
    """One fresh child's steady median, the runner's way."""
    task = new_task("measure", cell, SETTINGS, 0, workdir, suffix=tag)
    out = run_child(launch, task, SETTINGS.timeout_s)
    if out.status != "ok" or out.record is None or not out.record.metrics.steady_median_s:
        raise SystemExit(f"child {tag} failed: {out.status}: {out.reason}")
    return out.record.metrics.steady_median_s


class StubNvml:
    """An NVML that answers every call at once: the sampler's own Python, nothing else."""

    NVML_CLOCK_SM = 1
    NVML_TEMPERATURE_GPU = 0

    def nvmlDeviceGetTotalEnergyConsumption(self, handle: Any) -> float:
        return 1000.0

    def nvmlDeviceGetPowerUsage(self, handle: Any) -> float:
        return 300_000.0

    def nvmlDeviceGetClockInfo(self, handle: Any, kind: int) -> int:
        return 1980

    def nvmlDeviceGetUtilizationRates(self, handle: Any) -> Any:
        return SimpleNamespace(gpu=90)

    def nvmlDeviceGetTemperature(self, handle: Any, kind: int) -> int:
        return 60

    def nvmlDeviceGetCurrentClocksEventReasons(self, handle: Any) -> int:
        return 0


def inner(sampler: bool) -> None:
    """In a fresh interpreter: ``CPU_CELL`` timed as the child times it, with the sampler's
    thread over ``StubNvml`` running through the window (``sampler``) or not; prints its
    steady median and how many samples the thread took."""
    import torch

    from bench.run.child import flags, measure, nvml, workloads

    flags.apply(torch, CPU_CELL)
    wl = workloads.build(torch, CPU_CELL)
    timer = measure.CpuTimer()
    _, start = measure.cold_pass(wl.step, wl.schedule, timer)
    meter = nvml.NvmlMeter(StubNvml(), "stub", threaded=sampler)
    times, _ = measure.steady_state(wl.step, start, SETTINGS, timer,
                                    period=len(wl.schedule), on_start=meter.start)
    reading = meter.stop()
    print(json.dumps({"median": statistics.median(times), "samples": reading.samples}))


def stand_in_child(sampler: bool) -> float:
    done = subprocess.run([sys.executable, __file__, "--inner", "on" if sampler else "off"],
                          capture_output=True, text=True, timeout=300, check=True)
    return float(json.loads(done.stdout.strip().splitlines()[-1])["median"])


def summary(label: str, on: list[float], off: list[float]) -> None:
    ratio = statistics.median(on) / statistics.median(off)
    found = log_ratio_interval(on, off)
    interval = (f"95% interval {100 * (found[0] - 1):+.2f}% to {100 * (found[1] - 1):+.2f}%"
                if found else "no interval (too few children)")
    print(f"{label}:\n"
          f"  sampler on : median step {1e3 * statistics.median(on):.4f} ms "
          f"({len(on)} children: {', '.join(f'{1e3 * x:.4f}' for x in on)})\n"
          f"  sampler off: median step {1e3 * statistics.median(off):.4f} ms "
          f"({len(off)} children: {', '.join(f'{1e3 * x:.4f}' for x in off)})\n"
          f"  cost (on / off - 1): {100 * (ratio - 1):+.2f}% (of the medians); {interval}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=6, help="children each way (default 6)")
    parser.add_argument("--stand-in", action=argparse.BooleanOptionalAction, default=None,
                        help="also time the stand-in sampler (default: without CUDA only)")
    parser.add_argument("--inner", choices=["on", "off"], help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.inner:
        inner(args.inner == "on")
        return 0
    cuda = has_cuda()
    cell = pace.CUDA_LAUNCH if cuda else CPU_CELL
    print(f"{'CUDA' if cuda else 'no CUDA'}: {cell.name}, {args.pairs} fresh children each "
          f"way, alternating (python {sys.version.split()[0]})", flush=True)
    on: list[float] = []
    off: list[float] = []
    with tempfile.TemporaryDirectory(prefix="sampler-cost-") as tmp, \
            launcher(True) as with_it, launcher(False) as without:
        for i in range(args.pairs):  # alternate which goes first, against drift
            for sampler in ((True, False) if i % 2 == 0 else (False, True)):
                (on if sampler else off).append(real_child(
                    with_it if sampler else without, cell, Path(tmp),
                    f"{'on' if sampler else 'off'}-{i}"))
    summary("real children" + ("" if cuda else " (no CUDA: no sampler runs in either)"),
            on, off)
    if args.stand_in or (args.stand_in is None and not cuda):
        on, off = [], []
        for i in range(args.pairs):
            for sampler in ((True, False) if i % 2 == 0 else (False, True)):
                (on if sampler else off).append(stand_in_child(sampler))
        summary(f"stand-in sampler (NvmlMeter's thread over a stub NVML), {CPU_CELL.name}",
                on, off)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
