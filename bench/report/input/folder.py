"""One run folder read on its own: its results.csv, samples.csv, env.json and manifest, each
file checked (``tables``, ``envfile``, ``manifest``), then checked against each other
(``consistency``), and what the folder is (``RunFiles``).

Why a module of its own: ``load`` reads a tree of folders, and ``batch`` checks the columns of
many clean folders together; both finish a folder here, the same way, so a folder's problems
are named alike whichever path read it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pandas as pd

from bench import schema
from bench.report.input.consistency import Folder, agree_with_env, match_samples
from bench.report.input.envfile import SittingRecord, read_env, sitting_records
from bench.report.input.errors import LoadError
from bench.report.input.manifest import Vouched, read_manifest
from bench.report.input.tables import (
    by_line,
    empty_results,
    empty_samples,
    first,
    read_results,
    read_samples,
)
from bench.report.vocabulary import Trust

T = TypeVar("T")


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
class FolderRead:
    """One run folder, read and checked on its own: ``files`` is None when it is left out."""

    files: RunFiles | None
    results: pd.DataFrame
    samples: pd.DataFrame
    env: dict[str, Any] | None
    skipped: list[str]


def read_run(root: Path, results_path: Path, *, skip_bad: bool) -> FolderRead | LoadError:
    """Read one run folder: its rows, their samples and env.json, and check that they agree;
    the error, returned rather than raised, if the folder cannot be used."""
    try:
        return _read_folder(root, results_path, skip_bad=skip_bad)
    except LoadError as exc:
        return exc


def _read_folder(root: Path, results_path: Path, *, skip_bad: bool) -> FolderRead:
    where = folder_files(results_path)
    skipped: list[str] = []
    if _empty(results_path, skip_bad, skipped, "its run is left out"):
        return FolderRead(None, empty_results(), empty_samples(), None, skipped)
    env = _env(where.env, skip_bad, skipped)
    bad_results: list[str] = []
    bad_samples: list[str] = []
    rel_dir = results_path.parent.relative_to(root)
    res = read_results(results_path, rel_dir / schema.RESULTS_FILE, skip_bad, bad_results)
    res = agree_with_env(res, env, where, skip_bad, bad_results)
    if where.samples.exists() and not _empty(where.samples, skip_bad, bad_samples,
                                             "its ok rows have no samples"):
        samp = read_samples(where.samples, rel_dir / schema.SAMPLES_FILE, skip_bad,
                             bad_samples)
    else:
        samp = empty_samples()
    return finish(root, results_path, env, (res, samp), skip_bad,
                  skipped, (bad_results, bad_samples))


def folder_files(results_path: Path) -> Folder:
    """The files of ``results_path``'s run folder, as its problems name them."""
    run_dir = results_path.parent
    return Folder(results_path, run_dir / schema.SAMPLES_FILE, run_dir / schema.ENV_FILE)


def finish(root: Path, results_path: Path, env: dict[str, Any] | None,
           tables: tuple[pd.DataFrame, pd.DataFrame], skip_bad: bool, skipped: list[str],
           bad: tuple[list[str], list[str]], *, matched: bool = False) -> FolderRead:
    """A folder whose files were each read and checked, its rows against env.json too
    (``tables``: its typed rows and samples; ``bad``: the problems found in each file so far):
    its samples matched to its rows (``matched``: they are, each with its ``row``), then what
    the folder is."""
    where = folder_files(results_path)
    (res, samp), (bad_results, bad_samples) = tables, bad
    if not matched:
        res, samp = match_samples(res, samp, where, skip_bad, bad_results, bad_samples)
    skipped += by_line(bad_results, results_path) + by_line(bad_samples, where.samples)
    fingerprint = str(env["fingerprint_id"]) if env else first(res, "fingerprint_id")
    run_dir = results_path.parent
    rel_dir = run_dir.relative_to(root)
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
    return FolderRead(files, res, samp, env, skipped)


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


def size(results_path: Path) -> int:
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
