"""The valid range of every number a profile can set: its integer axes and its settings.

Why ranges and not just types: a number of the right type can still be no measurement at
all. ``batch_size = 1000000000`` fails at its first allocation, ``resolution = 100000`` asks
for ten billion pixels, ``ci_target = nan`` never stops, ``max_time_s = inf`` never times out
and ``min_time_s = -1`` or ``warmup_iters = -3`` mean nothing. Each is refused when the
profile is read (``--dry-run`` included), with one line naming the valid range, instead of
costing a run. The bounds are generous: wider than any shipped profile, narrow enough that a
value outside them is a typo.
"""

from __future__ import annotations

import math

#: Integer axes: (lowest, highest).
AXES: dict[str, tuple[int, int]] = {
    "batch_size": (1, 65_536),
    "resolution": (1, 16_384),  # pixels a side; a ceiling's op size (n, or MiB)
    "shape_count": (1, 64),
    "cudnn_benchmark_limit": (0, 10_000),  # 0: try every algorithm
    "cpu_threads": (1, 4_096),
    "num_workers": (0, 1_024),  # DataLoader worker processes; 0: the main process decodes
}
#: A user model's ``input_shape`` C,H,W: H and W are pixels a side like ``resolution``.
INPUT_SHAPE: tuple[tuple[int, int], tuple[int, int], tuple[int, int]] = (
    (1, 16_384), AXES["resolution"], AXES["resolution"])

#: Settings: (lowest, highest); an int setting takes whole numbers only.
SETTINGS: dict[str, tuple[float, float]] = {
    "replicates": (1, 1_000),
    "warmup_iters": (0, 100_000),
    "min_iters": (1, 1_000_000),
    "max_iters": (1, 10_000_000),
    "min_time_s": (0.0, 86_400.0),
    "max_time_s": (0.0, 86_400.0),
    "ci_target": (0.0, 1.0),  # 0: stop on the caps alone
    "timeout_s": (0.1, 604_800.0),
    "repro_steps": (1, 1_000),
}

#: A profile's ``[adaptive]`` table (``bench.run.plan.adaptive``): looks in all, replicates a look
#: adds to a cell, and the interval width (hi / lo) under which a comparison is left alone.
ADAPTIVE: dict[str, tuple[float, float]] = {
    "adaptive.looks": (1, 10),
    "adaptive.step": (1, 100),
    "adaptive.max_width": (1.0, 100.0),
}

#: A profile's ``[pace]`` table (``bench.run.plan.pace``): the CPU pace probe's steady window in
#: seconds, at most the default (a longer one would only cost time).
PACE: dict[str, tuple[float, float]] = {
    "pace.window_s": (0.1, 1.8),
}


def _range(lo: float, hi: float, whole: bool) -> str:
    return f"{'an integer' if whole else 'a finite number'} from {lo:g} to {hi:g}"


def problem(key: str, value: object) -> str | None:
    """Why ``value`` is not a valid ``key`` (``"batch_size must be an integer from 1 to 65536,
    got 1000000000"``), or None when it is. Keys without a range are not checked here."""
    bounds = AXES.get(key) or SETTINGS.get(key) or ADAPTIVE.get(key) or PACE.get(key)
    if bounds is None:
        return None
    lo, hi = bounds
    whole = key in AXES or isinstance(lo, int)
    wrong = f"{key} must be {_range(lo, hi, whole)}, got {value!r}"
    if isinstance(value, bool) or not isinstance(value, int if whole else (int, float)):
        return wrong
    return None if math.isfinite(value) and lo <= value <= hi else wrong
