"""Whether a run's measuring code is code this repository holds: the hash env.json records
(``bench.run.store.source.digest``) computed again for the files of a commit in its history.

Why: a contributed run says which code measured it, and the receiving side should not take
that on trust. The hash is recomputed exactly as the runner computes it, from the same files
(``source.measuring_files``' rule: every ``.py`` and ``.toml`` of the package but the
report's), read from git's object store (``git cat-file --batch``, one process for every file
of every commit tried) rather than from a checkout. Standard library only.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from bench.run.store.source import NOT_MEASURING, SHOWN, SUFFIXES

#: The package's folder in the repository: the digest hashes paths relative to it.
PACKAGE = "bench"


class GitMissing(RuntimeError):
    """git is not installed, or ``root`` is no git checkout: the code cannot be looked up."""


@dataclass(frozen=True)
class Known:
    """The answer for one hash: the commit whose files give it (40 hex), or None."""

    code: str
    commit: str | None


class Repository:
    """A git checkout read through one ``git cat-file --batch`` process."""

    def __init__(self, root: Path) -> None:
        if shutil.which("git") is None:
            raise GitMissing("git is not installed")
        self.root = root
        try:
            self._git("rev-parse", "--git-dir")
        except subprocess.CalledProcessError:
            raise GitMissing(f"{root} is not a git checkout") from None
        self._cache: dict[str, str] = {}
        self._batch: subprocess.Popen[bytes] | None = None

    def _git(self, *args: str) -> str:
        return subprocess.run(["git", *args], cwd=self.root, capture_output=True, text=True,
                              timeout=60, check=True).stdout

    def shallow_hint(self) -> str:
        """What to do where the checkout is shallow (a CI clone of depth 1): its history lacks
        the commits older runs were measured at."""
        try:
            shallow = self._git("rev-parse", "--is-shallow-repository").strip() == "true"
        except subprocess.CalledProcessError:
            shallow = False
        return " (this checkout is shallow: git fetch --unshallow)" if shallow else ""

    def full_commit(self, commit: str) -> str | None:
        """The 40-hex commit a short one (as a sitting records it) names; None where this
        history has no such commit (or the record says ``+changes``: uncommitted code)."""
        if not commit or "+" in commit:
            return None
        try:
            return self._git("rev-parse", "--verify", "--quiet",
                             f"{commit}^{{commit}}").strip() or None
        except subprocess.CalledProcessError:
            return None

    def _blob(self, sha: str) -> bytes:
        if self._batch is None:
            self._batch = subprocess.Popen(["git", "cat-file", "--batch"], cwd=self.root,
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        stdin, stdout = self._batch.stdin, self._batch.stdout
        assert stdin is not None and stdout is not None
        stdin.write(sha.encode() + b"\n")
        stdin.flush()
        return _read_object(stdout)

    def digest_at(self, commit: str) -> str:
        """The measuring-code hash of ``commit``'s files (``source.digest``'s rule)."""
        if commit in self._cache:
            return self._cache[commit]
        listing = self._git("ls-tree", "-r", "--full-tree", commit, "--", PACKAGE)
        files: list[tuple[PurePosixPath, str]] = []
        for line in listing.splitlines():
            meta, _, path = line.partition("\t")
            mode, kind, sha = meta.split()
            rel = PurePosixPath(path).relative_to(PACKAGE)
            if kind == "blob" and mode != "120000" and rel.suffix in SUFFIXES \
                    and rel.parts[0] not in NOT_MEASURING and "__pycache__" not in rel.parts:
                files.append((rel, sha))
        h = hashlib.sha256()
        for rel, sha in sorted(files):
            h.update(rel.as_posix().encode("utf-8") + b"\0")
            h.update(self._blob(sha) + b"\0")
        self._cache[commit] = h.hexdigest()[:SHOWN]
        return self._cache[commit]

    def find(self, code: str, commit: str | None) -> Known:
        """Where ``code`` comes from: ``commit`` when its files give it; otherwise (no commit
        named, or one that does not give it) the newest commit of the history whose files
        do, or None."""
        if commit and self.full_commit(commit) and self.digest_at(commit) == code:
            return Known(code, self.full_commit(commit))
        changed = self._git("log", "--format=%H", "--all", "--", PACKAGE,
                            *(f":!{PACKAGE}/{p}" for p in NOT_MEASURING)).split()
        for candidate in changed:
            if self.digest_at(candidate) == code:
                return Known(code, candidate)
        return Known(code, None)

    def close(self) -> None:
        if self._batch is not None:
            for stream in (self._batch.stdin, self._batch.stdout):
                if stream is not None:
                    stream.close()
            self._batch.wait(timeout=10)
            self._batch = None

    def __enter__(self) -> Repository:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read_object(stdout: IO[bytes]) -> bytes:
    """One object of ``git cat-file --batch``'s answer: ``<sha> <type> <size>``, the bytes."""
    header = stdout.readline().split()
    if len(header) != 3:
        raise RuntimeError(f"git cat-file answered {b' '.join(header)!r}")
    data = stdout.read(int(header[2]))
    stdout.read(1)  # the newline after the object
    return data


def repository_root() -> Path:
    """The checkout this package lives in (where ``bench add`` looks the code up)."""
    return Path(__file__).resolve().parents[3]
