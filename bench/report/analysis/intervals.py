"""Confidence intervals over replicates, many at once: the numbers of ``bench.intervals``,
vectorised.

The unit of replication is the process (algorithm choice can differ from one process to the
next), so every interval here is over replicate figures (each one a replicate's median), never
over iterations. The method is ``bench.intervals``' (read its docstring for why): on the logs
of the positive, finite replicate figures, Welch's t-interval on the difference of two means
for a ratio (``ratio_ci``), a t-interval on one mean for a cell (``median_ci``), each at
``bench.intervals.level(looks)``. A test holds these to that module's numbers.

The point estimates are unchanged: the ratio of the two sides' medians, and a cell's median.
Under log-symmetric noise they estimate the same parameter as the interval (the median is the
geometric mean there), but in a given sample the point can fall just outside the interval; the
interval is then widened to include it, so that no page prints an estimate outside its own
interval. Identical replicates give a zero-width interval at the point.

Performance: no resampling and no loop over pairs. The replicate figures of every pair are laid
end to end in one array; sums per pair are ``np.bincount`` with weights, and the t quantiles are
one ``scipy.stats.t.ppf`` call. Thousands of pairs take milliseconds.

The constants are what the Methodology page quotes, so change them only together with it.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Union

import numpy as np
from scipy import stats as sps

from bench.intervals import CONFIDENCE, MIN_OK_REPLICATES, level

__all__ = ["CONFIDENCE", "MIN_OK_REPLICATES", "median_ci", "ratio_ci"]

#: How many looks each interval's error is split over: one for all, or one per pair.
Looks = Union[int, Sequence[int], np.ndarray]


def _median_last(a: np.ndarray) -> np.ndarray:
    """Median over the last axis; the 3-replicate case (the common one) without a sort."""
    if a.shape[-1] == 3:
        a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
        return np.maximum(np.minimum(a0, a1), np.minimum(np.maximum(a0, a1), a2))
    if a.shape[-1] == 1:
        return a[..., 0]
    return np.asarray(np.median(a, axis=-1))


def _medians(samples: Sequence[Sequence[float]]) -> np.ndarray:
    """The median of each sample (NaN for an empty one), grouped by length to vectorise."""
    out = np.full(len(samples), np.nan)
    groups: dict[int, list[int]] = {}
    for i, s in enumerate(samples):
        groups.setdefault(len(s), []).append(i)
    for k, members in groups.items():
        if k:
            out[np.array(members)] = _median_last(np.array([samples[i] for i in members],
                                                            dtype=float))
    return out


def _log_moments(samples: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per sample: how many positive, finite values it has, and the mean and the variance
    (n − 1 denominator) of their logs; NaN mean and variance below MIN_OK_REPLICATES values.

    Sums are taken about each sample's first log, so identical values give a variance of
    exactly zero (and their mean exactly their log)."""
    m = len(samples)
    lengths = np.fromiter((len(s) for s in samples), dtype=np.int64, count=m)
    values = np.fromiter(itertools.chain.from_iterable(samples), dtype=float,
                         count=int(lengths.sum()))
    seg = np.repeat(np.arange(m), lengths)
    keep = np.isfinite(values) & (values > 0)
    logs, seg = np.log(values[keep]), seg[keep]
    n = np.bincount(seg, minlength=m)
    enough = n >= MIN_OK_REPLICATES
    first = np.zeros(m)
    starts = np.cumsum(n) - n
    first[n > 0] = logs[starts[n > 0]]
    shifted = logs - first[seg]
    with np.errstate(divide="ignore", invalid="ignore"):
        mean = np.bincount(seg, weights=shifted, minlength=m) / n
        dev = shifted - mean[seg]
        var = np.bincount(seg, weights=dev * dev, minlength=m) / (n - 1)
    mean = np.where(enough, first + mean, np.nan)
    var = np.where(enough, var, np.nan)
    return n, mean, var


def _levels(looks: Looks, m: int) -> np.ndarray:
    """``bench.intervals.level`` of each pair's looks (an int for all, or one per pair)."""
    per = np.broadcast_to(np.asarray(looks), (m,))
    if per.size and not np.issubdtype(per.dtype, np.integer):
        raise TypeError(f"looks must be whole numbers, not {per.dtype}")
    kinds, where = np.unique(per, return_inverse=True)
    return np.array([level(int(k)) for k in kinds], dtype=float)[where.reshape(-1)]


def _finish(est: np.ndarray, centre: np.ndarray, half: np.ndarray
            ) -> tuple[np.ndarray, np.ndarray]:
    """exp(centre ∓ half), widened to include the point estimate; where the half width is
    zero (identical replicates), exactly the point."""
    with np.errstate(over="ignore", invalid="ignore"):
        lo, hi = np.exp(centre - half), np.exp(centre + half)
    lo = np.where(est < lo, est, lo)  # NaN compares false: an unknown point widens nothing
    hi = np.where(est > hi, est, hi)
    flat = half == 0
    return np.where(flat, est, lo), np.where(flat, est, hi)


def ratio_ci(
    xs: Sequence[Sequence[float]], ys: Sequence[Sequence[float]], *, looks: Looks = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """median(x)/median(y) per pair, with Welch's t-interval on the difference of mean logs
    at ``level(looks)`` (``looks`` one for every pair or one per pair).

    The interval is widened where needed to include the point estimate (see the module
    docstring); it is NaN where either side has fewer than MIN_OK_REPLICATES positive values,
    and the estimate is NaN where either side is empty. Never warns.
    """
    if len(xs) != len(ys):
        raise ValueError(f"{len(xs)} baselines for {len(ys)} variants")
    m = len(xs)
    with np.errstate(divide="ignore", invalid="ignore"):
        est = _medians(xs) / _medians(ys)
    nx, mx, vx = _log_moments(xs)
    ny, my, vy = _log_moments(ys)
    with np.errstate(divide="ignore", invalid="ignore"):
        a, b = vx / nx, vy / ny
        den = np.where(a > 0, a * a / (nx - 1), 0.0) + np.where(b > 0, b * b / (ny - 1), 0.0)
        df = np.where(den > 0, (a + b) ** 2 / den, (nx + ny - 2).astype(float))
    ok = np.isfinite(mx) & np.isfinite(my)
    q = np.full(m, np.nan)
    if ok.any():
        q[ok] = sps.t.ppf(0.5 + _levels(looks, m)[ok] / 2.0, df[ok])
    lo, hi = _finish(est, mx - my, q * np.sqrt(a + b))
    return est, lo, hi


def median_ci(
    samples: Sequence[Sequence[float]], *, looks: Looks = 1
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median per sample, with a t-interval on the mean of its logs at ``level(looks)``
    (``looks`` one for every sample or one per sample).

    The interval is widened where needed to include the median (see the module docstring);
    it is NaN below MIN_OK_REPLICATES positive values. Never warns.
    """
    m = len(samples)
    est = _medians(samples)
    n, mean, var = _log_moments(samples)
    ok = np.isfinite(mean)
    q = np.full(m, np.nan)
    if ok.any():
        q[ok] = sps.t.ppf(0.5 + _levels(looks, m)[ok] / 2.0, (n - 1)[ok])
    with np.errstate(invalid="ignore"):
        half = q * np.sqrt(var / n)
    lo, hi = _finish(est, mean, half)
    return est, lo, hi
