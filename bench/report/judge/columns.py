"""Which columns a page's labels name: the axes whose value differs between the rows a table or
a chart shows, and the model and mode always. Decided once, by the page model, so a label never
repeats what every row shares and a view only reads the names it is handed."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd

from bench import schema

#: Named in every label, even where every row shares them: a figure without its model and mode
#: reads as true of all.
ALWAYS = ("model", "mode")


def varying(rows: pd.DataFrame | Sequence[object], columns: Sequence[str],
            always: Sequence[str] = ALWAYS) -> tuple[str, ...]:
    """The columns of ``columns`` whose value differs between ``rows`` (a frame or typed rows),
    and those of ``always`` that the rows have."""
    if isinstance(rows, pd.DataFrame):
        return tuple(c for c in columns if c in rows.columns and (
            c in always or rows[c].astype(str).nunique(dropna=False) > 1))
    return tuple(c for c in columns if (not rows or hasattr(rows[0], c)) and (
        c in always or len({str(getattr(r, c)) for r in rows}) > 1))


def comparison_columns(rows: pd.DataFrame | Sequence[object], axis: str = ""
                       ) -> tuple[str, ...]:
    """What a label of comparisons of ``axis`` names: the other axes that vary."""
    return varying(rows, [c for c in schema.AXIS_COLUMNS if c != axis])
