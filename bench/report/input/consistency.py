"""The checks across one run folder's files: its rows, its samples and its env.json agree.

Why: each file can be valid on its own and still not belong with the others. A kill between
a replicate's samples and its row left samples that no row commits; a resume then wrote the
replicate again, and pooling both blocks can make a steady replicate look drifting. A folder
copied together from two runs holds two environments under one run id, and an env.json that
is not its rows' own names hardware they were not measured on. So, per folder:

- every row has env.json's fingerprint and machine (one folder is one environment);
- samples come in blocks, one per write, and a block belongs to the row with its cell,
  replicate and attempt; of a row's blocks the last is its own (the rules, which ``bench
  check`` applies too, are ``bench.consistency``'s: an earlier block is left out before
  attempt ids were kept, and a problem with them). A block with no such row, or whose row is
  not ok, is a problem; so is a sample whose fingerprint or run is not its row's;
- an ok model or ceiling row has a block, of as many steady samples as its ``steady_iters``.

Within each row, the orders its figures keep (``bench.consistency``, which ``bench check``
applies too; ``row_orders``): the quantiles in order, energy and power not negative, and no
window that holds the steady state shorter than its steady steps took at the least. A row
that breaks one is refused with the rule's name. (The loader does not hold the windows to
their steps yet: ``load.HELD_WINDOWS``.)

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

from bench import consistency as rules
from bench.report.input.errors import LoadError, Problems, drop_bad, report, short
from bench.schema import ENV_FILE, RESULTS_FILE, SAMPLES_FILE, Status

#: The samples of a row: its cell, replicate and attempt.
KEY = list(rules.SAMPLE_KEY)
TIMED = list(rules.TIMED_KINDS)


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


def row_orders(nums: dict[str, pd.Series], iters: pd.Series, p: Problems,
               windows: tuple[str, ...] = rules.WINDOWS) -> None:
    """Add to ``p`` each row that breaks an order its figures keep (``nums``: the numeric
    columns as float64, NaN when empty; ``iters``: ``steady_iters``), its first broken pair
    or column in words and the rule's name after it; ``windows``: those of ``rules.WINDOWS``
    held to their steady steps. Every row is held to them: a failed row has no figures, and
    NaN breaks no rule."""
    def said(text: str, rule: str) -> str:
        return f"{text} (rule: {rule})"

    for lo, hi in rules.QUANTILE_PAIRS:
        a, b = nums[lo], nums[hi]
        p.add(rules.out_of_order(a, b), lambda idx, a=a, b=b, lo=lo, hi=hi: [
            said(f"{lo} {short(a[i])} is above {hi} {short(b[i])}", rules.QUANTILE_ORDER)
            for i in idx])
    for col in rules.ENERGY_FIGURES:
        v = nums[col]
        p.add(rules.negative(v), lambda idx, v=v, col=col: [
            said(f"{col} is negative: {short(v[i])}", rules.ENERGY_SIGN) for i in idx])
    n = pd.Series(iters.to_numpy(dtype=np.float64, na_value=np.nan), index=iters.index)
    median = nums["steady_median_s"]
    least = rules.least_steady_s(n, median)
    for col in windows:
        w = nums[col]
        p.add(rules.window_short(w, n, median), lambda idx, w=w, col=col: [
            said(f"{col} {short(w[i])} s is shorter than its steady steps took: "
                 f"{n[i] - n[i] // 2:.0f} of its {n[i]:.0f} took at least the median "
                 f"{short(median[i])} s, {least[i]:.4g} s", rules.WINDOW_LENGTH)
            for i in idx])


def _changes(values: np.ndarray) -> np.ndarray:
    return values[1:] != values[:-1]


def _blocks(samples: pd.DataFrame, steady: np.ndarray, folder: np.ndarray | None = None
            ) -> np.ndarray:
    """The position of each block's first sample (``steady``: which samples are steady;
    ``folder``: each sample's folder, where they come from many: a block never spans two)."""
    n = len(samples)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    step = rules.step(steady, samples["iter"].to_numpy(dtype=np.int64, na_value=-1))
    new = np.ones(n, dtype=bool)
    other = (_changes(samples["cell_id"].to_numpy(object))
             | _changes(samples["replicate"].to_numpy(dtype=np.int64, na_value=-1))
             | _changes(samples["attempt_id"].to_numpy(object)))
    if folder is not None:
        other |= _changes(folder)
    new[1:] = rules.new_block(other, step[:-1], step[1:])
    return np.flatnonzero(new)


