"""Which commit of the code built the site, and on which day: the provenance line every page
ends with, so a page cited in a discussion says what produced it.

Read from git where the package is a checkout; ``TORCH_KNOBS_BUILD_COMMIT`` and
``TORCH_KNOBS_BUILD_DAY`` override both (a build outside a checkout, or the tests' fixed
pages). A checkout with uncommitted changes says so: the pages then come from code no commit
holds.
"""

from __future__ import annotations

import datetime as dt
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

#: The folder holding ``bench/``: the checkout whose commit built the site.
PACKAGE_ROOT = Path(__file__).resolve().parents[3]


@dataclass(frozen=True)
class BuildInfo:
    commit: str  # a short hash; empty where it cannot be told
    changed: bool  # the checkout had uncommitted changes to tracked files
    day: str  # the UTC day of the build, YYYY-MM-DD


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(PACKAGE_ROOT), *args], capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def build_info(today: dt.date | None = None) -> BuildInfo:
    """This build's commit and day (see the module docstring)."""
    day = os.environ.get("TORCH_KNOBS_BUILD_DAY") or str(
        today or dt.datetime.now(dt.timezone.utc).date())
    given = os.environ.get("TORCH_KNOBS_BUILD_COMMIT")
    if given is not None:
        return BuildInfo(given, False, day)
    commit = _git("rev-parse", "--short=7", "HEAD") or ""
    status = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    return BuildInfo(commit, bool(status), day)
