"""Read every ``results.csv`` under a reports root, with its ``samples.csv`` and ``env.json``.

Why so strict: every page is built on these rows, so a bad file stops the build with one line
that names the file, the line and the problem (``LoadError``), instead of quietly turning into a
wrong number. ``skip_bad=True`` trades that for a list of skipped rows (``Dataset.skipped``); a
missing column or a bad header still fails, since no row of such a file can be trusted. An empty
file, or an env.json that is missing, unreadable or wrongly typed (``input.envfile``), is listed
too: the run is left out, or kept without its environment.

Each file on its own is not enough: a run folder's rows, samples and env.json must agree
(``bench.report.input.consistency``: one environment per folder, every sample block committed by its
row through ``attempt_id``, every ok row with its samples).

Why vectorised: a community tree can hold 100k result rows and a million samples. Record
boundaries, line numbers and field counts are found with numpy over the raw bytes (quote-aware,
so a multi-line error message keeps later line numbers right); pandas' C parser reads numbers as
float64 (a file with text in a number column is re-read as strings to find the row); every check
is a column operation, over many folders at once where their files read plainly (``batch``;
a folder is read on its own, ``folder``, when anything in it needs a closer look). Python
loops only run over rows already known to be bad, or over files with an old
``schema_version`` (migrations work on ``dict[str, str]`` rows, see
``bench.schema.migrate``).

What comes out (``Dataset``):

- ``results``: ``RESULT_COLUMNS`` in order plus ``source`` (the csv path relative to the root,
  POSIX) and ``line`` (1-based line where the record starts). Numeric columns are float64 (NaN
  when empty), ``INTEGER_COLUMNS`` nullable ``Int64``, the columns whose only values are
  ``true`` and ``false`` (``repro_bitwise_equal``) nullable ``boolean``, everything else a
  string with ``""`` for empty. Deduplicated within each run folder on (run_id,
  fingerprint_id, kind, cell_id, replicate), the last row in file order winning (a resume
  appends); the same key in two folders is a copy, a ``file:line`` problem (listed, and the
  later folder's row left out, with ``skip_bad``).
- ``samples``: ``SAMPLE_COLUMNS`` plus ``source`` and ``line``; numbers (``seconds``) float64,
  the integer columns ``Int64``, ids as strings. Only the samples of the rows kept: one block
  per replicate (version 1 files keep no attempt ids: of a replicate written twice, the last
  block).
- ``envs``: ``fingerprint_id`` → parsed env.json. Results from different fingerprints are never
  pooled downstream; a fingerprint whose env.json is missing (``skip_bad``) has no entry.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from bench import schema
from bench.report import parallel
from bench.report.input.batch import read_runs
from bench.report.input.consistency import copies
from bench.report.input.envfile import SittingRecord
from bench.report.input.errors import LoadError
from bench.report.input.folder import RunFiles, size
from bench.report.input.manifest import committed_files
from bench.report.input.tables import concat, empty_results, empty_samples
from bench.report.vocabulary import Trust

__all__ = ["Dataset", "LoadError", "RunFiles", "SittingRecord", "load_reports"]


#: A replicate: a resume's re-run appended to its folder wins (two folders: ``copies``); the
#: fingerprint is part of it, so rows of two environments never replace each other.
_DEDUPE_KEY = ["run_id", "fingerprint_id", "kind", "cell_id", "replicate"]
#: Batches a tree is read in: enough for two processes to share them evenly, few enough that
#: each checks the columns of many folders at once.
_BATCHES = 16


@dataclass(frozen=True)
class Dataset:
    """Everything under a reports root, validated and typed (see the module docstring)."""

    results: pd.DataFrame
    samples: pd.DataFrame
    envs: dict[str, dict[str, Any]]
    runs: list[RunFiles]
    skipped: list[str] = field(default_factory=list)
    #: results.csv (as ``source``) → its rows a later attempt of the same replicate in the same
    #: file replaced (a resume ran it again); they stay in the file, and the last attempt is
    #: the one counted.
    replaced: dict[str, int] = field(default_factory=dict)


def load_reports(root: Path, *, skip_bad: bool = False) -> Dataset:
    """Load and validate every run under ``root``; raise ``LoadError`` on the first bad row.

    With ``skip_bad`` the bad rows are dropped and listed in ``Dataset.skipped`` as
    ``"path:line: problem"``; a missing column or a bad header still raises (skip_bad is about
    rows, and such a file has no trustworthy row).
    """
    root = Path(root)
    skipped: list[str] = []
    results: list[pd.DataFrame] = []
    samples: list[pd.DataFrame] = []
    envs: dict[str, dict[str, Any]] = {}
    runs: list[RunFiles] = []
    offset = 0  # rows loaded so far: a sample's ``row`` is its row's position among them
    paths = sorted(root.rglob(schema.RESULTS_FILE))
    # Read in batches (``batch``), in a second process too, the largest runs first; used (and
    # the first bad one raised) in path order.
    largest = sorted(paths, key=lambda p: (-size(p), p))
    per = max(1, -(-len(largest) // _BATCHES))
    batches = [largest[i:i + per] for i in range(0, len(largest), per)]
    read = functools.partial(read_runs, root, skip_bad=skip_bad)
    found = dict(zip(itertools.chain.from_iterable(batches),
                     itertools.chain.from_iterable(parallel.fork_map(read, batches))))
    for run in (found[p] for p in paths):
        if isinstance(run, LoadError):
            raise run
        skipped += run.skipped
        if run.files is None:
            continue
        results.append(run.results)
        samples.append(run.samples.assign(row=run.samples["row"] + offset))
        offset += len(run.results)
        if run.env is not None:
            envs[run.files.fingerprint_id] = run.env
        runs.append(run.files)
    all_results = concat(results, empty_results())
    # a resume appends to its own folder: only there does a later row replace an earlier one
    latest = ~all_results.duplicated([*_DEDUPE_KEY, "source"], keep="last").to_numpy()
    copied = copies(all_results, latest, _DEDUPE_KEY, root, skip_bad, skipped)
    kept = latest & ~copied
    all_samples = concat(samples, empty_samples().assign(row=pd.Series(dtype="int64")))
    replaced: dict[str, int] = {}
    if not latest.all():
        replaced = {str(k): int(v) for k, v in
                    all_results.loc[~latest, "source"].value_counts().items()}
    if not kept.all():  # a row replaced or left out: its samples go with it
        all_samples = all_samples.loc[kept[all_samples["row"].to_numpy()]]
        all_results = all_results.loc[kept]
    all_results = all_results.reset_index(drop=True)
    all_samples = all_samples.drop(columns="row").reset_index(drop=True)
    return Dataset(all_results, all_samples, envs, _trusted(root, runs), skipped, replaced)


def _trusted(root: Path, runs: list[RunFiles]) -> list[RunFiles]:
    """Runs without a manifest, as ``_read_folder`` judged them, less those git does not hold
    yet: a committed run is the project's own, a run only on this disk is not (yet)."""
    if not any(not r.manifest and r.trust is Trust.REFERENCE for r in runs):
        return runs
    found = committed_files(root)
    if found is None:
        return runs
    held, changed = found

    def committed(r: RunFiles) -> bool:
        path = r.results.as_posix()
        return path in held and path not in changed

    return [dataclasses.replace(r, trust=Trust.CONTRIBUTED)
            if not r.manifest and not committed(r) else r for r in runs]