def _mismatch(samples: pd.DataFrame, column: str, rows: pd.DataFrame, row_of: np.ndarray
              ) -> np.ndarray:
    """Per sample: whether its ``column`` differs from its row's (rows given by position)."""
    values = samples[column].to_numpy(object)
    wanted = rows[column].to_numpy(object)
    if len(set(wanted)) == 1:  # the usual folder: one value, compared as a scalar
        return values != wanted[0]
    return values != wanted[row_of]


@dataclass(frozen=True)
class _Blocks:
    """A folder's sample blocks: where each starts, its size and steady samples, its first
    sample, the position of its row (-1: none) and whether an earlier block of that row (not
    its last)."""

    starts: np.ndarray
    steady: np.ndarray
    counts: np.ndarray
    firsts: pd.DataFrame
    owner: np.ndarray
    earlier: np.ndarray


def _owned_blocks(res: pd.DataFrame, samples: pd.DataFrame,
                  folders: tuple[np.ndarray, np.ndarray] | None = None) -> _Blocks:
    """The blocks of ``samples`` and the row each belongs to: the last timed row of its key
    (legacy rows share a key). ``folders``: each row's and each sample's folder, where they
    come from many (a key then belongs to its folder)."""
    timed = res.loc[res["kind"].isin(TIMED)]
    row_folder, sample_folder = folders if folders else (None, None)
    if row_folder is None:
        owners = timed.loc[~timed.duplicated(KEY, keep="last")]
    else:
        keyed = timed[KEY].assign(folder=row_folder[timed.index.to_numpy()])
        owners = timed.loc[~keyed.duplicated(keep="last")]
    steady = samples["phase"].to_numpy(object) == rules.STEADY
    starts = _blocks(samples, steady, sample_folder)
    counts = np.diff(np.append(starts, len(samples)))
    per_block = np.add.reduceat(steady.astype(np.int64), starts) if len(samples) else counts
    firsts = samples.iloc[starts]
    wanted: list[Any] = [owners[k] for k in KEY]
    given: list[Any] = [firsts[k] for k in KEY]
    if row_folder is not None and sample_folder is not None:
        wanted.append(row_folder[owners.index.to_numpy()])
        given.append(sample_folder[starts])
    index = pd.MultiIndex.from_arrays(wanted)
    hit = index.get_indexer(pd.MultiIndex.from_arrays(given))
    owner = np.full(len(starts), -1, dtype=np.int64)
    owner[hit >= 0] = owners.index.to_numpy()[hit[hit >= 0]]
    last = pd.Series(np.arange(len(starts))).groupby(owner).transform("max").to_numpy()
    earlier = (owner >= 0) & (np.arange(len(starts)) != last)
    return _Blocks(starts, per_block, counts, firsts, owner, earlier)


def _block_problems(res: pd.DataFrame, samples: pd.DataFrame, b: _Blocks, superseded: np.ndarray,
                    where: Folder) -> tuple[np.ndarray, np.ndarray]:
    """Per block: its problem (``""``: none) and the line it is listed at."""
    n, owner, starts, counts = len(samples), b.owner, b.starts, b.counts
    row_of = np.repeat(owner, counts)  # -1: no row
    problem = np.full(len(starts), "", dtype=object)
    bad_line = b.firsts["line"].to_numpy(dtype=np.int64).copy()
    status = res["status"].to_numpy(object)
    lines = res["line"].to_numpy(dtype=np.int64)
    for column in ("fingerprint_id", "run_id"):
        off = _mismatch(samples, column, res, row_of) if len(res) else np.ones(n, dtype=bool)
        block_off = np.logical_or.reduceat(off, starts) if n else off
        for k in np.flatnonzero(block_off & (owner >= 0) & (problem == "")):
            i = starts[k] + int(np.argmax(off[starts[k]:starts[k] + counts[k]]))
            bad_line[k] = int(samples["line"].iloc[i])
            problem[k] = (f"{column} {short(samples[column].iloc[i])} differs from its row's "
                          f"{short(res[column].iloc[owner[k]])} ({where.results.name}:"
                          f"{lines[owner[k]]})")
    repeated = rules.repeated(b.earlier, b.firsts["attempt_id"].to_numpy(object))
    not_ok = np.zeros(len(starts), dtype=bool)
    not_ok[owner >= 0] = status[owner[owner >= 0]] != Status.OK
    suspect = (owner < 0) | repeated | (not_ok & ~superseded)
    for k in np.flatnonzero(suspect & (problem == "")):  # only the blocks with a problem
        cell = f"cell {short(b.firsts['cell_id'].iloc[k])} #r{b.firsts['replicate'].iloc[k]}"
        if owner[k] < 0:
            problem[k] = f"{counts[k]} sample(s) of {cell} have no valid row in " \
                         f"{where.results.name}"
        elif repeated[k]:
            problem[k] = (f"{counts[k]} sample(s) of {cell} repeat attempt "
                          f"{short(b.firsts['attempt_id'].iloc[k])}, whose row "
                          f"({where.results.name}:{lines[owner[k]]}) has a later block (an "
                          f"attempt writes one)")
        else:
            problem[k] = (f"{counts[k]} sample(s) belong to a row that is not ok "
                          f"({where.results.name}:{lines[owner[k]]}, "
                          f"status {status[owner[k]]})")
    return problem, bad_line


