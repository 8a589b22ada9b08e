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
is a column operation. Python loops only run over rows already known to be bad, or over files
with an old ``schema_version`` (migrations work on ``dict[str, str]`` rows, see
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
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from bench import schema
from bench.report import parallel
from bench.report.input.consistency import Folder, agree_with_env, copies, match_samples
from bench.report.input.envfile import SittingRecord, read_env, sitting_records
from bench.report.input.errors import LoadError
from bench.report.input.manifest import Vouched, committed_files, read_manifest
from bench.report.input.tables import (
    by_line,
    concat,
    empty_results,
    empty_samples,
    first,
    read_results,
    read_samples,
)
from bench.report.vocabulary import Trust

T = TypeVar("T")

__all__ = ["Dataset", "LoadError", "RunFiles", "SittingRecord", "load_reports"]


#: A replicate: a resume's re-run appended to its folder wins (two folders: ``copies``); the
#: fingerprint is part of it, so rows of two environments never replace each other.
_DEDUPE_KEY = ["run_id", "fingerprint_id", "kind", "cell_id", "replicate"]


@dataclass(frozen=True)
class RunFiles:
    """One run folder; paths are relative to the reports root."""

    machine: str
    run_id: str
    fingerprint_id: str
    results: Path
    samples: Path
    env: Path
    planned_rows: int | None = None  # from env.json; absent in runs made before it was kept
    shard: str = ""  # "2/4": which part of a cluster run it is (env.json)
    slurm_jobs: tuple[str, ...] = ()  # every Slurm job that ran the shard here, oldest first
    records: tuple[SittingRecord, ...] = ()  # what env.json records of its sittings
    #: who vouches for it: its manifest's word, else ``reference`` for a committed run that
    #: names its profile (the project's own), ``contributed`` for any other (see ``_trusted``)
    trust: Trust = Trust.REFERENCE
    #: the physical machine that measured it (manifest, else env.json); None: not recorded
    machine_uid: str | None = None
    machine_name: str = ""  # the contributor's name for the machine (manifest, else env.json)
    manifest: bool = False  # it has a manifest.json, which says its trust


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
    # Read in a second process too, the largest runs first; used (and the first bad one
    # raised) in path order.
    largest = sorted(paths, key=lambda p: (-_size(p), p))
    read = functools.partial(_read_run, root, skip_bad=skip_bad)
    found = dict(zip(largest, parallel.fork_map(read, largest)))
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


@dataclass(frozen=True)
class _Run:
    """One run folder, read and checked on its own: ``files`` is None when it is left out."""

    files: RunFiles | None
    results: pd.DataFrame
    samples: pd.DataFrame
    env: dict[str, Any] | None
    skipped: list[str]


def _read_run(root: Path, results_path: Path, *, skip_bad: bool) -> _Run | LoadError:
    """Read one run folder: its rows, their samples and env.json, and check that they agree;
    the error, returned rather than raised, if the folder cannot be used."""
    try:
        return _read_folder(root, results_path, skip_bad=skip_bad)
    except LoadError as exc:
        return exc


def _read_folder(root: Path, results_path: Path, *, skip_bad: bool) -> _Run:
    run_dir = results_path.parent
    rel_dir = run_dir.relative_to(root)
    where = Folder(results_path, run_dir / schema.SAMPLES_FILE, run_dir / schema.ENV_FILE)
    skipped: list[str] = []
    if _empty(results_path, skip_bad, skipped, "its run is left out"):
        return _Run(None, empty_results(), empty_samples(), None, skipped)
    env = _env(where.env, skip_bad, skipped)
    bad_results: list[str] = []
    bad_samples: list[str] = []
    res = read_results(results_path, rel_dir / schema.RESULTS_FILE, skip_bad, bad_results)
    res = agree_with_env(res, env, where, skip_bad, bad_results)
    if where.samples.exists() and not _empty(where.samples, skip_bad, bad_samples,
                                             "its ok rows have no samples"):
        samp = read_samples(where.samples, rel_dir / schema.SAMPLES_FILE, skip_bad,
                             bad_samples)
    else:
        samp = empty_samples()
    res, samp = match_samples(res, samp, where, skip_bad, bad_results, bad_samples)
    skipped += by_line(bad_results, results_path) + by_line(bad_samples, where.samples)
    fingerprint = str(env["fingerprint_id"]) if env else first(res, "fingerprint_id")
    shard, jobs = _shard(env, run_dir)
    bad_manifest = len(skipped)
    manifest = _manifest(run_dir, skip_bad, skipped)
    vouched = _vouched(manifest, env)
    if len(skipped) > bad_manifest:  # a manifest that cannot be read vouches for nothing
        vouched.update(trust=Trust.CONTRIBUTED, manifest=True)
    files = RunFiles(
        machine=str(env.get("machine", "")) if env else first(res, "machine"),
        run_id=str(env.get("run_id", "")) if env else first(res, "run_id"),
        fingerprint_id=fingerprint,
        results=rel_dir / schema.RESULTS_FILE,
        samples=rel_dir / schema.SAMPLES_FILE,
        env=rel_dir / schema.ENV_FILE,
        planned_rows=_planned(env),
        shard=shard,
        slurm_jobs=jobs,
        records=sitting_records(env),
        **vouched,
    )
    return _Run(files, res, samp, env, skipped)


def _manifest(run_dir: Path, skip_bad: bool, skipped: list[str]) -> Vouched | None:
    """The folder's manifest; with ``skip_bad`` a bad one is listed, and the run kept as one
    nobody vouches for."""
    return _tolerated(lambda: read_manifest(run_dir), skip_bad, skipped,
                      "the run is kept as contributed")


def _vouched(manifest: Vouched | None, env: dict[str, Any] | None) -> dict[str, Any]:
    """A run's trust, machine id and machine name: the manifest's, else env.json's (a run
    that names its profile counts as the project's own until ``_trusted`` finds it is not
    committed)."""
    env = env or {}
    uid = env.get("machine_uid")
    uid = uid.strip() or None if isinstance(uid, str) else None
    name = str(env.get("machine") or "")
    if manifest is not None:
        return {"trust": manifest.trust, "machine_uid": manifest.machine_uid or uid,
                "machine_name": manifest.machine_name, "manifest": True}
    named = isinstance(env.get("profile"), str) and bool(env["profile"].strip())
    return {"trust": Trust.REFERENCE if named else Trust.CONTRIBUTED, "machine_uid": uid,
            "machine_name": name, "manifest": False}


def _size(results_path: Path) -> int:
    """Bytes to read for a run folder: how its reading is weighed against the others'."""
    return sum(
        p.stat().st_size if p.exists() else 0
        for p in (results_path, results_path.with_name(schema.SAMPLES_FILE))
    )


def _shard(env: dict[str, Any] | None, run_dir: Path) -> tuple[str, tuple[str, ...]]:
    """A shard's place in its cluster run (``"2/4"``) and every Slurm job that ran it, oldest
    first: env.json's, then those the folder's jobs file adds (a resume). Both are untrusted:
    the place as text, job ids only."""
    found = (env or {}).get("shard")
    if not isinstance(found, dict) or not found.get("spec"):
        return "", ()
    try:
        listed = (run_dir / schema.SLURM_JOBS_FILE).read_text(encoding="utf-8").split()
    except (OSError, ValueError):
        listed = []
    jobs = [str(found.get("slurm_job_id") or ""), *listed]
    return str(found["spec"]), tuple(dict.fromkeys(
        j for j in jobs if re.fullmatch(r"\d+(_\d+)?", j)))


def _empty(path: Path, skip_bad: bool, skipped: list[str], then: str) -> bool:
    """Whether ``path`` is a zero-byte file (a run killed as it created it, or a bad copy)."""
    if path.stat().st_size:
        return False
    if not skip_bad:
        raise LoadError(path, 1, "empty file: no header line")
    skipped.append(f"{path}:1: empty file: no header line; {then}")
    return True


def _env(path: Path, skip_bad: bool, skipped: list[str]) -> dict[str, Any] | None:
    """The folder's env.json; with ``skip_bad``, a missing or bad one is listed and the rows
    are kept without an environment."""
    def read() -> dict[str, Any]:
        if not path.exists():
            raise LoadError(path, 0, "missing env.json next to results.csv")
        return read_env(path)

    return _tolerated(read, skip_bad, skipped, "results kept without an environment")


def _tolerated(read: Callable[[], T], skip_bad: bool, skipped: list[str], kept: str
               ) -> T | None:
    """``read()``; where it fails to load and ``skip_bad`` is set, None, the failure listed in
    ``skipped`` with what was ``kept`` of the run."""
    try:
        return read()
    except LoadError as exc:
        if not skip_bad:
            raise
        skipped.append(f"{exc}; {kept}")
        return None


def _planned(env: dict[str, Any] | None) -> int | None:
    value = (env or {}).get("planned_rows")
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
