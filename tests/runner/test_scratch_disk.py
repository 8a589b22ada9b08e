"""A full or failing disk under TMPDIR, where the runner keeps its scratch files (each child's
task file, the per-replicate kernel-cache folders, the children's records and logs), stops the
run the way a full run store does: exit 74, one ``error:`` line with the resume command, and
no row saying that the cell crashed. (The runner used to write a ``crash`` row, "runner error:
OSError: [Errno 28] No space left on device", for every cell left, and exit 0.)

Where it matters the children are real: the spawn launcher runs the real worker, its
measuring stubbed out (no torch), whose record goes to a file that a symbolic link to
/dev/full makes fail with ENOSPC, which needs no root. The runner's own writes fail through a
patched write; the whole command runs on a real full tmpfs where it can be mounted.
"""

from __future__ import annotations

import errno
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.run.execute import probe as probing
from bench.run.execute import runner, session
from bench.run.execute.launch import SpawnLauncher
from bench.run.plan.jobs import plan
from bench.run.plan.matrix import select
from bench.run.plan.profiles import load_profile, parse_profile
from bench.run.store import durable
from bench.run.store.durable import ScratchError
from bench.run.store.store import RunStore

from .conftest import Disk, one_error_line, read_csv, run_fake_cli
from .fakes import ENV, FakeLauncher

#: The real worker, measuring nothing: every replicate is ok at once, with two samples.
STUB_WORKER = """
import sys
from bench.run.child import worker
from bench.run.protocol import Record, Sample

worker.run_task = lambda task: Record(samples=[Sample("cold", 0, 1, 1, 0.1),
                                               Sample("steady", 1, 1, 1, 0.1)])
worker.main(sys.argv[1:])
"""

WARM_PROFILE = """
[defaults]
replicates = 2
[studies.caches]
kernel_cache = ["fresh", "warm"]
"""


def _runner(tmp_path: Path, launcher: Any, profile: str = "smoke") -> runner.Runner:
    store = RunStore(tmp_path / "run")
    store.open()
    ctx = runner.RunContext("run1", profile, runner.Probe(ENV, [], False))
    return runner.Runner(launcher, store, ctx, clock=launcher.clock, workdir=tmp_path / "work")


def _stopped(r: runner.Runner, code: int, rows: int, words: str) -> None:
    """The run stopped on its scratch space: rows before it kept, none for the cell after."""
    assert code == runner.EXIT_STORE
    assert isinstance(r.store_error, ScratchError), r.store_error
    assert words in str(r.store_error) and "scratch space" in str(r.store_error)
    assert [row["status"] for row in read_csv(r.store.results_path)] == ["ok"] * rows, \
        "no crash row claims the cell crashed"


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_a_child_that_cannot_write_its_record_stops_the_run(tmp_path: Path) -> None:
    """The second replicate's record lands on a full disk: its child exits ``SCRATCH_EXIT``,
    saying why in its log, and the run stops (the child's traceback used to be a crash)."""
    jobs = plan(select(load_profile("smoke"), ["modes"]))
    work = tmp_path / "work"
    work.mkdir()
    token = f"measure-{jobs[1].cell.cell_id}-r{jobs[1].replicate}"
    (work / f"{token}.result.json.tmp").symlink_to("/dev/full")
    with SpawnLauncher([sys.executable, "-c", STUB_WORKER]) as launcher:
        r = _runner(tmp_path, launcher)
        code = r.run(jobs)
    _stopped(r, code, rows=1, words="No space left on device")
    assert not (work / f"{token}.result.json").exists()
    assert not (work / f"{token}.result.json.tmp").exists(), "no half record keeps its space"


def test_a_child_that_could_not_even_log_why_stops_the_run(tmp_path: Path) -> None:
    """Its log on the same full disk: the exit code alone says it."""
    exit_code = f"raise SystemExit({durable.SCRATCH_EXIT})"
    with SpawnLauncher([sys.executable, "-c", exit_code]) as launcher:
        r = _runner(tmp_path, launcher)
        code = r.run(plan(select(load_profile("smoke"), ["modes"])))
    _stopped(r, code, rows=0, words=f"exit code {durable.SCRATCH_EXIT}")


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS],
                         ids=["ENOSPC", "EDQUOT", "EIO", "EROFS"])
def test_a_task_file_that_cannot_be_written_stops_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int) -> None:
    real = Path.write_text
    written: list[Path] = []

    def write_text(self: Path, *args: Any, **kwargs: Any) -> int:
        if self.name.endswith(".task.json"):
            written.append(self)
            if len(written) == 3:
                raise OSError(code, os.strerror(code), str(self))
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "write_text", write_text)
    launcher = FakeLauncher()
    r = _runner(tmp_path, launcher)
    status = r.run(plan(select(load_profile("smoke"), ["modes"])))
    monkeypatch.undo()
    _stopped(r, status, rows=2, words=f"cannot write {written[-1]}")
    assert os.strerror(code) in str(r.store_error)
    assert len(launcher.launched) == 2, "nothing launched after it"


