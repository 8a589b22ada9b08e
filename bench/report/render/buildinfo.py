"""Which commit of the code built the site, and on which day: the provenance line every page
ends with, so a page cited in a discussion says what produced it.

Read from git where the package is a checkout; ``TORCH_KNOBS_BUILD_COMMIT`` and
``TORCH_KNOBS_BUILD_DAY`` override both (a build outside a checkout, or the tests' fixed
pages). A checkout with uncommitted changes says so: the pages then come from code no commit
holds.

The address the site is published at (``site_url`` of the MkDocs configuration, this
checkout's ``mkdocs.yml`` by default; ``TORCH_KNOBS_SITE_URL`` overrides it) goes with them:
a Cite line links to its answer there.
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
    site_url: str = ""  # where the site is published, ending in "/"; empty where none is set


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", "-C", str(PACKAGE_ROOT), *args], capture_output=True,
                              text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None


def site_url(config: Path | None = None) -> str:
    """``site_url`` of the MkDocs configuration ``config`` (this checkout's ``mkdocs.yml`` by
    default), ending in ``/``; ``TORCH_KNOBS_SITE_URL`` overrides it; empty where neither
    names one or the file cannot be read."""
    given = os.environ.get("TORCH_KNOBS_SITE_URL")
    if given is None:
        import yaml

        try:
            data = yaml.safe_load((config or PACKAGE_ROOT / "mkdocs.yml").read_text("utf-8"))
        except (OSError, yaml.YAMLError):
            data = None
        given = str(data.get("site_url") or "") if isinstance(data, dict) else ""
    given = given.strip()
    return given if not given or given.endswith("/") else given + "/"


def build_info(today: dt.date | None = None, config: Path | None = None) -> BuildInfo:
    """This build's commit, day and address (``config``: the MkDocs configuration naming the
    address; see the module docstring)."""
    day = os.environ.get("TORCH_KNOBS_BUILD_DAY") or str(
        today or dt.datetime.now(dt.timezone.utc).date())
    url = site_url(config)
    given = os.environ.get("TORCH_KNOBS_BUILD_COMMIT")
    if given is not None:
        return BuildInfo(given, False, day, url)
    commit = _git("rev-parse", "--short=7", "HEAD") or ""
    status = _git("status", "--porcelain", "--untracked-files=no") if commit else None
    return BuildInfo(commit, bool(status), day, url)
