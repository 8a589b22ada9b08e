"""CSV that a spreadsheet opens as data: no cell of it runs as a formula.

Why: the site offers CSVs to download, and their cells come from result files anyone can
write. A spreadsheet takes a cell that starts with ``=``, ``+``, ``-`` or ``@`` (or a tab or
a carriage return, which some strip first) as a formula, so a machine or model named
``=HYPERLINK("http://x")`` would run in whoever opens ``decisions.csv``. Such a cell gets the
usual neutralising prefix, a leading ``'``, unless it is a number: ``-1.5`` stays a number.

Only text is looked at, and only its distinct values: a column of numbers is never touched,
and a column of a hundred thousand rows costs one pass over what it holds.
"""

from __future__ import annotations

import csv
import io
import re
from pathlib import Path

import numpy as np
import pandas as pd

#: What a spreadsheet takes for the start of a formula.
STARTS = ("=", "+", "-", "@", "\t", "\r")
#: A plain decimal number, as a spreadsheet reads one: no spaces, no ``inf``, no ``1_000``.
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def is_number(text: str) -> bool:
    """Whether a spreadsheet reads ``text`` as a number (``-1.5``, ``+3``, ``1e-9``)."""
    return _NUMBER.fullmatch(text) is not None


def unsafe(text: object) -> bool:
    """Whether a cell holding ``text`` would run as a formula."""
    return isinstance(text, str) and text.startswith(STARTS) and not is_number(text)


def cell(text: str) -> str:
    """``text`` as a cell that cannot run: ``'=1+1`` for ``=1+1``; anything else unchanged."""
    return f"'{text}" if unsafe(text) else text


def unsafe_values(values: np.ndarray) -> list[str]:
    """The distinct values of ``values`` (an object array) that would run as formulas."""
    return [v for v in pd.unique(values) if unsafe(v)]


def frame(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with every unsafe text cell neutralised (a new frame only where one is found).
    Columns go by position: a computed table may repeat a name."""
    fixed: dict[int, pd.Series] = {}
    for i in range(df.shape[1]):
        s = df.iloc[:, i]
        if s.dtype.kind in "biufcmM":  # numbers, booleans and dates: never a formula
            continue
        values = s.to_numpy(dtype=object)
        bad = unsafe_values(values)
        if bad:
            hit = s.isin(bad).to_numpy()
            values = values.copy()
            values[hit] = [f"'{v}" for v in values[hit]]
            fixed[i] = pd.Series(values, index=s.index, name=s.name)
    if not fixed:
        return df
    out = pd.concat([fixed.get(i, df.iloc[:, i]) for i in range(df.shape[1])], axis=1)
    out.columns = df.columns
    return out


def to_csv(df: pd.DataFrame) -> str:
    """``df`` as CSV text (no index, ``\\n`` line ends) that is safe in a spreadsheet."""
    return frame(df).to_csv(index=False, lineterminator="\n")


def file_is_safe(path: Path) -> bool:
    """Whether no cell of the CSV file at ``path`` would run as a formula (it is read whole:
    for files the loader did not vouch for)."""
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        return not any(unsafe(v) for row in csv.reader(f) for v in row)


def copy_safe(source: Path, dest: Path) -> None:
    """Write a copy of the CSV file ``source`` whose unsafe cells are neutralised."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    with open(source, newline="", encoding="utf-8", errors="replace") as f:
        for row in csv.reader(f):
            writer.writerow([cell(v) for v in row])
    dest.write_text(buf.getvalue(), encoding="utf-8")