def test_a_kernel_cache_folder_that_cannot_be_made_stops_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = Path.mkdir
    made: list[Path] = []

    def mkdir(self: Path, *args: Any, **kwargs: Any) -> None:
        if self.name.endswith(".cache"):
            made.append(self) if self not in made else None
            if len(made) == 2:
                raise OSError(errno.EDQUOT, os.strerror(errno.EDQUOT), str(self))
        real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "mkdir", mkdir)
    launcher = FakeLauncher()
    r = _runner(tmp_path, launcher)
    code = r.run(plan(select(load_profile("smoke"), ["modes"])))
    monkeypatch.undo()
    _stopped(r, code, rows=1, words=os.strerror(errno.EDQUOT))
    assert len(launcher.launched) == 1


def test_a_warm_cache_that_cannot_be_copied_stops_the_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy of the primed cache fails: ``shutil.copytree`` used to hide the errno in a
    ``shutil.Error``, and the warm replicate read as crashed."""
    def full(src: str, dst: Any, **kwargs: Any) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(dst))

    monkeypatch.setattr(shutil, "copy2", full)
    import tomllib

    launcher = FakeLauncher()
    r = _runner(tmp_path, launcher, profile="t")
    prof = parse_profile(tomllib.loads(WARM_PROFILE), "t")
    code = r.run(plan(prof))
    monkeypatch.undo()
    _stopped(r, code, rows=1, words="No space left on device")
    # the fresh replicate was measured and its cache kept for its warm twin, whose copy failed
    assert [(s.task.op, s.task.cell.kernel_cache) for s in launcher.launched] == [
        ("measure", "fresh")]


def test_a_scratch_folder_that_cannot_be_made_stops_the_run_before_its_first_job(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tempfile

    prof = select(load_profile("smoke"), ["modes"])
    probe = runner.Probe(ENV, ["mobilenet_v3_small"], False)
    opened = session.open_run(prof, probe, plan(prof), reports=tmp_path,
                              out=str(tmp_path / "run"))

    def read_only(*args: Any, **kwargs: Any) -> None:
        raise OSError(errno.EROFS, os.strerror(errno.EROFS), "/tmp/torch-knobs-x")

    monkeypatch.setattr(tempfile, "TemporaryDirectory", read_only)
    ended = session.execute(opened, FakeLauncher(), probe, progress=False)
    assert ended.code == runner.EXIT_STORE and isinstance(ended.store_error, ScratchError)
    assert "Read-only file system" in str(ended.store_error)


def test_a_full_scratch_disk_stops_the_command_and_a_resume_finishes_it(
        disk: Disk, tmp_path: Path, tiny_profile: Callable[..., Path]) -> None:
    """TMPDIR on a real 1 MiB tmpfs that fills as the third child runs; the run store is on
    another file system and has room."""
    scratch = disk.path / "tmp"
    scratch.mkdir()
    out = tmp_path / "run"
    run = ("--profile", str(tiny_profile(replicates=4)), "--out", str(out))
    proc = run_fake_cli(f"--at=2=fill:{disk.path}", "--", *run, env={"TMPDIR": str(scratch)})
    assert proc.returncode == runner.EXIT_STORE, proc.stderr
    line = one_error_line(proc)
    assert "No space left on device" in line and "scratch space" in line, line
    assert f"--out {out} --resume" in line
    assert [r["status"] for r in read_csv(out / "results.csv")] == ["ok", "ok"]
    disk.free()
    again = run_fake_cli("--", *run, "--resume", env={"TMPDIR": str(scratch)})
    assert again.returncode == 0, again.stderr
    assert [r["status"] for r in read_csv(out / "results.csv")] == ["ok"] * 4


def test_disk_faults_are_told_from_other_errors() -> None:
    assert durable.is_disk_fault(OSError(errno.ENOSPC, "full"))
    assert not durable.is_disk_fault(OSError(errno.ENOENT, "no such file"))
    assert not durable.is_disk_fault(ValueError("not an OSError"))


def test_a_tmpdir_that_cannot_hold_the_probes_folder_is_one_line(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Before any run folder exists: the probe's own scratch folder (``bench run``, ``env``,
    ``advise``) is refused in one line naming TMPDIR, not a traceback."""
    def full(*args: Any, **kwargs: Any) -> Any:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(probing.tempfile, "TemporaryDirectory", full)
    with pytest.raises(RuntimeError) as caught, probing.probe_folder():
        pass  # pragma: no cover - never entered
    (line,) = str(caught.value).splitlines()
    assert "cannot make a scratch folder under" in line and "TMPDIR" in line
    assert line.endswith("No space left on device")
