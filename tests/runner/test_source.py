"""Which measuring code ran a sitting (``bench.run.store.source``): a digest that follows the
measuring files and only them, and a commit only where git names this project's checkout."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from bench.run.store import source


def _package(where: Path) -> Path:
    """A copy of the package's measuring and report files, with the caches left out."""
    package = where / "bench"
    shutil.copytree(source.PACKAGE, package, ignore=shutil.ignore_patterns("__pycache__"))
    return package


def test_the_digest_follows_the_measuring_files_and_not_the_reports(tmp_path: Path) -> None:
    package = _package(tmp_path)
    before = source.digest(package)
    assert before == source.digest(source.PACKAGE), "equal code, wherever it lies"
    (package / "report" / "build.py").write_text("# only presents results\n")
    (package / "run" / "__pycache__").mkdir(exist_ok=True)
    (package / "run" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    assert source.digest(package) == before
    with open(package / "run" / "budget.py", "a", encoding="utf-8") as f:
        f.write("# changed\n")
    changed = source.digest(package)
    assert changed != before and len(changed) == source.SHOWN
    (package / "run" / "budget.py").rename(package / "run" / "budget2.py")
    assert source.digest(package) != changed, "a file's path counts, not only its bytes"
    (package / "profiles" / "smoke.toml").write_text("# another profile\n")
    assert source.digest(package) not in (before, changed)


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_commit_is_named_only_for_this_projects_own_checkout(tmp_path: Path) -> None:
    def git(*args: str, cwd: Path = tmp_path) -> str:
        return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True,
                              check=True).stdout.strip()

    package = _package(tmp_path / "checkout")
    assert source.commit(package) is None, "no git checkout"
    git("init", "-q", cwd=tmp_path / "checkout")
    git("add", "-A", cwd=tmp_path / "checkout")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x",
        cwd=tmp_path / "checkout")
    head = git("rev-parse", f"--short={source.SHOWN}", "HEAD", cwd=tmp_path / "checkout")
    assert source.commit(package) == head
    (package / "report" / "build.py").write_text("# only presents results\n")
    assert source.commit(package) == head, "a report change is no measuring change"
    with open(package / "run" / "budget.py", "a", encoding="utf-8") as f:
        f.write("# changed\n")
    assert source.commit(package) == f"{head}+changes"
    # installed into an environment that lies inside another repository: not its commit
    inner = _package(tmp_path / "checkout" / "venv" / "site-packages")
    assert source.commit(inner) is None


def test_a_record_says_when_which_budget_and_which_code() -> None:
    when = "2026-12-04T10:56:02.000+00:00"
    assert source.record(3, when, 240.0) == {"sitting": 3, "started_at": when, "budget_s": 240.0,
                                             "code": source.digest(), "commit": source.commit()}
