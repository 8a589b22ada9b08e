"""The rules a run folder's rows and samples keep, stated once for both sides.

``bench check`` applies them row by row in the standard library (``bench.run.store.check``); the
report's loader applies them column by column with numpy (``bench.report.input.consistency``), and
its statistics the drift rule (``bench.report.analysis.cells``). So that both take the same
definition, every rule here is written with operators only (comparisons, arithmetic, ``&``
and ``|``): given one replicate's values (Python numbers, strings and bools) it answers for
that replicate, given arrays of every replicate's values it answers for all of them at once.
Nothing here imports numpy or pandas.

Which samples are a row's: samples come in blocks, one per write, and a block is consecutive
samples of one replicate and attempt (``SAMPLE_KEY``) whose steps go forward (``step``,
``new_block``). A block belongs to the last model or ceiling row of its key (rows written
before attempt ids were kept share a key, and a resume appends). Of a row's blocks the last is
its own: before attempt ids, an earlier one was written by an attempt a kill cut short and is
left out (``superseded``); with them, an attempt writes one block, so an earlier one is a
problem (``repeated``). Then, for an ok row: it has a block, the block holds ``steady_iters``
steady samples (``count_differs``), and their median is the row's (``median_differs``: only
``bench check`` compares it, since the report recomputes nothing from it).

Drift: with static shapes, the median of the later half of a replicate's steady iterations is
within ``DRIFT`` times that of the earlier half (``drift_applies``, ``early_half``,
``late_half``, ``drifted``). A drift means something changed under the measurement, so the
median describes no single regime.

Orders a row's own figures keep (the loader refuses a row that breaks one, ``bench check``
reports it), each true of every honest row:

- the quantiles in order (``QUANTILE_ORDER``): p10 <= median <= p90 <= p95 <= p99 of one
  sorted list of steady times. Every pair of them is compared (``QUANTILE_PAIRS``,
  ``out_of_order``), so an empty value (NaN) breaks only the comparisons it is in and the
  others still hold (p10 <= p90 without a median; rows before schema 6 have no p95 or p99).
  ``QUANTILE_RTOL`` forgives round-off: quantiles computed by different routines, or written
  to 6 significant digits (rounding keeps an order, but not an equality of two values
  computed apart).
- energy and power not negative (``ENERGY_FIGURES``, ``negative``): a counter reset or a
  subtraction the wrong way round, never a measurement.
- a window no shorter than its steps (``WINDOWS``, ``window_short``): the steady window
  (``energy_window_s``, the meter's span around exactly the timed steady state) and the
  replicate's wall time (``wall_s``, launch to result, which holds that window) cannot be
  shorter than the steady steps took. The bound must hold of any honest row whatever the
  spread of its steps, so it uses only what the median promises: of ``n`` steady times
  sorted, the ``ceil(n/2)`` from the middle up are each at least the median (the median of
  an even count is the mean of the two middle ones, of which the upper is at least it), so
  their sum, and the window, is at least ``ceil(n/2) * median`` (``least_steady_s``). It is
  written ``n - n // 2`` (operators only). ``WINDOW_RTOL`` forgives the clocks' and the
  written figures' round-off (a figure written to 4 significant digits). The mean would give
  the whole sum, but through another clock (CUDA events, against the host's for the window)
  and a figure a row need not have; the median's half is loose enough never to be wrong.
"""

from __future__ import annotations

from typing import Any, Final

from bench.schema import DRIFT

__all__ = ["DRIFT", "DRIFT_MIN_ITERS", "ENERGY_FIGURES", "ENERGY_SIGN", "MEDIAN_RTOL",
           "QUANTILES", "QUANTILE_ORDER", "QUANTILE_PAIRS", "QUANTILE_RTOL", "SAMPLE_KEY",
           "STEADY", "TIMED_KINDS", "WINDOWS", "WINDOW_LENGTH", "WINDOW_RTOL",
           "count_differs", "drift_applies", "drifted", "early_half", "late_half",
           "least_steady_s", "median_differs", "negative", "new_block", "out_of_order",
           "repeated", "step", "superseded", "window_short"]

#: The kinds of rows whose figures come from timed samples.
TIMED_KINDS: Final = ("model", "ceiling", "pipeline", "e2e")
#: A row's samples are those of its cell, replicate and attempt (empty before attempt ids).
SAMPLE_KEY: Final = ("cell_id", "replicate", "attempt_id")
#: The phase whose samples the row's figures describe.
STEADY: Final = "steady"
#: Fewer steady iterations have no halves to compare.
DRIFT_MIN_ITERS: Final = 3
#: How far a row's median may be from its samples' (relative, at least 1 s absolute scale).
MEDIAN_RTOL: Final = 1e-9
#: Orders a replicate's samples: every steady iteration after every earlier phase's.
_STEADY_RANK: Final = 1 << 40

