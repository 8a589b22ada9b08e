"""A run store that cannot be written stops the run at once, with one line and a non-zero exit;
every row already written stays whole and readable, and a resume finishes the run once the
store can be written again.

On a real file system where it can be: a 1 MiB tmpfs that the fake child fills, or remounts
read-only, as the replicate runs (``fake_cli.py``); I/O errors come from a patched ``fsync``.
Mounting needs root, so the read-only cases also run with ``os.open`` and ``os.mkdir`` patched
to fail with EROFS (``fake_cli.py --refuse``), which needs nothing.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.run.execute import runner
from bench.run.plan.jobs import plan
from bench.run.plan.profiles import load_profile
from bench.run.store import durable
from bench.run.store.store import RunStore

from .conftest import Disk, one_error_line, read_csv, run_fake_cli
from .fakes import ENV, LIVE_ENV, FakeLauncher


def _consistent(run_dir: Path, rows: int, samples_per_row: int = 2) -> None:
    """Whole lines only, and the report's strict loader accepts the folder as one run."""
    from bench.report.input.load import load_reports

    for name in ("results.csv", "samples.csv"):
        assert (run_dir / name).read_bytes().endswith(b"\n"), f"{name} ends mid-line"
    ds = load_reports(run_dir.parent)
    assert len(ds.results) == rows and len(ds.samples) == rows * samples_per_row


def test_a_full_disk_stops_the_run_and_a_resume_finishes_it_once_there_is_space(
        disk: Disk, tiny_profile: Callable[..., Path]) -> None:
    """The disk fills as the third replicate runs; what the files' last pages still hold takes
    a few more rows, then a write fails part-way (the old runner left that line torn, wrote a
    crash row per remaining cell and exited 0)."""
    out = disk.path / "run"
    run = ("--profile", str(tiny_profile(replicates=12)), "--out", str(out))
    proc = run_fake_cli(f"--at=2=fill:{disk.path}", "--", *run)
    assert proc.returncode == 74, proc.stderr
    line = one_error_line(proc)
    assert "No space left on device" in line and "rows already written" in line
    assert f"--out {out} --resume" in line
    statuses = [r["status"] for r in read_csv(out / "results.csv")]
    assert 2 <= len(statuses) < 12 and set(statuses) == {"ok"}, \
        "the matrix stopped at once: no crash rows for the cells after it"
    _consistent(out, rows=len(statuses))
    disk.free()
    again = run_fake_cli("--", *run, "--resume")
    assert again.returncode == 0, again.stderr
    assert f"{12 - len(statuses)} processes to run, {len(statuses)} already done" in again.stderr
    rows = read_csv(out / "results.csv")
    assert [(r["replicate"], r["status"]) for r in rows] == [(str(i), "ok") for i in range(12)]
    _consistent(out, rows=12)


