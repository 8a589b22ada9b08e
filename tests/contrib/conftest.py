"""Helpers for the contribution tests: ``bench`` in this process, a git repository holding a
snapshot of the measuring code, and one real smoke run for the module that reads it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_REPORTS = ROOT / "tests" / "fixtures" / "reports"

#: ``python -m bench ARGS`` in this process: args in, (exit code, stdout, stderr) out.
Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def bench(capsys: pytest.CaptureFixture[str]) -> Cli:
    """``bench.cli.main`` in this process (pack, add and check import no torch)."""
    from bench import cli

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()
        try:
            code = cli.main(list(args))
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 2
        said = capsys.readouterr()
        return subprocess.CompletedProcess(["bench", *args], code, said.out, said.err)

    return call


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    return subprocess.run(["git", *args], cwd=repo, env=env, capture_output=True, text=True,
                          check=True).stdout.strip()


def snapshot_repo(repo: Path, change: str = "") -> str:
    """A git repository at ``repo`` whose one commit holds the package's measuring files as
    they are now (``change`` appended to one of them, for code no other commit holds); the
    commit."""
    if shutil.which("git") is None:
        if os.environ.get("CI"):
            pytest.fail("git is needed to look measuring code up")
        pytest.skip("git is not installed")

    def ignore(folder: str, names: list[str]) -> list[str]:
        return [n for n in names if n == "__pycache__"
                or (not Path(folder, n).is_dir() and not n.endswith((".py", ".toml")))]

    shutil.copytree(ROOT / "bench", repo / "bench", ignore=ignore)
    if change:
        with open(repo / "bench" / "schema.py", "a", encoding="utf-8") as f:
            f.write(change)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "snapshot")
    return git(repo, "rev-parse", "HEAD")


def smoke_run(out: Path) -> subprocess.CompletedProcess[str]:
    """``bench run --profile smoke --out OUT`` as a whole process."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "bench", "run", "--profile", "smoke", "--out",
                           str(out)], capture_output=True, text=True, env=env, timeout=600,
                          cwd=ROOT)
