"""The checks across one run folder's files: its rows, its samples and its env.json agree.

Why: each file can be valid on its own and still not belong with the others. A kill between
a replicate's samples and its row left samples that no row commits; a resume then wrote the
replicate again, and pooling both blocks can make a steady replicate look drifting. A folder
copied together from two runs holds two environments under one run id, and an env.json that
is not its rows' own names hardware they were not measured on. So, per folder:

- every row has env.json's fingerprint and machine (one folder is one environment);
- samples come in blocks, one per write: consecutive samples of one replicate and attempt
  whose iterations go forward. A block belongs to the row with its cell, replicate and
  attempt (``attempt_id``; rows and samples written before it was kept match with it empty,
  and then, as a resume appends, the last block of a replicate is its row's). A block with
  no such row, or whose row is not ok, is a problem; so is a sample whose fingerprint or run
  is not its row's;
- an ok model or ceiling row has a block.

Across folders: a replicate (its run id, fingerprint, cell and replicate) is measured in one
folder, so the same one in a second folder is a copy of a run (``copies``), never an attempt
that replaces the first (a resume's re-run, which only happens in its own folder).

Strict loading raises the first problem as ``file:line: problem``; ``skip_bad`` lists each and
leaves it out (a block is listed once, at its first line). Vectorised: a block is found by
comparing each sample with the one before it, and blocks, not samples, are matched to rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.report.errors import LoadError, Problems, drop_bad, report, short

#: The samples of a row: its cell, replicate and attempt.
KEY = ("cell_id", "replicate", "attempt_id")
TIMED = ("model", "ceiling")


@dataclass(frozen=True)
class Folder:
    """One run folder's files, as messages name them."""

    results: Path
    samples: Path
    env: Path


def agree_with_env(
    res: pd.DataFrame, env: dict[str, Any] | None, where: Folder, skip_bad: bool, out: list[str]
) -> pd.DataFrame:
    """Rows whose fingerprint and machine are env.json's (or, without one, the first row's
    fingerprint): one run folder holds one environment."""
    p = Problems(res.index)
    fp = res["fingerprint_id"]
    if env is not None:
        want = str(env["fingerprint_id"])
        p.add(fp != want, lambda idx: [
            f"fingerprint_id {short(fp[i])} differs from {where.env.name}'s {want!r} (one run "
            f"folder holds one environment)" for i in idx])
        machine = env.get("machine")
        if isinstance(machine, str):
            rows = res["machine"]
            p.add((rows != "") & (rows != machine), lambda idx: [
                f"machine {short(rows[i])} differs from {where.env.name}'s {machine!r}"
                for i in idx])
    elif len(res):
        first = str(fp.iloc[0])
        p.add(fp != first, lambda idx: [
            f"a second fingerprint_id {short(fp[i])} in one run folder (its first row has "
            f"{first!r})" for i in idx])
    return drop_bad(res, p, where.results, skip_bad, out)


def _changes(values: np.ndarray) -> np.ndarray:
    return values[1:] != values[:-1]


def _blocks(samples: pd.DataFrame) -> np.ndarray:
    """The position of each block's first sample."""
    n = len(samples)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    step = np.where(samples["phase"].to_numpy(object) == "steady", 1 << 40, 0) + samples[
        "iter"].to_numpy(dtype=np.int64, na_value=-1)
    new = np.ones(n, dtype=bool)
    new[1:] = (
        _changes(samples["cell_id"].to_numpy(object))
        | _changes(samples["replicate"].to_numpy(dtype=np.int64, na_value=-1))
        | _changes(samples["attempt_id"].to_numpy(object))
        | (step[1:] <= step[:-1])
    )
    return np.flatnonzero(new)


def _mismatch(samples: pd.DataFrame, column: str, rows: pd.DataFrame, row_of: np.ndarray
              ) -> np.ndarray:
    """Per sample: whether its ``column`` differs from its row's (rows given by position)."""
    values = samples[column].to_numpy(object)
    wanted = rows[column].to_numpy(object)
    if len(set(wanted)) == 1:  # the usual folder: one value, compared as a scalar
        return values != wanted[0]
    return values != wanted[row_of]


