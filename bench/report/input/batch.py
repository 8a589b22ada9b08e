"""Many run folders read together: the rules a row or a sample keeps on its own are checked,
and the columns typed, once over every clean folder of a batch rather than once per folder.

Why: pandas takes about as long to check or type a column of 100 rows as one of 10,000, and
a tree of many small runs paid that once per folder: about 30 ms a folder, three times what
reading its two CSV files takes. A tree that many machines joined is such a tree.

Only a folder whose files read plainly joins a batch: env.json present and valid, both CSV
files of this schema version, every record with its fields, every number a number. The
rest, and any folder in which the batch finds a problem, are read on their own by
``folder.read_run``, which names each problem with its file and line, as it always has; the
checks across a folder's files (env.json, sample blocks) run per folder either way
(``folder.finish``). So a batch changes the time a tree takes, never what it gives.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench import schema
from bench.report.input.consistency import agree_with_env, whole_folders
from bench.report.input.envfile import read_env
from bench.report.input.errors import LoadError
from bench.report.input.folder import FolderRead, finish, folder_files, read_run
from bench.report.input.tables import (
    current_results_table,
    result_problems,
    sample_problems,
    samples_table,
    typed_results,
    typed_samples,
)

_RESULT_NUMBERS = frozenset((*schema.NUMERIC_COLUMNS, *schema.INTEGER_COLUMNS))
_SAMPLE_NUMBERS = frozenset(c.name for c in schema.SAMPLE_SPEC if c.type in ("float", "int"))
_RESULT_KEPT = [*schema.RESULT_COLUMNS, "source", "line"]
_SAMPLE_KEPT = [*schema.SAMPLE_COLUMNS, "source", "line"]


@dataclass(frozen=True)
class _Plain:
    """A folder whose files read plainly: its env.json, and its rows and samples as read."""

    path: Path
    env: dict[str, Any]
    results: pd.DataFrame
    samples: pd.DataFrame


def read_runs(root: Path, paths: Sequence[Path], *, skip_bad: bool
              ) -> list[FolderRead | LoadError]:
    """``[folder.read_run(root, p) for p in paths]``, the plain folders' files checked and
    typed together (see the module docstring)."""
    plain = [f for f in (_plain(root, p) for p in paths) if f is not None]
    together = _checked_together(plain)
    out: list[FolderRead | LoadError] = []
    for path in paths:
        found = together.get(path)
        out.append(read_run(root, path, skip_bad=skip_bad) if found is None
                   else _finished(root, found, skip_bad))
    return out


def _plain(root: Path, results_path: Path) -> _Plain | None:
    """The folder's env.json and files as read, if they read plainly; None if anything in
    them needs a closer look (``read_run`` gives it one)."""
    where = folder_files(results_path)
    try:
        if not (results_path.stat().st_size and where.samples.stat().st_size):
            return None
        rel_dir = results_path.parent.relative_to(root)
        env = read_env(where.env)
        noted: list[str] = []
        res = current_results_table(results_path, rel_dir / schema.RESULTS_FILE, True, noted)
        if res is None or noted:
            return None
        samp = samples_table(where.samples, rel_dir / schema.SAMPLES_FILE, True, noted)
    except (LoadError, OSError):
        return None
    if noted or not (_as_read(res, _RESULT_NUMBERS) and _as_read(samp, _SAMPLE_NUMBERS)):
        return None
    return _Plain(results_path, env, res[_RESULT_KEPT], samp[_SAMPLE_KEPT])


def _as_read(df: pd.DataFrame, numbers: frozenset[str]) -> bool:
    """Whether every number column was parsed as numbers and every other as text (a file
    read again as text, or migrated from an older version, was not)."""
    if not len(df):
        return False
    text = np.dtype(object)
    return all(dtype == ("float64" if col in numbers else text)
               for col, dtype in df.dtypes.items() if col != "line")


@dataclass(frozen=True)
class _Typed:
    """A plain folder whose files broke no rule of their own: its rows and samples typed, and
    whether its samples are already matched to its rows (each with its ``row``)."""

    folder: _Plain
    results: pd.DataFrame
    samples: pd.DataFrame
    matched: bool


def _checked_together(plain: list[_Plain]) -> dict[Path, _Typed]:
    """Each folder in which no row and no sample breaks a rule of its own → its typed rows and
    samples, matched where ``consistency.whole_folders`` finds nothing to match."""
    if not plain:
        return {}
    res = pd.concat([f.results for f in plain], ignore_index=True)
    samp = pd.concat([f.samples for f in plain], ignore_index=True)
    res_of = np.repeat(np.arange(len(plain)), [len(f.results) for f in plain])
    samp_of = np.repeat(np.arange(len(plain)), [len(f.samples) for f in plain])
    res_checked, samp_checked = result_problems(res), sample_problems(samp)
    bad = np.zeros(len(plain), dtype=bool)
    bad[res_of[res_checked[0].bad.to_numpy()]] = True
    bad[samp_of[samp_checked[0].bad.to_numpy()]] = True
    good = np.flatnonzero(~bad)
    typed_res = typed_results(res.loc[~bad[res_of]], res_checked)
    typed_samp = typed_samples(samp.loc[~bad[samp_of]], samp_checked)
    n_res = [len(plain[k].results) for k in good]
    n_samp = [len(plain[k].samples) for k in good]
    whole, row_of = whole_folders(
        typed_res, typed_samp, (np.repeat(np.arange(len(good)), n_res),
                                np.repeat(np.arange(len(good)), n_samp)), len(good))
    first_row = np.cumsum([0, *n_res[:-1]])
    out: dict[Path, _Typed] = {}
    for k, r, s, rows in zip(range(len(good)), _parts(typed_res, n_res),
                             _parts(typed_samp, n_samp), _parts_of(row_of, n_samp)):
        if whole[k]:
            s = s.assign(row=rows - first_row[k])
        out[plain[good[k]].path] = _Typed(plain[good[k]], r, s, bool(whole[k]))
    return out


def _parts(df: pd.DataFrame, lengths: list[int]) -> list[pd.DataFrame]:
    """``df`` cut into consecutive parts of ``lengths`` rows, each indexed from 0."""
    ends = np.cumsum(lengths)
    return [df.iloc[end - n:end].reset_index(drop=True) for n, end in zip(lengths, ends)]


def _parts_of(values: np.ndarray, lengths: list[int]) -> list[np.ndarray]:
    return np.split(values, np.cumsum(lengths)[:-1]) if lengths else []


def _finished(root: Path, typed: _Typed, skip_bad: bool) -> FolderRead | LoadError:
    """A plain folder's typed files, checked against each other and its env.json."""
    folder = typed.folder
    bad_results: list[str] = []
    try:
        res = agree_with_env(typed.results, folder.env, folder_files(folder.path), skip_bad,
                             bad_results)
        matched = typed.matched and len(res) == len(typed.results)
        samp = typed.samples if matched else typed.samples.drop(columns="row", errors="ignore")
        return finish(root, folder.path, folder.env, (res, samp), skip_bad, [],
                      (bad_results, []), matched=matched)
    except LoadError as exc:
        return exc
