"""The report's one error for a file it cannot use (``<path>:<line>: <problem>``, on one
line) and the per-row problem list that feeds it: strict loading raises the first problem,
``skip_bad`` lists them all and leaves those rows out.

Its own module so that every part of loading (the CSV reader, env.json, the checks across
files) reports problems the same way without importing each other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd


def one_line(text: str) -> str:
    return " ".join(text.split())


class LoadError(Exception):
    """A file that cannot be used; the message is one line, ``<path>:<line>: <problem>``."""

    def __init__(self, path: str | Path, line: int, problem: str) -> None:
        self.path = str(path)
        self.line = line
        self.problem = one_line(problem)
        super().__init__(f"{self.path}:{line}: {self.problem}")

    def __reduce__(self) -> tuple[type[LoadError], tuple[str, int, str]]:
        """Pickled with its three parts (a report worker sends it back to the build)."""
        return (LoadError, (self.path, self.line, self.problem))


class Problems:
    """The first problem found for each row of a frame, in check order."""

    def __init__(self, index: pd.Index) -> None:
        self.text = pd.Series("", index=index, dtype=object)

    def add(self, mask: pd.Series | np.ndarray, message: Any) -> None:
        """``message``: a string, or a function of the bad rows' index giving one per row."""
        arr = np.asarray(mask, dtype=bool)
        if not arr.any():
            return
        new = pd.Series(arr, index=self.text.index) & (self.text == "")
        if not new.any():
            return
        if callable(message):
            self.text.loc[new] = list(message(new[new].index))
        else:
            self.text.loc[new] = message

    @property
    def bad(self) -> pd.Series:
        return self.text != ""


def report(
    path: Path, lines: list[int], problems: list[str], skip_bad: bool, skipped: list[str]
) -> None:
    """Strict: raise the first problem by line. ``skip_bad``: list them all, in line order."""
    if not lines:
        return
    order = sorted(range(len(lines)), key=lines.__getitem__)
    if not skip_bad:
        first = order[0]
        raise LoadError(path, lines[first], problems[first])
    skipped.extend(f"{path}:{lines[i]}: {one_line(problems[i])}" for i in order)


def drop_bad(
    df: pd.DataFrame, p: Problems, path: Path, skip_bad: bool, skipped: list[str]
) -> pd.DataFrame:
    """``df`` without its bad rows, which are raised (strict) or listed (``skip_bad``)."""
    bad = p.bad
    if not bad.any():
        return df
    report(path, df.loc[bad, "line"].tolist(), p.text[bad].tolist(), skip_bad, skipped)
    return df.loc[~bad]


def short(value: object) -> str:
    """The offending value as the file holds it: ``'fast'``, ``-1.5`` (not ``np.float64(-1.5)``)."""
    if isinstance(value, np.generic):
        value = value.item()
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