#: The steady quantiles, in the order their values keep.
QUANTILES: Final = ("steady_p10_s", "steady_median_s", "steady_p90_s", "steady_p95_s",
                    "steady_p99_s")
#: Every (lower, upper) pair of them: an empty value skips only the pairs it is in.
QUANTILE_PAIRS: Final = tuple((lo, hi) for i, lo in enumerate(QUANTILES)
                              for hi in QUANTILES[i + 1:])
#: How far (relative) a quantile may be above a later one: round-off only.
QUANTILE_RTOL: Final = 1e-6
#: The energy and power figures of results.csv: never negative.
ENERGY_FIGURES: Final = ("energy_j", "energy_integrated_j", "joules_per_sample", "mean_power_w")
#: The windows that hold a row's whole steady state: the energy meter's span, and the
#: replicate's wall time.
WINDOWS: Final = ("energy_window_s", "wall_s")
#: How far (relative) a window may fall short of ``least_steady_s``: round-off only.
WINDOW_RTOL: Final = 1e-3
#: The rules' names, as ``bench check`` lists them and the loader's refusals end.
QUANTILE_ORDER: Final = "p10<=median<=p90<=p95<=p99"
ENERGY_SIGN: Final = "energy and power >= 0"
WINDOW_LENGTH: Final = "window >= its steady steps"


def step(steady: Any, iteration: Any) -> Any:
    """A sample's place in its replicate's write: the earlier phases by iteration, then the
    steady iterations by iteration (``steady``: whether it is a steady sample)."""
    return steady * _STEADY_RANK + iteration


def new_block(other_replicate: Any, step_before: Any, step_now: Any) -> Any:
    """Whether a sample starts a block: its key is not the sample's before it
    (``other_replicate``), or its step does not go forward. The first sample always does."""
    return other_replicate | (step_now <= step_before)


def superseded(earlier: Any, attempt_id: Any) -> Any:
    """Whether a block is left out without a word: an ``earlier`` block of its row (not the
    last) written before attempt ids were kept, by an attempt a kill cut short."""
    return earlier & (attempt_id == "")


def repeated(earlier: Any, attempt_id: Any) -> Any:
    """Whether a block is a problem for coming before another of its own attempt: an attempt
    writes one block, so an ``earlier`` one with an attempt id is a copy or an edit."""
    return earlier & (attempt_id != "")


def count_differs(steady_samples: Any, steady_iters: Any) -> Any:
    """Whether an ok row's block holds another number of steady samples than the row says."""
    return steady_samples != steady_iters


def median_differs(samples_median: Any, row_median: Any) -> Any:
    """Whether the median of a row's steady samples is not the row's ``steady_median_s``."""
    scale = 1.0 + (row_median - 1.0) * (row_median > 1.0)  # max(1, row_median), elementwise
    return abs(samples_median - row_median) > MEDIAN_RTOL * scale


def drift_applies(kind: Any, shapes: Any) -> Any:
    """Whether the drift rule holds a row to it: a model row of static shapes (other
    schedules cycle shapes on purpose, so their halves differ by design)."""
    return (kind == "model") & (shapes == "static")


def early_half(rank: Any, n: Any) -> Any:
    """Whether the steady sample at ``rank`` (0-based, of ``n``) is in the earlier half."""
    return (n >= DRIFT_MIN_ITERS) & (rank < n // 2)


def late_half(rank: Any, n: Any) -> Any:
    """Whether the steady sample at ``rank`` (0-based, of ``n``) is in the later half (as
    long as the earlier one: the middle sample of an odd count is in neither)."""
    return (n >= DRIFT_MIN_ITERS) & (rank >= n - n // 2)


def drifted(ratio: Any) -> Any:
    """Whether the later half's median over the earlier half's is outside ``DRIFT`` either
    way (a ratio that could not be formed, NaN, is not a drift)."""
    return (ratio > DRIFT) | (ratio < 1 / DRIFT)


def out_of_order(lower: Any, upper: Any) -> Any:
    """Whether a quantile that should be at most ``upper`` (a later one of ``QUANTILES``) is
    above it beyond round-off; an empty one (NaN) on either side breaks nothing."""
    return lower - upper > QUANTILE_RTOL * (abs(lower) + abs(upper))


def negative(value: Any) -> Any:
    """Whether an energy or power figure is below zero (NaN, empty, is not)."""
    return value < 0


def least_steady_s(iters: Any, median: Any) -> Any:
    """The least time ``iters`` steady steps of median ``median`` can have taken together:
    ``ceil(iters / 2)`` of them took at least the median (NaN where either is empty)."""
    return (iters - iters // 2) * median


def window_short(window: Any, iters: Any, median: Any) -> Any:
    """Whether a window that holds the whole steady state (``WINDOWS``) is shorter than its
    steady steps took at the least, beyond round-off (NaN anywhere: not short)."""
    return window < least_steady_s(iters, median) * (1 - WINDOW_RTOL)
