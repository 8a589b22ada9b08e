"""``python -m bench pack RUN_DIR``: a run folder made ready to share, as one ``.tar.gz``.

Why a command: a run measured on a rented or borrowed machine reaches ``reports/`` through
``bench add`` on another. Packing checks the run first (``bench check``: a run failing an
integrity check is not shared), takes private facts out of a copy (``bench.run.store.scrub``:
the run folder itself is never edited), and writes the manifest (``bench.run.store.manifest``)
that lets the receiving side prove the files and the code. The pack holds
``<machine>/<run-id>/``: the run folder and its manifest.

``--in-place --trust reference`` writes only the manifest into a committed run's own folder:
the runs measured for this repository, described from their own history.

Standard library only: it runs on the measuring box.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from bench import fingerprint
from bench.commands import audit
from bench.commands.base import Command
from bench.commands.exits import fail
from bench.run.store import check as checks
from bench.run.store import manifest as manifests
from bench.run.store.durable import write_file
from bench.run.store.manifest import HourPrice, Manifest, ManifestError, TrustLevel
from bench.run.store.provenance import GitMissing, Repository, repository_root
from bench.run.store.scrub import Scrubber, findings
from bench.schema import ENV_FILE, RESULTS_FILE, SAMPLES_FILE

#: A run id as the runner names its folder: what may stand as a folder in the pack.
RUN_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,99}")


class PackRefused(Exception):
    """Why the run cannot be packed, in one line."""


class PackCommand(Command):
    """Check, scrub a copy, write the manifest, pack (or, ``--in-place``, only the manifest)."""

    name = "pack"
    help = "check a run, take private facts out of a copy and pack it for bench add"
    description = (
        "Checks the run (bench check: a failing integrity check refuses it), takes host names, "
        "user names and home folders, serial numbers, MAC and IP addresses out of a copy of "
        "env.json and the kept logs (listed on stderr; the run folder is never edited), writes "
        "manifest.json (sha256 of every file, the measuring code, the machine, the price) and "
        "packs <machine>/<run-id>/ as a .tar.gz for python -m bench add.")

    @classmethod
    def add_arguments(cls, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("run", metavar="RUN_DIR", type=Path)
        parser.add_argument("--machine-name", help="the folder the run goes under in reports/ "
                                                   "(default: env.json's machine)")
        parser.add_argument("--price-per-hour", metavar="USD",
                            help="what an hour of this machine costs, in US dollars")
        parser.add_argument("--price-source", metavar="TEXT",
                            help="where the price comes from (a price list, an invoice)")
        parser.add_argument("--price-date", metavar="YYYY-MM-DD", help="when the price was read")
        parser.add_argument("--contributor", metavar="HANDLE", help="your handle (optional)")
        parser.add_argument("--out", metavar="FILE.tar.gz", type=Path,
                            help="the pack to write (default: <machine>-<run-id>.tar.gz here)")
        parser.add_argument("--in-place", action="store_true",
                            help="write only manifest.json into RUN_DIR (committed runs)")
        parser.add_argument("--repo", metavar="DIR", type=Path, default=None,
                            help="the git checkout whose history holds the measuring code "
                                 "(default: the one this package lives in)")
        parser.add_argument("--trust", choices=[t.value for t in TrustLevel],
                            default=TrustLevel.CONTRIBUTED.value,
                            help="reference: a run measured for this repository (--in-place)")

    @classmethod
    def run(cls, args: argparse.Namespace) -> int:
        try:
            return pack(args)
        except (PackRefused, ManifestError) as exc:
            return fail(str(exc))


def _price(args: argparse.Namespace) -> HourPrice | None:
    parts = (args.price_per_hour, args.price_source, args.price_date)
    if all(p is None for p in parts):
        return None
    if any(p is None for p in parts):
        raise PackRefused("a price takes all three: --price-per-hour USD (e.g. 2.49) "
                      "--price-source TEXT --price-date YYYY-MM-DD")
    try:
        return HourPrice.parse(*parts)
    except ManifestError as exc:
        raise PackRefused(f"{exc} (--price-per-hour USD --price-source TEXT "
                      "--price-date YYYY-MM-DD)") from None


def _read_env(run_dir: Path) -> dict[str, Any]:
    if not (run_dir / RESULTS_FILE).is_file():
        raise PackRefused(f"{run_dir} has no results.csv: bench pack takes a run folder "
                      "(<machine>/<run>)")
    try:
        env = json.loads((run_dir / ENV_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise PackRefused(f"{run_dir / ENV_FILE} cannot be read: {exc}") from None
    if not isinstance(env, dict):
        raise PackRefused(f"{run_dir / ENV_FILE} is not a JSON object")
    return env


def _integrity(run_dir: Path, env: dict[str, Any]) -> None:
    """``bench check``'s integrity checks and the fingerprint, or ``PackRefused`` naming them."""
    _, found = checks.check_run(run_dir)
    failing = sorted({a.check for a in found if a.check not in audit.FLAGS})
    failing += [f.rule for f in audit.fingerprint_findings(run_dir, env)][:1]
    if failing:
        raise PackRefused(f"bench check fails on {run_dir}: {', '.join(failing)} (python -m bench "
                      f"check {run_dir} lists them); a run that fails them is not shared")


