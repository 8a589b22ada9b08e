"""``python -m bench add FILE_OR_DIR``: a packed run (``bench pack``) taken into ``reports/``.

Why so careful: the pack comes from a machine this repository never saw. Nothing is placed
until every rule has passed on a staged copy: the archive's members stay inside it (no
absolute path, no ``..``, no link), every file hashes to what the manifest says, env.json's
facts give its fingerprint and the rows carry it, the measuring code is the code of a commit
of this repository's history, and the run passes ``bench check --all``'s rules
(``bench.commands.audit``). Only then is it moved to ``reports/<machine>/<run-id>/``, and
never over a folder already there.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

from bench.commands import audit
from bench.commands.base import Command
from bench.commands.exits import fail
from bench.run.store import manifest as manifests
from bench.run.store.manifest import Manifest, ManifestError, TrustLevel
from bench.run.store.provenance import repository_root


class AddRefused(Exception):
    """Why the pack is not added, in one line."""


class AddCommand(Command):
    """Verify a pack on a staged copy, then move it under ``reports/``."""

    name = "add"
    help = "verify a packed run (bench pack) and add it under reports/"
    description = (
        "Takes a .tar.gz from bench pack, or a packed run folder (one holding manifest.json). "
        "Refuses archive members that would land outside it (absolute paths, '..', links), "
        "files whose sha256 differs from the manifest, an env.json whose facts do not give "
        "its fingerprint or rows of another, measuring code that no commit of this repository "
        "holds, and whatever bench check --all refuses; then moves the run to "
        "REPORTS/<machine>/<run-id>/, never over an existing folder.")

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("source", metavar="FILE_OR_DIR", type=Path)
        parser.add_argument("--reports", type=Path, default=Path("reports"),
                            help="the reports tree to add to (default: reports)")
        parser.add_argument("--repo", metavar="DIR", type=Path, default=None,
                            help="the git checkout whose history holds the measuring code "
                                 "(default: the one this package lives in)")

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        with tempfile.TemporaryDirectory(prefix="bench-add-") as tmp:
            try:
                target = add(args.source, args.reports, Path(tmp),
                             args.repo or repository_root())
            except AddRefused as exc:
                return fail(str(exc))
        print(f"added {args.source} as {target}")
        return 0


def safe_members(tar: tarfile.TarFile, source: Path) -> tuple[list[tarfile.TarInfo], str]:
    """The archive's members, each a plain file or folder inside ``<machine>/<run-id>/``,
    and that folder; ``AddRefused`` naming the first that is not."""
    members = tar.getmembers()
    runs: set[str] = set()
    for m in members:
        path = PurePosixPath(m.name)
        if m.name.startswith(("/", "\\")) or path.is_absolute() or ":" in path.parts[0]:
            raise AddRefused(f"{source}: member {m.name!r} is an absolute path; a pack holds "
                          "<machine>/<run-id>/ only")
        if ".." in path.parts:
            raise AddRefused(f"{source}: member {m.name!r} climbs out of the pack ('..'); a pack "
                          "holds <machine>/<run-id>/ only")
        if not (m.isfile() or m.isdir()):
            raise AddRefused(f"{source}: member {m.name!r} is a link or a device; a pack holds "
                          "plain files and folders only")
        if m.isfile() and len(path.parts) < 3:
            raise AddRefused(f"{source}: file {m.name!r} lies outside <machine>/<run-id>/")
        if len(path.parts) >= 2:
            runs.add("/".join(path.parts[:2]))
    if len(runs) != 1:
        raise AddRefused(f"{source} holds {len(runs)} run folders; a pack holds one "
                      "<machine>/<run-id>/")
    return members, runs.pop()


def _unpack(source: Path, staging: Path) -> Path:
    try:
        with tarfile.open(source, "r:*") as tar:
            members, run = safe_members(tar, source)
            kwargs = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
            tar.extractall(staging, members=members, **kwargs)  # type: ignore[arg-type]
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise AddRefused(f"{source} is not a pack bench pack wrote ({exc})") from None
    return staging / run


def _stage_folder(source: Path, staging: Path) -> Path:
    """A packed run folder copied under ``staging/<machine>/<run-id>``: the source stays."""
    found = _packed(source, source / manifests.MANIFEST_FILE,
                    f"{source} holds no manifest.json: pack it first "
                    f"(python -m bench pack {source})")
    links = [p for p in source.rglob("*") if p.is_symlink()]
    if links:
        raise AddRefused(f"{links[0]} is a link; a packed run holds plain files only")
    staged = staging / found.machine_name / source.name
    shutil.copytree(source, staged)
    return staged


def _packed(folder: Path, named: object, missing: str) -> Manifest:
    """``folder``'s manifest, or the refusal: a bad one named as ``named``, none ``missing``."""
    try:
        found = manifests.read(folder)
    except ManifestError as exc:
        raise AddRefused(f"{named}: {exc}") from None
    if found is None:
        raise AddRefused(missing)
    return found


def add(source: Path, reports: Path, staging: Path, repo_root: Path) -> Path:
    """Stage, verify and place one pack; the folder it now lies in."""
    if source.is_dir():
        staged = _stage_folder(source, staging)
    elif source.is_file():
        staged = _unpack(source, staging)
    else:
        raise AddRefused(f"{source}: not found; bench add takes a .tar.gz from bench pack or a "
                      "packed run folder")
    _verify(source, staged, repo_root)
    target = reports / staged.parent.name / staged.name
    if target.exists():
        raise AddRefused(f"{target} exists: bench add never replaces a run (the pack's run id "
                      "is already there)")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(staged), str(target))
    return target


def _verify(source: Path, staged: Path, repo_root: Path) -> None:
    found = _packed(staged, f"{source}: manifest.json",
                    f"{source} holds no manifest.json: not packed (python -m bench pack "
                    "RUN_DIR makes one)")
    if found.trust is not TrustLevel.CONTRIBUTED:
        raise AddRefused(f"{source}: trust {found.trust.value!r}; bench add takes contributed "
                      "runs (reference runs are committed with this repository)")
    env_run = (audit.read_env(staged) or {}).get("run_id")
    if env_run is not None and env_run != staged.name:
        raise AddRefused(f"{source}: the folder {staged.name!r} is not env.json's run id "
                      f"{env_run!r}")
    repo = audit.open_repository(repo_root)
    try:
        result = audit.audit(staged, repo)
    finally:
        if not isinstance(repo, Exception):
            repo.close()
    refused = result.refused
    if refused:
        lines = [f.line().replace(f"{staged.parent.parent}{os.sep}", "") for f in refused]
        for line in lines[1:]:
            print(f"  {line}", file=sys.stderr)
        more = f" (and {len(lines) - 1} more, above)" if len(lines) > 1 else ""
        raise AddRefused(f"{source} refused: {lines[0]}{more}")
    print(f"{staged.parent.name}/{staged.name}: every check passed"
          + (f"; flags the report marks: {', '.join(sorted({f.rule for f in result.flags}))}"
             if result.flags else ""))
