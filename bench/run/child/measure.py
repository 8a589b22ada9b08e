"""Timing: the cold pass apart from the steady state, per-iteration times, adaptive stop.

Why per-iteration times instead of a block mean: a mean over a block hides the tails and a
single slow outlier (an autotune, a page fault) moves it. We keep every iteration and report
the median with an order-statistic confidence interval.

Why CUDA events: ``time.perf_counter`` around an unsynchronised CUDA call measures only the
kernel launch. Events recorded on the stream measure device time; we synchronise only when
we need to read them, so the sync does not sit inside the timed region.

The timer is injectable (``Timer``) so the stopping rule can be tested with a fake clock.
"""

from __future__ import annotations

import functools
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from bench.run.plan.matrix import Settings


class Timer(Protocol):
    """Times one call of ``fn`` and returns seconds; ``flush`` finishes pending timings."""

    def time(self, fn: Callable[[], Any]) -> None: ...

    def flush(self) -> list[float]: ...

    def sync(self) -> None: ...


class CpuTimer:
    """perf_counter around the call; CPU work is synchronous, so this is the real time."""

    def __init__(self, clock: Callable[[], float] = time.perf_counter) -> None:
        self._clock = clock
        self._pending: list[float] = []

    def time(self, fn: Callable[[], Any]) -> None:
        t0 = self._clock()
        fn()
        self._pending.append(self._clock() - t0)

    def flush(self) -> list[float]:
        out, self._pending = self._pending, []
        return out

    def sync(self) -> None:
        return None


class CudaEventTimer:
    """A pair of CUDA events per iteration; read (after one synchronise) on flush."""

    def __init__(self, torch: Any) -> None:
        self._torch = torch
        self._pending: list[tuple[Any, Any]] = []

    def time(self, fn: Callable[[], Any]) -> None:
        start = self._torch.cuda.Event(enable_timing=True)
        end = self._torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        self._pending.append((start, end))

    def flush(self) -> list[float]:
        self._torch.cuda.synchronize()
        out = [s.elapsed_time(e) / 1000.0 for s, e in self._pending]
        self._pending = []
        return out

    def sync(self) -> None:
        self._torch.cuda.synchronize()


class SyncedTimer(CpuTimer):
    """perf_counter with a device synchronise on both sides: wall time including the device.

    Used for the CUDA cold pass (what a user waits for) and for MPS."""

    def __init__(self, synchronize: Callable[[], Any]) -> None:
        super().__init__()
        self._synchronize = synchronize

    def time(self, fn: Callable[[], Any]) -> None:
        self._synchronize()
        super().time(lambda: (fn(), self._synchronize()))

    def sync(self) -> None:
        self._synchronize()


def quantile(sorted_xs: Sequence[float], q: float) -> float:
    """Linear-interpolated quantile of already sorted data (numpy's default method)."""
    if not sorted_xs:
        raise ValueError("no data")
    pos = (len(sorted_xs) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_xs) - 1)
    return sorted_xs[lo] + (sorted_xs[hi] - sorted_xs[lo]) * (pos - lo)


def median_ci(xs: Sequence[float], z: float = 1.96) -> tuple[float, float]:
    """Distribution-free 95% CI of the median from order statistics.

    Ranks n/2 ± z·√n/2 (the normal approximation to the binomial). It makes no assumption
    about the shape of the timing distribution, which is usually skewed to the right.
    """
    s = sorted(xs)
    n = len(s)
    if n < 3:
        return (s[0], s[-1]) if s else (math.nan, math.nan)
    half = z * math.sqrt(n) / 2
    lo = max(0, math.floor(n / 2 - half))
    hi = min(n - 1, math.ceil(n / 2 + half) - 1)
    return s[lo], s[hi]


def ci_rel(xs: Sequence[float]) -> float:
    """Half-width of the median's CI relative to the median."""
    if len(xs) < 3:
        return math.inf
    lo, hi = median_ci(xs)
    med = statistics.median(xs)
    return (hi - lo) / 2 / med if med > 0 else math.inf


@dataclass(frozen=True)
class Summary:
    """The steady state in eight figures (the ``steady_*`` columns). p95 and p99 are the
    latency tails an inference reader asks for; with fewer than 100 iterations p99 is
    interpolated between the two slowest."""

    median: float
    p10: float
    p90: float
    p95: float
    p99: float
    mean: float
    ci_rel: float
    iters: int


def summarize(xs: Sequence[float]) -> Summary:
    s = sorted(xs)
    return Summary(median=quantile(s, 0.5), p10=quantile(s, 0.1), p90=quantile(s, 0.9),
                   p95=quantile(s, 0.95), p99=quantile(s, 0.99), mean=statistics.fmean(s),
                   ci_rel=ci_rel(s), iters=len(s))


def cold_pass(step: Callable[[int], Any], schedule: Sequence[Any], timer: Timer) -> tuple[
        list[float], int]:
    """Run and time, one by one, the first iteration of each distinct shape.

    This is where cudnn.benchmark autotunes, so it is timed on its own and never mixed into
    the steady state. Returns the times and the iteration index to continue from.
    """
    seen: set[Any] = set()
    times: list[float] = []
    i = 0
    for i, shape in enumerate(schedule):
        if shape in seen:
            continue
        seen.add(shape)
        timer.sync()
        timer.time(functools.partial(step, i))
        times.extend(timer.flush())
    return times, len(schedule)


def steady_state(step: Callable[[int], Any], start: int, settings: Settings, timer: Timer,
                 clock: Callable[[], float] = time.perf_counter, period: int = 1,
                 on_start: Callable[[], None] | None = None
                 ) -> tuple[list[float], list[int]]:
    """Warm up (``Settings.warmup``), then time every iteration until the stopping rule is met.

    Stop once at least ``min_iters`` iterations and ``min_time_s`` seconds are done *and* the
    95% CI half-width of the median is within ``ci_target`` of it. ``max_time_s`` stops a noisy
    cell early, but never below ``min_iters`` (a median of one iteration says nothing);
    ``max_iters`` stops it regardless. Iterations run in whole cycles of the shape schedule
    (``period``) so every shape is equally represented. ``on_start`` is called when the
    warm-up is over (the moment the run's time breakdown starts the steady state at).
    """
    i = start
    for _ in range(settings.warmup(period)):
        step(i)
        i += 1
    timer.sync()
    if on_start is not None:
        on_start()
    times: list[float] = []
    iters: list[int] = []
    t0 = clock()
    chunk = max(period, 1)
    while True:
        for _ in range(chunk):
            timer.time(functools.partial(step, i))
            iters.append(i)
            i += 1
        times.extend(timer.flush())
        n = len(times)
        elapsed = clock() - t0
        if n >= settings.max_iters:
            break
        if n >= settings.min_iters and (elapsed >= settings.max_time_s or (
                elapsed >= settings.min_time_s and ci_rel(times) <= settings.ci_target)):
            break
        # read the events in growing chunks: fewer syncs, but a quick stop when iterations
        # are slow
        chunk = max(period, min(64, n // 4, settings.max_iters - n) // period * period)
    return times, iters