def test_a_read_only_folder_at_start_is_one_line(disk: Disk,
                                                 tiny_profile: Callable[..., Path]) -> None:
    disk.read_only()
    out = disk.path / "run"
    proc = run_fake_cli("--", "--profile", str(tiny_profile()), "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    assert "Read-only file system" in one_error_line(proc)
    assert not out.exists()


def test_a_folder_that_turns_read_only_mid_run_stops_it_with_one_line(
        disk: Disk, tiny_profile: Callable[..., Path]) -> None:
    out = disk.path / "run"
    run = ("--profile", str(tiny_profile(replicates=3)), "--out", str(out))
    proc = run_fake_cli(f"--at=1=read-only:{disk.path}", "--", *run)
    assert proc.returncode == 74, proc.stderr
    assert "Read-only file system" in one_error_line(proc)
    assert [r["status"] for r in read_csv(out / "results.csv")] == ["ok"]
    disk.read_only(False)
    assert run_fake_cli("--", *run, "--resume").returncode == 0
    _consistent(out, rows=3)


@pytest.mark.parametrize("failing", ["write", "fsync"])
def test_an_io_error_stops_the_runner_and_leaves_whole_rows(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: str) -> None:
    """EIO on the third record's samples: the runner stops with the store's error and no row
    for it (the old runner wrote a crash row per cell, "runner error: OSError", and went on)."""
    from bench.run.plan.matrix import select

    calls = {"n": 0}
    real = getattr(os, failing)

    def flaky(fd: int, *args: object) -> object:
        calls["n"] += 1
        # 1-2 the first record (samples, row), 3-4 the second: the third's samples fail
        if calls["n"] == 5:
            if failing == "write":
                real(fd, bytes(args[0])[:7])  # type: ignore[arg-type]  (part of it lands)
            raise OSError(errno.EIO, os.strerror(errno.EIO))
        return real(fd, *args)

    store = RunStore(tmp_path / "run")
    store.open()
    monkeypatch.setattr(durable.os, failing, flaky)
    launcher = FakeLauncher()
    ctx = runner.RunContext("run1", "smoke", runner.Probe(ENV, [], False))
    r = runner.Runner(launcher, store, ctx, clock=launcher.clock, workdir=tmp_path)
    code = r.run(plan(select(load_profile("smoke"), ["modes"])))
    monkeypatch.undo()
    assert code == runner.EXIT_STORE and len(launcher.launched) == 3
    assert r.store_error is not None and "Input/output error" in str(r.store_error)
    assert [row["status"] for row in read_csv(store.results_path)] == ["ok", "ok"]
    assert len(read_csv(store.samples_path)) == 4
    assert store.samples_path.read_bytes().endswith(b"\n")


def test_a_folder_refused_as_read_only_at_start_is_one_line(
        tmp_path: Path, tiny_profile: Callable[..., Path]) -> None:
    """As above, without root: the folder is read-only as far as the runner's writes go."""
    out = tmp_path / "ro" / "run"
    out.parent.mkdir()
    proc = run_fake_cli("--refuse", str(out.parent), "--",
                        "--profile", str(tiny_profile()), "--out", str(out))
    assert proc.returncode == 2, proc.stderr
    line = one_error_line(proc)
    assert f"cannot write {out}: Read-only file system" in line
    assert not out.exists()


def test_a_folder_refused_as_read_only_mid_run_stops_it_with_one_line(
        tmp_path: Path, tiny_profile: Callable[..., Path]) -> None:
    out = tmp_path / "run"
    run = ("--profile", str(tiny_profile(replicates=3)), "--out", str(out))
    proc = run_fake_cli(f"--at=1=refuse:{out}", "--", *run)
    assert proc.returncode == 74, proc.stderr
    line = one_error_line(proc)
    assert "Read-only file system" in line and f"--out {out} --resume" in line
    assert [r["status"] for r in read_csv(out / "results.csv")] == ["ok"]
    _consistent(out, rows=1)
    again = run_fake_cli("--", *run, "--resume")
    assert again.returncode == 0, again.stderr
    _consistent(out, rows=3)


def test_a_start_on_a_full_disk_leaves_nothing_that_blocks_a_rerun(
        disk: Disk, tiny_profile: Callable[..., Path]) -> None:
    """The disk is full before the run begins: the start fails with one line and takes back
    what it created (it used to leave a results.csv with no rows and no env.json, so the same
    command was then told to pass --resume, and the report refused the folder)."""
    out = disk.path / "reports" / "run"
    run = ("--profile", str(tiny_profile()), "--out", str(out))
    disk.fill()
    proc = run_fake_cli("--", *run)
    assert proc.returncode == 2, proc.stderr
    assert "No space left on device" in one_error_line(proc)
    assert not (disk.path / "reports").exists(), "a folder that held nothing holds nothing"
    disk.free()
    again = run_fake_cli("--", *run)
    assert again.returncode == 0, again.stderr
    _consistent(out, rows=2)


@pytest.mark.parametrize("failing", [1, 2, 3], ids=["env.json", "results.csv", "samples.csv"])
def test_a_start_whose_write_fails_takes_back_what_it_created(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, failing: int) -> None:
    """The n-th write of the start (env.json, then each CSV's header) fails part-way: nothing
    of the run is left, and the same start then succeeds and makes a folder the strict report
    reads."""
    from bench.run.execute import session
    from bench.run.plan.matrix import select

    calls = {"n": 0}
    real = os.write

    def flaky(fd: int, data: bytes) -> int:
        calls["n"] += 1
        if calls["n"] == failing:
            real(fd, bytes(data)[:5])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real(fd, data)

    profile = select(load_profile("smoke"), ["modes"])
    probe = runner.Probe(dict(ENV), ["mobilenet_v3_small"], False)
    jobs = plan(profile)
    out = tmp_path / "reports" / "test-box" / "run"

    def start() -> session.Session:
        return session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out))

    monkeypatch.setattr(durable.os, "write", flaky)
    with pytest.raises(session.SessionError, match="No space left on device"):
        start()
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == [], "nothing of the failed start is left"
    opened = start()
    ended = session.execute(opened, FakeLauncher(), probe, progress=False)
    assert ended.code == 0
    _consistent(out, rows=len(jobs))


def test_a_resume_whose_start_fails_keeps_every_file(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Taking back what a failed start created never touches what was there: a resume whose
    first write (setting a torn row aside) fails leaves the folder byte for byte as it was."""
    from bench.run.execute import session
    from bench.run.plan.matrix import select

    profile = select(load_profile("smoke"), ["modes"])
    probe = runner.Probe(dict(LIVE_ENV), ["mobilenet_v3_small"], False)
    jobs = plan(profile)
    out = tmp_path / "run"
    opened = session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out))
    assert session.execute(opened, FakeLauncher(), probe, progress=False).code == 0
    with open(out / "results.csv", "ab") as f:
        f.write(b"3,run,torn")  # a row cut by a kill
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def full(fd: int, data: bytes) -> int:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(durable.os, "write", full)
    with pytest.raises(session.SessionError, match="No space left on device"):
        session.open_run(profile, probe, jobs, reports=tmp_path, out=str(out), resume=True)
    monkeypatch.undo()
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