def match_samples(
    res: pd.DataFrame, samples: pd.DataFrame, where: Folder, skip_bad: bool,
    bad_results: list[str], bad_samples: list[str],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows and samples that agree; each sample gains ``row``, its row's position in the
    rows returned."""
    res = res.reset_index(drop=True)
    timed = res.loc[res["kind"].isin(TIMED)]
    # the last row of each key is the one its samples belong to (legacy rows share a key)
    owners = timed.loc[~timed.duplicated(list(KEY), keep="last")]
    starts = _blocks(samples)
    n = len(samples)
    counts = np.diff(np.append(starts, n))
    firsts = samples.iloc[starts]
    index = pd.MultiIndex.from_arrays([owners[k] for k in KEY])
    hit = index.get_indexer(pd.MultiIndex.from_arrays([firsts[k] for k in KEY]))
    owner = np.full(len(starts), -1, dtype=np.int64)
    owner[hit >= 0] = owners.index.to_numpy()[hit[hit >= 0]]
    # the last block of a row is its own: earlier ones were written by an attempt a kill cut
    # short, before attempts were kept (with them, an attempt has one block)
    last = pd.Series(np.arange(len(starts))).groupby(owner).transform("max").to_numpy()
    superseded = (owner >= 0) & (np.arange(len(starts)) != last)
    row_of = np.repeat(owner, counts)  # -1: no row
    problem = np.full(len(starts), "", dtype=object)
    bad_line = firsts["line"].to_numpy(dtype=np.int64).copy()
    status = res["status"].to_numpy(object)
    lines = res["line"].to_numpy(dtype=np.int64)
    for column in ("fingerprint_id", "run_id"):
        off = _mismatch(samples, column, res, row_of) if len(res) else np.ones(n, dtype=bool)
        block_off = np.logical_or.reduceat(off, starts) if n else off
        for b in np.flatnonzero(block_off & (owner >= 0) & (problem == "")):
            i = starts[b] + int(np.argmax(off[starts[b]:starts[b] + counts[b]]))
            bad_line[b] = int(samples["line"].iloc[i])
            problem[b] = (f"{column} {short(samples[column].iloc[i])} differs from its row's "
                          f"{short(res[column].iloc[owner[b]])} ({where.results.name}:"
                          f"{lines[owner[b]]})")
    for b in np.flatnonzero(problem == ""):
        if owner[b] < 0:
            problem[b] = (f"{counts[b]} sample(s) of cell {short(firsts['cell_id'].iloc[b])} "
                          f"#r{firsts['replicate'].iloc[b]} have no valid row in "
                          f"{where.results.name}")
        elif status[owner[b]] != "ok" and not superseded[b]:
            problem[b] = (f"{counts[b]} sample(s) belong to a row that is not ok "
                          f"({where.results.name}:{lines[owner[b]]}, "
                          f"status {status[owner[b]]})")
    bad = problem != ""
    if bad.any():
        report(where.samples, bad_line[bad].tolist(), problem[bad].tolist(), skip_bad,
               bad_samples)
    keep_block = ~bad & ~superseded
    # an ok timed row needs a block of its own
    has = np.zeros(len(res), dtype=bool)
    has[owner[keep_block]] = True
    p = Problems(res.index)
    p.add((status == "ok") & res["kind"].isin(TIMED).to_numpy() & ~has,
          f"status ok but {where.samples.name} has no samples for it")
    kept = drop_bad(res, p, where.results, skip_bad, bad_results)
    position = np.full(len(res) + 1, -1, dtype=np.int64)  # and -1 for a block without a row
    position[kept.index.to_numpy()] = np.arange(len(kept))
    keep = np.repeat(keep_block, counts) & (position[row_of] >= 0)
    out = samples.loc[keep]
    out = out.assign(row=position[row_of[keep]])
    return kept.reset_index(drop=True), out.reset_index(drop=True)


def copies(results: pd.DataFrame, latest: np.ndarray, key: list[str], root: Path,
           skip_bad: bool, skipped: list[str]) -> np.ndarray:
    """Per row of ``results`` (every folder's, in path order; ``latest``: the rows no later
    attempt in their own folder replaced): whether its replicate (``key``) is already in an
    earlier run folder.

    A replicate is measured in one folder (a resume re-runs it in its own, and a shard's
    folder holds its own cells), so the same key in a second folder is a copy of a run, not
    an attempt that replaces one: strict loading raises it at its line, ``skip_bad`` lists it
    and keeps the first folder's row (the folders are read in path order)."""
    out = np.zeros(len(results), dtype=bool)
    if not len(results):
        return out
    current = results.loc[latest]
    again = current.duplicated(key, keep="first")
    if not again.any():
        return out
    firsts = current.loc[~again & current.duplicated(key, keep=False)]
    first_at = {tuple(k): f"{root / src}:{line}" for k, src, line in zip(
        firsts[key].itertuples(index=False, name=None), firsts["source"], firsts["line"])}
    for r in current.loc[again].itertuples(index=False):
        at = first_at[tuple(getattr(r, c) for c in key)]
        problem = (f"replicate {r.replicate} of {r.kind} cell {r.cell_id} (run {r.run_id}, "
                   f"fingerprint {r.fingerprint_id}) is also in {at}; a replicate "
                   "belongs to one run folder (a resume re-runs it in its own): remove the "
                   "copied folder or give it its own run")
        if not skip_bad:
            raise LoadError(root / r.source, int(r.line), problem)
        skipped.append(f"{root / r.source}:{r.line}: {problem}")
    out[np.flatnonzero(latest)[again.to_numpy()]] = True
    return out
