"""The run's time breakdown (``nox -s speed``): the phases of a job from its moments, the
run's sum, and the untimed seconds per study, on notes written by hand (no run)."""

from __future__ import annotations

import pytest

from bench.run.store import breakdown
from bench.run.store.breakdown import JobTiming

#: A job: launched at 0, entered at 1, built 1.5 to 3.5, a 1 s cold pass of which 0.8 s was
#: timed, warm-up to 5, a steady window 5 to 9 of which 3.5 s were timed iterations, after to
#: 10, its row written by 10.5.
JOB = JobTiming(begin=0.0, end=10.5, entered=1.0, build_start=1.5, built=3.5, cold_end=4.5,
                steady_start=5.0, steady_end=9.0, ended=10.0, cold_s=0.8, steady_s=3.5,
                study="batch")


def test_a_jobs_moments_are_its_phases() -> None:
    got = breakdown.phases(JOB)
    assert got == pytest.approx({
        "launch": 1.0, "set-up": 0.5, "build": 2.0, "cold pass": 0.8,
        "warm-up": 0.5 + 0.2, "steady state": 3.5, "steady bookkeeping": 0.5, "after": 1.0,
        "row": 0.5, "prime": 0.0})
    assert sum(got.values()) == pytest.approx(JOB.end - JOB.begin), "every second placed once"


def test_a_child_that_left_no_record_is_all_row() -> None:
    lost = JobTiming(begin=2.0, end=7.0, prime_s=1.0)
    got = breakdown.phases(lost)
    assert (got["row"], got["prime"]) == (4.0, 1.0)
    assert sum(got.values()) == pytest.approx(5.0)


def test_the_run_sums_its_jobs_and_what_lies_outside_them() -> None:
    b = breakdown.breakdown([JOB, JOB], wall_s=25.0)
    assert b.timed_s == pytest.approx(2 * (0.8 + 3.5))
    assert b.outside_s == pytest.approx(25.0 - 21.0)
    assert b.share == pytest.approx(8.6 / 25.0)
    assert breakdown.lines(b)[0] == "timed work 8.6 s of 25.0 s wall: 34.4%"


def test_the_untimed_seconds_are_found_by_study() -> None:
    other = JobTiming(begin=0.0, end=4.0, study="shapes")
    by = breakdown.untimed_by_study([JOB, other, JOB])
    assert set(by) == {"batch", "shapes"}
    assert by["batch"]["build"] == pytest.approx(4.0)
    assert "cold pass" not in {n for n, s in by["batch"].items() if s}, "timed: not counted"
    assert sum(by["shapes"].values()) == pytest.approx(4.0)
    first, *rest = breakdown.study_lines(by)[1:]
    assert first.split()[0] == "batch" and "build 4.0" in first
    assert rest[0].split()[0] == "shapes"
