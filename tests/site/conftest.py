"""Shared fixtures for the site tests: a project copy in a temporary folder, built once.

Building runs the whole pipeline (load → analyse → judge → render → charts → ``mkdocs build
--strict``), a few seconds each, so each distinct input is built once per session and the tests
read the result. Builds happen in copies of ``mkdocs.yml`` and ``site_src/`` so the working tree
is never touched.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sharing import made_once

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_REPORTS = ROOT / "tests" / "fixtures" / "reports"

sys.path.insert(0, str(Path(__file__).parent))

#: Every page names the commit and day that built it; the site tests' builds name fixed ones,
#: so the golden pages do not change with each commit (``tests/report/test_buildinfo.py``
#: tests the real ones).
os.environ.setdefault("TORCH_KNOBS_BUILD_COMMIT", "fixture")
os.environ.setdefault("TORCH_KNOBS_BUILD_DAY", "2026-11-30")


@dataclass(frozen=True)
class Built:
    """One built project copy."""

    root: Path
    reports: Path

    @property
    def docs(self) -> Path:
        return self.root / "site_src"

    @property
    def generated(self) -> Path:
        return self.docs / "generated"

    @property
    def site(self) -> Path:
        return self.root / "site"

    @property
    def config(self) -> Path:
        return self.root / "mkdocs.yml"


def project_copy(dest: Path) -> Path:
    """``mkdocs.yml`` and the hand-written ``site_src/`` (without generated/) under ``dest``."""
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "mkdocs.yml", dest / "mkdocs.yml")
    shutil.copytree(
        ROOT / "site_src", dest / "site_src", ignore=shutil.ignore_patterns("generated")
    )
    return dest


def build_copy(dest: Path, reports: Path, **kwargs: Any) -> Built:
    from bench.report import build

    root = project_copy(dest)
    build.build(
        reports,
        root / "site",
        docs_dir=root / "site_src",
        config=root / "mkdocs.yml",
        quiet=True,
        **kwargs,
    )  # type: ignore[arg-type]
    return Built(root, reports)


@pytest.fixture(scope="session")
def fixture_site(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The committed fixture results, built into a site once for every worker (``made_once``):
    tests read it and copy what they change."""
    return Built(made_once(tmp_path_factory, "fixture-site", _fixtures), FIXTURE_REPORTS)


def _fixtures(base: Path) -> None:
    build_copy(base, FIXTURE_REPORTS)


def _hostile(base: Path) -> None:
    from hostile import write_hostile_reports

    build_copy(base / "project", write_hostile_reports(base / "reports"))


@pytest.fixture(scope="session")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """A results tree whose every free-text field is hostile, built into a site once for every
    worker."""
    base = made_once(tmp_path_factory, "hostile-site", _hostile)
    return Built(base / "project", base / "reports")
