"""Reading analysis tables row by row: plain values, missing values, the order rows are shown in."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import pandas as pd

from bench import schema

#: The axes a comparison's configuration is described by, in reading order.
CONFIG_AXES = schema.AXIS_COLUMNS


def rows_of(frame: pd.DataFrame) -> Any:
    """``frame.itertuples(index=False)`` over plain object columns.

    pandas' string and nullable columns hand out their values one ``__getitem__`` at a time
    when iterated, which costs seconds over a 100k-row report; one conversion per column does
    not. The values are the same either way (``pd.NA`` stays ``pd.NA``).
    """
    ext = {c: object for c, t in frame.dtypes.items()
           if isinstance(t, pd.api.extensions.ExtensionDtype)}
    return frame.astype(ext).itertuples(index=False) if ext else frame.itertuples(index=False)


def present(value: Any) -> bool:
    """Whether a cell holds a value: not None, NA or NaN (text counts, unlike ``fmt.present``)."""
    return (
        value is not None
        and value is not pd.NA
        and not (isinstance(value, float) and math.isnan(value))
    )


def sort_rows(frame: pd.DataFrame, extra: Sequence[str] = ()) -> pd.DataFrame:
    """Rows in the order pages list them: by fingerprint, then ``extra``, then the axes."""
    cols = [c for c in ("fingerprint_id", *extra, *CONFIG_AXES) if c in frame.columns]
    return frame.sort_values(cols, kind="stable", na_position="first").reset_index(drop=True)