def _row_problems(res: pd.DataFrame, b: _Blocks, keep_block: np.ndarray, where: Folder
                  ) -> Problems:
    """Per row: an ok timed row needs a block of its own, of ``steady_iters`` steady
    samples."""
    has = np.zeros(len(res), dtype=bool)
    has[b.owner[keep_block]] = True
    steady = np.zeros(len(res), dtype=np.int64)
    steady[b.owner[keep_block]] = b.steady[keep_block]
    iters = res["steady_iters"]
    ok_timed = (res["status"] == Status.OK).to_numpy() & res["kind"].isin(TIMED).to_numpy()
    p = Problems(res.index)
    p.add(ok_timed & ~has, f"status ok but {where.samples.name} has no samples for it")
    p.add(ok_timed & has & iters.notna().to_numpy()
          & rules.count_differs(steady, iters.to_numpy(dtype=np.float64, na_value=-1.0)),
          lambda idx: [f"status ok with steady_iters {iters[i]}, but {where.samples.name} "
                       f"has {steady[i]} steady sample(s) for it" for i in idx])
    return p


def match_samples(
    res: pd.DataFrame, samples: pd.DataFrame, where: Folder, skip_bad: bool,
    bad_results: list[str], bad_samples: list[str],
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The rows and samples that agree; each sample gains ``row``, its row's position in the
    rows returned."""
    res = res.reset_index(drop=True)
    b = _owned_blocks(res, samples)
    # the last block of a row is its own: an earlier one was written by an attempt a kill cut
    # short, before attempts were kept (with them, an attempt has one block)
    superseded = rules.superseded(b.earlier, b.firsts["attempt_id"].to_numpy(object))
    problem, bad_line = _block_problems(res, samples, b, superseded, where)
    bad = problem != ""
    if bad.any():
        report(where.samples, bad_line[bad].tolist(), problem[bad].tolist(), skip_bad,
               bad_samples)
    keep_block = ~bad & ~superseded
    kept = drop_bad(res, _row_problems(res, b, keep_block, where), where.results,
                    skip_bad, bad_results)
    position = np.full(len(res) + 1, -1, dtype=np.int64)  # and -1 for a block without a row
    position[kept.index.to_numpy()] = np.arange(len(kept))
    row_of = np.repeat(b.owner, b.counts)
    keep = np.repeat(keep_block, b.counts) & (position[row_of] >= 0)
    out = samples.loc[keep]
    out = out.assign(row=position[row_of[keep]])
    return kept.reset_index(drop=True), out.reset_index(drop=True)


#: What a check across many folders' files calls them (every folder's have these names).
_NAMED = Folder(Path(RESULTS_FILE), Path(SAMPLES_FILE), Path(ENV_FILE))


def whole_folders(res: pd.DataFrame, samples: pd.DataFrame,
                  folders: tuple[np.ndarray, np.ndarray], count: int
                  ) -> tuple[np.ndarray, np.ndarray]:
    """For the rows and samples of ``count`` folders at once (``folders``: each row's and each
    sample's folder, 0 to ``count - 1``; each folder's rows and samples in file order, one
    folder after another): which folders ``match_samples`` would leave whole, no row or sample
    dropped and nothing named, and each sample's row (its position in ``res``). A folder left
    whole needs no matching of its own."""
    res = res.reset_index(drop=True)
    b = _owned_blocks(res, samples, folders)
    superseded = rules.superseded(b.earlier, b.firsts["attempt_id"].to_numpy(object))
    problem, _ = _block_problems(res, samples, b, superseded, _NAMED)
    keep_block = (problem == "") & ~superseded
    broken = np.zeros(count, dtype=bool)
    broken[folders[1][b.starts[~keep_block]]] = True
    broken[folders[0][_row_problems(res, b, keep_block, _NAMED).bad.to_numpy()]] = True
    return ~broken, np.repeat(b.owner, b.counts)


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
