"""Which measuring code ran a sitting: a digest of the package's measuring files, and the git
commit when the package lives in a git checkout.

Why: a run can be made in several sittings (``--budget``, then ``--resume``), on different
days and machines of one fingerprint, and the code can change between them (a fixed input
pipeline, a longer energy window). The fingerprint and the plan say the rows measure the same
things on the same stack; they do not say the same code measured them. Each sitting records
this, in env.json's ``sittings``, so the machine page and ``bench check`` can say when one run's
rows came from different code.

Why a digest and not only the commit: the measuring side often runs from a copy of the tree
with no ``.git`` (a rented machine, a cluster node), and a commit does not describe a tree
with uncommitted changes. The digest hashes what could change a measurement, every ``.py``
and ``.toml`` file of the package except the report's, by path and content; the commit is
added where git can name it.
"""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import bench

#: The package whose files the digest covers.
PACKAGE = Path(bench.__file__).resolve().parent
#: Parts of the package that only present results: a change there changes no measurement.
NOT_MEASURING = ("report",)
SUFFIXES = (".py", ".toml")
#: Hex digits kept of the digest and of the commit: enough to tell versions apart in a line.
SHOWN = 12


def measuring_files(package: Path = PACKAGE) -> list[Path]:
    """The package's files that take part in measuring, in a stable order."""
    return sorted(p for p in package.rglob("*")
                  if p.suffix in SUFFIXES and p.is_file() and "__pycache__" not in p.parts
                  and p.relative_to(package).parts[0] not in NOT_MEASURING)


def digest(package: Path = PACKAGE) -> str:
    """A hash of the measuring files' paths and contents: equal for equal code, wherever it
    lies; the first ``SHOWN`` hex digits."""
    h = hashlib.sha256()
    for path in measuring_files(package):
        h.update(path.relative_to(package).as_posix().encode("utf-8") + b"\0")
        h.update(path.read_bytes() + b"\0")
    return h.hexdigest()[:SHOWN]


def commit(package: Path = PACKAGE) -> str | None:
    """The checkout's commit, ``+changes`` added when the measuring files differ from it;
    None without git, or where the package is not this project's own checkout (installed into
    an environment that lies inside some other repository)."""
    try:
        def git(*args: str) -> str:
            return subprocess.run(["git", *args], cwd=package, capture_output=True, text=True,
                                  timeout=10, check=True).stdout.strip()
        if Path(git("rev-parse", "--show-toplevel")).resolve() != package.parent:
            return None
        head = git("rev-parse", f"--short={SHOWN}", "HEAD")
        changed = git("status", "--porcelain", "--", ".", *(f":!{p}" for p in NOT_MEASURING))
    except (OSError, subprocess.SubprocessError):
        return None
    return f"{head}+changes" if changed else head or None


def record(sitting: int, started_at: str, budget_s: float | None) -> dict[str, object]:
    """What env.json keeps of one sitting: its number, when it opened the run folder (UTC,
    after the probe), its budget in seconds (None: none) and the code that ran it; its end,
    wall time and timed work are added when it ends (``session.finish_sitting``)."""
    return {"sitting": sitting, "started_at": started_at, "budget_s": budget_s,
            "code": digest(), "commit": commit()}
