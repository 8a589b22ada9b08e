"""The rules a run folder's rows and samples keep, stated once for both sides.

``bench check`` applies them row by row in the standard library (``bench.run.check``); the
report's loader applies them column by column with numpy (``bench.report.consistency``), and
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
"""

from __future__ import annotations

from typing import Any, Final

from bench.schema import DRIFT

__all__ = ["DRIFT", "DRIFT_MIN_ITERS", "MEDIAN_RTOL", "SAMPLE_KEY", "STEADY", "TIMED_KINDS",
           "count_differs", "drift_applies", "drifted", "early_half", "late_half",
           "median_differs", "new_block", "repeated", "step", "superseded"]

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