def _provenance(env: dict[str, Any], trust: TrustLevel, root: Path
                ) -> tuple[str | None, str | None]:
    """The measuring code and the full commit, checked against this repository where git
    can be asked (``bench add`` checks again)."""
    code, short = manifests.recorded_code(env)
    if code is None:
        if trust is TrustLevel.CONTRIBUTED:
            raise PackRefused("env.json records no measuring code (a run made before the runner "
                          "recorded it): measure again to contribute")
        return None, None
    try:
        with Repository(root) as repo:
            commit = repo.full_commit(short or "")
            if repo.find(code, commit).commit is None:
                raise PackRefused(f"measured by code {code} (commit {short or 'not recorded'}), "
                              "which no commit of this repository holds: commit the code "
                              "that measured it, or measure again from a commit")
    except GitMissing as exc:
        print(f"pack: {exc}: the measuring code {code} is not looked up here (bench add "
              "does)", file=sys.stderr)
        commit = None
    return code, commit


def _manifest(args: argparse.Namespace, run_dir: Path, env: dict[str, Any]) -> Manifest:
    trust = TrustLevel(args.trust)
    if trust is TrustLevel.REFERENCE and not args.in_place:
        raise PackRefused("--trust reference describes a committed run in its own folder: "
                      "add --in-place (a pack to share is contributed)")
    name = args.machine_name or str(env.get("machine") or "")
    if not manifests.MACHINE_NAME.fullmatch(name):
        raise PackRefused(f"machine name {name!r} is not a folder name: lower-case letters, digits "
                      "and dashes, e.g. rtx4090-workstation (--machine-name NAME)")
    if args.contributor is not None and not manifests.HANDLE.fullmatch(args.contributor):
        raise PackRefused(f"contributor {args.contributor!r} is not a handle: letters, digits, "
                      "'.', '_' and '-', up to 39 (--contributor HANDLE)")
    price = _price(args)
    _integrity(run_dir, env)
    code, commit = _provenance(env, trust, args.repo or repository_root())
    uid = env.get("machine_uid")
    return Manifest(files={}, commit=commit, code=code, machine_name=name,
                    machine_uid=uid if isinstance(uid, str)
                    and manifests.MACHINE_UID.fullmatch(uid) else None,
                    price=price, trust=trust, contributor=args.contributor)


