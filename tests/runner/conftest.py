"""Shared helpers for the runner tests: a tiny profile, the CLI (real, or with the fakes of
``fakes.py``), the files it writes, and a small disk of their own."""

from __future__ import annotations

import contextlib
import csv
import functools
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sharing import made_once

from bench.run.execute.launch import ForkServerLauncher

ROOT = Path(__file__).resolve().parents[2]

#: One tiny cell, fast enough for fault tests: the real launcher, worker and torch run it; its
#: sittings' CPU pace probes are cut short as the smoke profile's are.
TINY_PROFILE = """
[pace]
window_s = 0.3

[defaults]
device = "cpu"
model = "mobilenet_v3_small"
resolution = 32
batch_size = 1
replicates = {replicates}
warmup_iters = 1
min_iters = 2
min_time_s = 0.01
max_time_s = 0.2
timeout_s = {timeout_s}

[studies.tiny]
mode = "infer"
"""


@pytest.fixture
def tiny_profile(tmp_path: Path) -> Callable[..., Path]:
    def make(replicates: int = 2, timeout_s: float = 60.0, extra: str = "") -> Path:
        path = tmp_path / "tiny.toml"
        path.write_text(TINY_PROFILE.format(replicates=replicates, timeout_s=timeout_s) + extra)
        return path

    return make


def run_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 300,
            cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    full_env.pop("TORCH_KNOBS_FAULT", None) if env is None or "TORCH_KNOBS_FAULT" not in env \
        else None
    return subprocess.run([sys.executable, "-m", "bench", *args], capture_output=True,
                          text=True, env=full_env, timeout=timeout, cwd=cwd)


#: ``python -m bench`` in this process (``bench_cli``): args in, what ``run_cli`` returns out
Cli = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def shared_server() -> Iterator[ForkServerLauncher]:
    """One real fork server for a module's in-process commands (``bench_cli``)."""
    with ForkServerLauncher() as launcher:
        yield launcher


@pytest.fixture
def bench_cli(shared_server: ForkServerLauncher, monkeypatch: pytest.MonkeyPatch,
              capsys: pytest.CaptureFixture[str]) -> Cli:
    """``python -m bench ARGS`` run in this process (``bench.cli.main``), its children forked
    by the module's one fork server instead of a new one per command: the same parser,
    commands, probe and children, without importing torch again for every refusal. What it
    cannot show, a process's own exit code and a stderr without a traceback, ``run_cli``
    still shows on a refusal of each command. Returns what ``run_cli`` does."""
    from bench import cli
    from bench.run.execute import launch

    monkeypatch.setattr(launch, "by_name", lambda name: contextlib.nullcontext(shared_server))
    monkeypatch.chdir(ROOT)

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        capsys.readouterr()
        try:
            code = cli.main(list(args))
        except SystemExit as stop:  # argparse's own refusals
            code = stop.code if isinstance(stop.code, int) else 2
        said = capsys.readouterr()
        return subprocess.CompletedProcess(["bench", *args], code, said.out, said.err)

    return call


#: ``bench advise`` of a model with two graph breaks (``tests/advise/breaking.py``), compiled on
#: the CPU: its own test reads what advise says, and the compile tests read its rows.
BREAKS_MODEL = "tests/advise/breaking.py:build"
#: The budget leaves room for the probe and one replicate each on a busy CI machine (three
#: test workers on two cores), where 40 s was once refused as "allow at least 41 s".
BREAKS_ADVISE = ("advise", BREAKS_MODEL, "--device", "cpu", "--mode", "infer", "--batch-size",
                 "4", "--input-shape", "3,32,32", "--knobs", "torch.compile", "--budget", "55")


def advise_into(args: tuple[str, ...], stdout_name: str, base: Path) -> None:
    """A real ``bench advise`` run of ``args`` into ``base/machine/run`` (its scratch under
    ``base``), its standard output kept as ``base/stdout_name``: a ``made_once`` maker."""
    proc = run_cli(*args, "--out", str(base / "machine" / "run"),
                   env={"TMPDIR": str(base)}, timeout=240)
    assert proc.returncode == 0, proc.stderr
    (base / stdout_name).write_text(proc.stdout, encoding="utf-8")


_advise_breaks = functools.partial(advise_into, BREAKS_ADVISE, "stdout.txt")


@pytest.fixture(scope="session")
def advised_breaks(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, Path]:
    """The real run of ``BREAKS_ADVISE`` (an Inductor compile of the model per replicate),
    made once for every test that reads it (``made_once``): what advise printed, and the
    run folder."""
    base = made_once(tmp_path_factory, "advised-breaks", _advise_breaks)
    return (base / "stdout.txt").read_text(encoding="utf-8"), base / "machine" / "run"


def run_fake_cli(*args: str, env: dict[str, str] | None = None, timeout: float = 120
                 ) -> subprocess.CompletedProcess[str]:
    """``bench run`` with the fake launcher and probe (``fake_cli.py``): ``args`` are its own
    options, then ``--`` and the run's."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run([sys.executable, "-m", "tests.runner.fake_cli", *args],
                          capture_output=True, text=True, env=full_env, timeout=timeout,
                          cwd=ROOT)


def one_error_line(proc: subprocess.CompletedProcess[str]) -> str:
    """The one ``error:`` line of a command that failed cleanly (no traceback)."""
    assert "Traceback" not in proc.stderr, proc.stderr
    errors = [line for line in proc.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    return errors[0]


def read_csv(path: Path) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


class Disk:
    """A small tmpfs mounted for one test: a real file system that fills up, or turns
    read-only, when the test says so."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.filler = path / "filler"

    def fill(self) -> None:
        """Take every free byte (a full disk, as the kernel reports it: ENOSPC)."""
        with open(self.filler, "ab", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 4096)
            except OSError:
                pass

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)

    def read_only(self, on: bool = True) -> None:
        _mount("-o", f"remount,{'ro' if on else 'rw'}", str(self.path))


def _mount(*args: str) -> None:
    subprocess.run(["mount", *args], check=True, capture_output=True, timeout=30)


@pytest.fixture
def disk(tmp_path: Path) -> Iterator[Disk]:
    """A 1 MiB tmpfs. Mounting needs root: elsewhere the test is skipped, saying why, except
    under CI (``CI`` set), where a skipped fault test would hide a fault, so it fails."""
    reason = ""
    if os.geteuid() != 0:
        reason = "mounting a tmpfs needs root"
    path = tmp_path / "disk"
    path.mkdir()
    if not reason:
        try:
            _mount("-t", "tmpfs", "-o", "size=1m", "tmpfs", str(path))
        except (OSError, subprocess.SubprocessError) as exc:
            reason = f"could not mount a tmpfs: {exc}"
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; under CI this test must run (run the tests as root)")
        pytest.skip(reason)
    try:
        yield Disk(path)
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True, timeout=30)
