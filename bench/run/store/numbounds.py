"""``bench check``'s bounds on the numerics check's columns (``bench.schema.NUMERICS_SPEC``).

Errors are never negative, a cosine lies in [-1, 1] and a top-1 agreement in [0, 1]; a cell
that is the reference configuration itself (fp32 with every TF32 switch off, eager, NCHW,
checked against ``fp32-strict``) reads exactly zero error, cosine 1 and agreement 1, since a
reference compared with itself differs in nothing; and the check's seconds fit in the
replicate's wall time beside its timed windows, outside them. Standard library only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from typing import TypeVar

from bench import consistency as rules
from bench.schema import NUM_REFERENCES

Row = dict[str, str]
T = TypeVar("T")
#: The name ``bench check`` lists these findings under.
NUMERICS = "numerics bounds"
_NOT_NEGATIVE = ("num_rel_err", "num_max_abs_err", "num_loss_rel_diff", "num_param_drift",
                 "num_time_s")
_RANGES = {"num_cosine": (-1.0, 1.0), "num_top1_agree": (0.0, 1.0)}
#: What the reference configuration reads against itself.
_ITSELF = {"num_rel_err": 0.0, "num_max_abs_err": 0.0, "num_cosine": 1.0, "num_top1_agree": 1.0,
           "num_loss_rel_diff": 0.0, "num_param_drift": 0.0}
_TOL = 1e-9


def _f(row: Row, col: str) -> float | None:
    value = row.get(col, "")
    try:
        return float(value) if value not in ("", None) else None
    except ValueError:
        return math.nan


def is_reference(row: Row) -> bool:
    """Whether the row's cell is the reference configuration it was checked against."""
    strict = row.get("precision") == "fp32-strict" or (
        row.get("precision") == "fp32" and row.get("device") == "cpu")
    return (row.get("num_reference") == NUM_REFERENCES[1] and strict
            and row.get("memory_format") == "nchw" and row.get("compile", "off") == "off")


def problems(row: Row) -> Iterator[str]:
    """Every bound the row's numerics break, in words."""
    for col in _NOT_NEGATIVE:
        value = _f(row, col)
        if value is not None and not value >= 0:
            yield f"{col} {row[col]} is negative or not a number"
    for col, (lo, hi) in _RANGES.items():
        value = _f(row, col)
        if value is not None and not lo <= value <= hi:
            yield f"{col} {row[col]} is outside [{lo:g}, {hi:g}]"
    if is_reference(row):
        for col, want in _ITSELF.items():
            value = _f(row, col)
            if value is not None and value != want:
                yield (f"the reference configuration against itself reads {col} {row[col]}, "
                       f"not {want:g}")
    yield from _outside(row)


def _outside(row: Row) -> Iterator[str]:
    """The check's seconds beside the timed windows within the replicate's wall time."""
    spent, wall = _f(row, "num_time_s"), _f(row, "wall_s")
    if spent is None or wall is None:
        return
    cold = _f(row, "cold_pass_s") or 0.0
    iters, median = _f(row, "steady_iters"), _f(row, "steady_median_s")
    steady = rules.least_steady_s(iters, median) if iters and median else 0.0
    if spent + cold + steady > wall * (1 + _TOL):
        yield (f"num_time_s {row['num_time_s']} s, the cold pass {cold:.4g} s and the steady "
               f"steps (at least {steady:.4g} s) exceed the wall time {row['wall_s']} s: the "
               "check was not outside the timed windows")


def check_numerics(rows: list[Row], where: Callable[[Row], str],
                   anomaly: Callable[[str, str, str], T]) -> Iterator[T]:
    """``bench check``'s findings on the numerics columns."""
    for r in rows:
        for said in problems(r):
            yield anomaly(NUMERICS, where(r), said)