def pack(args: argparse.Namespace) -> int:
    run_dir: Path = args.run
    if not run_dir.is_dir():
        raise PackRefused(f"{run_dir}: not found; bench pack takes a run folder (<machine>/<run>)")
    env = _read_env(run_dir)
    run_id = str(env.get("run_id") or run_dir.name)
    if not RUN_ID.fullmatch(run_id):
        raise PackRefused(f"run id {run_id!r} (env.json) is not a folder name")
    if args.in_place and args.out is not None:
        raise PackRefused("--in-place writes manifest.json into RUN_DIR; --out writes a pack: "
                      "choose one")
    made = _manifest(args, run_dir, env)
    if args.in_place:
        return _in_place(run_dir, made)
    out: Path = args.out or Path(f"{made.machine_name}-{run_id}.tar.gz")
    if not out.name.endswith(".tar.gz"):
        raise PackRefused(f"--out {out} must end in .tar.gz")
    if out.exists():
        raise PackRefused(f"{out} exists: bench pack never overwrites (--out FILE.tar.gz)")
    with tempfile.TemporaryDirectory(prefix="bench-pack-") as tmp:
        copy = Path(tmp) / made.machine_name / run_id
        _copy(run_dir, copy)
        _scrub(copy, env)
        final = dataclasses.replace(made, files=manifests.hash_files(copy))
        (copy / manifests.MANIFEST_FILE).write_text(final.text(), encoding="utf-8")
        _tar(Path(tmp), made.machine_name, run_id, out)
    print(f"packed {run_dir} as {out} ({made.machine_name}/{run_id}/, "
          f"{len(final.files) + 1} files); add it with: python -m bench add {out}")
    return 0


def _in_place(run_dir: Path, made: Manifest) -> int:
    path = run_dir / manifests.MANIFEST_FILE
    final = dataclasses.replace(made, files=manifests.hash_files(run_dir))
    if path.exists():
        if path.read_text(encoding="utf-8") == final.text():
            print(f"{path}: unchanged")
            return 0
        raise PackRefused(f"{path} exists and differs: bench pack never overwrites a manifest "
                      "(remove it first if the run's files changed on purpose)")
    write_file(path, final.text().encode("utf-8"))
    print(f"wrote {path} ({made.trust.value}, {len(final.files)} files)")
    return 0


def _copy(run_dir: Path, copy: Path) -> None:
    links = [p for p in run_dir.rglob("*") if p.is_symlink()]
    if links:
        raise PackRefused(f"{links[0]} is a link: a run folder to share holds plain files only")
    shutil.copytree(run_dir, copy, ignore=shutil.ignore_patterns(manifests.MANIFEST_FILE,
                                                                 "__pycache__"))


def _scrub(copy: Path, env: dict[str, Any]) -> None:
    """Private facts out of the copy's env.json and logs, each removal on stderr; results
    and samples are never edited, only where they hold one is said."""
    scrubber = Scrubber()
    clean = scrubber.json(env, ENV_FILE)
    definition = fingerprint.definition_of(env) or 1
    if fingerprint.fingerprint_id(clean, definition) != fingerprint.fingerprint_id(env,
                                                                                  definition):
        raise PackRefused("taking private facts out of env.json would change its fingerprint; "
                      "pack refuses rather than publish them")
    if clean != env:
        (copy / ENV_FILE).write_text(json.dumps(clean, indent=2, sort_keys=True) + "\n",
                                     encoding="utf-8")
    for log in sorted((copy / "logs").rglob("*")) if (copy / "logs").is_dir() else []:
        if log.is_file():
            text = log.read_bytes().decode("utf-8", errors="surrogateescape")
            clean_text = scrubber.text(text, log.relative_to(copy).as_posix())
            if clean_text != text:
                log.write_bytes(clean_text.encode("utf-8", errors="surrogateescape"))
    for line in scrubber.removed.lines():
        print(f"pack: {line}", file=sys.stderr)
    for name in (RESULTS_FILE, SAMPLES_FILE):
        if (copy / name).is_file():
            with open(copy / name, encoding="utf-8", errors="replace") as f:
                for said in findings(f, name)[:10]:
                    print(f"pack: {said}; rows are never edited, so it stays", file=sys.stderr)


def _reset(info: tarfile.TarInfo) -> tarfile.TarInfo:
    """A member that names no one: no owner, plain modes."""
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = 0o755 if info.isdir() else 0o644
    return info


def _tar(root: Path, machine: str, run_id: str, out: Path) -> None:
    """``root/<machine>/<run-id>/`` as ``out``, written whole or not at all."""
    tmp = out.with_name(f".{out.name}.partial")
    try:
        with tarfile.open(tmp, "w:gz") as tar:
            tar.add(root / machine, arcname=machine, recursive=False, filter=_reset)
            tar.add(root / machine / run_id, arcname=f"{machine}/{run_id}", filter=_reset)
        os.replace(tmp, out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise PackRefused(f"cannot write {out}: {exc.strerror or exc}") from None
