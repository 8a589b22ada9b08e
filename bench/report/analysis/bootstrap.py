"""Bootstrap confidence intervals over replicates, many at once.

The unit of replication is the process (algorithm choice can differ from one process to the
next), so every interval here resamples replicates, never iterations: a percentile bootstrap
(``scipy.stats.bootstrap``) with a fixed seed, so the site is byte-identical run to run.

Performance: thousands of pairs are bootstrapped as one vectorised ``bootstrap`` call per
(n_base, n_var) group on stacked 2-D float32 arrays (half the memory traffic of float64, and
7 digits is plenty for an interval printed with 3), resampled in fixed-size batches to bound
memory.

The constants are what the Methodology page quotes, so change them only together with it.
"""

from __future__ import annotations

import contextlib
import inspect
import warnings
from collections.abc import Iterator, Sequence

import numpy as np
from scipy import stats as sps

#: Fewer ok replicates than this on either side → "insufficient", no CI, no verdict.
MIN_OK_REPLICATES = 3
#: Two-sided confidence level of every interval.
CONFIDENCE = 0.95
#: Bootstrap resamples per interval (percentile method). With the usual 3 replicates a side the
#: bootstrap distribution has at most 9 distinct values, so 1000 pins the 2.5 % and 97.5 %
#: percentiles exactly; with more replicates the bounds move by well under 1 % between seeds.
N_RESAMPLES = 1000
#: Seed of the bootstrap's generator: the same input gives the same intervals, byte for byte.
SEED = 20261129
#: Resamples drawn per vectorised step. Fixed (not sized to the data) so that a pair's interval
#: depends only on its own replicates, not on how many other pairs share its bootstrap call.
BOOTSTRAP_BATCH = 100

#: SciPy 1.15 renamed ``bootstrap``'s ``random_state`` to ``rng``, and Python 3.9 stops at SciPy
#: 1.13; both take the seeded generator the same way.
_RNG = "rng" if "rng" in inspect.signature(sps.bootstrap).parameters else "random_state"


def _median_last(a: np.ndarray) -> np.ndarray:
    """Median over the last axis; the 3-replicate case (the common one) without a sort."""
    if a.shape[-1] == 3:
        a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
        return np.maximum(np.minimum(a0, a1), np.minimum(np.maximum(a0, a1), a2))
    if a.shape[-1] == 1:
        return a[..., 0]
    return np.asarray(np.median(a, axis=-1))


def _ratio(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return _median_last(np.moveaxis(x, axis, -1)) / _median_last(np.moveaxis(y, axis, -1))


def _median_stat(x: np.ndarray, axis: int = -1) -> np.ndarray:
    return _median_last(np.moveaxis(x, axis, -1))


def ratio_ci(
    xs: Sequence[Sequence[float]], ys: Sequence[Sequence[float]]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """median(x)/median(y) per pair with a bootstrap CI; NaN CI when a side is too small.

    Pairs are grouped by (len(x), len(y)) and each group is one vectorised bootstrap call.
    """
    n = len(xs)
    est, lo, hi = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    groups: dict[tuple[int, int], list[int]] = {}
    for i, (x_i, y_i) in enumerate(zip(xs, ys)):
        groups.setdefault((len(x_i), len(y_i)), []).append(i)
    for (nx, ny), members in sorted(groups.items()):
        if nx == 0 or ny == 0:
            continue
        idx = np.array(members)
        x = np.array([xs[i] for i in members], dtype=float)
        y = np.array([ys[i] for i in members], dtype=float)
        est[idx] = _ratio(x, y)
        if nx < MIN_OK_REPLICATES or ny < MIN_OK_REPLICATES:
            continue
        lo[idx], hi[idx] = _bootstrap((x.astype(np.float32), y.astype(np.float32)), _ratio)
    return est, lo, hi


def median_ci(samples: Sequence[Sequence[float]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median per sample with a bootstrap CI (NaN CI below MIN_OK_REPLICATES values)."""
    n = len(samples)
    est, lo, hi = np.full(n, np.nan), np.full(n, np.nan), np.full(n, np.nan)
    groups: dict[int, list[int]] = {}
    for i, s in enumerate(samples):
        groups.setdefault(len(s), []).append(i)
    for k, members in sorted(groups.items()):
        if k == 0:
            continue
        idx = np.array(members)
        x = np.array([samples[i] for i in members], dtype=float)
        est[idx] = _median_last(x)
        if k < MIN_OK_REPLICATES:
            continue
        lo[idx], hi[idx] = _bootstrap((x.astype(np.float32),), _median_stat)
    return est, lo, hi


@contextlib.contextmanager
def quiet_bootstraps() -> Iterator[None]:
    """Silence the warnings of degenerate bootstraps: identical replicates are normal here.

    Warning filters are process-wide, so this is entered once, around :func:`analyse` (a
    forked worker inherits the filters).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", sps.DegenerateDataWarning)
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


def _bootstrap(data: tuple[np.ndarray, ...], statistic: object) -> tuple[np.ndarray, np.ndarray]:
    """A percentile bootstrap CI per row. Warns on degenerate data (see quiet_bootstraps)."""
    res = sps.bootstrap(
        data,
        statistic,  # type: ignore[arg-type]
        n_resamples=N_RESAMPLES,
        batch=BOOTSTRAP_BATCH,
        vectorized=True,
        paired=False,
        axis=-1,
        confidence_level=CONFIDENCE,
        method="percentile",
        **{_RNG: np.random.default_rng(SEED)},
    )
    low = np.asarray(res.confidence_interval.low, dtype=float)
    high = np.asarray(res.confidence_interval.high, dtype=float)
    # All resamples equal (identical replicates): the interval is the point itself.
    point = np.asarray(statistic(*data, axis=-1), dtype=np.float64)  # type: ignore[operator]
    return np.where(np.isnan(low), point, low), np.where(np.isnan(high), point, high)
