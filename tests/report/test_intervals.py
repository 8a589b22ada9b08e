"""The report's vectorised intervals are ``bench.intervals``' numbers: the runner decides with
that module and the pages print these, so the two must agree."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from bench import intervals
from bench.report.analysis.intervals import CONFIDENCE, MIN_OK_REPLICATES, median_ci, ratio_ci


def _samples(seed: int, count: int) -> tuple[list[tuple[float, ...]], list[tuple[float, ...]]]:
    """Pairs of replicate figures of every size from 3 to 10 a side, with noise of 0.1% to
    30% and ratios around 1."""
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for _ in range(count):
        nx, ny = rng.integers(3, 11, size=2)
        sx, sy = np.exp(rng.uniform(math.log(1e-3), math.log(0.3), size=2))
        xs.append(tuple(rng.lognormal(rng.normal(-2, 1), sx, nx)))
        ys.append(tuple(rng.lognormal(rng.normal(-2, 1), sy, ny)))
    return xs, ys


def test_constants_are_the_runner_side_ones():
    assert (CONFIDENCE, MIN_OK_REPLICATES) == (intervals.CONFIDENCE, intervals.MIN_OK_REPLICATES)


@pytest.mark.parametrize("looks", [1, 2, 3])
def test_ratio_ci_is_welchs_interval_on_logs(looks):
    xs, ys = _samples(looks, 200)
    est, lo, hi = ratio_ci(xs, ys, looks=looks)
    for i, (x, y) in enumerate(zip(xs, ys)):
        want = intervals.log_ratio_interval(x, y, looks=looks)
        assert want is not None
        point = float(np.median(x) / np.median(y))
        assert est[i] == pytest.approx(point, rel=1e-12)
        # widened only to take in the point estimate
        assert lo[i] == pytest.approx(min(want[0], point), rel=1e-9)
        assert hi[i] == pytest.approx(max(want[1], point), rel=1e-9)


@pytest.mark.parametrize("looks", [1, 2, 3])
def test_median_ci_is_a_t_interval_on_logs(looks):
    xs, _ = _samples(10 + looks, 200)
    est, lo, hi = median_ci(xs, looks=looks)
    for i, x in enumerate(xs):
        want = intervals.log_interval(x, looks=looks)
        assert want is not None
        point = float(np.median(x))
        assert est[i] == pytest.approx(point, rel=1e-12)
        assert lo[i] == pytest.approx(min(want[0], point), rel=1e-9)
        assert hi[i] == pytest.approx(max(want[1], point), rel=1e-9)


def test_looks_per_pair():
    """An array of looks gives each pair its own level, as if computed one at a time."""
    xs, ys = _samples(7, 30)
    looks = np.arange(30) % 3 + 1
    _, lo, hi = ratio_ci(xs, ys, looks=looks)
    _, mlo, mhi = median_ci(xs, looks=looks)
    for i in range(30):
        one = ratio_ci(xs[i:i + 1], ys[i:i + 1], looks=int(looks[i]))
        assert (lo[i], hi[i]) == (one[1][0], one[2][0])
        cell = median_ci(xs[i:i + 1], looks=int(looks[i]))
        assert (mlo[i], mhi[i]) == (cell[1][0], cell[2][0])
    # more looks, a wider interval at each look
    _, lo1, hi1 = ratio_ci(xs, ys, looks=1)
    _, lo3, hi3 = ratio_ci(xs, ys, looks=3)
    assert np.all(lo3 <= lo1) and np.all(hi3 >= hi1) and np.any(hi3 / lo3 > hi1 / lo1)
    with pytest.raises(ValueError, match="looks"):
        ratio_ci(xs, ys, looks=0)


def test_fewer_than_three_replicates_give_no_interval():
    est, lo, hi = ratio_ci([(1.0, 1.1), (1.0, 1.1, 1.2), (), (1.0, 0.0, 1.2)],
                           [(1.0, 1.1, 1.2), (1.0, 1.1), (1.0, 1.1, 1.2), (1.0, 1.1, 1.2)])
    assert np.all(np.isnan(lo)) and np.all(np.isnan(hi))
    assert est[0] == pytest.approx(1.05 / 1.1) and math.isnan(est[2])
    est, lo, hi = median_ci([(1.0, 1.1), (), (2.0, -1.0, 3.0)])
    assert np.all(np.isnan(lo)) and np.all(np.isnan(hi))
    assert est[0] == pytest.approx(1.05) and math.isnan(est[1]) and est[2] == 2.0
    assert intervals.log_ratio_interval((1.0, 1.1), (1.0, 1.1, 1.2)) is None  # the same rule


def test_a_point_outside_its_interval_is_taken_in():
    """A skewed sample: the median lies below the mean of logs' interval, which is widened
    down to it (and only on that side)."""
    x = (1.0,) * 6 + (1.001,) + (3.0,) * 5
    want = intervals.log_interval(x)
    assert want is not None and float(np.median(x)) < want[0]
    est, lo, hi = median_ci([x])
    assert lo[0] == est[0] == 1.0005 and hi[0] == pytest.approx(want[1], rel=1e-9)
    y = (1.0,) * 12
    want = intervals.log_ratio_interval(x, y)
    assert want is not None and want[0] > 1.0005
    est, lo, hi = ratio_ci([x], [y])
    assert lo[0] == est[0] == 1.0005 and hi[0] == pytest.approx(want[1], rel=1e-9)


def test_identical_replicates_give_the_point_without_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est, lo, hi = ratio_ci([(0.3,) * 3, (0.7,) * 5], [(0.1,) * 3, (0.7,) * 4])
        mest, mlo, mhi = median_ci([(0.1,) * 3, (1e-7,) * 10])
        empty = ratio_ci([], [])
    assert np.array_equal(lo, est) and np.array_equal(hi, est)
    assert est[1] == 1.0
    assert np.array_equal(mlo, mest) and np.array_equal(mhi, mest)
    assert list(mest) == [0.1, 1e-7]
    assert all(len(a) == 0 for a in empty)
