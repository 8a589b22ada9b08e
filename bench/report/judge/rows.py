"""Typed rows: what a page model hands its view instead of a DataFrame.

The analysis works on DataFrames; a page model gives its view frozen dataclasses, one per row,
with the columns the view reads as typed fields, and a :class:`Table` (column names and plain
values) for the rows a page offers as CSV. A view can then read only what its model declares,
and a type checker sees every field it reads. :func:`typed_rows` is the one conversion:
missing values (``NA``, ``NaN``) become ``None`` and numpy scalars become Python ones.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar, cast

import numpy as np
import pandas as pd

from bench.report.analysis.pairs import not_slower, within_band

#: One plain value of a row: what a CSV cell or a typed field holds.
Scalar = str | int | float | bool | None

R = TypeVar("R")


def plain(value: object) -> Scalar:
    """``value`` as a Python scalar; ``None`` where it is missing (``NA``, ``NaN``, ``NaT``).

    The plain Python types come first, by their exact type: they are almost every value a
    page model reads (millions over a tree of many machines), and the checks below cost
    several times more than this one."""
    kind = type(value)
    if kind is str or kind is int or kind is bool:
        return cast(Scalar, value)
    if kind is float:
        return None if value != value else cast(float, value)  # NaN
    if value is None or value is pd.NA or value is pd.NaT:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, str | int | float | bool):
        return value
    return str(value)


def plain_column(col: pd.Series) -> list[Scalar]:
    """A column's values as :func:`plain` gives them, a column at a time where its dtype allows:
    a machine page can hold tens of thousands of cells, and a value at a time costs seconds."""
    if col.dtype == object or col.dtype.kind in "mM" or isinstance(col.dtype,
                                                                  pd.CategoricalDtype):
        return [plain(v) for v in col.to_numpy()]
    return list(col.to_numpy(dtype=object, na_value=None).tolist())


def texts(col: pd.Series) -> list[str]:
    """A column's values as ``astype(str)`` gives them: ``str`` of each, ``nan`` for a missing
    one (a value at a time: ``astype`` costs more than the few values of a summary)."""
    if col.dtype.kind in "mM":
        return [str(v) for v in col.astype(str).tolist()]
    return ["nan" if v is None or v is pd.NA or v != v else str(v)
            for v in col.to_numpy(dtype=object).tolist()]


def plain_rows(frame: pd.DataFrame, names: Sequence[str]) -> list[list[Scalar]]:
    """The rows of ``frame``'s columns ``names``, each value as :func:`plain` gives it.

    Why one conversion of the frame, then a value at a time: a page model's frames are
    many, small and wide, and a column at a time (:func:`plain_column`) cost about a tenth of
    a millisecond a column whatever its rows. A date column keeps the column's own path (the
    frame's conversion would hand out Timestamps, which read otherwise as text)."""
    if not names:  # no column, no row (as zipping no columns gives)
        return []
    sub = frame[list(names)]
    if any(t.kind in "mM" for t in sub.dtypes):
        return [list(row) for row in zip(*(plain_column(sub[n]) for n in names), strict=True)]
    return [[plain(v) for v in row] for row in sub.to_numpy(dtype=object).tolist()]


def records(frame: pd.DataFrame) -> list[Any]:
    """``frame.itertuples(index=False)``'s rows, made from one conversion of the whole frame.

    Why: ``itertuples`` takes every column as a Series first, tens of microseconds a column
    whatever the rows; over the thousands of small groups of a tree of many machines, that
    was seconds of a build. The values are the same, except that a nullable integer or
    boolean comes out as a Python ``int`` or ``bool`` rather than a numpy scalar; a missing
    value stays ``NA``, ``NaN`` or ``NaT``."""
    if frame.empty:
        return []
    row = _row_type(tuple(map(str, frame.columns)))
    return [row._make(values) for values in frame.to_numpy(dtype=object).tolist()]


@functools.lru_cache(maxsize=256)
def _row_type(columns: tuple[str, ...]) -> Any:
    """The named tuple ``itertuples`` would make for ``columns`` (made once: making one is
    slow)."""
    return collections.namedtuple("Pandas", columns, rename=True)


def typed_rows(cls: type[R], frame: pd.DataFrame) -> tuple[R, ...]:
    """One ``cls`` per row of ``frame``, from the columns named by ``cls``'s fields; a field
    whose column ``frame`` lacks keeps its default (``TypeError`` where it has none)."""
    if not len(frame):
        return ()
    names = [f.name for f in dataclasses.fields(cls)  # type: ignore[arg-type]
             if f.init and f.name in frame.columns]
    return tuple(cls(**dict(zip(names, row, strict=True))) for row in plain_rows(frame, names))


