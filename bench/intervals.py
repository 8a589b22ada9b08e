"""The interval method, stated once for both sides, in the standard library.

Why a t-interval on logs: a replicate is one process, and the figure of a replicate is its
median step time. Step times are positive and their noise is multiplicative (a busy host
slows every step by a factor), so logs make the noise additive and about symmetric; a ratio of
two cells becomes a difference of two means. Welch's t-interval on that difference, with
Welch-Satterthwaite degrees of freedom, covers the true ratio in about 95% of comparisons at 3
to 10 replicates a side (``tests/report/test_coverage.py`` simulates it). The percentile
bootstrap it replaces returned about the range of the ratios at 3 replicates (about 90%).

The runner uses this module to decide whether a comparison is still undecided (``undecided``)
and so needs another round of replicates; the report computes the same intervals vectorised
with SciPy and a test holds the two to the same numbers. Nothing here imports numpy.

Adaptive replicates look at a comparison up to ``LOOKS`` times; the error is split evenly
between the looks (``level``), so the interval printed at whichever look stopped still covers
95% (Bonferroni over a fixed number of looks).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

#: Two-sided confidence level of every interval the site prints.
CONFIDENCE: Final = 0.95
#: Fewer ok replicates than this on either side: no interval, no verdict.
MIN_OK_REPLICATES: Final = 3
#: δ: a speedup inside [1 − δ, 1 + δ] is "no clear difference" (3 %).
DELTA: Final = 0.03

# The adaptive-replicates rule's defaults (``bench.run.plan.adaptive``; a profile's ``[adaptive]``
# table may change them; ``tests/report/test_coverage.py`` reads them). Why these: three looks
# (3, 5, 7 replicates a side at the cpu and gpu profiles' 3) cost an undecided comparison at
# most 7/3 of its planned replicates. Splitting the error three ways (``level(3)``, 98.3 %)
# makes the first look's interval about 1.4 times as wide as at ``level(1)``, but the last
# look's, at 7 a side, is about 0.66 times as wide as a 3-a-side interval at 95 %: a
# comparison that needs replicates ends much narrower, and one that needs none pays only the
# wider first look. Two replicates a look are one more round over both cells (A B A B),
# keeping the arms interleaved. An interval narrower than 1.10 (hi / lo) that still straddles
# an edge of the 6 %-wide band 1 ± δ is one whose true ratio lies near that edge: more
# replicates would chase it at a cost that a wide interval repays better.
#: Looks at a comparison in all, the first at the planned replicates.
ADAPTIVE_LOOKS: Final = 3
#: Replicates added to each cell of an undecided comparison per extra look.
ADAPTIVE_STEP: Final = 2
#: An undecided comparison narrower than this (hi / lo) gets no more replicates.
ADAPTIVE_MAX_WIDTH: Final = 1.10


def level(looks: int = 1) -> float:
    """The confidence level of each look when the error is split over ``looks`` looks."""
    if looks < 1:
        raise ValueError(f"looks must be at least 1, not {looks}")
    return 1.0 - (1.0 - CONFIDENCE) / looks


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularised incomplete beta (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b)."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t: float, df: float) -> float:
    """Student's t distribution function with ``df`` (not necessarily whole) degrees of freedom."""
    tail = 0.5 * _betainc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t > 0 else tail


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile of Student's t with ``df`` degrees of freedom (bisection, 1e-12)."""
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must lie in (0, 1), not {p}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_cdf(mid, df) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    return 0.5 * (lo + hi)


def _mean_var(xs: Sequence[float]) -> tuple[float, float]:
    n = len(xs)
    mean = math.fsum(xs) / n
    return mean, math.fsum((x - mean) ** 2 for x in xs) / (n - 1)


def welch_df(var_x: float, n_x: int, var_y: float, n_y: int) -> float:
    """Welch-Satterthwaite degrees of freedom; the pooled ``n_x + n_y - 2`` where both
    variances are zero (the limit is then immaterial: the interval has no width)."""
    a, b = var_x / n_x, var_y / n_y
    den = (a * a / (n_x - 1) if a else 0.0) + (b * b / (n_y - 1) if b else 0.0)
    return (a + b) ** 2 / den if den > 0 else float(n_x + n_y - 2)


