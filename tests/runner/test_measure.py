"""The stopping rule and the statistics, with a fake clock and a fake timer (no torch)."""

from __future__ import annotations

import itertools
import random
import statistics

import pytest

from bench.run.child import measure
from bench.run.plan.matrix import Settings


class FakeTimer:
    """Each timed call 'takes' the next value of ``times``; the fake clock advances by it."""

    def __init__(self, times: list[float]) -> None:
        self.times = itertools.cycle(times)
        self.now = 0.0
        self.pending: list[float] = []
        self.syncs = 0

    def clock(self) -> float:
        return self.now

    def time(self, fn) -> None:  # type: ignore[no-untyped-def]
        fn()
        t = next(self.times)
        self.now += t
        self.pending.append(t)

    def flush(self) -> list[float]:
        out, self.pending = self.pending, []
        return out

    def sync(self) -> None:
        self.syncs += 1


def _run(times: list[float], **kw: float) -> list[float]:
    st = Settings(**{"warmup_iters": 0, "min_iters": 5, "min_time_s": 0.0, "max_iters": 1000,
                     "max_time_s": 1e9, "ci_target": 0.02, **kw})  # type: ignore[arg-type]
    t = FakeTimer(times)
    out, iters = measure.steady_state(lambda i: None, 0, st, t, clock=t.clock)
    assert iters == list(range(len(out)))
    return out


def test_stable_timings_stop_at_min_iters() -> None:
    assert len(_run([0.01])) == 5


def test_min_time_is_respected() -> None:
    out = _run([0.01], min_time_s=1.0)
    assert sum(out) >= 1.0 and len(out) < 200


def test_noisy_timings_run_longer_but_stop_at_the_cap() -> None:
    rng = random.Random(0)
    noisy = _run([rng.uniform(0.01, 0.05) for _ in range(1000)], max_iters=300)
    assert len(noisy) == 300


def test_noise_that_settles_stops_before_the_cap() -> None:
    settling = _run([0.01, 0.03, 0.02, 0.05, 0.015], max_iters=1000)
    assert 5 < len(settling) < 1000


def test_max_time_caps_noisy_cells_but_never_below_min_iters() -> None:
    rng = random.Random(1)
    noisy = [rng.uniform(0.5, 2.0) for _ in range(100)]
    out = _run(noisy, min_iters=4, max_time_s=10.0)
    assert 10.0 <= sum(out) <= 10.0 + 2.0 * 4 and len(out) >= 4
    slow = _run([2.0, 1.0], min_iters=4, max_time_s=1.0)
    assert len(slow) == 4


@pytest.mark.parametrize(("warmup_iters", "untimed"), [(1, 4), (6, 6)])
def test_a_warm_up_covers_at_least_one_full_cycle(warmup_iters: int, untimed: int) -> None:
    st = Settings(warmup_iters=warmup_iters, min_iters=5, min_time_s=0, max_time_s=1e9,
                  ci_target=1.0)
    t = FakeTimer([0.01])
    ran: list[int] = []
    out, iters = measure.steady_state(ran.append, 8, st, t, clock=t.clock, period=4)
    assert len(out) % 4 == 0 and iters[0] == 8 + untimed and ran[:untimed + 1] == list(
        range(8, 8 + untimed + 1))


def test_no_warm_up_is_none_for_a_cycle_of_shapes_too() -> None:
    """``warmup_iters = 0`` (the cold pass warmed every shape) times from the first step."""
    st = Settings(warmup_iters=0, min_iters=5, min_time_s=0, max_time_s=1e9, ci_target=1.0)
    t = FakeTimer([0.01])
    ran: list[int] = []
    out, iters = measure.steady_state(ran.append, 8, st, t, clock=t.clock, period=4)
    assert iters[0] == 8 and ran == iters and len(out) % 4 == 0
    assert [Settings(warmup_iters=w).warmup(p) for w, p in [(0, 4), (2, 1), (2, 3), (0, 1)]] \
        == [0, 2, 3, 0]


def test_cold_pass_times_each_distinct_shape_once() -> None:
    t = FakeTimer([0.5, 0.25])
    seen: list[int] = []
    times, nxt = measure.cold_pass(seen.append, [(8, 224)] * 7 + [(3, 224)], t)
    assert seen == [0, 7] and times == [0.5, 0.25] and nxt == 8


def test_summary_and_median_ci() -> None:
    xs = [float(i) for i in range(1, 102)]
    s = measure.summarize(xs)
    assert s.median == 51.0 == statistics.median(xs)
    assert s.p10 == pytest.approx(11.0) and s.p90 == pytest.approx(91.0)
    assert s.mean == 51.0 and s.iters == 101
    lo, hi = measure.median_ci(xs)
    assert lo < 51 < hi and hi - lo < 25
    assert measure.ci_rel([1.0, 1.0, 1.0, 1.0]) == 0.0


def test_synced_timer_synchronises_inside_the_timed_region() -> None:
    events: list[str] = []
    clock = iter([1.0, 3.5])
    timer = measure.SyncedTimer(lambda: events.append("sync"))
    timer._clock = lambda: next(clock)  # the injectable clock of CpuTimer
    timer.time(lambda: events.append("step"))
    assert events == ["sync", "step", "sync"]
    assert timer.flush() == [2.5]