def typed_row(cls: type[R], row: object) -> R:
    """One ``cls`` from a single row (a named tuple or a Series), as :func:`typed_rows`."""
    get = row.get if isinstance(row, pd.Series) else (lambda n, d=None: getattr(row, n, d))
    missing = object()
    values = {f.name: get(f.name, missing) for f in dataclasses.fields(cls)  # type: ignore
              if f.init}
    return cls(**{n: plain(v) for n, v in values.items() if v is not missing})


@dataclass(frozen=True)
class Table:
    """Rows a page offers as CSV: column names and plain values, in the frame's order."""

    columns: tuple[str, ...]
    rows: tuple[tuple[Scalar, ...], ...] = field(repr=False)

    @classmethod
    def of(cls, frame: pd.DataFrame) -> Table:
        columns = [plain_column(frame.iloc[:, i]) for i in range(frame.shape[1])]
        return cls(tuple(str(c) for c in frame.columns),
                   tuple(zip(*columns, strict=True)) if columns else ((),) * len(frame))

    def select(self, names: Sequence[str]) -> Table:
        """The columns of ``names`` this table has, in that order."""
        keep = [self.columns.index(n) for n in names if n in self.columns]
        return Table(tuple(self.columns[i] for i in keep),
                     tuple(tuple(row[i] for i in keep) for row in self.rows))

    def frame(self) -> pd.DataFrame:
        """The rows as an object-typed DataFrame, for the CSV writer."""
        return pd.DataFrame(list(self.rows), columns=list(self.columns), dtype=object)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[tuple[Scalar, ...]]:
        return iter(self.rows)


#: A Table with no rows and no columns.
EMPTY = Table((), ())


class Banded:
    """What an interval's ends say as the pages print them (wording, not verdicts): whether it
    lies inside 1 ± δ, and whether it rules out a slowdown beyond δ."""

    ci_low: float | None
    ci_high: float | None

    @property
    def in_band(self) -> bool:
        return within_band(self.ci_low, self.ci_high)

    @property
    def not_slower(self) -> bool:
        return not_slower(self.ci_low)


@dataclass(frozen=True, kw_only=True)
class Located:
    """Where a row stands on the site: its machine page and its row's anchor there, what a
    link to the row is made of."""

    page: str = ""
    anchor: str = ""


@dataclass(frozen=True, kw_only=True)
class Counted:
    """How many of a cell's replicates ended ok, and whether that is too few to judge it
    (``analysis.cells``): what a page marks a figure with that rests on too few."""

    n_ok: int | None = None
    too_few_ok: bool | None = None


@dataclass(frozen=True, kw_only=True)
class Axes:
    """A configuration's axis values (``schema.AXIS_COLUMNS``), each None where a row has
    none: what a row's label is made of."""

    device: str | None = None
    model: str | None = None
    model_source: str | None = None
    input_shape: str | None = None
    inputs: str | None = None
    loss: str | None = None
    mode: str | None = None
    batch_size: int | None = None
    resolution: int | None = None
    precision: str | None = None
    memory_format: str | None = None
    shapes: str | None = None
    cudnn_benchmark: str | None = None
    cudnn_deterministic: str | None = None
    cudnn_benchmark_limit: int | None = None
    cpu_threads: int | None = None
    kernel_cache: str | None = None
    compile: str | None = None
    compile_dynamic: str | None = None
    num_workers: int | None = None
    decoder: str | None = None
    images: str | None = None


@dataclass(frozen=True, kw_only=True)
class Pair(Axes, Banded):
    """One comparison (``analysis.pairs.compare``): a baseline cell against a variant cell on
    one machine, the other axes as context (the pair's own axis is in baseline_value and
    variant_value), and the figures. Pages that read more columns subclass it."""

    fingerprint_id: str
    machine: str = ""
    page: str = ""
    axis: str = ""
    metric: str = ""
    baseline_value: str | None = None
    variant_value: str | None = None
    baseline_cell_id: str = ""
    variant_cell_id: str = ""
    baseline_anchor: str = ""
    variant_anchor: str = ""
    # the figures
    model_family: str | None = None
    n_base: int = 0
    n_var: int = 0
    base_median_s: float | None = None
    var_median_s: float | None = None
    base_samples_per_s: float | None = None
    var_samples_per_s: float | None = None
    speedup: float | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    verdict: str = ""
    noise: str | None = None
    spread: float | None = None
    n_left_out: int | None = None