def log_ratio_interval(base: Sequence[float], variant: Sequence[float], *,
                       looks: int = 1) -> tuple[float, float] | None:
    """The interval of ``base / variant`` (a speedup where both are step times) from their
    replicates: Welch's t-interval on the difference of mean logs, at ``level(looks)``.
    None where either side has fewer than ``MIN_OK_REPLICATES`` positive values."""
    lx = [math.log(v) for v in base if v > 0]
    ly = [math.log(v) for v in variant if v > 0]
    if len(lx) < MIN_OK_REPLICATES or len(ly) < MIN_OK_REPLICATES:
        return None
    mx, vx = _mean_var(lx)
    my, vy = _mean_var(ly)
    se = math.sqrt(vx / len(lx) + vy / len(ly))
    q = t_quantile(0.5 + level(looks) / 2.0, welch_df(vx, len(lx), vy, len(ly)))
    return math.exp(mx - my - q * se), math.exp(mx - my + q * se)


def log_interval(values: Sequence[float], *, looks: int = 1) -> tuple[float, float] | None:
    """The interval of a cell's typical value (the median of log-symmetric noise) from its
    replicates: a t-interval on the mean of logs. None below ``MIN_OK_REPLICATES`` values."""
    lx = [math.log(v) for v in values if v > 0]
    if len(lx) < MIN_OK_REPLICATES:
        return None
    m, v = _mean_var(lx)
    q = t_quantile(0.5 + level(looks) / 2.0, len(lx) - 1)
    half = q * math.sqrt(v / len(lx))
    return math.exp(m - half), math.exp(m + half)


def decided(interval: tuple[float, float] | None, *, delta: float = DELTA) -> bool:
    """Whether an interval decides its verdict: it clears 1 + δ (faster), clears 1 − δ
    (slower), or lies inside 1 ± δ (no difference beyond δ)."""
    if interval is None:
        return False
    lo, hi = interval
    return lo > 1.0 + delta or hi < 1.0 - delta or (lo >= 1.0 - delta and hi <= 1.0 + delta)


def undecided(base: Sequence[float], variant: Sequence[float], *, looks: int,
              max_width: float, delta: float = DELTA) -> bool:
    """Whether a comparison still needs replicates: its interval straddles 1 ± δ and is wider
    (``hi / lo``) than ``max_width``. Too few replicates to form one also count as undecided."""
    interval = log_ratio_interval(base, variant, looks=looks)
    if interval is None:
        return True
    return not decided(interval, delta=delta) and interval[1] / interval[0] > max_width


@dataclass(frozen=True)
class Adaptive:
    """A run's adaptive replicates (``bench.run.plan.adaptive``): ``looks`` looks at each
    comparison in all, the first at the planned replicates, each later one adding ``step``
    replicates to every cell of a comparison still undecided, wider than ``max_width``
    (``undecided``). A profile asks for it in its ``[adaptive]`` table."""

    looks: int = ADAPTIVE_LOOKS
    step: int = ADAPTIVE_STEP
    max_width: float = ADAPTIVE_MAX_WIDTH
    delta: float = DELTA

    def record(self) -> dict[str, Any]:
        """What env.json keeps of it (``schema.ADAPTIVE_KEY``)."""
        return {"looks": self.looks, "step": self.step, "max_width": self.max_width,
                "delta": self.delta}

    @classmethod
    def recorded(cls, value: object) -> Adaptive | None:
        """The rule an env.json records; None where it records none (a run without it)."""
        if not isinstance(value, dict):
            return None
        try:
            rule = cls(int(value["looks"]), int(value["step"]), float(value["max_width"]),
                       float(value.get("delta", DELTA)))
        except (KeyError, TypeError, ValueError):
            return None
        return rule if rule.looks > 1 and rule.step > 0 else None
